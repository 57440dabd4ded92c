/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_ensemble.c - rl.replay_buffer_ensemble, torchrl's ReplayBufferEnsemble
** (read-only: its members are extended directly): a sample chooses
** num_buffer_sampled members (all of them with sample_from_all, else
** uniformly, or by the weights p with replacement as torch.multinomial
** does), draws batch_size / num_buffer_sampled items from each with the
** member's own sampler and returns them concatenated, with each item's
** member in buffer_ids. Members are named by id and looked up at every
** call, one at a time, so a member freed meanwhile is reported, never used.
*/
#include <stdlib.h>
#include <string.h>

#include "rb.h"
#include "rb_shared.h"
#include "rng.h"

PK_ATTR_TABLE(rl_rbe_class, RL_RBE_CLASS_ATTRS);

#define RL_RBE_MAGIC 0x72626531u   /* "rbe1" */

typedef struct rl_rbe {
    uint32_t struct_size, magic;
    pthread_mutex_t lock;
    int64_t n;
    int64_t *ids;
    double *cum;                    /* cumulative weights, NULL: uniform */
    int all;
    int64_t per_sample;             /* members drawn per sample */
    uint64_t seed, draws;
} rl_rbe;

static void rbe_destroy(void *state)
{
    rl_rbe *e = state;
    if (e == NULL)
        return;
    free(e->ids);
    free(e->cum);
    pthread_mutex_destroy(&e->lock);
    free(e);
}

static loom_status rbe_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    const loom_attr_value *bufs = &a[PK_ATTR(rl_rbe_class, buffers)], *p = &a[PK_ATTR(rl_rbe_class, p)];
    rl_rbe *e = calloc(1, sizeof *e);
    if (e == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    e->struct_size = sizeof *e;
    e->magic = RL_RBE_MAGIC;
    pthread_mutex_init(&e->lock, NULL);
    e->n = bufs->count;
    e->all = a[PK_ATTR(rl_rbe_class, sample_from_all)].u.b;
    e->per_sample = a[PK_ATTR(rl_rbe_class, num_buffer_sampled)].u.i;
    e->seed = (uint64_t)a[PK_ATTR(rl_rbe_class, seed)].u.i;
    if (e->per_sample == 0 || e->all)
        e->per_sample = e->n;
    loom_status st = LOOM_OK;
    e->ids = malloc((size_t)(e->n > 0 ? e->n : 1) * sizeof *e->ids);
    if (e->n < 1 || e->ids == NULL)
        st = pk_host->fail(e->ids == NULL ? LOOM_ENOMEM : LOOM_EINVAL, "buffers: give at least one id");
    for (int64_t i = 0; st == LOOM_OK && i < e->n; i++) {
        e->ids[i] = bufs->u.ints[i];
        rl_rb *b = rl_rb_registry_lock(e->ids[i], "buffers");
        if (b == NULL)
            st = LOOM_ENOENT;
        else
            pthread_mutex_unlock(&b->lock);
    }
    if (st == LOOM_OK && p->is_set) {
        double total = 0;
        e->cum = malloc((size_t)e->n * sizeof *e->cum);
        if (p->count != e->n)
            st = pk_host->fail(LOOM_EINVAL, "p has %lld weights for %lld buffers", (long long)p->count,
                               (long long)e->n);
        else if (e->cum == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
        for (int64_t i = 0; st == LOOM_OK && i < e->n; i++)
            e->cum[i] = total += p->u.floats[i];
        if (st == LOOM_OK && !(total > 0))
            st = pk_host->fail(LOOM_EINVAL, "p sums to %g; some weight must be positive", total);
    }
    if (st != LOOM_OK) {
        rbe_destroy(e);
        return st;
    }
    *state_out = e;
    return LOOM_OK;
}

const loom_object_class rl_rb_ensemble_class = {
    .struct_size = sizeof(loom_object_class),
    .name = RL_RBE_CLASS,
    .doc = "torchrl's ReplayBufferEnsemble over rl.replay_buffer members (by id); method rl.rb_ensemble_sample",
    PK_ATTRS(rl_rbe_class_attrs),
    .create = rbe_create,
    .destroy = rbe_destroy,
};

/* The member of one draw. */
static int64_t choose(rl_rbe *e, int64_t j)
{
    if (e->all)
        return j;
    const double u = pk_rng_uniform(e->seed, e->draws++);
    if (e->cum == NULL)
        return (int64_t)(u * (double)e->n);
    const double x = u * e->cum[e->n - 1];
    int64_t k = 0;
    while (k < e->n - 1 && !(x < e->cum[k]))   /* the first k with x < cum[k]: never a weight of 0 */
        k++;
    return k;
}

loom_status rl_rb_ensemble_sample_run(loom_call *call)
{
    rl_rbe *e = call->object;
    if (e == NULL || e->struct_size < sizeof *e || e->magic != RL_RBE_MAGIC)
        return pk_host->fail(LOOM_EINVAL, "not an rl.replay_buffer_ensemble object made by this pack");
    const int64_t batch = call->attrs[PK_ATTR(rl_rb_sample, batch_size)].u.i;
    const int64_t dest = call->attrs[PK_ATTR(rl_rb_sample, dest)].u.i;
    if (batch % e->per_sample != 0)
        return pk_host->fail(LOOM_EINVAL, "batch_size %lld is not divisible by num_buffer_sampled %lld",
                             (long long)batch, (long long)e->per_sample);
    const int64_t sub = batch / e->per_sample;
    pthread_mutex_lock(&e->lock);
    int64_t *members = malloc((size_t)e->per_sample * sizeof *members);
    for (int64_t j = 0; members != NULL && j < e->per_sample; j++)
        members[j] = choose(e, j);
    pthread_mutex_unlock(&e->lock);
    rl_td **parts = calloc((size_t)e->per_sample, sizeof *parts);
    int64_t *index = malloc((size_t)batch * sizeof *index), *which = malloc((size_t)batch * sizeof *which);
    loom_status st = members != NULL && parts != NULL && index != NULL && which != NULL
                     ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    int64_t total = 0;
    for (int64_t j = 0; st == LOOM_OK && j < e->per_sample; j++) {
        rl_rb *b = rl_rb_registry_lock(e->ids[members[j]], "buffers");
        if (b == NULL) {
            st = LOOM_ENOENT;
            break;
        }
        int locked_shared = 0;
        if (b->ctl != NULL) {
            st = rl_rb_shared_lock(b);
            locked_shared = st == LOOM_OK;
        }
        int64_t *idx = NULL, n = 0;
        float *w = NULL;
        if (st == LOOM_OK)
            st = rl_rb_sample_indices(b, sub, &idx, &n, &w, NULL);
        if (st == LOOM_OK && dest > 0)
            st = rl_td_gather(b->store, 0, idx, n, 0, &parts[j]);
        if (locked_shared)
            rl_rb_shared_unlock(b, 0);
        pthread_mutex_unlock(&b->lock);
        for (int64_t i = 0; st == LOOM_OK && i < n; i++) {
            index[total + i] = idx[i];
            which[total + i] = members[j];
        }
        total += st == LOOM_OK ? n : 0;
        free(idx);
        free(w);
    }
    rl_td *items = NULL;
    if (st == LOOM_OK && dest > 0) {
        st = rl_td_cat((const rl_td *const *)parts, e->per_sample, 0, &items);
        rl_key ik = { .n = 1, .part = { "index" } }, bk = { .n = 1, .part = { "buffer_ids" } };
        if (st == LOOM_OK)
            st = rl_td_set_tensor(items, &ik, LOOM_DTYPE_I64, 1, &total, index);
        if (st == LOOM_OK)
            st = rl_td_set_tensor(items, &bk, LOOM_DTYPE_I64, 1, &total, which);
    }
    loom_tensor *t = NULL;
    if (st == LOOM_OK && call->n_outputs > 0) {
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &total, &t);
        if (st == LOOM_OK && total > 0)
            memcpy((uint8_t *)t->data + t->byte_offset, index, (size_t)total * sizeof *index);
    }
    if (st == LOOM_OK && call->n_outputs > 1) {
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, &total, &t);
        if (st == LOOM_OK && total > 0)
            memcpy((uint8_t *)t->data + t->byte_offset, which, (size_t)total * sizeof *which);
    }
    rl_td_free_list(parts, parts != NULL ? e->per_sample : 0);
    free(members);
    free(index);
    free(which);
    if (st == LOOM_OK && items != NULL)
        return rl_td_registry_replace(dest, "dest", items);
    rl_td_free(items);
    return st;
}
