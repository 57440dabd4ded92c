/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_test_util.c - see roi_test_util.h.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "roi_test_util.h"

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu, u;
    float f;
    if (exp == 0x1F) {
        u = sign | 0x7F800000u | (man << 13);
    } else if (exp == 0) {
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    } else {
        u = sign | ((exp + 112u) << 23) | (man << 13);
    }
    memcpy(&f, &u, 4);
    return f;
}

double roi_get(const loom_tensor *t, int64_t i)
{
    switch (loom_tensor_dtype_of(t)) {
    case LOOM_DTYPE_F64: return ((const double *)loom_data(t))[i];
    case LOOM_DTYPE_F32: return ((const float *)loom_data(t))[i];
    case LOOM_DTYPE_F16: return f16_to_f32(((const uint16_t *)loom_data(t))[i]);
    case LOOM_DTYPE_I32: return ((const int32_t *)loom_data(t))[i];
    default: fail_msg("roi_get: unexpected dtype %s", loom_dtype_name(loom_tensor_dtype_of(t)));
    }
    return 0;
}

loom_tensor *roi_npy(const char *fmt, ...)
{
    char stem[200], name[220];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(stem, sizeof stem, fmt, ap);
    va_end(ap);
    snprintf(name, sizeof name, "vision/roi/%s", stem);
    return tu_npy(name);
}

roi_params roi_load_params(const char *casename)
{
    loom_tensor *t = roi_npy("params_%s", casename);
    const double *v = loom_data(t);
    roi_params p = { .ph = (int64_t)v[0], .pw = (int64_t)v[1], .spatial_scale = v[2],
                     .sampling_ratio = (int64_t)v[3], .aligned = v[4] != 0 };
    loom_tensor_free(t);
    return p;
}

loom_attrs *roi_forward_attrs(const char *op, const roi_params *p, int square_form)
{
    loom_attrs *a;
    const int64_t os[2] = { p->ph, p->pw };
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "output_size", os, square_form && p->ph == p->pw ? 1 : 2), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "spatial_scale", p->spatial_scale), LOOM_OK);
    if (strstr(op, "align") != NULL)
        assert_int_equal(loom_attrs_set_int(a, "sampling_ratio", p->sampling_ratio), LOOM_OK);
    if (strcmp(op, "vision.roi_align") == 0)
        assert_int_equal(loom_attrs_set_bool(a, "aligned", p->aligned), LOOM_OK);
    return a;
}

loom_attrs *roi_backward_attrs(const char *op, const roi_params *p, const int64_t *nchw)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "spatial_scale", p->spatial_scale), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "pooled_height", p->ph), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "pooled_width", p->pw), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "batch_size", nchw[0]), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "channels", nchw[1]), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "height", nchw[2]), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "width", nchw[3]), LOOM_OK);
    if (strstr(op, "align") != NULL)
        assert_int_equal(loom_attrs_set_int(a, "sampling_ratio", p->sampling_ratio), LOOM_OK);
    if (strcmp(op, "vision.roi_align_backward") == 0)
        assert_int_equal(loom_attrs_set_bool(a, "aligned", p->aligned), LOOM_OK);
    return a;
}

loom_status roi_run(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *attrs,
                    loom_tensor **out, int32_t n_out, const char *backend)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = backend;
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    return loom_run(op, in, n_in, attrs, out, n_out, &opt);
}

void roi_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                      const char *what)
{
    tu_assert_same_shape(got, want, what);
    for (int64_t i = 0; i < loom_numel(want); i++) {
        double g = roi_get(got, i), w = roi_get(want, i);
        if (isnan(w) && isnan(g))
            continue;
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s: element %lld is %.9g, expected %.9g (rtol %g, atol %g)", what, (long long)i, g, w,
                     rtol, atol);
    }
}

void roi_assert_fails(loom_status st, loom_status want, const char *needle)
{
    if (st != want)
        fail_msg("status %d (%s), expected %d; message: %s", (int)st, loom_status_name(st), (int)want,
                 loom_last_error());
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", loom_last_error(), needle);
}
