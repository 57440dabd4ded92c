/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_td_container.c - the rl.tensordict container through its methods:
** nested and tuple keys, NonTensorData, index (int, slice, mask, tensor),
** stack, cat, split, unbind, apply, flatten/unflatten, update, select,
** exclude, del, and the errors each names. The operations only move
** elements, so results are compared bit for bit with values built here by
** tensordict's rules (td[idx] gathers rows of batch dim 0, stack adds a
** batch dim, cat joins one, NonTensorData is kept as it is).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_test_util.h"

static const int64_t B4[1] = { 4 };

/* obs f32 [4,3] = 0..11, next.reward f32 [4,1] = 100..103, name "cartpole" */
static loom_object *sample(void)
{
    loom_object *o = tdt_new(1, B4);
    const int64_t s_obs[2] = { 4, 3 }, s_rew[2] = { 4, 1 };
    loom_tensor *obs = tdt_ramp(2, s_obs, 1.0, 0.0), *rew = tdt_ramp(2, s_rew, 1.0, 100.0);
    tdt_set(o, "obs", obs);
    tdt_set(o, "next.reward", rew);
    loom_tensor_free(obs);
    loom_tensor_free(rew);
    assert_int_equal(tdt_call(o, "rl.td_set_non_tensor", NULL, NULL, "key=name", "json=\"cartpole\"", NULL), LOOM_OK);
    return o;
}

static void assert_f32(const loom_tensor *t, int64_t n, const float *want, const char *what)
{
    int64_t got_n = 1;
    for (int32_t d = 0; d < t->ndim; d++)
        got_n *= t->shape[d];
    if (got_n != n)
        fail_msg("%s: %lld elements, want %lld", what, (long long)got_n, (long long)n);
    for (int64_t i = 0; i < n; i++)
        if (((const float *)t->data)[i] != want[i])
            fail_msg("%s[%lld] = %g, want %g", what, (long long)i, ((const float *)t->data)[i], want[i]);
}

static void test_set_get_keys(void **state)
{
    (void)state;
    loom_object *o = sample();
    const int64_t s2[2] = { 4, 2 };
    loom_tensor *x = tdt_ramp(2, s2, 0.5, 0.0);
    tdt_set(o, "[\"next\",\"a.b\"]", x);
    loom_tensor *back = tdt_get(o, "[\"next\",\"a.b\"]");
    tdt_assert_bytes(back, x, "next/a.b");
    loom_tensor_free(back);
    back = tdt_get(o, "[\"next\",\"reward\"]");   /* the tuple form of next.reward */
    const float rew[4] = { 100, 101, 102, 103 };
    assert_f32(back, 4, rew, "next.reward");
    loom_tensor_free(back);
    char *keys = tdt_keys(o);
    assert_string_equal(keys, "obs|next.reward|[\"next\",\"a.b\"]|name");
    free(keys);
    /* replacing a leaf keeps its place */
    tdt_set(o, "obs", x);
    keys = tdt_keys(o);
    assert_string_equal(keys, "obs|next.reward|[\"next\",\"a.b\"]|name");
    free(keys);

    const int64_t bad[2] = { 3, 2 };
    loom_tensor *y = tdt_ramp(2, bad, 1.0, 0.0);
    tdt_assert_fails(tdt_call(o, "rl.td_set", y, NULL, "key=obs", NULL), LOOM_EINVAL,
                     "does not start with the batch_size [4]");
    tdt_assert_fails(tdt_call(o, "rl.td_set", x, NULL, "key=obs.deeper", NULL), LOOM_EINVAL, "names a tensor");
    tdt_assert_fails(tdt_call(o, "rl.td_set", x, NULL, "key=a..b", NULL), LOOM_EINVAL, "non-empty components");
    tdt_assert_fails(tdt_call(o, "rl.td_set", x, NULL, "key=[\"a\",3]", NULL), LOOM_EINVAL, "non-empty strings");
    loom_tensor *none = NULL;
    tdt_assert_fails(tdt_call(o, "rl.td_get", NULL, &none, "key=missing", NULL), LOOM_ENOENT, "'missing'");
    tdt_assert_fails(tdt_call(o, "rl.td_get", NULL, &none, "key=next", NULL), LOOM_EINVAL, "nested TensorDict");
    tdt_assert_fails(tdt_call(o, "rl.td_get", NULL, &none, "key=name", NULL), LOOM_EINVAL, "NonTensorData");
    assert_null(none);

    assert_int_equal(tdt_call(o, "rl.td_del", NULL, NULL, "key=next.reward", NULL), LOOM_OK);
    keys = tdt_keys(o);
    assert_string_equal(keys, "obs|[\"next\",\"a.b\"]|name");
    free(keys);
    tdt_assert_fails(tdt_call(o, "rl.td_del", NULL, NULL, "key=next.reward", NULL), LOOM_ENOENT, "not in");
    loom_tensor_free(x);
    loom_tensor_free(y);
    loom_object_free(o);
}

static void test_non_tensor(void **state)
{
    (void)state;
    loom_object *o = sample();
    assert_int_equal(tdt_call(o, "rl.td_set_non_tensor", NULL, NULL, "key=next.cfg",
                              "json={\"lr\": 0.5, \"layers\": [64, 64], \"ok\": true, \"x\": null}", NULL), LOOM_OK);
    char *s = tdt_get_json(o, "name");
    assert_string_equal(s, "\"cartpole\"");
    free(s);
    s = tdt_get_json(o, "next.cfg");
    assert_string_equal(s, "{\"lr\":0.5,\"layers\":[64,64],\"ok\":true,\"x\":null}");
    free(s);
    tdt_assert_fails(tdt_call(o, "rl.td_set_non_tensor", NULL, NULL, "key=bad", "json={oops", NULL), LOOM_EINVAL,
                     "not a JSON value");
    loom_tensor *none = NULL;
    tdt_assert_fails(tdt_call(o, "rl.td_get_non_tensor", NULL, &none, "key=obs", NULL), LOOM_EINVAL,
                     "not a NonTensorData");
    /* kinds: 1 tensor, 3 non-tensor */
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_tensor *outs[3] = { NULL, NULL, NULL };
    assert_int_equal(loom_run("rl.td_keys", NULL, 0, NULL, outs, 3, &opt), LOOM_OK);
    assert_int_equal(outs[2]->shape[0], 4);
    const int64_t want[4] = { 1, 1, 3, 3 };
    assert_memory_equal(outs[2]->data, want, sizeof want);
    for (int i = 0; i < 3; i++)
        loom_tensor_free(outs[i]);
    loom_object_free(o);
}

/* td[index] for each kind of index, on a fresh sample each time. */
static void check_index(const loom_tensor *index, const char *slice, const int64_t *rows, int64_t n, int squeeze)
{
    loom_object *o = sample();
    loom_status st = slice != NULL ? tdt_call(o, "rl.td_index", NULL, NULL, slice, NULL)
                                   : tdt_call(o, "rl.td_index", index, NULL, NULL);
    if (st != LOOM_OK)
        fail_msg("rl.td_index: %s", loom_last_error());
    int64_t b[4];
    int32_t bn = tdt_batch(o, b);
    if (squeeze) {
        assert_int_equal(bn, 0);
    } else {
        assert_int_equal(bn, 1);
        assert_int_equal(b[0], n);
    }
    float want[12], wrew[4];
    for (int64_t j = 0; j < n; j++) {
        for (int c = 0; c < 3; c++)
            want[j * 3 + c] = (float)(rows[j] * 3 + c);
        wrew[j] = (float)(100 + rows[j]);
    }
    loom_tensor *obs = tdt_get(o, "obs"), *rew = tdt_get(o, "next.reward");
    assert_int_equal(obs->ndim, squeeze ? 1 : 2);
    assert_f32(obs, 3 * n, want, "obs");
    assert_f32(rew, n, wrew, "next.reward");
    char *name = tdt_get_json(o, "name");     /* indexing keeps a NonTensorData as it is */
    assert_string_equal(name, "\"cartpole\"");
    free(name);
    loom_tensor_free(obs);
    loom_tensor_free(rew);
    loom_object_free(o);
}

static void test_index(void **state)
{
    (void)state;
    const double minus1 = -1;
    loom_tensor *i0 = tdt_tensor(LOOM_DTYPE_I64, 0, NULL, &minus1);
    const int64_t r_int[1] = { 3 };
    check_index(i0, NULL, r_int, 1, 1);
    const int64_t r_slice[2] = { 1, 3 };
    check_index(NULL, "slice=1,4,2", r_slice, 2, 0);
    const int64_t r_neg[2] = { 2, 3 };
    check_index(NULL, "slice=-2,9223372036854775807", r_neg, 2, 0);
    check_index(NULL, "slice=3,1", NULL, 0, 0);
    const int64_t s4[1] = { 4 }, s3[1] = { 3 };
    const double mask[4] = { 1, 0, 0, 1 };
    loom_tensor *m = tdt_tensor(LOOM_DTYPE_BOOL, 1, s4, mask);
    const int64_t r_mask[2] = { 0, 3 };
    check_index(m, NULL, r_mask, 2, 0);
    const double idx[3] = { 2, 0, -1 };
    loom_tensor *it = tdt_tensor(LOOM_DTYPE_I64, 1, s3, idx);
    const int64_t r_idx[3] = { 2, 0, 3 };
    check_index(it, NULL, r_idx, 3, 0);

    loom_object *o = sample();
    const double far = 4;
    loom_tensor *i4 = tdt_tensor(LOOM_DTYPE_I64, 0, NULL, &far);
    tdt_assert_fails(tdt_call(o, "rl.td_index", i4, NULL, NULL), LOOM_EINVAL, "out of range for batch dim 0 of size 4");
    loom_tensor *m3 = tdt_tensor(LOOM_DTYPE_BOOL, 1, s3, mask);
    tdt_assert_fails(tdt_call(o, "rl.td_index", m3, NULL, NULL), LOOM_EINVAL, "mask of 3 elements");
    tdt_assert_fails(tdt_call(o, "rl.td_index", NULL, NULL, "slice=0,4,0", NULL), LOOM_EINVAL, "step 0");
    tdt_assert_fails(tdt_call(o, "rl.td_index", NULL, NULL, NULL), LOOM_EINVAL, "slice");
    /* a failed index leaves the dict as it was */
    int64_t b[2];
    assert_int_equal(tdt_batch(o, b), 1);
    assert_int_equal(b[0], 4);
    loom_object_free(o);
    loom_tensor_free(i0);
    loom_tensor_free(i4);
    loom_tensor_free(m);
    loom_tensor_free(m3);
    loom_tensor_free(it);
}

static void test_stack_cat_split_unbind(void **state)
{
    (void)state;
    loom_object *a = sample(), *b = sample();
    const int64_t s_obs[2] = { 4, 3 };
    loom_tensor *obs2 = tdt_ramp(2, s_obs, 1.0, 50.0);
    tdt_set(b, "obs", obs2);
    char ids[64];
    snprintf(ids, sizeof ids, "sources=%lld,%lld", (long long)tdt_id(a), (long long)tdt_id(b));

    /* stack at dim 1: batch [4, 2], obs [4, 2, 3] with rows a[i], b[i] */
    loom_object *st = tdt_create(NULL, "from=stack", ids, "dim=1", NULL);
    int64_t bs[4];
    assert_int_equal(tdt_batch(st, bs), 2);
    assert_int_equal(bs[0], 4);
    assert_int_equal(bs[1], 2);
    loom_tensor *got = tdt_get(st, "obs");
    float want[24];
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++)
            for (int c = 0; c < 3; c++)
                want[(i * 2 + k) * 3 + c] = (float)(i * 3 + c + (k ? 50 : 0));
    assert_int_equal(got->ndim, 3);
    assert_f32(got, 24, want, "stack obs");
    loom_tensor_free(got);
    char *name = tdt_get_json(st, "name");
    assert_string_equal(name, "\"cartpole\"");
    free(name);

    /* cat at dim 0: batch [8] */
    loom_object *ct = tdt_create(NULL, "from=cat", ids, NULL);
    assert_int_equal(tdt_batch(ct, bs), 1);
    assert_int_equal(bs[0], 8);
    got = tdt_get(ct, "obs");
    for (int i = 0; i < 24; i++)
        want[i] = (float)(i < 12 ? i : i - 12 + 50);
    assert_f32(got, 24, want, "cat obs");
    loom_tensor_free(got);

    /* split [8] by 3: pieces 3, 3, 2; the third is rows 6, 7 */
    char cid[48];
    snprintf(cid, sizeof cid, "sources=%lld", (long long)tdt_id(ct));
    loom_object *sp = tdt_create(NULL, "from=split", cid, "sizes=3", "part=2", NULL);
    assert_int_equal(tdt_batch(sp, bs), 1);
    assert_int_equal(bs[0], 2);
    got = tdt_get(sp, "next.reward");
    const float r67[2] = { 102, 103 };
    assert_f32(got, 2, r67, "split next.reward");
    loom_tensor_free(got);
    loom_object *sp2 = tdt_create(NULL, "from=split", cid, "sizes=5,3", "part=1", NULL);
    assert_int_equal(tdt_batch(sp2, bs), 1);
    assert_int_equal(bs[0], 3);
    loom_status s;
    assert_null(tdt_create(&s, "from=split", cid, "sizes=5,4", NULL));
    tdt_assert_fails(s, LOOM_EINVAL, "sum to 9");
    assert_null(tdt_create(&s, "from=split", cid, "sizes=3", "part=3", NULL));
    tdt_assert_fails(s, LOOM_EINVAL, "3 pieces");

    /* unbind the stacked dict at dim 1: part 1 is b */
    snprintf(cid, sizeof cid, "sources=%lld", (long long)tdt_id(st));
    loom_object *ub = tdt_create(NULL, "from=unbind", cid, "dim=1", "part=1", NULL);
    got = tdt_get(ub, "obs");
    tdt_assert_bytes(got, obs2, "unbind obs");
    loom_tensor_free(got);

    /* clone copies: changing the clone leaves the source alone */
    snprintf(cid, sizeof cid, "sources=%lld", (long long)tdt_id(a));
    loom_object *cl = tdt_create(NULL, "from=clone", cid, NULL);
    tdt_set(cl, "obs", obs2);
    got = tdt_get(a, "obs");
    for (int i = 0; i < 12; i++)
        want[i] = (float)i;
    assert_f32(got, 12, want, "source after clone");
    loom_tensor_free(got);

    /* refusals: unknown id, different keys */
    assert_null(tdt_create(&s, "from=stack", "sources=999999", NULL));
    tdt_assert_fails(s, LOOM_ENOENT, "id 999999");
    assert_int_equal(tdt_call(b, "rl.td_del", NULL, NULL, "key=next.reward", NULL), LOOM_OK);
    assert_null(tdt_create(&s, "from=stack", ids, NULL));
    tdt_assert_fails(s, LOOM_EINVAL, "keys");
    assert_int_equal(tdt_call(cl, "rl.td_set_non_tensor", NULL, NULL, "key=name", "json=\"other\"", NULL), LOOM_OK);
    snprintf(ids, sizeof ids, "sources=%lld,%lld", (long long)tdt_id(a), (long long)tdt_id(cl));
    /* different values of a NonTensorData: a NonTensorStack (test_td_nts.c) */
    loom_object *nts = tdt_create(NULL, "from=cat", ids, NULL);
    char *j = tdt_get_json(nts, "name");
    assert_non_null(strstr(j, "\"other\""));
    assert_int_equal(j[0], '[');
    free(j);
    loom_object_free(nts);
    assert_null(tdt_create(&s, "from=cat", ids, "dim=1", NULL));
    tdt_assert_fails(s, LOOM_EINVAL, "dim 1");

    loom_object *all[] = { a, b, st, ct, sp, sp2, ub, cl };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_object_free(all[i]);
    loom_tensor_free(obs2);
}

static void test_apply_flatten_update_select(void **state)
{
    (void)state;
    loom_object *o = sample();
    assert_int_equal(tdt_call(o, "rl.td_apply", NULL, NULL, "fn=core.cast", "attrs=dtype=f64", NULL), LOOM_OK);
    loom_tensor *got = tdt_get(o, "next.reward");
    assert_int_equal(loom_dtype_from_dl(got->dtype), LOOM_DTYPE_F64);
    assert_true(((const double *)got->data)[3] == 103.0);
    loom_tensor_free(got);
    char *name = tdt_get_json(o, "name");
    assert_string_equal(name, "\"cartpole\"");
    free(name);
    tdt_assert_fails(tdt_call(o, "rl.td_apply", NULL, NULL, "fn=core.nothing", NULL), LOOM_ENOENT, "core.nothing");

    assert_int_equal(tdt_call(o, "rl.td_flatten_keys", NULL, NULL, "separator=/", NULL), LOOM_OK);
    char *keys = tdt_keys(o);
    assert_string_equal(keys, "obs|next/reward|name");
    free(keys);
    assert_int_equal(tdt_call(o, "rl.td_unflatten_keys", NULL, NULL, "separator=/", NULL), LOOM_OK);
    keys = tdt_keys(o);
    assert_string_equal(keys, "obs|next.reward|name");
    free(keys);

    loom_object *u = tdt_new(1, B4);
    const int64_t s2[2] = { 4, 2 };
    loom_tensor *x = tdt_ramp(2, s2, 1.0, 7.0);
    tdt_set(u, "next.done", x);
    tdt_set(u, "obs", x);
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(u));
    assert_int_equal(tdt_call(o, "rl.td_update", NULL, NULL, src, NULL), LOOM_OK);
    keys = tdt_keys(o);
    assert_string_equal(keys, "obs|next.reward|next.done|name");
    free(keys);
    got = tdt_get(o, "obs");
    tdt_assert_bytes(got, x, "updated obs");
    loom_tensor_free(got);
    loom_object *other = tdt_new(1, (const int64_t[]){ 5 });
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(other));
    tdt_assert_fails(tdt_call(o, "rl.td_update", NULL, NULL, src, NULL), LOOM_EINVAL, "batch_size");

    assert_int_equal(tdt_call(o, "rl.td_select", NULL, NULL, "keys=next.done,name", NULL), LOOM_OK);
    keys = tdt_keys(o);
    assert_string_equal(keys, "next.done|name");
    free(keys);
    tdt_assert_fails(tdt_call(o, "rl.td_select", NULL, NULL, "keys=obs", NULL), LOOM_ENOENT, "'obs'");
    assert_int_equal(tdt_call(o, "rl.td_select", NULL, NULL, "keys=obs,name", "strict=false", NULL), LOOM_OK);
    keys = tdt_keys(o);
    assert_string_equal(keys, "name");
    free(keys);
    loom_object *e = sample();
    assert_int_equal(tdt_call(e, "rl.td_exclude", NULL, NULL, "keys=[\"next.reward\", [\"name\"], \"nope\"]", NULL),
                     LOOM_OK);
    keys = tdt_keys(e);
    assert_string_equal(keys, "obs");
    free(keys);
    loom_tensor_free(x);
    loom_object_free(o);
    loom_object_free(u);
    loom_object_free(other);
    loom_object_free(e);
}

/* Methods of one object from several threads serialise on its lock. */
static void test_bad_object(void **state)
{
    (void)state;
    loom_status s;
    assert_null(tdt_create(&s, "from=stack", NULL));
    tdt_assert_fails(s, LOOM_EINVAL, "sources");
    assert_null(tdt_create(&s, "from=load", NULL));
    tdt_assert_fails(s, LOOM_EINVAL, "path");
    assert_null(tdt_create(&s, "from=nothing", NULL));
    assert_int_not_equal(s, LOOM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_get_keys),
        cmocka_unit_test(test_non_tensor),
        cmocka_unit_test(test_index),
        cmocka_unit_test(test_stack_cat_split_unbind),
        cmocka_unit_test(test_apply_flatten_update_select),
        cmocka_unit_test(test_bad_object),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
