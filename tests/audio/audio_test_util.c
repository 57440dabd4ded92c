/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_test_util.c - see audio_test_util.h.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "audio_test_util.h"

static loom_attrs *parse(const char *op, const char *attrs)
{
    loom_attrs *a = NULL;
    char buf[4096];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (attrs != NULL && strcmp(attrs, "-") != 0) {
        snprintf(buf, sizeof buf, "%s", attrs);
        char *save = NULL;     /* strtok_r: the threads test parses from several threads */
        for (char *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(kv, '=');
            assert_non_null(eq);
            *eq = 0;
            if (loom_attrs_parse(a, op, kv, eq + 1) != LOOM_OK)
                fail_msg("%s: attribute %s=%s: %s", op, kv, eq + 1, loom_last_error());
        }
    }
    return a;
}

loom_status at_call(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                    const char *backend, loom_tensor **out)
{
    loom_attrs *a = parse(op, attrs);
    loom_status st = tu_call(op, in, n_in, a, backend, out);
    loom_attrs_free(a);
    return st;
}

loom_status at_run(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs, loom_tensor **out,
                   int32_t n_out)
{
    loom_attrs *a = parse(op, attrs);
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    loom_status st = loom_run(op, in, n_in, a, out, n_out, NULL);
    loom_attrs_free(a);
    return st;
}

static int is_complex(loom_dtype d) { return d == LOOM_DTYPE_C64 || d == LOOM_DTYPE_C128; }

/* component i of a compact f32/f64/c64/c128 tensor */
static double component(const loom_tensor *t, int64_t i)
{
    loom_dtype d = loom_tensor_dtype_of(t);
    if (d == LOOM_DTYPE_F64 || d == LOOM_DTYPE_C128)
        return ((const double *)loom_data(t))[i];
    return ((const float *)loom_data(t))[i];
}

double at_rel_error(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    assert_non_null(got);
    if (loom_tensor_dtype_of(got) != loom_tensor_dtype_of(want))
        fail_msg("%s: dtype %s, want %s", what, loom_dtype_name(loom_tensor_dtype_of(got)),
                 loom_dtype_name(loom_tensor_dtype_of(want)));
    tu_assert_same_shape(got, want, what);
    const int64_t n = loom_numel(want) * (is_complex(loom_tensor_dtype_of(want)) ? 2 : 1);
    double err = 0, peak = 0;
    for (int64_t i = 0; i < n; i++) {
        const double g = component(got, i), w = component(want, i);
        if (isnan(g) != isnan(w))
            fail_msg("%s: component %lld is %g, want %g", what, (long long)i, g, w);
        if (!isnan(w)) {
            err = fmax(err, fabs(g - w));
            peak = fmax(peak, fabs(w));
        }
    }
    return peak > 0 ? err / peak : err;
}

loom_tensor *at_signal(loom_dtype dtype, int32_t ndim, const int64_t *shape, unsigned seed)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, dtype, ndim, shape, NULL), LOOM_OK);
    uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
    const int cplx = dtype == LOOM_DTYPE_C64 || dtype == LOOM_DTYPE_C128;   /* both parts drawn */
    for (int64_t i = 0; i < loom_numel(t) * (cplx ? 2 : 1); i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        const double v = (double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        if (dtype == LOOM_DTYPE_F64 || dtype == LOOM_DTYPE_C128)
            ((double *)loom_data(t))[i] = v;
        else
            ((float *)loom_data(t))[i] = (float)v;
    }
    return t;
}

void at_assert_refused(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                       loom_status status, const char *needle)
{
    loom_tensor *out;
    loom_status st = at_call(op, in, n_in, attrs, NULL, &out);
    if (st != status)
        fail_msg("%s (%s): status %d, want %d (%s)", op, attrs ? attrs : "-", st, status,
                 st != LOOM_OK ? loom_last_error() : "no error");
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s (%s): message '%s' does not name '%s'", op, attrs ? attrs : "-", loom_last_error(), needle);
    assert_null(out);
}

int at_cuda_device(loom_dl_device *out)
{
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            *out = di.device;
            return 1;
        }
    }
    return 0;
}
