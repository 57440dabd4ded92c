/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_ops.c - the TensorDict operations that make new dicts (td.h): index,
** gather, stack, cat, split, unbind, apply, flatten and unflatten of keys,
** update, select and exclude. Leaves are compact, so an operation along
** batch dim d sees each leaf as [outer, shape[d], inner] and moves whole
** inner rows with memcpy.
*/
#include "td.h"
#include "td_nts.h"

#include <stdlib.h>
#include <string.h>

#include "pack.h"

/* A new dict whose top batch_size is batch[0..bnd) and whose nested dicts
** keep the dims they have beyond td's; every tensor leaf is fn's result,
** every NonTensorStack moved as mv says (rl_nts_map). */
typedef loom_status (*leaf_fn)(void *user, const rl_leaf *in, rl_leaf *out);
typedef struct nt_move {
    int32_t dim;
    const int64_t *idx;     /* NULL: a new dim of one at dim */
    int64_t n;
    int squeeze;
} nt_move;

/* Set a non-tensor value made by td_nts.c (owned). */
static loom_status set_non_tensor(rl_td *td, const rl_key *key, cJSON *v, int stacked)
{
    return stacked ? rl_td_set_json_stack(td, key, v) : rl_td_set_json(td, key, v);
}

static loom_status map_td(const rl_td *td, int32_t bnd, const int64_t *batch, leaf_fn fn, void *user,
                          const nt_move *mv, rl_td **out)
{
    int64_t nb[LOOM_MAX_NDIM];
    for (int32_t d = 0; d < bnd; d++)
        nb[d] = batch[d];
    rl_td *r = rl_td_new(bnd, nb);
    if (r == NULL)
        return LOOM_ENOMEM;
    for (int64_t i = 0; i < td->n; i++) {
        const rl_td_entry *e = &td->e[i];
        rl_key key = { .n = 1, .part = { e->key } };
        loom_status st;
        if (e->kind == RL_TD_TENSOR) {
            rl_leaf l = { 0 };
            st = fn(user, &e->leaf, &l);
            if (st == LOOM_OK) {
                st = rl_td_set_leaf(r, &key, &l);
                rl_buf_release(l.buf);
            }
        } else if (e->kind == RL_TD_DICT) {
            /* nested batch: the new top dims, then the sub-dict's own extra dims */
            int64_t sb[LOOM_MAX_NDIM];
            int32_t sn = bnd + (e->td->batch_ndim - td->batch_ndim);
            if (sn > LOOM_MAX_NDIM) {
                rl_td_free(r);
                return pk_host->fail(LOOM_EINVAL, "key '%s': too many batch dims", e->key);
            }
            for (int32_t d = 0; d < bnd; d++)
                sb[d] = nb[d];
            for (int32_t d = td->batch_ndim; d < e->td->batch_ndim; d++)
                sb[bnd + d - td->batch_ndim] = e->td->batch[d];
            rl_td *sub = NULL;
            st = map_td(e->td, sn, sb, fn, user, mv, &sub);
            if (st == LOOM_OK)
                st = rl_td_set_dict(r, &key, sub);
        } else {
            cJSON *v = NULL;
            int stacked = 0;
            st = rl_nts_map(e, td->batch, td->batch_ndim, mv->dim, mv->idx, mv->n, mv->squeeze, &v, &stacked);
            if (st == LOOM_OK)
                st = set_non_tensor(r, &key, v, stacked);
        }
        if (st != LOOM_OK) {
            rl_td_free(r);
            return st;
        }
    }
    *out = r;
    return LOOM_OK;
}

static void split_at(const rl_leaf *l, int32_t dim, int64_t *outer, size_t *inner)
{
    int64_t o = 1;
    size_t in = pk_host->dtype_size(l->dtype);
    for (int32_t d = 0; d < dim; d++)
        o *= l->shape[d];
    for (int32_t d = dim + 1; d < l->ndim; d++)
        in *= (size_t)l->shape[d];
    *outer = o;
    *inner = in;
}

/* ----------------------------------------------------------------- gather */

typedef struct gather_args {
    int32_t dim;
    const int64_t *idx;
    int64_t n;
    int squeeze;
} gather_args;

static loom_status gather_leaf(void *user, const rl_leaf *in, rl_leaf *out)
{
    const gather_args *g = user;
    int64_t outer;
    size_t inner;
    split_at(in, g->dim, &outer, &inner);
    *out = *in;
    out->buf = NULL;
    if (g->squeeze) {
        for (int32_t d = g->dim; d + 1 < in->ndim; d++)
            out->shape[d] = in->shape[d + 1];
        out->ndim--;
    } else {
        out->shape[g->dim] = g->n;
    }
    size_t nbytes = rl_leaf_nbytes(out);
    out->buf = rl_buf_new(nbytes);
    if (out->buf == NULL)
        return LOOM_ENOMEM;
    if (nbytes == 0)
        return LOOM_OK;
    const uint8_t *src = rl_leaf_data(in);
    uint8_t *dst = out->buf->data;
    const int64_t mid = in->shape[g->dim];
    /* rows picked at random (a replay sample) miss the cache: fetch a few ahead */
    enum { AHEAD = 8 };
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < g->n; j++) {
            if (j + AHEAD < g->n)
                __builtin_prefetch(src + ((size_t)o * (size_t)mid + (size_t)g->idx[j + AHEAD]) * inner);
            memcpy(dst + ((size_t)o * (size_t)g->n + (size_t)j) * inner,
                   src + ((size_t)o * (size_t)mid + (size_t)g->idx[j]) * inner, inner);
        }
    return LOOM_OK;
}

loom_status rl_td_gather(const rl_td *td, int32_t dim, const int64_t *idx, int64_t n, int squeeze, rl_td **out)
{
    if (dim < 0 || dim >= td->batch_ndim)
        return pk_host->fail(LOOM_EINVAL, "batch dim %d is not in [0, %d)", (int)dim, (int)td->batch_ndim);
    for (int64_t j = 0; idx != NULL && j < n; j++)     /* idx NULL: a slice of a dict without entries */
        if (idx[j] < 0 || idx[j] >= td->batch[dim])
            return pk_host->fail(LOOM_EINVAL, "index %lld is out of range for batch dim %d of size %lld",
                                 (long long)idx[j], (int)dim, (long long)td->batch[dim]);
    int64_t nb[LOOM_MAX_NDIM];
    int32_t bnd = 0;
    for (int32_t d = 0; d < td->batch_ndim; d++) {
        if (d == dim && squeeze)
            continue;
        nb[bnd++] = d == dim ? n : td->batch[d];
    }
    gather_args g = { .dim = dim, .idx = idx, .n = n, .squeeze = squeeze };
    const nt_move mv = { .dim = dim, .idx = idx, .n = n, .squeeze = squeeze };
    return map_td(td, bnd, nb, gather_leaf, &g, &mv, out);
}

loom_status rl_td_index(const rl_td *td, const rl_index *ix, rl_td **out)
{
    if (td->batch_ndim < 1)
        return pk_host->fail(LOOM_EINVAL, "a TensorDict with an empty batch_size cannot be indexed");
    const int64_t size = td->batch[0];
    int64_t one;
    int64_t *idx = NULL;
    int64_t n = 0;
    loom_status st = LOOM_OK;
    switch (ix->kind) {
    case RL_INDEX_INT:
        one = ix->i < 0 ? ix->i + size : ix->i;
        if (one < 0 || one >= size)
            return pk_host->fail(LOOM_EINVAL, "index %lld is out of range for batch dim 0 of size %lld",
                                 (long long)ix->i, (long long)size);
        return rl_td_gather(td, 0, &one, 1, 1, out);
    case RL_INDEX_SLICE: {
        if (ix->step <= 0)
            return pk_host->fail(LOOM_EINVAL, "slice step %lld must be positive", (long long)ix->step);
        int64_t a = ix->start, b = ix->stop;
        a = a == INT64_MIN ? 0 : a < 0 ? (a + size < 0 ? 0 : a + size) : (a > size ? size : a);
        b = b == INT64_MAX ? size : b < 0 ? (b + size < 0 ? 0 : b + size) : (b > size ? size : b);
        int64_t cnt = b > a ? (b - a + ix->step - 1) / ix->step : 0;
        if (td->n == 0) {   /* nothing to gather: only the batch size changes (a file's may be huge) */
            n = cnt;
            break;
        }
        idx = malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof *idx);
        if (idx == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of memory for an index");
        for (int64_t j = 0; j < cnt; j++)
            idx[j] = a + j * ix->step;
        n = cnt;
        break;
    }
    case RL_INDEX_MASK:
        if (ix->n != size)
            return pk_host->fail(LOOM_EINVAL, "a boolean mask of %lld elements for batch dim 0 of size %lld",
                                 (long long)ix->n, (long long)size);
        idx = malloc((size_t)(size > 0 ? size : 1) * sizeof *idx);
        if (idx == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of memory for an index");
        for (int64_t j = 0; j < size; j++)
            if (ix->mask[j])
                idx[n++] = j;
        break;
    case RL_INDEX_TENSOR:
        idx = malloc((size_t)(ix->n > 0 ? ix->n : 1) * sizeof *idx);
        if (idx == NULL)
            return pk_host->fail(LOOM_ENOMEM, "out of memory for an index");
        for (int64_t j = 0; j < ix->n && st == LOOM_OK; j++) {
            int64_t v = ix->idx[j] < 0 ? ix->idx[j] + size : ix->idx[j];
            if (v < 0 || v >= size)
                st = pk_host->fail(LOOM_EINVAL, "index[%lld] = %lld is out of range for batch dim 0 of size %lld",
                                   (long long)j, (long long)ix->idx[j], (long long)size);
            idx[j] = v;
        }
        n = ix->n;
        break;
    default:
        return pk_host->fail(LOOM_EINVAL, "unknown index kind %d", (int)ix->kind);
    }
    if (st == LOOM_OK)
        st = rl_td_gather(td, 0, idx, n, 0, out);
    free(idx);
    return st;
}

/* -------------------------------------------------------------- stack, cat */

static loom_status same_structure(const rl_td *const *tds, int64_t n, const char *what)
{
    for (int64_t k = 1; k < n; k++)
        if (tds[k]->n != tds[0]->n)
            return pk_host->fail(LOOM_EINVAL, "%s: TensorDict %lld has %lld keys, TensorDict 0 has %lld", what,
                                 (long long)k, (long long)tds[k]->n, (long long)tds[0]->n);
    return LOOM_OK;
}

/* cat of leaves that agree but for dim. */
static loom_status cat_leaves(const rl_leaf *const *ls, int64_t n, int32_t dim, const char *key, rl_leaf *out)
{
    const rl_leaf *f = ls[0];
    int64_t total = 0;
    for (int64_t k = 0; k < n; k++) {
        const rl_leaf *l = ls[k];
        int ok = l->dtype == f->dtype && l->ndim == f->ndim && dim < l->ndim;
        for (int32_t d = 0; ok && d < l->ndim; d++)
            ok = d == dim || l->shape[d] == f->shape[d];
        if (!ok)
            return pk_host->fail(LOOM_EINVAL, "key '%s': the tensor of TensorDict %lld (%s, %d dims) does not "
                                 "match that of TensorDict 0 (%s, %d dims) but for dim %d", key, (long long)k,
                                 pk_host->dtype_name(l->dtype), (int)l->ndim, pk_host->dtype_name(f->dtype),
                                 (int)f->ndim, (int)dim);
        total += l->shape[dim];
    }
    *out = *f;
    out->shape[dim] = total;
    size_t nbytes = rl_leaf_nbytes(out);
    out->buf = rl_buf_new(nbytes);
    if (out->buf == NULL)
        return LOOM_ENOMEM;
    if (nbytes == 0)
        return LOOM_OK;
    int64_t outer;
    size_t inner;
    split_at(f, dim, &outer, &inner);
    uint8_t *dst = out->buf->data;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < n; k++) {
            size_t row = (size_t)ls[k]->shape[dim] * inner;
            if (row > 0)
                memcpy(dst, (const uint8_t *)rl_leaf_data(ls[k]) + (size_t)o * row, row);
            dst += row;
        }
    return LOOM_OK;
}

static loom_status cat_dicts(const rl_td *const *tds, int64_t n, int32_t dim, rl_td **out)
{
    loom_status st = same_structure(tds, n, "cat");
    if (st != LOOM_OK)
        return st;
    int64_t nb[LOOM_MAX_NDIM];
    for (int32_t d = 0; d < tds[0]->batch_ndim; d++)
        nb[d] = tds[0]->batch[d];
    nb[dim] = 0;
    for (int64_t k = 0; k < n; k++) {
        int ok = tds[k]->batch_ndim == tds[0]->batch_ndim;
        for (int32_t d = 0; ok && d < tds[0]->batch_ndim; d++)
            ok = d == dim || tds[k]->batch[d] == tds[0]->batch[d];
        if (!ok)
            return pk_host->fail(LOOM_EINVAL, "cat: the batch_size of TensorDict %lld does not match that of "
                                 "TensorDict 0 but for dim %d", (long long)k, (int)dim);
        nb[dim] += tds[k]->batch[dim];
    }
    rl_td *r = rl_td_new(tds[0]->batch_ndim, nb);
    if (r == NULL)
        return LOOM_ENOMEM;
    const rl_td_entry **es = malloc((size_t)n * sizeof *es);
    const rl_leaf **ls = malloc((size_t)n * sizeof *ls);
    const rl_td **subs = malloc((size_t)n * sizeof *subs);
    if (es == NULL || ls == NULL || subs == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "out of memory");
    for (int64_t i = 0; st == LOOM_OK && i < tds[0]->n; i++) {
        const char *key = tds[0]->e[i].key;
        for (int64_t k = 0; st == LOOM_OK && k < n; k++) {
            es[k] = rl_td_find(tds[k], key);
            if (es[k] == NULL || es[k]->kind != tds[0]->e[i].kind)
                st = pk_host->fail(LOOM_EINVAL, "cat: key '%s' of TensorDict 0 is %s in TensorDict %lld", key,
                                   es[k] == NULL ? "absent" : "of another kind", (long long)k);
        }
        if (st != LOOM_OK)
            break;
        rl_key one = { .n = 1, .part = { key } };
        if (es[0]->kind == RL_TD_TENSOR) {
            for (int64_t k = 0; k < n; k++)
                ls[k] = &es[k]->leaf;
            rl_leaf l;
            st = cat_leaves(ls, n, dim, key, &l);
            if (st == LOOM_OK) {
                st = rl_td_set_leaf(r, &one, &l);
                rl_buf_release(l.buf);
            }
        } else if (es[0]->kind == RL_TD_DICT) {
            for (int64_t k = 0; k < n; k++)
                subs[k] = es[k]->td;
            rl_td *sub = NULL;
            st = cat_dicts(subs, n, dim, &sub);
            if (st == LOOM_OK)
                st = rl_td_set_dict(r, &one, sub);
        } else {
            /* equal NonTensorData stay one; else a NonTensorStack of every element */
            const int64_t **bs = malloc((size_t)n * sizeof *bs);
            cJSON *v = NULL;
            int stacked = 0;
            for (int64_t k = 0; bs != NULL && k < n; k++)
                bs[k] = tds[k]->batch;
            st = bs != NULL ? rl_nts_cat(es, bs, n, tds[0]->batch_ndim, dim, nb, &v, &stacked)
                            : pk_host->fail(LOOM_ENOMEM, "out of memory");
            free(bs);
            if (st == LOOM_OK)
                st = set_non_tensor(r, &one, v, stacked);
        }
    }
    free(es);
    free(ls);
    free(subs);
    if (st != LOOM_OK) {
        rl_td_free(r);
        return st;
    }
    *out = r;
    return LOOM_OK;
}

loom_status rl_td_cat(const rl_td *const *tds, int64_t n, int32_t dim, rl_td **out)
{
    if (n < 1)
        return pk_host->fail(LOOM_EINVAL, "cat of no TensorDicts");
    if (dim < 0 || dim >= tds[0]->batch_ndim)
        return pk_host->fail(LOOM_EINVAL, "cat: dim %d is not a batch dim of [0, %d)", (int)dim,
                             (int)tds[0]->batch_ndim);
    return cat_dicts(tds, n, dim, out);
}

static loom_status unsqueeze_leaf(void *user, const rl_leaf *in, rl_leaf *out)
{
    int32_t dim = *(const int32_t *)user;
    if (in->ndim == LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "a tensor of %d dims cannot gain one", LOOM_MAX_NDIM);
    *out = *in;
    for (int32_t d = in->ndim; d > dim; d--)
        out->shape[d] = in->shape[d - 1];
    out->shape[dim] = 1;
    out->ndim++;
    out->buf = rl_buf_retain(in->buf);   /* compact: the same bytes */
    return LOOM_OK;
}

loom_status rl_td_stack(const rl_td *const *tds, int64_t n, int32_t dim, rl_td **out)
{
    if (n < 1)
        return pk_host->fail(LOOM_EINVAL, "stack of no TensorDicts");
    if (dim < 0 || dim > tds[0]->batch_ndim || tds[0]->batch_ndim == LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "stack: dim %d is not in [0, %d]", (int)dim, (int)tds[0]->batch_ndim);
    for (int64_t k = 1; k < n; k++) {
        int ok = tds[k]->batch_ndim == tds[0]->batch_ndim;
        for (int32_t d = 0; ok && d < tds[0]->batch_ndim; d++)
            ok = tds[k]->batch[d] == tds[0]->batch[d];
        if (!ok)
            return pk_host->fail(LOOM_EINVAL, "stack: the batch_size of TensorDict %lld differs from that of "
                                 "TensorDict 0", (long long)k);
    }
    rl_td **u = calloc((size_t)n, sizeof *u);
    if (u == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_status st = LOOM_OK;
    for (int64_t k = 0; k < n && st == LOOM_OK; k++) {
        int64_t nb[LOOM_MAX_NDIM];
        for (int32_t d = 0, s = 0; d <= tds[k]->batch_ndim; d++)
            nb[d] = d == dim ? 1 : tds[k]->batch[s++];
        const nt_move mv = { .dim = dim };
        st = map_td(tds[k], tds[k]->batch_ndim + 1, nb, unsqueeze_leaf, &dim, &mv, &u[k]);
    }
    if (st == LOOM_OK)
        st = cat_dicts((const rl_td *const *)u, n, dim, out);
    rl_td_free_list(u, n);
    return st;
}

/* ------------------------------------------------------------ split, unbind */

void rl_td_free_list(rl_td **tds, int64_t n)
{
    if (tds == NULL)
        return;
    for (int64_t i = 0; i < n; i++)
        rl_td_free(tds[i]);
    free(tds);
}

loom_status rl_td_split(const rl_td *td, const int64_t *sizes, int64_t n_sizes, int32_t dim, rl_td ***out,
                        int64_t *out_n)
{
    if (dim < 0 || dim >= td->batch_ndim)
        return pk_host->fail(LOOM_EINVAL, "split: dim %d is not a batch dim of [0, %d)", (int)dim,
                             (int)td->batch_ndim);
    const int64_t size = td->batch[dim];
    int64_t pieces;
    if (n_sizes == 1) {
        if (sizes[0] <= 0)
            return pk_host->fail(LOOM_EINVAL, "split: split_size %lld must be positive", (long long)sizes[0]);
        pieces = size == 0 ? 1 : (size + sizes[0] - 1) / sizes[0];
    } else {
        int64_t sum = 0;
        for (int64_t i = 0; i < n_sizes; i++) {
            if (sizes[i] < 0)
                return pk_host->fail(LOOM_EINVAL, "split: size %lld is negative", (long long)sizes[i]);
            sum += sizes[i];
        }
        if (sum != size || n_sizes < 1)
            return pk_host->fail(LOOM_EINVAL, "split: sizes sum to %lld, batch dim %d is %lld", (long long)sum,
                                 (int)dim, (long long)size);
        pieces = n_sizes;
    }
    rl_td **r = calloc((size_t)pieces, sizeof *r);
    int64_t *idx = malloc((size_t)(size > 0 ? size : 1) * sizeof *idx);
    loom_status st = r != NULL && idx != NULL ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    int64_t at = 0;
    for (int64_t p = 0; p < pieces && st == LOOM_OK; p++) {
        int64_t len = n_sizes == 1 ? (size - at < sizes[0] ? size - at : sizes[0]) : sizes[p];
        for (int64_t j = 0; j < len; j++)
            idx[j] = at + j;
        st = rl_td_gather(td, dim, idx, len, 0, &r[p]);
        at += len;
    }
    free(idx);
    if (st != LOOM_OK) {
        rl_td_free_list(r, pieces);
        return st;
    }
    *out = r;
    *out_n = pieces;
    return LOOM_OK;
}

loom_status rl_td_unbind(const rl_td *td, int32_t dim, rl_td ***out, int64_t *out_n)
{
    if (dim < 0 || dim >= td->batch_ndim)
        return pk_host->fail(LOOM_EINVAL, "unbind: dim %d is not a batch dim of [0, %d)", (int)dim,
                             (int)td->batch_ndim);
    const int64_t size = td->batch[dim];
    rl_td **r = calloc((size_t)(size > 0 ? size : 1), sizeof *r);
    loom_status st = r != NULL ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "out of memory");
    for (int64_t i = 0; i < size && st == LOOM_OK; i++)
        st = rl_td_gather(td, dim, &i, 1, 1, &r[i]);
    if (st != LOOM_OK) {
        rl_td_free_list(r, size);
        return st;
    }
    *out = r;
    *out_n = size;
    return LOOM_OK;
}

/* ------------------------------------------------------------------ apply */

static loom_status apply_dict(const rl_td *td, rl_key *key, rl_td_apply_fn fn, void *user, rl_td **out)
{
    rl_td *r = rl_td_new(td->batch_ndim, td->batch);
    if (r == NULL)
        return LOOM_ENOMEM;
    loom_status st = LOOM_OK;
    for (int64_t i = 0; i < td->n && st == LOOM_OK; i++) {
        const rl_td_entry *e = &td->e[i];
        rl_key one = { .n = 1, .part = { e->key } };
        if (key->n == RL_TD_MAX_PATH) {
            st = pk_host->fail(LOOM_EINVAL, "a TensorDict nested deeper than %d levels", RL_TD_MAX_PATH);
            break;
        }
        key->part[key->n++] = e->key;
        if (e->kind == RL_TD_TENSOR) {
            rl_leaf l = { 0 };
            st = fn(user, key, &e->leaf, &l);
            if (st == LOOM_OK)
                st = rl_td_set_leaf(r, &one, &l);
            rl_buf_release(l.buf);
        } else if (e->kind == RL_TD_DICT) {
            rl_td *sub = NULL;
            st = apply_dict(e->td, key, fn, user, &sub);
            if (st == LOOM_OK)
                st = rl_td_set_dict(r, &one, sub);
        } else {
            st = rl_td_put_non_tensor(r, &one, e);
        }
        key->n--;
    }
    if (st != LOOM_OK) {
        rl_td_free(r);
        return st;
    }
    *out = r;
    return LOOM_OK;
}

loom_status rl_td_apply(const rl_td *td, rl_td_apply_fn fn, void *user, rl_td **out)
{
    rl_key key = { .n = 0 };
    return apply_dict(td, &key, fn, user, out);
}

/* ---------------------------------------------------- flatten, unflatten */

typedef struct flatten_args {
    const char *sep;
    rl_td *out;
} flatten_args;

static loom_status flatten_visit(void *user, const rl_key *key, const rl_td_entry *e)
{
    flatten_args *a = user;
    size_t len = 1, sl = strlen(a->sep);
    for (int32_t i = 0; i < key->n; i++)
        len += strlen(key->part[i]) + sl;
    char *name = malloc(len);
    if (name == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    name[0] = '\0';
    for (int32_t i = 0; i < key->n; i++) {
        if (i > 0)
            strcat(name, a->sep);
        strcat(name, key->part[i]);
    }
    rl_key one = { .n = 1, .part = { name } };
    loom_status st;
    if (rl_td_find(a->out, name) != NULL)
        st = pk_host->fail(LOOM_EINVAL, "flatten_keys: two keys flatten to '%s'", name);
    else if (e->kind == RL_TD_TENSOR)
        st = rl_td_set_leaf(a->out, &one, &e->leaf);
    else
        st = rl_td_put_non_tensor(a->out, &one, e);
    free(name);
    return st;
}

loom_status rl_td_flatten_keys(const rl_td *td, const char *sep, rl_td **out)
{
    if (sep == NULL || sep[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "flatten_keys: the separator is empty");
    flatten_args a = { .sep = sep, .out = rl_td_new(td->batch_ndim, td->batch) };
    if (a.out == NULL)
        return LOOM_ENOMEM;
    loom_status st = rl_td_visit(td, flatten_visit, &a);
    if (st != LOOM_OK) {
        rl_td_free(a.out);
        return st;
    }
    *out = a.out;
    return LOOM_OK;
}

loom_status rl_td_unflatten_keys(const rl_td *td, const char *sep, rl_td **out)
{
    if (sep == NULL || sep[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "unflatten_keys: the separator is empty");
    rl_td *r = rl_td_new(td->batch_ndim, td->batch);
    if (r == NULL)
        return LOOM_ENOMEM;
    loom_status st = LOOM_OK;
    const size_t sl = strlen(sep);
    for (int64_t i = 0; i < td->n && st == LOOM_OK; i++) {
        const rl_td_entry *e = &td->e[i];
        char *copy = strdup(e->key);
        rl_key key = { .n = 0 };
        if (copy == NULL) {
            st = pk_host->fail(LOOM_ENOMEM, "out of memory");
            break;
        }
        for (char *p = copy; st == LOOM_OK;) {
            char *hit = strstr(p, sep);
            if (hit != NULL)
                *hit = '\0';
            if (key.n == RL_TD_MAX_PATH || p[0] == '\0')
                st = pk_host->fail(LOOM_EINVAL, "unflatten_keys: key '%s' has an empty or a %dth component",
                                   e->key, RL_TD_MAX_PATH + 1);
            else
                key.part[key.n++] = p;
            if (hit == NULL)
                break;
            p = hit + sl;
        }
        if (st == LOOM_OK && key.n > 1 && rl_td_lookup(r, &key) != NULL)
            st = pk_host->fail(LOOM_EINVAL, "unflatten_keys: key '%s' is given twice", e->key);
        if (st == LOOM_OK) {
            if (e->kind == RL_TD_TENSOR)
                st = rl_td_set_leaf(r, &key, &e->leaf);
            else if (e->kind == RL_TD_DICT) {
                rl_td *sub = NULL;
                st = rl_td_unflatten_keys(e->td, sep, &sub);
                if (st == LOOM_OK)
                    st = rl_td_set_dict(r, &key, sub);
            } else {
                st = rl_td_put_non_tensor(r, &key, e);
            }
        }
        free(copy);
    }
    if (st != LOOM_OK) {
        rl_td_free(r);
        return st;
    }
    *out = r;
    return LOOM_OK;
}

/* --------------------------------------------------- update, select, exclude */

/* Copy entry e (sharing leaf buffers) to key of dst. */
static loom_status put_entry(rl_td *dst, const rl_key *key, const rl_td_entry *e)
{
    if (e->kind == RL_TD_TENSOR)
        return rl_td_set_leaf(dst, key, &e->leaf);
    if (e->kind == RL_TD_DICT) {
        rl_td *sub = rl_td_clone(e->td);
        return sub != NULL ? rl_td_set_dict(dst, key, sub) : LOOM_ENOMEM;
    }
    return rl_td_put_non_tensor(dst, key, e);
}

loom_status rl_td_update(rl_td *dst, const rl_td *src)
{
    for (int64_t i = 0; i < src->n; i++) {
        const rl_td_entry *e = &src->e[i];
        rl_td_entry *have = rl_td_find(dst, e->key);
        rl_key one = { .n = 1, .part = { e->key } };
        loom_status st = have != NULL && have->kind == RL_TD_DICT && e->kind == RL_TD_DICT
                         ? rl_td_update(have->td, e->td) : put_entry(dst, &one, e);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

loom_status rl_td_select(const rl_td *td, const rl_key *keys, int64_t n, int strict, rl_td **out)
{
    rl_td *r = rl_td_new(td->batch_ndim, td->batch);
    if (r == NULL)
        return LOOM_ENOMEM;
    loom_status st = LOOM_OK;
    for (int64_t k = 0; k < n && st == LOOM_OK; k++) {
        const rl_td_entry *e = rl_td_lookup(td, &keys[k]);
        if (e == NULL) {
            if (strict) {
                char *name = rl_key_format(&keys[k]);
                st = pk_host->fail(LOOM_ENOENT, "select: no key '%s' in the TensorDict", name != NULL ? name : "?");
                free(name);
            }
            continue;
        }
        /* the nested dicts on the way keep their own batch_size */
        const rl_td *s = td;
        rl_td *d = r;
        for (int32_t i = 0; i + 1 < keys[k].n && st == LOOM_OK; i++) {
            const rl_td_entry *se = rl_td_find(s, keys[k].part[i]);
            rl_td_entry *de = rl_td_find(d, keys[k].part[i]);
            if (de == NULL) {
                rl_td *sub = rl_td_new(se->td->batch_ndim, se->td->batch);
                rl_key one = { .n = 1, .part = { keys[k].part[i] } };
                st = sub != NULL ? rl_td_set_dict(d, &one, sub) : LOOM_ENOMEM;
                de = rl_td_find(d, keys[k].part[i]);
            }
            s = se->td;
            d = de != NULL ? de->td : NULL;
        }
        if (st == LOOM_OK) {
            rl_key last = { .n = 1, .part = { keys[k].part[keys[k].n - 1] } };
            st = put_entry(d, &last, e);
        }
    }
    if (st != LOOM_OK) {
        rl_td_free(r);
        return st;
    }
    *out = r;
    return LOOM_OK;
}

loom_status rl_td_exclude(const rl_td *td, const rl_key *keys, int64_t n, rl_td **out)
{
    rl_td *r = rl_td_clone(td);
    if (r == NULL)
        return LOOM_ENOMEM;
    for (int64_t k = 0; k < n; k++)
        if (rl_td_lookup(r, &keys[k]) != NULL) {
            loom_status st = rl_td_remove(r, &keys[k]);
            if (st != LOOM_OK) {
                rl_td_free(r);
                return st;
            }
        }
    *out = r;
    return LOOM_OK;
}
