/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_test.h - helpers of the deform module's tests: the deform_conv2d
** cases of tools/gen_vision_deform_goldens.py (same names and attributes),
** calls with several outputs, and generated tensors. Header-only (static
** functions); every test file includes it once.
*/
#ifndef DEFORM_TEST_H
#define DEFORM_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

/* The attributes of each golden case (tools/gen_vision_deform_goldens.py). */
typedef struct conv_case {
    const char *name;
    int64_t stride[2], padding[2], dilation[2];
    int has_mask, has_bias, has_backward;
} conv_case;

static const conv_case conv_cases[] = {
    { "basic_mask", { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, 1, 1 },
    { "nomask_nobias", { 1, 1 }, { 1, 1 }, { 1, 1 }, 0, 0, 1 },
    { "groups_stride", { 2, 2 }, { 1, 1 }, { 1, 1 }, 1, 1, 1 },
    { "dilation", { 1, 2 }, { 2, 1 }, { 2, 2 }, 0, 1, 1 },
    { "outside", { 1, 1 }, { 0, 0 }, { 1, 1 }, 1, 0, 1 },
    { "groups_f64", { 2, 2 }, { 1, 1 }, { 1, 1 }, 1, 1, 1 },
    { "f16", { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, 1, 1 },
    { "wide", { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, 1, 1 },
    { "empty", { 1, 1 }, { 1, 1 }, { 1, 1 }, 1, 1, 0 },
};
#define N_CONV_CASES (sizeof conv_cases / sizeof conv_cases[0])

static inline loom_tensor *dt_golden(const char *cname, const char *tname)
{
    char name[128];
    snprintf(name, sizeof name, "vision/deform/%s_%s", cname, tname);
    return tu_npy(name);
}

static inline loom_attrs *dt_conv_attrs(const int64_t *stride, const int64_t *padding, const int64_t *dilation)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "stride", stride, 2), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "padding", padding, 2), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "dilation", dilation, 2), LOOM_OK);
    return a;
}

/* loom_run with n_out outputs on a forced backend (NULL: any). */
static inline loom_status dt_run(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *a,
                        const char *backend, loom_tensor **outs, int32_t n_out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = backend;
    for (int32_t i = 0; i < n_out; i++)
        outs[i] = NULL;
    return loom_run(op, in, n_in, a, outs, n_out, &opt);
}

/* Uniform in [lo, hi) from a 32-bit LCG, as f64, cast to dtype on the cpu. */
static inline loom_tensor *dt_random(loom_dtype dt, int32_t ndim, const int64_t *shape, uint32_t seed, double lo,
                              double hi)
{
    loom_tensor *t, *out;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F64, ndim, shape, NULL), LOOM_OK);
    double *p = loom_data(t);
    for (int64_t i = 0; i < loom_numel(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = lo + (hi - lo) * (double)(seed >> 8) / 16777216.0;
    }
    if (dt == LOOM_DTYPE_F64)
        return t;
    out = tu_cast(t, dt);
    loom_tensor_free(t);
    return out;
}

/* Any float tensor as a new f64 tensor. */
static inline loom_tensor *dt_f64(const loom_tensor *t)
{
    return tu_cast(t, LOOM_DTYPE_F64);
}

/* |got - want| <= atol + rtol*|want| for any float dtype (compared in f64). */
static inline void dt_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                            const char *what)
{
    loom_tensor *g = dt_f64(got), *w = dt_f64(want);
    tu_assert_close(g, w, rtol, atol, what);
    loom_tensor_free(g);
    loom_tensor_free(w);
}

/* The call fails with `status` and a message containing `needle`. */
static inline void dt_expect_error(loom_status st, loom_status want, const char *needle)
{
    if (st != want)
        fail_msg("status %d, expected %d (%s)", (int)st, (int)want, loom_last_error());
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", loom_last_error(), needle);
}

#endif /* DEFORM_TEST_H */
