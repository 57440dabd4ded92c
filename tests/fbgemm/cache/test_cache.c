/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_cache.c - unit tests of the fbgemm row cache (plugins/fbgemm/cache),
** linked directly with a small fake host (fail/log/alloc/free and a serial
** parallel_for that still splits the range into chunks).
**
** What is checked: sizing and refusals; set placement against fbgemm's
** cache_slot (constants from tools/gen_fbgemm_cache_goldens.py); LRU
** eviction order, "ways stamped by this prefetch are not evictable",
** conflict misses, the LFU replacement rule, the stats; and randomised
** prefetch sequences against a reference model written here independently
** (fbgemm's warp bitonic sort simulated lane by lane, per-set loops), slot
** for slot, with every cached slot's bytes equal to its slow-tier row.
** The slow tiers are malloc'ed to their exact size so that ASan catches
** any read outside them.
**
** fbgemm_gpu's CPU build has no cache to compare with: its populate ops on
** CPU are empty functions ("NOTE: no cache for CPU mode").
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cpu.h"

#include "cache.h"

/* ------------------------------------------------------------ fake host */

static char last_error[512];

static loom_status fake_fail(loom_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

static void fake_log(int level, const char *fmt, ...)
{
    (void)level;
    (void)fmt;
}

static void *fake_alloc(loom_dl_device device, size_t nbytes, size_t alignment)
{
    void *p = NULL;
    (void)device;
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    return posix_memalign(&p, alignment, nbytes > 0 ? nbytes : 1) == 0 ? p : NULL;
}

static void fake_free(loom_dl_device device, void *ptr)
{
    (void)device;
    free(ptr);
}

static loom_status fake_parallel_for(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user)
{
    (void)ctx;
    if (grain < 1)
        grain = 1;
    for (int64_t b = 0, t = 0; b < n; b += grain, t++)
        fn(user, b, b + grain < n ? b + grain : n, (int32_t)(t % 3));
    return LOOM_OK;
}

static loom_host_api fake_host;

/* The core caps the ISA by LOOM_CPU_MAX_ISA and hands packs the result; the
** fake host does the same for the two levels these tests use. */
static uint64_t fake_cpu_features(void)
{
    const char *cap = getenv("LOOM_CPU_MAX_ISA");
    uint64_t f = LOOM_CPU_LEVEL_AVX2;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        f = 0;
#else
    f = 0;
#endif
    return cap != NULL && strcmp(cap, "sse4") == 0 ? (f & LOOM_CPU_LEVEL_SSE4) : f;
}

static void init_host(void)
{
    memset(&fake_host, 0, sizeof fake_host);
    fake_host.struct_size = sizeof fake_host;
    fake_host.fail = fake_fail;
    fake_host.log = fake_log;
    fake_host.alloc = fake_alloc;
    fake_host.free = fake_free;
    fake_host.parallel_for = fake_parallel_for;
    fake_host.cpu_features = fake_cpu_features;
    pk_cpu_init(&fake_host);
}

/* ------------------------------------------------------------- tables */

typedef struct tables {
    int32_t n;
    fbg_cache_table t[4];
    uint8_t *mem[4];
    int64_t total;
} tables;

static uint8_t row_byte(int32_t t, int64_t r, size_t j)
{
    return (uint8_t)(t * 131 + r * 7 + (int64_t)j * 13 + (r >> 8));
}

static void make_tables(tables *tb, int32_t n, const int64_t *rows, const size_t *row_bytes)
{
    tb->n = n;
    tb->total = 0;
    for (int32_t t = 0; t < n; t++) {
        size_t bytes = (size_t)rows[t] * row_bytes[t];
        tb->mem[t] = malloc(bytes > 0 ? bytes : 1);
        assert_non_null(tb->mem[t]);
        for (int64_t r = 0; r < rows[t]; r++)
            for (size_t j = 0; j < row_bytes[t]; j++)
                tb->mem[t][(size_t)r * row_bytes[t] + j] = row_byte(t, r, j);
        tb->t[t].slow = tb->mem[t];
        tb->t[t].rows = rows[t];
        tb->t[t].row_bytes = row_bytes[t];
        tb->total += rows[t];
    }
}

static void free_tables(tables *tb)
{
    for (int32_t t = 0; t < tb->n; t++)
        free(tb->mem[t]);
}

static fbg_cache *make_cache(const tables *tb, double lf, int32_t assoc, fbg_cache_algo algo)
{
    fbg_cache_config cfg = { tb->n, tb->t, lf, assoc, algo };
    fbg_cache *c = NULL;
    assert_int_equal(fbg_cache_create(&fake_host, &cfg, &c), LOOM_OK);
    assert_non_null(c);
    return c;
}

/* A single table of `rows` rows of 8 bytes. */
static void one_table(tables *tb, int64_t rows)
{
    size_t rb = 8;
    make_tables(tb, 1, &rows, &rb);
}

static int32_t where(fbg_cache *c, int64_t linear)
{
    int32_t loc = -2;
    fbg_cache_lookup(c, 1, &linear, &loc);
    return loc;
}

static void prefetch(fbg_cache *c, int64_t n, const int64_t *lin)
{
    assert_int_equal(fbg_cache_prefetch(c, n, lin), LOOM_OK);
}

/* --------------------------------------------------------------- sizing */

static void test_sizing(void **state)
{
    (void)state;
    tables tb;
    one_table(&tb, 1000);
    struct { double lf; int32_t assoc; int64_t sets; int32_t ways; } cases[] = {
        { 0.2, 32, 7, 32 },     /* floor(200) / 32 = 6.25 -> 7 */
        { 0.2, 0, 7, 32 },      /* 0 = fbgemm's default, 32 ways */
        { 1.0, 32, 32, 32 },    /* ceil(1000 / 32) */
        { 0.001, 32, 1, 32 },   /* floor(1) / 32 -> 1 */
        { 0.0001, 32, 1, 32 },  /* floor(0.1) = 0 -> at least 1 */
        { 0.5, 1, 500, 1 },
        { 0.1, 64, 2, 64 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fbg_cache *c = make_cache(&tb, cases[i].lf, cases[i].assoc, FBG_CACHE_LRU);
        assert_int_equal(fbg_cache_sets(c), cases[i].sets);
        assert_int_equal(fbg_cache_assoc(c), cases[i].ways);
        assert_true(fabs(fbg_cache_effective_load_factor(c) - (double)(cases[i].sets * cases[i].ways) / 1000.0) < 1e-12);
        fbg_cache_destroy(c);
    }
    free_tables(&tb);
}

static void expect_refusal(const fbg_cache_config *cfg, const char *needle)
{
    fbg_cache *c = (fbg_cache *)(uintptr_t)1;
    last_error[0] = '\0';
    assert_int_equal(fbg_cache_create(&fake_host, cfg, &c), LOOM_EINVAL);
    assert_null(c);
    if (strstr(last_error, needle) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", last_error, needle);
}

static void test_refusals(void **state)
{
    (void)state;
    tables tb;
    one_table(&tb, 100);
    fbg_cache_config ok = { 1, tb.t, 0.5, 32, FBG_CACHE_LRU };
    fbg_cache_config c;
    c = ok; c.load_factor = 0.0;  expect_refusal(&c, "cache_load_factor");
    c = ok; c.load_factor = 1.5;  expect_refusal(&c, "cache_load_factor");
    c = ok; c.load_factor = NAN;  expect_refusal(&c, "cache_load_factor");
    c = ok; c.assoc = 65;         expect_refusal(&c, "cache_assoc");
    c = ok; c.assoc = -1;         expect_refusal(&c, "cache_assoc");
    c = ok; c.algo = (fbg_cache_algo)2; expect_refusal(&c, "cache_algorithm");
    c = ok; c.n_tables = 0;       expect_refusal(&c, "n_tables");
    c = ok; c.tables = NULL;      expect_refusal(&c, "n_tables");
    fbg_cache_table bad = tb.t[0];
    bad.slow = NULL;
    c = ok; c.tables = &bad;      expect_refusal(&c, "table 0");
    bad = tb.t[0];
    bad.rows = -1;
    c = ok; c.tables = &bad;      expect_refusal(&c, "table 0");

    fbg_cache *cache = make_cache(&tb, 0.5, 32, FBG_CACHE_LRU);
    int64_t one = 1;
    assert_int_equal(fbg_cache_prefetch(cache, -1, &one), LOOM_EINVAL);
    assert_non_null(strstr(last_error, "prefetch"));
    assert_int_equal(fbg_cache_prefetch(cache, 3, NULL), LOOM_EINVAL);
    fbg_cache_destroy(cache);
    free_tables(&tb);
}

/* ------------------------------------------------------------ placement */

static uint32_t ref_set(int64_t h_in, uint32_t sets);

/* From tools/gen_fbgemm_cache_goldens.py (fbgemm's cache_slot formula). */
static const struct { int64_t h; uint32_t sets, set; } set_golden[] = {
    { INT64_C(0), 7u, 0u },
    { INT64_C(1), 7u, 0u },
    { INT64_C(2), 7u, 5u },
    { INT64_C(12345), 7u, 1u },
    { INT64_C(999999), 31250u, 1902u },
    { INT64_C(8388607), 31250u, 1766u },
    { INT64_C(8589934592), 1000u, 363u },
    { INT64_C(1099511627793), 65536u, 999u },
    { INT64_C(42), 1u, 0u },
    { INT64_C(7000001), 262144u, 242057u },
};

static void test_placement(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof set_golden / sizeof set_golden[0]; i++) {
        /* a cache of exactly set_golden[i].sets sets: assoc 1, lf 1,
        ** rows = sets; the probed row must exist, so the table is as large
        ** as needed and the load factor scaled (sets = floor(rows*lf)) */
        assert_int_equal(ref_set(set_golden[i].h, set_golden[i].sets), set_golden[i].set);
        int64_t rows = set_golden[i].h + 1;
        if (rows < (int64_t)set_golden[i].sets)
            rows = set_golden[i].sets;
        if (rows > 10000000)    /* too large to allocate: the hash alone is checked below */
            continue;
        tables tb;
        size_t rb = 1;
        make_tables(&tb, 1, &rows, &rb);
        double lf = ((double)set_golden[i].sets + 0.5) / (double)rows;
        fbg_cache *c = make_cache(&tb, lf > 1.0 ? 1.0 : lf, 1, FBG_CACHE_LRU);
        assert_int_equal(fbg_cache_sets(c), set_golden[i].sets);
        prefetch(c, 1, &set_golden[i].h);
        assert_int_equal(where(c, set_golden[i].h), (int32_t)set_golden[i].set);
        fbg_cache_destroy(c);
        free_tables(&tb);
    }
}

/* Two tables: linear = table start + row, and the slot gets that table's row. */
static void test_linear_and_bytes(void **state)
{
    (void)state;
    tables tb;
    int64_t rows[3] = { 10, 0, 20 };
    size_t rb[3] = { 12, 4, 5 };
    make_tables(&tb, 3, rows, rb);
    fbg_cache *c = make_cache(&tb, 1.0, 32, FBG_CACHE_LRU);
    assert_int_equal(fbg_cache_linear(c, 0, 3), 3);
    assert_int_equal(fbg_cache_linear(c, 2, 0), 10);
    assert_int_equal(fbg_cache_linear(c, 2, 19), 29);
    int64_t lin[3] = { 9, 10, 29 };
    prefetch(c, 3, lin);
    for (int i = 0; i < 3; i++) {
        int32_t loc = where(c, lin[i]);
        assert_true(loc >= 0);
        int32_t t = lin[i] < 10 ? 0 : 2;
        int64_t r = lin[i] < 10 ? lin[i] : lin[i] - 10;
        assert_memory_equal(fbg_cache_slot_row(c, loc), tb.mem[t] + (size_t)r * rb[t], rb[t]);
    }
    fbg_cache_destroy(c);
    free_tables(&tb);
}

/* ------------------------------------------------------------------ LRU */

/* One set of four ways (16 rows, lf 0.25). */
static void test_lru_eviction_order(void **state)
{
    (void)state;
    tables tb;
    one_table(&tb, 16);
    fbg_cache *c = make_cache(&tb, 0.25, 4, FBG_CACHE_LRU);
    assert_int_equal(fbg_cache_sets(c), 1);
    /* timesteps 1..4, one row each. The empty ways all carry stamp 0 and
    ** fbgemm's bitonic network is not stable: at t3 the stamps (1,2,0,0)
    ** sort to ways (3,2,0,1), so row 2 lands in way 3 and row 3 in way 2 */
    for (int64_t r = 0; r < 4; r++)
        prefetch(c, 1, &r);
    assert_int_equal(where(c, 0), 0);
    assert_int_equal(where(c, 1), 1);
    assert_int_equal(where(c, 2), 3);
    assert_int_equal(where(c, 3), 2);
    int64_t four = 4;
    prefetch(c, 1, &four);              /* t5: row 0 (t1) is the oldest */
    assert_int_equal(where(c, 0), -1);
    assert_int_equal(where(c, 4), 0);
    int64_t b[2] = { 1, 5 };
    prefetch(c, 2, b);                  /* t6: row 1 hit (now t6); row 2 (t3) is the oldest */
    assert_int_equal(where(c, 1), 1);
    assert_int_equal(where(c, 2), -1);
    assert_int_equal(where(c, 5), 3);
    assert_int_equal(where(c, 3), 2);
    int64_t d[2] = { 6, 7 };
    prefetch(c, 2, d);                  /* t7: rows 3 (t4) and 4 (t5) go, oldest first */
    assert_int_equal(where(c, 6), 2);
    assert_int_equal(where(c, 7), 0);
    assert_int_equal(where(c, 1), 1);
    assert_int_equal(where(c, 5), 3);
    fbg_cache_destroy(c);
    free_tables(&tb);
}

static void test_lru_current_not_evictable(void **state)
{
    (void)state;
    tables tb;
    one_table(&tb, 16);
    fbg_cache *c = make_cache(&tb, 0.25, 4, FBG_CACHE_LRU);
    int64_t a[7] = { 5, 0, 3, 1, 2, 4, 0 };
    prefetch(c, 7, a);                  /* 4 ways: rows 0..3 go in (ascending), 4 and 5 conflict */
    for (int64_t r = 0; r < 4; r++)
        assert_true(where(c, r) >= 0);
    assert_int_equal(where(c, 4), -1);
    assert_int_equal(where(c, 5), -1);
    fbg_cache_stats s;
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.num_calls, 1);
    assert_int_equal(s.num_requested_indices, 7);
    assert_int_equal(s.num_unique_indices, 6);
    assert_int_equal(s.num_unique_misses, 6);
    assert_int_equal(s.num_conflict_unique_misses, 2);
    assert_int_equal(s.num_conflict_misses, 2);

    int64_t b[6] = { 0, 1, 2, 3, 4, 4 };
    prefetch(c, 6, b);                  /* every way hit at t2: row 4 cannot get in */
    assert_int_equal(where(c, 4), -1);
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.num_calls, 2);
    assert_int_equal(s.num_requested_indices, 13);
    assert_int_equal(s.num_unique_indices, 11);
    assert_int_equal(s.num_unique_misses, 7);
    assert_int_equal(s.num_conflict_unique_misses, 3);
    assert_int_equal(s.num_conflict_misses, 4);

    int64_t d[1] = { 4 };
    prefetch(c, 1, d);                  /* t3: now evictable */
    assert_true(where(c, 4) >= 0);
    fbg_cache_destroy(c);
    free_tables(&tb);
}

/* Ignored values: negative and past the last row. */
static void test_ignored_values(void **state)
{
    (void)state;
    tables tb;
    one_table(&tb, 16);
    fbg_cache *c = make_cache(&tb, 1.0, 4, FBG_CACHE_LRU);
    int64_t a[5] = { -1, 16, INT64_MIN, 3, 3 };
    prefetch(c, 5, a);
    fbg_cache_stats s;
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.num_requested_indices, 5);
    assert_int_equal(s.num_unique_indices, 1);
    int32_t loc[5];
    fbg_cache_reset_stats(c);
    fbg_cache_lookup(c, 5, a, loc);
    assert_int_equal(loc[0], -1);
    assert_int_equal(loc[1], -1);
    assert_int_equal(loc[2], -1);
    assert_true(loc[3] >= 0 && loc[4] == loc[3]);
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.lookups, 2);
    assert_int_equal(s.lookup_hits, 2);
    assert_int_equal(s.num_calls, 0);
    fbg_cache_destroy(c);
    free_tables(&tb);
}

/* A lookup large enough to split itself into parallel chunks. */
static void test_large_lookup(void **state)
{
    (void)state;
    tables tb;
    int64_t rows = 50000;
    size_t rb = 3;
    make_tables(&tb, 1, &rows, &rb);
    fbg_cache *c = make_cache(&tb, 0.5, 32, FBG_CACHE_LRU);
    const int64_t n = 100003;
    int64_t *lin = malloc(sizeof(int64_t) * (size_t)n);
    int32_t *loc = malloc(sizeof(int32_t) * (size_t)n), *one = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
        lin[i] = i % 7 == 3 ? -1 : (i * 7919) % rows;
    prefetch(c, n, lin);
    fbg_cache_reset_stats(c);
    fbg_cache_lookup(c, n, lin, loc);
    int64_t valid = 0, hits = 0;
    for (int64_t i = 0; i < n; i++) {
        fbg_cache_lookup(c, 1, &lin[i], &one[i]);   /* the unsplit path, one at a time */
        assert_int_equal(loc[i], one[i]);
        valid += lin[i] >= 0;
        hits += loc[i] >= 0;
        if (loc[i] >= 0)
            assert_memory_equal(fbg_cache_slot_row(c, loc[i]), tb.mem[0] + (size_t)lin[i] * rb, rb);
    }
    fbg_cache_stats s;
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.lookups, 2 * valid);
    assert_int_equal(s.lookup_hits, 2 * hits);
    assert_true(hits > 0);
    free(lin);
    free(loc);
    free(one);
    fbg_cache_destroy(c);
    free_tables(&tb);
}

/* ------------------------------------------------------------------ LFU */

static void test_lfu_rule(void **state)
{
    (void)state;
    tables tb;
    one_table(&tb, 8);
    fbg_cache *c = make_cache(&tb, 0.25, 2, FBG_CACHE_LFU);     /* one set, two ways */
    assert_int_equal(fbg_cache_sets(c), 1);
    int64_t a[4] = { 0, 0, 0, 1 };
    prefetch(c, 4, a);                  /* counts 0:3 1:1, both into empty ways */
    assert_true(where(c, 0) >= 0 && where(c, 1) >= 0);
    int32_t way_of_1 = where(c, 1);
    int64_t b[2] = { 2, 2 };
    prefetch(c, 2, b);                  /* 2:2 >= 1:1 -> replaces row 1 */
    assert_int_equal(where(c, 1), -1);
    assert_int_equal(where(c, 2), way_of_1);
    int64_t three = 3;
    prefetch(c, 1, &three);             /* 3:1 < 2:2 -> stays out */
    assert_int_equal(where(c, 3), -1);
    prefetch(c, 1, &three);             /* 3:2 >= 2:2 -> equal count replaces */
    assert_int_equal(where(c, 3), way_of_1);
    assert_true(where(c, 0) >= 0);
    /* most frequent misses first: 5 (x3) and 4 (x2) against ways 0:3, 3:2 */
    int64_t d[5] = { 4, 5, 5, 4, 5 };
    prefetch(c, 5, d);                  /* 5:3 vs way 3:2 -> in; 4:2 vs way 0:3 -> out */
    assert_int_equal(where(c, 5), way_of_1);
    assert_int_equal(where(c, 4), -1);
    assert_true(where(c, 0) >= 0);
    fbg_cache_stats s;
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.num_calls, 5);
    assert_int_equal(s.num_unique_misses, 2 + 1 + 1 + 1 + 2);
    assert_int_equal(s.num_conflict_unique_misses, 0 + 0 + 1 + 0 + 1);
    assert_int_equal(s.num_conflict_misses, 0 + 0 + 1 + 0 + 2);
    fbg_cache_destroy(c);
    free_tables(&tb);
}

/* -------------------------------------------------------- reference model */

typedef struct ref_cache {
    int64_t total;
    uint32_t sets;
    int32_t assoc;
    fbg_cache_algo algo;
    int64_t *tags, *stamp, *freq;
    int64_t now;
    fbg_cache_stats s;
} ref_cache;

static uint32_t ref_set(int64_t h_in, uint32_t sets)
{
    uint64_t h = (uint64_t)h_in;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (uint32_t)(h % sets);
}

/* fbgemm's BitonicSort<int64_t, uint32_t, 1, Comparator> simulated lane by
** lane: every lane reads its partner's (key, value) from before the stage,
** as shfl_xor does, and takes it when `small ? k > other : k < other`. */
static void ref_warp_sort(int64_t *k, int32_t *v, int n)
{
    int64_t ok[64];
    int32_t ov[64];
    for (int L = 1; L < n; L *= 2) {
        for (int stage = 0;; stage++) {
            int stride = stage == 0 ? 0 : L >> stage;
            if (stage > 0 && stride == 0)
                break;
            memcpy(ok, k, sizeof(int64_t) * (size_t)n);
            memcpy(ov, v, sizeof(int32_t) * (size_t)n);
            for (int lane = 0; lane < n; lane++) {
                int other = stage == 0 ? lane ^ (2 * L - 1) : lane ^ stride;
                int small = stage == 0 ? !(lane & L) : !(lane & stride);
                int s = small ? ok[lane] > ok[other] : ok[lane] < ok[other];
                if (s) {
                    k[lane] = ok[other];
                    v[lane] = ov[other];
                }
            }
        }
    }
}

static void ref_order(const int64_t *cost, int32_t assoc, int32_t *order, int64_t *sorted)
{
    int n = 1;
    while (n < assoc)
        n *= 2;
    int64_t k[64];
    int32_t v[64];
    for (int i = 0; i < n; i++) {
        k[i] = i < assoc ? cost[i] : INT64_MAX;
        v[i] = i;
    }
    ref_warp_sort(k, v, n);
    for (int i = 0; i < assoc; i++) {
        order[i] = v[i];
        sorted[i] = k[i];
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int ref_way(const ref_cache *r, int64_t v)
{
    uint32_t s = ref_set(v, r->sets);
    for (int32_t w = 0; w < r->assoc; w++)
        if (r->tags[(size_t)s * r->assoc + w] == v)
            return w;
    return -1;
}

static void ref_prefetch(ref_cache *r, int64_t n, const int64_t *lin)
{
    r->now++;
    r->s.num_calls++;
    r->s.num_requested_indices += n;
    int64_t *u = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t *cnt = malloc(sizeof(int64_t) * (size_t)(n + 1));
    int64_t m = 0, nu = 0;
    for (int64_t i = 0; i < n; i++)
        if (lin[i] >= 0 && lin[i] < r->total)
            u[m++] = lin[i];
    qsort(u, (size_t)m, sizeof *u, cmp_i64);
    for (int64_t i = 0; i < m; i++) {
        if (nu > 0 && u[nu - 1] == u[i]) {
            cnt[nu - 1]++;
        } else {
            u[nu] = u[i];
            cnt[nu++] = 1;
        }
    }
    r->s.num_unique_indices += nu;
    if (r->algo == FBG_CACHE_LFU)
        for (int64_t i = 0; i < nu; i++)
            r->freq[u[i]] += cnt[i];

    int64_t *miss = malloc(sizeof(int64_t) * (size_t)(nu + 1));
    for (uint32_t s = 0; s < r->sets; s++) {
        int64_t *tags = r->tags + (size_t)s * r->assoc;
        int64_t *stamp = r->stamp + (size_t)s * r->assoc;
        int64_t sl = 0;
        for (int64_t i = 0; i < nu; i++) {
            if (ref_set(u[i], r->sets) != s)
                continue;
            int w = ref_way(r, u[i]);
            if (w >= 0) {
                if (r->algo == FBG_CACHE_LRU)
                    stamp[w] = r->now;
            } else {
                miss[sl++] = u[i];
            }
        }
        if (sl == 0)
            continue;
        r->s.num_unique_misses += sl;
        int64_t cost[64], sorted[64];
        int32_t order[64];
        if (r->algo == FBG_CACHE_LFU) {
            /* stable insertion sort by descending count */
            for (int64_t i = 1; i < sl; i++) {
                int64_t x = miss[i], j = i;
                while (j > 0 && r->freq[miss[j - 1]] < r->freq[x]) {
                    miss[j] = miss[j - 1];
                    j--;
                }
                miss[j] = x;
            }
            for (int32_t w = 0; w < r->assoc; w++)
                cost[w] = tags[w] < 0 ? -1 : r->freq[tags[w]];
        } else {
            for (int32_t w = 0; w < r->assoc; w++)
                cost[w] = stamp[w];
        }
        ref_order(cost, r->assoc, order, sorted);
        int64_t inserted = 0;
        for (int64_t l = 0; l < sl && l < r->assoc; l++) {
            if (r->algo == FBG_CACHE_LRU ? sorted[l] == r->now : sorted[l] > r->freq[miss[l]])
                break;
            tags[order[l]] = miss[l];
            stamp[order[l]] = r->now;
            inserted++;
        }
        r->s.num_conflict_unique_misses += sl - inserted;
    }
    for (int64_t i = 0; i < n; i++)
        if (lin[i] >= 0 && lin[i] < r->total && ref_way(r, lin[i]) < 0)
            r->s.num_conflict_misses++;
    free(miss);
    free(u);
    free(cnt);
}

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Skewed indices (a few hot rows), some ignored values. */
static int64_t draw(int64_t total)
{
    uint64_t x = rng_next();
    if (x % 53 == 0)
        return -1;
    if (x % 97 == 0)
        return total + (int64_t)(x % 5);
    double f = (double)(rng_next() >> 11) / 9007199254740992.0;
    return (int64_t)(f * f * f * (double)total) % total;
}

static void run_random(fbg_cache_algo algo, double lf, int32_t assoc, uint64_t seed)
{
    tables tb;
    int64_t rows[3] = { 500, 800, 700 };
    size_t rb[3] = { 12, 7, 16 };
    make_tables(&tb, 3, rows, rb);
    fbg_cache *c = make_cache(&tb, lf, assoc, algo);
    ref_cache r = { .total = tb.total, .sets = (uint32_t)fbg_cache_sets(c), .assoc = fbg_cache_assoc(c),
                    .algo = algo };
    size_t slots = (size_t)r.sets * (size_t)r.assoc;
    r.tags = malloc(slots * sizeof *r.tags);
    r.stamp = calloc(slots, sizeof *r.stamp);
    r.freq = calloc((size_t)tb.total, sizeof *r.freq);
    for (size_t i = 0; i < slots; i++)
        r.tags[i] = -1;
    int64_t *all = malloc(sizeof(int64_t) * (size_t)tb.total);
    int32_t *loc = malloc(sizeof(int32_t) * (size_t)tb.total);
    for (int64_t i = 0; i < tb.total; i++)
        all[i] = i;

    rng_state = seed;
    int64_t batch[400];
    for (int step = 0; step < 25; step++) {
        int64_t n = 1 + (int64_t)(rng_next() % 400);
        for (int64_t i = 0; i < n; i++)
            batch[i] = draw(tb.total);
        prefetch(c, n, batch);
        ref_prefetch(&r, n, batch);

        fbg_cache_lookup(c, tb.total, all, loc);
        for (int64_t v = 0; v < tb.total; v++) {
            int w = ref_way(&r, v);
            int32_t want = w < 0 ? -1 : (int32_t)(ref_set(v, r.sets) * (uint32_t)r.assoc + (uint32_t)w);
            if (loc[v] != want)
                fail_msg("step %d: row %lld at slot %d, reference %d", step, (long long)v, loc[v], want);
            if (loc[v] >= 0) {
                int32_t t = v < 500 ? 0 : v < 1300 ? 1 : 2;
                int64_t row = v - (t == 0 ? 0 : t == 1 ? 500 : 1300);
                assert_memory_equal(fbg_cache_slot_row(c, loc[v]), tb.mem[t] + (size_t)row * rb[t], rb[t]);
            }
        }
        fbg_cache_stats s;
        fbg_cache_get_stats(c, &s);
        assert_int_equal(s.num_calls, r.s.num_calls);
        assert_int_equal(s.num_requested_indices, r.s.num_requested_indices);
        assert_int_equal(s.num_unique_indices, r.s.num_unique_indices);
        assert_int_equal(s.num_unique_misses, r.s.num_unique_misses);
        assert_int_equal(s.num_conflict_unique_misses, r.s.num_conflict_unique_misses);
        assert_int_equal(s.num_conflict_misses, r.s.num_conflict_misses);
    }
    fbg_cache_stats s;
    fbg_cache_get_stats(c, &s);
    assert_int_equal(s.lookups, 25 * tb.total);
    int64_t hits = 0;
    for (int64_t v = 0; v < tb.total; v++)
        hits += loc[v] >= 0;
    assert_true(s.lookup_hits >= hits);
    free(all);
    free(loc);
    free(r.tags);
    free(r.stamp);
    free(r.freq);
    fbg_cache_destroy(c);
    free_tables(&tb);
}

static void test_random_lru_32(void **state) { (void)state; run_random(FBG_CACHE_LRU, 0.1, 32, 0x9e3779b97f4a7c15ull); }
static void test_random_lru_4(void **state) { (void)state; run_random(FBG_CACHE_LRU, 0.3, 4, 12345); }
static void test_random_lru_3(void **state) { (void)state; run_random(FBG_CACHE_LRU, 0.05, 3, 777); }
static void test_random_lru_1(void **state) { (void)state; run_random(FBG_CACHE_LRU, 0.5, 1, 4242); }
static void test_random_lru_64(void **state) { (void)state; run_random(FBG_CACHE_LRU, 0.2, 64, 99); }
static void test_random_lfu_32(void **state) { (void)state; run_random(FBG_CACHE_LFU, 0.1, 32, 31337); }
static void test_random_lfu_5(void **state) { (void)state; run_random(FBG_CACHE_LFU, 0.2, 5, 2718); }

/* The lane simulation itself: it sorts, and leaves equal costs in place
** (so a fresh set fills ways 0, 1, 2, ... as fbgemm's does). */
static void test_warp_sort_model(void **state)
{
    (void)state;
    rng_state = 1;
    for (int trial = 0; trial < 2000; trial++) {
        int64_t k[32];
        int32_t v[32];
        for (int i = 0; i < 32; i++) {
            k[i] = (int64_t)(rng_next() % (uint64_t)(trial % 7 + 1));
            v[i] = i;
        }
        ref_warp_sort(k, v, 32);
        for (int i = 1; i < 32; i++)
            assert_true(k[i - 1] <= k[i]);
    }
    int64_t k[32] = { 0 };
    int32_t v[32];
    for (int i = 0; i < 32; i++)
        v[i] = i;
    ref_warp_sort(k, v, 32);
    for (int i = 0; i < 32; i++)
        assert_int_equal(v[i], i);
}

int main(void)
{
    init_host();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizing),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_linear_and_bytes),
        cmocka_unit_test(test_lru_eviction_order),
        cmocka_unit_test(test_lru_current_not_evictable),
        cmocka_unit_test(test_ignored_values),
        cmocka_unit_test(test_large_lookup),
        cmocka_unit_test(test_lfu_rule),
        cmocka_unit_test(test_warp_sort_model),
        cmocka_unit_test(test_random_lru_32),
        cmocka_unit_test(test_random_lru_4),
        cmocka_unit_test(test_random_lru_3),
        cmocka_unit_test(test_random_lru_1),
        cmocka_unit_test(test_random_lru_64),
        cmocka_unit_test(test_random_lfu_32),
        cmocka_unit_test(test_random_lfu_5),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
