/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_methods.c - the cpu kernels of the rl.tensordict methods
** (td_schemas.c) and the module that registers them with the class.
** Each method holds its object's lock for the whole call.
*/
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"

static rl_td_object *object_of(loom_call *call)
{
    rl_td_object *o = call->object;
    if (o == NULL || o->struct_size < sizeof *o || o->magic != RL_TD_OBJECT_MAGIC) {
        pk_host->fail(LOOM_EINVAL, "not an rl.tensordict object made by this pack");
        return NULL;
    }
    pthread_mutex_lock(&o->lock);
    return o;
}

static void done(rl_td_object *o) { pthread_mutex_unlock(&o->lock); }

/* Parse the 'key' attribute (index k) into key over a malloc'd *storage. */
static loom_status key_attr(const loom_call *call, int k, rl_key *key, char **storage)
{
    const char *text = call->attrs[k].u.s;
    size_t n = strlen(text) + 1;
    *storage = malloc(n);
    if (*storage == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_status st = rl_key_parse(text, *storage, n, key, "key");
    if (st != LOOM_OK) {
        free(*storage);
        *storage = NULL;
    }
    return st;
}

static const void *tensor_bytes(const loom_tensor *t)
{
    return (const uint8_t *)t->data + t->byte_offset;
}

/* Replace o's dict by r (owned). */
static void replace(rl_td_object *o, rl_td *r)
{
    rl_td_free(o->td);
    o->td = r;
}

/* ---------------------------------------------------------- set / get */

static loom_status td_set_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    const loom_tensor *v = call->inputs[0];
    rl_key key;
    char *storage = NULL;
    loom_status st = key_attr(call, PK_ATTR(rl_td_key, key), &key, &storage);
    loom_dtype dt = loom_dtype_from_dl(v->dtype);
    if (st == LOOM_OK && rl_dtype_torch_name(dt) == NULL)
        st = pk_host->fail(LOOM_ENOTSUP, "value: %s tensors are not held (tensordict's memmap has no such dtype)",
                           pk_host->dtype_name(dt));
    if (st == LOOM_OK)
        st = rl_td_set_tensor(o->td, &key, dt, v->ndim, v->shape, tensor_bytes(v));
    free(storage);
    done(o);
    return st;
}

static loom_status td_get_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    rl_key key;
    char *storage = NULL;
    loom_status st = key_attr(call, PK_ATTR(rl_td_key, key), &key, &storage);
    const rl_td_entry *e = st == LOOM_OK ? rl_td_lookup(o->td, &key) : NULL;
    if (st == LOOM_OK && (e == NULL || e->kind != RL_TD_TENSOR))
        st = pk_host->fail(e == NULL ? LOOM_ENOENT : LOOM_EINVAL, "key '%s' %s", call->attrs[0].u.s,
                           e == NULL ? "is not in the TensorDict"
                           : e->kind == RL_TD_DICT ? "is a nested TensorDict, not a tensor"
                                                   : "is a NonTensorData (rl.td_get_non_tensor reads it)");
    loom_tensor *out = NULL;
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 0, e->leaf.dtype, e->leaf.ndim, e->leaf.shape, &out);
    if (st == LOOM_OK && rl_leaf_nbytes(&e->leaf) > 0)
        memcpy((uint8_t *)out->data + out->byte_offset, rl_leaf_data(&e->leaf), rl_leaf_nbytes(&e->leaf));
    free(storage);
    done(o);
    return st;
}

static loom_status td_set_non_tensor_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    rl_key key;
    char *storage = NULL;
    loom_status st = key_attr(call, PK_ATTR(rl_td_set_non_tensor, key), &key, &storage);
    const char *text = call->attrs[PK_ATTR(rl_td_set_non_tensor, json)].u.s;
    cJSON *v = NULL;
    if (st == LOOM_OK) {
        v = cJSON_Parse(text);
        if (v == NULL)
            st = pk_host->fail(LOOM_EINVAL, "json: '%.80s' is not a JSON value (a string is quoted: \"\\\"text\\\"\")",
                               text);
    }
    if (st == LOOM_OK)
        st = call->attrs[PK_ATTR(rl_td_set_non_tensor, stack)].u.b ? rl_td_set_json_stack(o->td, &key, v)
                                                                    : rl_td_set_json(o->td, &key, v);
    free(storage);
    done(o);
    return st;
}

static loom_status td_get_non_tensor_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    rl_key key;
    char *storage = NULL;
    loom_status st = key_attr(call, PK_ATTR(rl_td_key, key), &key, &storage);
    const rl_td_entry *e = st == LOOM_OK ? rl_td_lookup(o->td, &key) : NULL;
    if (st == LOOM_OK && (e == NULL || e->kind != RL_TD_NONTENSOR))
        st = pk_host->fail(e == NULL ? LOOM_ENOENT : LOOM_EINVAL, "key '%s' %s", call->attrs[0].u.s,
                           e == NULL ? "is not in the TensorDict" : "is not a NonTensorData");
    char *text = st == LOOM_OK ? cJSON_PrintUnformatted(e->value) : NULL;
    if (st == LOOM_OK && text == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_tensor *out = NULL;
    if (st == LOOM_OK) {
        int64_t n = (int64_t)strlen(text);
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, &n, &out);
        if (st == LOOM_OK && n > 0)
            memcpy((uint8_t *)out->data + out->byte_offset, text, (size_t)n);
    }
    free(text);
    free(storage);
    done(o);
    return st;
}

static loom_status td_del_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    rl_key key;
    char *storage = NULL;
    loom_status st = key_attr(call, PK_ATTR(rl_td_key, key), &key, &storage);
    if (st == LOOM_OK && rl_td_lookup(o->td, &key) == NULL)
        st = pk_host->fail(LOOM_ENOENT, "key '%s' is not in the TensorDict", call->attrs[0].u.s);
    if (st == LOOM_OK)
        st = rl_td_remove(o->td, &key);
    free(storage);
    done(o);
    return st;
}

/* ------------------------------------------------------- keys, sizes */

typedef struct keys_acc {
    char *text;
    size_t len, cap;
    int64_t *offsets, *kinds;
    int64_t n, ncap;
} keys_acc;

static loom_status keys_visit(void *user, const rl_key *key, const rl_td_entry *e)
{
    keys_acc *a = user;
    char *name = rl_key_format(key);
    if (name == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    size_t l = strlen(name);
    if (a->len + l > a->cap) {
        size_t cap = 2 * (a->len + l) + 64;
        char *g = realloc(a->text, cap);
        if (g == NULL) {
            free(name);
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        }
        a->text = g;
        a->cap = cap;
    }
    if (a->n + 2 > a->ncap) {
        int64_t cap = 2 * a->ncap + 16;
        int64_t *g1 = realloc(a->offsets, (size_t)cap * sizeof *g1);
        if (g1 != NULL)
            a->offsets = g1;
        int64_t *g2 = g1 != NULL ? realloc(a->kinds, (size_t)cap * sizeof *g2) : NULL;
        if (g2 == NULL) {
            free(name);
            return pk_host->fail(LOOM_ENOMEM, "out of memory");
        }
        a->kinds = g2;
        a->ncap = cap;
    }
    memcpy(a->text + a->len, name, l);
    a->len += l;
    a->kinds[a->n] = e->kind;
    a->offsets[++a->n] = (int64_t)a->len;
    free(name);
    return LOOM_OK;
}

static loom_status td_keys_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    keys_acc a = { 0 };
    a.offsets = calloc(16, sizeof *a.offsets);
    a.kinds = calloc(16, sizeof *a.kinds);
    a.ncap = 16;
    loom_status st = a.offsets != NULL && a.kinds != NULL ? rl_td_visit(o->td, keys_visit, &a)
                                                          : pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_tensor *t = NULL;
    int64_t shape[3] = { (int64_t)a.len, a.n + 1, a.n };
    if (st == LOOM_OK && call->n_outputs > 0)
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, &shape[0], &t);
    if (st == LOOM_OK && call->n_outputs > 0 && a.len > 0)
        memcpy((uint8_t *)t->data + t->byte_offset, a.text, a.len);
    if (st == LOOM_OK && call->n_outputs > 1)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, &shape[1], &t);
    if (st == LOOM_OK && call->n_outputs > 1)
        memcpy((uint8_t *)t->data + t->byte_offset, a.offsets, (size_t)(a.n + 1) * sizeof(int64_t));
    if (st == LOOM_OK && call->n_outputs > 2)
        st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, &shape[2], &t);
    if (st == LOOM_OK && call->n_outputs > 2 && a.n > 0)
        memcpy((uint8_t *)t->data + t->byte_offset, a.kinds, (size_t)a.n * sizeof(int64_t));
    free(a.text);
    free(a.offsets);
    free(a.kinds);
    done(o);
    return st;
}

static loom_status td_batch_size_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    int64_t n = o->td->batch_ndim;
    loom_tensor *t = NULL;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &t);
    if (st == LOOM_OK && n > 0)
        memcpy((uint8_t *)t->data + t->byte_offset, o->td->batch, (size_t)n * sizeof(int64_t));
    done(o);
    return st;
}

static loom_status describe_visit(void *user, const rl_key *key, const rl_td_entry *e)
{
    cJSON *entries = user;
    cJSON *d = cJSON_CreateObject();
    char *name = rl_key_format(key);
    if (d == NULL || name == NULL) {
        cJSON_Delete(d);
        free(name);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    cJSON_AddStringToObject(d, "key", name);
    free(name);
    if (e->kind == RL_TD_TENSOR) {
        cJSON_AddStringToObject(d, "kind", "tensor");
        cJSON_AddStringToObject(d, "dtype", pk_host->dtype_name(e->leaf.dtype));
        cJSON *shape = cJSON_AddArrayToObject(d, "shape");
        for (int32_t i = 0; shape != NULL && i < e->leaf.ndim; i++)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)e->leaf.shape[i]));
    } else {
        cJSON_AddStringToObject(d, "kind", "non_tensor");
        cJSON_AddItemToObject(d, "value", cJSON_Duplicate(e->value, 1));
        if (e->stacked)
            cJSON_AddBoolToObject(d, "stack", 1);   /* a NonTensorStack: value nests as the batch */
    }
    cJSON_AddItemToArray(entries, d);
    return LOOM_OK;
}

static loom_status td_describe_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    cJSON *root = cJSON_CreateObject();
    cJSON *bs = root != NULL ? cJSON_AddArrayToObject(root, "batch_size") : NULL;
    for (int32_t i = 0; bs != NULL && i < o->td->batch_ndim; i++)
        cJSON_AddItemToArray(bs, cJSON_CreateNumber((double)o->td->batch[i]));
    cJSON *entries = root != NULL ? cJSON_AddArrayToObject(root, "entries") : NULL;
    loom_status st = entries != NULL ? rl_td_visit(o->td, describe_visit, entries)
                                     : pk_host->fail(LOOM_ENOMEM, "out of memory");
    char *text = st == LOOM_OK ? cJSON_PrintUnformatted(root) : NULL;
    if (st == LOOM_OK && text == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_tensor *out = NULL;
    if (st == LOOM_OK) {
        int64_t n = (int64_t)strlen(text);
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, &n, &out);
        if (st == LOOM_OK)
            memcpy((uint8_t *)out->data + out->byte_offset, text, (size_t)n);
    }
    free(text);
    cJSON_Delete(root);
    done(o);
    return st;
}

static loom_status td_id_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    int64_t n = 1;
    loom_tensor *t = NULL;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &t);
    if (st == LOOM_OK)
        memcpy((uint8_t *)t->data + t->byte_offset, &o->id, sizeof o->id);
    done(o);
    return st;
}

/* ------------------------------------------------- in-place transforms */

static loom_status td_index_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    const loom_tensor *x = call->inputs[0];
    const loom_attr_value *sl = &call->attrs[PK_ATTR(rl_td_index, slice)];
    rl_index ix = { 0 };
    loom_status st = LOOM_OK;
    if (x == NULL) {
        if (!sl->is_set || sl->count < 2 || sl->count > 3)
            st = pk_host->fail(LOOM_EINVAL, "index: give an index tensor, or 'slice' as [start, stop(, step)]");
        else
            ix = (rl_index){ .kind = RL_INDEX_SLICE, .start = sl->u.ints[0], .stop = sl->u.ints[1],
                             .step = sl->count == 3 ? sl->u.ints[2] : 1 };
    } else {
        loom_dtype dt = loom_dtype_from_dl(x->dtype);
        int64_t n = 1;
        for (int32_t d = 0; d < x->ndim; d++)
            n *= x->shape[d];
        if (dt == LOOM_DTYPE_I64 && x->ndim == 0)
            ix = (rl_index){ .kind = RL_INDEX_INT, .i = *(const int64_t *)tensor_bytes(x) };
        else if (dt == LOOM_DTYPE_I64 && x->ndim == 1)
            ix = (rl_index){ .kind = RL_INDEX_TENSOR, .idx = tensor_bytes(x), .n = n };
        else if (dt == LOOM_DTYPE_BOOL && x->ndim == 1)
            ix = (rl_index){ .kind = RL_INDEX_MASK, .mask = tensor_bytes(x), .n = n };
        else
            st = pk_host->fail(LOOM_EINVAL, "index: %s of %d dims; an i64 [] int, an i64 [N] index or a bool [B] mask",
                               pk_host->dtype_name(dt), (int)x->ndim);
    }
    rl_td *r = NULL;
    if (st == LOOM_OK)
        st = rl_td_index(o->td, &ix, &r);
    if (st == LOOM_OK)
        replace(o, r);
    done(o);
    return st;
}

static loom_status select_or_exclude(loom_call *call, int select)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    rl_key *keys = NULL;
    int64_t n = 0;
    char *storage = NULL;
    loom_status st = rl_keys_parse_list(call->attrs[PK_ATTR(rl_td_keys_list, keys)].u.s, &keys, &n, &storage, "keys");
    rl_td *r = NULL;
    if (st == LOOM_OK)
        st = select ? rl_td_select(o->td, keys, n, call->attrs[PK_ATTR(rl_td_keys_list, strict)].u.b, &r)
                    : rl_td_exclude(o->td, keys, n, &r);
    if (st == LOOM_OK)
        replace(o, r);
    free(keys);
    free(storage);
    done(o);
    return st;
}

static loom_status td_select_run(loom_call *call) { return select_or_exclude(call, 1); }
static loom_status td_exclude_run(loom_call *call) { return select_or_exclude(call, 0); }

static loom_status flatten_run(loom_call *call, int flatten)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    const char *sep = call->attrs[PK_ATTR(rl_td_sep, separator)].u.s;
    rl_td *r = NULL;
    loom_status st = flatten ? rl_td_flatten_keys(o->td, sep, &r) : rl_td_unflatten_keys(o->td, sep, &r);
    if (st == LOOM_OK)
        replace(o, r);
    done(o);
    return st;
}

static loom_status td_flatten_keys_run(loom_call *call) { return flatten_run(call, 1); }
static loom_status td_unflatten_keys_run(loom_call *call) { return flatten_run(call, 0); }

/* apply: every tensor leaf through one op, by op_call with the caller's context. */
#define APPLY_MAX_ATTRS 16
typedef struct apply_ctx {
    loom_exec_ctx *ctx;
    const loom_op *op;
    const char *op_name;
    loom_named_attr attrs[APPLY_MAX_ATTRS];
    int32_t n_attrs;
} apply_ctx;

static loom_status apply_leaf(void *user, const rl_key *key, const rl_leaf *in, rl_leaf *out)
{
    apply_ctx *a = user;
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, in->shape, sizeof shape);
    loom_tensor x = { .data = rl_leaf_data(in), .device = { LOOM_DEVICE_CPU, 0 }, .ndim = in->ndim,
                      .dtype = pk_host->dtype_to_dl(in->dtype), .shape = shape };
    static const uint8_t empty_byte = 0;
    if (x.data == NULL)
        x.data = (void *)&empty_byte;
    const loom_tensor *inputs[1] = { &x };
    loom_tensor *outputs[1] = { NULL };
    loom_op_call oc = { .struct_size = sizeof oc, .op = a->op, .n_inputs = 1, .inputs = inputs,
                        .n_outputs = 1, .outputs = outputs, .n_attrs = a->n_attrs, .attrs = a->attrs };
    loom_status st = pk_host->op_call(a->ctx, &oc);
    if (st != LOOM_OK)
        return st;
    loom_tensor *y = outputs[0];
    loom_dtype dt = loom_dtype_from_dl(y->dtype);
    *out = (rl_leaf){ .dtype = dt, .ndim = y->ndim };
    for (int32_t d = 0; d < y->ndim; d++)
        out->shape[d] = y->shape[d];
    if (rl_dtype_torch_name(dt) == NULL || y->device.device_type != LOOM_DEVICE_CPU) {
        char *k = rl_key_format(key);
        st = pk_host->fail(LOOM_ENOTSUP, "apply: %s gave key '%s' a %s tensor, which is not held", a->op_name,
                           k != NULL ? k : "?", pk_host->dtype_name(dt));
        free(k);
    } else {
        out->buf = rl_buf_new(rl_leaf_nbytes(out));
        if (out->buf == NULL)
            st = LOOM_ENOMEM;
        else if (out->buf->nbytes > 0)
            memcpy(out->buf->data, (const uint8_t *)y->data + y->byte_offset, out->buf->nbytes);
    }
    pk_host->tensor_free(y);
    return st;
}

/* "a=1,b=x,c=true" into typed named attributes pointing into text (modified). */
static loom_status parse_apply_attrs(char *text, apply_ctx *a)
{
    a->n_attrs = 0;
    for (char *p = text; p != NULL && *p != '\0';) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        char *eq = strchr(p, '=');
        if (eq == NULL || eq == p || a->n_attrs == APPLY_MAX_ATTRS)
            return pk_host->fail(LOOM_EINVAL, "attrs: '%s' is not name=value (at most %d)", p, APPLY_MAX_ATTRS);
        *eq = '\0';
        const char *v = eq + 1;
        loom_named_attr *na = &a->attrs[a->n_attrs++];
        na->name = p;
        na->value = (loom_attr_value){ .is_set = 1, .count = 1 };
        char *end = NULL;
        long long iv = strtoll(v, &end, 10);
        if (end != v && *end == '\0') {
            na->value.type = LOOM_ATTR_INT;
            na->value.u.i = iv;
        } else {
            double fv = strtod(v, &end);
            if (end != v && *end == '\0') {
                na->value.type = LOOM_ATTR_FLOAT;
                na->value.u.f = fv;
            } else if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0) {
                na->value.type = LOOM_ATTR_BOOL;
                na->value.u.b = v[0] == 't';
            } else {
                na->value.type = LOOM_ATTR_STRING;
                na->value.u.s = v;
                na->value.count = (int64_t)strlen(v);
            }
        }
        p = comma != NULL ? comma + 1 : NULL;
    }
    return LOOM_OK;
}

static loom_status td_apply_run(loom_call *call)
{
    const char *name = call->attrs[PK_ATTR(rl_td_apply, fn)].u.s;
    apply_ctx a = { .ctx = call->ctx, .op_name = name };
    char *text = strdup(call->attrs[PK_ATTR(rl_td_apply, attrs)].u.s);
    if (text == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    loom_status st = parse_apply_attrs(text, &a);
    a.op = st == LOOM_OK ? pk_host->op_find(name) : NULL;
    if (st == LOOM_OK && a.op == NULL)
        st = pk_host->fail(LOOM_ENOENT, "fn: no op '%s' is loaded", name);
    rl_td_object *o = st == LOOM_OK ? object_of(call) : NULL;
    if (st == LOOM_OK && o == NULL)
        st = LOOM_EINVAL;
    rl_td *r = NULL;
    if (st == LOOM_OK) {
        st = rl_td_apply(o->td, apply_leaf, &a, &r);
        if (st == LOOM_OK)
            replace(o, r);
        done(o);
    }
    free(text);
    return st;
}

static loom_status td_update_run(loom_call *call)
{
    /* copy the source first: no object lock is held while the registry's is taken */
    rl_td *src = NULL;
    loom_status st = rl_td_registry_clone(call->attrs[PK_ATTR(rl_td_update, source)].u.i, "source", &src);
    if (st != LOOM_OK)
        return st;
    rl_td_object *o = object_of(call);
    if (o == NULL) {
        rl_td_free(src);
        return LOOM_EINVAL;
    }
    int ok = src->batch_ndim >= o->td->batch_ndim;
    for (int32_t d = 0; ok && d < o->td->batch_ndim; d++)
        ok = src->batch[d] == o->td->batch[d];
    /* on a failure part way the dict may hold some of the entries: work on a copy */
    rl_td *r = ok ? rl_td_clone(o->td) : NULL;
    if (!ok)
        st = pk_host->fail(LOOM_EINVAL, "source: its batch_size does not start with this TensorDict's");
    else if (r == NULL)
        st = LOOM_ENOMEM;
    else
        st = rl_td_update(r, src);
    if (st == LOOM_OK)
        replace(o, r);
    else
        rl_td_free(r);
    rl_td_free(src);
    done(o);
    return st;
}

static loom_status td_save_run(loom_call *call)
{
    rl_td_object *o = object_of(call);
    if (o == NULL)
        return LOOM_EINVAL;
    loom_status st = rl_td_save_memmap(o->td, call->attrs[PK_ATTR(rl_td_save, path)].u.s, call->ctx);
    done(o);
    return st;
}

static const loom_object_class *const td_classes[] = { &rl_td_class };

static const loom_kernel_desc td_cpu_kernels[] = {
    PK_KERNEL_CPU(rl_td_set_schema, "cpu:td", 0, td_set_run),
    PK_KERNEL_CPU(rl_td_get_schema, "cpu:td", 0, td_get_run),
    PK_KERNEL_CPU(rl_td_set_non_tensor_schema, "cpu:td", 0, td_set_non_tensor_run),
    PK_KERNEL_CPU(rl_td_get_non_tensor_schema, "cpu:td", 0, td_get_non_tensor_run),
    PK_KERNEL_CPU(rl_td_del_schema, "cpu:td", 0, td_del_run),
    PK_KERNEL_CPU(rl_td_keys_schema, "cpu:td", 0, td_keys_run),
    PK_KERNEL_CPU(rl_td_batch_size_schema, "cpu:td", 0, td_batch_size_run),
    PK_KERNEL_CPU(rl_td_describe_schema, "cpu:td", 0, td_describe_run),
    PK_KERNEL_CPU(rl_td_id_schema, "cpu:td", 0, td_id_run),
    PK_KERNEL_CPU(rl_td_index_schema, "cpu:td", 0, td_index_run),
    PK_KERNEL_CPU(rl_td_select_schema, "cpu:td", 0, td_select_run),
    PK_KERNEL_CPU(rl_td_exclude_schema, "cpu:td", 0, td_exclude_run),
    PK_KERNEL_CPU(rl_td_flatten_keys_schema, "cpu:td", 0, td_flatten_keys_run),
    PK_KERNEL_CPU(rl_td_unflatten_keys_schema, "cpu:td", 0, td_unflatten_keys_run),
    PK_KERNEL_CPU(rl_td_apply_schema, "cpu:td", 0, td_apply_run),
    PK_KERNEL_CPU(rl_td_update_schema, "cpu:td", 0, td_update_run),
    PK_KERNEL_CPU(rl_td_save_schema, "cpu:memmap-parallel", 0, td_save_run),
};

const pk_module rl_tensordict_cpu = {
    .name = "tensordict",
    .ops = rl_td_ops, .n_ops = PK_COUNT(rl_td_ops),
    .classes = td_classes, .n_classes = PK_COUNT(td_classes),
    .kernels = td_cpu_kernels, .n_kernels = PK_COUNT(td_cpu_kernels),
};
