/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_cache_tbe.c - the row cache end to end through fbgemm.tbe (public
** API, packs from the build tree): objects with cache_load_factor < 1 (LRU
** and LFU, several associativities) give outputs bit-identical to the
** same tables without a cache, over sequences of batches that evict,
** with and without fbgemm.tbe_prefetch before the forward; and the cache
** statistics add up (fbgemm.tbe_cache_stats).
**
** The tables (FP32, INT8, INT4 rows of random bytes with valid fp16
** scale/bias headers) are written to a temporary safetensors file.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tu_ops.h"

#define T 3
#define B 24
#define MAX_L 9

static const char *const wtypes = "fp32,int8,int4";
static const int64_t dims[T] = { 16, 8, 16 };
static const int64_t rows[T] = { 400, 600, 300 };
static const int64_t row_bytes[T] = { 64, 12, 12 };    /* 4*16, 8+4, 16/2+4 */

static char weights_path[64];
static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* fp16 bits of a small positive or negative normal number. */
static uint16_t small_half(void)
{
    return (uint16_t)(0x2000u + (next() % 0x1800u) + (next() % 2 ? 0x8000u : 0));
}

static int write_tables(void **state)
{
    (void)state;
    loom_tensor *t[T];
    const char *names[T] = { "table.0", "table.1", "table.2" };
    for (int i = 0; i < T; i++) {
        int64_t shape[2] = { rows[i], row_bytes[i] };
        if (loom_tensor_new(&t[i], LOOM_DTYPE_U8, 2, shape, NULL) != LOOM_OK)
            return -1;
        uint8_t *d = t[i]->data;
        for (int64_t r = 0; r < rows[i]; r++) {
            uint8_t *row = d + r * row_bytes[i];
            for (int64_t j = 0; j < row_bytes[i]; j++)
                row[j] = (uint8_t)next();
            if (i == 0) {       /* fp32: finite values */
                for (int64_t j = 0; j < dims[0]; j++) {
                    float f = (float)((int64_t)(next() % 2001) - 1000) / 256.0f;
                    memcpy(row + 4 * j, &f, 4);
                }
            } else {            /* scale and bias headers */
                uint16_t s = small_half(), b = small_half();
                memcpy(row, &s, 2);
                memcpy(row + 2, &b, 2);
            }
        }
    }
    snprintf(weights_path, sizeof weights_path, "/tmp/loom_fbgemm_cache_tbe_%d.safetensors", (int)getpid());
    loom_status st = loom_safetensors_write(weights_path, names, (const loom_tensor *const *)t, T);
    for (int i = 0; i < T; i++)
        loom_tensor_free(t[i]);
    return st == LOOM_OK ? 0 : -1;
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    return write_tables(state);
}

static int teardown(void **state)
{
    unlink(weights_path);
    return tu_teardown(state);
}

static loom_object *make_object(double clf, const char *algo, int64_t assoc)
{
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "weights_tys", wtypes), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "embedding_dims", dims, T), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "cache_load_factor", clf), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "cache_algorithm", algo), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "cache_assoc", assoc), LOOM_OK);
    loom_status st = loom_object_create(&o, "fbgemm.tbe", a, weights_path);
    if (st != LOOM_OK)
        fail_msg("fbgemm.tbe create (clf %g, %s, %lld ways): %s", clf, algo, (long long)assoc, loom_last_error());
    loom_attrs_free(a);
    return o;
}

/* A batch: skewed indices per feature (hot rows near 0), some empty bags. */
static void make_batch(loom_tensor **ind, loom_tensor **off, loom_tensor **psw)
{
    int64_t n_off = T * B + 1, offs[T * B + 1], idx[T * B * MAX_L];
    int64_t n = 0;
    offs[0] = 0;
    for (int f = 0; f < T; f++)
        for (int b = 0; b < B; b++) {
            int64_t L = (int64_t)(next() % (MAX_L + 1));
            for (int64_t l = 0; l < L; l++) {
                double u = (double)(next() >> 11) / 9007199254740992.0;
                idx[n++] = (int64_t)(u * u * u * (double)rows[f]) % rows[f];
            }
            offs[f * B + b + 1] = n;
        }
    assert_int_equal(loom_tensor_new(ind, LOOM_DTYPE_I64, 1, &n, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(off, LOOM_DTYPE_I64, 1, &n_off, NULL), LOOM_OK);
    memcpy((*ind)->data, idx, (size_t)n * sizeof *idx);
    memcpy((*off)->data, offs, sizeof offs);
    if (psw != NULL) {
        assert_int_equal(loom_tensor_new(psw, LOOM_DTYPE_F32, 1, &n, NULL), LOOM_OK);
        for (int64_t i = 0; i < n; i++)
            ((float *)(*psw)->data)[i] = (float)((int64_t)(next() % 17) - 8) / 4.0f;
    }
}

static loom_tensor *forward(loom_object *o, loom_tensor *ind, loom_tensor *off, loom_tensor *psw,
                            const char *pooling)
{
    const loom_tensor *in[3] = { ind, off, psw };
    loom_tensor *out = NULL;
    loom_attrs *a = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "pooling_mode", pooling), LOOM_OK);
    loom_status st = loom_run("fbgemm.tbe", in, 3, a, &out, 1, &opt);
    if (st != LOOM_OK)
        fail_msg("fbgemm.tbe: %s", loom_last_error());
    loom_attrs_free(a);
    return out;
}

static void prefetch(loom_object *o, loom_tensor *ind, loom_tensor *off)
{
    const loom_tensor *in[2] = { ind, off };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_status st = loom_run("fbgemm.tbe_prefetch", in, 2, NULL, NULL, 0, &opt);
    if (st != LOOM_OK)
        fail_msg("fbgemm.tbe_prefetch: %s", loom_last_error());
}

static void stats(loom_object *o, int64_t v[8])
{
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_status st = loom_run("fbgemm.tbe_cache_stats", NULL, 0, NULL, &out, 1, &opt);
    if (st != LOOM_OK)
        fail_msg("fbgemm.tbe_cache_stats: %s", loom_last_error());
    assert_int_equal(loom_tensor_nbytes(out), 8 * sizeof(int64_t));
    memcpy(v, out->data, 8 * sizeof(int64_t));
    loom_tensor_free(out);
}

static void run_case(double clf, const char *algo, int64_t assoc, uint64_t seed)
{
    rng = seed;
    loom_object *plain = make_object(1.0, "lru", 32);
    loom_object *cached = make_object(clf, algo, assoc);
    int64_t requested = 0, batches = 0;
    const char *pool[3] = { "sum", "mean", "none" };
    for (int step = 0; step < 12; step++) {
        loom_tensor *ind, *off, *psw = NULL;
        make_batch(&ind, &off, step % 3 == 1 ? &psw : NULL);
        const char *pooling = pool[step % 3 == 2 ? 0 : step % 2];
        /* every third batch is prefetched first, as fbgemm's pipeline does */
        if (step % 3 == 0)
            prefetch(cached, ind, off);
        loom_tensor *want = forward(plain, ind, off, psw, pooling);
        loom_tensor *got = forward(cached, ind, off, psw, pooling);
        char what[96];
        snprintf(what, sizeof what, "%s clf %g %lld ways, batch %d", algo, clf, (long long)assoc, step);
        tu_assert_identical(got, want, what);
        requested += ind->shape[0];
        batches++;
        loom_tensor_free(want);
        loom_tensor_free(got);
        loom_tensor_free(ind);
        loom_tensor_free(off);
        loom_tensor_free(psw);
    }
    int64_t s[8];
    stats(cached, s);
    assert_int_equal(s[0], batches);            /* one populate per batch (prefetched or inline) */
    assert_int_equal(s[1], requested);
    assert_true(s[2] > 0 && s[2] <= s[1]);      /* unique <= requested */
    assert_true(s[3] <= s[2]);                  /* unique misses <= unique */
    assert_true(s[4] <= s[3]);                  /* conflict unique misses <= unique misses */
    assert_true(s[5] >= s[4]);                  /* every conflicting unique index occurs at least once */
    assert_int_equal(s[6], requested);          /* every index looked up once */
    assert_int_equal(s[6] - s[7], s[5]);        /* lookups that missed = conflict misses */
    assert_true(s[7] > 0);
    int64_t none[8];
    stats(plain, none);
    for (int i = 0; i < 8; i++)
        assert_int_equal(none[i], 0);
    loom_object_free(cached);
    loom_object_free(plain);
}

static void test_lru_32(void **state) { (void)state; run_case(0.05, "lru", 32, 11); }
static void test_lru_4(void **state) { (void)state; run_case(0.2, "lru", 4, 12); }
static void test_lfu_32(void **state) { (void)state; run_case(0.05, "lfu", 32, 13); }
static void test_lfu_8(void **state) { (void)state; run_case(0.1, "lfu", 8, 14); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru_32),
        cmocka_unit_test(test_lru_4),
        cmocka_unit_test(test_lfu_32),
        cmocka_unit_test(test_lfu_8),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
