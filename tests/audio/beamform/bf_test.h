/* SPDX-License-Identifier: BSD-3-Clause */
/*
** bf_test.h - what the beamforming tests share: golden files by stem and
** dtype, calls of ops and object methods, and the complex comparisons.
**
** Tolerances (torchaudio's spec for these ops): complex128 results agree
** within 1e-10 and complex64 within 1e-5, relative to the largest modulus
** of the expected tensor. The bound is norm-wise rather than per element
** because the solves and sums mix every element: a small entry carries the
** rounding of the large ones (torch's LAPACK and the loop order of its
** einsum differ from loom's at that level, never above it).
*/
#ifndef BF_TEST_H
#define BF_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tu_ops.h"

static inline double bf_rtol(loom_dtype dt)
{
    return dt == LOOM_DTYPE_C128 || dt == LOOM_DTYPE_F64 ? 1e-10 : 1e-5;
}

/* tests/data/audio/beamform/<stem>_<sfx>.npy */
static inline loom_tensor *bf_golden(const char *stem, const char *sfx)
{
    char name[256];
    snprintf(name, sizeof name, "audio/beamform/%s_%s", stem, sfx);
    return tu_npy(name);
}

static inline const char *bf_rname(const char *sfx)
{
    return strcmp(sfx, "c64") == 0 ? "f32" : "f64";
}

/* interleaved component i of a c64/c128 tensor */
static inline double bf_comp(const loom_tensor *t, int64_t i)
{
    if (loom_tensor_dtype_of(t) == LOOM_DTYPE_C128)
        return ((const double *)loom_data(t))[i];
    return ((const float *)loom_data(t))[i];
}

/* got against want, both complex: same dtype and shape; every component
** within rtol times the largest modulus of want */
static inline void bf_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, const char *what)
{
    tu_assert_same_shape(got, want, what);
    const int64_t n = 2 * loom_numel(want);
    double scale = 0, worst = 0;
    int64_t at = -1;
    for (int64_t i = 0; i < n; i += 2)
        scale = fmax(scale, hypot(bf_comp(want, i), bf_comp(want, i + 1)));
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(bf_comp(got, i) - bf_comp(want, i));
        if (!(d <= worst)) {
            worst = d;
            at = i;
        }
    }
    if (!(worst <= rtol * scale))
        fail_msg("%s: component %lld differs by %.3g (got %.17g, want %.17g); allowed %.3g (rtol %.1g of max |want| "
                 "%.6g)", what, (long long)at, worst, bf_comp(got, at), bf_comp(want, at), rtol * scale, rtol, scale);
}

/* the same for vectors of length C along the last dim, each first rotated
** by the unit phase that best aligns it with want (eigenvectors: their
** phase is the eigensolver's) */
static inline void bf_assert_close_phase(const loom_tensor *got, const loom_tensor *want, double rtol,
                                         const char *what)
{
    tu_assert_same_shape(got, want, what);
    const int64_t C = want->shape[want->ndim - 1], nv = loom_numel(want) / (C ? C : 1);
    for (int64_t v = 0; v < nv; v++) {
        double pr = 0, pi = 0, scale = 0;
        for (int64_t c = 0; c < C; c++) {
            int64_t i = 2 * (v * C + c);
            double gr = bf_comp(got, i), gi = bf_comp(got, i + 1), wr = bf_comp(want, i), wi = bf_comp(want, i + 1);
            pr += wr * gr + wi * gi;   /* conj(got) . want */
            pi += wi * gr - wr * gi;
            scale = fmax(scale, hypot(wr, wi));
        }
        double mod = hypot(pr, pi);
        if (mod == 0)
            fail_msg("%s: vector %lld is orthogonal to the expected one", what, (long long)v);
        pr /= mod, pi /= mod;
        for (int64_t c = 0; c < C; c++) {
            int64_t i = 2 * (v * C + c);
            double gr = bf_comp(got, i), gi = bf_comp(got, i + 1);
            double rr = gr * pr - gi * pi, ri = gr * pi + gi * pr;
            double d = fmax(fabs(rr - bf_comp(want, i)), fabs(ri - bf_comp(want, i + 1)));
            if (!(d <= rtol * scale))
                fail_msg("%s: vector %lld element %lld differs by %.3g after the phase; allowed %.3g", what,
                         (long long)v, (long long)c, d, rtol * scale);
        }
    }
}

/* attrs parsed from "k=v;k=v" for op (or class) `op`; NULL for none */
static inline loom_attrs *bf_attrs(const char *op, const char *text)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (text == NULL)
        return a;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = 0;
        if (loom_attrs_parse(a, op, kv, eq + 1) != LOOM_OK)
            fail_msg("attribute %s of %s: %s", kv, op, loom_last_error());
    }
    return a;
}

/* one call of op with attrs text on a forced backend (NULL: policy); the
** status, and the output in *out */
static inline loom_status bf_call(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs,
                                  const char *backend, loom_object *obj, loom_tensor **out)
{
    loom_attrs *a = bf_attrs(op, attrs);
    loom_call_options o = LOOM_CALL_OPTIONS_INIT;
    o.backend = backend;
    o.object = obj;
    *out = NULL;
    loom_status st = loom_run(op, in, n, a, out, 1, &o);
    loom_attrs_free(a);
    return st;
}

/* the same, failing the test unless it succeeds */
static inline loom_tensor *bf_run(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs,
                                  const char *backend, loom_object *obj)
{
    loom_tensor *out;
    if (bf_call(op, in, n, attrs, backend, obj, &out) != LOOM_OK)
        fail_msg("%s(%s): %s", op, attrs ? attrs : "", loom_last_error());
    return out;
}

static inline loom_object *bf_object(const char *cls, const char *attrs)
{
    loom_object *o;
    loom_attrs *a = bf_attrs(cls, attrs);
    if (loom_object_create(&o, cls, a, NULL) != LOOM_OK)
        fail_msg("create %s(%s): %s", cls, attrs ? attrs : "", loom_last_error());
    loom_attrs_free(a);
    return o;
}

#endif /* BF_TEST_H */
