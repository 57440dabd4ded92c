/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tu_ops.c - see tu_ops.h.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"

/* The golden file <name>.npy under the data root. */
static const char *npy_path(const char *name)
{
    char rel[1024];
    snprintf(rel, sizeof rel, "%s.npy", name);
    return tu_data_path(rel);
}

int tu_setup(void **state)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    (void)state;
    o.plugin_path = tu_plugin_path();
    o.no_default_dirs = 1;
    if (loom_init(&o) != LOOM_OK) {
        fprintf(stderr, "loom_init: %s\n", loom_last_error());
        return -1;
    }
    /* a refused pack would leave its ops out and the tests fail far from the cause */
    int loaded = 0;
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        if (loom_scan_at(i, &e) != LOOM_OK)
            continue;
        if (e.result == LOOM_SCAN_REFUSED) {
            fprintf(stderr, "pack %s refused: %s\n", e.path, e.reason);
            loom_shutdown();
            return -1;
        }
        loaded += e.result == LOOM_SCAN_LOADED || e.result == LOOM_SCAN_NO_DEVICE;
    }
    if (loaded == 0) {
        fprintf(stderr, "no pack loaded from %s\n", o.plugin_path);
        loom_shutdown();
        return -1;
    }
    return 0;
}

int tu_teardown(void **state)
{
    (void)state;
    loom_shutdown();
    return 0;
}

int tu_npy_exists(const char *name)
{
    return access(npy_path(name), R_OK) == 0;
}

loom_tensor *tu_npy(const char *name)
{
    const char *path = npy_path(name);
    loom_tensor *t = NULL;
    if (loom_npy_read(&t, path) != LOOM_OK)
        fail_msg("reading %s: %s", path, loom_last_error());
    return t;
}

loom_status tu_call(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *attrs,
                    const char *backend, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = backend;
    *out = NULL;
    return loom_run(op, in, n_in, attrs, out, 1, &opt);
}

loom_attrs *tu_attrs_text(const char *op, const char *text)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (text == NULL || strcmp(text, "-") == 0)
        return a;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL)
            fail_msg("%s: attribute '%s' has no '='", op, kv);
        *eq = '\0';
        if (loom_attrs_parse(a, op, kv, eq + 1) != LOOM_OK)
            fail_msg("%s: attribute %s=%s: %s", op, kv, eq + 1, loom_last_error());
    }
    return a;
}

loom_tensor *tu_cast(const loom_tensor *t, loom_dtype dtype)
{
    loom_attrs *a;
    loom_tensor *out;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "dtype", loom_dtype_name(dtype)), LOOM_OK);
    if (tu_call("core.cast", (const loom_tensor *[]){ t }, 1, a, "cpu", &out) != LOOM_OK)
        fail_msg("core.cast to %s: %s", loom_dtype_name(dtype), loom_last_error());
    loom_attrs_free(a);
    return out;
}

void tu_assert_same_shape(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    if (loom_tensor_dtype_of(got) != loom_tensor_dtype_of(want))
        fail_msg("%s: dtype %s, expected %s", what, loom_dtype_name(loom_tensor_dtype_of(got)),
                 loom_dtype_name(loom_tensor_dtype_of(want)));
    if (got->ndim != want->ndim)
        fail_msg("%s: rank %d, expected %d", what, (int)got->ndim, (int)want->ndim);
    for (int32_t d = 0; d < got->ndim; d++)
        if (got->shape[d] != want->shape[d])
            fail_msg("%s: dim %d is %lld, expected %lld", what, (int)d, (long long)got->shape[d],
                     (long long)want->shape[d]);
}

void tu_assert_identical(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    tu_assert_same_shape(got, want, what);
    size_t es = loom_dtype_size(loom_tensor_dtype_of(want));
    int64_t n = loom_numel(want);
    const unsigned char *g = loom_data(got), *w = loom_data(want);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(g + (size_t)i * es, w + (size_t)i * es, es) != 0) {
            char gb[64] = "", wb[64] = "";
            for (size_t b = 0; b < es && b < 16; b++) {     /* most significant byte first */
                snprintf(gb + 2 * b, 3, "%02x", g[(size_t)i * es + es - 1 - b]);
                snprintf(wb + 2 * b, 3, "%02x", w[(size_t)i * es + es - 1 - b]);
            }
            fail_msg("%s: element %lld is 0x%s, expected 0x%s", what, (long long)i, gb, wb);
        }
}

int tu_has_backend(const char *op, const char *backend)
{
    const loom_op *o = loom_op_find(op);
    for (int64_t i = 0; o != NULL && i < loom_op_kernel_count(o); i++) {
        loom_kernel_info ki = LOOM_KERNEL_INFO_INIT;
        if (loom_op_kernel_at(o, i, &ki) == LOOM_OK && strcmp(ki.backend, backend) == 0)
            return 1;
    }
    return 0;
}

int tu_cuda_device(loom_dl_device *out)
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

loom_tensor *tu_random_f32(int32_t ndim, const int64_t *shape, unsigned seed)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, ndim, shape, NULL), LOOM_OK);
    float *p = loom_data(t);
    for (int64_t i = 0; i < loom_numel(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
    }
    return t;
}

double tu_get(const loom_tensor *t, int64_t i)
{
    if (loom_tensor_dtype_of(t) == LOOM_DTYPE_F64)
        return ((const double *)loom_data(t))[i];
    return ((const float *)loom_data(t))[i];
}

void tu_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                     const char *what)
{
    tu_assert_same_shape(got, want, what);
    for (int64_t i = 0; i < loom_numel(want); i++) {
        double g = tu_get(got, i), w = tu_get(want, i);
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s: element %lld is %.9g, expected %.9g (rtol %g, atol %g)", what, (long long)i,
                     g, w, rtol, atol);
    }
}
