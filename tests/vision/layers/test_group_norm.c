/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_group_norm.c - vision.group_norm against F.group_norm (goldens of
** tools/gen_vision_group_norm_goldens.py; the cases' attributes are those of
** its CASES table), on every backend that has the op and a device for it,
** and the refusals of bad arguments. With the argument `cuda` (suite gpu) it
** runs the goldens on the cuda kernel instead, the inputs copied to the
** first CUDA device, and skips with a message where there is none.
**
** Tolerance, per element: |got - want| <= 8 * FLT_EPSILON * (|x * scale| +
** |scale * mean| + |bias[c]|), scale = rstd * weight[c] (the terms of the
** affine step both compute in f32: y = x * scale + (bias - scale * mean)).
** Why: loom and ATen round that step differently (one fma here; products
** and sums in ATen: a few ulps of the terms above, which cancel when the
** mean is large), and ATen's f32 Welford moments carry a relative error of
** a few f32 ulps into scale and shift, while loom's are double. The
** generator prints the measured gap: <= 2.2e-7 for unit-mean inputs, 1.1e-5
** for the mean-100 case, where |x * scale| ~ 200 cancels against the shift.
** The statistics themselves are checked exactly enough by that bound: an
** error of 1e-6 relative in rstd would fail it on every case.
*/
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_dl_device cuda_dev;
static const loom_dl_device host = { LOOM_DEVICE_CPU, 0 };

/* The op on the cuda device (inputs copied there, NULL kept), its output
** back on the host; the status of the call. */
static loom_status run_cuda(const loom_tensor *const *in, const loom_attrs *a, loom_tensor **out_host)
{
    loom_tensor *d[3] = { NULL }, *out = NULL;
    for (int32_t i = 0; i < 3; i++)
        if (in[i] != NULL)
            assert_int_equal(loom_tensor_copy_to(&d[i], in[i], &cuda_dev), LOOM_OK);
    loom_status st = tu_call("vision.group_norm", (const loom_tensor *const *)d, 3, a, "cuda", &out);
    for (int32_t i = 0; i < 3; i++)
        loom_tensor_free(d[i]);
    *out_host = NULL;
    if (st == LOOM_OK) {
        assert_int_equal(loom_tensor_copy_to(out_host, out, &host), LOOM_OK);
        loom_tensor_free(out);
    }
    return st;
}

typedef struct gn_case {
    const char *name;
    int64_t groups;
    int affine;
    const char *eps;
} gn_case;

/* tools/gen_vision_group_norm_goldens.py's CASES */
static const gn_case cases[] = {
    { "nchw", 4, 1, "1e-5" },   { "rank3", 3, 1, "1e-6" }, { "rank2", 2, 1, "1e-5" },
    { "rank5", 2, 0, "1e-5" },  { "retina", 32, 1, "1e-5" }, { "single", 1, 1, "1e-3" },
    { "per_ch", 6, 1, "1e-5" },
};

static loom_tensor *golden(const char *name, const char *part)
{
    char path[160];
    snprintf(path, sizeof path, "vision/group_norm/%s_%s", name, part);
    return tu_npy(path);
}

static loom_attrs *attrs_of(int64_t groups, const char *eps)
{
    char text[96];
    snprintf(text, sizeof text, "num_groups=%lld;eps=%s", (long long)groups, eps);
    loom_attrs *a = tu_attrs_text("vision.group_norm", text);
    assert_non_null(a);
    return a;
}

/* The bound of the header, from the case's own statistics (in double). */
static void assert_within_bound(const loom_tensor *got, const loom_tensor *want, const loom_tensor *x,
                                const loom_tensor *w, const loom_tensor *b, int64_t groups, double eps,
                                const char *what)
{
    tu_assert_same_shape(got, want, what);
    const int64_t n = x->shape[0], c = x->shape[1], cpg = c / groups, inner = loom_numel(x) / (n * c);
    const int64_t len = cpg * inner;
    for (int64_t r = 0; r < n * groups; r++) {
        double s = 0.0, q = 0.0;
        for (int64_t i = 0; i < len; i++)
            s += tu_get(x, r * len + i);
        double mean = s / (double)len;
        for (int64_t i = 0; i < len; i++)
            q += (tu_get(x, r * len + i) - mean) * (tu_get(x, r * len + i) - mean);
        double rstd = 1.0 / sqrt(q / (double)len + eps);
        for (int64_t i = 0; i < len; i++) {
            int64_t ch = (r % groups) * cpg + i / inner, at = r * len + i;
            double scale = rstd * (w != NULL ? tu_get(w, ch) : 1.0);
            double beta = b != NULL ? tu_get(b, ch) : 0.0;
            double bound = 8.0 * FLT_EPSILON * (fabs(tu_get(x, at) * scale) + fabs(scale * mean) + fabs(beta));
            double e = fabs(tu_get(got, at) - tu_get(want, at));
            if (!(e <= bound))
                fail_msg("%s: element %lld is %.9g, want %.9g (|diff| %.3g > bound %.3g)", what, (long long)at,
                         tu_get(got, at), tu_get(want, at), e, bound);
        }
    }
}

static void run_cases_on(const char *backend, int on_cuda)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const gn_case *cs = &cases[k];
        loom_tensor *x = golden(cs->name, "input"), *want = golden(cs->name, "output");
        loom_tensor *w = cs->affine ? golden(cs->name, "weight") : NULL;
        loom_tensor *b = cs->affine ? golden(cs->name, "bias") : NULL;
        loom_attrs *a = attrs_of(cs->groups, cs->eps);
        const loom_tensor *in[3] = { x, w, b };
        loom_tensor *got = NULL;
        char what[96];
        snprintf(what, sizeof what, "group_norm %s on %s", cs->name, backend);
        loom_status st = on_cuda ? run_cuda(in, a, &got) : tu_call("vision.group_norm", in, 3, a, backend, &got);
        if (st != LOOM_OK)
            fail_msg("%s: %s", what, loom_last_error());
        assert_within_bound(got, want, x, w, b, cs->groups, strtod(cs->eps, NULL), what);
        loom_tensor_free(got);
        loom_tensor_free(x);
        loom_tensor_free(want);
        loom_tensor_free(w);
        loom_tensor_free(b);
        loom_attrs_free(a);
    }
}

static void group_norm_matches_torch(void **state)
{
    (void)state;
    run_cases_on("cpu", 0);
}

/* The cuda kernel sums in another order (a block's tree) and rounds the
** affine step with the same fma: the same bound holds. */
static void group_norm_cuda_matches_torch(void **state)
{
    (void)state;
    if (!tu_cuda_device(&cuda_dev) || !tu_has_backend("vision.group_norm", "cuda")) {
        print_message("no CUDA device (or no cuda kernel of vision.group_norm): the cuda kernel is not run\n");
        skip();
    }
    run_cases_on("cuda", 1);
}

/* ------------------------------------------------------------- refusals */

static void expect_refusal(const loom_tensor *const *in, const char *text, const char *needle)
{
    loom_attrs *a = tu_attrs_text("vision.group_norm", text);
    loom_tensor *got = NULL;
    if (tu_call("vision.group_norm", in, 3, a, NULL, &got) == LOOM_OK)
        fail_msg("group_norm (%s) was accepted; want an error naming %s", text, needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("group_norm (%s): message \"%s\" does not name %s", text, loom_last_error(), needle);
    loom_attrs_free(a);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    int64_t xs[4] = { 2, 6, 3, 3 }, cs[1] = { 6 }, c4[1] = { 4 }, vs[1] = { 6 };
    loom_tensor *x = tu_random_f32(4, xs, 1), *w = tu_random_f32(1, cs, 2), *w4 = tu_random_f32(1, c4, 3);
    loom_tensor *v = tu_random_f32(1, vs, 4), *x64 = tu_cast(x, LOOM_DTYPE_F64);
    const loom_tensor *ok[3] = { x, w, w }, *bad_w[3] = { x, w4, NULL }, *bad_b[3] = { x, w, w4 };
    const loom_tensor *rank1[3] = { v, NULL, NULL }, *f64[3] = { x64, NULL, NULL };
    expect_refusal(ok, "num_groups=4", "num_groups");         /* 6 % 4 */
    expect_refusal(bad_w, "num_groups=2", "'weight'");
    expect_refusal(bad_b, "num_groups=2", "'bias'");
    expect_refusal(rank1, "num_groups=2", "rank >= 2");
    expect_refusal(f64, "num_groups=2", "f32");
    loom_attrs *zero;                 /* num_groups > 0: the attribute's own check */
    assert_int_equal(loom_attrs_new(&zero), LOOM_OK);
    loom_tensor *missing = NULL;
    if (loom_attrs_parse(zero, "vision.group_norm", "num_groups", "0") == LOOM_OK) {
        assert_int_not_equal(tu_call("vision.group_norm", ok, 3, zero, NULL, &missing), LOOM_OK);
        assert_non_null(strstr(loom_last_error(), "num_groups"));
    }
    loom_attrs_free(zero);
    assert_int_not_equal(tu_call("vision.group_norm", ok, 3, NULL, NULL, &missing), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "num_groups"));
    loom_tensor *all[] = { x, w, w4, v, x64 };
    for (size_t i = 0; i < 5; i++)
        loom_tensor_free(all[i]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest cpu_tests[] = {
        cmocka_unit_test(group_norm_matches_torch),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    const struct CMUnitTest cuda_tests[] = {
        cmocka_unit_test(group_norm_cuda_matches_torch),
    };
    if (argc > 1 && strcmp(argv[1], "cuda") == 0)
        return cmocka_run_group_tests(cuda_tests, tu_setup, tu_teardown);
    return cmocka_run_group_tests(cpu_tests, tu_setup, tu_teardown);
}
