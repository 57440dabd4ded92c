/* SPDX-License-Identifier: BSD-3-Clause */
/*
** compare.c - one output of a backend against the cpu kernel's, as the
** case's cf_tol for that output says (see conformance.h).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conformance.h"

static int same_layout(const loom_tensor *got, const loom_tensor *ref, char *err, size_t size)
{
    if (loom_tensor_dtype_of(got) != loom_tensor_dtype_of(ref)) {
        snprintf(err, size, "dtype %s, cpu %s", loom_dtype_name(loom_tensor_dtype_of(got)),
                 loom_dtype_name(loom_tensor_dtype_of(ref)));
        return 0;
    }
    if (got->ndim != ref->ndim) {
        snprintf(err, size, "rank %d, cpu %d", (int)got->ndim, (int)ref->ndim);
        return 0;
    }
    for (int32_t d = 0; d < got->ndim; d++)
        if (got->shape[d] != ref->shape[d]) {
            snprintf(err, size, "dim %d is %lld, cpu %lld", (int)d, (long long)got->shape[d],
                     (long long)ref->shape[d]);
            return 0;
        }
    return 1;
}

static int same_bytes(const loom_tensor *got, const loom_tensor *ref, char *err, size_t size)
{
    size_t es = loom_dtype_size(loom_tensor_dtype_of(ref));
    const unsigned char *g = loom_data(got), *r = loom_data(ref);
    for (int64_t i = 0; i < loom_numel(ref); i++)
        if (memcmp(g + (size_t)i * es, r + (size_t)i * es, es) != 0) {
            char gb[40] = "", rb[40] = "";
            for (size_t b = 0; b < es && b < 16; b++) {     /* most significant byte first */
                snprintf(gb + 2 * b, 3, "%02x", g[(size_t)i * es + es - 1 - b]);
                snprintf(rb + 2 * b, 3, "%02x", r[(size_t)i * es + es - 1 - b]);
            }
            snprintf(err, size, "element %lld is 0x%s, cpu 0x%s (identical bytes required)", (long long)i, gb, rb);
            return 0;
        }
    return 1;
}

static int is_float(loom_dtype dt)
{
    return dt == LOOM_DTYPE_F32 || dt == LOOM_DTYPE_F64 || dt == LOOM_DTYPE_F16 || dt == LOOM_DTYPE_BF16
           || dt == LOOM_DTYPE_F8E4M3;
}

/* t as a new f64 tensor (core.cast on the cpu), NULL with err on failure. */
static loom_tensor *as_f64(const loom_tensor *t, char *err, size_t size)
{
    loom_attrs *a = NULL;
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "dtype", "f64") != LOOM_OK
        || loom_run("core.cast", &t, 1, a, &out, 1, &opt) != LOOM_OK) {
        snprintf(err, size, "core.cast to f64: %s", loom_last_error());
        out = NULL;
    }
    loom_attrs_free(a);
    return out;
}

static int close_values(const loom_tensor *got, const loom_tensor *ref, double rtol, double atol, char *err,
                        size_t size)
{
    if (loom_numel(ref) == 0)
        return 1;
    loom_tensor *g = as_f64(got, err, size), *r = g != NULL ? as_f64(ref, err, size) : NULL;
    int ok = r != NULL;
    for (int64_t i = 0; ok && i < loom_numel(ref); i++) {
        double x = cf_f64(g, i), w = cf_f64(r, i);
        ok = isnan(w) ? isnan(x) : isinf(w) ? x == w : fabs(x - w) <= atol + rtol * fabs(w);
        if (!ok)
            snprintf(err, size, "element %lld is %.10g, cpu %.10g (rtol %g, atol %g)", (long long)i, x, w, rtol,
                     atol);
    }
    loom_tensor_free(g);
    loom_tensor_free(r);
    return ok;
}

int cf_compare(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
               size_t size)
{
    const cf_tol *t = &c->tol[out];
    if (!same_layout(got, ref, err, size))
        return 0;
    switch (t->cmp) {
    case CF_CUSTOM:
        if (c->check == NULL) {
            snprintf(err, size, "output %d is CF_CUSTOM but the case has no check function", (int)out);
            return 0;
        }
        return c->check(c, out, got, ref, err, size);
    case CF_CLOSE:
        if (is_float(loom_tensor_dtype_of(ref)))
            return close_values(got, ref, t->rtol, t->atol, err, size);
        return same_bytes(got, ref, err, size);
    case CF_BYTES:
    default:
        return same_bytes(got, ref, err, size);
    }
}
