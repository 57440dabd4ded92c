/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cache.c - creation, sizing, accessors and statistics of the row cache.
**
** Sizing is fbgemm's _apply_cache_state without the free-memory clamp:
**   sets = ceil(floor(total_rows * load_factor) / assoc), at least 1,
**   effective load factor = sets * assoc / total_rows.
** A slot location is an int32 (fbgemm's lxu_cache_locations), so
** sets * assoc must stay below 2^31; LFU also needs sets < 2^24 - 1 as in
** fbgemm. All memory is taken from host->alloc on the CPU and released by
** fbg_cache_destroy.
*/
#include <math.h>
#include <string.h>

#include "cache_internal.h"

static const loom_dl_device cpu_dev = { LOOM_DEVICE_CPU, 0 };

static void *alloc_zero(const loom_host_api *host, size_t n, size_t size)
{
    if (n != 0 && size > SIZE_MAX / n)
        return NULL;
    size_t bytes = n * size > 0 ? n * size : 1;
    void *p = host->alloc(cpu_dev, bytes, 64);
    if (p != NULL)
        memset(p, 0, bytes);
    return p;
}

static void release(const loom_host_api *host, void *p)
{
    if (p != NULL)
        host->free(cpu_dev, p);
}

static loom_status check_config(const loom_host_api *host, const fbg_cache_config *c,
                              int64_t *total_rows, size_t *slot_bytes)
{
    if (c->n_tables <= 0 || c->tables == NULL)
        return host->fail(LOOM_EINVAL, "fbgemm cache: expected n_tables >= 1 and a table list, got %d tables",
                          (int)c->n_tables);
    if (!(c->load_factor > 0.0 && c->load_factor <= 1.0))
        return host->fail(LOOM_EINVAL, "fbgemm cache: cache_load_factor must be in (0, 1], got %g",
                          c->load_factor);
    if (c->assoc < 0 || c->assoc > FBG_CACHE_MAX_ASSOC)
        return host->fail(LOOM_EINVAL, "fbgemm cache: cache_assoc must be in [1, %d] (0 = %d), got %d",
                          FBG_CACHE_MAX_ASSOC, FBG_CACHE_DEFAULT_ASSOC, (int)c->assoc);
    if (c->algo != FBG_CACHE_LRU && c->algo != FBG_CACHE_LFU)
        return host->fail(LOOM_EINVAL, "fbgemm cache: cache_algorithm must be 0 (LRU) or 1 (LFU), got %d",
                          (int)c->algo);
    int64_t total = 0;
    size_t widest = 0;
    for (int32_t t = 0; t < c->n_tables; t++) {
        const fbg_cache_table *tb = &c->tables[t];
        if (tb->rows < 0 || (tb->rows > 0 && (tb->slow == NULL || tb->row_bytes == 0)))
            return host->fail(LOOM_EINVAL,
                              "fbgemm cache: table %d needs rows >= 0 and, with rows, a slow tier and row_bytes > 0 "
                              "(got rows %lld, row_bytes %zu)", (int)t, (long long)tb->rows, tb->row_bytes);
        if (tb->rows > INT64_MAX / 2 - total)
            return host->fail(LOOM_EINVAL, "fbgemm cache: too many rows in total");
        total += tb->rows;
        if (tb->row_bytes > widest)
            widest = tb->row_bytes;
    }
    if (widest == 0)
        return host->fail(LOOM_EINVAL, "fbgemm cache: every table has row_bytes 0");
    *total_rows = total;
    *slot_bytes = widest;
    return LOOM_OK;
}

/* Bits needed to hold every value in [0, n). */
static int bits_for(uint64_t n)
{
    int b = 0;
    if (n <= 1)
        return 0;
    while (b < 64 && (n - 1) >> b != 0)
        b++;
    return b;
}

loom_status fbg_cache_create(const loom_host_api *host, const fbg_cache_config *config, fbg_cache **out)
{
    if (out == NULL || config == NULL)
        return host->fail(LOOM_EINVAL, "fbgemm cache: NULL config or result pointer");
    *out = NULL;
    int64_t total = 0;
    size_t slot_bytes = 0;
    loom_status st = check_config(host, config, &total, &slot_bytes);
    if (st != LOOM_OK)
        return st;

    int32_t assoc = config->assoc == 0 ? FBG_CACHE_DEFAULT_ASSOC : config->assoc;
    double wanted = floor((double)total * config->load_factor);
    double sets_d = ceil(wanted / assoc);
    if (sets_d < 1.0)
        sets_d = 1.0;
    if (sets_d * assoc > (double)INT32_MAX)
        return host->fail(LOOM_EINVAL, "fbgemm cache: %.0f sets of %d ways exceed the 2^31 slot locations fbgemm allows",
                          sets_d, (int)assoc);
    if (config->algo == FBG_CACHE_LFU && sets_d >= (double)((1 << 24) - 1))
        return host->fail(LOOM_EINVAL, "fbgemm cache: LFU needs fewer than 2^24-1 sets, got %.0f", sets_d);
    uint32_t sets = (uint32_t)sets_d;
    size_t slots = (size_t)sets * (size_t)assoc;

    fbg_cache *c = alloc_zero(host, 1, sizeof *c);
    if (c == NULL)
        return host->fail(LOOM_ENOMEM, "fbgemm cache: out of memory");
    c->host = host;
    c->n_tables = config->n_tables;
    c->total_rows = total;
    c->slot_bytes = slot_bytes;
    c->sets = sets;
    c->assoc = assoc;
    c->algo = config->algo;
    c->find = fbg_cache__pick_find();
    c->avx2 = fbg_cache__have_avx2();
    int set_bits = bits_for(sets);
    int row_bits = bits_for((uint64_t)total);
    c->key_shift = row_bits;
    c->packed_keys = set_bits + row_bits <= 64;
    atomic_init(&c->lookups, 0);
    atomic_init(&c->lookup_hits, 0);

    c->tables = alloc_zero(host, (size_t)config->n_tables, sizeof *c->tables);
    c->row_start = alloc_zero(host, (size_t)config->n_tables + 1, sizeof *c->row_start);
    c->tags = alloc_zero(host, slots, sizeof *c->tags);
    c->rows = alloc_zero(host, slots, slot_bytes);
    if (config->algo == FBG_CACHE_LRU)
        c->lru_time = alloc_zero(host, slots, sizeof *c->lru_time);
    else
        c->lfu_count = alloc_zero(host, (size_t)total + 1, sizeof *c->lfu_count);
    if (c->tables == NULL || c->row_start == NULL || c->tags == NULL || c->rows == NULL ||
        (c->lru_time == NULL && c->lfu_count == NULL)) {
        size_t mb = slots * slot_bytes >> 20;
        fbg_cache_destroy(c);
        return host->fail(LOOM_ENOMEM, "fbgemm cache: out of memory for %u sets x %d ways of %zu bytes (%zu MiB)",
                          sets, (int)assoc, slot_bytes, mb);
    }
    memcpy(c->tables, config->tables, (size_t)config->n_tables * sizeof *c->tables);
    for (int32_t t = 0; t < config->n_tables; t++)
        c->row_start[t + 1] = c->row_start[t] + config->tables[t].rows;
    for (size_t i = 0; i < slots; i++)
        c->tags[i] = FBG_CACHE_EMPTY;
    *out = c;
    return LOOM_OK;
}

void fbg_cache_destroy(fbg_cache *c)
{
    if (c == NULL)
        return;
    const loom_host_api *host = c->host;
    release(host, c->tables);
    release(host, c->row_start);
    release(host, c->tags);
    release(host, c->rows);
    release(host, c->lru_time);
    release(host, c->lfu_count);
    release(host, c->keys);
    release(host, c->keys_tmp);
    release(host, c->counts);
    release(host, c->seg);
    release(host, c);
}

int64_t fbg_cache_linear(const fbg_cache *c, int32_t table, int64_t row)
{
    return c->row_start[table] + row;
}

int64_t fbg_cache_sets(const fbg_cache *c) { return c->sets; }

int32_t fbg_cache_assoc(const fbg_cache *c) { return c->assoc; }

double fbg_cache_effective_load_factor(const fbg_cache *c)
{
    return c->total_rows > 0 ? (double)c->sets * c->assoc / (double)c->total_rows : 1.0;
}

const uint8_t *fbg_cache_slot_row(const fbg_cache *c, int32_t slot)
{
    return c->rows + (size_t)slot * c->slot_bytes;
}

void fbg_cache_get_stats(const fbg_cache *c, fbg_cache_stats *stats)
{
    *stats = c->pstats;
    stats->lookups = atomic_load(&((fbg_cache *)c)->lookups);
    stats->lookup_hits = atomic_load(&((fbg_cache *)c)->lookup_hits);
}

void fbg_cache_reset_stats(fbg_cache *c)
{
    memset(&c->pstats, 0, sizeof c->pstats);
    atomic_store(&c->lookups, 0);
    atomic_store(&c->lookup_hits, 0);
}
