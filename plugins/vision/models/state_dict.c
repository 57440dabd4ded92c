/* SPDX-License-Identifier: BSD-3-Clause */
/*
** state_dict.c - the key-by-key reading of a torchvision state_dict, and
** the op and weight-entry lookups of the classes' create (state_dict.h).
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_dict.h"
#include "weights.h"

loom_status sd_init(sd_loader *L, const char *cls, const loom_safetensors *st)
{
    memset(L, 0, sizeof *L);
    L->cls = cls;
    L->st = st;
    L->cap = pk_host->safetensors_count(st) + 64;
    if ((L->names = calloc((size_t)L->cap, sizeof *L->names)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    return LOOM_OK;
}

void sd_free(sd_loader *L)
{
    free(L->names);
    L->names = NULL;
}

int sd_has(const sd_loader *L, const char *name)
{
    for (int64_t i = 0; i < pk_host->safetensors_count(L->st); i++)
        if (strcmp(pk_host->safetensors_name(L->st, i), name) == 0)
            return 1;
    return 0;
}

static void describe_want(loom_dtype dtype, int32_t ndim, const int64_t *shape, char *buf, size_t size)
{
    int at = snprintf(buf, size, "%s[", pk_host->dtype_name(dtype));
    for (int32_t d = 0; d < ndim && at < (int)size - 24; d++)
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", d ? "," : "", (long long)shape[d]);
    snprintf(buf + at, size - (size_t)at, "]");
}

static loom_status expect(sd_loader *L, const loom_tensor **out, loom_dtype dtype, int32_t ndim,
                          const int64_t *shape, int is_param, const char *fmt, va_list ap)
{
    if (L->n >= L->cap)
        return pk_host->fail(LOOM_EINVAL, "%s: more keys expected than the file holds", L->cls);
    char *name = L->names[L->n++];
    vsnprintf(name, SD_NAME_MAX, fmt, ap);
    char want[128], got[160];
    describe_want(dtype, ndim, shape, want, sizeof want);
    if (!sd_has(L, name))
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key '%s' (expected %s, torchvision's "
                             "state_dict names)", L->cls, name, want);
    const loom_tensor *t;
    loom_status s = pk_host->safetensors_get(L->st, name, &t);
    if (s != LOOM_OK)
        return s;
    int ok = loom_tensor_dtype_of(t) == dtype && t->ndim == ndim;
    for (int32_t d = 0; ok && d < ndim; d++)
        ok = t->shape[d] == shape[d];
    if (!ok)
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is %s in the weights file, expected %s", L->cls, name,
                             pk_describe(pk_host, t, got, sizeof got), want);
    if (!loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is not contiguous", L->cls, name);
    if (is_param)
        L->num_params += loom_numel(t);
    if (out != NULL)
        *out = t;
    return LOOM_OK;
}

loom_status sd_param(sd_loader *L, const loom_tensor **out, int32_t ndim, const int64_t *shape, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_status s = expect(L, out, LOOM_DTYPE_F32, ndim, shape, 1, fmt, ap);
    va_end(ap);
    return s;
}

loom_status sd_buffer(sd_loader *L, const loom_tensor **out, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    loom_status s = expect(L, out, dtype, ndim, shape, 0, fmt, ap);
    va_end(ap);
    return s;
}

int64_t sd_dim(const sd_loader *L, const char *name, int32_t ndim, int32_t dim, int64_t fallback)
{
    const loom_tensor *t;
    if (!sd_has(L, name) || pk_host->safetensors_get(L->st, name, &t) != LOOM_OK || t->ndim != ndim
        || loom_tensor_dtype_of(t) != LOOM_DTYPE_F32 || t->shape[dim] < 1)
        return fallback;
    return t->shape[dim];
}

loom_status sd_no_unexpected(const sd_loader *L)
{
    for (int64_t i = 0; i < pk_host->safetensors_count(L->st); i++) {
        const char *name = pk_host->safetensors_name(L->st, i);
        int known = 0;
        for (int64_t k = 0; k < L->n && !known; k++)
            known = strcmp(L->names[k], name) == 0;
        if (known)
            continue;
        const loom_tensor *t;
        char got[160] = "?";
        if (pk_host->safetensors_get(L->st, name, &t) == LOOM_OK)
            pk_describe(pk_host, t, got, sizeof got);
        return pk_host->fail(LOOM_EINVAL, "%s: unexpected key '%s' (%s) in the weights file: %s has no such "
                             "tensor", L->cls, name, got, L->cls);
    }
    return LOOM_OK;
}

loom_status sd_find_op(const char *cls, const char *name, const loom_op **out)
{
    if ((*out = pk_host->op_find(name)) == NULL)
        return pk_host->fail(LOOM_ENOENT, "%s needs op %s", cls, name);
    return LOOM_OK;
}

loom_status sd_weight_entry(const loom_object_args *args, int64_t classes, int64_t num_params,
                            const struct model_weights_entry **out)
{
    *out = NULL;
    const loom_attr_value *wa = args->n_attrs > 0 ? &args->attrs[0] : NULL;
    if (wa == NULL || !wa->is_set || wa->u.s == NULL || wa->u.s[0] == '\0')
        return LOOM_OK;
    if ((*out = model_weights_find(args->class_name, wa->u.s)) == NULL)
        return LOOM_EINVAL;
    return model_weights_check(*out, classes, num_params, 1, 1);
}
