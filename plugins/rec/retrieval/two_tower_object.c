/* SPDX-License-Identifier: BSD-3-Clause */
/*
** two_tower_object.c - create and destroy of rec.two_tower (two_tower.h):
** per tower, a rec.embedding_bag_collection object over the tower's table
** (its tensor of the file renamed to the collection's state_dict key) and
** one core.linear object per MLP layer over the file's weight and bias,
** all through host->object_create; the file's tensors are borrowed, not
** copied. Every tensor's key and shape is checked here, so that a wrong
** file is refused by key before any object is made.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "two_tower.h"

#define W REC_TWO_TOWER_CLASS
#define A_(name) args->attrs[PK_ATTR(rec_two_tower_class, name)]

static const char *const tower_prefix[2] = { "query_proj", "candidate_proj" };

static void two_tower_destroy(void *state)
{
    rec_two_tower *m = state;
    if (!m)
        return;
    for (int t = 0; t < 2; t++) {
        rec_tower *tw = &m->towers[t];
        for (int64_t l = 0; l < tw->n_layers; l++)
            if (tw->layers[l])
                pk_host->object_free(tw->layers[l]);
        if (tw->ebc)
            pk_host->object_free(tw->ebc);
    }
    free(m);
}

/* Field i of a ','-separated list into out ("" when text is ""); -1 when the list has not exactly n fields. */
static int list_field(const char *text, int i, int n, char *out, size_t size)
{
    out[0] = '\0';
    if (!*text)
        return 0;
    int count = 1;
    for (const char *p = text; *p; p++)
        count += *p == ',';
    if (count != n)
        return -1;
    const char *start = text;
    for (int k = 0; k < i; k++)
        start = strchr(start, ',') + 1;
    const char *end = strchr(start, ',');
    size_t len = end ? (size_t)(end - start) : strlen(start);
    if (len >= size)
        return -1;
    memcpy(out, start, len);
    out[len] = '\0';
    return 0;
}

static loom_status get_tensor(const loom_object_args *args, const char *key, int64_t rows, int64_t cols,
                              const loom_tensor **out)
{
    char b[96];
    if (pk_host->safetensors_get(args->weights, key, out) != LOOM_OK)
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no '%s' (TwoTower's state_dict keys)", W, key);
    const loom_tensor *t = *out;
    const int ndim = cols < 0 ? 1 : 2;
    if (loom_tensor_dtype_of(t) != LOOM_DTYPE_F32 || t->ndim != ndim || t->shape[0] != rows ||
        (ndim == 2 && t->shape[1] != cols)) {
        if (ndim == 2)
            return pk_host->fail(LOOM_EINVAL, "%s: '%s' is %s, expected f32[%lld,%lld]", W, key,
                                 pk_describe(pk_host, t, b, sizeof b), (long long)rows, (long long)cols);
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' is %s, expected f32[%lld]", W, key,
                             pk_describe(pk_host, t, b, sizeof b), (long long)rows);
    }
    return LOOM_OK;
}

/* The tower's collection: one table, its features, pooling and data type. */
static loom_status make_ebc(const loom_object_args *args, int t, rec_tower *tw)
{
    char table[128], features[512], pooling[16], dtype[16], key[192], ebc_key[192];
    if (list_field(A_(tables).u.s, t, 2, table, sizeof table) != 0 || !table[0])
        return pk_host->fail(LOOM_EINVAL, "%s: 'tables' is \"%s\": it needs two names, the query tower's table "
                             "then the candidate tower's", W, A_(tables).u.s);
    if (list_field(A_(feature_names).u.s, t, 2, features, sizeof features) != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'feature_names' \"%s\" needs one entry per table (2)", W,
                             A_(feature_names).u.s);
    if (list_field(A_(pooling).u.s, t, 2, pooling, sizeof pooling) != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'pooling' \"%s\" needs one entry per table (2)", W, A_(pooling).u.s);
    if (list_field(A_(data_type).u.s, t, 2, dtype, sizeof dtype) != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'data_type' \"%s\" needs one entry per table (2)", W,
                             A_(data_type).u.s);
    if (strcmp(dtype, "") != 0 && strcmp(dtype, "fp32") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: table '%s': data_type %s: the towers take fp32 tables", W, table,
                             dtype);
    const int64_t E = A_(num_embeddings).u.ints[t], D = A_(embedding_dim).u.ints[t];
    snprintf(key, sizeof key, "ebc.embedding_bags.%s.weight", table);
    const loom_tensor *weight;
    loom_status st = get_tensor(args, key, E, D, &weight);
    if (st != LOOM_OK)
        return st;
    int64_t n_features = 1;
    for (const char *p = features; *p; p++)
        n_features += *p == '|';
    tw->in_size = n_features * D;
    snprintf(ebc_key, sizeof ebc_key, "embedding_bags.%s.weight", table);
    const loom_named_tensor tensor = { ebc_key, weight };
    loom_named_attr attrs[6] = {
        { "tables", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(table), .u.s = table } },
        { "num_embeddings", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u.ints = &E } },
        { "embedding_dim", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u.ints = &D } },
        { "feature_names", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(features),
                             .u.s = features } },
        { "pooling", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(pooling), .u.s = pooling } },
        { "is_weighted", { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u.b = A_(is_weighted).u.b } },
    };
    const loom_object_request req = { .struct_size = sizeof req, .class_name = REC_EBC_CLASS, .n_attrs = 6,
                                      .attrs = attrs, .n_tensors = 1, .tensors = &tensor,
                                      .device = { LOOM_DEVICE_CPU, 0 } };
    if ((tw->ebc = pk_host->object_create(args->ctx, &req)) == NULL)
        return LOOM_EINVAL;   /* the collection's message stands */
    return LOOM_OK;
}

/* The tower's MLP: a core.linear per layer, its in_size the previous out_size. */
static loom_status make_mlp(const loom_object_args *args, int t, rec_tower *tw)
{
    const loom_attr_value *ls = &A_(layer_sizes);
    int64_t in = tw->in_size;
    for (int64_t l = 0; l < ls->count; l++) {
        char wkey[96], bkey[96];
        snprintf(wkey, sizeof wkey, "%s._mlp.%lld._linear.weight", tower_prefix[t], (long long)l);
        snprintf(bkey, sizeof bkey, "%s._mlp.%lld._linear.bias", tower_prefix[t], (long long)l);
        const loom_tensor *w, *b;
        loom_status st = get_tensor(args, wkey, ls->u.ints[l], in, &w);
        if (st == LOOM_OK)
            st = get_tensor(args, bkey, ls->u.ints[l], -1, &b);
        if (st != LOOM_OK)
            return st;
        const loom_named_tensor tensors[2] = { { "weight", w }, { "bias", b } };
        const loom_object_request req = { .struct_size = sizeof req, .class_name = "core.linear", .n_tensors = 2,
                                          .tensors = tensors, .device = { LOOM_DEVICE_CPU, 0 } };
        if ((tw->layers[l] = pk_host->object_create(args->ctx, &req)) == NULL)
            return LOOM_EINVAL;   /* core.linear's message stands */
        tw->n_layers = l + 1;
        in = ls->u.ints[l];
    }
    tw->out_size = in;
    return LOOM_OK;
}

static loom_status two_tower_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    if (!LOOM_HAS_MEMBER(pk_host, loom_host_api, object_free))
        return pk_host->fail(LOOM_EABI, "%s needs a core of ABI 1.3 (host->object_create)", W);
    if (!args->weights)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file: TwoTower's state_dict (ebc.embedding_bags."
                             "<table>.weight, query_proj._mlp.<i>._linear.weight, ...)", W);
    const loom_attr_value *ne = &A_(num_embeddings), *ed = &A_(embedding_dim), *ls = &A_(layer_sizes);
    if (ne->count != 2 || ed->count != 2)
        return pk_host->fail(LOOM_EINVAL, "%s: 'num_embeddings' and 'embedding_dim' need two entries (the query "
                             "and the candidate table), not %lld and %lld", W, (long long)ne->count,
                             (long long)ed->count);
    if (ed->u.ints[0] != ed->u.ints[1])
        return pk_host->fail(LOOM_EINVAL, "%s: the two tables' embedding_dim %lld and %lld differ (TwoTower embeds "
                             "both into one space)", W, (long long)ed->u.ints[0], (long long)ed->u.ints[1]);
    if (ls->count < 1 || ls->count > REC_TWO_TOWER_MAX_LAYERS)
        return pk_host->fail(LOOM_EINVAL, "%s: 'layer_sizes' has %lld entries: 1 to %d", W, (long long)ls->count,
                             REC_TWO_TOWER_MAX_LAYERS);
    rec_two_tower *m = calloc(1, sizeof *m);
    if (!m)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    m->relu_last = A_(activation_on_last).u.b != 0;
    loom_status st = LOOM_OK;
    if ((m->ebc_op = pk_host->op_find(REC_EBC_CLASS)) == NULL || (m->linear_op = pk_host->op_find("core.linear"))
        == NULL)
        st = pk_host->fail(LOOM_ENOENT, "%s runs on %s and core.linear: load the core and fbgemm packs", W,
                           REC_EBC_CLASS);
    for (int t = 0; t < 2 && st == LOOM_OK; t++)
        if ((st = make_ebc(args, t, &m->towers[t])) == LOOM_OK)
            st = make_mlp(args, t, &m->towers[t]);
    if (st != LOOM_OK) {
        two_tower_destroy(m);
        return st;
    }
    *state_out = m;
    return LOOM_OK;
}

PK_ATTR_TABLE(rec_two_tower_class, REC_TWO_TOWER_CLASS_ATTRS);

const loom_object_class rec_two_tower_class = {
    .struct_size = sizeof(loom_object_class),
    .name = W,
    .doc = "torchrec's TwoTower retrieval model: a query and a candidate tower, each an EmbeddingBagCollection "
           "table and an MLP, from TwoTower's state_dict; methods rec.two_tower_query_embed, "
           "rec.two_tower_candidate_embed",
    PK_ATTRS(rec_two_tower_class_attrs),
    .create = two_tower_create,
    .destroy = two_tower_destroy,
};
