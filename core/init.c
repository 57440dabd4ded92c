/* SPDX-License-Identifier: BSD-3-Clause */
/*
** init.c - loom_init and loom_shutdown.
**
** loom_init is idempotent and thread-safe: the first caller configures and
** loads under loom__registry_lock; later callers see loom__initialized and
** return at once. Dispatch checks the flag with one acquire load.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

atomic_int loom__initialized;
atomic_uint loom__epoch;

static char **config_lines;
static int64_t n_config_lines;

LOOM_API const char *loom_version(void) { return LOOM_VERSION_STRING; }
LOOM_API uint32_t loom_abi_version(void) { return (uint32_t)LOOM_ABI_MAJOR << 16 | LOOM_ABI_MINOR; }

/* Everything loom_init set up, undone (the registry lock held). */
static void teardown(void)
{
    atomic_store(&loom__initialized, 0);
    atomic_fetch_add(&loom__epoch, 1);   /* every handle of this init is stale from here on */
    loom__op_handles_reset();
    loom__plans_release_all();
    loom__objects_destroy_all();
    loom__loader_reset();           /* fini() of every pack, newest first */
    loom__registry_reset();
    loom__interfaces_reset();
    loom__device_reset();
    loom__loader_unload();
    loom__pool_stop();
    for (int64_t i = 0; i < n_config_lines; i++)
        free(config_lines[i]);
    free(config_lines);
    config_lines = NULL;
    n_config_lines = 0;
    loom__config_free(&loom__cfg);
    loom__host_cache_trim();
}

LOOM_API loom_status loom_init(const loom_init_options *options)
{
    loom_init_options opts = LOOM_INIT_OPTIONS_INIT;
    loom_status st;

    if (atomic_load_explicit(&loom__initialized, memory_order_acquire))
        return LOOM_OK;
    if (options != NULL) {
        if (options->struct_size < sizeof(uint32_t) || options->struct_size > sizeof opts)
            return loom__fail(LOOM_EINVAL, "loom_init: options.struct_size %u is not set or too new "
                              "(use LOOM_INIT_OPTIONS_INIT)", options->struct_size);
        memcpy(&opts, options, options->struct_size);
    }
    pthread_mutex_lock(&loom__registry_lock);
    if (atomic_load(&loom__initialized)) {
        pthread_mutex_unlock(&loom__registry_lock);
        return LOOM_OK;
    }
    if ((st = loom__config_load(&loom__cfg, &opts)) != LOOM_OK)
        goto fail;
    loom__cpu_init(loom__cfg.cpu_max_isa);
    loom__host_cache_configure(loom__cfg.alloc_cache_set, loom__cfg.alloc_cache);
    if ((st = loom__pool_start(loom__cfg.num_threads)) != LOOM_OK)
        goto fail;
    loom__log(1, "loom %s (ABI %d.%d), %d threads", LOOM_VERSION_STRING, LOOM_ABI_MAJOR, LOOM_ABI_MINOR,
              loom__pool_size());
    /* A new epoch before any pack runs: handles packs make during their
    ** init (host->op_find) belong to this init. */
    atomic_fetch_add(&loom__epoch, 1);
    /* An empty registry first, so lookups work even with no pack found. */
    if ((st = loom__registry_republish()) != LOOM_OK)
        goto fail;
    loom__loader_scan();
    loom__config_lines(&config_lines, &n_config_lines);
    /* LOOM_BACKENDS mistakes are warnings, or under LOOM_STRICT=1 a failed
    ** init that leaves nothing loaded */
    if ((st = loom__policy_check()) != LOOM_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", loom_last_error());
        teardown();
        loom__fail(st, "%s", msg);
        goto fail;
    }
    atomic_store_explicit(&loom__initialized, 1, memory_order_release);
    pthread_mutex_unlock(&loom__registry_lock);
    return LOOM_OK;
fail:
    pthread_mutex_unlock(&loom__registry_lock);
    return st;
}

LOOM_API void loom_shutdown(void)
{
    pthread_mutex_lock(&loom__registry_lock);
    if (!atomic_load(&loom__initialized)) {
        pthread_mutex_unlock(&loom__registry_lock);
        return;
    }
    teardown();
    pthread_mutex_unlock(&loom__registry_lock);
}

LOOM_API int64_t loom_config_count(void) { return n_config_lines; }

LOOM_API const char *loom_config_at(int64_t index)
{
    return index >= 0 && index < n_config_lines ? config_lines[index] : NULL;
}
