/* SPDX-License-Identifier: BSD-3-Clause */
/*
** interfaces.c - versioned vtables that packs offer each other (a language
** model for a decoder, environments for rl), registered in a pack's init
** (host->register_interface) and found by name and version
** (host->get_extension).
**
** Registration is part of the pack's transaction: entries are staged per
** registrar and published only when the registry commits the pack, so a
** refused pack never leaves a vtable pointing into its unloaded library.
** A name is offered by one pack: a second offer of the same name and
** version is refused, naming both packs. Look-ups take a mutex: they happen
** at init or object create, not per call.
*/
#include <stdlib.h>
#include <string.h>

#include "registry.h"

typedef struct iface {
    char *name;
    uint32_t version;
    const void *vtable;
    const void *reg;          /* staging: the registrar; published: NULL */
    char *pack;               /* published: the offering pack's name */
} iface;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static iface *items;
static int64_t n_items, cap_items;

static iface *find(const char *name, uint32_t version, const void *reg)
{
    for (int64_t i = 0; i < n_items; i++)
        if (items[i].reg == reg && items[i].version == version && strcmp(items[i].name, name) == 0)
            return &items[i];
    return NULL;
}

loom_status loom__host_register_interface(loom_registrar *reg, const char *name, uint32_t version,
                                        const void *vtable)
{
    loom_status st = LOOM_OK;

    if (reg == NULL)
        return loom__fail(LOOM_EINVAL, "register_interface: registrar is NULL (called outside init?)");
    if (name == NULL || name[0] == '\0' || strlen(name) >= LOOM_MAX_NAME || vtable == NULL)
        return loom__fail(LOOM_EINVAL, "register_interface: a name (under LOOM_MAX_NAME bytes) and a vtable "
                          "are required");
    if (*(const uint32_t *)vtable < sizeof(uint32_t))
        return loom__fail(LOOM_EINVAL, "register_interface %s v%u: the vtable must start with its struct_size",
                          name, version);
    pthread_mutex_lock(&lock);
    const iface *known = find(name, version, NULL);
    if (known != NULL) {
        st = loom__fail(LOOM_ECONFLICT, "interface %s v%u is already offered by pack %s", name, version, known->pack);
    } else if (find(name, version, reg) != NULL) {
        st = loom__fail(LOOM_ECONFLICT, "interface %s v%u registered twice by one pack", name, version);
    } else if (n_items == cap_items) {
        int64_t cap = cap_items ? 2 * cap_items : 16;
        iface *grown = realloc(items, (size_t)cap * sizeof *grown);
        if (grown == NULL)
            st = loom__fail(LOOM_ENOMEM, "out of memory");
        else {
            items = grown;
            cap_items = cap;
        }
    }
    if (st == LOOM_OK) {
        items[n_items] = (iface){ loom__strdup(name), version, vtable, reg, NULL };
        if (items[n_items].name == NULL)
            st = loom__fail(LOOM_ENOMEM, "out of memory");
        else
            n_items++;
    }
    pthread_mutex_unlock(&lock);
    return st;
}

/* Drop (publish = false) or publish the entries staged by reg. */
static void settle(const void *reg, const char *pack, bool publish)
{
    pthread_mutex_lock(&lock);
    for (int64_t i = 0; i < n_items;) {
        if (items[i].reg != reg) {
            i++;
            continue;
        }
        if (publish) {
            items[i].reg = NULL;
            items[i].pack = loom__strdup(pack);
            i++;
        } else {
            free(items[i].name);
            items[i] = items[--n_items];
        }
    }
    pthread_mutex_unlock(&lock);
}

void loom__interfaces_commit(const loom_registrar *reg, const char *pack) { settle(reg, pack, true); }
void loom__interfaces_abort(const loom_registrar *reg) { settle(reg, NULL, false); }

void loom__interfaces_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int64_t i = 0; i < n_items; i++) {
        free(items[i].name);
        free(items[i].pack);
    }
    free(items);
    items = NULL;
    n_items = cap_items = 0;
    pthread_mutex_unlock(&lock);
}

void *loom__get_extension(const char *name, uint32_t version)
{
    const iface *e;
    const void *vt = NULL;

    if (name == NULL)
        return NULL;
    pthread_mutex_lock(&lock);
    if ((e = find(name, version, NULL)) != NULL)
        vt = e->vtable;
    pthread_mutex_unlock(&lock);
    return (void *)(uintptr_t)vt;   /* the ABI hands vtables out as void * */
}

int64_t loom__interface_count(void)
{
    int64_t n = 0;
    pthread_mutex_lock(&lock);
    for (int64_t i = 0; i < n_items; i++)
        n += items[i].reg == NULL;
    pthread_mutex_unlock(&lock);
    return n;
}
