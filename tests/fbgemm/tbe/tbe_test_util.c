/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_test_util.c - see tbe_test_util.h.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "half.h"
#include "tbe_test_util.h"

const int64_t tt_ftm[4] = { 0, 1, 0, 2 };

void tt_data_path(char *buf, size_t size, const char *name)
{
    char rel[512];
    snprintf(rel, sizeof rel, "fbgemm/tbe/%s", name);
    snprintf(buf, size, "%s", tu_data_path(rel));
}

loom_tensor *tt_npy(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "fbgemm/tbe/%s", name);
    return tu_npy(path);
}

int tt_npy_exists(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "fbgemm/tbe/%s", name);
    return tu_npy_exists(path);
}

loom_object *tt_create(const char *path, const loom_attrs *a)
{
    loom_object *o = NULL;
    if (loom_object_create(&o, "fbgemm.tbe", a, path) != LOOM_OK)
        return NULL;
    return o;
}

loom_object *tt_create_golden(const char *set, const loom_attrs *a)
{
    char name[128], path[512];
    snprintf(name, sizeof name, "tables_%s.safetensors", set);
    tt_data_path(path, sizeof path, name);
    loom_object *o = tt_create(path, a);
    if (o == NULL)
        fail_msg("creating fbgemm.tbe over %s: %s", path, loom_last_error());
    return o;
}

loom_status tt_run(const char *op, loom_object *obj, const loom_tensor *ind, const loom_tensor *off,
                 const loom_tensor *psw, const loom_tensor *bsz, const loom_attrs *a, loom_tensor **out)
{
    const loom_tensor *in[4] = { ind, off, psw, bsz };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    if (out != NULL)
        *out = NULL;
    return loom_run(op, in, 4, a, out, out != NULL ? 1 : 0, &opt);
}

double tt_get(const loom_tensor *t, int64_t i)
{
    const void *d = loom_data(t);
    switch (loom_tensor_dtype_of(t)) {
    case LOOM_DTYPE_F32:  return ((const float *)d)[i];
    case LOOM_DTYPE_F64:  return ((const double *)d)[i];
    case LOOM_DTYPE_F16:  return pk_f16_to_f32(((const uint16_t *)d)[i]);
    case LOOM_DTYPE_BF16: return pk_bf16_to_f32(((const uint16_t *)d)[i]);
    default:              fail_msg("tt_get: unsupported dtype"); return 0;
    }
}

void tt_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol, const char *what)
{
    assert_non_null(got);
    assert_non_null(want);
    if (got->ndim != want->ndim)
        fail_msg("%s: rank %d, expected %d", what, got->ndim, want->ndim);
    for (int32_t d = 0; d < got->ndim; d++)
        if (got->shape[d] != want->shape[d])
            fail_msg("%s: dim %d is %lld, expected %lld", what, d, (long long)got->shape[d],
                     (long long)want->shape[d]);
    int64_t n = loom_numel(got), worst = -1;
    double worst_excess = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = tt_get(got, i), w = tt_get(want, i);
        double excess = fabs(g - w) - (atol + rtol * fabs(w));
        if (isnan(g) != isnan(w) || excess > worst_excess) {
            worst_excess = isnan(g) != isnan(w) ? INFINITY : excess;
            worst = i;
        }
    }
    if (worst >= 0)
        fail_msg("%s: element %lld is %.9g, expected %.9g (rtol %g, atol %g)", what, (long long)worst,
                 tt_get(got, worst), tt_get(want, worst), rtol, atol);
}

void tt_assert_same_bytes(const loom_tensor *a, const loom_tensor *b, const char *what)
{
    assert_non_null(a);
    assert_non_null(b);
    if (a->ndim != b->ndim || memcmp(&a->dtype, &b->dtype, sizeof a->dtype) != 0)
        fail_msg("%s: dtype or rank differ", what);
    for (int32_t d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            fail_msg("%s: dim %d is %lld vs %lld", what, d, (long long)a->shape[d], (long long)b->shape[d]);
    size_t n = loom_tensor_nbytes(a);
    const unsigned char *x = loom_data(a), *y = loom_data(b);
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            fail_msg("%s: byte %zu is %u, expected %u", what, i, x[i], y[i]);
}

void tt_assert_fails(loom_status got, loom_status want, const char *needle)
{
    if (got != want)
        fail_msg("status %s, expected %s (%s)", loom_status_name(got), loom_status_name(want), loom_last_error());
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not mention '%s'", loom_last_error(), needle);
}

void tt_set_str(loom_attrs *a, const char *name, const char *v)
{
    assert_int_equal(loom_attrs_set_string(a, name, v), LOOM_OK);
}

void tt_set_ints(loom_attrs *a, const char *name, const int64_t *v, int64_t n)
{
    assert_int_equal(loom_attrs_set_ints(a, name, v, n), LOOM_OK);
}

void tt_set_int(loom_attrs *a, const char *name, int64_t v)
{
    assert_int_equal(loom_attrs_set_int(a, name, v), LOOM_OK);
}

void tt_set_float(loom_attrs *a, const char *name, double v)
{
    assert_int_equal(loom_attrs_set_float(a, name, v), LOOM_OK);
}

loom_attrs *tt_golden_attrs(const char *wt)
{
    loom_attrs *a;
    char tys[32];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    snprintf(tys, sizeof tys, "%s,%s,%s", wt, wt, wt);
    tt_set_str(a, "weights_tys", tys);
    tt_set_ints(a, "feature_table_map", tt_ftm, 4);
    return a;
}
