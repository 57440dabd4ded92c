/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_object.c - create and destroy of rec.dlrm (dlrm.h): torchrec's
** DLRM.__init__ checks (one embedding_dim for every table, equal to the
** dense arch's last layer; an over arch of at least two layers), every
** tensor of the state_dict checked by key and shape before anything is
** made, the dense layers copied into the object (they train), and the
** tables handed (borrowed, under the collection's own keys) to a
** rec.fused_embedding_bag_collection made through host->object_create
** with the embedding optimizer; with a `plan`, a
** rec.sharded_embedding_bag_collection (rec-mpi.so) over it instead
** (dlrm.h: sharded).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlrm.h"

#define W REC_DLRM_CLASS
#define A_(name) args->attrs[PK_ATTR(rec_dlrm_class, name)]
#define TABLE_PREFIX "sparse_arch.embedding_bag_collection."
#define REC_SHARDED_EBC_CLASS "rec.sharded_embedding_bag_collection"   /* rec-mpi.so */

static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };

static void dlrm_destroy(void *state)
{
    rec_dlrm *m = state;
    if (!m)
        return;
    for (int64_t i = 0; i < m->n_layers; i++) {
        rec_dlrm_layer *l = &m->layers[i];
        pk_host->free(cpu, l->w);
        pk_host->free(cpu, l->b);
        pk_host->free(cpu, l->w_sum);
        pk_host->free(cpu, l->b_sum);
    }
    if (m->ebc)
        pk_host->object_free(m->ebc);
    free(m->table_names ? m->table_names[0] : NULL);   /* one buffer holds every name */
    free(m->table_names);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* The tensor `key` of the state_dict, f32 of shape [rows, cols] (cols < 0: [rows]). */
static loom_status expect_f32(const loom_object_args *args, const char *key, int64_t rows, int64_t cols,
                              const loom_tensor **out)
{
    if (pk_host->safetensors_get(args->weights, key, out) != LOOM_OK)
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no '%s' (DLRM's state_dict keys)", W, key);
    const loom_tensor *t = *out;
    const int32_t ndim = cols < 0 ? 1 : 2;
    if (loom_tensor_dtype_of(t) == LOOM_DTYPE_F32 && t->ndim == ndim && t->shape[0] == rows &&
        (ndim == 1 || t->shape[1] == cols))
        return LOOM_OK;
    char got[96], want[48];
    if (ndim == 2)
        snprintf(want, sizeof want, "f32[%lld,%lld]", (long long)rows, (long long)cols);
    else
        snprintf(want, sizeof want, "f32[%lld]", (long long)rows);
    return pk_host->fail(LOOM_EINVAL, "%s: '%s' is %s, expected %s", W, key, pk_describe(pk_host, t, got, sizeof got),
                         want);
}

/* Layer i of the model from the file: its own copy of weight and bias, Adagrad's sums at zero. */
static loom_status load_layer(const loom_object_args *args, rec_dlrm *m, const char *prefix, int64_t in, int64_t out,
                              int relu)
{
    char wkey[160], bkey[160];
    snprintf(wkey, sizeof wkey, "%sweight", prefix);
    snprintf(bkey, sizeof bkey, "%sbias", prefix);
    const loom_tensor *w, *b;
    loom_status st = expect_f32(args, wkey, out, in, &w);
    if (st == LOOM_OK)
        st = expect_f32(args, bkey, out, -1, &b);
    if (st != LOOM_OK)
        return st;
    rec_dlrm_layer *l = &m->layers[m->n_layers++];
    *l = (rec_dlrm_layer){ .in = in, .out = out, .relu = relu };
    const size_t wn = (size_t)(in * out) * sizeof(float), bn = (size_t)out * sizeof(float);
    l->w = pk_host->alloc(cpu, wn, 64);
    l->b = pk_host->alloc(cpu, bn, 64);
    if (m->adagrad) {
        l->w_sum = pk_host->alloc(cpu, wn, 64);
        l->b_sum = pk_host->alloc(cpu, bn, 64);
    }
    if (!l->w || !l->b || (m->adagrad && (!l->w_sum || !l->b_sum)))
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for '%s'", W, wkey);
    memcpy(l->w, loom_data(w), wn);      /* the mapping may be unaligned: memcpy */
    memcpy(l->b, loom_data(b), bn);
    if (m->adagrad) {
        memset(l->w_sum, 0, wn);
        memset(l->b_sum, 0, bn);
    }
    return LOOM_OK;
}

static loom_status load_mlps(const loom_object_args *args, rec_dlrm *m)
{
    const loom_attr_value *dl = &A_(dense_arch_layer_sizes), *ol = &A_(over_arch_layer_sizes);
    char prefix[96];
    loom_status st = LOOM_OK;
    int64_t in = m->dense_in;
    for (int64_t i = 0; i < dl->count && st == LOOM_OK; i++) {
        snprintf(prefix, sizeof prefix, "dense_arch.model._mlp.%lld._linear.", (long long)i);
        st = load_layer(args, m, prefix, in, dl->u.ints[i], 1);
        in = dl->u.ints[i];
    }
    m->n_dense = m->n_layers;
    in = m->dim + m->n_features * (m->n_features + 1) / 2;
    for (int64_t i = 0; i < ol->count && st == LOOM_OK; i++) {
        const int last = i == ol->count - 1;
        if (last)
            snprintf(prefix, sizeof prefix, "over_arch.model.1.");
        else
            snprintf(prefix, sizeof prefix, "over_arch.model.0._mlp.%lld._linear.", (long long)i);
        st = load_layer(args, m, prefix, in, ol->u.ints[i], !last);
        in = ol->u.ints[i];
    }
    return st;
}

/* The table names (one buffer, split in place) and the count of features. */
static loom_status read_tables(const loom_object_args *args, rec_dlrm *m)
{
    const char *tables = A_(tables).u.s, *features = A_(feature_names).u.s;
    int64_t n = 1;
    for (const char *p = tables; *p; p++)
        n += *p == ',';
    char *buf = strdup(tables);
    m->table_names = calloc((size_t)n, sizeof *m->table_names);
    if (!buf || !m->table_names) {
        free(buf);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    }
    m->n_tables = n;
    for (int64_t t = 0; t < n; t++) {
        m->table_names[t] = buf;
        char *comma = strchr(buf, ',');
        if (comma)
            *comma = '\0';
        buf = comma ? comma + 1 : buf + strlen(buf);
    }
    /* "f0|f1,f2": the lists' '|' and ',' separate features; a table without a list has one (its name) */
    m->n_features = *features ? 1 : n;
    for (const char *p = features; *p; p++)
        m->n_features += *p == '|' || *p == ',';
    return LOOM_OK;
}

static loom_named_attr string_attr(const char *name, const char *v)
{
    return (loom_named_attr){ name, { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(v), .u.s = v } };
}

/* The fused collection over the file's tables, renamed to its keys (embedding_bags.<table>.weight). */
static loom_status make_collection(const loom_object_args *args, rec_dlrm *m)
{
    const char *opt = A_(embedding_optimizer).u.s;
    if (strcmp(opt, "sgd") != 0 && strcmp(opt, "rowwise_adagrad") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'embedding_optimizer' is '%s': sgd or rowwise_adagrad", W, opt);
    const int64_t T = m->n_tables;
    loom_named_tensor *tensors = calloc((size_t)T, sizeof *tensors);
    char (*keys)[192] = calloc((size_t)T, sizeof *keys);
    loom_status st = tensors && keys ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    for (int64_t t = 0; t < T && st == LOOM_OK; t++) {
        char key[256];
        snprintf(key, sizeof key, TABLE_PREFIX "embedding_bags.%s.weight", m->table_names[t]);
        snprintf(keys[t], sizeof keys[t], "embedding_bags.%s.weight", m->table_names[t]);
        tensors[t].name = keys[t];
        st = expect_f32(args, key, A_(num_embeddings).u.ints[t], m->dim, &tensors[t].tensor);
    }
    if (st == LOOM_OK && m->sharded) {
        const loom_named_attr attrs[9] = {
            { "tables", A_(tables) },
            { "num_embeddings", A_(num_embeddings) },
            { "embedding_dim", A_(embedding_dim) },
            { "feature_names", A_(feature_names) },
            { "plan", A_(plan) },
            string_attr("optimizer", opt),
            { "lr", A_(lr) },
            { "eps", A_(eps) },
            { "timeout_s", A_(timeout_s) },
        };
        const loom_object_request req = { .struct_size = sizeof req, .class_name = REC_SHARDED_EBC_CLASS,
                                          .n_attrs = 9, .attrs = attrs, .n_tensors = (int32_t)T, .tensors = tensors,
                                          .device = { LOOM_DEVICE_CPU, 0 } };
        if ((m->ebc = pk_host->object_create(args->ctx, &req)) == NULL)
            st = LOOM_EINVAL;   /* the sharded collection's message stands */
    } else if (st == LOOM_OK) {
        const loom_named_attr attrs[8] = {
            { "tables", A_(tables) },
            { "num_embeddings", A_(num_embeddings) },
            { "embedding_dim", A_(embedding_dim) },
            { "feature_names", A_(feature_names) },
            { "data_type", A_(data_type) },
            string_attr("optimizer", opt),
            { "lr", A_(lr) },
            { "eps", A_(eps) },
        };
        const loom_object_request req = { .struct_size = sizeof req, .class_name = REC_FUSED_EBC_CLASS, .n_attrs = 8,
                                          .attrs = attrs, .n_tensors = (int32_t)T, .tensors = tensors,
                                          .device = { LOOM_DEVICE_CPU, 0 } };
        if ((m->ebc = pk_host->object_create(args->ctx, &req)) == NULL)
            st = LOOM_EINVAL;   /* the collection's message stands */
    }
    free(tensors);
    free(keys);
    return st;
}

static loom_status check_config(const loom_object_args *args)
{
    const loom_attr_value *ed = &A_(embedding_dim), *dl = &A_(dense_arch_layer_sizes), *ol = &A_(over_arch_layer_sizes);
    if (ed->count < 1)
        return pk_host->fail(LOOM_EINVAL, "%s: At least one embedding bag is required", W);
    for (int64_t t = 1; t < ed->count; t++)
        if (ed->u.ints[t] != ed->u.ints[0])
            return pk_host->fail(LOOM_EINVAL, "%s: All EmbeddingBagConfigs must have the same dimension: table %lld "
                                 "has embedding_dim %lld, table 0 %lld", W, (long long)t, (long long)ed->u.ints[t],
                                 (long long)ed->u.ints[0]);
    if (dl->count < 1 || dl->count > REC_DLRM_MAX_LAYERS || ol->count > REC_DLRM_MAX_LAYERS)
        return pk_host->fail(LOOM_EINVAL, "%s: 'dense_arch_layer_sizes' has %lld layers, "
                             "'over_arch_layer_sizes' %lld: 1 to %d each", W, (long long)dl->count,
                             (long long)ol->count, REC_DLRM_MAX_LAYERS);
    if (ol->count < 2)
        return pk_host->fail(LOOM_EINVAL, "%s: 'over_arch_layer_sizes': OverArch must have multiple layers", W);
    if (dl->u.ints[dl->count - 1] != ed->u.ints[0])
        return pk_host->fail(LOOM_EINVAL, "%s: embedding_bag_collection dimension (%lld) and final dense arch layer "
                             "size (%lld) must match.", W, (long long)ed->u.ints[0],
                             (long long)dl->u.ints[dl->count - 1]);
    const char *dopt = A_(dense_optimizer).u.s;
    if (strcmp(dopt, "sgd") != 0 && strcmp(dopt, "adagrad") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'dense_optimizer' is '%s': sgd or adagrad", W, dopt);
    return LOOM_OK;
}

static loom_status dlrm_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    if (!LOOM_HAS_MEMBER(pk_host, loom_host_api, object_free))
        return pk_host->fail(LOOM_EABI, "%s needs a core of ABI 1.3 (host->object_create)", W);
    if (!args->weights)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file: DLRM's state_dict (dense_arch.model._mlp.<i>."
                             "_linear.weight, " TABLE_PREFIX "embedding_bags.<table>.weight, over_arch...)", W);
    loom_status st = check_config(args);
    if (st != LOOM_OK)
        return st;
    rec_dlrm *m = calloc(1, sizeof *m);
    if (!m)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    pthread_mutex_init(&m->lock, NULL);
    m->dim = A_(embedding_dim).u.ints[0];
    m->dense_in = A_(dense_in_features).u.i;
    m->adagrad = strcmp(A_(dense_optimizer).u.s, "adagrad") == 0;
    m->lr = A_(lr).u.f;
    m->eps = A_(eps).u.f;
    m->sharded = *A_(plan).u.s != '\0';
    if (m->sharded && (strstr(A_(data_type).u.s, "fp16") || strstr(A_(data_type).u.s, "int")))
        st = pk_host->fail(LOOM_EINVAL, "%s: a sharded model's tables are fp32 ('data_type' is '%s')", W,
                           A_(data_type).u.s);
    else if (m->sharded) {
        if ((m->ebc_forward = pk_host->op_find(REC_SHARDED_EBC_CLASS)) == NULL ||
            (m->ebc_backward = pk_host->op_find(REC_SHARDED_EBC_CLASS "_backward")) == NULL ||
            (m->ebc_weight = pk_host->op_find(REC_SHARDED_EBC_CLASS "_weight")) == NULL ||
            (m->allreduce = pk_host->op_find(REC_SHARDED_EBC_CLASS "_allreduce")) == NULL)
            st = pk_host->fail(LOOM_ENOENT, "%s: a plan shards the tables on %s: load the rec-mpi pack", W,
                               REC_SHARDED_EBC_CLASS);
    } else if ((m->ebc_forward = pk_host->op_find(REC_FUSED_EBC_CLASS)) == NULL ||
        (m->ebc_backward = pk_host->op_find("rec.fused_embedding_bag_collection_backward")) == NULL ||
        (m->ebc_weight = pk_host->op_find("rec.fused_embedding_bag_collection_weight")) == NULL)
        st = pk_host->fail(LOOM_ENOENT, "%s runs its tables on %s: load the fbgemm pack", W, REC_FUSED_EBC_CLASS);
    if (st == LOOM_OK)
        st = read_tables(args, m);
    if (st == LOOM_OK && (A_(num_embeddings).count != m->n_tables || A_(embedding_dim).count != m->n_tables))
        st = pk_host->fail(LOOM_EINVAL, "%s: 'num_embeddings' (%lld) and 'embedding_dim' (%lld) need one entry per "
                           "table (%lld)", W, (long long)A_(num_embeddings).count,
                           (long long)A_(embedding_dim).count, (long long)m->n_tables);
    if (st == LOOM_OK)
        st = load_mlps(args, m);
    if (st == LOOM_OK)
        st = make_collection(args, m);
    if (st != LOOM_OK) {
        dlrm_destroy(m);
        return st;
    }
    *state_out = m;
    return LOOM_OK;
}

PK_ATTR_TABLE(rec_dlrm_class, REC_DLRM_CLASS_ATTRS);

const loom_object_class rec_dlrm_class = {
    .struct_size = sizeof(loom_object_class),
    .name = W,
    .doc = "torchrec's DLRM (DenseArch MLP, an EmbeddingBagCollection, dot interaction, OverArch) from DLRM's "
           "state_dict, trained as DLRMTrain; methods rec.dlrm (logits), rec.dlrm_train_step, rec.dlrm_save",
    PK_ATTRS(rec_dlrm_class_attrs),
    .create = dlrm_create,
    .destroy = dlrm_destroy,
};
