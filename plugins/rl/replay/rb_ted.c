/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_ted.c - rl.rb_extend_ted: a TED dataset on disk (TorchRL Episode
** Data: a TensorDict in tensordict's memmap layout with action,
** observation, done/terminated/truncated at the root and their ("next",
** ...) values with ("next", "reward")) streamed into a replay buffer. The
** files are mapped, not read whole; batch dims [B, T, ...] are flattened
** to items in storage order (episode after episode), and chunk items at a
** time are copied into the buffer through its writer. Checked first: the
** keys TED requires, and done == terminated | truncated wherever all three
** are present (the flags of torchrl's step semantics).
*/
#include <stdlib.h>
#include <string.h>

#include "rb.h"
#include "../tensordict/td_nts.h"
#include "rb_shared.h"

/* The same dict with batch dims [d0, d1, ..., d(k-1)] merged into one
** (leaves share their bytes: a compact leaf's rows stay in place). */
static loom_status flatten_batch(const rl_td *td, int32_t k, rl_td **out)
{
    int64_t items = 1;
    for (int32_t d = 0; d < k; d++)
        items *= td->batch[d];
    int64_t nb[LOOM_MAX_NDIM];
    nb[0] = items;
    for (int32_t d = k; d < td->batch_ndim; d++)
        nb[d - k + 1] = td->batch[d];
    rl_td *r = rl_td_new(td->batch_ndim - k + 1, nb);
    if (r == NULL)
        return LOOM_ENOMEM;
    loom_status st = LOOM_OK;
    for (int64_t i = 0; i < td->n && st == LOOM_OK; i++) {
        const rl_td_entry *e = &td->e[i];
        rl_key one = { .n = 1, .part = { e->key } };
        if (e->kind == RL_TD_TENSOR) {
            rl_leaf l = e->leaf;
            l.shape[0] = items;
            for (int32_t d = k; d < e->leaf.ndim; d++)
                l.shape[d - k + 1] = e->leaf.shape[d];
            l.ndim = e->leaf.ndim - k + 1;
            st = rl_td_set_leaf(r, &one, &l);
        } else if (e->kind == RL_TD_DICT) {
            rl_td *sub = NULL;
            st = flatten_batch(e->td, k, &sub);
            if (st == LOOM_OK)
                st = rl_td_set_dict(r, &one, sub);
        } else if (e->stacked) {
            /* a NonTensorStack: the same elements, nested as the flattened batch */
            int64_t count = 0;
            const cJSON **el = rl_nts_elements(e, td->batch, td->batch_ndim, &count);
            cJSON *v = el != NULL ? rl_nts_nest(el, r->batch, r->batch_ndim) : NULL;
            free(el);
            st = v != NULL ? rl_td_set_json_stack(r, &one, v) : LOOM_ENOMEM;
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

static const rl_td_entry *flag(const rl_td *td, const char *a, const char *b)
{
    rl_key k = { .n = b != NULL ? 2 : 1, .part = { a, b } };
    const rl_td_entry *e = rl_td_lookup(td, &k);
    return e != NULL && e->kind == RL_TD_TENSOR && e->leaf.dtype == LOOM_DTYPE_BOOL ? e : NULL;
}

/* done == terminated | truncated, item by item, under prefix (NULL: the root). */
static loom_status check_flags(const rl_td *td, const char *path, const char *prefix)
{
    const rl_td_entry *d = flag(td, prefix != NULL ? prefix : "done", prefix != NULL ? "done" : NULL);
    const rl_td_entry *te = flag(td, prefix != NULL ? prefix : "terminated", prefix != NULL ? "terminated" : NULL);
    const rl_td_entry *tr = flag(td, prefix != NULL ? prefix : "truncated", prefix != NULL ? "truncated" : NULL);
    if (d == NULL || te == NULL || tr == NULL)
        return LOOM_OK;
    const int64_t n = rl_leaf_numel(&d->leaf);
    if (rl_leaf_numel(&te->leaf) != n || rl_leaf_numel(&tr->leaf) != n)
        return pk_host->fail(LOOM_EINVAL, "%s: %sdone, terminated and truncated have different shapes", path,
                             prefix != NULL ? "next." : "");
    const uint8_t *pd = rl_leaf_data(&d->leaf), *pt = rl_leaf_data(&te->leaf), *pr = rl_leaf_data(&tr->leaf);
    for (int64_t i = 0; i < n; i++)
        if ((pd[i] != 0) != ((pt[i] | pr[i]) != 0))
            return pk_host->fail(LOOM_EINVAL, "%s: element %lld: %sdone is %d but terminated | truncated is %d "
                                 "(TED: done = terminated | truncated)", path, (long long)i,
                                 prefix != NULL ? "next." : "", pd[i] != 0, (pt[i] | pr[i]) != 0);
    return LOOM_OK;
}

loom_status rl_rb_extend_ted(rl_rb *b, const char *path, int64_t chunk, loom_exec_ctx *ctx, int64_t *count)
{
    rl_td *raw = NULL, *td = NULL;
    loom_status st = rl_td_load_memmap(path, RL_MAP_PRIVATE, ctx, &raw);
    if (st != LOOM_OK)
        return st;
    static const char *const required[][2] = { { "action", NULL }, { "next", "reward" }, { "next", "done" } };
    for (size_t i = 0; st == LOOM_OK && i < sizeof required / sizeof required[0]; i++) {
        rl_key k = { .n = required[i][1] != NULL ? 2 : 1, .part = { required[i][0], required[i][1] } };
        const rl_td_entry *e = rl_td_lookup(raw, &k);
        if (e == NULL || e->kind != RL_TD_TENSOR)
            st = pk_host->fail(LOOM_EINVAL, "%s: not a TED dataset: no tensor %s%s%s", path, required[i][0],
                               required[i][1] != NULL ? "." : "", required[i][1] != NULL ? required[i][1] : "");
    }
    rl_key obs = { .n = 1, .part = { "observation" } }, nobs = { .n = 2, .part = { "next", "observation" } };
    if (st == LOOM_OK && (rl_td_lookup(raw, &obs) != NULL) != (rl_td_lookup(raw, &nobs) != NULL))
        st = pk_host->fail(LOOM_EINVAL, "%s: not a TED dataset: observation and next.observation come together", path);
    if (st == LOOM_OK && raw->batch_ndim < 1)
        st = pk_host->fail(LOOM_EINVAL, "%s: a TED dataset needs a batch dim", path);
    if (st == LOOM_OK)
        st = check_flags(raw, path, NULL);
    if (st == LOOM_OK)
        st = check_flags(raw, path, "next");
    /* [B, T] (or more batch dims): items in storage order */
    if (st == LOOM_OK)
        st = flatten_batch(raw, raw->batch_ndim, &td);
    const int64_t n = td != NULL ? td->batch[0] : 0;
    int64_t *idx = st == LOOM_OK ? malloc((size_t)(chunk < n ? chunk : (n > 0 ? n : 1)) * sizeof *idx) : NULL;
    int64_t *where = st == LOOM_OK ? malloc((size_t)(chunk < n ? chunk : (n > 0 ? n : 1)) * sizeof *where) : NULL;
    if (st == LOOM_OK && (idx == NULL || where == NULL))
        st = pk_host->fail(LOOM_ENOMEM, "out of memory");
    for (int64_t s = 0; st == LOOM_OK && s < n; s += chunk) {
        const int64_t m = n - s < chunk ? n - s : chunk;
        for (int64_t j = 0; j < m; j++)
            idx[j] = s + j;
        rl_td *part = NULL;
        st = rl_td_gather(td, 0, idx, m, 0, &part);
        int locked = 0;
        if (st == LOOM_OK && b->ctl != NULL) {
            st = rl_rb_shared_lock(b);
            locked = st == LOOM_OK;
        }
        if (st == LOOM_OK)
            st = rl_rb_write(b, part, where, ctx);
        if (locked)
            rl_rb_shared_unlock(b, st == LOOM_OK);
        rl_td_free(part);
    }
    free(idx);
    free(where);
    rl_td_free(td);
    rl_td_free(raw);
    if (st == LOOM_OK)
        *count = n;
    return st;
}
