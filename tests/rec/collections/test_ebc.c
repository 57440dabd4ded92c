/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ebc.c - rec.embedding_bag_collection against torchrec's
** EmbeddingBagCollection (tests/data/rec/collections/cases.inc, written by
** tools/gen_rec_ebc_goldens.py, whose header justifies each tolerance): the
** KeyedTensor values within the case's tolerance, its keys and per-key
** lengths exactly. Then the refusals: tables files of the wrong size or
** dtype or without a table, KJT keys that are no table's feature, features
** the KJT lacks, bad lengths, weighted mean pooling. Every golden runs
** twice: on tables read from the mapped file and on tables copied into
** huge-page memory (table_memory=hugepage), with the same outputs.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

typedef struct golden {
    const char *name, *class_attrs, *inputs, *attrs;
    double rtol, atol;
} golden;

static const golden goldens[] = {
#define CASE(name, cattrs, inputs, attrs, rtol, atol) { name, cattrs, inputs, attrs, rtol, atol },
#include "../../data/rec/collections/cases.inc"
#undef CASE
};

typedef struct ec_golden {
    const char *name, *class_attrs, *inputs, *attrs;
} ec_golden;

static const ec_golden ec_goldens[] = {
#define ECASE(name, cattrs, inputs, attrs) { name, cattrs, inputs, attrs },
#include "../../data/rec/collections/ec_cases.inc"
#undef ECASE
};

#define OP "rec.embedding_bag_collection"

static loom_attrs *parse_attrs(const char *target, const char *text)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *item = strtok_r(buf, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(a, target, item, eq + 1) != LOOM_OK)
            fail_msg("%s: attribute %s=%s: %s", target, item, eq + 1, loom_last_error());
    }
    return a;
}

static loom_status create_of(const char *cls, const char *class_attrs, const char *weights, loom_object **out)
{
    loom_attrs *a = parse_attrs(cls, class_attrs);
    loom_status st = loom_object_create(out, cls, a, tu_data_path(weights));
    loom_attrs_free(a);
    return st;
}

static loom_status create(const char *class_attrs, const char *weights, loom_object **out)
{
    return create_of("rec.embedding_bag_collection", class_attrs, weights, out);
}

/* inputs "values,lengths,,weights": by name from the case's files, empty = absent */
static int read_inputs(const char *dir, const char *name, const char *list, loom_tensor **in)
{
    char names[200];
    int n = 0;
    snprintf(names, sizeof names, "%s", list);
    for (char *p = names;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        in[n] = NULL;
        if (*p) {
            char path[256];
            snprintf(path, sizeof path, "%s/%s.%s", dir, name, p);
            in[n] = tu_npy(path);
        }
        n++;
        if (!comma)
            break;
        p = comma + 1;
    }
    return n;
}

static void run_golden(const golden *g, const char *table_memory)
{
    char weights[256], cattrs[1200];
    snprintf(weights, sizeof weights, "rec/collections/%s.safetensors", g->name);
    snprintf(cattrs, sizeof cattrs, "%s;table_memory=%s", g->class_attrs, table_memory);
    loom_object *obj = NULL;
    if (create(cattrs, weights, &obj) != LOOM_OK)
        fail_msg("%s (table_memory %s): create: %s", g->name, table_memory, loom_last_error());
    loom_tensor *in[8];
    int n_in = read_inputs("rec/collections", g->name, g->inputs, in);
    loom_attrs *a = parse_attrs(OP, g->attrs);
    loom_tensor *out[5] = { 0 };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    if (loom_run(OP, (const loom_tensor *const *)in, n_in, a, out, 5, &opt) != LOOM_OK)
        fail_msg("%s: %s", g->name, loom_last_error());
    for (int i = 0; i < 5; i++) {
        char path[256], what[300];
        snprintf(path, sizeof path, "rec/collections/%s.out%d", g->name, i);
        loom_tensor *want = tu_npy(path);
        snprintf(what, sizeof what, "%s (table_memory %s) output %d", g->name, table_memory, i);
        if (i == 0)
            tu_assert_close(out[i], want, g->rtol, g->atol, what);
        else
            tu_assert_identical(out[i], want, what);
        loom_tensor_free(want);
        loom_tensor_free(out[i]);
    }
    loom_attrs_free(a);
    for (int i = 0; i < n_in; i++)
        loom_tensor_free(in[i]);
    loom_object_free(obj);
}

static void test_golden(void **state) { run_golden(*state, "map"); }
static void test_golden_hugepage(void **state) { run_golden(*state, "hugepage"); }

/* EmbeddingCollection: its rows are copies of the tables' (f16 rows widen exactly): every output identical */
static void test_ec_golden(void **state)
{
    const ec_golden *g = *state;
    char weights[256];
    snprintf(weights, sizeof weights, "rec/collections/%s.safetensors", g->name);
    loom_object *obj = NULL;
    if (create_of("rec.embedding_collection", g->class_attrs, weights, &obj) != LOOM_OK)
        fail_msg("%s: create: %s", g->name, loom_last_error());
    loom_tensor *in[8];
    int n_in = read_inputs("rec/collections", g->name, g->inputs, in);
    loom_attrs *a = parse_attrs("rec.embedding_collection", g->attrs);
    loom_tensor *out[6] = { 0 };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    if (loom_run("rec.embedding_collection", (const loom_tensor *const *)in, n_in, a, out, 6, &opt) != LOOM_OK)
        fail_msg("%s: %s", g->name, loom_last_error());
    for (int i = 0; i < 6; i++) {
        char path[256], what[300];
        snprintf(path, sizeof path, "rec/collections/%s.out%d", g->name, i);
        loom_tensor *want = tu_npy(path);
        snprintf(what, sizeof what, "%s output %d", g->name, i);
        tu_assert_identical(out[i], want, what);
        loom_tensor_free(want);
        loom_tensor_free(out[i]);
    }
    loom_attrs_free(a);
    for (int i = 0; i < n_in; i++)
        loom_tensor_free(in[i]);
    loom_object_free(obj);
}

/* ------------------------------------------------------------ refusals */

static void expect_create_refusal(const char *class_attrs, const char *weights, const char *msg)
{
    loom_object *obj = NULL;
    loom_status st = create(class_attrs, weights, &obj);
    if (st == LOOM_OK) {
        loom_object_free(obj);
        fail_msg("create %s: accepted; expected \"%s\"", class_attrs, msg);
    }
    if (!strstr(loom_last_error(), msg))
        fail_msg("create %s: \"%s\" does not say \"%s\"", class_attrs, loom_last_error(), msg);
}

/* the fp32 case's tables: user [50, 8], item [40, 4] */
#define FP32_FILE "rec/collections/fp32.safetensors"

static void test_bad_tables(void **state)
{
    (void)state;
    expect_create_refusal("tables=user,item;num_embeddings=50,41;embedding_dim=8,4;feature_names=u,i", FP32_FILE,
                          "table 'item': 'embedding_bags.item.weight' is f32[40,4], expected f32[41,4]");
    expect_create_refusal("tables=user,item;num_embeddings=50,40;embedding_dim=8,4;data_type=fp32,fp16", FP32_FILE,
                          "expected f16[40,4]");
    expect_create_refusal("tables=user,items;num_embeddings=50,40;embedding_dim=8,4", FP32_FILE,
                          "table 'items': the weights file has no tensor 'embedding_bags.items.weight'");
    expect_create_refusal("tables=user,user;num_embeddings=50,50;embedding_dim=8,8", FP32_FILE,
                          "Duplicate table name user");
    expect_create_refusal("tables=user,item;num_embeddings=50;embedding_dim=8,4", FP32_FILE, "one entry per table");
    expect_create_refusal("tables=user,item;num_embeddings=50,40;embedding_dim=8,4;pooling=sum,max", FP32_FILE,
                          "'pooling' of table 1 is \"max\"");
    expect_create_refusal("tables=user,item;num_embeddings=50,40;embedding_dim=8,4;pooling=sum,mean;is_weighted=true",
                          FP32_FILE, "table 'item': is_weighted needs sum pooling");
    expect_create_refusal("tables=user,item;num_embeddings=50,40;embedding_dim=8,4;feature_names=a", FP32_FILE,
                          "has 1 tables' lists for 2 tables");
    expect_create_refusal("tables=user,item;num_embeddings=50,40;embedding_dim=8,4;table_memory=huge", FP32_FILE,
                          "table_memory 'huge' is not map or hugepage");
    /* EmbeddingCollection: one D for all tables, and its own state_dict keys */
    loom_object *obj = NULL;
    if (create_of("rec.embedding_collection", "tables=user,item;num_embeddings=50,40;embedding_dim=8,4", FP32_FILE,
                  &obj) == LOOM_OK || !strstr(loom_last_error(), "same embedding dimension. Violating case: item"))
        fail_msg("embedding_collection of two D: %s", loom_last_error());
    if (create_of("rec.embedding_collection", "tables=user;num_embeddings=50;embedding_dim=8", FP32_FILE, &obj)
            == LOOM_OK || !strstr(loom_last_error(), "no tensor 'embeddings.user.weight'"))
        fail_msg("embedding_collection on an EBC's file: %s", loom_last_error());
}

static loom_tensor *make_i64(int64_t n, const int64_t *v)
{
    int64_t shape[1] = { n };
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_I64, 1, shape, NULL), LOOM_OK);
    if (n > 0)
        memcpy(loom_data(t), v, (size_t)n * sizeof(int64_t));
    return t;
}

static void expect_run_refusal(loom_object *obj, loom_tensor *const *in, int n_in, const char *attrs, const char *msg)
{
    loom_attrs *a = parse_attrs(OP, attrs);
    loom_tensor *out[5] = { 0 };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    loom_status st = loom_run(OP, (const loom_tensor *const *)in, n_in, a, out, 5, &opt);
    loom_attrs_free(a);
    for (int i = 0; i < 5; i++)
        loom_tensor_free(out[i]);
    if (st == LOOM_OK)
        fail_msg("%s: accepted; expected \"%s\"", attrs, msg);
    if (!strstr(loom_last_error(), msg))
        fail_msg("%s: \"%s\" does not say \"%s\"", attrs, loom_last_error(), msg);
}

static void test_bad_features(void **state)
{
    (void)state;
    loom_object *obj = NULL;
    if (create("tables=user,item;num_embeddings=50,40;embedding_dim=8,4;feature_names=user_id,item_id|item_cat",
               FP32_FILE, &obj) != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    const int64_t v[6] = { 1, 2, 3, 4, 5, 60 };
    const int64_t l[6] = { 1, 1, 1, 1, 1, 1 };
    loom_tensor *in[2] = { make_i64(6, v), make_i64(6, l) };
    {
        const int64_t v8[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, l8[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
        loom_tensor *in8[2] = { make_i64(8, v8), make_i64(8, l8) };
        expect_run_refusal(obj, in8, 2, "keys=user_id,item_id,colour,item_cat", "key 'colour' of the KJT is not a feature");
        loom_tensor_free(in8[0]);
        loom_tensor_free(in8[1]);
    }
    expect_run_refusal(obj, in, 2, "keys=user_id,item_id,item_cat,colour", "not keys x stride");
    loom_tensor_free(in[1]);
    const int64_t l2[4] = { 1, 1, 1, 1 };
    in[1] = make_i64(4, l2);
    expect_run_refusal(obj, in, 2, "keys=user_id,item_cat", "sum to 4, but 'values' has 6");
    {
        loom_tensor *in4[2] = { make_i64(4, v), in[1] };
        expect_run_refusal(obj, in4, 2, "keys=user_id,item_id", "feature 'item_cat' of table 'item' is not among");
        loom_tensor_free(in4[0]);
    }
    loom_tensor_free(in[1]);
    /* 60 is outside item's 40 rows: nn.EmbeddingBag raises, so does the TBE's fatal bounds check */
    in[1] = make_i64(6, l);
    expect_run_refusal(obj, in, 2, "keys=user_id,item_id,item_cat", "60");
    loom_tensor_free(in[0]);
    loom_tensor_free(in[1]);
    loom_object_free(obj);
}

int main(void)
{
    enum { N = sizeof goldens / sizeof goldens[0], NE = sizeof ec_goldens / sizeof ec_goldens[0] };
    struct CMUnitTest tests[2 * N + NE + 2];
    static char hp_names[N][160];
    for (size_t i = 0; i < N; i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_golden, (void *)&goldens[i]);
        tests[i].name = goldens[i].name;
        tests[N + i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_golden_hugepage, (void *)&goldens[i]);
        snprintf(hp_names[i], sizeof hp_names[i], "%s (hugepage)", goldens[i].name);
        tests[N + i].name = hp_names[i];
    }
    for (size_t i = 0; i < NE; i++) {
        tests[2 * N + i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_ec_golden, (void *)&ec_goldens[i]);
        tests[2 * N + i].name = ec_goldens[i].name;
    }
    tests[2 * N + NE] = (struct CMUnitTest)cmocka_unit_test(test_bad_tables);
    tests[2 * N + NE + 1] = (struct CMUnitTest)cmocka_unit_test(test_bad_features);
    return _cmocka_run_group_tests("rec_collections", tests, 2 * N + NE + 2, tu_setup, tu_teardown);
}
