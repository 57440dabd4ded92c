/* SPDX-License-Identifier: BSD-3-Clause */
/*
** strided.c - NumPy broadcasting over strided tensors.
**
** Strides are in elements (DLPack); NULL strides mean compact row-major.
** A broadcast dimension gets stride 0, so every operand is addressed with
** the output's index and its own stride vector. Rows are the innermost
** dimension: kernels process one row per inner loop.
*/
#include <stdio.h>

#include "core_pack.h"

int64_t core_stride(const loom_tensor *t, int32_t d)
{
    if (t->strides != NULL)
        return t->strides[d];
    int64_t s = 1;
    for (int32_t i = d + 1; i < t->ndim; i++)
        s *= t->shape[i];
    return s;
}

loom_status core_broadcast_strides(const loom_tensor *in, int32_t out_ndim, const int64_t *out_shape,
                                 const char *name, int64_t *strides)
{
    if (in->ndim > out_ndim)
        return pk_host->fail(LOOM_EINVAL, "'%s' has rank %d, more than the output rank %d",
                               name, (int)in->ndim, (int)out_ndim);
    int32_t lead = out_ndim - in->ndim;
    for (int32_t d = 0; d < out_ndim; d++) {
        if (d < lead) {
            strides[d] = 0;
            continue;
        }
        int64_t dim = in->shape[d - lead];
        if (dim == out_shape[d])
            strides[d] = dim == 1 ? 0 : core_stride(in, d - lead);
        else if (dim == 1)
            strides[d] = 0;
        else
            return pk_host->fail(LOOM_EINVAL, "'%s' dim %d has size %lld, expected %lld or 1",
                                   name, (int)(d - lead), (long long)dim, (long long)out_shape[d]);
    }
    return LOOM_OK;
}

loom_status core_broadcast_shape(const loom_tensor *a, const loom_tensor *b, int32_t *ndim,
                               int64_t *shape)
{
    int32_t n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int32_t d = 0; d < n; d++) {
        int32_t da = d - (n - a->ndim), db = d - (n - b->ndim);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1) {
            char ba[128], bb[128];
            return pk_host->fail(LOOM_EINVAL,
                                   "shapes of 'input' %s and 'other' %s do not broadcast (dim %d: %lld vs %lld)",
                                   core_describe(a, ba, sizeof ba), core_describe(b, bb, sizeof bb),
                                   (int)d, (long long)sa, (long long)sb);
        }
        shape[d] = sa == 1 ? sb : sa;
    }
    *ndim = n;
    return LOOM_OK;
}

int64_t core_nd_row_len(const core_nd_iter *it) { return it->shape[it->ndim - 1]; }

int64_t core_nd_rows(const core_nd_iter *it)
{
    int64_t n = 1;
    for (int32_t d = 0; d < it->ndim - 1; d++)
        n *= it->shape[d];
    return n;
}

void core_nd_row_offsets(const core_nd_iter *it, int64_t row, int64_t *offs)
{
    for (int32_t o = 0; o < it->n_ops; o++)
        offs[o] = 0;
    for (int32_t d = it->ndim - 2; d >= 0; d--) {
        int64_t idx = row % it->shape[d];
        row /= it->shape[d];
        for (int32_t o = 0; o < it->n_ops; o++)
            offs[o] += idx * it->strides[o][d];
    }
}

loom_status core_iter_setup(core_nd_iter *it, int32_t ndim, const int64_t *shape,
                          const loom_tensor *const *ops, const char *const *names, int32_t n_ops)
{
    it->n_ops = n_ops;
    if (ndim == 0) {
        it->ndim = 1;
        it->shape[0] = 1;
        for (int32_t o = 0; o < n_ops; o++)
            it->strides[o][0] = 0;
        return LOOM_OK;
    }
    it->ndim = ndim;
    for (int32_t d = 0; d < ndim; d++)
        it->shape[d] = shape[d];
    for (int32_t o = 0; o < n_ops; o++) {
        loom_status st = core_broadcast_strides(ops[o], ndim, shape, names[o], it->strides[o]);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}
