/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_hostcache.c - the CPU block cache (hostcache.c): freed large blocks
** come back for requests of their size class, the cap holds, small and
** over-aligned blocks are never cached, loom_trim and a 0 setting empty it,
** every class covers its request with at most 25% slack, and many threads
** allocating and freeing at once keep the lists sound (suite 'threads').
*/
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "internal.h"

static uint64_t cached(void)
{
    uint64_t bytes, hits, misses;
    loom__host_cache_stats(&bytes, &hits, &misses);
    return bytes;
}

static void freed_blocks_are_reused_by_class(void **state)
{
    (void)state;
    loom__host_cache_configure(true, (uint64_t)64 << 20);
    char *a = loom__host_alloc((size_t)1 << 20, 64);
    assert_non_null(a);
    assert_int_equal((uintptr_t)a % 64, 0);
    memset(a, 1, (size_t)1 << 20);
    loom__host_free(a);
    assert_true(cached() >= ((uint64_t)1 << 20));
    /* a slightly smaller request of the same class gets the same block back */
    char *b = loom__host_alloc(((size_t)1 << 20) - 1000, 64);
    assert_ptr_equal(a, b);
    assert_int_equal(cached(), 0);
    loom__host_free(b);
    loom__host_cache_trim();
    assert_int_equal(cached(), 0);
}

static void the_cap_holds_and_zero_turns_it_off(void **state)
{
    (void)state;
    loom__host_cache_configure(true, (uint64_t)2 << 20);
    void *p[3];
    for (int i = 0; i < 3; i++)
        p[i] = loom__host_alloc((size_t)1 << 20, 64);
    for (int i = 0; i < 3; i++)
        loom__host_free(p[i]);
    assert_int_equal(cached(), (uint64_t)2 << 20);   /* the third went back to the system */
    loom__host_cache_trim();
    loom__host_cache_configure(true, 0);
    void *q = loom__host_alloc((size_t)1 << 20, 64);
    loom__host_free(q);
    assert_int_equal(cached(), 0);
}

static void small_and_over_aligned_blocks_are_not_cached(void **state)
{
    (void)state;
    loom__host_cache_configure(true, (uint64_t)64 << 20);
    void *s = loom__host_alloc(1000, 64);
    void *g = loom__host_alloc((size_t)1 << 20, 4096);
    assert_int_equal((uintptr_t)g % 4096, 0);
    memset(g, 0, (size_t)1 << 20);
    loom__host_free(s);
    loom__host_free(g);
    assert_int_equal(cached(), 0);
    void *z = loom__host_alloc(0, 64);   /* 0 bytes: a valid block */
    assert_non_null(z);
    loom__host_free(z);
    loom__host_cache_trim();
}

static void classes_cover_requests_within_a_quarter(void **state)
{
    (void)state;
    loom__host_cache_configure(true, (uint64_t)1 << 30);
    for (size_t n = ((size_t)64 << 10) + 1; n < ((size_t)64 << 20); n = n * 9 / 7 + 13) {
        /* allocate, fill to the request, free, and get it back for the same request */
        char *a = loom__host_alloc(n, 64);
        memset(a, 7, n);
        loom__host_free(a);
        char *b = loom__host_alloc(n, 64);
        assert_ptr_equal(a, b);
        loom__host_free(b);
    }
    uint64_t bytes, hits, misses;
    loom__host_cache_stats(&bytes, &hits, &misses);
    assert_true(hits > 0);
    loom__host_cache_trim();
}

static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        size_t n = ((size_t)64 << 10) + (size_t)(i % 7) * 40000;
        char *p = loom__host_alloc(n, 64);
        p[0] = 1;
        p[n - 1] = 2;
        loom__host_free(p);
    }
    return NULL;
}

static void many_threads_share_the_cache(void **state)
{
    pthread_t t[4];
    (void)state;
    loom__host_cache_configure(true, (uint64_t)8 << 20);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_true(cached() <= ((uint64_t)8 << 20));
    loom__host_cache_trim();
    assert_int_equal(cached(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(freed_blocks_are_reused_by_class),
        cmocka_unit_test(the_cap_holds_and_zero_turns_it_off),
        cmocka_unit_test(small_and_over_aligned_blocks_are_not_cached),
        cmocka_unit_test(classes_cover_requests_within_a_quarter),
        cmocka_unit_test(many_threads_share_the_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
