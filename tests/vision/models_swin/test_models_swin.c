/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_swin.c - vision.swin_window_attention, vision.swin_patch_merging
** and the Swin classes against torchvision
** (tools/gen_vision_models_goldens.py, random weights):
**  - ShiftedWindowAttention with a 4x3 window over [2, 10, 9, 16] (padded
**    to 12x9), shifted (2, 1) and not, with and without the fused residual,
**    also written over its residual;
**  - PatchMerging of [2, 5, 7, 8] (odd sides padded);
**  - vision.swin_mlp against the same block half as separate ops
**    (layer_norm, linear, gelu, linear, the add), also in place;
**  - a tiny SwinTransformer (embed 8, depths 2-2, window 4) through
**    vision.swin_transformer at 32x32 (stage 2 drops its shift) and at
**    40x44 (sides that are not window multiples, at both stages);
**  - swin_t in full at 224 (build-models/vision/swin_t, skipped when
**    absent), with its weight entry IMAGENET1K_V1;
**  - files and arguments that do not fit: messages naming the key or the
**    argument.
** Tolerances as tests/vision/models_vit (the same arithmetic): the ops
** within 1e-5 of the largest output, the models 1e-4 of the largest logit.
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

/* tc_data_file into one of two static buffers (two paths may be live at once). */
static const char *data_file(const char *dir, const char *file)
{
    static char buf[2][512];
    static int k;
    k ^= 1;
    return tc_data_file(buf[k], sizeof buf[k], dir, file);
}

/* -------------------------------------------------------- window attention */

static const char *const attn_keys[6] = { "qkv.weight", "qkv.bias", "proj.weight", "proj.bias",
                                          "relative_position_bias_table", "relative_position_index" };

typedef struct attn_data {
    loom_safetensors *st;
    const loom_tensor *in[8];
    loom_tensor *x;
} attn_data;

static void attn_open(attn_data *a)
{
    memset(a, 0, sizeof *a);
    if (loom_safetensors_open(&a->st, data_file("swin_ops", "attn.safetensors")) != LOOM_OK)
        fail_msg("attn.safetensors: %s", loom_last_error());
    a->x = npy_file(data_file("swin_ops", "attn_input.npy"));
    a->in[0] = a->x;
    for (int i = 0; i < 6; i++)
        if (loom_safetensors_get(a->st, attn_keys[i], &a->in[1 + i]) != LOOM_OK)
            fail_msg("%s: %s", attn_keys[i], loom_last_error());
}

static void attn_close(attn_data *a)
{
    loom_tensor_free(a->x);
    loom_safetensors_close(a->st);
}

static loom_status run_attn(const loom_tensor *const *in, int n_in, int64_t sh, int64_t sw, int64_t wh,
                            loom_tensor **out)
{
    loom_attrs *a = NULL;
    const int64_t window[2] = { wh, 3 }, shift[2] = { sh, sw };
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "window_size", window, 2), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "shift_size", shift, 2), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "num_heads", 2), LOOM_OK);
    loom_status st = loom_run("vision.swin_window_attention", in, n_in, a, out, 1, NULL);
    loom_attrs_free(a);
    return st;
}

static void window_attention_matches_torchvision(void **state)
{
    (void)state;
    attn_data a;
    attn_open(&a);
    static const struct { const char *file; int64_t sh, sw; } cases[] = {
        { "attn_shifted.npy", 2, 1 }, { "attn_plain.npy", 0, 0 },
    };
    for (size_t c = 0; c < 2; c++) {
        loom_tensor *want = npy_file(data_file("swin_ops", cases[c].file)), *got = NULL;
        if (run_attn(a.in, 7, cases[c].sh, cases[c].sw, 4, &got) != LOOM_OK)
            fail_msg("%s: %s", cases[c].file, loom_last_error());
        assert_rel_close(got, want, 1e-5, cases[c].file);
        /* with the residual, written over it: x + attn(x) */
        loom_tensor *r = NULL;
        assert_int_equal(loom_tensor_new(&r, LOOM_DTYPE_F32, 4, a.x->shape, NULL), LOOM_OK);
        memcpy(loom_data(r), loom_data(a.x), (size_t)loom_numel(a.x) * sizeof(float));
        const loom_tensor *in[8];
        memcpy(in, a.in, sizeof in);
        in[7] = r;
        loom_tensor *outs[1] = { r };
        if (run_attn(in, 8, cases[c].sh, cases[c].sw, 4, outs) != LOOM_OK)
            fail_msg("%s with residual: %s", cases[c].file, loom_last_error());
        float *w = loom_data(want);
        const float *x = loom_data(a.x);
        for (int64_t i = 0; i < loom_numel(want); i++)
            w[i] += x[i];
        assert_rel_close(r, want, 1e-5, "x + attn(x), in place");
        loom_tensor_free(r);
        loom_tensor_free(got);
        loom_tensor_free(want);
    }
    attn_close(&a);
}

static void window_attention_refuses_bad_arguments(void **state)
{
    (void)state;
    attn_data a;
    attn_open(&a);
    loom_tensor *out = NULL;
    /* a 3x3 window: the 7x5 table and the 144-entry index do not fit */
    tc_expect_error(run_attn(a.in, 7, 0, 0, 3, &out), "'relative_position_bias_table' f32[35,2]", "[25, 2]");
    tc_expect_error(run_attn(a.in, 7, 4, 1, 4, &out), "'shift_size' = (4, 1)", "below");
    /* an index past the table's rows */
    const loom_tensor *idx = a.in[6];
    loom_tensor *bad = NULL;
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_I64, 1, idx->shape, NULL), LOOM_OK);
    memcpy(loom_data(bad), loom_data(idx), (size_t)loom_numel(idx) * sizeof(int64_t));
    ((int64_t *)loom_data(bad))[5] = 35;
    const loom_tensor *in[7];
    memcpy(in, a.in, sizeof in);
    in[6] = bad;
    tc_expect_error(run_attn(in, 7, 0, 0, 4, &out), "'relative_position_index'[5] = 35", "35 rows");
    loom_tensor_free(bad);
    memcpy(in, a.in, sizeof in);
    in[1] = a.in[3];    /* proj.weight [16, 16] as qkv.weight */
    tc_expect_error(run_attn(in, 7, 0, 0, 4, &out), "'qkv_weight' f32[16,16]", "[48, 16]");
    /* 'packed_weights' that no vit_block_pack made for C 16, and one of f32 */
    const loom_tensor *in9[9];
    memcpy(in9, a.in, 7 * sizeof in9[0]);
    in9[7] = NULL;
    int64_t pshape[1] = { 4096 };
    loom_tensor *junk = NULL;
    assert_int_equal(loom_tensor_new(&junk, LOOM_DTYPE_U8, 1, pshape, NULL), LOOM_OK);
    memset(loom_data(junk), 0, 4096);
    in9[8] = junk;
    tc_expect_error(run_attn(in9, 9, 0, 0, 4, &out), "'packed_weights' u8[4096]", "vit_block_pack");
    loom_tensor *f32 = tu_random_f32(1, pshape, 3);
    in9[8] = f32;
    tc_expect_error(run_attn(in9, 9, 0, 0, 4, &out), "'packed_weights'", "u8");
    loom_tensor_free(f32);
    loom_tensor_free(junk);
    attn_close(&a);
}

/* ---------------------------------------------------------------- the MLP */

/* x [2, 5, 7, 8], hidden 32: norm2_weight, norm2_bias, mlp.0 weight and
** bias, mlp.3 weight and bias from fixed seeds. */
static void mlp_inputs(loom_tensor *t[7])
{
    const int64_t xs[4] = { 2, 5, 7, 8 }, c[1] = { 8 }, h[1] = { 32 }, w1[2] = { 32, 8 }, w2[2] = { 8, 32 };
    t[0] = tu_random_f32(4, xs, 11);
    t[1] = tu_random_f32(1, c, 12);
    t[2] = tu_random_f32(1, c, 13);
    t[3] = tu_random_f32(2, w1, 14);
    t[4] = tu_random_f32(1, h, 15);
    t[5] = tu_random_f32(2, w2, 16);
    t[6] = tu_random_f32(1, c, 17);
}

static void swin_mlp_matches_its_ops(void **state)
{
    (void)state;
    loom_tensor *t[7], *h = NULL, *m = NULL, *g = NULL, *y = NULL, *got = NULL;
    mlp_inputs(t);
    const loom_tensor *ln[3] = { t[0], t[1], t[2] };
    if (tu_call("vision.layer_norm", ln, 3, NULL, NULL, &h) != LOOM_OK)
        fail_msg("vision.layer_norm: %s", loom_last_error());
    const loom_tensor *l1[3] = { h, t[3], t[4] };
    if (tu_call("vision.linear", l1, 3, NULL, NULL, &m) != LOOM_OK)
        fail_msg("vision.linear: %s", loom_last_error());
    const loom_tensor *ge[1] = { m };
    if (tu_call("vision.gelu", ge, 1, NULL, NULL, &g) != LOOM_OK)
        fail_msg("vision.gelu: %s", loom_last_error());
    const loom_tensor *l2[3] = { g, t[5], t[6] };
    if (tu_call("vision.linear", l2, 3, NULL, NULL, &y) != LOOM_OK)
        fail_msg("vision.linear: %s", loom_last_error());
    float *want = loom_data(y);
    const float *x = loom_data(t[0]);
    for (int64_t i = 0; i < loom_numel(y); i++)
        want[i] += x[i];
    const loom_tensor *in[7] = { t[0], t[1], t[2], t[3], t[4], t[5], t[6] };
    if (tu_call("vision.swin_mlp", in, 7, NULL, NULL, &got) != LOOM_OK)
        fail_msg("vision.swin_mlp: %s", loom_last_error());
    assert_rel_close(got, y, 1e-5, "swin_mlp [2, 5, 7, 8]");
    /* written over its input */
    loom_tensor *outs[1] = { t[0] };
    if (loom_run("vision.swin_mlp", in, 7, NULL, outs, 1, NULL) != LOOM_OK)
        fail_msg("vision.swin_mlp in place: %s", loom_last_error());
    assert_rel_close(t[0], y, 1e-5, "swin_mlp in place");
    loom_tensor *list[] = { h, m, g, y, got };
    for (size_t i = 0; i < sizeof list / sizeof list[0]; i++)
        loom_tensor_free(list[i]);
    for (int i = 0; i < 7; i++)
        loom_tensor_free(t[i]);
}

static void swin_mlp_refuses_bad_arguments(void **state)
{
    (void)state;
    loom_tensor *t[7], *out = NULL;
    mlp_inputs(t);
    const loom_tensor *in[8] = { t[0], t[1], t[2], t[3], t[4], t[5], t[6], NULL };
    in[5] = t[3];       /* mlp.0.weight [32, 8] as mlp.3.weight */
    tc_expect_error(tu_call("vision.swin_mlp", in, 7, NULL, NULL, &out), "'mlp_3_weight' f32[32,8]", "[8, 32]");
    in[5] = t[5];
    in[2] = t[4];       /* mlp.0.bias [32] as norm2.bias */
    tc_expect_error(tu_call("vision.swin_mlp", in, 7, NULL, NULL, &out), "'norm2_bias' f32[32]", "[8]");
    in[2] = t[2];
    int64_t pshape[1] = { 4096 };
    loom_tensor *junk = NULL;
    assert_int_equal(loom_tensor_new(&junk, LOOM_DTYPE_U8, 1, pshape, NULL), LOOM_OK);
    memset(loom_data(junk), 0, 4096);
    in[7] = junk;
    tc_expect_error(tu_call("vision.swin_mlp", in, 8, NULL, NULL, &out), "'packed_weights' u8[4096]",
                    "vit_block_pack");
    loom_tensor *f32 = tu_random_f32(1, pshape, 3);
    in[7] = f32;
    tc_expect_error(tu_call("vision.swin_mlp", in, 8, NULL, NULL, &out), "'packed_weights'", "u8");
    loom_tensor_free(f32);
    loom_tensor_free(junk);
    for (int i = 0; i < 7; i++)
        loom_tensor_free(t[i]);
}

static void patch_merging_matches_torchvision(void **state)
{
    (void)state;
    loom_safetensors *st = NULL;
    if (loom_safetensors_open(&st, data_file("swin_ops", "merge.safetensors")) != LOOM_OK)
        fail_msg("merge.safetensors: %s", loom_last_error());
    loom_tensor *x = npy_file(data_file("swin_ops", "merge_input.npy"));
    loom_tensor *want = npy_file(data_file("swin_ops", "merge_output.npy")), *got = NULL;
    const loom_tensor *in[4] = { x };
    assert_int_equal(loom_safetensors_get(st, "norm.weight", &in[1]), LOOM_OK);
    assert_int_equal(loom_safetensors_get(st, "norm.bias", &in[2]), LOOM_OK);
    assert_int_equal(loom_safetensors_get(st, "reduction.weight", &in[3]), LOOM_OK);
    if (tu_call("vision.swin_patch_merging", in, 4, NULL, NULL, &got) != LOOM_OK)
        fail_msg("vision.swin_patch_merging: %s", loom_last_error());
    assert_rel_close(got, want, 1e-5, "swin_patch_merging [2, 5, 7, 8]");
    loom_tensor_free(got);
    /* a reduction of 2C x 2C */
    const int64_t square[2] = { 16, 16 };
    loom_tensor *wrong = tu_random_f32(2, square, 9);
    in[3] = wrong;
    tc_expect_error(tu_call("vision.swin_patch_merging", in, 4, NULL, NULL, &got),
                    "'reduction_weight' f32[16,16]",
                 "[16, 32]");
    loom_tensor_free(wrong);
    loom_tensor_free(x);
    loom_tensor_free(want);
    loom_safetensors_close(st);
}

/* ----------------------------------------------------------- the models */

static loom_object *swin_tiny(int64_t embed, const int64_t *depths, int64_t stages)
{
    const int64_t patch = 4, heads[2] = { 2, 4 }, window = 4;
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "patch_size", &patch, 1), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "embed_dim", embed), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "depths", depths, stages), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "num_heads", heads, stages), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "window_size", &window, 1), LOOM_OK);
    loom_object *obj = NULL;
    loom_status st = loom_object_create(&obj, "vision.swin_transformer", a,
                                        data_file("swin_tiny", "model.safetensors"));
    loom_attrs_free(a);
    return st == LOOM_OK ? obj : NULL;
}

static void tiny_swin_matches_torchvision(void **state)
{
    (void)state;
    const int64_t depths[2] = { 2, 2 };
    loom_object *obj = swin_tiny(8, depths, 2);
    if (obj == NULL)
        fail_msg("vision.swin_transformer: %s", loom_last_error());
    char x[512], y[512];
    snprintf(x, sizeof x, "%s", data_file("swin_tiny", "input.npy"));
    snprintf(y, sizeof y, "%s", data_file("swin_tiny", "logits.npy"));
    tc_check_logits(obj, "vision.swin_transformer", x, y, "tiny swin [2, 3, 32, 32]");
    snprintf(x, sizeof x, "%s", data_file("swin_tiny", "input40x44.npy"));
    snprintf(y, sizeof y, "%s", data_file("swin_tiny", "logits40x44.npy"));
    tc_check_logits(obj, "vision.swin_transformer", x, y, "tiny swin [1, 3, 40, 44] (not window multiples)");
    loom_object_free(obj);
}

static void files_that_do_not_fit_name_the_key(void **state)
{
    (void)state;
    const int64_t two_two[2] = { 2, 2 }, two_three[2] = { 2, 3 }, two_one[2] = { 2, 1 };
    loom_object *obj = swin_tiny(12, two_two, 2);
    tc_expect_error(obj == NULL ? LOOM_EINVAL : LOOM_OK, "'features.0.0.weight' is f32[8,3,4,4]",
                    "expected f32[12,3,4,4]");
    obj = swin_tiny(8, two_three, 2);
    tc_expect_error(obj == NULL ? LOOM_EINVAL : LOOM_OK, "no key 'features.3.2.norm1.weight'", "f32[16]");
    obj = swin_tiny(8, two_one, 2);
    tc_expect_error(obj == NULL ? LOOM_EINVAL : LOOM_OK, "unexpected key 'features.3.1.", NULL);
    assert_int_not_equal(loom_object_create(&obj, "vision.swin_t", NULL, data_file("swin_tiny", "model.safetensors")),
                         LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "expected f32[96,3,4,4]"));
    /* too small an input: less than one patch */
    if ((obj = swin_tiny(8, two_two, 2)) == NULL)
        fail_msg("%s", loom_last_error());
    const int64_t shape[4] = { 1, 3, 3, 8 };
    loom_tensor *x = tu_random_f32(4, shape, 5), *out = NULL;
    tc_expect_error(tc_forward(obj, "vision.swin_transformer", x, &out), "'input' f32[1,3,3,8]", "one patch");
    loom_tensor_free(x);
    loom_object_free(obj);
}

static void swin_t_matches_torchvision(void **state)
{
    (void)state;
    char w[512];
    tc_check_full_model("swin_t", "IMAGENET1K_V1", w, sizeof w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_attention_matches_torchvision),
        cmocka_unit_test(window_attention_refuses_bad_arguments),
        cmocka_unit_test(patch_merging_matches_torchvision),
        cmocka_unit_test(swin_mlp_matches_its_ops),
        cmocka_unit_test(swin_mlp_refuses_bad_arguments),
        cmocka_unit_test(tiny_swin_matches_torchvision),
        cmocka_unit_test(files_that_do_not_fit_name_the_key),
        cmocka_unit_test(swin_t_matches_torchvision),
    };
    return cmocka_run_group_tests_name("vision_models_swin", tests, tu_setup, tu_teardown);
}
