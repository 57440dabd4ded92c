/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_matmul.c - core.matmul against torch.matmul (2-D, two KC slices,
** batched, broadcast batch, f64), cpu against onednn, strided inputs, the
** ISA cap, and the errors for bad ranks, K, dtypes and batches.
**
** Tolerance: both torch and loom sum K products in some order; each result
** is within K*u*(|A||B|)_ij of the exact one (u = 2^-24 for f32, 2^-53 for
** f64; Higham, Accuracy and Stability, 3.5), so two of them differ by at
** most 2*K*u*(|A||B|)_ij. The bound is computed per element from the inputs.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

/* |got - want| <= 2*K*u*(|A||B|) elementwise; a and b compact, rank 2 or 3
** with a batch of 1 broadcast. */
static void assert_matmul_close(const loom_tensor *a, const loom_tensor *b, const loom_tensor *got,
                                const loom_tensor *want, const char *what)
{
    int r = got->ndim;
    int64_t m = got->shape[r - 2], n = got->shape[r - 1], k = a->shape[a->ndim - 1];
    int64_t batch = r == 3 ? got->shape[0] : 1;
    int64_t ba = a->ndim == 3 ? a->shape[0] : 1, bb = b->ndim == 3 ? b->shape[0] : 1;
    double u = loom_tensor_dtype_of(got) == LOOM_DTYPE_F64 ? 0x1p-53 : 0x1p-24;
    assert_int_equal(loom_numel(got), loom_numel(want));
    for (int64_t z = 0; z < batch; z++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double mag = 0;
                for (int64_t p = 0; p < k; p++)
                    mag += fabs(tu_get(a, (ba == 1 ? 0 : z) * m * k + i * k + p))
                         * fabs(tu_get(b, (bb == 1 ? 0 : z) * k * n + p * n + j));
                int64_t e = (z * m + i) * n + j;
                double g = tu_get(got, e), w = tu_get(want, e);
                if (!(fabs(g - w) <= 2.0 * (double)k * u * mag + 1e-30))
                    fail_msg("%s: element %lld is %.9g, expected %.9g (bound %.3g)", what, (long long)e,
                             g, w, 2.0 * (double)k * u * mag);
            }
}

static void golden(const char *stem, const char *backend)
{
    char name[96];
    snprintf(name, sizeof name, "coreops/matmul_%s_input", stem);
    loom_tensor *a = tu_npy(name);
    snprintf(name, sizeof name, "coreops/matmul_%s_other", stem);
    loom_tensor *b = tu_npy(name);
    snprintf(name, sizeof name, "coreops/matmul_%s_output", stem);
    loom_tensor *want = tu_npy(name), *got;
    if (tu_call("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, backend, &got) != LOOM_OK)
        fail_msg("%s: %s", stem, loom_last_error());
    assert_int_equal(loom_tensor_dtype_of(got), loom_tensor_dtype_of(want));
    assert_int_equal(got->ndim, want->ndim);
    assert_matmul_close(a, b, got, want, stem);
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(want);
    loom_tensor_free(got);
}

static void matmul_matches_torch_on_cpu(void **state)
{
    (void)state;
    golden("f32_2d", "cpu");
    golden("f32_k300", "cpu");
    golden("f32_batch", "cpu");
    golden("f32_bcast", "cpu");
    golden("f64_2d", "cpu");
    /* the schema's cost of the last call: 2*M*N*K flops for [17,19]@[19,23] */
    double flops = 0, bytes = 0;
    loom_last_call_cost(&flops, &bytes);
    assert_true(flops == 2.0 * 17 * 19 * 23);
    assert_true(bytes == 8.0 * (17 * 19 + 19 * 23 + 17 * 23));
}

/* same shapes forced through cpu and onednn agree within the K*u bound,
** and onednn matches the torch goldens */
static void onednn_matches_cpu(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    golden("f32_2d", "onednn");
    golden("f32_k300", "onednn");
    golden("f32_batch", "onednn");
    golden("f32_bcast", "onednn");
    static const int64_t dims[][3] = { { 67, 129, 45 }, { 256, 300, 257 }, { 1, 7, 1 } };
    for (size_t c = 0; c < sizeof dims / sizeof dims[0]; c++) {
        int64_t sa[2] = { dims[c][0], dims[c][1] }, sb[2] = { dims[c][1], dims[c][2] };
        loom_tensor *a = tu_random_f32(2, sa, 1u + (unsigned)c), *b = tu_random_f32(2, sb, 99u + (unsigned)c);
        loom_tensor *cpu, *dnn;
        assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, "cpu", &cpu), LOOM_OK);
        assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, "onednn", &dnn),
                         LOOM_OK);
        loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
        assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
        assert_string_equal(di.backend, "onednn");
        assert_matmul_close(a, b, dnn, cpu, "onednn vs cpu");
        loom_tensor_free(a);
        loom_tensor_free(b);
        loom_tensor_free(cpu);
        loom_tensor_free(dnn);
    }
}

/* The environment form: the process is configured with LOOM_BACKENDS=cpu,
** then LOOM_BACKENDS=onednn (each read by a fresh loom_init), and the two
** results agree within the same K*u bound as above. */
static loom_tensor *matmul_under_env(const char *backends, const loom_tensor *a, const loom_tensor *b)
{
    loom_tensor *out = NULL;
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    tu_teardown(NULL);
    setenv("LOOM_BACKENDS", backends, 1);
    assert_int_equal(tu_setup(NULL), 0);
    assert_int_equal(loom_run("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, &out, 1, NULL), LOOM_OK);
    assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
    assert_string_equal(di.backend, backends);
    unsetenv("LOOM_BACKENDS");
    return out;
}

static void loom_backends_cpu_and_onednn_agree(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    int64_t sa[2] = { 97, 513 }, sb[2] = { 513, 65 };
    loom_tensor *a = tu_random_f32(2, sa, 7u), *b = tu_random_f32(2, sb, 8u);
    loom_tensor *cpu = matmul_under_env("cpu", a, b), *dnn = matmul_under_env("onednn", a, b);
    assert_matmul_close(a, b, dnn, cpu, "LOOM_BACKENDS=onednn vs LOOM_BACKENDS=cpu");
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(cpu);
    loom_tensor_free(dnn);
    tu_teardown(NULL);
    assert_int_equal(tu_setup(NULL), 0);
}

/* A^T given as a strided view packs to the same panels: identical result */
static void strided_input_gives_identical_result(void **state)
{
    (void)state;
    int64_t sa[2] = { 37, 53 }, sb[2] = { 53, 29 }, st_shape[2] = { 53, 37 };
    loom_tensor *a = tu_random_f32(2, sa, 5), *b = tu_random_f32(2, sb, 6), *at, *view, *ref, *got;
    assert_int_equal(loom_tensor_new(&at, LOOM_DTYPE_F32, 2, st_shape, NULL), LOOM_OK);
    for (int64_t i = 0; i < 37; i++)
        for (int64_t p = 0; p < 53; p++)
            ((float *)loom_data(at))[p * 37 + i] = ((float *)loom_data(a))[i * 53 + p];
    int64_t strides[2] = { 1, 37 };
    assert_int_equal(loom_tensor_wrap(&view, loom_data(at), LOOM_DTYPE_F32, 2, sa, strides, NULL), LOOM_OK);
    assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, "cpu", &ref), LOOM_OK);
    assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ view, b }, 2, NULL, "cpu", &got), LOOM_OK);
    tu_assert_identical(got, ref, "transposed view");
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(at);
    loom_tensor_free(view);
    loom_tensor_free(ref);
    loom_tensor_free(got);
}

/* LOOM_CPU_MAX_ISA=sse4 (set by the second registration of this test)
** selects the portable micro-kernel; the golden tests above then ran on it */
static void isa_cap_selects_the_kernel(void **state)
{
    (void)state;
    int64_t s[2] = { 4, 4 };
    loom_tensor *a = tu_random_f32(2, s, 3), *out;
    assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ a, a }, 2, NULL, "cpu", &out), LOOM_OK);
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
    const char *cap = getenv("LOOM_CPU_MAX_ISA");
    if (cap != NULL && strcmp(cap, "sse4") == 0)
        assert_string_equal(di.impl, "cpu:blocked-scalar");
    else
        assert_non_null(strstr(di.impl, "cpu:blocked-"));
    loom_tensor_free(a);
    loom_tensor_free(out);
}

static void expect_error(const loom_tensor *a, const loom_tensor *b, const char *needle)
{
    loom_tensor *out;
    assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, "cpu", &out),
                     LOOM_EINVAL);
    assert_null(out);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not mention '%s'", loom_last_error(), needle);
}

static void matmul_rejects_bad_arguments(void **state)
{
    (void)state;
    float f[64] = { 0 };
    double d[64] = { 0 };
    int64_t s1[1] = { 4 }, s23[2] = { 2, 3 }, s43[2] = { 4, 3 }, s34[2] = { 3, 4 };
    int64_t b2[3] = { 2, 2, 3 }, b3[3] = { 3, 3, 4 };
    loom_tensor *v, *m23, *m43, *m34, *d34, *t223, *t334;
    assert_int_equal(loom_tensor_wrap(&v, f, LOOM_DTYPE_F32, 1, s1, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&m23, f, LOOM_DTYPE_F32, 2, s23, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&m43, f, LOOM_DTYPE_F32, 2, s43, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&m34, f, LOOM_DTYPE_F32, 2, s34, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&d34, d, LOOM_DTYPE_F64, 2, s34, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&t223, f, LOOM_DTYPE_F32, 3, b2, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&t334, f, LOOM_DTYPE_F32, 3, b3, NULL, NULL), LOOM_OK);
    expect_error(v, m34, "rank >= 2");
    expect_error(m23, m43, "K mismatch");
    expect_error(m23, d34, "same dtype");
    expect_error(t223, t334, "do not broadcast");
    loom_tensor *all[] = { v, m23, m43, m34, d34, t223, t334 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(matmul_matches_torch_on_cpu),
        cmocka_unit_test(onednn_matches_cpu),
        cmocka_unit_test(loom_backends_cpu_and_onednn_agree),
        cmocka_unit_test(strided_input_gives_identical_result),
        cmocka_unit_test(isa_cap_selects_the_kernel),
        cmocka_unit_test(matmul_rejects_bad_arguments),
    };
    return cmocka_run_group_tests_name("coreops_matmul", tests, tu_setup, tu_teardown);
}
