/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td.c - the TensorDict container: buffers, entries, keys, set/get/remove
** (td.h). The operations that make new dicts are in td_ops.c.
*/
#include "td.h"
#include "td_nts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pack.h"

/* ------------------------------------------------------------- buffers */

rl_buf *rl_buf_new(size_t nbytes)
{
    rl_buf *b = calloc(1, sizeof *b);
    void *data = calloc(1, nbytes > 0 ? nbytes : 1);
    if (b == NULL || data == NULL) {
        free(b);
        free(data);
        pk_host->fail(LOOM_ENOMEM, "out of memory for a %zu-byte tensor", nbytes);
        return NULL;
    }
    b->refs = 1;
    b->data = data;
    b->nbytes = nbytes;
    return b;
}

rl_buf *rl_buf_retain(rl_buf *b)
{
    if (b != NULL)
        __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
    return b;
}

void rl_buf_release(rl_buf *b)
{
    if (b == NULL || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (b->mapped)
        munmap(b->data, b->nbytes);
    else
        free(b->data);
    free(b);
}

int64_t rl_leaf_numel(const rl_leaf *l)
{
    int64_t n = 1;
    for (int32_t d = 0; d < l->ndim; d++)
        n *= l->shape[d];
    return n;
}

size_t rl_leaf_nbytes(const rl_leaf *l)
{
    return (size_t)rl_leaf_numel(l) * pk_host->dtype_size(l->dtype);
}

/* ------------------------------------------------------------ container */

rl_td *rl_td_new(int32_t batch_ndim, const int64_t *batch)
{
    if (batch_ndim < 0 || batch_ndim > LOOM_MAX_NDIM) {
        pk_host->fail(LOOM_EINVAL, "batch_size has %d dims; at most %d", (int)batch_ndim, LOOM_MAX_NDIM);
        return NULL;
    }
    for (int32_t d = 0; d < batch_ndim; d++)
        if (batch[d] < 0) {
            pk_host->fail(LOOM_EINVAL, "batch_size[%d] = %lld is negative", (int)d, (long long)batch[d]);
            return NULL;
        }
    rl_td *td = calloc(1, sizeof *td);
    if (td == NULL) {
        pk_host->fail(LOOM_ENOMEM, "out of memory for a TensorDict");
        return NULL;
    }
    td->batch_ndim = batch_ndim;
    for (int32_t d = 0; d < batch_ndim; d++)
        td->batch[d] = batch[d];
    return td;
}

static void entry_clear(rl_td_entry *e)
{
    free(e->key);
    if (e->kind == RL_TD_TENSOR)
        rl_buf_release(e->leaf.buf);
    else if (e->kind == RL_TD_DICT)
        rl_td_free(e->td);
    else if (e->kind == RL_TD_NONTENSOR)
        cJSON_Delete(e->value);
    memset(e, 0, sizeof *e);
}

void rl_td_free(rl_td *td)
{
    if (td == NULL)
        return;
    for (int64_t i = 0; i < td->n; i++)
        entry_clear(&td->e[i]);
    free(td->e);
    free(td);
}

static rl_td *td_copy(const rl_td *td, int deep)
{
    rl_td *out = rl_td_new(td->batch_ndim, td->batch);
    if (out == NULL)
        return NULL;
    out->e = calloc((size_t)(td->n > 0 ? td->n : 1), sizeof *out->e);
    if (out->e == NULL) {
        rl_td_free(out);
        pk_host->fail(LOOM_ENOMEM, "out of memory copying a TensorDict");
        return NULL;
    }
    out->cap = td->n;
    for (int64_t i = 0; i < td->n; i++) {
        const rl_td_entry *s = &td->e[i];
        rl_td_entry *d = &out->e[i];
        d->key = strdup(s->key);
        d->kind = s->kind;
        out->n = i + 1;
        if (d->key == NULL)
            goto oom;
        if (s->kind == RL_TD_TENSOR) {
            d->leaf = s->leaf;
            if (deep && s->leaf.buf != NULL) {
                d->leaf.buf = rl_buf_new(s->leaf.buf->nbytes);
                if (d->leaf.buf == NULL)
                    goto fail;
                memcpy(d->leaf.buf->data, s->leaf.buf->data, s->leaf.buf->nbytes);
            } else {
                rl_buf_retain(d->leaf.buf);
            }
        } else if (s->kind == RL_TD_DICT) {
            d->td = td_copy(s->td, deep);
            if (d->td == NULL)
                goto fail;
        } else {
            d->value = cJSON_Duplicate(s->value, 1);
            d->stacked = s->stacked;
            if (d->value == NULL)
                goto oom;
        }
    }
    return out;
oom:
    pk_host->fail(LOOM_ENOMEM, "out of memory copying a TensorDict");
fail:
    rl_td_free(out);
    return NULL;
}

rl_td *rl_td_clone(const rl_td *td) { return td_copy(td, 0); }
rl_td *rl_td_deep_copy(const rl_td *td) { return td_copy(td, 1); }

/* ----------------------------------------------------------------- keys */

loom_status rl_key_parse(const char *text, char *storage, size_t size, rl_key *key, const char *what)
{
    key->n = 0;
    if (text == NULL || text[0] == '\0')
        return pk_host->fail(LOOM_EINVAL, "%s: the key is empty", what);
    size_t len = strlen(text);
    if (len + 1 > size)
        return pk_host->fail(LOOM_EINVAL, "%s: the key '%.40s...' is longer than %zu bytes", what, text, size - 1);
    if (text[0] == '[') {
        cJSON *arr = cJSON_Parse(text);
        if (arr == NULL || !cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0) {
            cJSON_Delete(arr);
            return pk_host->fail(LOOM_EINVAL, "%s: the key '%s' is not a JSON array of strings such as "
                                 "[\"next\",\"reward\"]", what, text);
        }
        size_t at = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, arr) {
            if (!cJSON_IsString(it) || it->valuestring[0] == '\0' || key->n == RL_TD_MAX_PATH) {
                cJSON_Delete(arr);
                return pk_host->fail(LOOM_EINVAL, "%s: the key '%s' must list 1 to %d non-empty strings", what,
                                     text, RL_TD_MAX_PATH);
            }
            size_t l = strlen(it->valuestring);
            memcpy(storage + at, it->valuestring, l + 1);   /* fits: the parts are shorter than the text */
            key->part[key->n++] = storage + at;
            at += l + 1;
        }
        cJSON_Delete(arr);
        return LOOM_OK;
    }
    memcpy(storage, text, len + 1);
    char *p = storage;
    for (;;) {
        char *dot = strchr(p, '.');
        if (dot != NULL)
            *dot = '\0';
        if (p[0] == '\0' || key->n == RL_TD_MAX_PATH)
            return pk_host->fail(LOOM_EINVAL, "%s: the key '%s' must be 1 to %d non-empty components "
                                 "joined by '.'", what, text, RL_TD_MAX_PATH);
        key->part[key->n++] = p;
        if (dot == NULL)
            return LOOM_OK;
        p = dot + 1;
    }
}

char *rl_key_format(const rl_key *key)
{
    int dotted = 0;
    size_t len = 3;
    for (int32_t i = 0; i < key->n; i++) {
        if (strchr(key->part[i], '.') != NULL || key->part[i][0] == '[')
            dotted = 1;
        len += 2 * strlen(key->part[i]) + 4;
    }
    if (dotted) {
        cJSON *arr = cJSON_CreateArray();
        for (int32_t i = 0; arr != NULL && i < key->n; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateString(key->part[i]));
        char *s = arr != NULL ? cJSON_PrintUnformatted(arr) : NULL;
        cJSON_Delete(arr);
        return s;
    }
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    s[0] = '\0';
    for (int32_t i = 0; i < key->n; i++) {
        if (i > 0)
            strcat(s, ".");
        strcat(s, key->part[i]);
    }
    return s;
}

rl_td_entry *rl_td_find(const rl_td *td, const char *key)
{
    for (int64_t i = 0; i < td->n; i++)
        if (strcmp(td->e[i].key, key) == 0)
            return &td->e[i];
    return NULL;
}

rl_td_entry *rl_td_lookup(const rl_td *td, const rl_key *key)
{
    const rl_td *at = td;
    for (int32_t i = 0; i < key->n; i++) {
        rl_td_entry *e = rl_td_find(at, key->part[i]);
        if (e == NULL || i == key->n - 1)
            return e;
        if (e->kind != RL_TD_DICT)
            return NULL;
        at = e->td;
    }
    return NULL;
}

/* The dict that holds key's last component, made (with td's batch_size)
** where absent. Fails when a component on the way is a leaf. */
static loom_status parent_of(rl_td *td, const rl_key *key, int create, rl_td **out)
{
    rl_td *at = td;
    for (int32_t i = 0; i + 1 < key->n; i++) {
        rl_td_entry *e = rl_td_find(at, key->part[i]);
        if (e == NULL) {
            if (!create)
                return pk_host->fail(LOOM_ENOENT, "no key '%s' in the TensorDict", key->part[i]);
            rl_td *sub = rl_td_new(at->batch_ndim, at->batch);
            if (sub == NULL)
                return LOOM_ENOMEM;
            rl_key one = { .n = 1, .part = { key->part[i] } };
            loom_status st = rl_td_set_dict(at, &one, sub);
            if (st != LOOM_OK)
                return st;
            e = rl_td_find(at, key->part[i]);
        }
        if (e->kind != RL_TD_DICT)
            return pk_host->fail(LOOM_EINVAL, "key component '%s' names a %s, not a nested TensorDict",
                                 key->part[i], e->kind == RL_TD_TENSOR ? "tensor" : "NonTensorData");
        at = e->td;
    }
    *out = at;
    return LOOM_OK;
}

/* The slot for name in td: the existing entry (cleared) or a new one. */
static rl_td_entry *slot_for(rl_td *td, const char *name)
{
    rl_td_entry *e = rl_td_find(td, name);
    char *key = strdup(name);
    if (key == NULL) {
        pk_host->fail(LOOM_ENOMEM, "out of memory for a key");
        return NULL;
    }
    if (e != NULL) {
        entry_clear(e);
        e->key = key;
        return e;
    }
    if (td->n == td->cap) {
        int64_t cap = td->cap > 0 ? 2 * td->cap : 8;
        rl_td_entry *grown = realloc(td->e, (size_t)cap * sizeof *grown);
        if (grown == NULL) {
            free(key);
            pk_host->fail(LOOM_ENOMEM, "out of memory for an entry");
            return NULL;
        }
        td->e = grown;
        td->cap = cap;
    }
    e = &td->e[td->n++];
    memset(e, 0, sizeof *e);
    e->key = key;
    return e;
}

static loom_status check_batch_prefix(const rl_td *td, const rl_key *key, int32_t ndim, const int64_t *shape)
{
    int ok = ndim >= td->batch_ndim;
    for (int32_t d = 0; ok && d < td->batch_ndim; d++)
        ok = shape[d] == td->batch[d];
    if (ok)
        return LOOM_OK;
    char *k = rl_key_format(key);
    char got[160] = "", want[160] = "";
    for (int32_t d = 0; d < ndim && strlen(got) < 140; d++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? "," : "", (long long)shape[d]);
    for (int32_t d = 0; d < td->batch_ndim && strlen(want) < 140; d++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d ? "," : "", (long long)td->batch[d]);
    loom_status st = pk_host->fail(LOOM_EINVAL, "key '%s': shape [%s] does not start with the batch_size [%s]",
                                   k != NULL ? k : "?", got, want);
    free(k);
    return st;
}

loom_status rl_td_set_leaf(rl_td *td, const rl_key *key, const rl_leaf *leaf)
{
    if (key->n < 1)
        return pk_host->fail(LOOM_EINVAL, "the key is empty");
    if (leaf->ndim < 0 || leaf->ndim > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "a tensor of %d dims; at most %d", (int)leaf->ndim, LOOM_MAX_NDIM);
    loom_status st = check_batch_prefix(td, key, leaf->ndim, leaf->shape);
    rl_td *parent = NULL;
    if (st == LOOM_OK)
        st = parent_of(td, key, 1, &parent);
    if (st != LOOM_OK)
        return st;
    rl_td_entry *e = slot_for(parent, key->part[key->n - 1]);
    if (e == NULL)
        return LOOM_ENOMEM;
    e->kind = RL_TD_TENSOR;
    e->leaf = *leaf;
    rl_buf_retain(e->leaf.buf);
    return LOOM_OK;
}

loom_status rl_td_set_tensor(rl_td *td, const rl_key *key, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                             const void *data)
{
    if (ndim < 0 || ndim > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "a tensor of %d dims; at most %d", (int)ndim, LOOM_MAX_NDIM);
    rl_leaf leaf = { .dtype = dtype, .ndim = ndim };
    for (int32_t d = 0; d < ndim; d++)
        leaf.shape[d] = shape[d];
    loom_status st = check_batch_prefix(td, key, ndim, shape);
    if (st != LOOM_OK)
        return st;
    size_t nbytes = rl_leaf_nbytes(&leaf);
    leaf.buf = rl_buf_new(nbytes);
    if (leaf.buf == NULL)
        return LOOM_ENOMEM;
    if (nbytes > 0)
        memcpy(leaf.buf->data, data, nbytes);
    st = rl_td_set_leaf(td, key, &leaf);
    rl_buf_release(leaf.buf);
    return st;
}

/* A NonTensorData (stack 0) or NonTensorStack (stack 1: value nests as the
** parent's batch_size) at key; value owned, freed on failure. */
static loom_status set_non_tensor(rl_td *td, const rl_key *key, cJSON *value, int stack)
{
    rl_td *parent = NULL;
    loom_status st = key->n < 1 ? pk_host->fail(LOOM_EINVAL, "the key is empty") : parent_of(td, key, 1, &parent);
    if (st == LOOM_OK && stack && !rl_nts_fits(value, parent->batch, parent->batch_ndim)) {
        char *k = rl_key_format(key);
        st = pk_host->fail(LOOM_EINVAL, "key '%s': a NonTensorStack holds nested lists of the batch_size (one value "
                           "per element); this value does not nest so", k != NULL ? k : "?");
        free(k);
    }
    rl_td_entry *e = st == LOOM_OK ? slot_for(parent, key->part[key->n - 1]) : NULL;
    if (e == NULL) {
        cJSON_Delete(value);
        return st != LOOM_OK ? st : LOOM_ENOMEM;
    }
    e->kind = RL_TD_NONTENSOR;
    e->value = value;
    e->stacked = stack && parent->batch_ndim > 0;
    return LOOM_OK;
}

loom_status rl_td_set_json(rl_td *td, const rl_key *key, cJSON *value)
{
    return set_non_tensor(td, key, value, 0);
}

loom_status rl_td_set_json_stack(rl_td *td, const rl_key *key, cJSON *value)
{
    return set_non_tensor(td, key, value, 1);
}

loom_status rl_td_put_non_tensor(rl_td *td, const rl_key *key, const rl_td_entry *e)
{
    cJSON *v = cJSON_Duplicate(e->value, 1);
    if (v == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    return e->stacked ? rl_td_set_json_stack(td, key, v) : rl_td_set_json(td, key, v);
}

loom_status rl_td_set_dict(rl_td *td, const rl_key *key, rl_td *sub)
{
    loom_status st = key->n < 1 ? pk_host->fail(LOOM_EINVAL, "the key is empty") : LOOM_OK;
    int ok = st == LOOM_OK && sub->batch_ndim >= td->batch_ndim;
    for (int32_t d = 0; ok && d < td->batch_ndim; d++)
        ok = sub->batch[d] == td->batch[d];
    if (st == LOOM_OK && !ok)
        st = pk_host->fail(LOOM_EINVAL, "key '%s': a nested TensorDict's batch_size must start with its parent's",
                           key->part[key->n - 1]);
    rl_td *parent = NULL;
    if (st == LOOM_OK)
        st = parent_of(td, key, 1, &parent);
    rl_td_entry *e = st == LOOM_OK ? slot_for(parent, key->part[key->n - 1]) : NULL;
    if (e == NULL) {
        rl_td_free(sub);
        return st != LOOM_OK ? st : LOOM_ENOMEM;
    }
    e->kind = RL_TD_DICT;
    e->td = sub;
    return LOOM_OK;
}

loom_status rl_td_remove(rl_td *td, const rl_key *key)
{
    rl_td *parent = NULL;
    loom_status st = key->n < 1 ? pk_host->fail(LOOM_EINVAL, "the key is empty") : parent_of(td, key, 0, &parent);
    if (st != LOOM_OK)
        return st;
    rl_td_entry *e = rl_td_find(parent, key->part[key->n - 1]);
    if (e == NULL)
        return pk_host->fail(LOOM_ENOENT, "no key '%s' in the TensorDict", key->part[key->n - 1]);
    entry_clear(e);
    int64_t i = e - parent->e;
    memmove(&parent->e[i], &parent->e[i + 1], (size_t)(parent->n - i - 1) * sizeof *parent->e);
    parent->n--;
    return LOOM_OK;
}

static loom_status visit(const rl_td *td, rl_key *key, rl_td_visit_fn fn, void *user)
{
    for (int64_t i = 0; i < td->n; i++) {
        const rl_td_entry *e = &td->e[i];
        if (key->n == RL_TD_MAX_PATH)
            return pk_host->fail(LOOM_EINVAL, "a TensorDict nested deeper than %d levels", RL_TD_MAX_PATH);
        key->part[key->n++] = e->key;
        loom_status st = e->kind == RL_TD_DICT ? visit(e->td, key, fn, user) : fn(user, key, e);
        key->n--;
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

loom_status rl_td_visit(const rl_td *td, rl_td_visit_fn fn, void *user)
{
    rl_key key = { .n = 0 };
    return visit(td, &key, fn, user);
}

/* ---------------------------------------------------------------- dtypes */

static const struct { loom_dtype dtype; const char *torch; } dtype_names[] = {
    { LOOM_DTYPE_F32, "torch.float32" },   { LOOM_DTYPE_F64, "torch.float64" },
    { LOOM_DTYPE_F16, "torch.float16" },   { LOOM_DTYPE_BF16, "torch.bfloat16" },
    { LOOM_DTYPE_F8E4M3, "torch.float8_e4m3fn" },
    { LOOM_DTYPE_I8, "torch.int8" },       { LOOM_DTYPE_U8, "torch.uint8" },
    { LOOM_DTYPE_I16, "torch.int16" },     { LOOM_DTYPE_I32, "torch.int32" },
    { LOOM_DTYPE_I64, "torch.int64" },     { LOOM_DTYPE_BOOL, "torch.bool" },
    { LOOM_DTYPE_U16, "torch.uint16" },    { LOOM_DTYPE_U32, "torch.uint32" },
};

const char *rl_dtype_torch_name(loom_dtype dtype)
{
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (dtype_names[i].dtype == dtype)
            return dtype_names[i].torch;
    return NULL;
}

loom_dtype rl_dtype_from_torch_name(const char *name)
{
    for (size_t i = 0; name != NULL && i < sizeof dtype_names / sizeof dtype_names[0]; i++)
        if (strcmp(dtype_names[i].torch, name) == 0)
            return dtype_names[i].dtype;
    return LOOM_DTYPE_INVALID;
}
