/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_writer.c - the storage and writers of rl.replay_buffer: the storage
** TensorDict made from the first data's structure (every leaf [capacity,
** ...] zeroed, as LazyTensorStorage; memmap: the same saved under
** scratch_dir in tensordict's layout and mapped shared, as
** LazyMemmapStorage), and the writers:
**   round_robin  RoundRobinWriter: items go to cursor, cursor + 1, ... mod
**                capacity
**   max_value    TensorDictMaxValueWriter: while not full, as round robin;
**                then an item replaces the one of smallest rank when its
**                rank is larger (a min-heap of (rank, index), ties by index
**                as Python's heapq orders tuples); items not kept get -1
** The data is checked against the storage before anything is written, so
** a refused extend leaves the buffer as it was.
*/
#include <stdlib.h>
#include <string.h>

#include "rb.h"

/* ------------------------------------------------------------- storage */

static loom_status make_like(const rl_td *data, int64_t capacity, rl_td **out)
{
    int64_t batch[LOOM_MAX_NDIM];
    memcpy(batch, data->batch, sizeof batch);
    batch[0] = capacity;
    rl_td *r = rl_td_new(data->batch_ndim, batch);
    if (r == NULL)
        return LOOM_ENOMEM;
    loom_status st = LOOM_OK;
    for (int64_t i = 0; i < data->n && st == LOOM_OK; i++) {
        const rl_td_entry *e = &data->e[i];
        rl_key one = { .n = 1, .part = { e->key } };
        if (e->kind == RL_TD_TENSOR) {
            rl_leaf l = e->leaf;
            l.shape[0] = capacity;
            l.buf = rl_buf_new(rl_leaf_nbytes(&l));
            st = l.buf != NULL ? rl_td_set_leaf(r, &one, &l) : LOOM_ENOMEM;
            rl_buf_release(l.buf);
        } else if (e->kind == RL_TD_DICT) {
            rl_td *sub = NULL;
            st = make_like(e->td, capacity, &sub);
            if (st == LOOM_OK)
                st = rl_td_set_dict(r, &one, sub);
        } else if (e->stacked) {
            st = pk_host->fail(LOOM_ENOTSUP, "extend: key '%s' is a NonTensorStack; a tensor storage keeps one value "
                               "per NonTensorData (storage=list holds per-item values)", e->key);
        } else {
            st = rl_td_put_non_tensor(r, &one, e);
        }
    }
    if (st != LOOM_OK) {
        rl_td_free(r);
        return st;
    }
    *out = r;
    return LOOM_OK;
}

static loom_status make_store(rl_rb *b, const rl_td *data, loom_exec_ctx *ctx)
{
    rl_td *store = NULL;
    loom_status st = make_like(data, b->capacity, &store);
    if (st != LOOM_OK || b->storage_kind == RL_RB_MEMORY) {
        b->store = store;
        return st;
    }
    /* memmap: write the zeroed storage, then map it shared so writes reach the files */
    st = rl_td_save_memmap(store, b->scratch_dir, ctx);
    rl_td_free(store);
    if (st == LOOM_OK)
        st = rl_td_load_memmap(b->scratch_dir, RL_MAP_SHARED, ctx, &b->store);
    return st;
}

/* Same keys, kinds, dtypes and per-item shapes as the storage. */
static loom_status check_like(const rl_td *store, const rl_td *data, const char *where)
{
    if (data->batch_ndim != store->batch_ndim)
        return pk_host->fail(LOOM_EINVAL, "%s: the data has %d batch dims, the storage %d", where,
                             (int)data->batch_ndim, (int)store->batch_ndim);
    for (int32_t d = 1; d < data->batch_ndim; d++)
        if (data->batch[d] != store->batch[d])
            return pk_host->fail(LOOM_EINVAL, "%s: batch dim %d is %lld, the storage's %lld", where, (int)d,
                                 (long long)data->batch[d], (long long)store->batch[d]);
    if (data->n != store->n)
        return pk_host->fail(LOOM_EINVAL, "%s: the data has %lld keys, the storage %lld", where, (long long)data->n,
                             (long long)store->n);
    for (int64_t i = 0; i < data->n; i++) {
        const rl_td_entry *e = &data->e[i];
        const rl_td_entry *s = rl_td_find(store, e->key);
        if (s == NULL || s->kind != e->kind)
            return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is %s in the storage", where, e->key,
                                 s == NULL ? "absent" : "of another kind");
        if (e->kind == RL_TD_TENSOR) {
            int ok = e->leaf.dtype == s->leaf.dtype && e->leaf.ndim == s->leaf.ndim;
            for (int32_t d = 1; ok && d < e->leaf.ndim; d++)
                ok = e->leaf.shape[d] == s->leaf.shape[d];
            if (!ok)
                return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is %s of %d dims; the storage holds %s items of "
                                     "another shape or dtype", where, e->key, pk_host->dtype_name(e->leaf.dtype),
                                     (int)e->leaf.ndim, pk_host->dtype_name(s->leaf.dtype));
        } else if (e->kind == RL_TD_DICT) {
            loom_status st = check_like(s->td, e->td, e->key);
            if (st != LOOM_OK)
                return st;
        } else if (e->stacked) {
            return pk_host->fail(LOOM_ENOTSUP, "%s: key '%s' is a NonTensorStack; a tensor storage keeps one value "
                                 "per NonTensorData (storage=list holds per-item values)", where, e->key);
        } else if (!cJSON_Compare(e->value, s->value, 1)) {
            return pk_host->fail(LOOM_ENOTSUP, "%s: NonTensorData '%s' differs from the value the storage holds "
                                 "(a storage keeps one value per NonTensorData)", where, e->key);
        }
    }
    return LOOM_OK;
}

/* Row j of data to row index[j] of the storage, every leaf. */
static void write_rows(rl_td *store, const rl_td *data, const int64_t *index, int64_t n)
{
    for (int64_t i = 0; i < data->n; i++) {
        const rl_td_entry *e = &data->e[i];
        rl_td_entry *s = rl_td_find(store, e->key);
        if (e->kind == RL_TD_DICT) {
            write_rows(s->td, e->td, index, n);
            continue;
        }
        if (e->kind != RL_TD_TENSOR || e->leaf.shape[0] == 0)
            continue;
        const size_t row = rl_leaf_nbytes(&e->leaf) / (size_t)e->leaf.shape[0];
        if (row == 0)
            continue;
        const uint8_t *src = rl_leaf_data(&e->leaf);
        uint8_t *dst = rl_leaf_data(&s->leaf);
        /* runs of consecutive slots (a round-robin batch is one or two) in one copy each */
        for (int64_t j = 0; j < n;) {
            if (index[j] < 0) {
                j++;
                continue;
            }
            int64_t k = j + 1;
            while (k < n && index[k] == index[k - 1] + 1)
                k++;
            memcpy(dst + (size_t)index[j] * row, src + (size_t)j * row, (size_t)(k - j) * row);
            j = k;
        }
    }
}

/* ------------------------------------------------------------- max-value */

static int heap_less(const rl_rb_heap_item *a, const rl_rb_heap_item *b)
{
    return a->rank < b->rank || (a->rank == b->rank && a->index < b->index);
}

static void heap_push(rl_rb *b, rl_rb_heap_item it)
{
    int64_t i = b->heap_n++;
    b->heap[i] = it;
    while (i > 0 && heap_less(&b->heap[i], &b->heap[(i - 1) / 2])) {
        rl_rb_heap_item t = b->heap[i];
        b->heap[i] = b->heap[(i - 1) / 2];
        b->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static rl_rb_heap_item heap_pop(rl_rb *b)
{
    rl_rb_heap_item top = b->heap[0];
    b->heap[0] = b->heap[--b->heap_n];
    for (int64_t i = 0;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < b->heap_n && heap_less(&b->heap[l], &b->heap[m]))
            m = l;
        if (r < b->heap_n && heap_less(&b->heap[r], &b->heap[m]))
            m = r;
        if (m == i)
            break;
        rl_rb_heap_item t = b->heap[i];
        b->heap[i] = b->heap[m];
        b->heap[m] = t;
        i = m;
    }
    return top;
}

static double elem(const rl_leaf *l, int64_t i)
{
    const void *p = rl_leaf_data(l);
    switch (l->dtype) {
    case LOOM_DTYPE_F32: return ((const float *)p)[i];
    case LOOM_DTYPE_F64: return ((const double *)p)[i];
    case LOOM_DTYPE_I64: return (double)((const int64_t *)p)[i];
    case LOOM_DTYPE_I32: return ((const int32_t *)p)[i];
    case LOOM_DTYPE_I16: return ((const int16_t *)p)[i];
    case LOOM_DTYPE_U16: return ((const uint16_t *)p)[i];
    case LOOM_DTYPE_U32: return ((const uint32_t *)p)[i];
    case LOOM_DTYPE_I8: return ((const int8_t *)p)[i];
    case LOOM_DTYPE_U8: case LOOM_DTYPE_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

/* The rank of item j: the rank_key's row, reduced. */
static double item_rank(const rl_rb *b, const rl_leaf *l, int64_t j)
{
    const int64_t per = rl_leaf_numel(l) / l->shape[0];
    double acc = elem(l, j * per);
    for (int64_t k = 1; k < per; k++) {
        double v = elem(l, j * per + k);
        acc = b->rank_mean == 2 ? (v > acc ? v : acc) : b->rank_mean == 3 ? (v < acc ? v : acc) : acc + v;
    }
    return b->rank_mean == 1 ? acc / (double)per : acc;
}

static loom_status max_value_index(rl_rb *b, const rl_td *data, int64_t n, int64_t *index)
{
    const rl_td_entry *e = rl_td_lookup(data, &b->rank_key);
    if (e == NULL || e->kind != RL_TD_TENSOR)
        return pk_host->fail(LOOM_EINVAL, "rank_key '%s' is not a tensor of the data", b->rank_key_text);
    if (e->leaf.dtype == LOOM_DTYPE_F16 || e->leaf.dtype == LOOM_DTYPE_BF16 || e->leaf.dtype == LOOM_DTYPE_F8E4M3)
        return pk_host->fail(LOOM_ENOTSUP, "rank_key '%s' is %s; f32, f64 and integer ranks are read",
                             b->rank_key_text, pk_host->dtype_name(e->leaf.dtype));
    if (b->heap == NULL) {
        b->heap = malloc((size_t)b->capacity * sizeof *b->heap);
        if (b->heap == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    /* the last item sent to a slot wins it, as torchrl's dict of replacements */
    for (int64_t j = 0; j < n; j++) {
        double rank = rl_leaf_numel(&e->leaf) == 0 ? 0 : item_rank(b, &e->leaf, j);
        index[j] = -1;
        if (b->heap_n < b->capacity) {
            index[j] = b->cursor;
            b->cursor = (b->cursor + 1) % b->capacity;
            heap_push(b, (rl_rb_heap_item){ rank, index[j] });
        } else if (rank > b->heap[0].rank) {
            rl_rb_heap_item worst = heap_pop(b);
            index[j] = worst.index;
            heap_push(b, (rl_rb_heap_item){ rank, worst.index });
        }
        if (index[j] >= 0) {
            b->write_count++;
            for (int64_t k = 0; k < j; k++)
                if (index[k] == index[j])
                    index[k] = -1;
        }
    }
    return LOOM_OK;
}

/* --------------------------------------------------------------- write */

loom_status rl_rb_write_list(rl_rb *b, cJSON *items, int64_t *index)
{
    const int64_t n = cJSON_GetArraySize(items);
    for (int64_t j = 0; j < n; j++)
        index[j] = (b->cursor + j) % b->capacity;
    b->cursor = (b->cursor + n) % b->capacity;
    b->write_count += n;
    for (int64_t j = 0; j < n; j++) {
        cJSON *it = cJSON_DetachItemFromArray(items, 0);
        cJSON_Delete(b->list[index[j]]);
        b->list[index[j]] = it;
        if (index[j] + 1 > b->len)
            b->len = index[j] + 1;
    }
    cJSON_Delete(items);
    return rl_rb_sampler_mark_update(b, index, n);
}

loom_status rl_rb_write(rl_rb *b, const rl_td *data, int64_t *index, loom_exec_ctx *ctx)
{
    if (b->storage_kind == RL_RB_LIST)
        return pk_host->fail(LOOM_EINVAL, "extend: a list storage takes JSON items (rl.rb_extend_list)");
    if (data->batch_ndim < 1 || data->batch[0] < 1)
        return pk_host->fail(LOOM_EINVAL, "extend: the data needs at least one item along batch dim 0");
    const int64_t n = data->batch[0];
    loom_status st = LOOM_OK;
    if (b->store == NULL)
        st = make_store(b, data, ctx);
    if (st == LOOM_OK)
        st = check_like(b->store, data, "extend");
    if (st != LOOM_OK)
        return st;
    if (b->writer == RL_RB_ROUND_ROBIN) {
        for (int64_t j = 0; j < n; j++)
            index[j] = (b->cursor + j) % b->capacity;
        b->cursor = (b->cursor + n) % b->capacity;
        b->write_count += n;
    } else {
        st = max_value_index(b, data, n, index);
        if (st != LOOM_OK)
            return st;
    }
    write_rows(b->store, data, index, n);
    for (int64_t j = 0; j < n; j++)
        if (index[j] + 1 > b->len)
            b->len = index[j] + 1 < b->capacity ? index[j] + 1 : b->capacity;
    return rl_rb_sampler_mark_update(b, index, n);
}
