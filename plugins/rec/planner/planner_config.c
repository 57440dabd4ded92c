/* SPDX-License-Identifier: BSD-3-Clause */
/*
** planner_config.c - the planner's config JSON, in torchrec's names:
**
**   {"batch_size": 512,
**    "topology": {"world_size": 2, "local_world_size": 2, "compute_device": "cuda",
**                 "hbm_cap": bytes, "ddr_cap": bytes, "intra_host_bw": bytes/s,
**                 "inter_host_bw": bytes/s, "hbm_mem_bw", "ddr_mem_bw", "hbm_to_ddr_mem_bw"},
**    "tables": [{"name", "num_embeddings", "embedding_dim", "feature_names", "pooling",
**                "data_type", "pooling_factor", "sharding_types", "compute_kernels",
**                "cache_load_factor", "prefetch_pipeline", "min_partition"}],
**    "storage_reservation": 0.15, "optimizer": "none", "partitioner": "greedy"}
**
** Defaults are torchrec's (constants.py, Topology, ParameterConstraints).
** Unknown keys are refused, so a misspelt constraint is never ignored.
** Every error names where it is: "tables[1] (t1): 'embedding_dim' ...".
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "planner.h"

const char *const rp_sharding_names[RP_N_SHARDINGS] = {
    "data_parallel", "table_wise", "column_wise", "row_wise", "table_row_wise",
};
const char *const rp_kernel_names[RP_N_KERNELS] = { "dense", "fused", "fused_uvm_caching", "quant" };

/* torchrec constants.py, per second (torchrec keeps them per ms) */
#define GIB 1073741824.0
#define RP_DEFAULT_HBM_CAP (32LL * 1024 * 1024 * 1024)
#define RP_DEFAULT_DDR_CAP (128LL * 1024 * 1024 * 1024)
#define RP_DEFAULT_BATCH 512

typedef struct perr {
    char *buf;
    size_t len;
} perr;

static int fail(perr *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->buf, e->len, fmt, ap);
    va_end(ap);
    return -1;
}

static int check_keys(const cJSON *obj, const char *const *allowed, const char *where, perr *e)
{
    for (const cJSON *c = obj->child; c; c = c->next) {
        int ok = 0;
        for (int i = 0; allowed[i] && !ok; i++)
            ok = c->string && strcmp(c->string, allowed[i]) == 0;
        if (!ok)
            return fail(e, "%s: unknown key '%s'", where, c->string ? c->string : "");
    }
    return 0;
}

/* A non-negative integral number no larger than max (exact in a double). */
static int get_int(const cJSON *obj, const char *key, int64_t dflt, int64_t min, int64_t max, int64_t *out,
                   const char *where, perr *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL) {
        if (dflt < min)
            return fail(e, "%s: '%s' is required", where, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble)
        || v->valuedouble < (double)min || v->valuedouble > (double)max)
        return fail(e, "%s: '%s' must be an integer in [%lld, %lld]", where, key, (long long)min, (long long)max);
    *out = (int64_t)v->valuedouble;
    return 0;
}

static int get_num(const cJSON *obj, const char *key, double dflt, double min, double max, double *out,
                   const char *where, perr *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min || v->valuedouble > max)
        return fail(e, "%s: '%s' must be a number in [%g, %g]", where, key, min, max);
    *out = v->valuedouble;
    return 0;
}

static int get_str(const cJSON *obj, const char *key, const char *dflt, const char **out, const char *where, perr *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL) {
        if (dflt == NULL)
            return fail(e, "%s: '%s' is required", where, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsString(v))
        return fail(e, "%s: '%s' must be a string", where, key);
    *out = v->valuestring;
    return 0;
}

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* A list of names (sharding_types or compute_kernels) into a bit mask. */
static int get_mask(const cJSON *obj, const char *key, const char *const *names, int n, unsigned *mask,
                    const char *where, perr *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (v == NULL)
        return 0;
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) == 0)
        return fail(e, "%s: '%s' must be a non-empty list", where, key);
    unsigned m = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        int i = cJSON_IsString(c) ? lookup(c->valuestring, names, n) : -1;
        if (i < 0) {
            char known[256] = "";
            for (int j = 0; j < n; j++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", j ? ", " : "", names[j]);
            return fail(e, "%s: '%s' has %s%s%s; the known ones are %s", where, key,
                        cJSON_IsString(c) ? "'" : "a non-string", cJSON_IsString(c) ? c->valuestring : "",
                        cJSON_IsString(c) ? "'" : "", known);
        }
        m |= 1u << i;
    }
    *mask = m;
    return 0;
}

static int parse_topology(const cJSON *t, rp_problem *pb, perr *e)
{
    static const char *const keys[] = { "world_size", "local_world_size", "compute_device", "hbm_cap", "ddr_cap",
                                        "intra_host_bw", "inter_host_bw", "hbm_mem_bw", "ddr_mem_bw",
                                        "hbm_to_ddr_mem_bw", "bwd_compute_multiplier", NULL };
    const char *w = "topology";
    rp_topology *tp = &pb->topo;
    if (!cJSON_IsObject(t))
        return fail(e, "'topology' is required and must be an object");
    if (check_keys(t, keys, w, e))
        return -1;
    int64_t ws, lws, hbm, ddr;
    const char *dev = NULL;
    if (get_int(t, "world_size", -1, 1, RP_MAX_WORLD, &ws, w, e) || get_str(t, "compute_device", "cuda", &dev, w, e))
        return -1;
    if (get_int(t, "local_world_size", ws, 1, RP_MAX_WORLD, &lws, w, e))
        return -1;
    if (ws % lws != 0)
        return fail(e, "topology: 'local_world_size' %lld does not divide 'world_size' %lld", (long long)lws,
                    (long long)ws);
    if (strcmp(dev, "cpu") == 0)
        tp->device = RP_CPU;
    else if (strcmp(dev, "cuda") == 0)
        tp->device = RP_CUDA;
    else
        return fail(e, "topology: 'compute_device' is '%s'; the known ones are cpu, cuda", dev);
    const int64_t big = (int64_t)1 << 53;
    if (get_int(t, "hbm_cap", tp->device == RP_CUDA ? RP_DEFAULT_HBM_CAP : 0, 0, big, &hbm, w, e)
        || get_int(t, "ddr_cap", RP_DEFAULT_DDR_CAP, 0, big, &ddr, w, e))
        return -1;
    if (tp->device == RP_CPU)
        hbm = 0; /* torchrec's Topology: no HBM on cpu */
    double bw[5];
    static const char *const bw_keys[5] = { "hbm_mem_bw", "ddr_mem_bw", "hbm_to_ddr_mem_bw", "intra_host_bw",
                                            "inter_host_bw" };
    static const double bw_dflt[5] = { 897 * GIB, 51 * GIB, 32 * GIB, 600 * GIB, 12.5 * GIB };
    for (int i = 0; i < 5; i++)
        if (get_num(t, bw_keys[i], bw_dflt[i], 1e-3, 1e300, &bw[i], w, e))
            return -1;
    if (get_num(t, "bwd_compute_multiplier", 2.0, 0, 1e6, &tp->bwd_compute_multiplier, w, e))
        return -1;
    tp->world_size = (int)ws;
    tp->local_world_size = (int)lws;
    tp->hbm_cap = hbm;
    tp->ddr_cap = ddr;
    /* torchrec keeps bandwidths in bytes/ms */
    tp->hbm_mem_bw = bw[0] / 1000;
    tp->ddr_mem_bw = bw[1] / 1000;
    tp->hbm_to_ddr_mem_bw = bw[2] / 1000;
    tp->intra_host_bw = bw[3] / 1000;
    tp->inter_host_bw = bw[4] / 1000;
    return 0;
}

static int parse_table(const cJSON *o, int i, rp_problem *pb, perr *e)
{
    static const char *const keys[] = { "name", "num_embeddings", "embedding_dim", "feature_names", "pooling",
                                        "data_type", "pooling_factor", "sharding_types", "compute_kernels",
                                        "cache_load_factor", "prefetch_pipeline", "min_partition", NULL };
    static const char *const dtypes[] = { "FP32", "FP16", "BF16", "INT8", "UINT8", "INT4", "INT2" };
    static const int dsizes[] = { 4, 2, 2, 1, 1, 1, 1 };
    static const char *const poolings[] = { "SUM", "MEAN", "NONE" };
    rp_table *t = &pb->tables[i];
    char w[RP_NAME_MAX + 32];
    snprintf(w, sizeof w, "tables[%d]", i);
    if (!cJSON_IsObject(o))
        return fail(e, "%s: must be an object", w);
    const char *name = NULL;
    if (get_str(o, "name", NULL, &name, w, e))
        return -1;
    if (name[0] == '\0' || strlen(name) >= RP_NAME_MAX)
        return fail(e, "%s: 'name' must have 1 to %d bytes", w, RP_NAME_MAX - 1);
    for (int j = 0; j < i; j++)
        if (strcmp(pb->tables[j].name, name) == 0)
            return fail(e, "%s: 'name' %s is also tables[%d]'s", w, name, j);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(w, sizeof w, "tables[%d] (%s)", i, name);
    if (check_keys(o, keys, w, e))
        return -1;
    const int64_t big = (int64_t)1 << 40;
    if (get_int(o, "num_embeddings", -1, 1, big, &t->num_embeddings, w, e)
        || get_int(o, "embedding_dim", -1, 1, RP_MAX_DIM, &t->embedding_dim, w, e)
        || get_int(o, "min_partition", 0, 0, 1 << 20, &t->min_partition, w, e))
        return -1;
    if (t->num_embeddings > RP_MAX_TABLE_BYTES / 4 / t->embedding_dim)
        return fail(e, "%s: num_embeddings x embedding_dim is over %lld elements", w,
                    (long long)(RP_MAX_TABLE_BYTES / 4));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "feature_names");
    t->n_features = 1;
    if (f != NULL) {
        if (!cJSON_IsArray(f))
            return fail(e, "%s: 'feature_names' must be a list of strings", w);
        t->n_features = 0;
        for (const cJSON *c = f->child; c; c = c->next, t->n_features++)
            if (!cJSON_IsString(c))
                return fail(e, "%s: 'feature_names' must be a list of strings", w);
    }
    const char *dt = NULL, *pool = NULL;
    if (get_str(o, "data_type", "FP32", &dt, w, e) || get_str(o, "pooling", "SUM", &pool, w, e))
        return -1;
    int di = lookup(dt, dtypes, 7);
    if (di < 0)
        return fail(e, "%s: 'data_type' is '%s'; the known ones are FP32, FP16, BF16, INT8, UINT8, INT4, INT2", w, dt);
    t->element_size = dsizes[di];
    if (lookup(pool, poolings, 3) < 0)
        return fail(e, "%s: 'pooling' is '%s'; the known ones are SUM, MEAN, NONE", w, pool);
    if (get_num(o, "pooling_factor", 1.0, 0, 1e9, &t->pooling_factor, w, e)
        || get_num(o, "cache_load_factor", -1.0, 0, 1, &t->cache_load_factor, w, e))
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(o, "cache_load_factor") == NULL)
        t->cache_load_factor = -1;
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(o, "prefetch_pipeline");
    if (pp != NULL && !cJSON_IsBool(pp))
        return fail(e, "%s: 'prefetch_pipeline' must be true or false", w);
    t->prefetch_pipeline = pp != NULL && cJSON_IsTrue(pp);
    /* torchrec's EmbeddingBagCollectionSharder: dp, tw, cw on every device, rw and twrw on cuda;
    ** loom's sharded modules run rw and twrw on cpu too, so a config may ask for them */
    const int cuda = pb->topo.device == RP_CUDA;
    t->sharding_mask = (1u << RP_DP) | (1u << RP_TW) | (1u << RP_CW) | (cuda ? (1u << RP_RW) | (1u << RP_TWRW) : 0);
    t->kernel_mask = (1u << RP_DENSE) | (1u << RP_FUSED) | (cuda ? 1u << RP_FUSED_UVM_CACHING : 0);
    if (get_mask(o, "sharding_types", rp_sharding_names, RP_N_SHARDINGS, &t->sharding_mask, w, e)
        || get_mask(o, "compute_kernels", rp_kernel_names, RP_N_KERNELS, &t->kernel_mask, w, e))
        return -1;
    if ((t->sharding_mask & (1u << RP_CW)) && t->embedding_dim / rp_cw_block(t) > RP_MAX_CW_SHARDS)
        return fail(e, "%s: 'min_partition' %lld splits embedding_dim %lld into more than %d column-wise shards", w,
                    (long long)(t->min_partition ? t->min_partition : 128), (long long)t->embedding_dim,
                    RP_MAX_CW_SHARDS);
    if (!cuda && (t->kernel_mask & (1u << RP_FUSED_UVM_CACHING)))
        return fail(e, "%s: 'compute_kernels' has fused_uvm_caching, which needs compute_device cuda", w);
    return 0;
}

int rp_problem_parse(const char *text, size_t n, rp_problem *pb, char *err, size_t errlen)
{
    static const char *const keys[] = { "batch_size", "topology", "tables", "storage_reservation", "optimizer",
                                        "partitioner", NULL };
    perr e = { err, errlen };
    memset(pb, 0, sizeof *pb);
    cJSON *root = cJSON_ParseWithLength(text, n);
    int rc = -1;
    if (root == NULL) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + n ? (long)(at - text) : -1;
        fail(&e, "the config is not JSON (parse error near byte %ld)", off);
        goto done;
    }
    if (!cJSON_IsObject(root)) {
        fail(&e, "the config must be a JSON object");
        goto done;
    }
    if (check_keys(root, keys, "the config", &e)
        || parse_topology(cJSON_GetObjectItemCaseSensitive(root, "topology"), pb, &e)
        || get_int(root, "batch_size", RP_DEFAULT_BATCH, 1, (int64_t)1 << 31, &pb->batch_size, "the config", &e)
        || get_num(root, "storage_reservation", 0.15, 0, 1, &pb->storage_reservation, "the config", &e))
        goto done;
    const char *opt = NULL, *part = NULL;
    if (get_str(root, "optimizer", "none", &opt, "the config", &e)
        || get_str(root, "partitioner", "greedy", &part, "the config", &e))
        goto done;
    /* storage estimator's _get_optimizer_multipler */
    if (strcmp(opt, "none") == 0 || strcmp(opt, "sgd") == 0)
        pb->optimizer_multiplier = 0;
    else if (strcmp(opt, "adam") == 0)
        pb->optimizer_multiplier = 2;
    else if (strcmp(opt, "rowwise_adagrad") == 0)
        pb->rowwise_optimizer = 1;
    else if (strcmp(opt, "other") == 0)
        pb->optimizer_multiplier = 1;
    else {
        fail(&e, "the config: 'optimizer' is '%s'; the known ones are none, sgd, adam, rowwise_adagrad, other", opt);
        goto done;
    }
    if (strcmp(part, "greedy") == 0)
        pb->partitioner = RP_PART_GREEDY;
    else if (strcmp(part, "memory_balanced") == 0)
        pb->partitioner = RP_PART_MEMORY_BALANCED;
    else {
        fail(&e, "the config: 'partitioner' is '%s'; the known ones are greedy, memory_balanced", part);
        goto done;
    }
    const cJSON *tabs = cJSON_GetObjectItemCaseSensitive(root, "tables");
    if (!cJSON_IsArray(tabs) || cJSON_GetArraySize(tabs) == 0 || cJSON_GetArraySize(tabs) > RP_MAX_TABLES) {
        fail(&e, "the config: 'tables' must be a list of 1 to %d tables", RP_MAX_TABLES);
        goto done;
    }
    pb->n_tables = cJSON_GetArraySize(tabs);
    pb->tables = calloc((size_t)pb->n_tables, sizeof *pb->tables);
    if (pb->tables == NULL) {
        fail(&e, "out of memory");
        goto done;
    }
    int i = 0;
    for (const cJSON *c = tabs->child; c; c = c->next, i++)
        if (parse_table(c, i, pb, &e))
            goto done;
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc)
        rp_problem_free(pb);
    return rc;
}

void rp_problem_free(rp_problem *pb)
{
    free(pb->tables);
    pb->tables = NULL;
    pb->n_tables = 0;
}
