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
    free(b->traj_start);
    free(b->traj_stop);
    free(b->traj_len);
    b->traj_start = b->traj_stop = b->traj_len = NULL;
    b->traj_valid = 0;
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
    case LOOM_DTYPE_U16: return ((const uint16_t *)p)[i];
    case LOOM_DTYPE_U32: return ((const uint32_t *)p)[i];
    case LOOM_DTYPE_I8: return ((const int8_t *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

void rl_rb_slice_cache_drop(rl_rb *b) { b->traj_valid = 0; }

void rl_rb_slices_free(rl_rb_slices *s)
{
    if (s == NULL)
        return;
    free(s->len);
    free(s->mask);
    memset(s, 0, sizeof *s);
}

/* torchrl's _derive_end_flags and _end_to_start_stop on a 1-d storage of T
** = len items: an item ends a trajectory where traj_key changes after it
** (or end_key is true at it); the last item ends one unless the storage is
** full, where it wraps on to item 0 (same traj id, or no end flag); in a
** full storage the last slot written always ends one (what followed it was
** overwritten), and one end at least exists. Trajectory i stops at the i-th
** end and starts after the one before it, the first after the last end. */
loom_status rl_rb_trajectories(rl_rb *b, const int64_t **start_out, const int64_t **stop_out,
                               const int64_t **len_out, int64_t *n_out)
{
    if (b->sampler != RL_RB_SLICE)
        return pk_host->fail(LOOM_EINVAL, "the buffer's sampler is not slice");
    if (b->store == NULL || b->len == 0)
        return pk_host->fail(LOOM_EINVAL, "the buffer is empty: no trajectories");
    if (!(b->cache_values && b->traj_valid)) {
        const int64_t T = b->len;
        const int at_capacity = T == b->capacity;
        const rl_key *k = b->traj_key.n > 0 ? &b->traj_key : &b->end_key;
        const rl_td_entry *e = rl_td_lookup(b->store, k);
        if (e == NULL || e->kind != RL_TD_TENSOR || e->leaf.ndim < 1 || rl_leaf_numel(&e->leaf) != e->leaf.shape[0]
            || e->leaf.dtype == LOOM_DTYPE_F16 || e->leaf.dtype == LOOM_DTYPE_BF16 || e->leaf.dtype == LOOM_DTYPE_F8E4M3)
            return pk_host->fail(LOOM_EINVAL, "the %s is not a stored tensor of one f32/f64/integer/bool value per item",
                                 b->traj_key.n > 0 ? "traj_key" : "end_key");
        uint8_t *end = malloc((size_t)T);
        int64_t *g0 = realloc(b->traj_start, (size_t)T * sizeof *g0);
        if (g0 != NULL)
            b->traj_start = g0;
        int64_t *g1 = realloc(b->traj_stop, (size_t)T * sizeof *g1);
        if (g1 != NULL)
            b->traj_stop = g1;
        int64_t *g2 = realloc(b->traj_len, (size_t)T * sizeof *g2);
        if (g2 != NULL)
            b->traj_len = g2;
        if (end == NULL || g0 == NULL || g1 == NULL || g2 == NULL) {
            free(end);
            b->traj_valid = 0;
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        }
        if (b->traj_key.n > 0) {
            for (int64_t i = 0; i + 1 < T; i++)
                end[i] = leaf_value(&e->leaf, i) != leaf_value(&e->leaf, i + 1);
            end[T - 1] = at_capacity ? leaf_value(&e->leaf, T - 1) != leaf_value(&e->leaf, 0) : 1;
        } else {
            for (int64_t i = 0; i < T; i++)
                end[i] = leaf_value(&e->leaf, i) != 0;
            if (!at_capacity)
                end[T - 1] = 1;
        }
        if (at_capacity) {
            int64_t last = b->last_index >= 0 ? b->last_index
                           : b->write_count > 0 ? (b->cursor + b->capacity - 1) % b->capacity : -1;
            if (last >= 0 && last < T)
                end[last] = 1;
            int any = 0;
            for (int64_t i = 0; i < T && !any; i++)
                any = end[i];
            if (!any && T > 0)
                end[T - 1] = 1;
        }
        int64_t n = 0;
        for (int64_t i = 0; i < T; i++)
            if (end[i])
                b->traj_stop[n++] = i;
        free(end);
        for (int64_t i = 0; i < n; i++) {
            b->traj_start[i] = i > 0 ? b->traj_stop[i - 1] + 1 : (b->traj_stop[n - 1] + 1) % T;
            int64_t l = b->traj_stop[i] - b->traj_start[i] + 1;
            b->traj_len[i] = l <= 0 ? l + T : l;
        }
        b->n_traj = n;
        b->traj_valid = 1;
    }
    *start_out = b->traj_start;
    *stop_out = b->traj_stop;
    *len_out = b->traj_len;
    *n_out = b->n_traj;
    return LOOM_OK;
}

/* torchrl's SliceSampler.sample (_sample_slices, _get_index): num_slices
** trajectories drawn uniformly among those long enough (strict_length) or
** all (each slice then at most its trajectory's length), a start drawn
** uniformly in [start_point, end_point) relative to the trajectory, which
** span widens past either end (the slice then shortened to what lies
** inside), items (start + q) mod capacity; pad_output repeats the last real
** item of a short slice up to the slice length. */
static loom_status slice_indices(rl_rb *b, int64_t batch_size, int64_t **idx_io, int64_t *n_out, rl_rb_slices *out)
{
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
    for (int side = 0; side < 2; side++)
        if (b->span[side] > 0 && b->span[side] >= seq)
            return pk_host->fail(LOOM_EINVAL, "span %lld: the right and left span must be strictly lower than the "
                                 "slice length %lld", (long long)b->span[side], (long long)seq);
    const int64_t *start, *stop, *length, n_traj;
    loom_status st = rl_rb_trajectories(b, &start, &stop, &length, (int64_t *)&n_traj);
    if (st != LOOM_OK)
        return st;
    (void)stop;
    int any_short = 0;
    for (int64_t t = 0; t < n_traj && !any_short; t++)
        any_short = length[t] < seq;
    /* the trajectories a slice may come from: all, or (strict) the long ones */
    int64_t *pool = malloc((size_t)n_traj * sizeof *pool);
    int64_t *len = calloc((size_t)slices, sizeof *len);
    int64_t *first = calloc((size_t)slices, sizeof *first);
    if (pool == NULL || len == NULL || first == NULL) {
        free(pool);
        free(len);
        free(first);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    int64_t n_pool = 0;
    for (int64_t t = 0; t < n_traj; t++)
        if (!(any_short && b->strict_length) || length[t] >= seq)
            pool[n_pool++] = t;
    if (n_pool == 0)
        st = pk_host->fail(LOOM_EINVAL, "no trajectory is at least %lld items long (strict_length; the longest is "
                           "shorter)", (long long)seq);
    const int64_t target = any_short && !b->strict_length && b->pad_output ? seq : 0;
    int64_t total = 0;
    for (int64_t j = 0; st == LOOM_OK && j < slices; j++) {
        const int64_t t = pool[below(b, n_pool)];
        const int64_t L = length[t];
        int64_t s = any_short && !b->strict_length && L < seq ? L : seq;
        /* span right True: starts up to the last item, so a slice keeps one at
        ** least, as torchrl documents (its code also draws a start one past
        ** the end, an empty slice) */
        const int64_t end_point = b->span[1] == 0 ? L - s + 1 : b->span[1] == RL_RB_SPAN_ALL ? L : L - b->span[1];
        const int64_t start_point = b->span[0] == 0 ? 0 : b->span[0] == RL_RB_SPAN_ALL ? -s + 1 : -b->span[0];
        int64_t rel = (int64_t)floor(uniform(b) * (double)(end_point - start_point)) + start_point;
        if (b->span[0] != 0 && rel < 0) {
            s += rel;
            rel = 0;
        }
        if (b->span[1] != 0 && rel + s > L)
            s = L - rel;
        first[j] = start[t] + rel;
        len[j] = s;
        total += target > 0 ? target : s;
    }
    int64_t *idx = st == LOOM_OK ? realloc(*idx_io, (size_t)(total > 0 ? total : 1) * sizeof *idx) : NULL;
    uint8_t *mask = st == LOOM_OK && target > 0 ? malloc((size_t)total) : NULL;
    if (st == LOOM_OK && (idx == NULL || (target > 0 && mask == NULL)))
        st = pk_host->fail(LOOM_ENOMEM, "out of memory for %lld indices", (long long)total);
    if (idx != NULL)
        *idx_io = idx;
    int64_t n = 0;
    for (int64_t j = 0; st == LOOM_OK && j < slices; j++) {
        const int64_t width = target > 0 ? target : len[j];
        for (int64_t q = 0; q < width; q++) {
            const int real = q < len[j];
            /* padded positions repeat the last real item (the first when a span left none) */
            const int64_t at = real ? q : (len[j] > 0 ? len[j] - 1 : 0);
            idx[n] = ((first[j] + at) % b->capacity + b->capacity) % b->capacity;
            if (mask != NULL)
                mask[n] = (uint8_t)real;
            n++;
        }
    }
    free(pool);
    free(first);
    if (st != LOOM_OK || out == NULL) {
        free(len);
        free(mask);
    } else {
        out->n_slices = slices;
        out->target = target;
        out->len = len;
        out->mask = mask;
    }
    *n_out = n;
    return st;
}

loom_status rl_rb_sample_indices(rl_rb *b, int64_t batch_size, int64_t **idx_out, int64_t *n_out, float **weight_out,
                                 rl_rb_slices *slices)
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
        st = slice_indices(b, batch_size, &idx, &n, slices);
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
        double mass_stack[512];
        double *mass = st == LOOM_OK ? (n <= 512 ? mass_stack : malloc((size_t)n * sizeof *mass)) : NULL;
        if (st == LOOM_OK && mass == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
        for (int64_t i = 0; st == LOOM_OK && i < n; i++)
            mass[i] = uniform(b) * p_sum;
        if (st == LOOM_OK)
            rl_segtree_scan_lower_bound_batch(&b->sum, mass, n, idx);
        if (mass != mass_stack)
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
    /* the largest new priority among valid (>= 0) indices and its slot,
    ** the first one on ties (torch's max(dim=0)) */
    int any = 0;
    double max_p = 0;
    int64_t max_i = -1;
    for (int64_t i = 0; i < n; i++)
        if (index[i] >= 0) {
            double p = priority[n_prio == 1 ? 0 : i];
            if (!any || p > max_p) {
                max_p = p;
                max_i = index[i];
            }
            any = 1;
        }
    if (!any)
        return LOOM_OK;
    if (!b->has_max || max_p > b->max_priority) {
        b->has_max = 1;
        b->max_priority = max_p;
        b->max_index = max_i;
    }
    /* a batch of up to 512 on the stack: no allocator round trip per call */
    int64_t ix_stack[512];
    double val_stack[512];
    const int heap = n > 512;
    int64_t *ix = heap ? malloc((size_t)n * sizeof *ix) : ix_stack;
    double *val = heap ? malloc((size_t)n * sizeof *val) : val_stack;
    if (ix == NULL || val == NULL) {
        if (heap) {
            free(ix);
            free(val);
        }
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
    /* max_priority_within_buffer: the slot of the max was given a new
    ** priority, so the max is the largest leaf's, back in the raw domain
    ** ((leaf ^ (1 / alpha) - eps) clamped at 0, in the trees' precision) */
    int touched = 0;
    for (int64_t i = 0; i < m && !touched; i++)
        touched = ix[i] == b->max_index;
    if (heap) {
        free(ix);
        free(val);
    }
    if (b->max_within && b->alpha != 0 && touched) {
        int64_t arg = 0;
        double top = rl_segtree_at(&b->sum, 0);
        for (int64_t i = 1; i < b->capacity; i++) {
            const double v = rl_segtree_at(&b->sum, i);
            if (v > top) {
                top = v;
                arg = i;
            }
        }
        b->max_priority = b->sum.f64 ? fmax(pow(top, 1.0 / b->alpha) - b->eps, 0.0)
                                     : (double)fmaxf(f32_pow((float)top, (float)(1.0 / b->alpha)) - (float)b->eps, 0.0f);
        b->max_index = arg;
    }
    return LOOM_OK;
}

loom_status rl_rb_sampler_mark_update(rl_rb *b, const int64_t *index, int64_t n)
{
    /* the storage's last cursor: the last slot this write reached */
    for (int64_t i = n - 1; i >= 0; i--)
        if (index[i] >= 0) {
            b->last_index = index[i];
            break;
        }
    rl_rb_slice_cache_drop(b);
    if (b->sampler != RL_RB_PRIORITIZED)
        return LOOM_OK;
    /* default_priority: the raw max seen, 1.0 at first (a Python float: f32 arithmetic) */
    const double p = b->has_max ? b->max_priority : 1.0;
    loom_status st = rl_rb_update_priority(b, index, n, &p, 1, 1);
    /* then the sampler's extend: within the buffer, a max overwritten is forgotten */
    for (int64_t i = 0; st == LOOM_OK && b->max_within && b->has_max && i < n; i++)
        if (index[i] == b->max_index)
            b->has_max = 0;
    return st;
}
