/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_blocks.c - the models' building blocks against torchvision (goldens
** of tools/gen_vision_blocks_goldens.py, whose tables the cases below
** repeat): vision.squeeze_excitation (torchvision.ops.SqueezeExcitation
** with ReLU or SiLU, Sigmoid or Hardsigmoid; weights as the state_dict's
** [S, C, 1, 1] and as [S, C]; in place) and vision.channel_shuffle
** (F.channel_shuffle, f32 and i64, rank 3 and 4; of a concatenation, through
** strides), vision.conv2d's residual
** after the activation (silu(conv(x)) + x, on cpu, which the policy
** picks), and the
** refusals.
** Run again with LOOM_CPU_MAX_ISA=sse4 (the portable loops).
**
** Tolerance of squeeze_excitation: max |got - want| <= 1e-5 * max |want|.
** Both sides compute in f32; the plane sums (up to 1155 terms) and the fc
** dot products (up to 24 terms) are summed in another order, moving the
** scale by a few ulps, and the output is input * scale. channel_shuffle is
** a copy: identical bytes.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

#define REL_TOL 1e-5

static loom_tensor *golden(const char *prefix, const char *name, const char *suffix)
{
    char path[160];
    snprintf(path, sizeof path, "vision/blocks/%s_%s_%s", prefix, name, suffix);
    return tu_npy(path);
}

static loom_attrs *attrs2(const char *op, const char *k1, const char *v1, const char *k2, const char *v2)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (k1 != NULL && loom_attrs_parse(a, op, k1, v1) != LOOM_OK)
        fail_msg("%s=%s: %s", k1, v1, loom_last_error());
    if (k2 != NULL && loom_attrs_parse(a, op, k2, v2) != LOOM_OK)
        fail_msg("%s=%s: %s", k2, v2, loom_last_error());
    return a;
}

static void assert_close_to_max(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    tu_assert_same_shape(got, want, what);
    double m = 0.0, e = 0.0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        m = fmax(m, fabs(tu_get(want, i)));
        e = fmax(e, fabs(tu_get(got, i) - tu_get(want, i)));
    }
    if (!(e <= REL_TOL * m))
        fail_msg("%s: max |got - want| = %g > %g * max |want| = %g", what, e, REL_TOL, REL_TOL * m);
}

/* ---------------------------------------------------- squeeze_excitation */

typedef struct se_case {
    const char *name, *act, *scale_act;
} se_case;

static const se_case se_cases[] = {
    { "relu_sigmoid", "relu", "sigmoid" },
    { "silu_sigmoid", "silu", "sigmoid" },
    { "relu_hardsigmoid", "relu", "hardsigmoid" },
    { "wide_plane", "relu", "sigmoid" },
};

typedef struct se_data {
    loom_tensor *t[6];      /* input, fc1_weight, fc1_bias, fc2_weight, fc2_bias, output */
} se_data;

static se_data se_load(const char *name)
{
    static const char *const parts[6] = { "input", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "output" };
    se_data d;
    for (int i = 0; i < 6; i++)
        d.t[i] = golden("se", name, parts[i]);
    return d;
}

static void se_free(se_data *d)
{
    for (int i = 0; i < 6; i++)
        loom_tensor_free(d->t[i]);
}

static void squeeze_excitation_matches_torchvision(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof se_cases / sizeof se_cases[0]; c++) {
        const se_case *k = &se_cases[c];
        se_data d = se_load(k->name);
        loom_attrs *a = attrs2("vision.squeeze_excitation", "activation", k->act, "scale_activation", k->scale_act);
        const loom_tensor *in[5] = { d.t[0], d.t[1], d.t[2], d.t[3], d.t[4] };
        loom_tensor *got = NULL;
        if (tu_call("vision.squeeze_excitation", in, 5, a, "cpu", &got) != LOOM_OK)
            fail_msg("se %s: %s", k->name, loom_last_error());
        char what[96];
        snprintf(what, sizeof what, "se %s", k->name);
        assert_close_to_max(got, d.t[5], what);
        /* the weights as [S, C] and [C, S]: the same result */
        loom_tensor *w1 = NULL, *w2 = NULL;
        assert_int_equal(loom_tensor_wrap(&w1, loom_data(d.t[1]), LOOM_DTYPE_F32, 2, d.t[1]->shape, NULL, NULL),
                         LOOM_OK);
        assert_int_equal(loom_tensor_wrap(&w2, loom_data(d.t[3]), LOOM_DTYPE_F32, 2, d.t[3]->shape, NULL, NULL),
                         LOOM_OK);
        const loom_tensor *in2[5] = { d.t[0], w1, d.t[2], w2, d.t[4] };
        loom_tensor *got2 = NULL;
        assert_int_equal(tu_call("vision.squeeze_excitation", in2, 5, a, "cpu", &got2), LOOM_OK);
        tu_assert_identical(got2, got, "2-D weights");
        /* in place: the output is the input tensor */
        loom_tensor *x = NULL;
        assert_int_equal(loom_tensor_copy_to(&x, d.t[0], NULL), LOOM_OK);
        const loom_tensor *in3[5] = { x, d.t[1], d.t[2], d.t[3], d.t[4] };
        loom_tensor *outs[1] = { x };
        assert_int_equal(loom_run("vision.squeeze_excitation", in3, 5, a, outs, 1, NULL), LOOM_OK);
        tu_assert_identical(x, got, "in place");
        loom_tensor *all[] = { got, got2, w1, w2, x };
        for (size_t i = 0; i < 5; i++)
            loom_tensor_free(all[i]);
        loom_attrs_free(a);
        se_free(&d);
    }
}

static void expect_error(const char *op, const loom_tensor *const *in, int32_t n, loom_attrs *a, const char *needle)
{
    loom_tensor *out = NULL;
    loom_status st = tu_call(op, in, n, a, NULL, &out);
    loom_tensor_free(out);
    if (st == LOOM_OK)
        fail_msg("%s accepted a call that should say \"%s\"", op, needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: \"%s\" does not say \"%s\"", op, loom_last_error(), needle);
}

static void squeeze_excitation_refuses_bad_shapes(void **state)
{
    (void)state;
    se_data d = se_load("relu_sigmoid");   /* C = 16, S = 4 */
    loom_attrs *a = attrs2("vision.squeeze_excitation", NULL, NULL, NULL, NULL);
    const int64_t s3[4] = { 4, 15, 1, 1 }, s33[4] = { 4, 16, 3, 3 }, b5[1] = { 5 }, c8[1] = { 8 };
    const int64_t x0[4] = { 2, 16, 0, 7 }, xc[4] = { 2, 8, 7, 7 };
    loom_tensor *bad_w = tu_random_f32(4, s3, 1), *kern3 = tu_random_f32(4, s33, 2), *bias5 = tu_random_f32(1, b5, 3);
    loom_tensor *bias8 = tu_random_f32(1, c8, 4), *empty = tu_random_f32(4, x0, 5), *x8 = tu_random_f32(4, xc, 6);
    {
        const loom_tensor *in[5] = { d.t[0], bad_w, d.t[2], d.t[3], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, a, "'fc1_weight' f32[4,15,1,1] must be [S, 16, 1, 1]");
    }
    {
        const loom_tensor *in[5] = { d.t[0], kern3, d.t[2], d.t[3], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, a, "'fc1_weight' f32[4,16,3,3]");
    }
    {
        const loom_tensor *in[5] = { d.t[0], d.t[1], bias5, d.t[3], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, a, "'fc1_bias' f32[5] must be [4]");
    }
    {
        const loom_tensor *in[5] = { d.t[0], d.t[1], d.t[2], d.t[1], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, a, "'fc2_weight' f32[4,16,1,1] must be [C, 4, 1, 1]");
    }
    {
        const loom_tensor *in[5] = { d.t[0], d.t[1], d.t[2], d.t[3], bias8 };
        expect_error("vision.squeeze_excitation", in, 5, a, "'fc2_bias' f32[8] must be [16]");
    }
    {
        const loom_tensor *in[5] = { x8, d.t[1], d.t[2], d.t[3], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, a, "'fc1_weight' f32[4,16,1,1] must be [S, 8, 1, 1]");
    }
    {
        const loom_tensor *in[5] = { empty, d.t[1], d.t[2], d.t[3], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, a, "non-zero H and W");
    }
    loom_attrs *bad = attrs2("vision.squeeze_excitation", "scale_activation", "tanh", NULL, NULL);
    {
        const loom_tensor *in[5] = { d.t[0], d.t[1], d.t[2], d.t[3], d.t[4] };
        expect_error("vision.squeeze_excitation", in, 5, bad, "scale_activation");
    }
    loom_attrs_free(bad);
    loom_tensor *all[] = { bad_w, kern3, bias5, bias8, empty, x8 };
    for (size_t i = 0; i < 6; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
    se_free(&d);
}

/* ------------------------------------------------------- channel_shuffle */

static void channel_shuffle_matches_torch(void **state)
{
    (void)state;
    static const struct { const char *name, *groups; } cases[] = {
        { "f32_g3", "3" }, { "f32_rank3", "2" }, { "i64_g4", "4" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        loom_tensor *x = golden("shuffle", cases[c].name, "input"), *want = golden("shuffle", cases[c].name, "output");
        loom_attrs *a = attrs2("vision.channel_shuffle", "groups", cases[c].groups, NULL, NULL);
        const loom_tensor *in[1] = { x };
        loom_tensor *got = NULL;
        if (tu_call("vision.channel_shuffle", in, 1, a, "cpu", &got) != LOOM_OK)
            fail_msg("shuffle %s: %s", cases[c].name, loom_last_error());
        tu_assert_identical(got, want, cases[c].name);
        loom_tensor_free(got);
        loom_tensor_free(x);
        loom_tensor_free(want);
        loom_attrs_free(a);
    }
}

/* ShuffleNetV2's block end: cat([x1, branch]) shuffled, x1 a channel half
** of a map read through its strides (chunk(2, dim=1)'s first half) */
static void channel_shuffle_of_a_concatenation(void **state)
{
    (void)state;
    loom_tensor *a = tu_npy("vision/blocks/shuffle_cat_input"), *b = tu_npy("vision/blocks/shuffle_cat_other");
    loom_tensor *want = tu_npy("vision/blocks/shuffle_cat_output");
    loom_attrs *g = attrs2("vision.channel_shuffle", "groups", "2", NULL, NULL);
    const loom_tensor *in[2] = { a, b };
    loom_tensor *got = NULL;
    assert_int_equal(tu_call("vision.channel_shuffle", in, 2, g, "cpu", &got), LOOM_OK);
    tu_assert_identical(got, want, "cat then shuffle");
    loom_tensor_free(got);
    /* a as the first half of a [2, 12, 3, 5] map: the same result through strides */
    const int64_t big_shape[4] = { 2, 12, 3, 5 }, half_shape[4] = { 2, 6, 3, 5 }, strides[4] = { 180, 15, 5, 1 };
    loom_tensor *big = tu_random_f32(4, big_shape, 9), *half = NULL;
    for (int64_t n = 0; n < 2; n++)
        memcpy((float *)loom_data(big) + n * 180, (const float *)loom_data(a) + n * 90, 90 * sizeof(float));
    assert_int_equal(loom_tensor_wrap(&half, loom_data(big), LOOM_DTYPE_F32, 4, half_shape, strides, NULL), LOOM_OK);
    const loom_tensor *in2[2] = { half, b };
    assert_int_equal(tu_call("vision.channel_shuffle", in2, 2, g, "cpu", &got), LOOM_OK);
    tu_assert_identical(got, want, "strided first half");
    loom_tensor_free(got);
    /* a transposed view (no compact plane): gathered element by element */
    const int64_t tshape[4] = { 2, 6, 5, 3 }, tstrides[4] = { 90, 15, 1, 5 };
    loom_tensor *tview = NULL, *tgot = NULL, *tin = NULL;
    assert_int_equal(loom_tensor_wrap(&tview, loom_data(a), LOOM_DTYPE_F32, 4, tshape, tstrides, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_copy_to(&tin, tview, NULL), LOOM_OK);
    const loom_tensor *in3[1] = { tview }, *in4[1] = { tin };
    assert_int_equal(tu_call("vision.channel_shuffle", in3, 1, g, "cpu", &tgot), LOOM_OK);
    assert_int_equal(tu_call("vision.channel_shuffle", in4, 1, g, "cpu", &got), LOOM_OK);
    tu_assert_identical(tgot, got, "transposed view");
    /* other must match but for the channels */
    const int64_t wrong_shape[4] = { 2, 6, 3, 4 };
    loom_tensor *wrong = tu_random_f32(4, wrong_shape, 3);
    const loom_tensor *in5[2] = { a, wrong };
    expect_error("vision.channel_shuffle", in5, 2, g, "'other' f32[2,6,3,4] must be 'input' f32[2,6,3,5]");
    loom_tensor *all[] = { a, b, want, big, half, tview, tgot, tin, got, wrong };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(g);
}

static void channel_shuffle_refuses_bad_calls(void **state)
{
    (void)state;
    const int64_t s2[2] = { 4, 6 }, s4[4] = { 1, 5, 2, 2 };
    loom_tensor *flat = tu_random_f32(2, s2, 1), *odd = tu_random_f32(4, s4, 2);
    loom_attrs *a = attrs2("vision.channel_shuffle", "groups", "2", NULL, NULL);
    const loom_tensor *in1[1] = { flat }, *in2[1] = { odd };
    expect_error("vision.channel_shuffle", in1, 1, a, "at least 3 dimensions");
    expect_error("vision.channel_shuffle", in2, 1, a, "Got 5 channels and 2 groups");
    loom_attrs *zero;
    assert_int_equal(loom_attrs_new(&zero), LOOM_OK);
    assert_int_equal(loom_attrs_parse(zero, "vision.channel_shuffle", "groups", "0"), LOOM_OK);
    expect_error("vision.channel_shuffle", in2, 1, zero, "groups");
    loom_attrs_free(zero);
    /* in place would overwrite planes before they are read */
    const int64_t s6[4] = { 1, 6, 2, 2 };
    loom_tensor *x = tu_random_f32(4, s6, 3);
    const loom_tensor *in3[1] = { x };
    loom_tensor *outs[1] = { x };
    assert_int_not_equal(loom_run("vision.channel_shuffle", in3, 1, a, outs, 1, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "in place"));
    loom_tensor_free(x);
    loom_tensor_free(flat);
    loom_tensor_free(odd);
    loom_attrs_free(a);
}

/* ------------------------------------------- conv2d, residual after act */

/* silu(conv(x) + b) + x on the cpu kernel, also when dispatched by policy
** (onednn declines it: its sum after an eltwise post-op is reference code
** only); refused in place */
static void conv2d_residual_after_activation(void **state)
{
    (void)state;
    loom_tensor *x = tu_npy("vision/blocks/conv_res_after_input"), *w = tu_npy("vision/blocks/conv_res_after_weight");
    loom_tensor *b = tu_npy("vision/blocks/conv_res_after_bias"), *want = tu_npy("vision/blocks/conv_res_after_output");
    loom_attrs *a = attrs2("vision.conv2d", "padding", "1", "activation", "silu");
    assert_int_equal(loom_attrs_parse(a, "vision.conv2d", "residual_after_activation", "true"), LOOM_OK);
    const loom_tensor *in[4] = { x, w, b, x };
    static const char *const backends[] = { "cpu", NULL };
    for (size_t i = 0; i < 2; i++) {
        loom_tensor *got = NULL;
        if (tu_call("vision.conv2d", in, 4, a, backends[i], &got) != LOOM_OK)
            fail_msg("conv2d on %s: %s", backends[i] != NULL ? backends[i] : "the default policy", loom_last_error());
        assert_close_to_max(got, want, backends[i] != NULL ? backends[i] : "the default policy");
        loom_tensor_free(got);
    }
    loom_tensor *y = NULL;
    assert_int_equal(loom_tensor_copy_to(&y, x, NULL), LOOM_OK);
    const loom_tensor *in2[4] = { x, w, b, y };
    loom_tensor *outs[1] = { y };
    assert_int_not_equal(loom_run("vision.conv2d", in2, 4, a, outs, 1, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'residual' is the output"));
    loom_tensor *all[] = { x, w, b, want, y };
    for (size_t i = 0; i < 5; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(squeeze_excitation_matches_torchvision),
        cmocka_unit_test(squeeze_excitation_refuses_bad_shapes),
        cmocka_unit_test(channel_shuffle_matches_torch),
        cmocka_unit_test(channel_shuffle_of_a_concatenation),
        cmocka_unit_test(channel_shuffle_refuses_bad_calls),
        cmocka_unit_test(conv2d_residual_after_activation),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
