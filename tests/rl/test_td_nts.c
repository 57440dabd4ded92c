/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_td_nts.c - NonTensorStack, against tensordict 0.14 (tests/data/rl/nts,
** tools/gen_rl_nts_goldens.py): the stacks tensordict wrote (strings, JSON
** objects, ints over a nested dict's batch [3, 2], equal values) load as
** their tolist(); indexing gives tensordict's values back (one element: a
** NonTensorData; an index tensor: a stack of those elements); stacking
** TensorDicts of differing NonTensorData makes a stack whose meta.json holds
** the bytes tensordict wrote for it, and loom's directory loads back whole.
** Refused, naming the key: data that does not nest as the batch_size, a
** pickled stack, a stack given to a tensor replay storage.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_test_util.h"

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static loom_object *load(const char *dir, loom_status *st)
{
    char p[1200];
    snprintf(p, sizeof p, "path=%s", dir);
    return tdt_create(st, "from=load", p, NULL);
}

static void assert_json(loom_object *o, const char *key, const char *want)
{
    char *got = tdt_get_json(o, key);
    if (strcmp(got, want) != 0)
        fail_msg("%s: %s, tensordict %s", key, got, want);
    free(got);
}

/* tensordict's tolist(), td[1][key] and td[[2, 0]][key] (expect.json). */
static const char *const expect[][4] = {
    { "name", "[\"env0\",\"env1\",\"env2\"]", "\"env1\"", "[\"env2\",\"env0\"]" },
    { "cfg", "[{\"seed\":0,\"mode\":\"train\"},{\"seed\":1,\"mode\":\"train\"},{\"seed\":2,\"mode\":\"eval\"}]",
      "{\"seed\":1,\"mode\":\"train\"}", "[{\"seed\":2,\"mode\":\"eval\"},{\"seed\":0,\"mode\":\"train\"}]" },
    { "same", "[\"CartPole-v1\",\"CartPole-v1\",\"CartPole-v1\"]", "\"CartPole-v1\"",
      "[\"CartPole-v1\",\"CartPole-v1\"]" },
    { "info.tag", "[[0,1],[10,11],[20,21]]", "[10,11]", "[[20,21],[0,1]]" },
};

static void test_load_and_index_tensordicts_stacks(void **state)
{
    (void)state;
    loom_object *o = load(tu_data_path("rl/nts/py_memmap"), NULL);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        assert_json(o, expect[i][0], expect[i][1]);
    /* td[1]: one element of each stack (info.tag keeps its inner dim) */
    char ids[64];
    snprintf(ids, sizeof ids, "sources=%lld", (long long)tdt_id(o));
    loom_object *one = tdt_create(NULL, "from=clone", ids, NULL);
    int64_t i1 = 1;
    loom_tensor *ix = tdt_tensor(LOOM_DTYPE_I64, 0, &i1, (const double[]){ 1 });
    assert_int_equal(tdt_call(one, "rl.td_index", ix, NULL, NULL), LOOM_OK);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        assert_json(one, expect[i][0], expect[i][2]);
    /* td[[2, 0]] */
    loom_object *pick = tdt_create(NULL, "from=clone", ids, NULL);
    int64_t two = 2;
    loom_tensor *ix2 = tdt_tensor(LOOM_DTYPE_I64, 1, &two, (const double[]){ 2, 0 });
    assert_int_equal(tdt_call(pick, "rl.td_index", ix2, NULL, NULL), LOOM_OK);
    for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++)
        assert_json(pick, expect[i][0], expect[i][3]);
    /* unbind, then stack back: the same stacks */
    loom_object *parts[3];
    for (int p = 0; p < 3; p++) {
        char part[32];
        snprintf(part, sizeof part, "part=%d", p);
        parts[p] = tdt_create(NULL, "from=unbind", ids, part, NULL);
        char want[32];
        snprintf(want, sizeof want, "\"env%d\"", p);
        assert_json(parts[p], "name", want);
    }
    char all[128];
    snprintf(all, sizeof all, "sources=%lld,%lld,%lld", (long long)tdt_id(parts[0]), (long long)tdt_id(parts[1]),
             (long long)tdt_id(parts[2]));
    loom_object *again = tdt_create(NULL, "from=stack", all, NULL);
    assert_json(again, "name", expect[0][1]);
    assert_json(again, "cfg", expect[1][1]);
    assert_json(again, "info.tag", expect[3][1]);
    assert_json(again, "same", "\"CartPole-v1\"");   /* equal values: one NonTensorData */
    loom_object *objs[] = { o, one, pick, parts[0], parts[1], parts[2], again };
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++)
        loom_object_free(objs[i]);
    loom_tensor_free(ix);
    loom_tensor_free(ix2);
}

static void test_stack_saves_as_tensordict(void **state)
{
    (void)state;
    loom_object *parts[3];
    char all[128] = "sources=";
    for (int p = 0; p < 3; p++) {
        parts[p] = tdt_new(0, NULL);
        char json[160];
        snprintf(json, sizeof json, "json=\"env%d\"", p);
        assert_int_equal(tdt_call(parts[p], "rl.td_set_non_tensor", NULL, NULL, "key=name", json, NULL), LOOM_OK);
        snprintf(json, sizeof json, "json={\"seed\":%d,\"mode\":\"%s\"}", p, p < 2 ? "train" : "eval");
        assert_int_equal(tdt_call(parts[p], "rl.td_set_non_tensor", NULL, NULL, "key=cfg", json, NULL), LOOM_OK);
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%lld", p ? "," : "", (long long)tdt_id(parts[p]));
    }
    loom_object *st = tdt_create(NULL, "from=stack", all, NULL);
    char dir[256], kv[300];
    snprintf(dir, sizeof dir, "%s/from_loom", tdt_scratch);
    snprintf(kv, sizeof kv, "path=%s", dir);
    assert_int_equal(tdt_call(st, "rl.td_save", NULL, NULL, kv, NULL), LOOM_OK);
    static const char *const keys[] = { "name", "cfg" };
    for (int k = 0; k < 2; k++) {
        char got[400], want[200];
        snprintf(got, sizeof got, "%s/%s/meta.json", dir, keys[k]);
        snprintf(want, sizeof want, "rl/nts/py_memmap/%s/meta.json", keys[k]);
        char *g = tdt_slurp(got, NULL), *w = tdt_slurp(tu_data_path(want), NULL);
        if (strcmp(g, w) != 0)
            fail_msg("%s: loom wrote %s, tensordict %s", keys[k], g, w);
        free(g);
        free(w);
    }
    char *meta = tdt_slurp(strcat(strcpy(kv, dir), "/meta.json"), NULL);
    assert_non_null(strstr(meta, "\"name\":{\"type\":\"NonTensorStack\"}"));
    free(meta);
    loom_object *back = load(dir, NULL);
    assert_json(back, "name", expect[0][1]);
    assert_json(back, "cfg", expect[1][1]);
    /* set directly as a stack, and a value that does not nest as the batch */
    assert_int_equal(tdt_call(back, "rl.td_set_non_tensor", NULL, NULL, "key=tags", "json=[1,[2],{\"a\":3}]",
                              "stack=true", NULL), LOOM_OK);
    assert_json(back, "tags", "[1,[2],{\"a\":3}]");
    tdt_assert_fails(tdt_call(back, "rl.td_set_non_tensor", NULL, NULL, "key=bad", "json=[1,2]", "stack=true", NULL),
                     LOOM_EINVAL, "key 'bad': a NonTensorStack holds nested lists of the batch_size");
    /* a tensor replay storage keeps one value per NonTensorData */
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "max_size", 8), LOOM_OK);
    loom_object *rb = NULL;
    assert_int_equal(loom_object_create(&rb, "rl.replay_buffer", a, NULL), LOOM_OK);
    loom_attrs_free(a);
    int64_t three = 3;
    loom_tensor *obs = tdt_ramp(1, &three, 1.0, 0.0);
    tdt_set(back, "obs", obs);
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(back));
    loom_tensor *index = NULL;
    tdt_assert_fails(tdt_call(rb, "rl.rb_extend", NULL, &index, src, NULL), LOOM_ENOTSUP, "is a NonTensorStack");
    loom_tensor_free(obs);
    loom_object_free(rb);
    loom_object_free(back);
    loom_object_free(st);
    for (int p = 0; p < 3; p++)
        loom_object_free(parts[p]);
}

static void test_broken_stacks(void **state)
{
    (void)state;
    static const struct {
        const char *what, *text;
        loom_status status;
        const char *needle;
    } cases[] = {
        { "too few values", "{\"_type\":\"<class 'tensordict.tensorclass.NonTensorStack'>\",\"data\":[\"a\",\"b\"]}",
          LOOM_EINVAL, "key 'name': a NonTensorStack holds nested lists of the batch_size" },
        { "not a list", "{\"_type\":\"<class 'tensordict.tensorclass.NonTensorStack'>\",\"data\":3}", LOOM_EINVAL,
          "key 'name': a NonTensorStack" },
        { "pickled", "{\"_type\":\"<class 'tensordict.tensorclass.NonTensorStack'>\",\"data\":\"pickle.pkl\"}",
          LOOM_ENOTSUP, "pickled (not JSON) NonTensorStack" },
        { "wrong type", "{\"_type\":\"<class 'tensordict.tensorclass.NonTensorData'>\",\"data\":[1,2,3]}",
          LOOM_EINVAL, "is a NonTensorStack in its parent's meta.json" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char dir[256], cmd[700], file[300];
        snprintf(dir, sizeof dir, "%s/broken%zu", tdt_scratch, c);
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", tu_data_path("rl/nts/py_memmap"), dir);
        assert_int_equal(system(cmd), 0);
        snprintf(file, sizeof file, "%s/name/meta.json", dir);
        write_file(file, cases[c].text);
        loom_status st = LOOM_OK;
        loom_object *o = load(dir, &st);
        if (o != NULL)
            fail_msg("%s: loaded", cases[c].what);
        if (st != cases[c].status || strstr(loom_last_error(), cases[c].needle) == NULL)
            fail_msg("%s: %s '%s'", cases[c].what, loom_status_name(st), loom_last_error());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_and_index_tensordicts_stacks),
        cmocka_unit_test(test_stack_saves_as_tensordict),
        cmocka_unit_test(test_broken_stacks),
    };
    return cmocka_run_group_tests(tests, tdt_scratch_setup, tdt_scratch_teardown);
}
