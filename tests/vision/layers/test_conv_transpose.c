/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_conv_transpose.c - vision.conv_transpose2d against
** F.conv_transpose2d (goldens of tools/gen_vision_conv_transpose_goldens.py;
** the cases' attributes are those of its CASES table), the refusals of bad
** arguments and an empty batch. With the argument `cuda` (suite gpu) it runs
** the goldens on the cuda kernel, the inputs copied to the first CUDA
** device, and skips with a message where there is none.
**
** Tolerance, per element: |got - want| <= 2 (n + 1) FLT_EPSILON * abs, with
** n = Cin/groups * kh * kw the products summed into the element and abs the
** sum of their magnitudes plus |bias| (the generator's <name>_abs, float64).
** Why: a sum of n + 1 f32 terms in any order is within (n + 1) eps * abs of
** the exact value (Higham's bound for recursive summation, to first order),
** and loom (GEMM, then col2im) and ATen sum in different orders, so they
** are within twice that of each other. The generator prints the measured
** gap to float64 (<= 1.2e-6 on outputs of magnitude ~10).
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

typedef struct ct_case {
    const char *name;
    int bias;
    const char *attrs;
} ct_case;

/* tools/gen_vision_conv_transpose_goldens.py's CASES */
static const ct_case cases[] = {
    { "predictor", 1, "stride=2,2;padding=0,0;output_padding=0,0;groups=1;dilation=1,1" },
    { "basic", 1, "stride=1,1;padding=0,0;output_padding=0,0;groups=1;dilation=1,1" },
    { "strided", 1, "stride=2,3;padding=1,0;output_padding=1,2;groups=1;dilation=1,1" },
    { "grouped", 1, "stride=2,2;padding=1,1;output_padding=1,0;groups=2;dilation=2,1" },
    { "nobias", 0, "stride=1,2;padding=2,1;output_padding=0,1;groups=3;dilation=1,1" },
    { "pixel", 1, "stride=1,1;padding=0,1;output_padding=0,0;groups=1;dilation=1,1" },
};

static loom_tensor *golden(const char *name, const char *part)
{
    char path[160];
    snprintf(path, sizeof path, "vision/conv_transpose/%s_%s", name, part);
    return tu_npy(path);
}

static loom_attrs *attrs_of(const char *text)
{
    loom_attrs *a = tu_attrs_text("vision.conv_transpose2d", text);
    assert_non_null(a);
    return a;
}

/* The op on the cuda device (inputs copied there, NULL kept), its output back on the host. */
static loom_status run_cuda(const loom_tensor *const *in, const loom_attrs *a, loom_tensor **out_host)
{
    loom_tensor *d[3] = { NULL }, *out = NULL;
    for (int32_t i = 0; i < 3; i++)
        if (in[i] != NULL)
            assert_int_equal(loom_tensor_copy_to(&d[i], in[i], &cuda_dev), LOOM_OK);
    loom_status st = tu_call("vision.conv_transpose2d", (const loom_tensor *const *)d, 3, a, "cuda", &out);
    for (int32_t i = 0; i < 3; i++)
        loom_tensor_free(d[i]);
    *out_host = NULL;
    if (st == LOOM_OK) {
        assert_int_equal(loom_tensor_copy_to(out_host, out, &host), LOOM_OK);
        loom_tensor_free(out);
    }
    return st;
}

static void assert_within_bound(const loom_tensor *got, const loom_tensor *want, const loom_tensor *mag,
                                int64_t terms, const char *what)
{
    tu_assert_same_shape(got, want, what);
    double worst = 0.0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        const double e = fabs(tu_get(got, i) - tu_get(want, i));
        const double bound = 2.0 * (double)(terms + 1) * FLT_EPSILON * tu_get(mag, i);
        if (!(e <= bound))
            fail_msg("%s: element %lld is %.9g, want %.9g (|diff| %.3g > bound %.3g)", what, (long long)i,
                     tu_get(got, i), tu_get(want, i), e, bound);
        worst = e > worst ? e : worst;
    }
    print_message("%s: max |diff| %.3g\n", what, worst);
}

static void run_cases_on(const char *backend, int on_cuda)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const ct_case *cs = &cases[k];
        loom_tensor *x = golden(cs->name, "input"), *w = golden(cs->name, "weight");
        loom_tensor *b = cs->bias ? golden(cs->name, "bias") : NULL;
        loom_tensor *want = golden(cs->name, "output"), *mag = golden(cs->name, "abs");
        loom_attrs *a = attrs_of(cs->attrs);
        const loom_tensor *in[3] = { x, w, b };
        loom_tensor *got = NULL;
        char what[96];
        snprintf(what, sizeof what, "conv_transpose2d %s on %s", cs->name, backend);
        loom_status st = on_cuda ? run_cuda(in, a, &got)
                                 : tu_call("vision.conv_transpose2d", in, 3, a, backend, &got);
        if (st != LOOM_OK)
            fail_msg("%s: %s", what, loom_last_error());
        /* the terms of one output: the group's input channels times the taps */
        const char *g = strstr(cs->attrs, "groups=");
        const int64_t ng = g != NULL ? strtoll(g + 7, NULL, 10) : 1;
        assert_within_bound(got, want, mag, x->shape[1] / ng * w->shape[2] * w->shape[3], what);
        loom_tensor *all[] = { got, x, w, b, want, mag };
        for (size_t i = 0; i < 6; i++)
            loom_tensor_free(all[i]);
        loom_attrs_free(a);
    }
}

static void conv_transpose_matches_torch(void **state)
{
    (void)state;
    run_cases_on("cpu", 0);
}

static void conv_transpose_cuda_matches_torch(void **state)
{
    (void)state;
    if (!tu_cuda_device(&cuda_dev) || !tu_has_backend("vision.conv_transpose2d", "cuda")) {
        print_message("no CUDA device (or no cuda kernel of vision.conv_transpose2d): the cuda kernel is not run\n");
        skip();
    }
    run_cases_on("cuda", 1);
}

/* An empty batch gives an empty output of the right shape. */
static void empty_batch_gives_empty_output(void **state)
{
    (void)state;
    int64_t xs[4] = { 0, 4, 3, 3 }, ws[4] = { 4, 2, 2, 2 };
    loom_tensor *x = tu_random_f32(4, xs, 1), *w = tu_random_f32(4, ws, 2), *got = NULL;
    const loom_tensor *in[3] = { x, w, NULL };
    loom_attrs *a = attrs_of("stride=2");
    assert_int_equal(tu_call("vision.conv_transpose2d", in, 3, a, NULL, &got), LOOM_OK);
    assert_int_equal(got->ndim, 4);
    assert_int_equal(got->shape[0], 0);
    assert_int_equal(got->shape[1], 2);
    assert_int_equal(got->shape[2], 6);
    assert_int_equal(got->shape[3], 6);
    loom_tensor_free(got);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_attrs_free(a);
}

/* ------------------------------------------------------------- refusals */

static void expect_refusal(const loom_tensor *const *in, const char *text, const char *needle)
{
    loom_attrs *a = tu_attrs_text("vision.conv_transpose2d", text);
    loom_tensor *got = NULL;
    if (tu_call("vision.conv_transpose2d", in, 3, a, NULL, &got) == LOOM_OK)
        fail_msg("conv_transpose2d (%s) was accepted; want an error naming %s", text, needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("conv_transpose2d (%s): message \"%s\" does not name %s", text, loom_last_error(), needle);
    loom_attrs_free(a);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    int64_t xs[4] = { 1, 4, 3, 3 }, ws[4] = { 4, 2, 3, 3 }, w5s[4] = { 5, 2, 3, 3 }, bs[1] = { 2 }, b3s[1] = { 3 };
    int64_t x3s[3] = { 4, 3, 3 }, e0s[4] = { 1, 4, 0, 3 };
    loom_tensor *x = tu_random_f32(4, xs, 1), *w = tu_random_f32(4, ws, 2), *w5 = tu_random_f32(4, w5s, 3);
    loom_tensor *b = tu_random_f32(1, bs, 4), *b3 = tu_random_f32(1, b3s, 5), *x3 = tu_random_f32(3, x3s, 6);
    loom_tensor *e0 = tu_random_f32(4, e0s, 7), *x64 = tu_cast(x, LOOM_DTYPE_F64);
    const loom_tensor *ok[3] = { x, w, b }, *rows[3] = { x, w5, NULL }, *bias[3] = { x, w, b3 };
    const loom_tensor *rank3[3] = { x3, w, NULL }, *empty_map[3] = { e0, w, NULL }, *f64[3] = { x64, w, NULL };
    expect_refusal(rows, "", "'weight'");
    expect_refusal(bias, "", "'bias'");
    expect_refusal(rank3, "", "input");
    expect_refusal(empty_map, "", "'input'");
    expect_refusal(f64, "", "f32");
    expect_refusal(ok, "output_padding=1", "output_padding");          /* not below stride 1 or dilation 1 */
    expect_refusal(ok, "groups=3", "groups");                          /* 4 % 3 */
    expect_refusal(ok, "padding=3", "'input'");                        /* output 3 - 6 + 2 + 1 = 0 */
    loom_tensor *all[] = { x, w, w5, b, b3, x3, e0, x64 };
    for (size_t i = 0; i < 8; i++)
        loom_tensor_free(all[i]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest cpu_tests[] = {
        cmocka_unit_test(conv_transpose_matches_torch),
        cmocka_unit_test(empty_batch_gives_empty_output),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    const struct CMUnitTest cuda_tests[] = {
        cmocka_unit_test(conv_transpose_cuda_matches_torch),
    };
    if (argc > 1 && strcmp(argv[1], "cuda") == 0)
        return cmocka_run_group_tests(cuda_tests, tu_setup, tu_teardown);
    return cmocka_run_group_tests(cpu_tests, tu_setup, tu_teardown);
}
