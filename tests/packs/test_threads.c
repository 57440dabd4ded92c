/* SPDX-License-Identifier: BSD-3-Clause */
/* test_threads.c - 8 host threads calling the same op and different ops at
** once, plus concurrent first-time init. Run under ThreadSanitizer by
** `tools/dev test` (suite 'threads'). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <cmocka.h>

#include "packs_util.h"

#define THREADS 8
#define CALLS 2000

static void *worker(void *arg)
{
    intptr_t id = (intptr_t)arg;
    float x[4] = { (float)id, 1, 2, 3 }, y[4] = { 1, 1, 1, 1 };
    const loom_op *op_double = loom_op_find("mock.double");
    intptr_t errors = 0;

    for (int i = 0; i < CALLS; i++) {
        loom_tensor *a = f32_tensor(x, 4), *b = f32_tensor(y, 4), *out = NULL;
        const loom_tensor *in[2] = { a, b };
        loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
        loom_status st;
        if (id % 2 == 0) {
            st = loom_op_run(op_double, in, 1, NULL, &out, 1, NULL);
            errors += st != LOOM_OK || ((float *)out->data)[0] != 2.0f * (float)id;
        } else {
            st = loom_run("mock.add", in, 2, NULL, &out, 1, NULL);
            errors += st != LOOM_OK || ((float *)out->data)[0] != (float)id + 1.0f;
        }
        /* The decision record is per thread. */
        loom_last_dispatch(&info);
        errors += strcmp(info.op, id % 2 == 0 ? "mock.double" : "mock.add") != 0;
        loom_tensor_free(out);
        loom_tensor_free(a);
        loom_tensor_free(b);
    }
    return (void *)errors;
}

static void eight_threads_call_ops_concurrently(void **state)
{
    pthread_t t[THREADS];
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    for (intptr_t i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, (void *)i), 0);
    for (int i = 0; i < THREADS; i++) {
        void *errors;
        pthread_join(t[i], &errors);
        assert_int_equal((intptr_t)errors, 0);
    }
}

static void *init_racer(void *arg)
{
    (void)arg;
    return (void *)(intptr_t)loom_init(NULL);
}

static void concurrent_first_init_loads_once(void **state)
{
    pthread_t t[THREADS];
    (void)state;
    loom_shutdown();
    setenv("LOOM_PLUGIN_PATH", getenv("LOOM_TEST_PACKS"), 1);
    for (intptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, init_racer, NULL);
    for (int i = 0; i < THREADS; i++) {
        void *st;
        pthread_join(t[i], &st);
        assert_int_equal((intptr_t)st, LOOM_OK);
    }
    assert_int_equal(packs_scan("mock_0good.so").result, LOOM_SCAN_LOADED);
    int loaded = 0;
    for (int64_t i = 0; i < loom_scan_count(); i++) {
        loom_scan_entry e = LOOM_SCAN_ENTRY_INIT;
        loom_scan_at(i, &e);
        loaded += strstr(e.path, "mock_0good.so") != NULL;
    }
    assert_int_equal(loaded, 1);
    unsetenv("LOOM_PLUGIN_PATH");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eight_threads_call_ops_concurrently),
        cmocka_unit_test(concurrent_first_init_loads_once),
    };
    int rc = cmocka_run_group_tests_name("threads", tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
