/* SPDX-License-Identifier: BSD-3-Clause */
/*
** plan.c - the sharding plan's parser, validator, canonical form and hash
** (plan.h). The JSON is read with cJSON; every number must be an integer
** that a double holds exactly (|n| < 2^53), as a plan's sizes are.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "plan.h"

const char *const rec_sharding_type_names[5] = { "table_wise", "row_wise", "column_wise", "table_row_wise",
                                                 "data_parallel" };
const char *const rec_compute_kernel_names[4] = { "fused", "fused_uvm_caching", "quant", "dense" };

void rec_plan_free(rec_plan *plan)
{
    if (plan == NULL)
        return;
    for (int64_t t = 0; t < plan->n_tables && plan->tables; t++) {
        free(plan->tables[t].name);
        free(plan->tables[t].ranks);
        free(plan->tables[t].shards);
    }
    free(plan->tables);
    free(plan);
}

/* The context of one message: "plan: table 'x' (i): field 'f': ..." */
typedef struct plan_err {
    char *buf;
    size_t size;
    const char *table;
    int64_t index;             /* -1: not in a table */
} plan_err;

static int fail(plan_err *e, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(plan_err *e, const char *field, const char *fmt, ...)
{
    if (e->buf == NULL || e->size == 0)
        return -1;
    int n;
    if (e->index >= 0)
        n = snprintf(e->buf, e->size, "plan: table '%s' (%lld): field '%s': ", e->table ? e->table : "?",
                     (long long)e->index, field);
    else
        n = snprintf(e->buf, e->size, "plan: field '%s': ", field);
    if (n >= 0 && (size_t)n < e->size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->buf + n, e->size - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#define MAX_EXACT 9007199254740992.0   /* 2^53 */

/* An integer member >= lo: 0, or -1 with the message. */
static int get_int(plan_err *e, const cJSON *v, const char *field, int64_t lo, int64_t *out)
{
    if (v == NULL)
        return fail(e, field, "missing");
    if (!cJSON_IsNumber(v))
        return fail(e, field, "must be an integer");
    const double d = v->valuedouble;
    if (!(d > -MAX_EXACT && d < MAX_EXACT) || d != (double)(int64_t)d)
        return fail(e, field, "%g is not an integer", d);
    if ((int64_t)d < lo)
        return fail(e, field, "%lld is below %lld", (long long)(int64_t)d, (long long)lo);
    *out = (int64_t)d;
    return 0;
}

/* The index of a string member among names[0..n), or -1 with the message. */
static int get_choice(plan_err *e, const cJSON *v, const char *field, const char *const *names, int n)
{
    if (v == NULL)
        return fail(e, field, "missing");
    if (!cJSON_IsString(v))
        return fail(e, field, "must be a string");
    for (int i = 0; i < n; i++)
        if (strcmp(v->valuestring, names[i]) == 0)
            return i;
    char allowed[160] = "";
    for (int i = 0; i < n; i++) {
        strncat(allowed, names[i], sizeof allowed - strlen(allowed) - 1);
        if (i + 1 < n)
            strncat(allowed, " | ", sizeof allowed - strlen(allowed) - 1);
    }
    return fail(e, field, "\"%.64s\" is not one of %s", v->valuestring, allowed);
}

/* A [a, b] pair of non-negative integers. */
static int get_pair(plan_err *e, const cJSON *v, const char *field, int64_t out[2])
{
    if (v == NULL)
        return fail(e, field, "missing");
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != 2)
        return fail(e, field, "must be an array of two integers [row, column]");
    for (int i = 0; i < 2; i++)
        if (get_int(e, cJSON_GetArrayItem(v, i), field, 0, &out[i]) != 0)
            return -1;
    return 0;
}

static int parse_shards(plan_err *e, const cJSON *arr, rec_plan_table *t, int64_t world)
{
    if (arr == NULL)
        return fail(e, "shards", "missing");
    if (!cJSON_IsArray(arr))
        return fail(e, "shards", "must be an array");
    const int n = cJSON_GetArraySize(arr);
    t->shards = calloc((size_t)(n > 0 ? n : 1), sizeof *t->shards);
    if (t->shards == NULL)
        return fail(e, "shards", "out of memory");
    t->n_shards = n;
    int i = 0;
    for (const cJSON *s = arr->child; s != NULL; s = s->next, i++) {
        char field[48];
        rec_plan_shard *sh = &t->shards[i];
        int64_t off[2], sz[2];
        if (!cJSON_IsObject(s))
            return snprintf(field, sizeof field, "shards[%d]", i), fail(e, field, "must be an object");
        snprintf(field, sizeof field, "shards[%d].rank", i);
        if (get_int(e, cJSON_GetObjectItemCaseSensitive(s, "rank"), field, 0, &sh->rank) != 0)
            return -1;
        if (sh->rank >= world)
            return fail(e, field, "rank %lld is not below world_size %lld", (long long)sh->rank, (long long)world);
        snprintf(field, sizeof field, "shards[%d].offsets", i);
        if (get_pair(e, cJSON_GetObjectItemCaseSensitive(s, "offsets"), field, off) != 0)
            return -1;
        snprintf(field, sizeof field, "shards[%d].sizes", i);
        if (get_pair(e, cJSON_GetObjectItemCaseSensitive(s, "sizes"), field, sz) != 0)
            return -1;
        sh->row_offset = off[0];
        sh->col_offset = off[1];
        sh->rows = sz[0];
        sh->cols = sz[1];
        if (sh->row_offset + sh->rows > t->num_embeddings || sh->col_offset + sh->cols > t->embedding_dim)
            return fail(e, field, "the shard at [%lld, %lld] of [%lld, %lld] leaves the table [%lld, %lld]",
                        (long long)off[0], (long long)off[1], (long long)sz[0], (long long)sz[1],
                        (long long)t->num_embeddings, (long long)t->embedding_dim);
    }
    return 0;
}

/* What the sharding type demands of the shards: they tile the table in
** offset order along the split axis. */
static int check_geometry(plan_err *e, const rec_plan_table *t)
{
    const int64_t E = t->num_embeddings, D = t->embedding_dim, n = t->n_shards;
    if (t->sharding_type == REC_SHARD_DATA_PARALLEL)
        return n == 0 ? 0 : fail(e, "shards", "a data_parallel table has no shards ([]), not %lld", (long long)n);
    if (n == 0)
        return fail(e, "shards", "a %s table needs shards", rec_sharding_type_names[t->sharding_type]);
    if (t->sharding_type == REC_SHARD_TABLE_WISE && n != 1)
        return fail(e, "shards", "a table_wise table has one shard, not %lld", (long long)n);
    const int by_cols = t->sharding_type == REC_SHARD_COLUMN_WISE;
    int64_t next = 0;
    for (int64_t i = 0; i < n; i++) {
        const rec_plan_shard *s = &t->shards[i];
        char field[48];
        snprintf(field, sizeof field, "shards[%lld]", (long long)i);
        if (by_cols ? (s->row_offset != 0 || s->rows != E) : (s->col_offset != 0 || s->cols != D))
            return fail(e, field, "a %s shard spans every %s: offsets [%lld, %lld], sizes [%lld, %lld] in a table "
                        "[%lld, %lld]", rec_sharding_type_names[t->sharding_type], by_cols ? "row" : "column",
                        (long long)s->row_offset, (long long)s->col_offset, (long long)s->rows, (long long)s->cols,
                        (long long)E, (long long)D);
        const int64_t at = by_cols ? s->col_offset : s->row_offset;
        if (at != next)
            return fail(e, field, "starts at %s %lld; the shards before it end at %lld (shards tile the table in "
                        "offset order, no gap, no overlap)", by_cols ? "column" : "row", (long long)at,
                        (long long)next);
        next += by_cols ? s->cols : s->rows;
    }
    if (next != (by_cols ? D : E))
        return fail(e, "shards", "cover %s 0..%lld of %lld", by_cols ? "columns" : "rows", (long long)next,
                    (long long)(by_cols ? D : E));
    /* ParameterSharding.ranks: the shards' placements, in shard order */
    if (t->n_ranks != n)
        return fail(e, "ranks", "has %lld entries for %lld shards", (long long)t->n_ranks, (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (t->ranks[i] != t->shards[i].rank)
            return fail(e, "ranks", "entry %lld is %lld, but shard %lld is placed on rank %lld", (long long)i,
                        (long long)t->ranks[i], (long long)i, (long long)t->shards[i].rank);
    return 0;
}

/* torchrec's CacheParams of a fused_uvm_caching table: "cache_load_factor"
** (0, 1], default REC_PLAN_DEFAULT_CACHE_LOAD_FACTOR, and
** "prefetch_pipeline" (false). Other kernels have no cache: the keys are
** refused there, so that a plan never says what no module does. */
static int parse_cache_params(plan_err *e, const cJSON *o, rec_plan_table *t)
{
    const cJSON *lf = cJSON_GetObjectItemCaseSensitive(o, "cache_load_factor");
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(o, "prefetch_pipeline");
    const int caching = t->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING;
    if (!caching && (lf != NULL || pp != NULL))
        return fail(e, lf != NULL ? "cache_load_factor" : "prefetch_pipeline",
                    "is a cache parameter, but compute_kernel is %s (only fused_uvm_caching has a cache)",
                    rec_compute_kernel_names[t->compute_kernel]);
    t->cache_load_factor = caching ? REC_PLAN_DEFAULT_CACHE_LOAD_FACTOR : 0.0;
    t->prefetch_pipeline = 0;
    if (lf != NULL) {
        if (!cJSON_IsNumber(lf) || !(lf->valuedouble > 0.0 && lf->valuedouble <= 1.0))
            return fail(e, "cache_load_factor", "must be a number in (0, 1]");
        t->cache_load_factor = lf->valuedouble;
    }
    if (pp != NULL) {
        if (!cJSON_IsBool(pp))
            return fail(e, "prefetch_pipeline", "must be true or false");
        t->prefetch_pipeline = cJSON_IsTrue(pp);
    }
    return 0;
}

static int parse_table(plan_err *e, const cJSON *o, rec_plan_table *t, int64_t world)
{
    if (!cJSON_IsObject(o))
        return fail(e, "tables", "entry %lld must be an object", (long long)e->index);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (name == NULL || !cJSON_IsString(name) || name->valuestring[0] == '\0')
        return fail(e, "name", "must be a non-empty string");
    if ((t->name = strdup(name->valuestring)) == NULL)
        return fail(e, "name", "out of memory");
    e->table = t->name;
    if (get_int(e, cJSON_GetObjectItemCaseSensitive(o, "num_embeddings"), "num_embeddings", 0, &t->num_embeddings)
        || get_int(e, cJSON_GetObjectItemCaseSensitive(o, "embedding_dim"), "embedding_dim", 1, &t->embedding_dim))
        return -1;
    int k = get_choice(e, cJSON_GetObjectItemCaseSensitive(o, "sharding_type"), "sharding_type",
                       rec_sharding_type_names, 5);
    if (k < 0)
        return -1;
    t->sharding_type = (rec_sharding_type)k;
    if ((k = get_choice(e, cJSON_GetObjectItemCaseSensitive(o, "compute_kernel"), "compute_kernel",
                        rec_compute_kernel_names, 4)) < 0)
        return -1;
    t->compute_kernel = (rec_compute_kernel)k;
    if ((t->compute_kernel == REC_KERNEL_DENSE) != (t->sharding_type == REC_SHARD_DATA_PARALLEL))
        return fail(e, "compute_kernel", "%s with %s: data_parallel tables use dense, the others not",
                    rec_compute_kernel_names[k], rec_sharding_type_names[t->sharding_type]);
    if (parse_cache_params(e, o, t) != 0)
        return -1;
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(o, "ranks");
    if (ranks == NULL || !cJSON_IsArray(ranks))
        return fail(e, "ranks", "must be an array of ranks");
    t->n_ranks = cJSON_GetArraySize(ranks);
    if ((t->ranks = calloc((size_t)(t->n_ranks > 0 ? t->n_ranks : 1), sizeof *t->ranks)) == NULL)
        return fail(e, "ranks", "out of memory");
    int64_t i = 0;
    for (const cJSON *r = ranks->child; r != NULL; r = r->next, i++) {
        if (get_int(e, r, "ranks", 0, &t->ranks[i]) != 0)
            return -1;
        if (t->ranks[i] >= world)
            return fail(e, "ranks", "rank %lld is not below world_size %lld", (long long)t->ranks[i],
                        (long long)world);
    }
    if (parse_shards(e, cJSON_GetObjectItemCaseSensitive(o, "shards"), t, world) != 0)
        return -1;
    if (t->sharding_type == REC_SHARD_DATA_PARALLEL)
        return t->n_shards == 0 ? 0 : check_geometry(e, t);
    return check_geometry(e, t);
}

int rec_plan_from_json(const char *text, size_t len, rec_plan **out, char *err, size_t err_size)
{
    *out = NULL;
    plan_err e = { err, err_size, NULL, -1 };
    if (err && err_size)
        err[0] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (root == NULL) {
        const size_t at = end ? (size_t)(end - text) : 0;
        return fail(&e, "(document)", "not valid JSON (at byte %zu of %zu)", at, len);
    }
    rec_plan *p = calloc(1, sizeof *p);
    int rc = -1;
    if (p == NULL) {
        fail(&e, "(document)", "out of memory");
        goto done;
    }
    if (!cJSON_IsObject(root)) {
        fail(&e, "(document)", "must be an object");
        goto done;
    }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (fmt == NULL || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, REC_PLAN_FORMAT) != 0) {
        fail(&e, "format", "must be \"%s\"%s%.64s%s", REC_PLAN_FORMAT, cJSON_IsString(fmt) ? ", not \"" : "",
             cJSON_IsString(fmt) ? fmt->valuestring : "", cJSON_IsString(fmt) ? "\"" : "");
        goto done;
    }
    if (get_int(&e, cJSON_GetObjectItemCaseSensitive(root, "world_size"), "world_size", 1, &p->world_size) != 0)
        goto done;
    const cJSON *tables = cJSON_GetObjectItemCaseSensitive(root, "tables");
    if (tables == NULL || !cJSON_IsArray(tables)) {
        fail(&e, "tables", "must be an array");
        goto done;
    }
    const int n = cJSON_GetArraySize(tables);
    if ((p->tables = calloc((size_t)(n > 0 ? n : 1), sizeof *p->tables)) == NULL) {
        fail(&e, "tables", "out of memory");
        goto done;
    }
    p->n_tables = n;
    int64_t i = 0;
    for (const cJSON *t = tables->child; t != NULL; t = t->next, i++) {
        e.index = i;
        e.table = NULL;
        if (parse_table(&e, t, &p->tables[i], p->world_size) != 0)
            goto done;
        for (int64_t j = 0; j < i; j++)
            if (strcmp(p->tables[j].name, p->tables[i].name) == 0) {
                fail(&e, "name", "duplicate of table %lld", (long long)j);
                goto done;
            }
    }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc != 0)
        rec_plan_free(p);
    else
        *out = p;
    return rc;
}

/* ------------------------------------------------------------ canonical */

typedef struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        const size_t cap = (b->cap + (size_t)k + 1) * 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* A JSON string: '"', '\\' and control characters escaped, the rest as is. */
static void put_string(sbuf *b, const char *s)
{
    put(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            put(b, "\\%c", *p);
        else if (*p < 0x20)
            put(b, "\\u%04x", *p);
        else
            put(b, "%c", *p);
    }
    put(b, "\"");
}

char *rec_plan_canonical(const rec_plan *plan)
{
    sbuf b = { malloc(256), 0, 256, 0 };
    if (b.s == NULL)
        return NULL;
    b.s[0] = '\0';
    put(&b, "{\"format\":\"%s\",\"world_size\":%lld,\"tables\":[", REC_PLAN_FORMAT, (long long)plan->world_size);
    for (int64_t i = 0; i < plan->n_tables; i++) {
        const rec_plan_table *t = &plan->tables[i];
        put(&b, "%s{\"name\":", i ? "," : "");
        put_string(&b, t->name);
        put(&b, ",\"num_embeddings\":%lld,\"embedding_dim\":%lld,\"sharding_type\":\"%s\",\"compute_kernel\":\"%s\",",
            (long long)t->num_embeddings, (long long)t->embedding_dim,
            rec_sharding_type_names[t->sharding_type], rec_compute_kernel_names[t->compute_kernel]);
        /* the cache parameters where they differ from the defaults (a
        ** default is omitted, so a plan that spells it out hashes as one that
        ** does not, and the plans without a cache hash as before) */
        if (t->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING
            && t->cache_load_factor != REC_PLAN_DEFAULT_CACHE_LOAD_FACTOR)
            put(&b, "\"cache_load_factor\":%.17g,", t->cache_load_factor);
        if (t->compute_kernel == REC_KERNEL_FUSED_UVM_CACHING && t->prefetch_pipeline)
            put(&b, "\"prefetch_pipeline\":true,");
        put(&b, "\"ranks\":[");
        for (int64_t r = 0; r < t->n_ranks; r++)
            put(&b, "%s%lld", r ? "," : "", (long long)t->ranks[r]);
        put(&b, "],\"shards\":[");
        for (int64_t s = 0; s < t->n_shards; s++) {
            const rec_plan_shard *sh = &t->shards[s];
            put(&b, "%s{\"rank\":%lld,\"offsets\":[%lld,%lld],\"sizes\":[%lld,%lld]}", s ? "," : "",
                (long long)sh->rank, (long long)sh->row_offset, (long long)sh->col_offset, (long long)sh->rows,
                (long long)sh->cols);
        }
        put(&b, "]}");
    }
    put(&b, "]}");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

uint64_t rec_plan_hash(const rec_plan *plan)
{
    char *s = rec_plan_canonical(plan);
    if (s == NULL)
        return 0;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= UINT64_C(0x100000001b3);
    }
    free(s);
    return h;
}
