/* SPDX-License-Identifier: BSD-3-Clause */
/*
** device.c - memory and devices: the CPU directly, other device types
** through the providers that packs register (the CUDA pack registers one).
**
** Invariant: providers[0..n_providers) are immutable once published; the
** count is published with release order after the entry is written, so
** readers on any thread see complete entries without a lock.
** Providers are added only by a pack's commit once nothing can refuse the
** pack any more (loom__device_check_providers first: the table checks, then
** count(), the only provider function called before the provider is in),
** so a refused pack never leaves a provider behind.
*/
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* The limits are plugin.h's LOOM_MAX_DEVICE_PROVIDERS (providers of all
** packs together) and LOOM_MAX_DEVICES_PER_KIND (devices of one provider):
** a pack that would pass one is refused, naming it. */
#define MAX_PROVIDERS LOOM_MAX_DEVICE_PROVIDERS

typedef struct provider_entry {
    loom_device_provider p;       /* our copy, in the current layout */
    const char *pack;
    char **desc;                  /* describe() lines, per device, made at publish */
    int32_t count;
} provider_entry;

static provider_entry providers[MAX_PROVIDERS];
static atomic_int n_providers;

static const provider_entry *find_provider(int32_t device_type)
{
    int n = atomic_load_explicit(&n_providers, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (providers[i].p.device_type == device_type)
            return &providers[i];
    return NULL;
}

/* Every table check first, without calling the pack; count() last. */
loom_status loom__device_check_providers(const loom_device_provider *const *p, int n, int32_t *counts)
{
    int have = atomic_load_explicit(&n_providers, memory_order_relaxed);

    for (int i = 0; i < n; i++) {
        const provider_entry *e = find_provider(p[i]->device_type);
        if (e != NULL)
            return loom__fail(LOOM_ECONFLICT, "device provider %s: a provider for device type %d (%s, from pack "
                              "%s) is already registered", p[i]->name, p[i]->device_type, e->p.name, e->pack);
        for (int j = 0; j < i; j++)
            if (p[j]->device_type == p[i]->device_type)
                return loom__fail(LOOM_ECONFLICT, "device providers %s and %s of one pack are both for device "
                                  "type %d", p[j]->name, p[i]->name, p[i]->device_type);
    }
    if (have + n > MAX_PROVIDERS)
        return loom__fail(LOOM_EINVAL, "device provider %s: too many device providers (%d registered, %d more; "
                          "the limit is %d, LOOM_MAX_DEVICE_PROVIDERS)", n > 0 ? p[0]->name : "?", have, n,
                          MAX_PROVIDERS);
    for (int i = 0; i < n; i++) {
        int32_t count = p[i]->count != NULL ? p[i]->count() : 0;
        if (count < 0 || count > LOOM_MAX_DEVICES_PER_KIND)
            return loom__fail(LOOM_EINVAL, "device provider %s: count() reports %d devices; a provider has 0 to "
                              "%d (LOOM_MAX_DEVICES_PER_KIND)", p[i]->name, count, LOOM_MAX_DEVICES_PER_KIND);
        counts[i] = count;
    }
    return LOOM_OK;
}

void loom__device_add_checked(const loom_device_provider *p, const char *pack, int32_t count)
{
    int n = atomic_load_explicit(&n_providers, memory_order_relaxed);
    provider_entry *e = &providers[n];

    memset(e, 0, sizeof *e);
    memcpy(&e->p, p, p->struct_size < sizeof e->p ? p->struct_size : sizeof e->p);
    e->p.struct_size = sizeof e->p;
    e->pack = pack;
    if (count > 0 && (e->desc = calloc((size_t)count, sizeof *e->desc)) == NULL) {
        loom__log(0, "device provider %s (pack %s): out of memory describing its devices", e->p.name, pack);
    }
    for (int32_t d = 0; e->desc != NULL && d < count; d++) {
        char buf[256] = "";
        if (e->p.describe == NULL || e->p.describe(d, buf, sizeof buf) != LOOM_OK)
            snprintf(buf, sizeof buf, "%s device %d (no description)", e->p.name, d);
        buf[sizeof buf - 1] = '\0';
        e->desc[d] = loom__strdup(buf);
    }
    e->count = count;
    atomic_store_explicit(&n_providers, n + 1, memory_order_release);
}

loom_status loom__device_add_provider(const loom_device_provider *p, const char *pack)
{
    int32_t count;
    loom_status st;

    if ((st = loom__device_check_providers(&p, 1, &count)) != LOOM_OK)
        return st;
    loom__device_add_checked(p, pack, count);
    return LOOM_OK;
}

void loom__device_reset(void)
{
    int n = atomic_load(&n_providers);
    atomic_store(&n_providers, 0);
    for (int i = 0; i < n; i++) {
        for (int32_t d = 0; providers[i].desc != NULL && d < providers[i].count; d++)
            free(providers[i].desc[d]);
        free(providers[i].desc);
        providers[i].desc = NULL;
        providers[i].count = 0;
    }
}

void *loom__dev_alloc(loom_dl_device device, size_t nbytes, size_t alignment)
{
    const provider_entry *e;
    void *p = NULL;

    if (device.device_type == LOOM_DEVICE_CPU) {
        return loom__host_alloc(nbytes, alignment);   /* hostcache.c: reuses freed large blocks */
    }
    e = find_provider(device.device_type == LOOM_DEVICE_CUDA_HOST
                      || device.device_type == LOOM_DEVICE_CUDA_MANAGED ? LOOM_DEVICE_CUDA
                                                                      : device.device_type);
    if (e == NULL || e->p.alloc == NULL) {
        loom__fail(LOOM_ENODEV, "no pack provides memory for device type %d", device.device_type);
        return NULL;
    }
    if (device.device_id < 0 || device.device_id >= e->count) {
        loom__fail(LOOM_ENODEV, "%s device %d does not exist (%d present)", e->p.name,
                   device.device_id, e->count);
        return NULL;
    }
    p = e->p.alloc(device.device_id, nbytes ? nbytes : 1);
    if (p == NULL)
        loom__fail(LOOM_ENOMEM, "out of %s memory on device %d allocating %zu bytes", e->p.name,
                   device.device_id, nbytes);
    return p;
}

void loom__dev_free(loom_dl_device device, void *ptr)
{
    const provider_entry *e;

    if (ptr == NULL)
        return;
    if (device.device_type == LOOM_DEVICE_CPU) {
        loom__host_free(ptr);
        return;
    }
    e = find_provider(device.device_type == LOOM_DEVICE_CUDA_HOST
                      || device.device_type == LOOM_DEVICE_CUDA_MANAGED ? LOOM_DEVICE_CUDA
                                                                      : device.device_type);
    if (e != NULL && e->p.free != NULL)
        e->p.free(device.device_id, ptr);
}

loom_status loom__dev_copy(void *dst, loom_dl_device dst_dev, const void *src, loom_dl_device src_dev,
                         size_t nbytes)
{
    const provider_entry *e;

    if (nbytes == 0)
        return LOOM_OK;
    if (dst_dev.device_type == LOOM_DEVICE_CPU && src_dev.device_type == LOOM_DEVICE_CPU) {
        memcpy(dst, src, nbytes);
        return LOOM_OK;
    }
    e = find_provider(dst_dev.device_type != LOOM_DEVICE_CPU ? dst_dev.device_type : src_dev.device_type);
    if (e == NULL || e->p.copy == NULL)
        return loom__fail(LOOM_ENODEV, "no pack can copy between device types %d and %d",
                          src_dev.device_type, dst_dev.device_type);
    return e->p.copy(dst, dst_dev, src, src_dev, nbytes);
}

loom_status loom__dev_sync(loom_dl_device device, void *stream)
{
    const provider_entry *e;

    if (device.device_type == LOOM_DEVICE_CPU)
        return LOOM_OK;
    e = find_provider(device.device_type);
    if (e == NULL || e->p.synchronize == NULL)
        return LOOM_OK;
    return e->p.synchronize(device.device_id, stream);
}

/* ----------------------------------------------------------- enumeration */

static char cpu_desc[256];

static const char *describe_cpu(void)
{
    if (cpu_desc[0] == '\0') {
        char model[160] = "unknown CPU";
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[512];
        while (f != NULL && fgets(line, sizeof line, f) != NULL) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
                snprintf(model, sizeof model, "%s", colon + 2);
                model[strcspn(model, "\n")] = '\0';
                break;
            }
        }
        if (f != NULL)
            fclose(f);
        snprintf(cpu_desc, sizeof cpu_desc, "%s, %d physical cores, %d loom threads",
                 model, loom__physical_cores(), loom__pool_size());
    }
    return cpu_desc;
}

bool loom__device_type_present(int32_t device_type)
{
    if (device_type == LOOM_DEVICE_CPU)
        return true;
    int n = atomic_load_explicit(&n_providers, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (providers[i].p.device_type == device_type && providers[i].count > 0)
            return true;
    return false;
}

LOOM_API int64_t loom_device_count(void)
{
    int n = atomic_load_explicit(&n_providers, memory_order_acquire);
    int64_t count = 1;
    for (int i = 0; i < n; i++)
        count += providers[i].count;
    return count;
}

LOOM_API loom_status loom_device_at(int64_t index, loom_device_info *out)
{
    loom_device_info info = LOOM_DEVICE_INFO_INIT;
    int n = atomic_load_explicit(&n_providers, memory_order_acquire);

    if (index == 0) {
        info.device = loom__cpu();
        info.kind = "cpu";
        info.description = describe_cpu();
    } else {
        int64_t k = index - 1;
        int i;
        for (i = 0; i < n && k >= providers[i].count; i++)
            k -= providers[i].count;
        if (index < 0 || i == n)
            return loom__fail(LOOM_ENOENT, "loom_device_at: no device %lld", (long long)index);
        info.device = (loom_dl_device){ providers[i].p.device_type, (int32_t)k };
        info.kind = providers[i].p.name;
        info.description = providers[i].desc != NULL && providers[i].desc[k] != NULL ? providers[i].desc[k]
                                                                                   : providers[i].p.name;
    }
    return loom__struct_out(out, &info, sizeof info, "loom_device_at");
}

LOOM_API const char *loom_cpu_topology(void) { return loom__topology_text(); }
LOOM_API int32_t loom_num_threads(void) { return loom__pool_size(); }
