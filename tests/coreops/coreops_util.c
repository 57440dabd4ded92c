/*
** coreops_util.c - see coreops_util.h.
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

#include "coreops_util.h"

/* The op whose presence proves the packs under test were loaded. Suites of
** other packs compile this file with their own COREOPS_PROBE_OP. */
#ifndef COREOPS_PROBE_OP
#define COREOPS_PROBE_OP "core.matmul"
#endif

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : dflt;
}

static void data_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s.npy", env_or("LOOM_COREOPS_DATA", COREOPS_DATA_DIR), name);
}

int cu_setup(void **state)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    (void)state;
    o.plugin_path = env_or("LOOM_COREOPS_PACK_DIR", COREOPS_PACK_DIR);
    o.no_default_dirs = 1;
    if (loom_init(&o) != LOOM_OK) {
        fprintf(stderr, "loom_init: %s\n", loom_last_error());
        return -1;
    }
    if (loom_op_find(COREOPS_PROBE_OP) == NULL) {
        fprintf(stderr, "pack of " COREOPS_PROBE_OP " not loaded from %s: %s\n", o.plugin_path, loom_last_error());
        return -1;
    }
    return 0;
}

int cu_teardown(void **state)
{
    (void)state;
    loom_shutdown();
    return 0;
}

int cu_npy_exists(const char *name)
{
    char path[4096];
    data_path(path, sizeof path, name);
    return access(path, R_OK) == 0;
}

loom_tensor *cu_npy(const char *name)
{
    char path[4096];
    loom_tensor *t = NULL;
    data_path(path, sizeof path, name);
    if (loom_npy_read(&t, path) != LOOM_OK)
        fail_msg("reading %s: %s", path, loom_last_error());
    return t;
}

loom_status cu_call(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *attrs,
                  const char *backend, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = backend;
    *out = NULL;
    return loom_run(op, in, n_in, attrs, out, 1, &opt);
}

loom_tensor *cu_cast(const loom_tensor *t, loom_dtype dtype)
{
    loom_attrs *a;
    loom_tensor *out;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "dtype", loom_dtype_name(dtype)), LOOM_OK);
    if (cu_call("core.cast", (const loom_tensor *[]){ t }, 1, a, "cpu", &out) != LOOM_OK)
        fail_msg("core.cast to %s: %s", loom_dtype_name(dtype), loom_last_error());
    loom_attrs_free(a);
    return out;
}

void cu_assert_same_shape(const loom_tensor *got, const loom_tensor *want, const char *what)
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

void cu_assert_identical(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    cu_assert_same_shape(got, want, what);
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

double cu_get(const loom_tensor *t, int64_t i)
{
    if (loom_tensor_dtype_of(t) == LOOM_DTYPE_F64)
        return ((const double *)loom_data(t))[i];
    return ((const float *)loom_data(t))[i];
}

void cu_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                     const char *what)
{
    cu_assert_same_shape(got, want, what);
    for (int64_t i = 0; i < loom_numel(want); i++) {
        double g = cu_get(got, i), w = cu_get(want, i);
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s: element %lld is %.9g, expected %.9g (rtol %g, atol %g)", what, (long long)i,
                     g, w, rtol, atol);
    }
}
