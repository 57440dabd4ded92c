/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_shard_plan.c - the sharding plan's parser, validator and hash
** (plugins/rec/shard/plan.c, compiled in: it needs only cJSON): a plan of
** every sharding type read back field by field, its canonical form and
** hash (the same for another formatting of the same plan; the FNV-1a 64 of
** the canonical text, pinned), and the refusals, each naming the table and
** the field.
*/
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plan.h"

/* Canonical already: keys in order, no spaces. */
static const char *const GOOD =
    "{\"format\":\"loom.rec.plan/1\",\"world_size\":2,\"tables\":["
    "{\"name\":\"t0\",\"num_embeddings\":10,\"embedding_dim\":8,\"sharding_type\":\"table_wise\","
    "\"compute_kernel\":\"fused\",\"ranks\":[1],\"shards\":[{\"rank\":1,\"offsets\":[0,0],\"sizes\":[10,8]}]},"
    "{\"name\":\"t1\",\"num_embeddings\":5,\"embedding_dim\":4,\"sharding_type\":\"row_wise\","
    "\"compute_kernel\":\"fused\",\"ranks\":[0,1],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[3,4]},"
    "{\"rank\":1,\"offsets\":[3,0],\"sizes\":[2,4]}]},"
    "{\"name\":\"t2\",\"num_embeddings\":6,\"embedding_dim\":8,\"sharding_type\":\"column_wise\","
    "\"compute_kernel\":\"fused_uvm_caching\",\"ranks\":[1,0],\"shards\":[{\"rank\":1,\"offsets\":[0,0],"
    "\"sizes\":[6,4]},{\"rank\":0,\"offsets\":[0,4],\"sizes\":[6,4]}]},"
    "{\"name\":\"t3\",\"num_embeddings\":7,\"embedding_dim\":4,\"sharding_type\":\"table_row_wise\","
    "\"compute_kernel\":\"fused\",\"ranks\":[0,1],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[4,4]},"
    "{\"rank\":1,\"offsets\":[4,0],\"sizes\":[3,4]}]},"
    "{\"name\":\"t4\",\"num_embeddings\":3,\"embedding_dim\":2,\"sharding_type\":\"data_parallel\","
    "\"compute_kernel\":\"dense\",\"ranks\":[0,1],\"shards\":[]}]}";

static rec_plan *parse_ok(const char *text)
{
    rec_plan *p = NULL;
    char err[512];
    if (rec_plan_from_json(text, strlen(text), &p, err, sizeof err) != 0)
        fail_msg("refused: %s", err);
    return p;
}

static void test_fields(void **state)
{
    (void)state;
    rec_plan *p = parse_ok(GOOD);
    assert_int_equal(p->world_size, 2);
    assert_int_equal(p->n_tables, 5);
    assert_string_equal(p->tables[0].name, "t0");
    assert_int_equal(p->tables[0].sharding_type, REC_SHARD_TABLE_WISE);
    assert_int_equal(p->tables[0].shards[0].rank, 1);
    assert_int_equal(p->tables[1].sharding_type, REC_SHARD_ROW_WISE);
    assert_int_equal(p->tables[1].n_shards, 2);
    assert_int_equal(p->tables[1].shards[1].row_offset, 3);
    assert_int_equal(p->tables[1].shards[1].rows, 2);
    assert_int_equal(p->tables[2].compute_kernel, REC_KERNEL_FUSED_UVM_CACHING);
    assert_int_equal(p->tables[2].shards[1].col_offset, 4);
    assert_int_equal(p->tables[2].shards[1].cols, 4);
    assert_int_equal(p->tables[3].sharding_type, REC_SHARD_TABLE_ROW_WISE);
    assert_int_equal(p->tables[4].sharding_type, REC_SHARD_DATA_PARALLEL);
    assert_int_equal(p->tables[4].n_shards, 0);
    assert_int_equal(p->tables[4].n_ranks, 2);
    rec_plan_free(p);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

static void test_canonical_and_hash(void **state)
{
    (void)state;
    rec_plan *p = parse_ok(GOOD);
    char *c = rec_plan_canonical(p);
    assert_non_null(c);
    assert_string_equal(c, GOOD);
    assert_true(rec_plan_hash(p) == fnv1a(GOOD));
    /* pinned: a change of the canonical form changes every plan's hash */
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)rec_plan_hash(p));
    assert_string_equal(hex, "a7d62ffbb1c311fb");
    free(c);
    /* the same plan with spaces, newlines and the keys in another order */
    const char *other =
        "{ \"tables\": [\n {\"shards\": [ {\"sizes\": [10, 8], \"offsets\": [0, 0], \"rank\": 1} ], \"ranks\": [1],"
        " \"compute_kernel\": \"fused\", \"sharding_type\": \"table_wise\", \"embedding_dim\": 8,"
        " \"num_embeddings\": 10, \"name\": \"t0\"} ],\n \"world_size\": 2, \"format\": \"loom.rec.plan/1\" }";
    rec_plan *q = parse_ok(other);
    char *cq = rec_plan_canonical(q);
    assert_string_equal(cq, "{\"format\":\"loom.rec.plan/1\",\"world_size\":2,\"tables\":[{\"name\":\"t0\","
                            "\"num_embeddings\":10,\"embedding_dim\":8,\"sharding_type\":\"table_wise\","
                            "\"compute_kernel\":\"fused\",\"ranks\":[1],\"shards\":[{\"rank\":1,\"offsets\":[0,0],"
                            "\"sizes\":[10,8]}]}]}");
    assert_true(rec_plan_hash(q) == fnv1a(cq));
    assert_true(rec_plan_hash(q) != rec_plan_hash(p));
    free(cq);
    rec_plan_free(q);
    rec_plan_free(p);
}

/* GOOD with the first occurrence of `from` replaced by `to` must be refused
** with a message holding every one of the words. */
static void refused(const char *from, const char *to, const char *w1, const char *w2)
{
    char text[4096];
    const char *at = strstr(GOOD, from);
    assert_non_null(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - GOOD), GOOD, to, at + strlen(from));
    rec_plan *p = (rec_plan *)1;
    char err[512];
    if (rec_plan_from_json(text, strlen(text), &p, err, sizeof err) == 0)
        fail_msg("accepted with %s -> %s", from, to);
    assert_null(p);
    if (!strstr(err, w1) || (w2 && !strstr(err, w2)))
        fail_msg("%s -> %s: the message \"%s\" lacks '%s' or '%s'", from, to, err, w1, w2 ? w2 : "");
}

static void test_refusals(void **state)
{
    (void)state;
    refused("loom.rec.plan/1", "loom.rec.plan/2", "'format'", NULL);
    refused("\"world_size\":2", "\"world_size\":0", "'world_size'", "below 1");
    refused("\"world_size\":2", "\"world_size\":2.5", "'world_size'", "not an integer");
    refused("\"world_size\":2", "\"world_size\":\"2\"", "'world_size'", "integer");
    refused("\"sharding_type\":\"table_wise\"", "\"sharding_type\":\"tablewise\"", "table 't0' (0)",
            "'sharding_type'");
    refused("\"compute_kernel\":\"fused\",\"ranks\":[1]", "\"compute_kernel\":\"dense\",\"ranks\":[1]", "'t0'",
            "'compute_kernel'");
    refused("\"ranks\":[1],\"shards\":[{\"rank\":1", "\"ranks\":[1],\"shards\":[{\"rank\":2", "'t0'",
            "'shards[0].rank'");
    refused("\"ranks\":[1]", "\"ranks\":[0]", "'t0'", "'ranks'");
    refused("\"sizes\":[10,8]", "\"sizes\":[11,8]", "'t0'", "leaves the table");
    refused("{\"rank\":1,\"offsets\":[3,0]", "{\"rank\":1,\"offsets\":[2,0]", "table 't1' (1)", "'shards[1]'");
    refused("\"sizes\":[2,4]", "\"sizes\":[1,4]", "'t1'", "cover rows");
    refused("\"sizes\":[3,4]},{\"rank\":1,\"offsets\":[3,0]", "\"sizes\":[3,2]},{\"rank\":1,\"offsets\":[3,0]",
            "'t1'", "spans every column");
    refused("\"sizes\":[6,4]},{\"rank\":0", "\"sizes\":[5,4]},{\"rank\":0", "'t2'", "spans every row");
    refused("\"compute_kernel\":\"dense\",\"ranks\":[0,1],\"shards\":[]",
            "\"compute_kernel\":\"dense\",\"ranks\":[0,1],\"shards\":[{\"rank\":0,\"offsets\":[0,0],\"sizes\":[3,2]}]",
            "'t4'", "no shards");
    refused("\"name\":\"t1\"", "\"name\":\"t0\"", "'t0' (1)", "duplicate");
    refused("\"name\":\"t1\"", "\"name\":\"\"", "(1)", "'name'");
    refused("\"offsets\":[0,4]", "\"offsets\":[0]", "'t2'", "'shards[1].offsets'");
    refused("\"num_embeddings\":10,", "", "'t0'", "'num_embeddings'");
    refused("]}]}", "]}", "not valid JSON", NULL);
}

/* CacheParams of fused_uvm_caching tables: the default load factor when
** absent; a canonical form that omits the defaults (so GOOD's hash is as
** pinned above) and keeps the others; refused on the other kernels. */
static void test_cache_params(void **state)
{
    (void)state;
    rec_plan *p = parse_ok(GOOD);
    assert_true(p->tables[2].cache_load_factor == REC_PLAN_DEFAULT_CACHE_LOAD_FACTOR);
    assert_int_equal(p->tables[2].prefetch_pipeline, 0);
    assert_true(p->tables[0].cache_load_factor == 0.0);
    const uint64_t h0 = rec_plan_hash(p);
    rec_plan_free(p);
    const char *at = strstr(GOOD, "\"compute_kernel\":\"fused_uvm_caching\",");
    assert_non_null(at);
    const size_t k = (size_t)(at - GOOD) + strlen("\"compute_kernel\":\"fused_uvm_caching\",");
    char text[4096];
    /* the default spelled out: the same plan, the same hash */
    snprintf(text, sizeof text, "%.*s\"prefetch_pipeline\":false,\"cache_load_factor\":0.2,%s", (int)k, GOOD,
             GOOD + k);
    p = parse_ok(text);
    assert_true(rec_plan_hash(p) == h0);
    rec_plan_free(p);
    /* other values: kept in the canonical form, in its key order */
    snprintf(text, sizeof text, "%.*s\"prefetch_pipeline\":true,\"cache_load_factor\":0.5,%s", (int)k, GOOD,
             GOOD + k);
    p = parse_ok(text);
    assert_true(p->tables[2].cache_load_factor == 0.5);
    assert_int_equal(p->tables[2].prefetch_pipeline, 1);
    char *c = rec_plan_canonical(p);
    assert_non_null(strstr(c, "\"compute_kernel\":\"fused_uvm_caching\",\"cache_load_factor\":0.5,"
                              "\"prefetch_pipeline\":true,\"ranks\""));
    assert_true(rec_plan_hash(p) != h0);
    free(c);
    rec_plan_free(p);
    refused("\"compute_kernel\":\"fused_uvm_caching\",", "\"compute_kernel\":\"fused_uvm_caching\",\"cache_load_factor\":0,",
            "'t2'", "(0, 1]");
    refused("\"compute_kernel\":\"fused_uvm_caching\",", "\"compute_kernel\":\"fused_uvm_caching\",\"cache_load_factor\":1.5,",
            "'cache_load_factor'", "(0, 1]");
    refused("\"compute_kernel\":\"fused_uvm_caching\",", "\"compute_kernel\":\"fused_uvm_caching\",\"prefetch_pipeline\":1,",
            "'prefetch_pipeline'", "true or false");
    refused("\"compute_kernel\":\"fused\",\"ranks\":[1]", "\"compute_kernel\":\"fused\",\"cache_load_factor\":0.5,\"ranks\":[1]",
            "'t0'", "only fused_uvm_caching has a cache");
}

static void test_not_json(void **state)
{
    (void)state;
    rec_plan *p = NULL;
    char err[256];
    assert_int_equal(rec_plan_from_json("[1,2]", 5, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "must be an object"));
    assert_int_equal(rec_plan_from_json("{\"format\"", 10, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "not valid JSON"));
    /* the length bounds the text: no read past it */
    assert_int_equal(rec_plan_from_json(GOOD, 40, &p, err, sizeof err), -1);
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_canonical_and_hash),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_cache_params),
        cmocka_unit_test(test_not_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
