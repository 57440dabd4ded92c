/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_plan.c - the front end of the fbgemm.tbe methods, shared by every
** backend: attribute names, checking a call into an fbg_tbe_plan (tbe.h),
** VBE metadata, and fbgemm's bounds_check_indices on host data.
**
** Bounds checks follow fbgemm_gpu's bounds_check_indices_cpu in order and
** effect: the last offset first, then bag by bag (feature-major) the
** offsets, then the bag's indices; index -1 marks a pruned row and is
** never an error (the kernels skip it). WARNING and IGNORE repair what they
** find; the repairs go to a private copy of indices/offsets in call
** scratch, made only when something needs repair, so the caller's tensors
** are never written.
*/
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tbe_internal.h"

static const char *const pooling_names[] = { "sum", "mean", "none" };
static const char *const bounds_names[] = { "fatal", "warning", "ignore", "none" };

static int index_of(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

int fbg_pooling_from_name(const char *s) { return index_of(pooling_names, 3, s); }
int fbg_bounds_from_name(const char *s) { return index_of(bounds_names, 4, s); }
const char *fbg_pooling_name(int p) { return p >= 0 && p < 3 ? pooling_names[p] : "?"; }

int fbg_output_from_name(const char *s)
{
    return strcmp(s, "fp32") == 0 ? FBG_WT_FP32 : strcmp(s, "fp16") == 0 ? FBG_WT_FP16
         : strcmp(s, "bf16") == 0 ? FBG_WT_BF16 : -1;
}

loom_dtype fbg_output_loom_dtype(int wtype)
{
    return wtype == FBG_WT_FP16 ? LOOM_DTYPE_F16 : wtype == FBG_WT_BF16 ? LOOM_DTYPE_BF16 : LOOM_DTYPE_F32;
}

void fbg_plan_store_free(fbg_plan_store *store)
{
    free(store->vbe);
    store->vbe = NULL;
}

/* VBE metadata from bsz[T*R] (host). */
static loom_status build_vbe(const fbg_tbe_state *s, const int64_t *bsz, int64_t R, const char *op,
                           fbg_tbe_plan *p, fbg_plan_store *store)
{
    const int64_t T = p->n_features;
    int64_t *m = malloc((size_t)((T + 1) + T * (R + 1) + (R * T + 1)) * sizeof *m);
    if (m == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", op);
    store->vbe = m;
    int64_t *B_off = m, *B_rank = m + T + 1, *out_off = B_rank + T * (R + 1);
    B_off[0] = 0;
    for (int64_t f = 0; f < T; f++) {
        B_rank[f * (R + 1)] = 0;
        for (int64_t r = 0; r < R; r++) {
            int64_t b = bsz[f * R + r];
            if (b < 0 || b > (INT64_C(1) << 40))
                return pk_host->fail(LOOM_EINVAL, "%s: batch_size_per_feature_per_rank[%lld][%lld] = %lld is "
                                     "not a batch size", op, (long long)f, (long long)r, (long long)b);
            if (__builtin_add_overflow(B_rank[f * (R + 1) + r], b, &B_rank[f * (R + 1) + r + 1]))
                return pk_host->fail(LOOM_EINVAL, "%s: the batch sizes of feature %lld add up past 2^63", op,
                                     (long long)f);
        }
        if (__builtin_add_overflow(B_off[f], B_rank[f * (R + 1) + R], &B_off[f + 1]))
            return pk_host->fail(LOOM_EINVAL, "%s: the batch sizes add up past 2^63", op);
    }
    /* rank-major blocks of [B[f][r], D_f] */
    out_off[0] = 0;
    for (int64_t r = 0; r < R; r++)
        for (int64_t f = 0; f < T; f++) {
            int64_t D = s->D_offsets[f + 1] - s->D_offsets[f], block;
            if (__builtin_mul_overflow(bsz[f * R + r], D, &block)
                || __builtin_add_overflow(out_off[r * T + f], block, &out_off[r * T + f + 1]))
                return pk_host->fail(LOOM_EINVAL, "%s: the VBE output (batch sizes x dims) has more than 2^63 "
                                     "elements", op);
        }
    p->vbe = 1;
    p->vbe_ranks = (int32_t)R;
    p->vbe_B_offsets = B_off;
    p->vbe_B_offsets_rank_per_feature = B_rank;
    p->vbe_output_offsets = out_off;
    p->B = 0;
    p->n_bags = B_off[T];
    p->output_numel = out_off[R * T];
    return LOOM_OK;
}

loom_status fbg_tbe_check_file(const fbg_tbe_state *s, const char *op)
{
    const fbg_tbe_cpu *c = s->cpu_private;
    struct stat sb;
    if (c == NULL || c->file_fd < 0 || fstat(c->file_fd, &sb) != 0 || (int64_t)sb.st_size >= c->file_need)
        return LOOM_OK;
    return pk_host->fail(LOOM_EFORMAT, "%s: the weights file shrank to %lld bytes since the object was made "
                         "(its tables need %lld): it was truncated in place, and reading the tables would "
                         "fault; recreate the object", op, (long long)sb.st_size, (long long)c->file_need);
}

loom_status fbg_tbe_plan_build(const loom_call *call, const fbg_tbe_state *s, const int64_t *bsz,
                             const char *op, fbg_tbe_plan *p, fbg_plan_store *store)
{
    const loom_tensor *ind = call->inputs[TBE_IN_INDICES], *off = call->inputs[TBE_IN_OFFSETS];
    const loom_tensor *psw = call->inputs[TBE_IN_PSW], *vbe = call->inputs[TBE_IN_VBE];
    char b1[96], b2[96];

    memset(p, 0, sizeof *p);
    store->vbe = NULL;
    p->struct_size = sizeof *p;
    p->state = s;
    p->n_features = s->n_features;
    p->needs_bounds_check = 1;
    loom_status fst = fbg_tbe_check_file(s, op);
    if (fst != LOOM_OK)
        return fst;
    if (loom_tensor_dtype_of(ind) != loom_tensor_dtype_of(off))
        return pk_host->fail(LOOM_EINVAL, "%s: indices %s and offsets %s must have the same dtype (i32 or i64)",
                             op, fbgemm_describe(ind, b1, sizeof b1), fbgemm_describe(off, b2, sizeof b2));
    if (!loom_is_contiguous(ind) || !loom_is_contiguous(off) || (psw != NULL && !loom_is_contiguous(psw)))
        return pk_host->fail(LOOM_EINVAL, "%s: indices, offsets and per_sample_weights must be contiguous", op);
    p->indices = loom_data(ind);
    p->offsets = loom_data(off);
    p->index_dtype = loom_tensor_dtype_of(ind);
    p->n_indices = ind->shape[0];
    p->n_offsets = off->shape[0];
    if (psw != NULL && psw->shape[0] != p->n_indices)
        return pk_host->fail(LOOM_EINVAL, "%s: per_sample_weights %s must have one weight per index "
                             "(f32[%lld])", op, fbgemm_describe(psw, b1, sizeof b1), (long long)p->n_indices);
    p->per_sample_weights = psw != NULL ? loom_data(psw) : NULL;

    /* call attributes override the object's (fbgemm.tbe_prefetch has none) */
    const int has_attrs = call->n_attrs >= fbg_tbe__n_attrs;
    const loom_attr_value *pool = has_attrs ? &call->attrs[PK_ATTR(fbg_tbe, pooling_mode)] : NULL;
    const loom_attr_value *odt = has_attrs ? &call->attrs[PK_ATTR(fbg_tbe, output_dtype)] : NULL;
    const loom_attr_value *bounds = has_attrs ? &call->attrs[PK_ATTR(fbg_tbe, bounds_check_mode)] : NULL;
    p->pooling = s->pooling;
    int out_wtype = s->output_wtype;
    if (pool != NULL && pool->is_set && (p->pooling = fbg_pooling_from_name(pool->u.s)) < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: pooling_mode '%s' is not sum, mean or none", op, pool->u.s);
    if (odt != NULL && odt->is_set && (out_wtype = fbg_output_from_name(odt->u.s)) < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: output_dtype '%s' is not fp32, fp16 or bf16", op, odt->u.s);
    if (bounds != NULL && bounds->is_set && fbg_bounds_from_name(bounds->u.s) < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: bounds_check_mode '%s' is not fatal, warning, ignore or none",
                             op, bounds->u.s);
    p->output_dtype = fbg_output_loom_dtype(out_wtype);

    const int64_t T = s->n_features;
    if (vbe != NULL) {
        if (vbe->shape[0] != T || vbe->shape[1] < 1 || !loom_is_contiguous(vbe))
            return pk_host->fail(LOOM_EINVAL, "%s: batch_size_per_feature_per_rank %s must be a contiguous "
                                 "i64 [T=%lld, R >= 1]", op, fbgemm_describe(vbe, b1, sizeof b1), (long long)T);
        if (p->pooling == FBG_POOL_NONE)
            return pk_host->fail(LOOM_EINVAL, "%s: variable batch sizes (batch_size_per_feature_per_rank) need "
                                 "pooling sum or mean, as in fbgemm", op);
        loom_status st = build_vbe(s, bsz, vbe->shape[1], op, p, store);
        if (st != LOOM_OK)
            return st;
        if (p->n_offsets != p->n_bags + 1)
            return pk_host->fail(LOOM_EINVAL, "%s: offsets %s must have sum of batch sizes + 1 = %lld entries",
                                 op, fbgemm_describe(off, b1, sizeof b1), (long long)(p->n_bags + 1));
    } else {
        if (p->n_offsets < 1 || (p->n_offsets - 1) % T != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: offsets %s must have T*B+1 entries (T = %lld features)", op,
                                 fbgemm_describe(off, b1, sizeof b1), (long long)T);
        p->B = (p->n_offsets - 1) / T;
        p->n_bags = p->n_offsets - 1;
        if (__builtin_mul_overflow(p->B, s->total_D, &p->output_numel))
            return pk_host->fail(LOOM_EINVAL, "%s: the output [B = %lld, total_D = %lld] has more than 2^63 "
                                 "elements", op, (long long)p->B, (long long)s->total_D);
    }
    if (p->pooling == FBG_POOL_NONE) {
        if (!s->all_same_D)
            return pk_host->fail(LOOM_EINVAL, "%s: pooling none needs every feature to have the same dim", op);
        if (__builtin_mul_overflow(p->n_indices, (int64_t)s->max_D, &p->output_numel))
            return pk_host->fail(LOOM_EINVAL, "%s: the output [%lld indices, D = %d] has more than 2^63 "
                                 "elements", op, (long long)p->n_indices, (int)s->max_D);
    }
    return LOOM_OK;
}

int32_t fbg_tbe_output_shape(const fbg_tbe_plan *p, int64_t shape[2])
{
    if (p->pooling == FBG_POOL_NONE) {
        shape[0] = p->n_indices;
        shape[1] = p->state->max_D;
        return 2;
    }
    if (p->vbe) {
        shape[0] = p->output_numel;
        return 1;
    }
    shape[0] = p->B;
    shape[1] = p->state->total_D;
    return 2;
}

/* ---------------------------------------------------------- bounds check */

int32_t fbg_tbe_call_bounds_mode(const loom_call *call, const fbg_tbe_state *s)
{
    if (call->n_attrs > PK_ATTR(fbg_tbe, bounds_check_mode)
        && call->attrs[PK_ATTR(fbg_tbe, bounds_check_mode)].is_set)
        return fbg_bounds_from_name(call->attrs[PK_ATTR(fbg_tbe, bounds_check_mode)].u.s);
    return s->bounds_check_mode;
}

static void set_idx(void *p, int32_t dtype, int64_t i, int64_t v)
{
    if (dtype == LOOM_DTYPE_I32)
        ((int32_t *)p)[i] = (int32_t)v;
    else
        ((int64_t *)p)[i] = v;
}

/* One pass of fbgemm's check. With repair == 0 it only looks and returns
** 1 at the first problem (FATAL: after setting the error); with repair ==
** 1 it fixes everything in place in (ind, off). */
static int check_pass(const fbg_tbe_plan *p, const fbg_tbe_state *s, void *ind, void *off, int repair,
                      int fatal, const char *op, loom_status *st)
{
    const int32_t dt = p->index_dtype;
    const int64_t N = p->n_indices, nb = p->n_bags;
    int64_t last = fbg_idx(off, dt, nb);
    if (last != N) {
        if (fatal) {
            *st = pk_host->fail(LOOM_EINVAL, "%s: bounds check (fatal): the last offset, offsets[%lld] = %lld, "
                                "must equal the number of indices %lld", op, (long long)nb, (long long)last,
                                (long long)N);
            return 1;
        }
        if (!repair)
            return 1;
        set_idx(off, dt, nb, N);
    }
    for (int32_t f = 0; f < p->n_features; f++) {
        const int64_t rows = s->tables[s->feature_table_map[f]].rows;
        const int64_t b0 = fbg_plan_feature_bag(p, f), b1 = fbg_plan_feature_bag(p, f + 1);
        for (int64_t k = b0; k < b1; k++) {
            int64_t start = fbg_idx(off, dt, k), end = fbg_idx(off, dt, k + 1);
            if (start < 0 || start > end || end > N) {
                if (fatal) {
                    *st = pk_host->fail(LOOM_EINVAL, "%s: bounds check (fatal): bag %lld (feature %d, sample "
                                        "%lld) has offsets [%lld, %lld), outside [0, %lld] or decreasing", op,
                                        (long long)k, (int)f, (long long)(k - b0), (long long)start,
                                        (long long)end, (long long)N);
                    return 1;
                }
                if (!repair)
                    return 1;
                start = start < 0 ? 0 : start > N ? N : start;
                end = end < start ? start : end > N ? N : end;
                set_idx(off, dt, k, start);
                set_idx(off, dt, k + 1, end);
            }
            for (int64_t i = start; i < end; i++) {
                int64_t idx = fbg_idx(ind, dt, i);
                if (idx == -1 || (idx >= 0 && idx < rows))
                    continue;
                if (fatal) {
                    *st = pk_host->fail(LOOM_EINVAL, "%s: bounds check (fatal): indices[%lld] = %lld in bag "
                                        "%lld (feature %d, table %d) is outside [0, %lld)", op, (long long)i,
                                        (long long)idx, (long long)k, (int)f, (int)s->feature_table_map[f],
                                        (long long)rows);
                    return 1;
                }
                if (!repair)
                    return 1;
                set_idx(ind, dt, i, 0);
            }
        }
    }
    return 0;
}

loom_status fbg_tbe_bounds_check_host(loom_call *call, const fbg_tbe_state *s, int32_t mode, fbg_tbe_plan *p,
                                    const char *op)
{
    loom_status st = LOOM_OK;
    p->needs_bounds_check = 0;
    const int fatal = mode == FBG_BOUNDS_FATAL;
    if (!check_pass(p, s, (void *)(uintptr_t)p->indices, (void *)(uintptr_t)p->offsets, 0, fatal, op, &st))
        return LOOM_OK;
    if (fatal)
        return st;
    /* repair a private copy */
    const size_t es = p->index_dtype == LOOM_DTYPE_I32 ? 4 : 8;
    void *ind = pk_host->scratch(call->ctx, (size_t)p->n_indices * es + 8);
    void *off = pk_host->scratch(call->ctx, (size_t)p->n_offsets * es + 8);
    if (ind == NULL || off == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: no memory to repair %lld indices", op, (long long)p->n_indices);
    memcpy(ind, p->indices, (size_t)p->n_indices * es);
    memcpy(off, p->offsets, (size_t)p->n_offsets * es);
    check_pass(p, s, ind, off, 1, 0, op, &st);
    p->indices = ind;
    p->offsets = off;
    if (mode == FBG_BOUNDS_WARNING) {
        fbg_tbe_cpu *c = s->cpu_private;
        int first = 0;
        if (c != NULL) {
            pthread_mutex_lock(&c->lock);
            first = !c->warned;
            c->warned = 1;
            pthread_mutex_unlock(&c->lock);
        }
        if (first)
            pk_host->log(LOOM_LOG_WARN, "%s: bounds check (warning): out-of-range offsets or indices were "
                         "repaired (offsets clamped, bad indices read row 0); logged once per object", op);
    }
    return LOOM_OK;
}

/* ------------------------------------------------------------------ cost */

void fbg_tbe_cost(const loom_call *call, double *flops, double *bytes)
{
    const fbg_tbe_state *s = call->object;
    const loom_tensor *off = call->n_inputs > TBE_IN_OFFSETS ? call->inputs[TBE_IN_OFFSETS] : NULL;
    if (s == NULL || off == NULL || call->inputs[TBE_IN_VBE] != NULL || off->device.device_type != LOOM_DEVICE_CPU)
        return;
    const int64_t n_off = off->shape[0], T = s->n_features;
    if (n_off < 1 || (n_off - 1) % T != 0)
        return;
    const int64_t B = (n_off - 1) / T;
    const int32_t dt = loom_tensor_dtype_of(off);
    const void *o = loom_data(off);
    double rows_bytes = 0, n = 0;
    for (int64_t f = 0; f < T; f++) {
        const fbg_tbe_table *t = &s->tables[s->feature_table_map[f]];
        double L = (double)(fbg_idx(o, dt, (f + 1) * B) - fbg_idx(o, dt, f * B));
        rows_bytes += L * (double)fbg_row_bytes_unpadded((fbg_wtype)t->wtype, t->dim);
        n += L * t->dim;
    }
    const loom_tensor *out = call->n_outputs > 0 ? call->outputs[0] : NULL;
    double out_bytes = out != NULL ? (double)loom_numel(out) * (double)pk_host->dtype_size(
                                                                   loom_tensor_dtype_of(out)) : 0;
    *flops = 2.0 * n;
    *bytes = rows_bytes + out_bytes;
}
