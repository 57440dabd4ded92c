/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mmt_methods.c - the methods of rl.memmap_tensor and the module that
** registers them with the class:
**   rl.mmt_as_tensor  the tensor's bytes now (all of it, or rows of dim 0)
**   rl.mmt_write      rows of dim 0 replaced in place (t[offset:offset+n] = value)
**   rl.mmt_flush      msync: the file holds every write
**   rl.mmt_describe   filename, dtype, shape and mode as JSON
** Outputs cross the op ABI in tensors the core owns, so as_tensor copies
** the mapped bytes out; the mapping itself is what other mappings of the
** file (another object, tensordict in Python) share.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mmt_internal.h"

static const loom_arg_def value_input[] = {
    { .name = "value", .dtypes = 0, .ndim = -1,
      .doc = "rows to write: the tensor's dtype and trailing dims (a scalar tensor: the whole of a scalar)" },
};
static const loom_arg_def value_output[] = {
    { .name = "value", .dtypes = 0, .ndim = -1, .doc = "the tensor (or its rows), as the mapping holds it now" },
};
static const loom_arg_def json_output[] = {
    { .name = "json", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1,
      .doc = "u8 UTF-8: {\"filename\", \"dtype\" (torch's name), \"shape\", \"mode\"}" },
};

PK_ATTR_TABLE(rl_mmt_rows, RL_MMT_ROWS_ATTRS);
PK_ATTR_TABLE(rl_mmt_write, RL_MMT_WRITE_ATTRS);

#define METHOD .object_class = RL_MMT_CLASS

PK_SCHEMA(rl_mmt_as_tensor_schema, "rl.mmt_as_tensor", 1,
          "the MemoryMappedTensor as a tensor (t or t[start:stop]): its mapped bytes copied out",
          PK_OUTPUTS(value_output), PK_ATTRS(rl_mmt_rows_attrs), METHOD);
PK_SCHEMA(rl_mmt_write_schema, "rl.mmt_write", 1,
          "t[offset:offset + len(value)] = value in place: a shared mapping's write reaches the file and every "
          "other mapping of it",
          PK_INPUTS(value_input), PK_ATTRS(rl_mmt_write_attrs), METHOD);
PK_SCHEMA(rl_mmt_flush_schema, "rl.mmt_flush", 1, "msync: the file holds every write when it returns", METHOD);
PK_SCHEMA(rl_mmt_describe_schema, "rl.mmt_describe", 1, "the tensor's filename, dtype, shape and mode as JSON",
          PK_OUTPUTS(json_output), METHOD);

PK_OPS_DEFINE(rl_mmt_ops, RL_MMT_OPS);

static rl_mmt_object *object_of(const loom_call *call)
{
    rl_mmt_object *o = call->object;
    if (o == NULL || o->struct_size < sizeof *o || o->magic != RL_MMT_OBJECT_MAGIC) {
        pk_host->fail(LOOM_EINVAL, "not an rl.memmap_tensor object made by this pack");
        return NULL;
    }
    return o;
}

/* Bytes of one row along dim 0 (the whole tensor for a scalar). */
static size_t row_bytes(const rl_leaf *l)
{
    size_t n = pk_host->dtype_size(l->dtype);
    for (int32_t d = 1; d < l->ndim; d++)
        n *= (size_t)l->shape[d];
    return n;
}

static loom_status as_tensor_run(loom_call *call)
{
    const rl_mmt_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    const rl_leaf *l = &o->leaf;
    const loom_attr_value *rows = &call->attrs[PK_ATTR(rl_mmt_rows, rows)];
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, l->shape, sizeof shape);
    int64_t start = 0;
    if (rows->is_set) {
        if (l->ndim == 0 || rows->count != 2 || rows->u.ints[0] > rows->u.ints[1] || rows->u.ints[1] > l->shape[0])
            return pk_host->fail(LOOM_EINVAL, "rows: [start, stop] with 0 <= start <= stop <= %lld (dim 0)%s",
                                 l->ndim > 0 ? (long long)l->shape[0] : 0LL, l->ndim == 0 ? "; a scalar has no rows" : "");
        start = rows->u.ints[0];
        shape[0] = rows->u.ints[1] - start;
    }
    loom_tensor *out = NULL;
    loom_status st = pk_host->alloc_output(call, 0, l->dtype, l->ndim, shape, &out);
    const size_t rb = row_bytes(l);
    const size_t n = l->ndim > 0 ? (size_t)shape[0] * rb : rb;
    if (st == LOOM_OK && n > 0)
        memcpy((uint8_t *)out->data + out->byte_offset, (const uint8_t *)rl_leaf_data(l) + (size_t)start * rb, n);
    return st;
}

static loom_status write_run(loom_call *call)
{
    const rl_mmt_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    const rl_leaf *l = &o->leaf;
    const loom_tensor *v = call->inputs[0];
    const int64_t offset = call->attrs[PK_ATTR(rl_mmt_write, offset)].u.i;
    if (o->mode == RL_MAP_READ_ONLY)
        return pk_host->fail(LOOM_EINVAL, "%s: opened read_only; writes are refused", o->filename);
    const loom_dtype dt = loom_dtype_from_dl(v->dtype);
    if (dt != l->dtype)
        return pk_host->fail(LOOM_EINVAL, "value: %s, but the tensor is %s", pk_host->dtype_name(dt),
                             pk_host->dtype_name(l->dtype));
    int ok = v->ndim == l->ndim;
    for (int32_t d = 1; ok && d < l->ndim; d++)
        ok = v->shape[d] == l->shape[d];
    if (ok && l->ndim > 0)
        ok = offset <= l->shape[0] && v->shape[0] <= l->shape[0] - offset;
    if (ok && l->ndim == 0)
        ok = offset == 0;
    if (!ok) {
        char want[160];
        int k = snprintf(want, sizeof want, "[n");
        for (int32_t d = 1; d < l->ndim && k < (int)sizeof want - 24; d++)
            k += snprintf(want + k, sizeof want - (size_t)k, ", %lld", (long long)l->shape[d]);
        snprintf(want + k, sizeof want - (size_t)k, "]");
        return pk_host->fail(LOOM_EINVAL, "value: %d dims; rows %s with offset + n <= %lld are written (offset %lld)",
                             (int)v->ndim, l->ndim == 0 ? "[] (a scalar)" : want,
                             l->ndim > 0 ? (long long)l->shape[0] : 0LL, (long long)offset);
    }
    const size_t rb = row_bytes(l);
    const size_t n = l->ndim > 0 ? (size_t)v->shape[0] * rb : rb;
    if (n > 0)
        memmove((uint8_t *)rl_leaf_data(l) + (size_t)offset * rb, (const uint8_t *)v->data + v->byte_offset, n);
    return LOOM_OK;
}

static loom_status flush_run(loom_call *call)
{
    const rl_mmt_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    char msg[512];
    loom_status st = rl_mmt_flush(o->leaf.buf, o->mode, o->filename, msg, sizeof msg);
    return st == LOOM_OK ? st : pk_host->fail(st, "%s", msg);
}

static loom_status describe_run(loom_call *call)
{
    const rl_mmt_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    cJSON *j = cJSON_CreateObject();
    cJSON *shape = cJSON_CreateArray();
    for (int32_t d = 0; shape != NULL && d < o->leaf.ndim; d++)
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)o->leaf.shape[d]));
    if (j != NULL) {
        cJSON_AddStringToObject(j, "filename", o->filename);
        cJSON_AddStringToObject(j, "dtype", rl_dtype_torch_name(o->leaf.dtype));
        cJSON_AddItemToObject(j, "shape", shape);
        cJSON_AddStringToObject(j, "mode", rl_map_mode_name(o->mode));
    } else {
        cJSON_Delete(shape);
    }
    char *text = j != NULL ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (text == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    int64_t n = (int64_t)strlen(text);
    loom_tensor *out = NULL;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, &n, &out);
    if (st == LOOM_OK && n > 0)
        memcpy((uint8_t *)out->data + out->byte_offset, text, (size_t)n);
    free(text);
    return st;
}

static const loom_object_class *const mmt_classes[] = { &rl_mmt_class };

static const loom_kernel_desc mmt_cpu_kernels[] = {
    PK_KERNEL_CPU(rl_mmt_as_tensor_schema, "cpu:mmap", 0, as_tensor_run),
    PK_KERNEL_CPU(rl_mmt_write_schema, "cpu:mmap", 0, write_run),
    PK_KERNEL_CPU(rl_mmt_flush_schema, "cpu:mmap", 0, flush_run),
    PK_KERNEL_CPU(rl_mmt_describe_schema, "cpu:mmap", 0, describe_run),
};

const pk_module rl_memmap_tensor_cpu = {
    .name = "memmap_tensor",
    .ops = rl_mmt_ops, .n_ops = PK_COUNT(rl_mmt_ops),
    .classes = mmt_classes, .n_classes = PK_COUNT(mmt_classes),
    .kernels = mmt_cpu_kernels, .n_kernels = PK_COUNT(mmt_cpu_kernels),
};
