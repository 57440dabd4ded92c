/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_methods.c - the cpu kernels of the rl.replay_buffer methods and the
** module that registers them with the class. Each holds the buffer's lock.
*/
#include <stdlib.h>
#include <string.h>

#include "rb.h"
#include "rb_shared.h"

static rl_rb *buffer_of(loom_call *call)
{
    rl_rb *b = call->object;
    if (b == NULL || b->struct_size < sizeof *b || b->magic != RL_RB_MAGIC) {
        pk_host->fail(LOOM_EINVAL, "not an rl.replay_buffer object made by this pack");
        return NULL;
    }
    pthread_mutex_lock(&b->lock);
    return b;
}

static void done(rl_rb *b) { pthread_mutex_unlock(&b->lock); }

static void *out_data(loom_tensor *t) { return (uint8_t *)t->data + t->byte_offset; }

static loom_status rb_extend_run(loom_call *call)
{
    /* copy the source before taking the buffer's lock (the registry's lock is never taken under it) */
    rl_td *data = NULL;
    loom_status st = rl_td_registry_clone(call->attrs[PK_ATTR(rl_rb_extend, source)].u.i, "source", &data);
    if (st != LOOM_OK)
        return st;
    rl_rb *b = buffer_of(call);
    if (b == NULL) {
        rl_td_free(data);
        return LOOM_EINVAL;
    }
    int64_t n = data->batch_ndim > 0 ? data->batch[0] : 0;
    loom_tensor *out = NULL;
    st = n > 0 ? pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &out)
               : pk_host->fail(LOOM_EINVAL, "extend: the data needs at least one item along batch dim 0");
    const int shared = b->ctl != NULL;
    if (st == LOOM_OK && shared)
        st = rl_rb_shared_lock(b);
    if (st == LOOM_OK) {
        st = rl_rb_write(b, data, out_data(out), call->ctx);
        if (shared)
            rl_rb_shared_unlock(b, st == LOOM_OK);
    }
    done(b);
    rl_td_free(data);
    return st;
}

static loom_status rb_extend_list_run(loom_call *call)
{
    const char *text = call->attrs[0].u.s;
    cJSON *items = cJSON_Parse(text);
    if (items == NULL || !cJSON_IsArray(items) || cJSON_GetArraySize(items) == 0) {
        cJSON_Delete(items);
        return pk_host->fail(LOOM_EINVAL, "json: '%.80s' is not a non-empty JSON array of items", text);
    }
    rl_rb *b = buffer_of(call);
    if (b == NULL) {
        cJSON_Delete(items);
        return LOOM_EINVAL;
    }
    int64_t n = cJSON_GetArraySize(items);
    loom_tensor *out = NULL;
    loom_status st = b->storage_kind == RL_RB_LIST ? pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &out)
                     : pk_host->fail(LOOM_EINVAL, "rl.rb_extend_list needs storage=list");
    if (st == LOOM_OK) {
        st = rl_rb_write_list(b, items, out_data(out));
        items = NULL;
    }
    cJSON_Delete(items);
    done(b);
    return st;
}

static loom_status rb_extend_ted_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    int64_t one = 1, count = 0;
    loom_tensor *out = NULL;
    loom_status st = b->storage_kind == RL_RB_LIST ? pk_host->fail(LOOM_EINVAL, "a list storage cannot take a TED dataset")
                     : rl_rb_extend_ted(b, call->attrs[0].u.s, call->attrs[1].u.i, call->ctx, &count);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &one, &out);
    if (st == LOOM_OK)
        memcpy(out_data(out), &count, sizeof count);
    done(b);
    return st;
}

/* The items of a list storage at idx, as a JSON list under "data". */
static loom_status list_items(const rl_rb *b, const int64_t *idx, int64_t n, rl_td **out)
{
    cJSON *arr = cJSON_CreateArray();
    for (int64_t i = 0; arr != NULL && i < n; i++) {
        cJSON *v = b->list[idx[i]] != NULL ? cJSON_Duplicate(b->list[idx[i]], 1) : cJSON_CreateNull();
        if (v == NULL) {
            cJSON_Delete(arr);
            arr = NULL;
        } else {
            cJSON_AddItemToArray(arr, v);
        }
    }
    rl_td *td = arr != NULL ? rl_td_new(1, &n) : NULL;
    if (td == NULL) {
        cJSON_Delete(arr);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    rl_key dk = { .n = 1, .part = { "data" } };
    loom_status st = rl_td_set_json(td, &dk, arr);
    if (st != LOOM_OK) {
        rl_td_free(td);
        return st;
    }
    *out = td;
    return LOOM_OK;
}

/* One bool per item of the sample at key ([n, 1] as torchrl writes them). */
static loom_status set_flags(rl_td *items, const rl_key *key, const uint8_t *v, int64_t n, int column)
{
    const int64_t shape[2] = { n, 1 };
    return rl_td_set_tensor(items, key, LOOM_DTYPE_BOOL, column ? 2 : 1, shape, v);
}

/* Whether item i of a stored flag is set (any nonzero element of its row). */
static int flag_at(const rl_td_entry *e, int64_t i)
{
    const size_t per = rl_leaf_nbytes(&e->leaf) / (size_t)(e->leaf.shape[0] > 0 ? e->leaf.shape[0] : 1);
    const uint8_t *p = (const uint8_t *)rl_leaf_data(&e->leaf) + (size_t)i * per;
    for (size_t k = 0; k < per; k++)
        if (p[k] != 0)
            return 1;
    return 0;
}

/* torchrl's SliceSampler._finalize_index on a TensorDict sample: the last
** real item of each slice truncated at truncated_key, done (beside it) the
** stored done or truncated, terminated the stored one or false; padded
** samples get ("collector", "mask"), true at real items. */
static loom_status mark_slices(const rl_rb *b, const rl_rb_slices *s, rl_td *items, int64_t n)
{
    loom_status st = LOOM_OK;
    if (b->truncated_key.n > 0) {
        uint8_t *trunc = calloc((size_t)(n > 0 ? n : 1), 3);
        if (trunc == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        uint8_t *done = trunc + n, *term = trunc + 2 * n;
        int64_t at = 0;
        for (int64_t j = 0; j < s->n_slices; j++) {
            const int64_t width = s->target > 0 ? s->target : s->len[j];
            if (s->len[j] > 0)
                trunc[at + s->len[j] - 1] = 1;
            at += width;
        }
        rl_key dk = b->truncated_key, tk = b->truncated_key;
        dk.part[dk.n - 1] = "done";
        tk.part[tk.n - 1] = "terminated";
        const rl_td_entry *de = rl_td_lookup(items, &dk), *te = rl_td_lookup(items, &tk);
        for (int64_t i = 0; i < n; i++) {
            done[i] = trunc[i] || (de != NULL && de->kind == RL_TD_TENSOR && flag_at(de, i));
            term[i] = te != NULL && te->kind == RL_TD_TENSOR && flag_at(te, i);
        }
        st = set_flags(items, &b->truncated_key, trunc, n, 1);
        if (st == LOOM_OK)
            st = set_flags(items, &dk, done, n, 1);
        if (st == LOOM_OK)
            st = set_flags(items, &tk, term, n, 1);
        free(trunc);
    }
    if (st == LOOM_OK && s->mask != NULL) {
        rl_key mk = { .n = 2, .part = { "collector", "mask" } };
        st = set_flags(items, &mk, s->mask, n, 0);
    }
    return st;
}

static loom_status rb_trajectories_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    const int64_t *v[3];
    int64_t n = 0;
    loom_status st = rl_rb_trajectories(b, &v[0], &v[1], &v[2], &n);
    for (int32_t k = 0; st == LOOM_OK && k < 3; k++) {
        loom_tensor *t = NULL;
        st = pk_host->alloc_output(call, k, LOOM_DTYPE_I64, 1, &n, &t);
        if (st == LOOM_OK && n > 0)
            memcpy(out_data(t), v[k], (size_t)n * sizeof(int64_t));
    }
    done(b);
    return st;
}

static loom_status rb_sample_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    const int64_t batch = call->attrs[PK_ATTR(rl_rb_sample, batch_size)].u.i;
    const int64_t dest = call->attrs[PK_ATTR(rl_rb_sample, dest)].u.i;
    int64_t *idx = NULL, n = 0;
    float *w = NULL;
    loom_status st = batch > ((int64_t)1 << 32) ? pk_host->fail(LOOM_EINVAL, "batch_size %lld is too large",
                                                                (long long)batch)
                                               : LOOM_OK;
    const int shared = b->ctl != NULL;
    int locked = 0;
    if (st == LOOM_OK && shared) {
        st = rl_rb_shared_lock(b);
        locked = st == LOOM_OK;
    }
    rl_rb_slices slices = { 0 };
    if (st == LOOM_OK)
        st = rl_rb_sample_indices(b, batch, &idx, &n, &w, &slices);
    rl_td *items = NULL;
    if (st == LOOM_OK && dest > 0) {
        st = b->storage_kind == RL_RB_LIST ? list_items(b, idx, n, &items) : rl_td_gather(b->store, 0, idx, n, 0, &items);
        rl_key ik = { .n = 1, .part = { "index" } }, wk = { .n = 1, .part = { "priority_weight" } };
        if (st == LOOM_OK)
            st = rl_td_set_tensor(items, &ik, LOOM_DTYPE_I64, 1, &n, idx);
        if (st == LOOM_OK && w != NULL)
            st = rl_td_set_tensor(items, &wk, LOOM_DTYPE_F32, 1, &n, w);
        if (st == LOOM_OK && b->sampler == RL_RB_SLICE)
            st = mark_slices(b, &slices, items, n);
    }
    rl_rb_slices_free(&slices);
    if (locked)
        rl_rb_shared_unlock(b, 0);
    loom_tensor *t = NULL;
    if (st == LOOM_OK && call->n_outputs > 0) {
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &t);
        if (st == LOOM_OK && n > 0)
            memcpy(out_data(t), idx, (size_t)n * sizeof *idx);
    }
    if (st == LOOM_OK && call->n_outputs > 1) {
        int64_t nw = w != NULL ? n : 0;
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 1, &nw, &t);
        if (st == LOOM_OK && nw > 0)
            memcpy(out_data(t), w, (size_t)nw * sizeof *w);
    }
    done(b);
    free(idx);
    free(w);
    /* the destination's lock is taken with no buffer lock held */
    if (st == LOOM_OK && items != NULL)
        return rl_td_registry_replace(dest, "dest", items);
    rl_td_free(items);
    return st;
}

static loom_status rb_update_priority_run(loom_call *call)
{
    const loom_tensor *ix = call->inputs[0], *pr = call->inputs[1];
    int64_t n = ix->shape[0], np = 1;
    for (int32_t d = 0; d < pr->ndim; d++)
        np *= pr->shape[d];
    const int f32 = loom_dtype_from_dl(pr->dtype) == LOOM_DTYPE_F32;
    double *p = malloc((size_t)(np > 0 ? np : 1) * sizeof *p);
    if (p == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    const void *src = (const uint8_t *)pr->data + pr->byte_offset;
    for (int64_t i = 0; i < np; i++)
        p[i] = f32 ? (double)((const float *)src)[i] : ((const double *)src)[i];
    rl_rb *b = buffer_of(call);
    loom_status st = b != NULL ? rl_rb_update_priority(b, (const int64_t *)((const uint8_t *)ix->data + ix->byte_offset),
                                                       n, p, np, f32)
                               : LOOM_EINVAL;
    if (b != NULL)
        done(b);
    free(p);
    return st;
}

static loom_status rb_priority_weight_run(loom_call *call)
{
    const loom_tensor *ix = call->inputs[0];
    int64_t n = ix->shape[0];
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    loom_tensor *t = NULL;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, &n, &t);
    if (st == LOOM_OK)
        st = rl_rb_priority_weight(b, (const int64_t *)((const uint8_t *)ix->data + ix->byte_offset), n, out_data(t));
    done(b);
    return st;
}

static loom_status rb_priorities_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    loom_status st = b->sampler == RL_RB_PRIORITIZED ? LOOM_OK
                     : pk_host->fail(LOOM_EINVAL, "the buffer's sampler is not prioritized");
    loom_tensor *t = NULL;
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 1, &b->len, &t);
    for (int64_t i = 0; st == LOOM_OK && i < b->len; i++)
        ((double *)out_data(t))[i] = rl_segtree_at(&b->sum, i);
    done(b);
    return st;
}

static loom_status rb_len_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    int64_t two = 2;
    loom_tensor *t = NULL;
    loom_status st = b->ctl != NULL ? rl_rb_shared_lock(b) : LOOM_OK;
    if (st == LOOM_OK && b->ctl != NULL)
        rl_rb_shared_unlock(b, 0);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &two, &t);
    if (st == LOOM_OK) {
        ((int64_t *)out_data(t))[0] = b->len;
        ((int64_t *)out_data(t))[1] = b->write_count;
    }
    done(b);
    return st;
}

static loom_status rb_dumps_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    loom_status st = rl_rb_dumps(b, call->attrs[PK_ATTR(rl_rb_dumps, path)].u.s,
                                 call->attrs[PK_ATTR(rl_rb_dumps, sync)].u.b, call->ctx);
    done(b);
    return st;
}

static loom_status rb_loads_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    loom_status st = rl_rb_loads(b, call->attrs[PK_ATTR(rl_rb_path, path)].u.s, call->ctx);
    done(b);
    return st;
}

static loom_status rb_id_run(loom_call *call)
{
    rl_rb *b = buffer_of(call);
    if (b == NULL)
        return LOOM_EINVAL;
    int64_t one = 1;
    loom_tensor *t = NULL;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &one, &t);
    if (st == LOOM_OK)
        memcpy(out_data(t), &b->id, sizeof b->id);
    done(b);
    return st;
}

static const loom_object_class *const rb_classes[] = { &rl_rb_class, &rl_rb_ensemble_class };

static const loom_kernel_desc rb_cpu_kernels[] = {
    PK_KERNEL_CPU(rl_rb_extend_schema, "cpu:rb", 0, rb_extend_run),
    PK_KERNEL_CPU(rl_rb_sample_schema, "cpu:rb", 0, rb_sample_run),
    PK_KERNEL_CPU(rl_rb_update_priority_schema, "cpu:rb", 0, rb_update_priority_run),
    PK_KERNEL_CPU(rl_rb_priority_weight_schema, "cpu:rb", 0, rb_priority_weight_run),
    PK_KERNEL_CPU(rl_rb_priorities_schema, "cpu:rb", 0, rb_priorities_run),
    PK_KERNEL_CPU(rl_rb_len_schema, "cpu:rb", 0, rb_len_run),
    PK_KERNEL_CPU(rl_rb_dumps_schema, "cpu:atomic-dump", 0, rb_dumps_run),
    PK_KERNEL_CPU(rl_rb_loads_schema, "cpu:rb", 0, rb_loads_run),
    PK_KERNEL_CPU(rl_rb_id_schema, "cpu:rb", 0, rb_id_run),
    PK_KERNEL_CPU(rl_rb_extend_list_schema, "cpu:rb", 0, rb_extend_list_run),
    PK_KERNEL_CPU(rl_rb_extend_ted_schema, "cpu:rb", 0, rb_extend_ted_run),
    PK_KERNEL_CPU(rl_rb_ensemble_sample_schema, "cpu:rb", 0, rl_rb_ensemble_sample_run),
    PK_KERNEL_CPU(rl_rb_trajectories_schema, "cpu:rb", 0, rb_trajectories_run),
};

const pk_module rl_replay_cpu = {
    .name = "replay",
    .ops = rl_rb_ops, .n_ops = PK_COUNT(rl_rb_ops),
    .classes = rb_classes, .n_classes = PK_COUNT(rb_classes),
    .kernels = rb_cpu_kernels, .n_kernels = PK_COUNT(rb_cpu_kernels),
};
