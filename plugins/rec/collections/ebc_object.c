/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ebc_object.c - create and destroy of rec.embedding_bag_collection
** (collections.h): the table configs from the class attributes, the tables
** from the weights file by torchrec's state_dict keys, one fbgemm.tbe
** object per (pooling, data_type) group made over those tensors.
**
** torchrec's checks are kept (a duplicate table name is a ValueError there);
** what torchrec would only find at load_state_dict or at the first forward
** (a missing table, one of the wrong dtype or size) is refused here, naming
** the table and the key.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collections.h"

#define A_(name) args->attrs[PK_ATTR(rec_ebc_class, name)]

enum { DT_FP32, DT_FP16, DT_INT8, DT_INT4 };
static const char *const weight_type_names[] = { "fp32", "fp16", "int8", "int4" };

void rec_collection_destroy(void *state)
{
    rec_ebc *e = state;
    if (!e)
        return;
    for (int64_t g = 0; g < e->n_groups; g++) {
        if (e->groups[g].tbe)
            pk_host->object_free(e->groups[g].tbe);
        free(e->groups[g].features);
        free(e->groups[g].tables);
    }
    free(e->groups);
    for (int64_t t = 0; t < e->n_tables && e->table_names; t++)
        free(e->table_names[t]);
    for (int64_t f = 0; f < e->n_features && e->feature_names; f++)
        free(e->feature_names[f]);
    free(e->table_names);
    free(e->feature_names);
    free(e->num_embeddings);
    free(e->embedding_dim);
    free(e->feature_table);
    free(e->feature_offset);
    free(e);
}

/* Splits s at sep into a new array of new strings; *n the count ("" is one empty part). */
static char **split(const char *s, char sep, int64_t *n)
{
    int64_t count = 1;
    for (const char *p = s; *p; p++)
        count += *p == sep;
    char **parts = calloc((size_t)count, sizeof *parts);
    if (!parts)
        return NULL;
    const char *start = s;
    for (int64_t i = 0; i < count; i++) {
        const char *end = strchr(start, sep);
        size_t len = end ? (size_t)(end - start) : strlen(start);
        parts[i] = malloc(len + 1);
        if (!parts[i]) {
            for (int64_t j = 0; j < i; j++)
                free(parts[j]);
            free(parts);
            return NULL;
        }
        memcpy(parts[i], start, len);
        parts[i][len] = '\0';
        start = end ? end + 1 : start + len;
    }
    *n = count;
    return parts;
}

static void free_parts(char **p, int64_t n)
{
    for (int64_t i = 0; p && i < n; i++)
        free(p[i]);
    free(p);
}

/* A per-table choice list: "" means dflt for every table. */
static loom_status per_table(const char *attr, const char *text, int64_t n_tables, const char *const *choices,
                             const char *allowed, int *out)
{
    if (!*text) {
        for (int64_t t = 0; t < n_tables; t++)
            out[t] = 0;
        return LOOM_OK;
    }
    int64_t n = 0;
    char **parts = split(text, ',', &n);
    if (!parts)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_EBC_CLASS);
    loom_status st = LOOM_OK;
    if (n != n_tables)
        st = pk_host->fail(LOOM_EINVAL, "'%s' \"%s\" has %lld entries for %lld tables", attr, text, (long long)n,
                           (long long)n_tables);
    for (int64_t t = 0; st == LOOM_OK && t < n; t++) {
        int k = 0;
        while (choices[k] && strcmp(choices[k], parts[t]) != 0)
            k++;
        if (!choices[k])
            st = pk_host->fail(LOOM_EINVAL, "'%s' of table %lld is \"%s\": it must be %s", attr, (long long)t,
                               parts[t], allowed);
        out[t] = k;
    }
    free_parts(parts, n);
    return st;
}

static loom_status make_group(rec_ebc *e, const loom_object_args *args, rec_ebc_group *g, const int *table_of_group,
                              const int *data_type, const loom_tensor *const *weights)
{
    /* the group's tables, in table order, and its features' table within the group */
    int64_t n_t = 0, *gt = calloc((size_t)e->n_tables, sizeof *gt);
    loom_named_tensor *tensors = calloc((size_t)e->n_tables, sizeof *tensors);
    char (*names)[32] = calloc((size_t)e->n_tables, sizeof *names);
    int64_t *ftm = calloc((size_t)(e->n_features > 0 ? e->n_features : 1), sizeof *ftm);
    char *tys = calloc((size_t)e->n_tables * 5 + 1, 1);
    int64_t *dims = calloc((size_t)e->n_tables, sizeof *dims);
    g->features = calloc((size_t)(e->n_features > 0 ? e->n_features : 1), sizeof *g->features);
    g->tables = calloc((size_t)(e->n_tables > 0 ? e->n_tables : 1), sizeof *g->tables);
    /* fused: each table's optimizer state (two momenta) and the step count go along */
    const int64_t n_tensors = e->optim_attrs ? 3 * e->n_tables + 1 : e->n_tables;
    loom_named_tensor *all = calloc((size_t)(n_tensors > 0 ? n_tensors : 1), sizeof *all);
    char (*mnames)[32] = calloc((size_t)(2 * e->n_tables + 1), sizeof *mnames);
    loom_named_attr *attrs = calloc((size_t)(8 + e->n_optim_attrs), sizeof *attrs);
    loom_status st = LOOM_OK;
    if (!gt || !tensors || !names || !ftm || !tys || !dims || !g->features || !g->tables || !all || !mnames ||
        !attrs) {
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_EBC_CLASS);
        goto done;
    }
    for (int64_t t = 0; t < e->n_tables; t++) {
        gt[t] = -1;
        if (table_of_group[t] != (int)(g - e->groups))
            continue;
        gt[t] = n_t;
        snprintf(names[n_t], sizeof names[n_t], "table.%lld", (long long)n_t);
        tensors[n_t].name = names[n_t];
        tensors[n_t].tensor = weights[t];
        if (n_t)
            strcat(tys, ",");
        strcat(tys, weight_type_names[data_type[t]]);
        dims[n_t] = e->embedding_dim[t];
        g->tables[n_t] = t;
        n_t++;
    }
    g->n_tables = n_t;
    int64_t n_all = 0;
    for (int64_t i = 0; i < n_t; i++)
        all[n_all++] = tensors[i];
    for (int64_t i = 0; e->optim_attrs && i < n_t; i++)
        for (int k = 1; k <= 2; k++) {
            /* torchrec's fused optimizer state key <table>.weight.momentum_<k> -> fbgemm's momentum<k>.<i> */
            char key[300];
            snprintf(key, sizeof key, "%s.weight.momentum_%d", e->table_names[g->tables[i]], k);
            const loom_tensor *m = NULL;
            for (int64_t j = 0; j < pk_host->safetensors_count(args->weights); j++)
                if (strcmp(pk_host->safetensors_name(args->weights, j), key) == 0)
                    (void)pk_host->safetensors_get(args->weights, key, &m);
            if (!m)
                continue;
            char *nm = mnames[2 * i + (k - 1)];
            snprintf(nm, 32, "momentum%d.%lld", k, (long long)i);
            all[n_all++] = (loom_named_tensor){ nm, m };
        }
    for (int64_t j = 0; e->optim_attrs && j < pk_host->safetensors_count(args->weights); j++)
        if (strcmp(pk_host->safetensors_name(args->weights, j), "iter") == 0) {
            const loom_tensor *it = NULL;
            if (pk_host->safetensors_get(args->weights, "iter", &it) == LOOM_OK)
                all[n_all++] = (loom_named_tensor){ "iter", it };
        }
    g->out_fp16 = g->fp16 && !g->sequence && !e->optim_attrs;
    g->total_d = 0;
    for (int64_t f = 0; f < e->n_features; f++) {
        int64_t t = e->feature_table[f];
        if (gt[t] < 0)
            continue;
        ftm[g->n_features] = gt[t];
        g->features[g->n_features++] = f;
        g->total_d += e->embedding_dim[t];
    }
    const loom_named_attr base_attrs[8] = {
        { "weights_tys", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(tys), .u.s = tys } },
        { "feature_table_map", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = g->n_features, .u.ints = ftm } },
        { "pooling_mode", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = g->sequence || g->pooling_mean ? 4 : 3,
                            .u.s = g->sequence ? "none" : g->pooling_mean ? "mean" : "sum" } },
        /* torchrec's FP16 nn.EmbeddingBag returns f16 bags (then .float()): the TBE rounds its f32 sums once */
        /* nn.Embedding's f16 rows are exact in f32: a collection's groups return f32 */
        /* a fused collection's TBE is fbgemm's training module: f32 bags (its output_dtype default) */
        { "output_dtype", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 4,
                            .u.s = g->out_fp16 ? "fp16" : "fp32" } },
        /* nn.EmbeddingBag raises on an index outside the table */
        { "bounds_check_mode", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 5, .u.s = "fatal" } },
        { "embedding_dims", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = n_t, .u.ints = dims } },
        { "row_alignment", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u.i = g->row_alignment } },
        { "table_memory", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(e->table_memory),
                            .u.s = e->table_memory } },
    };
    memcpy(attrs, base_attrs, sizeof base_attrs);
    for (int32_t i = 0; i < e->n_optim_attrs; i++)
        attrs[8 + i] = e->optim_attrs[i];
    loom_object_request req = { .struct_size = sizeof req, .class_name = "fbgemm.tbe",
                                .n_attrs = 8 + e->n_optim_attrs, .attrs = attrs, .n_tensors = (int32_t)n_all,
                                .tensors = all, .device = { LOOM_DEVICE_CPU, 0 } };
    if ((g->tbe = pk_host->object_create(args->ctx, &req)) == NULL)
        st = LOOM_EINVAL;   /* the core's message stands */
done:
    free(all);
    free(mnames);
    free(attrs);
    free(gt);
    free(tensors);
    free(names);
    free(ftm);
    free(tys);
    free(dims);
    return st;
}

loom_status rec_collection_create(const loom_object_args *args, void **state_out, int sequence,
                                const loom_named_attr *optim_attrs, int32_t n_optim_attrs)
{
    *state_out = NULL;
    const char *const CLASS = sequence ? REC_EC_CLASS : optim_attrs ? REC_FUSED_EBC_CLASS : REC_EBC_CLASS;
    if (!LOOM_HAS_MEMBER(pk_host, loom_host_api, object_free))
        return pk_host->fail(LOOM_EABI, "%s needs a core of ABI 1.3 (host->object_create)", CLASS);
    rec_ebc *e = calloc(1, sizeof *e);
    if (!e)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", CLASS);
    loom_status st = LOOM_OK;
    int *pooling = NULL, *data_type = NULL, *group_of = NULL;
    int64_t *align = NULL;
    const loom_tensor **weights = NULL;
    char **fparts = NULL;
    int64_t n_fparts = 0;
#define FAIL(...) do { st = pk_host->fail(__VA_ARGS__); goto out; } while (0)
    if ((e->tbe_op = pk_host->op_find("fbgemm.tbe")) == NULL)
        FAIL(LOOM_ENOENT, "%s runs its tables on fbgemm.tbe: load the fbgemm pack", CLASS);
    e->optim_attrs = optim_attrs;
    e->n_optim_attrs = optim_attrs ? n_optim_attrs : 0;
    if (optim_attrs && ((e->backward_op = pk_host->op_find("fbgemm.tbe_backward")) == NULL
                        || (e->state_op = pk_host->op_find("fbgemm.tbe_state")) == NULL))
        FAIL(LOOM_ENOENT, "%s trains through fbgemm.tbe_backward: load an fbgemm pack that has it", CLASS);
    e->sequence = sequence;
    e->is_weighted = sequence ? 0 : A_(is_weighted).u.b;
    /* the attribute's text lives as long as the object's attributes; only create reads it */
    e->table_memory = sequence ? "map" : A_(table_memory).u.s;
    if ((e->table_names = split(A_(tables).u.s, ',', &e->n_tables)) == NULL)
        FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
    const int64_t T = e->n_tables;
    for (int64_t t = 0; t < T; t++) {
        if (!e->table_names[t][0])
            FAIL(LOOM_EINVAL, "'tables' \"%s\": table %lld has an empty name", A_(tables).u.s, (long long)t);
        for (int64_t u = 0; u < t; u++)
            if (strcmp(e->table_names[u], e->table_names[t]) == 0)
                FAIL(LOOM_EINVAL, "Duplicate table name %s (tables %lld and %lld)", e->table_names[t], (long long)u,
                     (long long)t);
    }
    if (A_(num_embeddings).count != T || A_(embedding_dim).count != T)
        FAIL(LOOM_EINVAL, "'num_embeddings' (%lld) and 'embedding_dim' (%lld) need one entry per table (%lld)",
             (long long)A_(num_embeddings).count, (long long)A_(embedding_dim).count, (long long)T);
    e->num_embeddings = malloc((size_t)T * sizeof(int64_t));
    e->embedding_dim = malloc((size_t)T * sizeof(int64_t));
    pooling = calloc((size_t)T, sizeof *pooling);
    data_type = calloc((size_t)T, sizeof *data_type);
    group_of = calloc((size_t)T, sizeof *group_of);
    weights = calloc((size_t)T, sizeof *weights);
    align = calloc((size_t)T, sizeof *align);
    if (!e->num_embeddings || !e->embedding_dim || !pooling || !data_type || !group_of || !weights || !align)
        FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
    memcpy(e->num_embeddings, A_(num_embeddings).u.ints, (size_t)T * sizeof(int64_t));
    memcpy(e->embedding_dim, A_(embedding_dim).u.ints, (size_t)T * sizeof(int64_t));
    static const char *const poolings[] = { "sum", "mean", NULL };
    static const char *const dtypes[] = { "fp32", "fp16", "int8", "int4", NULL };
    if ((!sequence && (st = per_table("pooling", A_(pooling).u.s, T, poolings, "sum or mean", pooling)) != LOOM_OK) ||
        (st = per_table("data_type", A_(data_type).u.s, T, dtypes, "fp32, fp16, int8 or int4", data_type)) != LOOM_OK)
        goto out;
    for (int64_t t = 0; optim_attrs && t < T; t++)
        if (data_type[t] > DT_FP16)
            FAIL(LOOM_EINVAL, "table '%s' is %s: a fused collection trains fp32 and fp16 tables (fbgemm's TBE "
                 "backward)", e->table_names[t], dtypes[data_type[t]]);
    for (int64_t t = 0; sequence && t < T; t++)
        if (data_type[t] > DT_FP16)
            FAIL(LOOM_EINVAL, "table '%s': an EmbeddingCollection's tables are fp32 or fp16 (nn.Embedding)",
                 e->table_names[t]);
    for (int64_t t = 1; sequence && t < T; t++)
        if (e->embedding_dim[t] != e->embedding_dim[0])
            FAIL(LOOM_EINVAL, "All tables in a EmbeddingCollection are required to have same embedding dimension. "
                 "Violating case: %s's embedding_dim %lld != %lld", e->table_names[t], (long long)e->embedding_dim[t],
                 (long long)e->embedding_dim[0]);
    if (e->is_weighted)
        for (int64_t t = 0; t < T; t++)
            if (pooling[t])
                FAIL(LOOM_EINVAL, "table '%s': is_weighted needs sum pooling (nn.EmbeddingBag: per_sample_weights "
                     "only supported with mode='sum')", e->table_names[t]);

    /* features: "f0|f1,f2"; a table without any takes its own name */
    const char *fn = A_(feature_names).u.s;
    if (*fn) {
        if ((fparts = split(fn, ',', &n_fparts)) == NULL)
            FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
        if (n_fparts != T)
            FAIL(LOOM_EINVAL, "'feature_names' \"%s\" has %lld tables' lists for %lld tables", fn, (long long)n_fparts,
                 (long long)T);
    }
    e->n_features = 0;
    for (int64_t t = 0; t < T; t++) {
        int64_t n = 1;
        for (const char *p = fparts ? fparts[t] : ""; *p; p++)
            n += *p == '|';
        e->n_features += n;
    }
    e->feature_names = calloc((size_t)e->n_features, sizeof(char *));
    e->feature_table = calloc((size_t)e->n_features, sizeof(int64_t));
    e->feature_offset = calloc((size_t)e->n_features + 1, sizeof(int64_t));
    if (!e->feature_names || !e->feature_table || !e->feature_offset)
        FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
    int64_t f = 0;
    for (int64_t t = 0; t < T; t++) {
        int64_t n = 0;
        char **names = split(fparts ? fparts[t] : "", '|', &n);
        if (!names)
            FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
        for (int64_t i = 0; i < n; i++, f++) {
            if (!names[i][0] && n > 1) {
                free_parts(names, n);
                FAIL(LOOM_EINVAL, "'feature_names' of table '%s' has an empty name", e->table_names[t]);
            }
            e->feature_names[f] = names[i][0] ? names[i] : strdup(e->table_names[t]);
            if (!names[i][0])
                free(names[i]);
            e->feature_table[f] = t;
            e->feature_offset[f + 1] = e->feature_offset[f] + e->embedding_dim[t];
            if (!e->feature_names[f]) {
                free(names);
                FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
            }
        }
        free(names);
    }

    /* tables, by torchrec's state_dict keys */
    if (!args->weights)
        FAIL(LOOM_EINVAL, "%s needs a weights file (--weights tables.safetensors) with torchrec's state_dict keys "
             "%s.<table>.weight", CLASS, sequence ? "embeddings" : "embedding_bags");
    for (int64_t t = 0; t < T; t++) {
        char key[512], b[160];
        snprintf(key, sizeof key, sequence ? "embeddings.%s.weight" : "embedding_bags.%s.weight", e->table_names[t]);
        if (pk_host->safetensors_get(args->weights, key, &weights[t]) != LOOM_OK)
            FAIL(LOOM_EINVAL, "table '%s': the weights file has no tensor '%s'", e->table_names[t], key);
        const loom_tensor *w = weights[t];
        const int64_t E = e->num_embeddings[t], D = e->embedding_dim[t];
        align[t] = 1;
        if (data_type[t] <= DT_FP16) {
            loom_dtype want = data_type[t] == DT_FP16 ? LOOM_DTYPE_F16 : LOOM_DTYPE_F32;
            if (loom_tensor_dtype_of(w) != want || w->ndim != 2 || w->shape[0] != E || w->shape[1] != D)
                FAIL(LOOM_EINVAL, "table '%s': '%s' is %s, expected %s[%lld,%lld] (num_embeddings x embedding_dim, "
                     "data_type %s)", e->table_names[t], key, pk_describe(pk_host, w, b, sizeof b),
                     pk_host->dtype_name(want), (long long)E, (long long)D, dtypes[data_type[t]]);
        } else {
            /* torchrec.quant rows: fp16 scale and bias, then the codes, padded to 16 bytes on torchrec's side */
            const int64_t unpadded = 4 + (data_type[t] == DT_INT8 ? D : (D + 1) / 2);
            const int64_t padded = (unpadded + 15) / 16 * 16;
            const int64_t rb = w->ndim == 2 ? w->shape[1] : -1;
            if (loom_tensor_dtype_of(w) != LOOM_DTYPE_U8 || w->ndim != 2 || w->shape[0] != E ||
                (rb != unpadded && rb != padded))
                FAIL(LOOM_EINVAL, "table '%s': '%s' is %s, expected u8[%lld,%lld] or u8[%lld,%lld] (%s rows of "
                     "embedding_dim %lld: scale, bias and codes, unpadded or padded to 16 bytes)", e->table_names[t],
                     key, pk_describe(pk_host, w, b, sizeof b), (long long)E, (long long)unpadded, (long long)E,
                     (long long)padded, dtypes[data_type[t]], (long long)D);
            align[t] = rb == unpadded ? 1 : 16;
        }
    }

    /* groups by (pooling, data_type), in order of first appearance */
    e->groups = calloc((size_t)(T > 0 ? T : 1), sizeof *e->groups);
    if (!e->groups)
        FAIL(LOOM_ENOMEM, "%s: out of memory", CLASS);
    for (int64_t t = 0; t < T; t++) {
        int64_t g = 0;
        const int fp16 = data_type[t] == DT_FP16;
        while (g < e->n_groups && !sequence &&
               !(e->groups[g].pooling_mean == pooling[t] && e->groups[g].fp16 == fp16 &&
                 e->groups[g].row_alignment == align[t]))
            g++;
        if (g == e->n_groups) {
            e->groups[g].pooling_mean = pooling[t];
            e->groups[g].fp16 = fp16;
            e->groups[g].row_alignment = align[t];
            e->groups[g].sequence = sequence;
            e->n_groups++;
        }
        group_of[t] = (int)g;
    }
    for (int64_t g = 0; g < e->n_groups; g++)
        if ((st = make_group(e, args, &e->groups[g], group_of, data_type, weights)) != LOOM_OK)
            goto out;
#undef FAIL
out:
    free_parts(fparts, n_fparts);
    free(pooling);
    free(data_type);
    free(group_of);
    free(weights);
    free(align);
    if (st != LOOM_OK) {
        rec_collection_destroy(e);
        return st;
    }
    *state_out = e;
    return LOOM_OK;
}

static loom_status ebc_create(const loom_object_args *args, void **state_out)
{
    return rec_collection_create(args, state_out, 0, NULL, 0);
}

static loom_status ec_create(const loom_object_args *args, void **state_out)
{
    return rec_collection_create(args, state_out, 1, NULL, 0);
}

PK_ATTR_TABLE(rec_ebc_class, REC_EBC_CLASS_ATTRS);
PK_ATTR_TABLE(rec_ec_class, REC_EC_CLASS_ATTRS);

const loom_object_class rec_ebc_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_EBC_CLASS,
    .doc = "TorchRec EmbeddingBagCollection: tables from configs and a torchrec state_dict (safetensors), "
           "pooled through fbgemm.tbe; method rec.embedding_bag_collection",
    PK_ATTRS(rec_ebc_class_attrs),
    .create = ebc_create,
    .destroy = rec_collection_destroy,
};

const loom_object_class rec_ec_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_EC_CLASS,
    .doc = "TorchRec EmbeddingCollection (sequence embeddings): tables of one D from configs and a torchrec "
           "state_dict (embeddings.<table>.weight), looked up through fbgemm.tbe; method rec.embedding_collection",
    PK_ATTRS(rec_ec_class_attrs),
    .create = ec_create,
    .destroy = rec_collection_destroy,
};
