/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_cache.c - the cache tier of fbgemm.tbe: with cache_load_factor
** < 1 every forward (with or without fbgemm.tbe_prefetch before it) gives
** the very bytes of the uncached object, for LRU and LFU, every weight type
** and pooling; fbgemm.tbe_cache_stats counts what happened.
*/
#include <stdio.h>
#include <string.h>

#include "tbe_test_util.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A batch of 4 features x B bags; skewed indices so that some rows repeat. */
static void make_batch(int64_t B, loom_tensor **ind, loom_tensor **off, loom_tensor **psw)
{
    static const int64_t rows[4] = { 40, 30, 40, 50 };
    int64_t nb = 4 * B + 1, lens[64 * 4 + 1], n = 0;
    for (int64_t k = 0; k < 4 * B; k++)
        n += lens[k] = (int64_t)(next_rand() % 7);
    assert_int_equal(loom_tensor_new(ind, LOOM_DTYPE_I64, 1, &n, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(off, LOOM_DTYPE_I64, 1, &nb, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(psw, LOOM_DTYPE_F32, 1, &n, NULL), LOOM_OK);
    int64_t *I = loom_data(*ind), *O = loom_data(*off), pos = 0;
    float *W = loom_data(*psw);
    O[0] = 0;
    for (int64_t k = 0; k < 4 * B; k++) {
        for (int64_t l = 0; l < lens[k]; l++, pos++) {
            uint64_t r = next_rand();
            I[pos] = (int64_t)((r % 4 == 0 ? r >> 8 : (r >> 8) % 8) % (uint64_t)rows[k / B]);
            W[pos] = 0.25f + (float)(r % 16) / 8.0f;
        }
        O[k + 1] = pos;
    }
}

static loom_object *object(const char *wt, const char *set, double clf, const char *algo)
{
    loom_attrs *a = tt_golden_attrs(wt);
    tt_set_float(a, "cache_load_factor", clf);
    tt_set_str(a, "cache_algorithm", algo);
    tt_set_int(a, "cache_assoc", 4);
    loom_object *o = tt_create_golden(set, a);
    loom_attrs_free(a);
    return o;
}

static void stats(loom_object *o, int64_t v[8])
{
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run("fbgemm.tbe_cache_stats", NULL, 0, NULL, &out, 1, &opt) != LOOM_OK)
        fail_msg("tbe_cache_stats: %s", loom_last_error());
    assert_int_equal(loom_numel(out), 8);
    memcpy(v, loom_data(out), 8 * sizeof *v);
    loom_tensor_free(out);
}

static void check_identical(const char *wt, const char *algo, const char *pooling)
{
    char set[32];
    snprintf(set, sizeof set, "%s_%s", wt, strcmp(pooling, "none") == 0 ? "none" : "pooled");
    loom_object *plain = object(wt, set, 1.0, algo), *cached = object(wt, set, 0.2, algo);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "pooling_mode", pooling);
    int64_t looked_up = 0;
    for (int batch = 0; batch < 12; batch++) {
        loom_tensor *ind, *off, *psw, *want = NULL, *got = NULL;
        make_batch(6, &ind, &off, &psw);
        const loom_tensor *w = batch % 3 == 0 ? psw : NULL;
        if (batch % 2 == 1)   /* prefetch this batch first on odd batches */
            assert_int_equal(tt_run("fbgemm.tbe_prefetch", cached, ind, off, NULL, NULL, NULL, NULL), LOOM_OK);
        assert_int_equal(tt_run("fbgemm.tbe", plain, ind, off, w, NULL, a, &want), LOOM_OK);
        if (tt_run("fbgemm.tbe", cached, ind, off, w, NULL, a, &got) != LOOM_OK)
            fail_msg("%s %s %s: %s", wt, algo, pooling, loom_last_error());
        tt_assert_same_bytes(got, want, "cached vs uncached");
        looked_up += ind->shape[0];
        loom_tensor_free(want);
        loom_tensor_free(got);
        loom_tensor_free(ind);
        loom_tensor_free(off);
        loom_tensor_free(psw);
    }
    int64_t v[8];
    stats(cached, v);
    assert_int_equal(v[0], 12);                  /* one populate per batch */
    assert_int_equal(v[6], looked_up);           /* lookups */
    assert_true(v[7] > 0 && v[7] <= v[6]);       /* some hits */
    stats(plain, v);
    for (int i = 0; i < 8; i++)
        assert_int_equal(v[i], 0);
    loom_attrs_free(a);
    loom_object_free(plain);
    loom_object_free(cached);
}

static void test_bit_identical(void **state)
{
    (void)state;
    static const char *const wts[] = { "fp32", "fp16", "bf16", "fp8", "int8", "int4", "int2" };
    for (size_t w = 0; w < sizeof wts / sizeof wts[0]; w++)
        check_identical(wts[w], w % 2 ? "lfu" : "lru", "sum");
    check_identical("fp32", "lru", "mean");
    check_identical("int4", "lfu", "none");
    check_identical("fp16", "lru", "none");
}

/* After a prefetch of a batch, its forward finds every row that fit. */
static void test_prefetch_then_hit(void **state)
{
    (void)state;
    loom_object *o = object("fp32", "fp32_pooled", 0.5, "lru");
    loom_tensor *ind, *off, *psw, *out = NULL;
    make_batch(2, &ind, &off, &psw);
    int64_t v[8];
    assert_int_equal(tt_run("fbgemm.tbe_prefetch", o, ind, off, NULL, NULL, NULL, NULL), LOOM_OK);
    assert_int_equal(tt_run("fbgemm.tbe", o, ind, off, NULL, NULL, NULL, &out), LOOM_OK);
    stats(o, v);
    assert_int_equal(v[0], 1);                   /* the forward did not populate again */
    assert_int_equal(v[1], ind->shape[0]);
    /* every requested index is a hit unless it was a conflict miss */
    assert_int_equal(v[7], v[6] - v[5]);
    /* reset */
    loom_tensor *s = NULL;
    loom_attrs *a;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "reset", 1), LOOM_OK);
    assert_int_equal(loom_run("fbgemm.tbe_cache_stats", NULL, 0, a, &s, 1, &opt), LOOM_OK);
    loom_tensor_free(s);
    stats(o, v);
    assert_int_equal(v[0], 0);
    loom_attrs_free(a);
    loom_tensor_free(out);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_tensor_free(psw);
    loom_object_free(o);
}

static void test_cache_attrs(void **state)
{
    (void)state;
    loom_attrs *a;
    char path[512];
    tt_data_path(path, sizeof path, "tables_fp32_pooled.safetensors");
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_float(a, "cache_load_factor", 1.5);
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "cache_load_factor");
    tt_set_float(a, "cache_load_factor", 0.5);
    tt_set_str(a, "cache_algorithm", "fifo");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "cache_algorithm 'fifo'");
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bit_identical),
        cmocka_unit_test(test_prefetch_then_hit),
        cmocka_unit_test(test_cache_attrs),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-cache", tests, tu_setup, tu_teardown);
}
