/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_planner.c - rec.plan against torchrec's EmbeddingShardingPlanner
** (tests/data/rec/planner, tools/gen_rec_planner_goldens.py), through the
** public API only.
**
** Per golden config:
**   - the sharding type and compute kernel of every table equal torchrec's;
**     where they do, its ranks and shards (offsets, sizes) equal torchrec's
**     too, and every shard's perf and storage estimate matches: storage
**     exactly (integer bytes, the same ceil/round steps), perf within a
**     relative 1e-12 (the same double formulas; only the order of a few
**     additions may differ, a few ulps);
**   - where a plan differs, loom's estimated cost is no worse than
**     torchrec's under both cost models: the perf rating (NoopPerfModel,
**     the slowest rank) and the storage of the fullest rank; the
**     differences are printed;
**   - a config torchrec cannot fit is refused naming the table and the
**     shortfall in bytes;
**   - for the goldens that keep torchrec's whole search space, every option
**     it enumerated (chosen or not) has loom's twin with the same per-shard
**     estimates, and loom enumerates no other.
** Then: the plan JSON has the plan format's fields and its hash is the
** FNV-1a 64 of its text; two runs give the same bytes; bad configs are
** refused naming the table and the field.
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "tu_env.h"
#include "tu_ops.h"

/* same formulas in double: a few ulps of summation order */
#define PERF_RTOL 1e-12

static const char *const cases[] = {
    "ws2_loose", "ws2_fp16_cw", "ws4_tight", "ws4_loose", "ws4_constrained", "ws4_memory_balanced",
    "ws8_two_hosts", "ws8_tight", "ws8_one_host", "ws8_memory_balanced", "cpu_ws2", "cpu_ws4_tight", "cpu_ws2_small",
    "ws2_no_fit",
};

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* rec.plan of text: status; on success outs[0..2] = plan, stats, estimates (NUL-terminated copies);
** search_space: the estimates hold every enumerated option too */
static loom_status run_plan_opts(const char *text, int search_space, char *outs[3])
{
    const int64_t shape[1] = { (int64_t)strlen(text) };
    loom_tensor *in = NULL, *out[3] = { NULL, NULL, NULL };
    assert_int_equal(loom_tensor_wrap(&in, (void *)text, LOOM_DTYPE_U8, 1, shape, NULL, NULL), LOOM_OK);
    const loom_tensor *ins[1] = { in };
    loom_attrs *attrs = tu_attrs_text("rec.plan", search_space ? "search_space=true" : NULL);
    const loom_status st = loom_run("rec.plan", ins, 1, attrs, out, 3, NULL);
    loom_attrs_free(attrs);
    for (int i = 0; i < 3; i++) {
        outs[i] = NULL;
        if (st == LOOM_OK) {
            const size_t n = loom_tensor_nbytes(out[i]);
            outs[i] = malloc(n + 1);
            assert_non_null(outs[i]);
            memcpy(outs[i], loom_data(out[i]), n);
            outs[i][n] = '\0';
        }
        loom_tensor_free(out[i]);
    }
    loom_tensor_free(in);
    return st;
}

static loom_status run_plan(const char *text, char *outs[3])
{
    return run_plan_opts(text, 0, outs);
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (v == NULL)
        fail_msg("missing key '%s'", k);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static int same_ints(const cJSON *a, const cJSON *b)
{
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return 0;
    for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next)
        if (x->valuedouble != y->valuedouble)
            return 0;
    return 1;
}

/* the fullest rank's storage (hbm + ddr) and the ranks' perf rating of a tables list */
static void costs(const cJSON *tables, int world, double *rating, double *storage)
{
    double perf[64] = { 0 }, st[64] = { 0 };
    const cJSON *t;
    cJSON_ArrayForEach(t, tables)
    {
        const cJSON *s;
        cJSON_ArrayForEach(s, get(t, "shards"))
        {
            const int r = (int)num(s, "rank");
            assert_true(r >= 0 && r < world && r < 64);
            perf[r] += num(get(s, "perf"), "total");
            st[r] += num(get(s, "storage"), "hbm") + num(get(s, "storage"), "ddr");
        }
    }
    *rating = *storage = 0;
    for (int r = 0; r < world; r++) {
        *rating = fmax(*rating, perf[r]);
        *storage = fmax(*storage, st[r]);
    }
}

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 14695981039346656037ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static int n_same_types, n_same_shards, n_differs, n_options_checked;

/* Every option torchrec enumerated has loom's twin (same table, type and
** kernel) with the same per-shard estimates, and loom has no other. */
static void check_search_space(const char *name, const char *cfg, const cJSON *want)
{
    char *outs[3];
    assert_int_equal(run_plan_opts(cfg, 1, outs), LOOM_OK);
    cJSON *est = cJSON_Parse(outs[2]);
    assert_non_null(est);
    const cJSON *got = get(est, "search_space");
    assert_int_equal(cJSON_GetArraySize(got), cJSON_GetArraySize(want));
    const cJSON *w;
    cJSON_ArrayForEach(w, want)
    {
        const cJSON *g = NULL, *c;
        cJSON_ArrayForEach(c, got)
            if (!strcmp(str(c, "name"), str(w, "name")) && !strcmp(str(c, "sharding_type"), str(w, "sharding_type"))
                && !strcmp(str(c, "compute_kernel"), str(w, "compute_kernel")))
                g = c;
        if (g == NULL)
            fail_msg("%s: loom has no option %s %s %s", name, str(w, "name"), str(w, "sharding_type"),
                     str(w, "compute_kernel"));
        const cJSON *ws = get(w, "shards"), *gs = get(g, "shards");
        assert_int_equal(cJSON_GetArraySize(gs), cJSON_GetArraySize(ws));
        for (const cJSON *x = gs->child, *y = ws->child; x; x = x->next, y = y->next)
            for (int k = 0; k < 8; k++) {
                const double p = cJSON_GetArrayItem(x, k)->valuedouble, q = cJSON_GetArrayItem(y, k)->valuedouble;
                /* perf (0-5) within PERF_RTOL, storage (6, 7) to the byte */
                if (k < 6 ? fabs(p - q) > PERF_RTOL * fabs(q) : p != q)
                    fail_msg("%s %s %s %s: term %d: loom %.17g, torchrec %.17g", name, str(w, "name"),
                             str(w, "sharding_type"), str(w, "compute_kernel"), k, p, q);
            }
        n_options_checked++;
    }
    cJSON_Delete(est);
    for (int i = 0; i < 3; i++)
        free(outs[i]);
}

static void check_case(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "rec/planner/%s.json", name);
    char *text = read_text(tu_data_path(rel));
    cJSON *g = cJSON_Parse(text);
    assert_non_null(g);
    char *cfg = cJSON_PrintUnformatted(get(g, "config"));
    const cJSON *tr = get(g, "torchrec");
    const int world = (int)num(get(get(g, "config"), "topology"), "world_size");
    char *outs[3];
    const loom_status st = run_plan(cfg, outs);
    if (cJSON_GetObjectItemCaseSensitive(tr, "error")) {
        /* torchrec finds no plan: loom refuses, naming the table and the shortfall */
        assert_int_equal(st, LOOM_EINVAL);
        const char *msg = loom_last_error();
        printf("  %-20s refused as torchrec: %s\n", name, msg);
        assert_non_null(strstr(msg, "table big"));
        assert_non_null(strstr(msg, "bytes short"));
        goto done;
    }
    if (st != LOOM_OK)
        fail_msg("%s: %s", name, loom_last_error());
    cJSON *est = cJSON_Parse(outs[2]);
    assert_non_null(est);
    const cJSON *lt = get(est, "tables"), *tt = get(tr, "tables");
    assert_int_equal(cJSON_GetArraySize(lt), cJSON_GetArraySize(tt));
    int differs = 0;
    for (const cJSON *a = lt->child, *b = tt->child; a; a = a->next, b = b->next) {
        assert_string_equal(str(a, "name"), str(b, "name"));
        if (strcmp(str(a, "sharding_type"), str(b, "sharding_type"))
            || strcmp(str(a, "compute_kernel"), str(b, "compute_kernel"))) {
            printf("  %-20s %s: loom %s/%s, torchrec %s/%s\n", name, str(a, "name"), str(a, "sharding_type"),
                   str(a, "compute_kernel"), str(b, "sharding_type"), str(b, "compute_kernel"));
            differs = 1;
            continue;
        }
        const cJSON *sa = get(a, "shards"), *sb = get(b, "shards");
        assert_int_equal(cJSON_GetArraySize(sa), cJSON_GetArraySize(sb));
        for (const cJSON *x = sa->child, *y = sb->child; x; x = x->next, y = y->next) {
            /* the estimators, shard by shard */
            assert_true(same_ints(get(x, "sizes"), get(y, "sizes")));
            assert_true(same_ints(get(x, "offsets"), get(y, "offsets")));
            assert_true(num(get(x, "storage"), "hbm") == num(get(y, "storage"), "hbm"));
            assert_true(num(get(x, "storage"), "ddr") == num(get(y, "storage"), "ddr"));
            static const char *const keys[] = { "fwd_compute", "fwd_comms", "bwd_compute", "bwd_comms",
                                                "prefetch_compute", "total" };
            for (int k = 0; k < 6; k++) {
                const double p = num(get(x, "perf"), keys[k]), q = num(get(y, "perf"), keys[k]);
                if (fabs(p - q) > PERF_RTOL * fabs(q))
                    fail_msg("%s %s %s: loom %.17g, torchrec %.17g", name, str(a, "name"), keys[k], p, q);
            }
            if (num(x, "rank") != num(y, "rank"))
                differs = 1;
        }
    }
    double lr, ls, trr, trs;
    costs(lt, world, &lr, &ls);
    costs(tt, world, &trr, &trs);
    assert_true(fabs(lr - num(est, "perf_rating")) <= PERF_RTOL * lr);
    if (differs) {
        n_differs++;
        printf("  %-20s differs: perf rating loom %.6g ms, torchrec %.6g ms; fullest rank loom %.0f B, "
               "torchrec %.0f B\n", name, lr, trr, ls, trs);
        assert_true(lr <= trr * (1 + PERF_RTOL));
        assert_true(ls <= trs);
    } else {
        n_same_types++;
        n_same_shards++;
        printf("  %-20s the same plan as torchrec (perf rating %.6g ms)\n", name, lr);
        assert_true(fabs(lr - num(tr, "perf_rating")) <= PERF_RTOL * lr);
    }
    if (cJSON_GetObjectItemCaseSensitive(tr, "search_space"))
        check_search_space(name, cfg, get(tr, "search_space"));
    /* the plan: the format's keys, the estimates' ranks, its hash */
    cJSON *plan = cJSON_Parse(outs[0]);
    assert_non_null(plan);
    assert_string_equal(str(plan, "format"), "loom.rec.plan/1");
    assert_int_equal((int)num(plan, "world_size"), world);
    for (const cJSON *p = get(plan, "tables")->child, *e = lt->child; p; p = p->next, e = e->next) {
        assert_string_equal(str(p, "name"), str(e, "name"));
        assert_string_equal(str(p, "sharding_type"), str(e, "sharding_type"));
        const int dp = strcmp(str(p, "sharding_type"), "data_parallel") == 0;
        assert_int_equal(cJSON_GetArraySize(get(p, "shards")), dp ? 0 : cJSON_GetArraySize(get(e, "shards")));
        int i = 0;
        const cJSON *r;
        cJSON_ArrayForEach(r, get(p, "ranks"))
            assert_true(r->valuedouble == num(cJSON_GetArrayItem(get(e, "shards"), i++), "rank"));
    }
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)fnv1a64(outs[0]));
    assert_string_equal(str(est, "hash"), hash);
    assert_non_null(strstr(outs[1], "Planner Statistics"));
    /* deterministic: a second run gives the same bytes */
    char *again[3];
    assert_int_equal(run_plan(cfg, again), LOOM_OK);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(again[i], outs[i]);
        free(again[i]);
    }
    cJSON_Delete(plan);
    cJSON_Delete(est);
done:
    for (int i = 0; i < 3; i++)
        free(outs[i]);
    free(cfg);
    cJSON_Delete(g);
    free(text);
}

static void test_goldens(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        check_case(cases[i]);
    printf("  %d configs with torchrec's plan (types, kernels, ranks, shards), %d differing; %d options of torchrec's "
           "search spaces estimated alike\n", n_same_types, n_differs, n_options_checked);
    assert_int_equal(n_differs, 0);
}

/* A config refused with a message holding each of the words. */
static void refused(const char *cfg, const char *w1, const char *w2)
{
    char *outs[3];
    assert_int_equal(run_plan(cfg, outs), LOOM_EINVAL);
    const char *msg = loom_last_error();
    if (!strstr(msg, w1) || (w2 && !strstr(msg, w2)))
        fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", msg, w1, w2 ? w2 : "");
}

#define TOPO "\"topology\":{\"world_size\":2}"

static void test_bad_configs(void **state)
{
    (void)state;
    refused("not json", "not JSON", NULL);
    refused("[1,2]", "must be a JSON object", NULL);
    refused("{\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4}]}", "'topology' is required",
            NULL);
    refused("{\"topology\":{},\"tables\":[]}", "topology", "'world_size' is required");
    refused("{\"topology\":{\"world_size\":4,\"local_world_size\":3},\"tables\":[]}", "'local_world_size'",
            "does not divide");
    refused("{" TOPO ",\"tables\":[]}", "'tables'", NULL);
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4},"
            "{\"name\":\"b\",\"num_embeddings\":10}]}", "tables[1] (b)", "'embedding_dim' is required");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":-1,\"embedding_dim\":4}]}", "tables[0] (a)",
            "'num_embeddings'");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4.5}]}", "tables[0] (a)",
            "'embedding_dim'");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4,"
            "\"sharding_types\":[\"diagonal\"]}]}", "tables[0] (a)", "'sharding_types' has 'diagonal'");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4,\"pooling_factr\":2}]}",
            "tables[0] (a)", "unknown key 'pooling_factr'");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4,\"data_type\":\"FP64\"}]}",
            "tables[0] (a)", "'data_type'");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4},"
            "{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4}]}", "tables[1]", "also tables[0]");
    refused("{\"topology\":{\"world_size\":2,\"compute_device\":\"cpu\"},\"tables\":[{\"name\":\"a\","
            "\"num_embeddings\":10,\"embedding_dim\":4,\"compute_kernels\":[\"fused_uvm_caching\"]}]}",
            "tables[0] (a)", "needs compute_device cuda");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4,"
            "\"sharding_types\":[\"data_parallel\"],\"compute_kernels\":[\"fused\"]}]}", "tables[0] (a)",
            "no sharding type and compute kernel");
    /* storage: the reservation alone exceeds the rank */
    refused("{\"topology\":{\"world_size\":2,\"hbm_cap\":1000},\"batch_size\":4096,\"tables\":[{\"name\":\"a\","
            "\"num_embeddings\":10,\"embedding_dim\":4}]}", "storage reservation", "bytes");
    /* a table larger than any rank, even row-wise: named with the shortfall */
    refused("{\"topology\":{\"world_size\":2,\"hbm_cap\":100000000},\"tables\":[{\"name\":\"huge\","
            "\"num_embeddings\":100000000,\"embedding_dim\":64,\"compute_kernels\":[\"fused\"]}]}", "table huge",
            "bytes short");
    /* a batch too large for any buffer: clamped sizes, refused, no overflow */
    refused("{\"topology\":{\"world_size\":8},\"batch_size\":2147483648,\"tables\":[{\"name\":\"b\","
            "\"num_embeddings\":1000,\"embedding_dim\":8,\"pooling_factor\":1e9}]}", "storage reservation", NULL);
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":1099511627776,\"embedding_dim\":65536}]}",
            "tables[0] (a)", "elements");
    refused("{" TOPO ",\"tables\":[{\"name\":\"a\",\"num_embeddings\":10,\"embedding_dim\":4096,"
            "\"min_partition\":4}]}", "tables[0] (a)", "column-wise shards");
    /* not u8, and empty */
    loom_tensor *t = NULL, *out[3] = { NULL, NULL, NULL };
    const int64_t shape[1] = { 4 };
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 1, shape, NULL), LOOM_OK);
    const loom_tensor *ins[1] = { t };
    assert_int_not_equal(loom_run("rec.plan", ins, 1, NULL, out, 3, NULL), LOOM_OK);
    loom_tensor_free(t);
}

/* The memory-balanced partitioner (its plan is torchrec's, test_goldens)
** needs no more HBM on the fullest rank than the greedy one for the same
** config; its 2% perf tolerance is against its own first placement of each
** proposal, so its plan may be slower than the greedy planner's (printed). */
static void test_memory_balanced(void **state)
{
    (void)state;
    char *text = read_text(tu_data_path("rec/planner/ws8_memory_balanced.json"));
    cJSON *g = cJSON_Parse(text);
    cJSON *cfg = cJSON_GetObjectItemCaseSensitive(g, "config");
    char *mb_cfg = cJSON_PrintUnformatted(cfg);
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, "partitioner");
    char *greedy_cfg = cJSON_PrintUnformatted(cfg);
    char *a[3], *b[3];
    assert_int_equal(run_plan(greedy_cfg, a), LOOM_OK);
    assert_int_equal(run_plan(mb_cfg, b), LOOM_OK);
    cJSON *ea = cJSON_Parse(a[2]), *eb = cJSON_Parse(b[2]);
    printf("  greedy: %.6g ms, fullest rank %.0f B HBM; memory balanced: %.6g ms, %.0f B\n", num(ea, "perf_rating"),
           num(ea, "max_hbm"), num(eb, "perf_rating"), num(eb, "max_hbm"));
    assert_true(num(eb, "max_hbm") <= num(ea, "max_hbm"));
    for (int i = 0; i < 3; i++) {
        free(a[i]);
        free(b[i]);
    }
    cJSON_Delete(ea);
    cJSON_Delete(eb);
    free(greedy_cfg);
    free(mb_cfg);
    cJSON_Delete(g);
    free(text);
}

/* The storage terms without a torchrec golden (its planner sees no optimizer
** on a meta-device module, and quant is its inference sharder's): a table-wise
** fused shard's HBM grows by the optimizer's multiplier of the table's bytes
** (adam 2, row-wise Adagrad 1 / D), and quant adds 4 bytes per row. */
static double tw_hbm(const char *extra, const char *kernel)
{
    char cfg[512], *outs[3];
    snprintf(cfg, sizeof cfg, "{\"topology\":{\"world_size\":2}%s,\"tables\":[{\"name\":\"t\",\"num_embeddings\":1000,"
             "\"embedding_dim\":64,\"sharding_types\":[\"table_wise\"],\"compute_kernels\":[\"%s\"]}]}", extra, kernel);
    assert_int_equal(run_plan(cfg, outs), LOOM_OK);
    cJSON *e = cJSON_Parse(outs[2]);
    const cJSON *shard = cJSON_GetArrayItem(get(cJSON_GetArrayItem(get(e, "tables"), 0), "shards"), 0);
    const double hbm = num(get(shard, "storage"), "hbm");
    cJSON_Delete(e);
    for (int i = 0; i < 3; i++)
        free(outs[i]);
    return hbm;
}

static void test_storage_terms(void **state)
{
    (void)state;
    const double table = 1000.0 * 64 * 4, base = tw_hbm("", "fused");
    assert_true(tw_hbm(",\"optimizer\":\"sgd\"", "fused") == base);
    assert_true(tw_hbm(",\"optimizer\":\"adam\"", "fused") == base + 2 * table);
    assert_true(tw_hbm(",\"optimizer\":\"rowwise_adagrad\"", "fused") == base + table / 64);
    assert_true(tw_hbm("", "quant") == base + 1000 * 4);
}

/* A fused_uvm_caching table's CacheParams travel in the plan as the
** sharded modules read them (plugins/rec/shard/plan.c): a load factor other
** than the default and the prefetch pipeline are written, the default not. */
static void test_cache_params(void **state)
{
    (void)state;
    static const char *const extra[2] = { ",\"cache_load_factor\":0.5,\"prefetch_pipeline\":true", "" };
    static const char *const want[2] = {
        "\"compute_kernel\":\"fused_uvm_caching\",\"cache_load_factor\":0.5,\"prefetch_pipeline\":true,\"ranks\"",
        "\"compute_kernel\":\"fused_uvm_caching\",\"ranks\"" };
    for (int k = 0; k < 2; k++) {
        char cfg[512], *outs[3];
        snprintf(cfg, sizeof cfg, "{\"topology\":{\"world_size\":2},\"tables\":[{\"name\":\"t\",\"num_embeddings\":1000,"
                 "\"embedding_dim\":64,\"sharding_types\":[\"table_wise\"],\"compute_kernels\":[\"fused_uvm_caching\"]%s}]}",
                 extra[k]);
        assert_int_equal(run_plan(cfg, outs), LOOM_OK);
        if (strstr(outs[0], want[k]) == NULL)
            fail_msg("the plan lacks %s: %s", want[k], outs[0]);
        for (int i = 0; i < 3; i++)
            free(outs[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_params),
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_bad_configs),
        cmocka_unit_test(test_memory_balanced),
        cmocka_unit_test(test_storage_terms),
    };
    return cmocka_run_group_tests_name("rec_planner", tests, tu_setup, tu_teardown);
}
