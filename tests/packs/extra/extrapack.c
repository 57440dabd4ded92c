/* SPDX-License-Identifier: BSD-3-Clause */
/*
** extrapack.c - packs that load (unlike the refused ones of mockpack.c), for
** the registry's table limits, built with -DEXTRA_<VARIANT>:
**   PROV_0MANY  a provider (type 79) that reports 17 devices, one more than
**               LOOM_MAX_DEVICES_PER_KIND: refused (sorts first)
**   PROV_A      four device providers (types 70..73); "many" reports 16
**               devices, the most a provider may have
**   PROV_B      four more (74..77): eight in all, LOOM_MAX_DEVICE_PROVIDERS
**   PROV_C      a ninth: refused, naming LOOM_MAX_DEVICE_PROVIDERS
**   LONG_LABEL  extra.longlabel, whose kernel has a 120-byte impl name and
**               fails: the message carries the whole name; and extra.jagged,
**               a valid use of the ABI 1.1 schema members
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/plugin.h"

static const loom_host_api *host;

static int32_t count_one(void) { return 1; }
static int32_t count_many(void) { return LOOM_MAX_DEVICES_PER_KIND; }
static int32_t count_too_many(void) { return LOOM_MAX_DEVICES_PER_KIND + 1; }
static loom_status describe(int32_t id, char *buf, size_t size)
{
    snprintf(buf, size, "extra device %d", id);
    return LOOM_OK;
}
static void *dev_alloc(int32_t id, size_t n) { (void)id; return malloc(n); }
static void dev_free(int32_t id, void *p) { (void)id; free(p); }
static loom_status dev_copy(void *dst, loom_dl_device dd, const void *src, loom_dl_device sd, size_t n)
{
    (void)dd;
    (void)sd;
    memcpy(dst, src, n);
    return LOOM_OK;
}
static loom_status dev_sync(int32_t id, void *stream) { (void)id; (void)stream; return LOOM_OK; }

static loom_status register_providers(loom_registrar *reg, int32_t first, int n)
{
    static loom_device_provider p[4];
    static const char *const names[] = { "many", "p71", "p72", "p73", "p74", "p75", "p76", "p77", "p78", "toomany" };
    loom_status st;
    for (int i = 0; i < n; i++) {
        p[i] = (loom_device_provider){
            .struct_size = sizeof p[i], .device_type = first + i, .name = names[first + i - 70],
            .count = first + i == 70 ? count_many : first + i == 79 ? count_too_many : count_one, .describe = describe, .alloc = dev_alloc,
            .free = dev_free, .copy = dev_copy, .synchronize = dev_sync,
        };
        if ((st = host->register_device(reg, &p[i])) != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

#if defined(EXTRA_LONG_LABEL)
static const loom_arg_def in_x[] = { { .name = "input", .ndim = -1 } };
static const loom_arg_def out_y[] = { { .name = "output", .ndim = -1 } };
static const loom_op_schema long_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "extra.longlabel", .version = 1,
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
static loom_status run_fail(loom_call *call)
{
    (void)call;
    return host->fail(LOOM_EINVAL, "label check");
}
/* A valid use of every ABI 1.1 schema member: a jagged pair, a same-dtype
** output and an enumerated string attribute. */
static const loom_arg_def jag_in[] = {
    { .name = "values", .flags = LOOM_ARG_JAGGED, .ndim = 1 },
    { .name = "values_offsets", .flags = LOOM_ARG_OFFSETS, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1 },
};
static const loom_arg_def jag_out[] = { { .name = "output", .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1 } };
static const loom_attr_def jag_attrs[] = {
    { .name = "mode", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("sum") },
};
static const char *const jag_modes[] = { "sum", "mean", NULL };
static const loom_attr_choices jag_choices[] = { { .attr = 0, .values = jag_modes } };
static const loom_op_schema jagged_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "extra.jagged", .version = 1,
    .n_inputs = 2, .inputs = jag_in, .n_outputs = 1, .outputs = jag_out, .n_attrs = 1, .attrs = jag_attrs,
    .n_choices = 1, .choices = jag_choices,
};
#define IMPL_120 "cpu:" "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789" \
                 "abcdefghijklmnopqrstuvwxyz0123456789abcdefgh"
_Static_assert(sizeof IMPL_120 - 1 == 120, "a 120-byte implementation name");
#endif

static loom_status extra_init(const loom_host_api *h, loom_registrar *reg)
{
    host = h;
    (void)register_providers;
#if defined(EXTRA_PROV_0MANY)
    return register_providers(reg, 79, 1);
#elif defined(EXTRA_PROV_A)
    return register_providers(reg, 70, 4);
#elif defined(EXTRA_PROV_B)
    return register_providers(reg, 74, 4);
#elif defined(EXTRA_PROV_C)
    return register_providers(reg, 78, 1);
#elif defined(EXTRA_LONG_LABEL)
    static const loom_kernel_desc k = {
        .struct_size = sizeof k, .schema = &long_schema, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
        .impl = IMPL_120, .run = run_fail,
    };
    loom_status st = h->define_op(reg, &jagged_schema);
    if (st != LOOM_OK)
        return st;
    return h->register_kernel(reg, &k);
#else
#  error "no EXTRA_ variant"
#endif
}

LOOM_PLUGIN_DEFINE(PACK_NAME, "1.0", "a table-limit test pack", extra_init, NULL)
