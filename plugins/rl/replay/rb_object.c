/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_object.c - the rl.replay_buffer object class: create (the storage,
** writer and sampler chosen by the attributes; the storage itself is made
** at the first extend) and destroy.
*/
#include <stdlib.h>
#include <string.h>

#include "rb.h"
#include "rb_shared.h"

PK_ATTR_TABLE(rl_rb_class, RL_RB_CLASS_ATTRS);

static const char *const storage_values[] = { "memory", "memmap", "list", NULL };
static const char *const writer_values[] = { "round_robin", "max_value", NULL };
static const char *const reduction_values[] = { "sum", "mean", "max", "min", NULL };
static const char *const sampler_values[] = { "random", "without_replacement", "prioritized", "slice", NULL };
static const char *const dtype_values[] = { "f32", "f64", NULL };
static const loom_attr_choices rb_choices[] = {
    { .attr = PK_ATTR(rl_rb_class, storage), .values = storage_values },
    { .attr = PK_ATTR(rl_rb_class, writer), .values = writer_values },
    { .attr = PK_ATTR(rl_rb_class, reduction), .values = reduction_values },
    { .attr = PK_ATTR(rl_rb_class, sampler), .values = sampler_values },
    { .attr = PK_ATTR(rl_rb_class, dtype), .values = dtype_values },
};

static int index_of(const char *const *values, const char *s)
{
    for (int i = 0; values[i] != NULL; i++)
        if (strcmp(values[i], s) == 0)
            return i;
    return -1;
}

/* --------------------------------------------------- the registry by id */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static rl_rb **registry;
static int64_t registry_n, registry_cap, next_id = 1;

static loom_status registry_add(rl_rb *b)
{
    pthread_mutex_lock(&registry_lock);
    if (registry_n == registry_cap) {
        int64_t cap = registry_cap > 0 ? 2 * registry_cap : 16;
        rl_rb **g = realloc(registry, (size_t)cap * sizeof *g);
        if (g == NULL) {
            pthread_mutex_unlock(&registry_lock);
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        }
        registry = g;
        registry_cap = cap;
    }
    b->id = next_id++;
    registry[registry_n++] = b;
    pthread_mutex_unlock(&registry_lock);
    return LOOM_OK;
}

static void registry_remove(rl_rb *b)
{
    pthread_mutex_lock(&registry_lock);
    for (int64_t i = 0; i < registry_n; i++)
        if (registry[i] == b) {
            registry[i] = registry[--registry_n];
            break;
        }
    if (registry_n == 0) {
        free(registry);
        registry = NULL;
        registry_cap = 0;
    }
    pthread_mutex_unlock(&registry_lock);
}

rl_rb *rl_rb_registry_lock(int64_t id, const char *what)
{
    pthread_mutex_lock(&registry_lock);
    rl_rb *b = NULL;
    for (int64_t i = 0; i < registry_n && b == NULL; i++)
        if (registry[i]->id == id)
            b = registry[i];
    if (b != NULL)
        pthread_mutex_lock(&b->lock);
    pthread_mutex_unlock(&registry_lock);
    if (b == NULL)
        pk_host->fail(LOOM_ENOENT, "%s: no live rl.replay_buffer has id %lld", what, (long long)id);
    return b;
}

static void rb_destroy(void *state)
{
    rl_rb *b = state;
    if (b == NULL)
        return;
    if (b->id > 0) {
        registry_remove(b);
        pthread_mutex_lock(&b->lock);      /* an ensemble's call on it ends first */
        pthread_mutex_unlock(&b->lock);
    }
    rl_rb_sampler_free(b);
    rl_rb_shared_close(b);
    rl_td_free(b->store);
    for (int64_t i = 0; b->list != NULL && i < b->capacity; i++)
        cJSON_Delete(b->list[i]);
    free(b->list);
    free(b->heap);
    free(b->scratch_dir);
    free(b->rank_key_text);
    free(b->slice_keys_text);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

static loom_status rb_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    rl_rb *b = calloc(1, sizeof *b);
    if (b == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    b->struct_size = sizeof *b;
    b->magic = RL_RB_MAGIC;
    pthread_mutex_init(&b->lock, NULL);
    b->capacity = a[PK_ATTR(rl_rb_class, max_size)].u.i;
    b->storage_kind = index_of(storage_values, a[PK_ATTR(rl_rb_class, storage)].u.s);
    b->writer = index_of(writer_values, a[PK_ATTR(rl_rb_class, writer)].u.s);
    b->rank_mean = index_of(reduction_values, a[PK_ATTR(rl_rb_class, reduction)].u.s);
    b->sampler = index_of(sampler_values, a[PK_ATTR(rl_rb_class, sampler)].u.s);
    b->drop_last = a[PK_ATTR(rl_rb_class, drop_last)].u.b;
    b->shuffle = a[PK_ATTR(rl_rb_class, shuffle)].u.b;
    b->alpha = a[PK_ATTR(rl_rb_class, alpha)].u.f;
    b->beta = a[PK_ATTR(rl_rb_class, beta)].u.f;
    b->eps = a[PK_ATTR(rl_rb_class, eps)].u.f;
    b->seed = (uint64_t)a[PK_ATTR(rl_rb_class, seed)].u.i;
    b->max_within = a[PK_ATTR(rl_rb_class, max_priority_within_buffer)].u.b;
    b->max_index = -1;
    b->last_index = -1;
    const char *dir = a[PK_ATTR(rl_rb_class, scratch_dir)].u.s;
    for (int32_t i = 0; i < args->n_files && dir[0] == '\0'; i++)
        if (strcmp(args->files[i].name, "src") == 0)
            dir = args->files[i].path;
    loom_status st = LOOM_OK;
    if (b->capacity > ((int64_t)1 << 40))
        st = pk_host->fail(LOOM_EINVAL, "max_size %lld is larger than 2^40", (long long)b->capacity);
    else if (b->storage_kind < 0 || b->writer < 0 || b->rank_mean < 0 || b->sampler < 0)
        st = pk_host->fail(LOOM_EINVAL, "unknown storage, writer, reduction or sampler");
    else if (b->storage_kind == RL_RB_MEMMAP && dir[0] == '\0')
        st = pk_host->fail(LOOM_EINVAL, "storage=memmap needs scratch_dir");
    else if (b->storage_kind == RL_RB_LIST && (b->writer != RL_RB_ROUND_ROBIN || b->sampler == 3))
        st = pk_host->fail(LOOM_EINVAL, "storage=list takes the round_robin writer and the random, "
                           "without_replacement or prioritized sampler");
    else if (b->storage_kind == RL_RB_LIST && (b->list = calloc((size_t)b->capacity, sizeof *b->list)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "out of memory for %lld items", (long long)b->capacity);
    if (st == LOOM_OK) {
        b->scratch_dir = strdup(dir);
        const char *rk = a[PK_ATTR(rl_rb_class, rank_key)].u.s;
        size_t n = strlen(rk) + 1;
        b->rank_key_text = malloc(2 * n);
        if (b->scratch_dir == NULL || b->rank_key_text == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
        else {
            memcpy(b->rank_key_text, rk, n);
            st = rl_key_parse(rk, b->rank_key_text + n, n, &b->rank_key, "rank_key");
        }
    }
    if (st == LOOM_OK && b->sampler == RL_RB_SLICE) {
        b->num_slices = a[PK_ATTR(rl_rb_class, num_slices)].u.i;
        b->slice_len = a[PK_ATTR(rl_rb_class, slice_len)].u.i;
        b->strict_length = a[PK_ATTR(rl_rb_class, strict_length)].u.b;
        b->pad_output = a[PK_ATTR(rl_rb_class, pad_output)].u.b;
        b->cache_values = a[PK_ATTR(rl_rb_class, cache_values)].u.b;
        const loom_attr_value *span = &a[PK_ATTR(rl_rb_class, span)];
        const char *tk = a[PK_ATTR(rl_rb_class, traj_key)].u.s, *ek = a[PK_ATTR(rl_rb_class, end_key)].u.s;
        const char *rk = a[PK_ATTR(rl_rb_class, truncated_key)].u.s;
        size_t nt = strlen(tk) + 1, ne = strlen(ek) + 1, nr = strlen(rk) + 1;
        b->slice_keys_text = malloc(nt + ne + nr);
        if (span->is_set && (span->count < 1 || span->count > 2))
            st = pk_host->fail(LOOM_EINVAL, "span: one value or [left, right], got %lld values", (long long)span->count);
        for (int64_t i = 0; st == LOOM_OK && span->is_set && i < 2; i++) {
            b->span[i] = span->u.ints[span->count == 2 ? i : 0];
            if (b->span[i] < RL_RB_SPAN_ALL)
                st = pk_host->fail(LOOM_EINVAL, "span[%lld] = %lld: 0 (none), -1 (True) or a positive count",
                                   (long long)i, (long long)b->span[i]);
        }
        if (st != LOOM_OK)
            ;
        else if ((b->num_slices > 0) == (b->slice_len > 0))
            st = pk_host->fail(LOOM_EINVAL, "sampler=slice needs exactly one of num_slices and slice_len");
        else if (b->pad_output && b->strict_length)
            st = pk_host->fail(LOOM_EINVAL, "pad_output=true is incompatible with strict_length=true: padding only "
                               "happens when short trajectories are kept, which requires strict_length=false");
        else if (b->slice_keys_text == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
        else if (tk[0] != '\0')
            st = rl_key_parse(tk, b->slice_keys_text, nt, &b->traj_key, "traj_key");
        else
            st = rl_key_parse(ek, b->slice_keys_text + nt, ne, &b->end_key, "end_key");
        if (st == LOOM_OK && rk[0] != '\0')
            st = rl_key_parse(rk, b->slice_keys_text + nt + ne, nr, &b->truncated_key, "truncated_key");
        if (st == LOOM_OK && b->truncated_key.n > 0 && b->truncated_key.n + 1 > RL_TD_MAX_PATH)
            st = pk_host->fail(LOOM_EINVAL, "truncated_key: too deep");
    } else if (st == LOOM_OK && (a[PK_ATTR(rl_rb_class, pad_output)].u.b || a[PK_ATTR(rl_rb_class, span)].is_set
                                 || a[PK_ATTR(rl_rb_class, cache_values)].u.b)) {
        st = pk_host->fail(LOOM_EINVAL, "pad_output, span and cache_values are options of sampler=slice");
    }
    if (st == LOOM_OK && b->max_within && b->sampler != RL_RB_PRIORITIZED)
        st = pk_host->fail(LOOM_EINVAL, "max_priority_within_buffer is an option of sampler=prioritized");
    if (st == LOOM_OK)
        st = rl_rb_sampler_init(b, a[PK_ATTR(rl_rb_class, dtype)].u.s);
    if (st == LOOM_OK && a[PK_ATTR(rl_rb_class, shared)].u.b) {
        if (b->storage_kind != RL_RB_MEMMAP || b->writer != RL_RB_ROUND_ROBIN || b->sampler == RL_RB_PRIORITIZED)
            st = pk_host->fail(LOOM_EINVAL, "shared=true needs storage=memmap, the round_robin writer and the "
                               "random or without_replacement sampler (priority trees are not shared, as in torchrl)");
        else
            st = rl_rb_shared_open(b);
    }
    if (st == LOOM_OK)
        st = registry_add(b);
    if (st != LOOM_OK) {
        rb_destroy(b);
        return st;
    }
    *state_out = b;
    return LOOM_OK;
}

const loom_object_class rl_rb_class = {
    .struct_size = sizeof(loom_object_class),
    .name = RL_RB_CLASS,
    .doc = "torchrl's ReplayBuffer: a storage (memory, memmap), a writer (round_robin, max_value) and a sampler "
           "(random, without_replacement, prioritized, slice); methods rl.rb_*",
    PK_ATTRS(rl_rb_class_attrs),
    .create = rb_create,
    .destroy = rb_destroy,
    PK_CHOICES(rb_choices),
};
