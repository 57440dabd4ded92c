/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_cache_train.c - a training fbgemm.tbe with a row cache (the
** fused_uvm_caching kernel of the sharded collections): its forward
** outputs and its tables after every fbgemm.tbe_backward step are the bits
** of the same object without a cache. The backward updates the owned rows
** and writes each updated row through to its slot (cache/cache_refresh.c),
** so a row cached before a step is read back updated after it.
**
** Orders of the prefetch, as the pipelines call it:
**   - none: each forward fills the cache itself;
**   - before: fbgemm.tbe_prefetch of batch i, then its forward;
**   - pipelined: forward i, prefetch of batch i+1, backward i (torchrec's
**     PrefetchTrainPipelineSparseDist: the fill of the next batch may evict
**     rows the backward of this one updates: they are read from the slow
**     tier next time, never stale);
**   - threaded: the prefetch of batch i+1 on a second thread while the
**     forward and the backward of batch i run on this one (the object's
**     lock orders the fill against the lookup and the update).
** FP32 and FP16 tables, row-wise Adagrad (its momentum is per row, in the
** slow tier), LRU and LFU, cache load factors that evict every batch.
*/
#include <pthread.h>
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

#define T 2
#define B 16
#define MAX_L 6
#define STEPS 10

static const int64_t dims[T] = { 16, 8 };
static const int64_t rows[T] = { 500, 300 };

static char weights_path[64];
static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static float uniform(void) { return (float)((double)(next() >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

/* table.0 f32, table.1 f16 (the f16 bits of small uniform values) */
static int write_tables(void **state)
{
    (void)state;
    loom_tensor *t[T];
    const char *names[T] = { "table.0", "table.1" };
    for (int i = 0; i < T; i++) {
        int64_t shape[2] = { rows[i], dims[i] };
        if (loom_tensor_new(&t[i], i == 0 ? LOOM_DTYPE_F32 : LOOM_DTYPE_F16, 2, shape, NULL) != LOOM_OK)
            return -1;
        for (int64_t k = 0; k < rows[i] * dims[i]; k++) {
            if (i == 0)
                ((float *)t[i]->data)[k] = uniform();
            else
                ((uint16_t *)t[i]->data)[k] = (uint16_t)(0x2c00u + next() % 0x0c00u + (next() % 2 ? 0x8000u : 0));
        }
    }
    snprintf(weights_path, sizeof weights_path, "/tmp/loom_cache_train_%d.safetensors", (int)getpid());
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

static loom_object *make_object(double clf, const char *algo)
{
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "cache_load_factor", clf), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "cache_algorithm", algo), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "cache_assoc", 8), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "optimizer", "exact_rowwise_adagrad"), LOOM_OK);
    assert_int_equal(loom_attrs_set_float(a, "learning_rate", 0.05), LOOM_OK);
    loom_status st = loom_object_create(&o, "fbgemm.tbe", a, weights_path);
    if (st != LOOM_OK)
        fail_msg("fbgemm.tbe create (clf %g, %s, training): %s", clf, algo, loom_last_error());
    loom_attrs_free(a);
    return o;
}

typedef struct batch {
    loom_tensor *ind, *off, *grad;
} batch;

/* Skewed ids (hot rows near 0, so the cache both hits and evicts), some
** empty bags, and a gradient of the forward's output [B, sum D]. */
static void make_batch(batch *b)
{
    int64_t n_off = T * B + 1, offs[T * B + 1], idx[T * B * MAX_L];
    int64_t n = 0;
    offs[0] = 0;
    for (int f = 0; f < T; f++)
        for (int s = 0; s < B; s++) {
            int64_t L = (int64_t)(next() % (MAX_L + 1));
            for (int64_t l = 0; l < L; l++) {
                double u = (double)(next() >> 11) / 9007199254740992.0;
                idx[n++] = (int64_t)(u * u * (double)rows[f]) % rows[f];
            }
            offs[f * B + s + 1] = n;
        }
    assert_int_equal(loom_tensor_new(&b->ind, LOOM_DTYPE_I64, 1, &n, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&b->off, LOOM_DTYPE_I64, 1, &n_off, NULL), LOOM_OK);
    memcpy(b->ind->data, idx, (size_t)n * sizeof *idx);
    memcpy(b->off->data, offs, sizeof offs);
    int64_t gs[2] = { B, dims[0] + dims[1] };
    assert_int_equal(loom_tensor_new(&b->grad, LOOM_DTYPE_F32, 2, gs, NULL), LOOM_OK);
    for (int64_t i = 0; i < gs[0] * gs[1]; i++)
        ((float *)b->grad->data)[i] = uniform();
}

static void free_batch(batch *b)
{
    loom_tensor_free(b->ind);
    loom_tensor_free(b->off);
    loom_tensor_free(b->grad);
}

static loom_tensor *forward(loom_object *o, const batch *b)
{
    const loom_tensor *in[3] = { b->ind, b->off, NULL };
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run("fbgemm.tbe", in, 3, NULL, &out, 1, &opt) != LOOM_OK)
        fail_msg("fbgemm.tbe: %s", loom_last_error());
    return out;
}

static void backward(loom_object *o, const batch *b)
{
    const loom_tensor *in[4] = { b->grad, b->ind, b->off, NULL };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run("fbgemm.tbe_backward", in, 4, NULL, NULL, 0, &opt) != LOOM_OK)
        fail_msg("fbgemm.tbe_backward: %s", loom_last_error());
}

/* cmocka's asserts must stay on the test's thread: the worker returns its status */
typedef struct prefetch_job {
    loom_object *o;
    const batch *b;
    loom_status st;
    char err[256];
} prefetch_job;

static void *prefetch_run(void *arg)
{
    prefetch_job *j = arg;
    const loom_tensor *in[2] = { j->b->ind, j->b->off };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = j->o;
    j->st = loom_run("fbgemm.tbe_prefetch", in, 2, NULL, NULL, 0, &opt);
    if (j->st != LOOM_OK)
        snprintf(j->err, sizeof j->err, "%s", loom_last_error());
    return NULL;
}

static void prefetch(loom_object *o, const batch *b)
{
    prefetch_job j = { o, b, LOOM_OK, "" };
    prefetch_run(&j);
    if (j.st != LOOM_OK)
        fail_msg("fbgemm.tbe_prefetch: %s", j.err);
}

static loom_tensor *state_of(loom_object *o, const char *name, int t)
{
    loom_attrs *a = NULL;
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "name", name), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "table", t), LOOM_OK);
    if (loom_run("fbgemm.tbe_state", NULL, 0, a, &out, 1, &opt) != LOOM_OK)
        fail_msg("fbgemm.tbe_state %s %d: %s", name, t, loom_last_error());
    loom_attrs_free(a);
    return out;
}

enum { ORDER_NONE, ORDER_BEFORE, ORDER_PIPELINED, ORDER_THREADED };

static void run_case(double clf, const char *algo, int order, uint64_t seed)
{
    rng = seed;
    batch batches[STEPS + 1];
    for (int i = 0; i <= STEPS; i++)
        make_batch(&batches[i]);
    loom_object *plain = make_object(1.0, "lru");
    loom_object *cached = make_object(clf, algo);
    if (order == ORDER_PIPELINED || order == ORDER_THREADED)
        prefetch(cached, &batches[0]);
    for (int i = 0; i < STEPS; i++) {
        char what[128];
        snprintf(what, sizeof what, "%s clf %g order %d, step %d", algo, clf, order, i);
        if (order == ORDER_BEFORE)
            prefetch(cached, &batches[i]);
        pthread_t th;
        prefetch_job j = { cached, &batches[i + 1], LOOM_OK, "" };
        if (order == ORDER_THREADED)
            assert_int_equal(pthread_create(&th, NULL, prefetch_run, &j), 0);
        loom_tensor *want = forward(plain, &batches[i]);
        loom_tensor *got = forward(cached, &batches[i]);
        tu_assert_identical(got, want, what);
        loom_tensor_free(want);
        loom_tensor_free(got);
        if (order == ORDER_PIPELINED)
            prefetch(cached, &batches[i + 1]);
        backward(plain, &batches[i]);
        backward(cached, &batches[i]);
        if (order == ORDER_THREADED) {
            assert_int_equal(pthread_join(th, NULL), 0);
            if (j.st != LOOM_OK)
                fail_msg("%s: the prefetch thread: %s", what, j.err);
        }
    }
    for (int t = 0; t < T; t++) {
        static const char *const names[2] = { "weight", "momentum1" };
        for (int k = 0; k < 2; k++) {
            loom_tensor *want = state_of(plain, names[k], t), *got = state_of(cached, names[k], t);
            char what[128];
            snprintf(what, sizeof what, "%s clf %g order %d: %s of table %d after %d steps", algo, clf, order,
                     names[k], t, STEPS);
            tu_assert_identical(got, want, what);
            loom_tensor_free(want);
            loom_tensor_free(got);
        }
    }
    loom_object_free(cached);
    loom_object_free(plain);
    for (int i = 0; i <= STEPS; i++)
        free_batch(&batches[i]);
}

static void test_none(void **state) { (void)state; run_case(0.1, "lru", ORDER_NONE, 21); }
static void test_before(void **state) { (void)state; run_case(0.1, "lru", ORDER_BEFORE, 22); }
static void test_pipelined_lru(void **state) { (void)state; run_case(0.05, "lru", ORDER_PIPELINED, 23); }
static void test_pipelined_lfu(void **state) { (void)state; run_case(0.05, "lfu", ORDER_PIPELINED, 24); }
static void test_threaded(void **state) { (void)state; run_case(0.05, "lru", ORDER_THREADED, 25); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_none),
        cmocka_unit_test(test_before),
        cmocka_unit_test(test_pipelined_lru),
        cmocka_unit_test(test_pipelined_lfu),
        cmocka_unit_test(test_threaded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
