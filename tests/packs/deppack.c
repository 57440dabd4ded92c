/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deppack.c - purpose-made packs with dependencies (ABI 1.1 depends), for
** test_deps.c. One source, built per pack with
**   -DDEP_NAME="alpha"         the pack's name; it defines the op "alpha.op"
**   -DDEP_DEPS="zeta","x.op"   its depends (omitted: none)
**   -DDEP_FAILS                its init fails (a refused dependency)
**   -DDEP_PROVIDER=77          it registers a device provider for device type 77 (one device)
**   -DDEP_KERNEL_ON=77         its op has a kernel for device type 77
** The init checks that every dependency is there already (op_find of the
** op, or of "<pack>.op" for a pack): a pack initialised before what it
** depends on fails, so "loaded" proves the order.
*/
#include <stdio.h>

#define LOOM_TARGET_ABI_MINOR 1   /* op_find is ABI 1.1 */
#include "loom/plugin.h"

#ifndef DEP_FAILS
static const loom_arg_def in_x[] = { { .name = "input", .ndim = -1 } };
static const loom_arg_def out_y[] = { { .name = "output", .ndim = -1 } };
static const loom_op_schema own_op = {
    .struct_size = sizeof(loom_op_schema), .name = DEP_NAME ".op", .version = 1, .doc = "the pack's op",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
#endif

#ifdef DEP_PROVIDER
#  include <stdlib.h>
#  include <string.h>
static int32_t prov_count(void) { return 1; }
static loom_status prov_describe(int32_t id, char *buf, size_t size)
{
    snprintf(buf, size, "dep device %d", id);
    return LOOM_OK;
}
static void *prov_alloc(int32_t id, size_t n) { (void)id; return malloc(n); }
static void prov_free(int32_t id, void *p) { (void)id; free(p); }
static loom_status prov_copy(void *dst, loom_dl_device dd, const void *src, loom_dl_device sd, size_t n)
{
    (void)dd;
    (void)sd;
    memcpy(dst, src, n);
    return LOOM_OK;
}
static loom_status prov_sync(int32_t id, void *stream) { (void)id; (void)stream; return LOOM_OK; }
static const loom_device_provider provider = {
    .struct_size = sizeof(loom_device_provider), .device_type = DEP_PROVIDER, .name = "depdev",
    .count = prov_count, .describe = prov_describe, .alloc = prov_alloc, .free = prov_free, .copy = prov_copy,
    .synchronize = prov_sync,
};
#endif
#ifdef DEP_KERNEL_ON
static loom_status run(loom_call *call) { (void)call; return LOOM_OK; }
static const loom_kernel_desc kernel = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &own_op, .backend = "depdev", .device_type = DEP_KERNEL_ON,
    .impl = "depdev:" DEP_NAME, .run = run,
};
#endif

#ifdef DEP_DEPS
static const char *const depends[] = { DEP_DEPS, NULL };
#else
#  define depends NULL
#endif

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
#ifdef DEP_DEPS
    for (const char *const *d = depends; *d != NULL; d++) {
        char op[LOOM_MAX_NAME + 8];
        int is_op = 0;
        for (const char *c = *d; *c != '\0'; c++)
            is_op |= *c == '.';
        snprintf(op, sizeof op, is_op ? "%s" : "%s.op", *d);
        if (h->op_find(op) == NULL)
            return h->fail(LOOM_ENOENT, "%s initialised before its dependency %s", DEP_NAME, *d);
    }
#endif
#ifdef DEP_FAILS
    (void)reg;
    return h->fail(LOOM_EDEVICE, "%s cannot start", DEP_NAME);
#else
    loom_status st = h->define_op(reg, &own_op);
#  ifdef DEP_PROVIDER
    if (st == LOOM_OK)
        st = h->register_device(reg, &provider);
#  endif
#  ifdef DEP_KERNEL_ON
    if (st == LOOM_OK)
        st = h->register_kernel(reg, &kernel);
#  endif
    return st;
#endif
}

LOOM_PLUGIN_DEFINE_DEPS(DEP_NAME, "1.0", "a pack with dependencies", init, NULL, depends)
