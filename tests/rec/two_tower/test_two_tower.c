/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_two_tower.c - rec.two_tower against torchrec's TwoTower with random
** weights (tests/data/rec/two_tower, tools/gen_rec_two_tower_goldens.py):
** both towers' embeddings and the logits within rtol 1e-5, atol 1e-6 (f32
** sums of at most 32 products of values below 1, pooled then two GEMMs:
** torch's and the core's summation orders differ by a few ulps). Then the
** refusals: a missing MLP key, a layer of the wrong size, tables of two
** dims, the method without an object, mismatched score inputs.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

typedef struct golden {
    const char *name;
    int64_t B;
} golden;

static const golden goldens[] = {
#define CASE(name, B) { #name, B },
#include "../../data/rec/two_tower/cases.inc"
#undef CASE
};

static loom_status create(const char *layers, const char *dims, loom_object **o)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    const char *cls = "rec.two_tower";
    assert_int_equal(loom_attrs_parse(a, cls, "tables", "t_user,t_item"), LOOM_OK);
    assert_int_equal(loom_attrs_parse(a, cls, "num_embeddings", "50,80"), LOOM_OK);
    assert_int_equal(loom_attrs_parse(a, cls, "embedding_dim", dims), LOOM_OK);
    assert_int_equal(loom_attrs_parse(a, cls, "feature_names", "user_id,item_id"), LOOM_OK);
    assert_int_equal(loom_attrs_parse(a, cls, "layer_sizes", layers), LOOM_OK);
    loom_status st = loom_object_create(o, cls, a, tu_data_path("rec/two_tower/model.safetensors"));
    loom_attrs_free(a);
    return st;
}

static loom_tensor *embed(loom_object *o, const char *op, const char *key, loom_tensor *values, loom_tensor *lengths)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "keys", key), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    const loom_tensor *in[2] = { values, lengths };
    loom_tensor *out[1] = { NULL };
    if (loom_run(op, in, 2, a, out, 1, &opt) != LOOM_OK)
        fail_msg("%s: %s", op, loom_last_error());
    loom_attrs_free(a);
    return out[0];
}

static loom_tensor *load(const char *name, const char *what)
{
    char path[128];
    snprintf(path, sizeof path, "rec/two_tower/%s.%s", name, what);
    return tu_npy(path);
}

static void test_goldens(void **state)
{
    (void)state;
    loom_object *o = NULL;
    if (create("32,8", "16,16", &o) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
        const char *n = goldens[i].name;
        loom_tensor *qv = load(n, "q_values"), *ql = load(n, "q_lengths"), *cv = load(n, "c_values"),
                    *cl = load(n, "c_lengths"), *wq = load(n, "query"), *wc = load(n, "candidate"),
                    *wl = load(n, "logits");
        loom_tensor *q = embed(o, "rec.two_tower_query_embed", "user_id", qv, ql);
        loom_tensor *c = embed(o, "rec.two_tower_candidate_embed", "item_id", cv, cl);
        tu_assert_close(q, wq, 1e-5, 1e-6, "query embedding");
        tu_assert_close(c, wc, 1e-5, 1e-6, "candidate embedding");
        const loom_tensor *in[2] = { q, c };
        loom_tensor *logits = NULL;
        assert_int_equal(tu_call("rec.two_tower_score", in, 2, NULL, NULL, &logits), LOOM_OK);
        tu_assert_close(logits, wl, 1e-5, 1e-6, "logits");
        loom_tensor *all[] = { qv, ql, cv, cl, wq, wc, wl, q, c, logits };
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            loom_tensor_free(all[k]);
    }
    loom_object_free(o);
}

static void test_refusals(void **state)
{
    (void)state;
    loom_object *o = NULL;
    assert_int_not_equal(create("32,8,4", "16,16", &o), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "query_proj._mlp.2._linear.weight"));
    assert_int_not_equal(create("16,8", "16,16", &o), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "query_proj._mlp.0._linear.weight"));
    assert_int_not_equal(create("32,8", "16,8", &o), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "embedding_dim"));
    /* the method without an object; a score of two shapes */
    loom_tensor *q = tu_random_f32(2, (int64_t[]){ 3, 8 }, 1), *c = tu_random_f32(2, (int64_t[]){ 3, 4 }, 2);
    const loom_tensor *in[2] = { q, c };
    loom_tensor *out = NULL;
    assert_int_not_equal(tu_call("rec.two_tower_score", in, 2, NULL, NULL, &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'candidate'"));
    loom_tensor *outs[1] = { NULL };
    assert_int_not_equal(loom_run("rec.two_tower_query_embed", in, 1, NULL, outs, 1, NULL), LOOM_OK);
    loom_tensor_free(q);
    loom_tensor_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
