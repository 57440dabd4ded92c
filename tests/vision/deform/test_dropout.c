/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_dropout.c - vision.drop_block2d, vision.drop_block3d and
** vision.stochastic_depth.
**
** torch's RNG stream cannot be reproduced, so the ops are tested by:
**  - structure: fed torchvision's own Bernoulli draw (`noise`, stored by the
**    generator), the output must equal torchvision's bit for bit (block
**    expansion, border clipping, normalisation, f16 step rounding);
**  - reproducibility: the same seed twice gives identical outputs, another
**    seed a different one;
**  - statistics: the drop rate over a large tensor is within 6 standard
**    deviations of what torchvision's gamma gives;
**  - identity for training = false or p = 0, and the refusals.
*/
#include "deform_test.h"

typedef struct drop_case {
    const char *name, *op;
    double p;
    int64_t block_size;             /* drop_block only */
    const char *mode;               /* stochastic_depth only */
} drop_case;

static const drop_case drop_cases[] = {
    { "db2d_f32", "vision.drop_block2d", 0.3, 3, NULL },
    { "db2d_f64", "vision.drop_block2d", 0.5, 5, NULL },
    { "db2d_f16", "vision.drop_block2d", 0.4, 3, NULL },
    { "db2d_bs1", "vision.drop_block2d", 0.2, 1, NULL },
    { "db2d_clamp", "vision.drop_block2d", 0.9, 7, NULL },
    { "db2d_p1", "vision.drop_block2d", 1.0, 3, NULL },
    { "db3d_f32", "vision.drop_block3d", 0.3, 3, NULL },
    { "db3d_f16", "vision.drop_block3d", 0.5, 3, NULL },
    { "sd_row_f32", "vision.stochastic_depth", 0.4, 0, "row" },
    { "sd_row_f64", "vision.stochastic_depth", 0.3, 0, "row" },
    { "sd_row_f16", "vision.stochastic_depth", 0.3, 0, "row" },
    { "sd_batch_f32", "vision.stochastic_depth", 0.2, 0, "batch" },
    { "sd_row_p1", "vision.stochastic_depth", 1.0, 0, "row" },
};

static loom_attrs *drop_attrs(const char *op, double p, int64_t block_size, const char *mode, int64_t seed)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "p", p), LOOM_OK);
    if (strstr(op, "drop_block") != NULL)
        assert_int_equal(loom_attrs_set_int(a, "block_size", block_size), LOOM_OK);
    else
        assert_int_equal(loom_attrs_set_string(a, "mode", mode), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "seed", seed), LOOM_OK);
    return a;
}

static loom_status drop(const char *op, const loom_tensor *in, const loom_tensor *noise, const loom_attrs *a,
                      loom_tensor **out)
{
    return dt_run(op, (const loom_tensor *[]){ in, noise }, 2, a, NULL, out, 1);
}

static void given_torchvisions_draw_outputs_match_exactly(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof drop_cases / sizeof drop_cases[0]; i++) {
        const drop_case *c = &drop_cases[i];
        loom_tensor *in = dt_golden(c->name, "input"), *noise = dt_golden(c->name, "noise");
        loom_tensor *want = dt_golden(c->name, "output"), *got;
        loom_attrs *a = drop_attrs(c->op, c->p, c->block_size, c->mode, 0);
        if (drop(c->op, in, noise, a, &got) != LOOM_OK)
            fail_msg("%s: %s", c->name, loom_last_error());
        tu_assert_identical(got, want, c->name);
        loom_attrs_free(a);
        loom_tensor_free(in);
        loom_tensor_free(noise);
        loom_tensor_free(want);
        loom_tensor_free(got);
    }
}

static loom_tensor *ones(loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    return dt_random(dt, ndim, shape, 1, 1.0, 1.0);
}

static int64_t count_zeros(const loom_tensor *t)
{
    loom_tensor *f = dt_f64(t);
    int64_t z = 0;
    for (int64_t i = 0; i < loom_numel(f); i++)
        z += ((const double *)loom_data(f))[i] == 0.0;
    loom_tensor_free(f);
    return z;
}

static void same_seed_same_output_other_seed_other_output(void **state)
{
    static const struct { const char *op; int32_t ndim; int64_t shape[5]; } ops[] = {
        { "vision.drop_block2d", 4, { 4, 8, 32, 32 } },
        { "vision.drop_block3d", 5, { 2, 4, 10, 12, 12 } },
        { "vision.stochastic_depth", 3, { 256, 4, 4 } },
    };
    (void)state;
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        loom_tensor *in = dt_random(LOOM_DTYPE_F32, ops[o].ndim, ops[o].shape, 7, 0.5, 1.5), *x, *y, *z;
        loom_attrs *a = drop_attrs(ops[o].op, 0.3, 3, "row", 1234), *b = drop_attrs(ops[o].op, 0.3, 3, "row", 1235);
        assert_int_equal(drop(ops[o].op, in, NULL, a, &x), LOOM_OK);
        assert_int_equal(drop(ops[o].op, in, NULL, a, &y), LOOM_OK);
        assert_int_equal(drop(ops[o].op, in, NULL, b, &z), LOOM_OK);
        tu_assert_identical(y, x, ops[o].op);
        if (memcmp(loom_data(x), loom_data(z), loom_tensor_nbytes(x)) == 0)
            fail_msg("%s: seeds 1234 and 1235 gave the same output", ops[o].op);
        assert_true(count_zeros(x) > 0);
        loom_tensor *all[] = { in, x, y, z };
        for (size_t i = 0; i < 4; i++)
            loom_tensor_free(all[i]);
        loom_attrs_free(a);
        loom_attrs_free(b);
    }
}

/* Expected dropped pixels of drop_block2d: pixel (y, x) is kept when none
** of the cy * cx seeds whose block covers it fired. */
static void drop_block_rate_follows_gamma(void **state)
{
    const int64_t shape[4] = { 8, 16, 40, 40 }, bs = 5, h = 40, w = 40, nh = h - bs + 1, nw = w - bs + 1;
    const double p = 0.2;
    const double gamma = p * (double)(h * w) / ((double)(bs * bs) * (double)(nh * nw));
    (void)state;
    loom_tensor *in = ones(LOOM_DTYPE_F32, 4, shape), *out;
    loom_attrs *a = drop_attrs("vision.drop_block2d", p, bs, NULL, 99);
    assert_int_equal(drop("vision.drop_block2d", in, NULL, a, &out), LOOM_OK);
    double expect = 0;
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            int64_t y0 = y - bs + 1 < 0 ? 0 : y - bs + 1, y1 = y < nh - 1 ? y : nh - 1;
            int64_t x0 = x - bs + 1 < 0 ? 0 : x - bs + 1, x1 = x < nw - 1 ? x : nw - 1;
            expect += 1.0 - pow(1.0 - gamma, (double)((y1 - y0 + 1) * (x1 - x0 + 1)));
        }
    expect *= (double)(shape[0] * shape[1]);
    double seeds = (double)(shape[0] * shape[1] * nh * nw), sd = (double)(bs * bs) * sqrt(seeds * gamma * (1 - gamma));
    double got = (double)count_zeros(out);
    if (fabs(got - expect) > 6 * sd)
        fail_msg("dropped %.0f of %lld, expected %.0f +- %.0f", got, (long long)loom_numel(out), expect, sd);
    /* kept pixels are scaled by numel / kept */
    double kept = (double)loom_numel(out) - got, scale = (double)loom_numel(out) / (1e-6 + kept);
    const float *o = loom_data(out);
    for (int64_t i = 0; i < loom_numel(out); i++)
        if (o[i] != 0.0f && fabs(o[i] - scale) > 1e-6 * scale)
            fail_msg("kept element %lld is %g, expected the scale %g", (long long)i, (double)o[i], scale);
    loom_tensor_free(in);
    loom_tensor_free(out);
    loom_attrs_free(a);
}

static void stochastic_depth_rate_follows_p(void **state)
{
    const int64_t shape[2] = { 20000, 3 };
    const double p = 0.3;
    (void)state;
    loom_tensor *in = ones(LOOM_DTYPE_F64, 2, shape), *out;
    loom_attrs *a = drop_attrs("vision.stochastic_depth", p, 0, "row", 5);
    assert_int_equal(drop("vision.stochastic_depth", in, NULL, a, &out), LOOM_OK);
    const double *o = loom_data(out);
    double dropped = 0;
    for (int64_t r = 0; r < shape[0]; r++) {
        dropped += o[r * 3] == 0.0;
        for (int64_t k = 0; k < 3; k++)         /* whole rows, survivors scaled by 1/(1-p) */
            assert_true(o[r * 3 + k] == o[r * 3] && (o[r * 3] == 0.0 || o[r * 3] == 1.0 / (1.0 - p)));
    }
    double n = (double)shape[0], sd = sqrt(n * p * (1 - p));
    if (fabs(dropped - n * p) > 6 * sd)
        fail_msg("dropped %.0f rows of %.0f, expected %.0f +- %.0f", dropped, n, n * p, sd);
    loom_tensor_free(in);
    loom_tensor_free(out);
    loom_attrs_free(a);
}

static void eval_mode_and_p0_are_the_identity(void **state)
{
    const int64_t shape[4] = { 2, 3, 6, 6 };
    (void)state;
    loom_tensor *in = dt_random(LOOM_DTYPE_F16, 4, shape, 3, -2, 2), *out;
    const char *ops[] = { "vision.drop_block2d", "vision.stochastic_depth" };
    for (int o = 0; o < 2; o++) {
        loom_attrs *a = drop_attrs(ops[o], 0.5, 3, "batch", 1);
        assert_int_equal(loom_attrs_set_bool(a, "training", 0), LOOM_OK);
        assert_int_equal(drop(ops[o], in, NULL, a, &out), LOOM_OK);
        tu_assert_identical(out, in, "training = false");
        loom_tensor_free(out);
        loom_attrs_free(a);
        a = drop_attrs(ops[o], 0.0, 3, "batch", 1);
        assert_int_equal(drop(ops[o], in, NULL, a, &out), LOOM_OK);
        tu_assert_identical(out, in, "p = 0");
        loom_tensor_free(out);
        loom_attrs_free(a);
    }
    /* stochastic_depth p = 1: zeros */
    loom_attrs *a = drop_attrs("vision.stochastic_depth", 1.0, 0, "batch", 1);
    assert_int_equal(drop("vision.stochastic_depth", in, NULL, a, &out), LOOM_OK);
    assert_int_equal(count_zeros(out), loom_numel(out));
    loom_tensor_free(out);
    loom_attrs_free(a);
    loom_tensor_free(in);
}

static void refuses_bad_p_mode_noise_and_block_size(void **state)
{
    const int64_t shape[4] = { 2, 3, 8, 8 };
    (void)state;
    loom_tensor *in = dt_random(LOOM_DTYPE_F32, 4, shape, 3, -2, 2), *out = NULL;
    loom_attrs *a = drop_attrs("vision.drop_block2d", 1.5, 3, NULL, 0);
    dt_expect_error(drop("vision.drop_block2d", in, NULL, a, &out), LOOM_EINVAL, "'p' = 1.5");
    loom_attrs_free(a);
    /* negative: the core's check of the schema flags; above 1: the kernel's */
    a = drop_attrs("vision.stochastic_depth", -0.1, 0, "row", 0);
    dt_expect_error(drop("vision.stochastic_depth", in, NULL, a, &out), LOOM_EINVAL, "'p' must be finite and >= 0");
    loom_attrs_free(a);
    a = drop_attrs("vision.stochastic_depth", 1.25, 0, "row", 0);
    dt_expect_error(drop("vision.stochastic_depth", in, NULL, a, &out), LOOM_EINVAL, "must be in [0, 1]");
    loom_attrs_free(a);
    a = drop_attrs("vision.stochastic_depth", 0.5, 0, "col", 0);
    dt_expect_error(drop("vision.stochastic_depth", in, NULL, a, &out), LOOM_EINVAL,
                    "'mode' must be \"batch\" or \"row\", got \"col\"");
    loom_attrs_free(a);
    a = drop_attrs("vision.drop_block2d", 0.5, 4, NULL, 0);
    dt_expect_error(drop("vision.drop_block2d", in, NULL, a, &out), LOOM_EINVAL, "block size should be odd");
    loom_attrs_free(a);
    /* noise of the wrong shape: bs 3 on 8x8 needs [2, 3, 6, 6] */
    a = drop_attrs("vision.drop_block2d", 0.5, 3, NULL, 0);
    loom_tensor *noise = dt_random(LOOM_DTYPE_F32, 4, (const int64_t[]){ 2, 3, 8, 8 }, 1, 0, 1);
    dt_expect_error(drop("vision.drop_block2d", in, noise, a, &out), LOOM_EINVAL, "expected [2, 3, 6, 6]");
    loom_tensor *noise64 = dt_random(LOOM_DTYPE_F64, 4, (const int64_t[]){ 2, 3, 6, 6 }, 1, 0, 1);
    dt_expect_error(drop("vision.drop_block2d", in, noise64, a, &out), LOOM_EINVAL, "'noise' is f64[2,3,6,6]");
    loom_tensor *view;
    assert_int_equal(loom_tensor_wrap(&view, loom_data(in), LOOM_DTYPE_F32, 4, shape,
                                      (const int64_t[]){ 192, 64, 1, 8 }, NULL), LOOM_OK);
    /* it runs: the core hands the kernel a compact copy */
    assert_int_equal(drop("vision.drop_block2d", view, NULL, a, &out), LOOM_OK);
    loom_tensor_free(out);
    out = NULL;
    loom_attrs_free(a);
    a = drop_attrs("vision.stochastic_depth", 0.5, 0, "row", 0);
    dt_expect_error(drop("vision.stochastic_depth", in, noise, a, &out), LOOM_EINVAL, "expected [2, 1, ...]");
    loom_attrs_free(a);
    loom_tensor *all[] = { in, noise, noise64, view };
    for (size_t i = 0; i < 4; i++)
        loom_tensor_free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(given_torchvisions_draw_outputs_match_exactly),
        cmocka_unit_test(same_seed_same_output_other_seed_other_output),
        cmocka_unit_test(drop_block_rate_follows_gamma),
        cmocka_unit_test(stochastic_depth_rate_follows_p),
        cmocka_unit_test(eval_mode_and_p0_are_the_identity),
        cmocka_unit_test(refuses_bad_p_mode_noise_and_block_size),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
