/* SPDX-License-Identifier: BSD-3-Clause */
/*
** checks.c - argument checks and geometry shared by every backend's kernels.
** core.matmul: input [.., M, K] @ other [.., K, N] -> output [batch.., M, N],
** where the batch dims broadcast NumPy-style (torch.matmul for ranks >= 2).
** core.add: both inputs of one dtype; alpha must be integral for integers.
*/
#include <math.h>

#include "kernels.h"

loom_status core_mm_geometry(const loom_tensor *a, const loom_tensor *b, const char *aname,
                           const char *bname, core_mm_geom *g)
{
    char ba[160], bb[160];
    if (a->ndim < 2 || b->ndim < 2)
        return pk_host->fail(LOOM_EINVAL, "'%s' and '%s' must have rank >= 2, got %s and %s",
                               aname, bname, core_describe(a, ba, sizeof ba), core_describe(b, bb, sizeof bb));
    g->m = a->shape[a->ndim - 2];
    g->k = a->shape[a->ndim - 1];
    g->n = b->shape[b->ndim - 1];
    if (b->shape[b->ndim - 2] != g->k)
        return pk_host->fail(LOOM_EINVAL,
                               "K mismatch: '%s' %s has K=%lld (last dim) but '%s' %s has K=%lld (dim -2)",
                               aname, core_describe(a, ba, sizeof ba), (long long)g->k,
                               bname, core_describe(b, bb, sizeof bb), (long long)b->shape[b->ndim - 2]);
    int32_t na = a->ndim - 2, nb = b->ndim - 2, n = na > nb ? na : nb;
    g->batch_ndim = n;
    g->batch = 1;
    for (int32_t d = 0; d < n; d++) {
        int32_t da = d - (n - na), db = d - (n - nb);
        int64_t sa = da >= 0 ? a->shape[da] : 1, sb = db >= 0 ? b->shape[db] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            return pk_host->fail(LOOM_EINVAL,
                                   "batch dims of '%s' %s and '%s' %s do not broadcast (%lld vs %lld)",
                                   aname, core_describe(a, ba, sizeof ba), bname,
                                   core_describe(b, bb, sizeof bb), (long long)sa, (long long)sb);
        g->batch_shape[d] = sa == 1 ? sb : sa;
        g->a_bstride[d] = sa == 1 ? 0 : core_stride(a, da);
        g->b_bstride[d] = sb == 1 ? 0 : core_stride(b, db);
        g->batch *= g->batch_shape[d];
        g->out_shape[d] = g->batch_shape[d];
    }
    g->a_rs = core_stride(a, a->ndim - 2);
    g->a_cs = core_stride(a, a->ndim - 1);
    g->b_rs = core_stride(b, b->ndim - 2);
    g->b_cs = core_stride(b, b->ndim - 1);
    g->out_ndim = n + 2;
    g->out_shape[n] = g->m;
    g->out_shape[n + 1] = g->n;
    return LOOM_OK;
}

void core_mm_batch_offsets(const core_mm_geom *g, int64_t bi, int64_t *aoff, int64_t *boff)
{
    *aoff = 0;
    *boff = 0;
    for (int32_t d = g->batch_ndim - 1; d >= 0; d--) {
        int64_t idx = bi % g->batch_shape[d];
        bi /= g->batch_shape[d];
        *aoff += idx * g->a_bstride[d];
        *boff += idx * g->b_bstride[d];
    }
}

loom_status core_matmul_check(const loom_call *call, core_mm_geom *g)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    loom_dtype da = loom_tensor_dtype_of(a), db = loom_tensor_dtype_of(b);
    if (da != db)
        return pk_host->fail(LOOM_EINVAL, "'a' is %s but 'b' is %s: both must have the same dtype",
                               pk_host->dtype_name(da), pk_host->dtype_name(db));
    return core_mm_geometry(a, b, "a", "b", g);
}

loom_status core_matmul_prepare(loom_call *call, loom_dtype out_dtype, core_mm_geom *g, loom_tensor **out)
{
    loom_tensor *t;
    loom_status st = core_matmul_check(call, g);
    *out = NULL;
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, out_dtype, g->out_ndim, g->out_shape, &t);
    if (st == LOOM_OK && loom_numel(t) > 0)
        *out = t;
    return st;
}

void core_matmul_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    const loom_tensor *c = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (a == NULL || b == NULL || c == NULL || a->ndim < 2)
        return;
    double es = (double)pk_host->dtype_size(loom_tensor_dtype_of(c));
    *flops = 2.0 * (double)loom_numel(c) * (double)a->shape[a->ndim - 1];
    *bytes = es * ((double)loom_numel(a) + (double)loom_numel(b) + (double)loom_numel(c));
}

/* Shared by the CPU and CUDA kernels: dtypes equal, alpha fits the dtype. */
loom_status core_add_check(const loom_call *call, double *alpha, int64_t *alpha_i)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    loom_dtype da = loom_tensor_dtype_of(a), db = loom_tensor_dtype_of(b);
    if (da != db)
        return pk_host->fail(LOOM_EINVAL,
                               "'input' and 'other' must have the same dtype: got %s and %s "
                               "(cast one of them with core.cast first)",
                               pk_host->dtype_name(da), pk_host->dtype_name(db));
    const core_dtype_row *row = core_dtype(da);
    if (row == NULL)
        return pk_host->fail(LOOM_EINVAL, "'input' has an unknown dtype");
    *alpha = call->attrs[PK_ATTR(core_add, alpha)].u.f;
    if (row->kind == CORE_KIND_INT) {
        if (!(*alpha == trunc(*alpha) && fabs(*alpha) < 9.2e18))
            return pk_host->fail(LOOM_EINVAL, "'alpha' must be an integer for %s inputs, got %g",
                                   row->name, *alpha);
        if (da == LOOM_DTYPE_BOOL && *alpha != 0 && *alpha != 1)
            return pk_host->fail(LOOM_EINVAL, "'alpha' must be 0 or 1 for bool inputs, got %g", *alpha);
        *alpha_i = (int64_t)*alpha;
    } else {
        *alpha_i = 0;
    }
    return LOOM_OK;
}
