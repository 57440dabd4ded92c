/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ebc_object.c - create and destroy of
** rec.sharded_embedding_bag_collection (shard.h).
**
** Create is collective: every rank of MPI_COMM_WORLD creates the object.
** Each rank checks what it was given (the table configs, the weights file,
** the plan against both), hashes its plan (rec_plan_hash), and the ranks
** all-gather (verdict, hash): a rank that refused its arguments, or a plan
** whose hash differs from rank 0's, fails every rank's create, the message
** naming the rank and both hashes. Only then does each rank copy the rows
** and columns of its shards out of the weights file and make its
** fbgemm.tbe objects (the sharded one over those copies, the
** data-parallel one over the file's tables), with the fused optimizer,
** and for fused_uvm_caching shards the plan's cache_load_factor
** (sharded_ebc_prefetch.c).
** rec.sharded_embedding_collection (sharded_ec_object.c) is made by the
** same create (rec_shard_create with sequence set): its tables are keyed
** embeddings.<table>.weight and rec_sec_check adds its own checks before
** the verdicts are exchanged.
*/
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "shard.h"

#define A_(name) args->attrs[PK_ATTR(rec_sebc_class, name)]

void rec_sebc_destroy(void *state)
{
    rec_sebc *e = state;
    if (e == NULL)
        return;
    shard_prefetch_free(e);
    if (e->device_state_free && e->device_state)
        e->device_state_free(e->device_state);
    if (e->tbe)
        pk_host->object_free(e->tbe);
    if (e->tbe_cached)
        pk_host->object_free(e->tbe_cached);
    if (e->dp_tbe)
        pk_host->object_free(e->dp_tbe);
    for (int64_t i = 0; i < e->n_shard_rows; i++)
        free(e->shard_rows[i]);
    free(e->shard_rows);
    shard_comm_close(&e->c);
    rec_plan_free(e->plan);
    for (int64_t t = 0; t < e->n_tables && e->table_names; t++)
        free(e->table_names[t]);
    free(e->table_names);
    free(e->num_embeddings);
    free(e->embedding_dim);
    free(e->feature_table);
    free(e->feature_col);
    free(e->pair_start);
    free(e->pairs);
    free(e->block_cols);
    free(e->local_d);
    free(e->rw_col);
    free(e->dp_col);
    free(e->dp_features);
    free(e->keys);
    free(e->keys_offsets);
    free(e);
}

/* s split at sep: new strings, *n of them ("" is one empty part); NULL when out of memory. */
static char **split(const char *s, char sep, int64_t *n)
{
    int64_t count = 1;
    for (const char *p = s; *p; p++)
        count += *p == sep;
    char **parts = calloc((size_t)count, sizeof *parts);
    for (int64_t i = 0; parts && i < count; i++) {
        const char *end = strchr(s, sep);
        const size_t len = end ? (size_t)(end - s) : strlen(s);
        if ((parts[i] = strndup(s, len)) == NULL) {
            for (int64_t j = 0; j < i; j++)
                free(parts[j]);
            free(parts);
            return NULL;
        }
        s = end ? end + 1 : s + len;
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

/* The table configs and features from the class attributes. */
static loom_status read_configs(const loom_object_args *args, rec_sebc *e)
{
    if ((e->table_names = split(A_(tables).u.s, ',', &e->n_tables)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    const int64_t T = e->n_tables;
    for (int64_t t = 0; t < T; t++) {
        if (!e->table_names[t][0])
            return pk_host->fail(LOOM_EINVAL, "%s: 'tables': table %lld has an empty name", e->c.name,
                                 (long long)t);
        for (int64_t u = 0; u < t; u++)
            if (strcmp(e->table_names[u], e->table_names[t]) == 0)
                return pk_host->fail(LOOM_EINVAL, "%s: Duplicate table name %s (tables %lld and %lld)", e->c.name,
                                     e->table_names[t], (long long)u, (long long)t);
    }
    if (A_(num_embeddings).count != T || A_(embedding_dim).count != T)
        return pk_host->fail(LOOM_EINVAL, "%s: 'num_embeddings' (%lld) and 'embedding_dim' (%lld) need one entry per "
                             "table (%lld)", e->c.name, (long long)A_(num_embeddings).count,
                             (long long)A_(embedding_dim).count, (long long)T);
    e->num_embeddings = malloc((size_t)T * sizeof(int64_t));
    e->embedding_dim = malloc((size_t)T * sizeof(int64_t));
    if (!e->num_embeddings || !e->embedding_dim)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    memcpy(e->num_embeddings, A_(num_embeddings).u.ints, (size_t)T * sizeof(int64_t));
    memcpy(e->embedding_dim, A_(embedding_dim).u.ints, (size_t)T * sizeof(int64_t));
    const char *pool = A_(pooling).u.s;
    if (strcmp(pool, "sum") != 0 && strcmp(pool, "mean") != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: 'pooling' is \"%s\": it must be sum or mean (one for every table)",
                             e->c.name, pool);
    e->pooling_mean = strcmp(pool, "mean") == 0;
    e->is_weighted = A_(is_weighted).u.b;
    if (e->is_weighted && e->pooling_mean)
        return pk_host->fail(LOOM_EINVAL, "%s: is_weighted needs sum pooling (nn.EmbeddingBag)", e->c.name);
    /* features: "f0|f1,f2"; a table without any takes its own name */
    const char *fn = A_(feature_names).u.s;
    int64_t n_parts = 0;
    char **parts = NULL;
    if (*fn && ((parts = split(fn, ',', &n_parts)) == NULL))
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    if (parts && n_parts != T) {
        free_parts(parts, n_parts);
        return pk_host->fail(LOOM_EINVAL, "%s: 'feature_names' \"%s\" has %lld tables' lists for %lld tables",
                             e->c.name, fn, (long long)n_parts, (long long)T);
    }
    int64_t F = 0;
    for (int64_t t = 0; t < T; t++) {
        F++;
        for (const char *p = parts ? parts[t] : ""; *p; p++)
            F += *p == '|';
    }
    e->n_features = F;
    e->feature_table = malloc((size_t)(F > 0 ? F : 1) * sizeof *e->feature_table);
    e->feature_col = calloc((size_t)F + 1, sizeof *e->feature_col);
    if (!e->feature_table || !e->feature_col) {
        free_parts(parts, n_parts);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    }
    int64_t f = 0;
    for (int64_t t = 0; t < T; t++) {
        int64_t n = 1;
        for (const char *p = parts ? parts[t] : ""; *p; p++)
            n += *p == '|';
        for (int64_t i = 0; i < n; i++, f++) {
            e->feature_table[f] = t;
            e->feature_col[f + 1] = e->feature_col[f] + e->embedding_dim[t];
        }
    }
    free_parts(parts, n_parts);
    return LOOM_OK;
}

/* The plan: JSON text when it starts with '{', else a file holding it. */
static loom_status read_plan(const char *who, const char *arg, rec_plan **out)
{
    char *text = NULL;
    size_t len = 0;
    if (arg[0] == '{') {
        len = strlen(arg);
    } else {
        FILE *fp = fopen(arg, "rb");
        if (fp == NULL)
            return pk_host->fail(LOOM_EIO, "%s: 'plan': cannot open %s", who, arg);
        long n = -1;
        if (fseek(fp, 0, SEEK_END) == 0)
            n = ftell(fp);
        if (n < 0 || n > (64L << 20) || fseek(fp, 0, SEEK_SET) != 0 || (text = malloc((size_t)n + 1)) == NULL ||
            fread(text, 1, (size_t)n, fp) != (size_t)n) {
            fclose(fp);
            free(text);
            return pk_host->fail(LOOM_EIO, "%s: 'plan': cannot read %s (or it is over 64 MiB)", who, arg);
        }
        fclose(fp);
        len = (size_t)n;
    }
    char err[512];
    const int rc = rec_plan_from_json(text ? text : arg, len, out, err, sizeof err);
    free(text);
    if (rc != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: %s%s%s", who, err, arg[0] == '{' ? "" : " in ",
                             arg[0] == '{' ? "" : arg);
    return LOOM_OK;
}

/* Every table of the weights file: f32 [E, D] under embedding_bags.<table>.weight
** (embeddings.<table>.weight for the sequence collection, EmbeddingCollection's key). */
static loom_status check_weights(const loom_object_args *args, const rec_sebc *e, const loom_tensor **w)
{
    const char *prefix = e->sequence ? "embeddings" : "embedding_bags";
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (the unsharded state_dict, keys "
                             "%s.<table>.weight)", e->c.name, prefix);
    for (int64_t t = 0; t < e->n_tables; t++) {
        char key[512], b[160];
        snprintf(key, sizeof key, "%s.%s.weight", prefix, e->table_names[t]);
        if (pk_host->safetensors_get(args->weights, key, &w[t]) != LOOM_OK)
            return pk_host->fail(LOOM_EINVAL, "%s: table '%s': the weights file has no tensor '%s'", e->c.name,
                                 e->table_names[t], key);
        if (loom_tensor_dtype_of(w[t]) != LOOM_DTYPE_F32 || w[t]->ndim != 2 || w[t]->shape[0] != e->num_embeddings[t]
            || w[t]->shape[1] != e->embedding_dim[t] || !loom_is_contiguous(w[t]))
            return pk_host->fail(LOOM_EINVAL, "%s: table '%s': '%s' is %s, expected a contiguous f32[%lld,%lld]",
                                 e->c.name, e->table_names[t], key, pk_describe(pk_host, w[t], b, sizeof b),
                                 (long long)e->num_embeddings[t], (long long)e->embedding_dim[t]);
    }
    return LOOM_OK;
}

/* Every rank's verdict and plan hash: LOOM_OK only when all are fine and equal. */
static loom_status agree(rec_sebc *e, loom_status mine_st, uint64_t hash)
{
    const int W = e->c.size;
    uint64_t mine[2] = { (uint64_t)(mine_st == LOOM_OK ? 0 : 1), hash };
    uint64_t *all = malloc((size_t)W * 2 * sizeof *all);
    if (all == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    MPI_Request req;
    loom_status st = MPI_Iallgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, e->c.comm, &req) == MPI_SUCCESS
                         ? shard_wait(&e->c, &req, "MPI_Iallgather (plan hashes, setup)")
                         : pk_host->fail(LOOM_EIO, "%s: rank %d: MPI_Iallgather failed", e->c.name, e->c.rank);
    if (st == LOOM_OK && mine_st != LOOM_OK)
        st = mine_st;      /* this rank's own message stands */
    for (int q = 0; st == LOOM_OK && q < W; q++)
        if (all[2 * q] != 0)
            st = pk_host->fail(LOOM_EINVAL, "%s: rank %d: rank %d refused its arguments at setup (its own error says "
                               "why)", e->c.name, e->c.rank, q);
    for (int q = 1; st == LOOM_OK && q < W; q++)
        if (all[2 * q + 1] != all[1])
            st = pk_host->fail(LOOM_EINVAL, "%s: plan mismatch: rank %d's plan hashes to %016" PRIx64 ", rank 0's to "
                               "%016" PRIx64 " (this is rank %d): every rank must be given the same plan",
                               e->c.name, q, all[2 * q + 1], all[1], e->c.rank);
    free(all);
    return st;
}

static loom_named_attr str_attr(const char *name, const char *v)
{
    return (loom_named_attr){ name, { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(v), .u.s = v } };
}

static loom_named_attr float_attr(const char *name, double v)
{
    return (loom_named_attr){ name, { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u.f = v } };
}

/* One fbgemm.tbe object over n tables of dims with the feature map ftm[nf]. */
static loom_status make_tbe(const loom_object_args *args, const rec_sebc *e, int64_t n, const loom_tensor *const *tabs,
                            const int64_t *dims, int64_t nf, const int64_t *ftm, double cache_load_factor,
                            loom_object **out)
{
    char *tys = calloc((size_t)n * 5 + 1, 1);
    loom_named_tensor *nt = calloc((size_t)n, sizeof *nt);
    char (*names)[32] = calloc((size_t)n, sizeof *names);
    loom_status st = LOOM_OK;
    if (!tys || !nt || !names) {
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        strcat(tys, i ? ",fp32" : "fp32");
        snprintf(names[i], sizeof names[i], "table.%lld", (long long)i);
        nt[i] = (loom_named_tensor){ names[i], tabs[i] };
    }
    const char *opt = strcmp(A_(optimizer).u.s, "sgd") == 0 ? "exact_sgd" : "exact_rowwise_adagrad";
    const loom_named_attr attrs[15] = {
        str_attr("weights_tys", tys),
        { "feature_table_map", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = nf, .u.ints = ftm } },
        str_attr("pooling_mode", e->pooling_mean ? "mean" : "sum"),
        str_attr("output_dtype", "fp32"),
        str_attr("bounds_check_mode", "fatal"),
        { "embedding_dims", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = n, .u.ints = dims } },
        { "row_alignment", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u.i = 1 } },
        /* the fused optimizer as rec.fused_embedding_bag_collection hands it to fbgemm */
        str_attr("optimizer", opt),
        float_attr("learning_rate", A_(lr).u.f),
        float_attr("eps", A_(eps).u.f),
        float_attr("beta1", 0.9),
        float_attr("beta2", 0.999),
        float_attr("weight_decay", 0.0),
        str_attr("weight_decay_mode", "none"),
        /* fused_uvm_caching: fbgemm.tbe's row cache (1.0: none; sharded_ebc_prefetch.c) */
        float_attr("cache_load_factor", cache_load_factor),
    };
    loom_object_request req = { .struct_size = sizeof req, .class_name = "fbgemm.tbe", .n_attrs = 15, .attrs = attrs,
                                .n_tensors = (int32_t)n, .tensors = nt, .device = { LOOM_DEVICE_CPU, 0 } };
    if ((*out = pk_host->object_create(args->ctx, &req)) == NULL)
        st = LOOM_EINVAL;   /* the core's message stands */
done:
    free(tys);
    free(nt);
    free(names);
    return st;
}

/* This rank's TBEs: its shards copied out of the file, the data-parallel tables as they are. */
static loom_status make_tbes(const loom_object_args *args, rec_sebc *e, const loom_tensor *const *w, double lf)
{
    const int r = e->c.rank;
    const rec_plan *p = e->plan;
    int64_t n = 0;
    for (int64_t t = 0; t < e->n_tables; t++)
        for (int64_t s = 0; s < p->tables[t].n_shards; s++)
            n += p->tables[t].shards[s].rank == r;
    const int64_t P = e->pair_start[r + 1] - e->pair_start[r];
    const int64_t T = e->n_tables;
    e->shard_rows = calloc((size_t)(n > 0 ? n : 1), sizeof *e->shard_rows);
    loom_tensor *views = calloc((size_t)(n + T > 0 ? n + T : 1), sizeof *views);
    const loom_tensor **tabs = calloc((size_t)(n + T > 0 ? n + T : 1), sizeof *tabs);
    int64_t *shapes = calloc((size_t)(n > 0 ? n : 1) * 2, sizeof *shapes);
    int64_t *dims = calloc((size_t)(n + T > 0 ? n + T : 1), sizeof *dims);
    int64_t *ftm = calloc((size_t)(P + e->n_features > 0 ? P + e->n_features : 1), sizeof *ftm);
    int64_t *dp_local = calloc((size_t)(T > 0 ? T : 1), sizeof *dp_local);
    loom_status st = e->shard_rows && views && tabs && shapes && dims && ftm && dp_local
                         ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    /* one TBE per compute kernel of this rank's shards (shard_groups.c): fused, then cached */
    int64_t k = 0;
    for (int kind = 0; kind < 2; kind++) {
        const int64_t k0 = k;
        for (int64_t t = 0; st == LOOM_OK && t < T; t++)
            for (int64_t s = 0; st == LOOM_OK && s < p->tables[t].n_shards; s++) {
                const rec_plan_shard *sh = &p->tables[t].shards[s];
                if (sh->rank != r || (p->tables[t].compute_kernel == REC_KERNEL_FUSED_UVM_CACHING) != kind)
                    continue;
                const int64_t D = e->embedding_dim[t];
                float *rows = malloc((size_t)(sh->rows * sh->cols > 0 ? sh->rows * sh->cols : 1) * sizeof *rows);
                if (rows == NULL) {
                    st = pk_host->fail(LOOM_ENOMEM, "%s: no memory for shard %lld of table '%s' (%lld x %lld)",
                                       e->c.name, (long long)s, e->table_names[t], (long long)sh->rows,
                                       (long long)sh->cols);
                    break;
                }
                e->shard_rows[e->n_shard_rows++] = rows;
                const float *src = loom_data(w[t]);
                for (int64_t i = 0; i < sh->rows; i++)
                    memcpy(rows + i * sh->cols, src + (sh->row_offset + i) * D + sh->col_offset,
                           (size_t)sh->cols * sizeof *rows);
                shapes[2 * k] = sh->rows;
                shapes[2 * k + 1] = sh->cols;
                views[k] = shard_view(rows, SHARD_F32, 2, shapes + 2 * k);
                tabs[k] = &views[k];
                dims[k] = sh->cols;
                k++;
            }
        if (st != LOOM_OK || k == k0)
            continue;
        const int g = e->n_groups == 2 && kind == 1;
        int64_t p0, p1, c0, cols;
        shard_group_range(e, g, &p0, &p1, &c0, &cols);
        for (int64_t j = p0; j < p1; j++)
            ftm[j - p0] = e->pairs[e->pair_start[r] + j].local_table;
        st = make_tbe(args, e, k - k0, tabs + k0, dims + k0, p1 - p0, ftm, kind ? lf : 1.0,
                      g ? &e->tbe_cached : &e->tbe);
    }
    /* the data-parallel tables, in table order, and their features */
    int64_t nd = 0;
    for (int64_t t = 0; st == LOOM_OK && t < T; t++) {
        dp_local[t] = -1;
        if (p->tables[t].sharding_type != REC_SHARD_DATA_PARALLEL)
            continue;
        dp_local[t] = nd;
        tabs[nd] = w[t];
        dims[nd] = e->embedding_dim[t];
        nd++;
    }
    for (int64_t j = 0; st == LOOM_OK && j < e->n_dp_features; j++)
        ftm[j] = dp_local[e->feature_table[e->dp_features[j]]];
    if (st == LOOM_OK && nd > 0)
        st = make_tbe(args, e, nd, tabs, dims, e->n_dp_features, ftm, 1.0, &e->dp_tbe);
    free(views);
    free(tabs);
    free(shapes);
    free(dims);
    free(ftm);
    free(dp_local);
    return st;
}

loom_status rec_shard_create(const loom_object_args *args, int sequence, void **state_out)
{
    *state_out = NULL;
    const char *cls = sequence ? REC_SEC_CLASS : REC_SEBC_CLASS;
    if (!LOOM_HAS_MEMBER(pk_host, loom_host_api, object_free))
        return pk_host->fail(LOOM_EABI, "%s needs a core of ABI 1.3 (host->object_create)", cls);
    rec_sebc *e = calloc(1, sizeof *e);
    if (e == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    e->sequence = sequence;
    /* the communicator first: every later refusal is agreed on with the other ranks */
    loom_status st = shard_comm_open(&e->c, cls, A_(timeout_s).u.f);
    if (st != LOOM_OK) {
        e->c.comm = MPI_COMM_NULL;
        rec_sebc_destroy(e);
        return st;
    }
    const loom_tensor **w = NULL;
    uint64_t hash = 0;
    if ((e->tbe_op = pk_host->op_find("fbgemm.tbe")) == NULL ||
        (e->backward_op = pk_host->op_find("fbgemm.tbe_backward")) == NULL)
        st = pk_host->fail(LOOM_ENOENT, "%s looks up and trains on fbgemm.tbe and fbgemm.tbe_backward: load the "
                           "fbgemm pack", e->c.name);
    if (st == LOOM_OK && strcmp(A_(optimizer).u.s, "sgd") != 0 && strcmp(A_(optimizer).u.s, "rowwise_adagrad") != 0)
        st = pk_host->fail(LOOM_EINVAL, "%s: optimizer '%s' is not sgd or rowwise_adagrad", e->c.name,
                           A_(optimizer).u.s);
    if (st == LOOM_OK)
        st = read_configs(args, e);
    if (st == LOOM_OK && (w = calloc((size_t)(e->n_tables > 0 ? e->n_tables : 1), sizeof *w)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    if (st == LOOM_OK)
        st = check_weights(args, e, w);
    if (st == LOOM_OK)
        st = read_plan(e->c.name, A_(plan).u.s, &e->plan);
    if (st == LOOM_OK && (hash = rec_plan_hash(e->plan)) == 0)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    if (st == LOOM_OK)
        st = shard_layout_build(e);
    if (st == LOOM_OK && sequence)
        st = rec_sec_check(e, args);
    double lf = 1.0;
    if (st == LOOM_OK)
        st = shard_cache_config(e, &lf);
    if (st == LOOM_OK)
        st = shard_prefetch_create(e, lf);
    st = agree(e, st, hash);
    if (st == LOOM_OK)
        st = make_tbes(args, e, w, lf);
    free(w);
    if (st != LOOM_OK) {
        rec_sebc_destroy(e);
        return st;
    }
    *state_out = e;
    return LOOM_OK;
}

static loom_status sebc_create(const loom_object_args *args, void **state_out)
{
    return rec_shard_create(args, 0, state_out);
}

PK_ATTR_TABLE(rec_sebc_class, REC_SEBC_CLASS_ATTRS);

const loom_object_class rec_sebc_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_SEBC_CLASS,
    .doc = "TorchRec's sharded EmbeddingBagCollection over OpenMPI: the tables split by a plan (table_wise, "
           "row_wise, column_wise, table_row_wise, data_parallel) across the ranks of MPI_COMM_WORLD, looked up "
           "on local fbgemm.tbe objects (with fbgemm's row cache for fused_uvm_caching tables) and trained with "
           "their fused optimizer; methods rec.sharded_embedding_bag_collection, "
           "rec.sharded_embedding_bag_collection_backward, rec.sharded_embedding_bag_collection_prefetch",
    PK_ATTRS(rec_sebc_class_attrs),
    .create = sebc_create,
    .destroy = rec_sebc_destroy,
};
