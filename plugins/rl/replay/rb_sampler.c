/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_sampler.c - the samplers of rl.replay_buffer, as torchrl's:
**   random               RandomSampler: batch_size uniform indices in [0, len)
**   without_replacement  SamplerWithoutReplacement: an epoch is a permutation
**                        (or storage order when shuffle is false) consumed
**                        batch by batch; the last batch is shorter unless
**                        drop_last, which starts a new epoch instead
**   prioritized          PrioritizedSampler: sum and min trees of
**                        (p + eps) ^ alpha, items found by a lower-bound scan
**                        of uniform masses in [0, p_sum), importance weights
**                        (tree[i] / p_min) ^ -beta; new items get the largest
**                        raw priority seen so far (1 at first)
**   slice                SliceSampler: the stored items [0, len) split into
**                        trajectories (runs of one traj_key value, or up to
**                        each true end_key, the last item always an end);
**                        num_slices trajectories drawn uniformly (with
**                        strict_length only those at least seq_length
**                        long; without it shorter ones give their whole
**                        length), each a uniform start in [0, length -
**                        seq_length] and seq_length consecutive items
** Arithmetic follows torchrl's precision: with f32 trees (the default) the
** priority transform, the tree sums and the weights are single-precision,
** as torch computes them on float tensors. Random numbers come from the
** pack's counter-based stream (rng.h) with the buffer's seed.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rb.h"
#include "rng.h"

static double uniform(rl_rb *b) { return pk_rng_uniform(b->seed, b->draws++); }

/* An integer in [0, n), unbiased enough for n < 2^53. */
static int64_t below(rl_rb *b, int64_t n) { return (int64_t)(uniform(b) * (double)n); }

loom_status rl_rb_sampler_init(rl_rb *b, const char *dtype)
{
    if (b->sampler != RL_RB_PRIORITIZED)
        return LOOM_OK;
    const int f64 = strcmp(dtype, "f64") == 0;
    if (!f64 && strcmp(dtype, "f32") != 0)
        return pk_host->fail(LOOM_EINVAL, "dtype '%s' is not f32 or f64", dtype);
    if (rl_segtree_init(&b->sum, b->capacity, f64, 0) != 0 || rl_segtree_init(&b->min, b->capacity, f64, 1) != 0)
        return pk_host->fail(LOOM_ENOMEM, "out of memory for the priority trees of %lld items", (long long)b->capacity);
    return LOOM_OK;
}

void rl_rb_sampler_free(rl_rb *b)
{
    rl_segtree_free(&b->sum);
    rl_segtree_free(&b->min);
    free(b->perm);
    b->perm = NULL;
}

static loom_status new_epoch(rl_rb *b, int64_t len)
{
    int64_t *p = realloc(b->perm, (size_t)(len > 0 ? len : 1) * sizeof *p);
    if (p == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    b->perm = p;
    for (int64_t i = 0; i < len; i++)
        p[i] = i;
    if (b->shuffle)
        for (int64_t i = len - 1; i > 0; i--) {     /* Fisher-Yates */
            int64_t j = below(b, i + 1);
            int64_t t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
    b->perm_n = len;
    b->perm_at = 0;
    b->perm_len = len;
    return LOOM_OK;
}

static inline float f32_pow(float x, float e) { return powf(x, e); }

loom_status rl_rb_priority_weight(rl_rb *b, const int64_t *index, int64_t n, float *out)
{
    if (b->sampler != RL_RB_PRIORITIZED)
        return pk_host->fail(LOOM_EINVAL, "the buffer's sampler is not prioritized");
    if (b->len == 0)
        return pk_host->fail(LOOM_EINVAL, "the buffer is empty");
    const double p_min = rl_segtree_query(&b->min, 0, b->len);
    if (!(p_min > 0))
        return pk_host->fail(LOOM_EINVAL, "non-positive p_min");
    for (int64_t i = 0; i < n; i++) {
        if (index[i] < 0 || index[i] >= b->len)
            return pk_host->fail(LOOM_EINVAL, "index[%lld] = %lld is not in [0, %lld)", (long long)i,
                                 (long long)index[i], (long long)b->len);
        const double w = rl_segtree_at(&b->sum, index[i]);
        /* torch.pow(weight / p_min, -beta): f32 tensors give f32 arithmetic */
        out[i] = b->sum.f64 ? (float)pow(w / p_min, -b->beta) : f32_pow((float)w / (float)p_min, (float)-b->beta);
    }
    return LOOM_OK;
}

/* Element i of a leaf whose items hold one value each, as a double. */
static double leaf_value(const rl_leaf *l, int64_t i)
{
    const int64_t per = rl_leaf_numel(l) / (l->shape[0] > 0 ? l->shape[0] : 1);
    const void *p = rl_leaf_data(l);
    i *= per;
    switch (l->dtype) {
    case LOOM_DTYPE_F32: return ((const float *)p)[i];
    case LOOM_DTYPE_F64: return ((const double *)p)[i];
    case LOOM_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case LOOM_DTYPE_I32: return ((const int32_t *)p)[i];
    case LOOM_DTYPE_I16: return ((const int16_t *)p)[i];
    case LOOM_DTYPE_I8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

static loom_status slice_indices(rl_rb *b, int64_t batch_size, int64_t *idx, int64_t *n_out)
{
    const int64_t len = b->len;
    int64_t seq, slices;
    if (b->num_slices > 0) {
        if (batch_size % b->num_slices != 0)
            return pk_host->fail(LOOM_EINVAL, "batch_size %lld is not divisible by num_slices %lld",
                                 (long long)batch_size, (long long)b->num_slices);
        seq = batch_size / b->num_slices;
        slices = b->num_slices;
    } else {
        if (batch_size % b->slice_len != 0)
            return pk_host->fail(LOOM_EINVAL, "batch_size %lld is not divisible by slice_len %lld",
                                 (long long)batch_size, (long long)b->slice_len);
        seq = b->slice_len;
        slices = batch_size / b->slice_len;
    }
    const rl_key *k = b->traj_key.n > 0 ? &b->traj_key : &b->end_key;
    const rl_td_entry *e = rl_td_lookup(b->store, k);
    if (e == NULL || e->kind != RL_TD_TENSOR || rl_leaf_numel(&e->leaf) != e->leaf.shape[0] || e->leaf.ndim < 1
        || e->leaf.dtype == LOOM_DTYPE_F16 || e->leaf.dtype == LOOM_DTYPE_BF16 || e->leaf.dtype == LOOM_DTYPE_F8E4M3)
        return pk_host->fail(LOOM_EINVAL, "the %s is not a stored tensor of one f32/f64/integer/bool value per item",
                             b->traj_key.n > 0 ? "traj_key" : "end_key");
    /* trajectory starts and lengths over [0, len) */
    int64_t *start = malloc((size_t)len * sizeof *start), *length = malloc((size_t)len * sizeof *length);
    if (start == NULL || length == NULL) {
        free(start);
        free(length);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    int64_t n_traj = 0, s = 0;
    for (int64_t i = 0; i < len; i++) {
        const int end = i == len - 1 || (b->traj_key.n > 0 ? leaf_value(&e->leaf, i) != leaf_value(&e->leaf, i + 1)
                                                           : leaf_value(&e->leaf, i) != 0);
        if (end) {
            start[n_traj] = s;
            length[n_traj++] = i - s + 1;
            s = i + 1;
        }
    }
    /* strict_length: only trajectories of at least seq items */
    int64_t n_ok = 0;
    for (int64_t t = 0; t < n_traj; t++)
        if (!b->strict_length || length[t] >= seq) {
            start[n_ok] = start[t];
            length[n_ok++] = length[t];
        }
    loom_status st = LOOM_OK;
    if (n_ok == 0)
        st = pk_host->fail(LOOM_EINVAL, "no trajectory is at least %lld items long (strict_length)", (long long)seq);
    int64_t n = 0;
    for (int64_t j = 0; st == LOOM_OK && j < slices; j++) {
        const int64_t t = below(b, n_ok);
        const int64_t l = length[t] < seq ? length[t] : seq;
        const int64_t rel = below(b, length[t] - l + 1);
        for (int64_t q = 0; q < l; q++)
            idx[n++] = (start[t] + rel + q) % b->capacity;
    }
    free(start);
    free(length);
    *n_out = n;
    return st;
}

loom_status rl_rb_sample_indices(rl_rb *b, int64_t batch_size, int64_t **idx_out, int64_t *n_out, float **weight_out)
{
    const int64_t len = b->len;
    if (len == 0)
        return pk_host->fail(LOOM_EINVAL, "cannot sample from an empty buffer");
    int64_t *idx = malloc((size_t)batch_size * sizeof *idx);
    if (idx == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory for %lld indices", (long long)batch_size);
    int64_t n = batch_size;
    loom_status st = LOOM_OK;
    if (b->sampler == RL_RB_RANDOM) {
        for (int64_t i = 0; i < n; i++)
            idx[i] = below(b, len);
    } else if (b->sampler == RL_RB_SLICE) {
        st = slice_indices(b, batch_size, idx, &n);
    } else if (b->sampler == RL_RB_WITHOUT_REPLACEMENT) {
        if (len < batch_size && b->drop_last) {
            free(idx);
            return pk_host->fail(LOOM_EINVAL, "batch_size %lld is larger than the %lld items stored: without "
                                 "replacement and drop_last no batch can be drawn", (long long)batch_size,
                                 (long long)len);
        }
        if (b->perm == NULL || b->perm_len != len)
            st = new_epoch(b, len);
        if (st == LOOM_OK) {
            int64_t left = b->perm_n - b->perm_at;
            n = left < batch_size ? left : batch_size;
            memcpy(idx, b->perm + b->perm_at, (size_t)n * sizeof *idx);
            b->perm_at += n;
            left = b->perm_n - b->perm_at;
            if (left == 0 || (b->drop_last && left < batch_size))
                st = new_epoch(b, len);
        }
    } else {
        const double p_sum = rl_segtree_query(&b->sum, 0, len);
        const double p_min = rl_segtree_query(&b->min, 0, len);
        if (!(p_sum > 0) || !(p_min > 0))
            st = pk_host->fail(LOOM_EINVAL, "non-positive %s", p_sum > 0 ? "p_min" : "p_sum");
        double *mass = st == LOOM_OK ? malloc((size_t)n * sizeof *mass) : NULL;
        if (st == LOOM_OK && mass == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
        for (int64_t i = 0; st == LOOM_OK && i < n; i++)
            mass[i] = uniform(b) * p_sum;
        if (st == LOOM_OK)
            rl_segtree_scan_lower_bound_batch(&b->sum, mass, n, idx);
        free(mass);
        for (int64_t i = 0; st == LOOM_OK && i < n; i++) {
            int64_t j = idx[i];
            if (j > len - 1)
                j = len - 1;
            while (j >= 0 && rl_segtree_at(&b->sum, j) == 0)   /* torchrl steps back over empty leaves */
                j--;
            if (j < 0)
                st = pk_host->fail(LOOM_EINVAL, "failed to find a suitable index");
            idx[i] = j;
        }
    }
    float *w = NULL;
    if (st == LOOM_OK && b->sampler == RL_RB_PRIORITIZED) {
        w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
        st = w != NULL ? rl_rb_priority_weight(b, idx, n, w) : pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    if (st != LOOM_OK) {
        free(idx);
        free(w);
        return st;
    }
    *idx_out = idx;
    *n_out = n;
    *weight_out = w;
    return LOOM_OK;
}

loom_status rl_rb_update_priority(rl_rb *b, const int64_t *index, int64_t n, const double *priority, int64_t n_prio,
                                  int f32_priority)
{
    if (b->sampler != RL_RB_PRIORITIZED)
        return pk_host->fail(LOOM_EINVAL, "the buffer's sampler is not prioritized");
    if (n_prio != 1 && n_prio != n)
        return pk_host->fail(LOOM_EINVAL, "priority has %lld values for %lld indices", (long long)n_prio,
                             (long long)n);
    for (int64_t i = 0; i < n; i++) {
        if (index[i] >= b->capacity)
            return pk_host->fail(LOOM_EINVAL, "index[%lld] = %lld is not below the capacity %lld", (long long)i,
                                 (long long)index[i], (long long)b->capacity);
        if (!(priority[n_prio == 1 ? 0 : i] >= 0) || isinf(priority[n_prio == 1 ? 0 : i]))
            return pk_host->fail(LOOM_EINVAL, "priority[%lld] = %g is not a finite non-negative number",
                                 (long long)(n_prio == 1 ? 0 : i), priority[n_prio == 1 ? 0 : i]);
    }
    /* the largest new priority among valid (>= 0) indices, first one on ties */
    int any = 0;
    double max_p = 0;
    for (int64_t i = 0; i < n; i++)
        if (index[i] >= 0) {
            double p = priority[n_prio == 1 ? 0 : i];
            if (!any || p > max_p)
                max_p = p;
            any = 1;
        }
    if (!any)
        return LOOM_OK;
    if (!b->has_max || max_p > b->max_priority) {
        b->has_max = 1;
        b->max_priority = max_p;
    }
    int64_t *ix = malloc((size_t)n * sizeof *ix);
    double *val = malloc((size_t)n * sizeof *val);
    if (ix == NULL || val == NULL) {
        free(ix);
        free(val);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (index[i] < 0)
            continue;
        const double p = priority[n_prio == 1 ? 0 : i];
        /* torch.pow(priority + eps, alpha) in the priority's dtype */
        val[m] = f32_priority && !b->sum.f64 ? (double)f32_pow((float)p + (float)b->eps, (float)b->alpha)
                                             : pow(p + b->eps, b->alpha);
        ix[m++] = index[i];
    }
    /* a slot given twice keeps its last value, as torchrl's sequential updates */
    rl_segtree_update_batch(&b->sum, ix, m, val, m);
    rl_segtree_update_batch(&b->min, ix, m, val, m);
    free(ix);
    free(val);
    return LOOM_OK;
}

loom_status rl_rb_sampler_mark_update(rl_rb *b, const int64_t *index, int64_t n)
{
    if (b->sampler != RL_RB_PRIORITIZED)
        return LOOM_OK;
    /* default_priority: the raw max seen, 1.0 at first (a Python float: f32 arithmetic) */
    const double p = b->has_max ? b->max_priority : 1.0;
    return rl_rb_update_priority(b, index, n, &p, 1, 1);
}
