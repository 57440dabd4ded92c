/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_loader.c - the state_dict loader every model class uses
** (model_common.h): key by key checks against the architecture, the
** folding of BatchNorm2d into the conv before it (layers_fold_batch_norm,
** in double), the classifier head whose classes come from the file, the
** refusal of keys the architecture does not have, and the weight entry.
**
** Weights are held once: a folded conv's weight is read only here, so once
** folded into the model's own copy its pages of the file are handed back
** (model_release_pages), and the process keeps the folded copy alone.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "layers/layers.h"
#include "model_common.h"
#include "page_release.h"
#include "weights.h"

loom_status model_loader_init(model_loader *L, const char *cls, const loom_safetensors *st, double bn_eps)
{
    memset(L, 0, sizeof *L);
    L->cls = cls;
    L->st = st;
    L->bn_eps = bn_eps;
    if ((L->keys = calloc(MODEL_MAX_KEYS, sizeof *L->keys)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    return LOOM_OK;
}

void model_loader_free(model_loader *L)
{
    free(L->keys);
    L->keys = NULL;
}

static void describe_spec(const model_key_spec *k, char *buf, size_t size)
{
    int at = snprintf(buf, size, "%s[", k->dtype == LOOM_DTYPE_I64 ? "i64" : "f32");
    for (int32_t d = 0; d < k->ndim && at < (int)size - 24; d++)
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", d ? "," : "", (long long)k->shape[d]);
    snprintf(buf + at, size - (size_t)at, "]");
}

int model_file_has(const loom_safetensors *st, const char *name)
{
    for (int64_t i = 0; i < pk_host->safetensors_count(st); i++)
        if (strcmp(pk_host->safetensors_name(st, i), name) == 0)
            return 1;
    return 0;
}

loom_status model_expect(model_loader *L, const char *prefix, const char *suffix, loom_dtype dtype, int32_t ndim,
                         const int64_t *shape, const loom_tensor **out)
{
    if (L->n_keys >= MODEL_MAX_KEYS)
        return pk_host->fail(LOOM_EINVAL, "%s: more than %d keys expected", L->cls, MODEL_MAX_KEYS);
    model_key_spec *k = &L->keys[L->n_keys++];
    snprintf(k->name, sizeof k->name, "%s%s%s", L->key_prefix != NULL ? L->key_prefix : "", prefix, suffix);
    k->dtype = dtype;
    k->ndim = ndim;
    for (int32_t d = 0; d < ndim; d++)
        k->shape[d] = shape[d];
    char want[96], got[160];
    describe_spec(k, want, sizeof want);
    if (!model_file_has(L->st, k->name))
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key '%s' (expected %s, torchvision's "
                             "state_dict names)", L->cls, k->name, want);
    const loom_tensor *t;
    loom_status s = pk_host->safetensors_get(L->st, k->name, &t);
    if (s != LOOM_OK)
        return s;
    int ok = loom_tensor_dtype_of(t) == dtype && t->ndim == ndim;
    for (int32_t d = 0; ok && d < ndim; d++)
        ok = t->shape[d] == shape[d];
    if (!ok)
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is %s in the weights file, expected %s", L->cls, k->name,
                             pk_describe(pk_host, t, got, sizeof got), want);
    if (dtype == LOOM_DTYPE_F32 && !loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is not contiguous", L->cls, k->name);
    if (strstr(suffix, "running_") == NULL && dtype == LOOM_DTYPE_F32)
        L->num_params += loom_numel(t);
    if (out != NULL)
        *out = t;
    return LOOM_OK;
}

loom_status model_load_conv_bn(model_loader *L, const char *cp, const char *bp, model_conv *c)
{
    const int64_t wshape[4] = { c->cout, c->cin / c->groups, c->k, c->k }, cs[1] = { c->cout };
    const loom_tensor *w, *g, *b, *m, *v;
    char wp[96], bnp[96];
    snprintf(wp, sizeof wp, "%s.", cp);
    snprintf(bnp, sizeof bnp, "%s.", bp);
    loom_status s = model_expect(L, wp, "weight", LOOM_DTYPE_F32, 4, wshape, &w);
    if (s == LOOM_OK)
        s = model_expect(L, bnp, "weight", LOOM_DTYPE_F32, 1, cs, &g);
    if (s == LOOM_OK)
        s = model_expect(L, bnp, "bias", LOOM_DTYPE_F32, 1, cs, &b);
    if (s == LOOM_OK)
        s = model_expect(L, bnp, "running_mean", LOOM_DTYPE_F32, 1, cs, &m);
    if (s == LOOM_OK)
        s = model_expect(L, bnp, "running_var", LOOM_DTYPE_F32, 1, cs, &v);
    if (s == LOOM_OK) {
        /* FrozenBatchNorm2d (a pretrained detector's body) has no num_batches_tracked */
        char nbt[192];
        snprintf(nbt, sizeof nbt, "%s%snum_batches_tracked", L->key_prefix != NULL ? L->key_prefix : "", bnp);
        if (!L->frozen_bn || model_file_has(L->st, nbt))
            s = model_expect(L, bnp, "num_batches_tracked", LOOM_DTYPE_I64, 0, NULL, NULL);
    }
    if (s != LOOM_OK)
        return s;
    int64_t k = wshape[1] * c->k * c->k;
    c->weight = malloc((size_t)(c->cout * k) * sizeof(float));
    c->bias = malloc((size_t)c->cout * sizeof(float));
    if (c->weight == NULL || c->bias == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory folding '%s'", L->cls, cp);
    layers_fold_batch_norm(c->cout, k, loom_data(w), NULL, loom_data(g), loom_data(b), loom_data(m), loom_data(v),
                           L->bn_eps, c->weight, c->bias);
    model_release_pages(loom_data(w), (size_t)(c->cout * k) * sizeof(float));
    return LOOM_OK;
}

loom_status model_load_conv_bias(model_loader *L, const char *prefix, int64_t cin, int64_t cout,
                                 const loom_tensor **weight, const loom_tensor **bias)
{
    const int64_t ws[4] = { cout, cin, 1, 1 }, bs[1] = { cout };
    char p[96];
    snprintf(p, sizeof p, "%s.", prefix);
    loom_status s = model_expect(L, p, "weight", LOOM_DTYPE_F32, 4, ws, weight);
    return s != LOOM_OK ? s : model_expect(L, p, "bias", LOOM_DTYPE_F32, 1, bs, bias);
}

loom_status model_load_linear_head(model_loader *L, const char *prefix, int64_t features, int64_t *classes,
                                   const loom_tensor **weight, const loom_tensor **bias)
{
    char wk[96], p[96];
    snprintf(wk, sizeof wk, "%s.weight", prefix);
    snprintf(p, sizeof p, "%s.", prefix);
    if (!model_file_has(L->st, wk))
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key '%s' (expected f32[classes,%lld])", L->cls,
                             wk, (long long)features);
    const loom_tensor *fw;
    loom_status st = pk_host->safetensors_get(L->st, wk, &fw);
    if (st != LOOM_OK)
        return st;
    *classes = fw->ndim == 2 && fw->shape[0] > 0 ? fw->shape[0] : 1;    /* model_expect then names both shapes */
    const int64_t ws[2] = { *classes, features }, bs[1] = { *classes };
    st = model_expect(L, p, "weight", LOOM_DTYPE_F32, 2, ws, weight);
    return st != LOOM_OK ? st : model_expect(L, p, "bias", LOOM_DTYPE_F32, 1, bs, bias);
}

loom_status model_check_no_unexpected(const model_loader *L)
{
    for (int64_t i = 0; i < pk_host->safetensors_count(L->st); i++) {
        const char *name = pk_host->safetensors_name(L->st, i);
        int known = 0;
        for (int k = 0; k < L->n_keys && !known; k++)
            known = strcmp(L->keys[k].name, name) == 0;
        if (!known) {
            const loom_tensor *t;
            char got[160] = "?";
            if (pk_host->safetensors_get(L->st, name, &t) == LOOM_OK)
                pk_describe(pk_host, t, got, sizeof got);
            return pk_host->fail(LOOM_EINVAL, "%s: unexpected key '%s' (%s) in the weights file: %s has no such "
                                 "tensor", L->cls, name, got, L->cls);
        }
    }
    return LOOM_OK;
}

/* The entry named by the `weights` attribute (attrs[0]); NULL and LOOM_OK when none is named. */
static loom_status entry_named(const loom_object_args *args, const model_weights_entry **entry)
{
    *entry = NULL;
    const loom_attr_value *wa = args->n_attrs > 0 ? &args->attrs[0] : NULL;
    if (wa == NULL || !wa->is_set || wa->u.s == NULL || wa->u.s[0] == '\0')
        return LOOM_OK;
    if ((*entry = model_weights_find(args->class_name, wa->u.s)) == NULL)
        return LOOM_EINVAL;
    return LOOM_OK;
}

loom_status model_entry_of(const loom_object_args *args, int64_t classes, int64_t num_params,
                           const model_weights_entry **entry)
{
    loom_status st = entry_named(args, entry);
    if (st != LOOM_OK || *entry == NULL)
        return st;
    return model_weights_check(*entry, classes, num_params, 1, 1);
}

loom_status model_conv_algorithm(const loom_object_args *args, int at, int *winograd)
{
    *winograd = 0;
    const loom_attr_value *a = args->n_attrs > at ? &args->attrs[at] : NULL;
    if (a == NULL || !a->is_set || a->u.s == NULL || strcmp(a->u.s, "direct") == 0)
        return LOOM_OK;
    if (strcmp(a->u.s, "winograd") == 0) {
        *winograd = 1;
        return LOOM_OK;
    }
    return pk_host->fail(LOOM_EINVAL, "%s: attribute 'conv_algorithm' must be 'direct' or 'winograd', not '%s'",
                         args->class_name, a->u.s);
}

loom_status model_find_op(const char *cls, const char *name, const loom_op **out)
{
    if ((*out = pk_host->op_find(name)) == NULL)
        return pk_host->fail(LOOM_ENOENT, "%s needs op %s", cls, name);
    return LOOM_OK;
}

void model_conv_free(model_conv *c)
{
    free(c->weight);
    free(c->bias);
    c->weight = c->bias = NULL;
}

model_conv model_conv_of(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t groups)
{
    model_conv c = { NULL, NULL, cin, cout, k, stride, k / 2, groups };
    return c;
}

loom_status model_create(const loom_object_args *args, void **state_out, const void *arch, size_t size,
                         double bn_eps, const char *head, loom_status (*load)(model_loader *L, void *model),
                         void (*destroy)(void *model))
{
    *state_out = NULL;
    const char *cls = args->class_name;
    if (arch == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is not a class of the models module", cls);
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights model.safetensors) holding "
                             "torchvision's state_dict", cls);
    /* an entry the class does not have is refused before the file is read */
    const model_weights_entry *named;
    loom_status named_st = entry_named(args, &named);
    if (named_st != LOOM_OK)
        return named_st;
    model_base *b = calloc(1, size);
    if (b == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    pthread_mutex_init(&b->lock, NULL);
    b->cls = cls;
    b->arch = arch;
    model_loader L;
    loom_status st = model_loader_init(&L, cls, args->weights, bn_eps);
    if (st == LOOM_OK)
        st = load(&L, b);
    const loom_tensor *fw = NULL, *fb = NULL;
    if (st == LOOM_OK)
        st = model_load_linear_head(&L, head, b->features, &b->classes, &fw, &fb);
    if (st == LOOM_OK)
        st = model_check_no_unexpected(&L);
    if (st == LOOM_OK) {
        b->fc_weight = loom_data(fw);
        b->fc_bias = loom_data(fb);
        b->num_params = L.num_params;
        if ((st = model_find_op(cls, "vision.conv2d", &b->conv2d)) == LOOM_OK
            && (st = model_find_op(cls, "vision.squeeze_excitation", &b->se)) == LOOM_OK
            && (st = model_find_op(cls, "vision.max_pool2d", &b->max_pool)) == LOOM_OK
            && (st = model_find_op(cls, "vision.channel_shuffle", &b->shuffle)) == LOOM_OK
            && (st = model_find_op(cls, "vision.adaptive_avg_pool2d", &b->avg_pool)) == LOOM_OK)
            st = model_find_op(cls, "vision.linear", &b->linear);
    }
    model_loader_free(&L);
    /* a weight entry, when named: the file must fit it */
    if (st == LOOM_OK)
        st = model_entry_of(args, b->classes, b->num_params, &b->entry);
    if (st != LOOM_OK) {
        destroy(b);
        return st;
    }
    *state_out = b;
    return LOOM_OK;
}

void model_base_fini(model_base *b)
{
    model_buffers_free(&b->plan);
    pthread_mutex_destroy(&b->lock);
}
