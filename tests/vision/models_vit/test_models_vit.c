/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_vit.c - vision.vit_encoder_block and the ViT classes against
** torchvision (tools/gen_vision_models_goldens.py, random weights):
**  - one EncoderBlock over [2, 150, 32] (4 heads, three blocks of query
**    rows), also in place (output = input);
**  - a tiny VisionTransformer (patch 8, 2 layers, hidden 16) through
**    vision.vision_transformer, at its own 32x32 and at 48x48 (the pos
**    embedding interpolated as interpolate_embeddings does), and with a
**    pre_logits head (representation_size);
**  - vit_b_16 in full at 224 (its 330 MB file made at goldens time into
**    build-models/vision/vit_b_16, skipped when absent), and its weight
**    entries: IMAGENET1K_V1 fits the file, SWAG_E2E (384) does not;
**  - files and inputs that do not fit: messages naming the key or argument.
**
** Tolerances. The block: max |got - want| <= 1e-5 * max |out|: both sides
** are f32; the GEMMs' summation orders, the softmax's exp and the layer
** norm's moments (double here, f32 in ATen) each move an element by a few
** ulps of the largest values, ~1e-6 relative. The models: the issue's
** 1e-4 * max |logit| (12 blocks compound those ulps; ~1e-6 in practice).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../models/transformer_checks.h"

/* ------------------------------------------------------- encoder block */

static const char *const block_keys[12] = {
    "ln_1.weight", "ln_1.bias", "self_attention.in_proj_weight", "self_attention.in_proj_bias",
    "self_attention.out_proj.weight", "self_attention.out_proj.bias", "ln_2.weight", "ln_2.bias",
    "mlp.0.weight", "mlp.0.bias", "mlp.3.weight", "mlp.3.bias",
};

typedef struct block_data {
    loom_safetensors *st;
    const loom_tensor *in[13];
    loom_tensor *x, *want;
} block_data;

static void block_open(block_data *b)
{
    char path[512];
    tc_data_file(path, sizeof path, "vit_block", "block.safetensors");
    if (loom_safetensors_open(&b->st, path) != LOOM_OK)
        fail_msg("%s: %s", path, loom_last_error());
    tc_data_file(path, sizeof path, "vit_block", "input.npy");
    b->x = npy_file(path);
    tc_data_file(path, sizeof path, "vit_block", "output.npy");
    b->want = npy_file(path);
    b->in[0] = b->x;
    for (int i = 0; i < 12; i++)
        if (loom_safetensors_get(b->st, block_keys[i], &b->in[1 + i]) != LOOM_OK)
            fail_msg("%s: %s", block_keys[i], loom_last_error());
}

static void block_close(block_data *b)
{
    loom_tensor_free(b->x);
    loom_tensor_free(b->want);
    loom_safetensors_close(b->st);
}

static loom_status run_block(const loom_tensor *const *in, int64_t heads, loom_tensor **out)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "num_heads", heads), LOOM_OK);
    loom_status st = tu_call("vision.vit_encoder_block", in, 13, a, NULL, out);
    loom_attrs_free(a);
    return st;
}

static void encoder_block_matches_torchvision(void **state)
{
    (void)state;
    block_data b;
    block_open(&b);
    loom_tensor *got = NULL;
    if (run_block(b.in, 4, &got) != LOOM_OK)
        fail_msg("vision.vit_encoder_block: %s", loom_last_error());
    assert_rel_close(got, b.want, 1e-5, "vit_encoder_block [2, 150, 32], 4 heads");
    /* in place: the output is the input tensor */
    loom_tensor *x2 = NULL;
    assert_int_equal(loom_tensor_new(&x2, LOOM_DTYPE_F32, 3, b.x->shape, NULL), LOOM_OK);
    memcpy(loom_data(x2), loom_data(b.x), (size_t)loom_numel(b.x) * sizeof(float));
    const loom_tensor *in2[13];
    memcpy(in2, b.in, sizeof in2);
    in2[0] = x2;
    loom_tensor *outs[1] = { x2 };
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "num_heads", 4), LOOM_OK);
    if (loom_run("vision.vit_encoder_block", in2, 13, a, outs, 1, NULL) != LOOM_OK)
        fail_msg("in place: %s", loom_last_error());
    loom_attrs_free(a);
    tu_assert_identical(x2, got, "vit_encoder_block in place");
    loom_tensor_free(x2);
    loom_tensor_free(got);
    block_close(&b);
}

static void expect_block_error(const loom_tensor *const *in, int64_t heads, const char *n1, const char *n2)
{
    loom_tensor *out = NULL;
    if (run_block(in, heads, &out) == LOOM_OK)
        fail_msg("accepted (expected a message with %s)", n1);
    if (strstr(loom_last_error(), n1) == NULL || (n2 != NULL && strstr(loom_last_error(), n2) == NULL))
        fail_msg("message \"%s\" does not say %s / %s", loom_last_error(), n1, n2 ? n2 : "");
}

static void encoder_block_refuses_bad_arguments(void **state)
{
    (void)state;
    block_data b;
    block_open(&b);
    const loom_tensor *in[13];
    memcpy(in, b.in, sizeof in);
    /* 32 is not a multiple of 3 heads */
    expect_block_error(in, 3, "'num_heads' = 3", "hidden_dim 32");
    /* out_proj where in_proj belongs */
    in[3] = b.in[5];
    expect_block_error(in, 4, "'in_proj_weight' f32[32,32]", "[96, 32]");
    memcpy(in, b.in, sizeof in);
    in[12] = b.in[10];      /* mlp.0.bias [48] as mlp.3.bias */
    expect_block_error(in, 4, "'mlp_3_bias' f32[48]", "must be [32]");
    /* f64 input */
    loom_tensor *x64 = tu_cast(b.x, LOOM_DTYPE_F64);
    memcpy(in, b.in, sizeof in);
    in[0] = x64;
    expect_block_error(in, 4, "'input'", "f64");
    loom_tensor_free(x64);
    /* 'packed_weights' that no vit_block_pack made for these sizes */
    const loom_tensor *in14[14];
    memcpy(in14, b.in, sizeof b.in);
    int64_t pshape[1] = { 4096 };
    loom_tensor *junk = NULL;
    assert_int_equal(loom_tensor_new(&junk, LOOM_DTYPE_U8, 1, pshape, NULL), LOOM_OK);
    memset(loom_data(junk), 0, 4096);
    in14[13] = junk;
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "num_heads", 4), LOOM_OK);
    loom_tensor *out = NULL;
    if (tu_call("vision.vit_encoder_block", in14, 14, a, NULL, &out) == LOOM_OK)
        fail_msg("foreign packed_weights accepted");
    if (strstr(loom_last_error(), "'packed_weights'") == NULL)
        fail_msg("message \"%s\" does not name 'packed_weights'", loom_last_error());
    loom_attrs_free(a);
    loom_tensor_free(junk);
    block_close(&b);
}

/* ----------------------------------------------------------- the models */

static loom_object *vit_tiny(const char *dir, int64_t layers, int64_t hidden)
{
    char path[512];
    tc_data_file(path, sizeof path, dir, "model.safetensors");
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "patch_size", 8), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "num_layers", layers), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "num_heads", 2), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "hidden_dim", hidden), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "mlp_dim", 32), LOOM_OK);
    loom_object *obj = NULL;
    loom_status st = loom_object_create(&obj, "vision.vision_transformer", a, path);
    loom_attrs_free(a);
    return st == LOOM_OK ? obj : NULL;
}

static void check_logits(loom_object *obj, const char *op, const char *dir, const char *input, const char *logits)
{
    char x[512], y[512], what[160];
    snprintf(what, sizeof what, "%s %s %s", op, dir, logits);
    tc_check_logits(obj, op, tc_data_file(x, sizeof x, dir, input), tc_data_file(y, sizeof y, dir, logits), what);
}

static void tiny_vit_matches_torchvision(void **state)
{
    (void)state;
    loom_object *obj = vit_tiny("vit_tiny", 2, 16);
    if (obj == NULL)
        fail_msg("vision.vision_transformer: %s", loom_last_error());
    check_logits(obj, "vision.vision_transformer", "vit_tiny", "input.npy", "logits.npy");
    /* a 6x6 grid from the file's 4x4: bicubic pos embedding, then back */
    check_logits(obj, "vision.vision_transformer", "vit_tiny", "input48.npy", "logits48.npy");
    check_logits(obj, "vision.vision_transformer", "vit_tiny", "input.npy", "logits.npy");
    loom_object_free(obj);
    if ((obj = vit_tiny("vit_tiny_rep", 2, 16)) == NULL)
        fail_msg("vision.vision_transformer with pre_logits: %s", loom_last_error());
    check_logits(obj, "vision.vision_transformer", "vit_tiny_rep", "input.npy", "logits.npy");
    loom_object_free(obj);
}

static void files_that_do_not_fit_name_the_key(void **state)
{
    (void)state;
    char path[512];
    /* create's status: a refusal leaves no object */
#define CREATED(obj) ((obj) == NULL ? LOOM_EINVAL : LOOM_OK)
    tc_expect_error(CREATED(vit_tiny("vit_tiny", 2, 24)), "'class_token' is f32[1,1,16]", "expected f32[1,1,24]");
    tc_expect_error(CREATED(vit_tiny("vit_tiny", 1, 16)), "unexpected key 'encoder.layers.encoder_layer_1.", NULL);
    tc_expect_error(CREATED(vit_tiny("vit_tiny", 3, 16)), "no key 'encoder.layers.encoder_layer_2.ln_1.weight'",
                    "f32[16]");
#undef CREATED
    loom_object *obj = NULL;
    tc_data_file(path, sizeof path, "vit_tiny", "model.safetensors");
    assert_int_not_equal(loom_object_create(&obj, "vision.vit_b_16", NULL, path), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "expected f32[1,1,768]"));
}

static void inputs_that_do_not_fit_are_refused(void **state)
{
    (void)state;
    loom_object *obj = vit_tiny("vit_tiny", 2, 16);
    assert_non_null(obj);
    const int64_t shapes[3][4] = { { 1, 3, 32, 40 }, { 1, 3, 36, 36 }, { 1, 1, 32, 32 } };
    for (int i = 0; i < 3; i++) {
        loom_tensor *x = tu_random_f32(4, shapes[i], 3), *out = NULL;
        assert_int_not_equal(tc_forward(obj, "vision.vision_transformer", x, &out), LOOM_OK);
        assert_non_null(strstr(loom_last_error(), "'input'"));
        loom_tensor_free(x);
    }
    loom_object_free(obj);
}

static void vit_b_16_matches_torchvision(void **state)
{
    (void)state;
    char w[512];
    tc_check_full_model("vit_b_16", "IMAGENET1K_V1", w, sizeof w);
    /* SWAG_E2E's file has the 384 grid: 0.3M more parameters */
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "weights", "IMAGENET1K_SWAG_E2E_V1"), LOOM_OK);
    loom_object *obj = NULL;
    assert_int_not_equal(loom_object_create(&obj, "vision.vit_b_16", a, w), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "IMAGENET1K_SWAG_E2E_V1 has 86859496 parameters"));
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encoder_block_matches_torchvision),
        cmocka_unit_test(encoder_block_refuses_bad_arguments),
        cmocka_unit_test(tiny_vit_matches_torchvision),
        cmocka_unit_test(files_that_do_not_fit_name_the_key),
        cmocka_unit_test(inputs_that_do_not_fit_are_refused),
        cmocka_unit_test(vit_b_16_matches_torchvision),
    };
    return cmocka_run_group_tests_name("vision_models_vit", tests, tu_setup, tu_teardown);
}
