/* SPDX-License-Identifier: BSD-3-Clause */
/*
** probepack.c - purpose-made packs for vetted loading (LOOM_PROBE=1,
** test_probe.c), built with -DPROBE_<VARIANT>. Never load the bad ones into
** a process without probing: that is what they are for.
**   GOOD    pack "pgood": the op pgood.op and the interface pgood.iface v1
**   USER    pack "puser", depends on pgood: its init needs pgood.op and the
**           interface (so its probe must load pgood first)
**   CRASH   init writes through a NULL pointer (SIGSEGV)
**   ABORT   init calls abort()
**   HANG    init never returns
**   FAILS   init returns LOOM_EDEVICE
** Each bad pack's constructor sets PROBE_OPENED_<name>=1 in the environment
** of the process that opens it: the test process must never have it.
*/
#include <stdlib.h>
#include <unistd.h>

#define LOOM_TARGET_ABI_MINOR 1
#include "loom/plugin.h"

#if defined(PROBE_GOOD) || defined(PROBE_USER)
static const loom_arg_def in_x[] = { { .name = "input", .ndim = -1 } };
static const loom_arg_def out_y[] = { { .name = "output", .ndim = -1 } };
typedef struct iface_v1 { uint32_t struct_size; int (*answer)(void); } iface_v1;
#endif

#if defined(PROBE_GOOD)
#  define NAME "pgood"
static int answer(void) { return 42; }
static const iface_v1 iface = { sizeof(iface_v1), answer };
static const loom_op_schema op = {
    .struct_size = sizeof(loom_op_schema), .name = "pgood.op", .version = 1,
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st = h->define_op(reg, &op);
    return st != LOOM_OK ? st : h->register_interface(reg, "pgood.iface", 1, &iface);
}
#elif defined(PROBE_USER)
#  define NAME "puser"
static const loom_op_schema op = {
    .struct_size = sizeof(loom_op_schema), .name = "puser.op", .version = 1,
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    const iface_v1 *i = h->get_extension("pgood.iface", 1);
    if (h->op_find("pgood.op") == NULL)
        return LOOM_ENOENT;
    if (i == NULL || i->answer() != 42)
        return h->fail(LOOM_ENOENT, "interface pgood.iface v1 is missing");
    return h->define_op(reg, &op);
}
static const char *const depends[] = { "pgood", NULL };
#else
#  if defined(PROBE_CRASH)
#    define NAME "pcrash"
#  elif defined(PROBE_ABORT)
#    define NAME "pabort"
#  elif defined(PROBE_HANG)
#    define NAME "phang"
#  elif defined(PROBE_FAILS)
#    define NAME "pfails"
#  endif
__attribute__((constructor)) static void opened(void) { setenv("PROBE_OPENED_" NAME, "1", 1); }
static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    (void)reg;
#  if defined(PROBE_CRASH)
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
#  elif defined(PROBE_ABORT)
    abort();
#  elif defined(PROBE_HANG)
    for (;;)
        sleep(1);
#  endif
    return h->fail(LOOM_EDEVICE, "the probe device is on fire");
}
#endif

#if defined(PROBE_USER)
LOOM_PLUGIN_DEFINE_DEPS(NAME, "1.0", "a pack for the probe tests", init, NULL, depends)
#else
LOOM_PLUGIN_DEFINE(NAME, "1.0", "a pack for the probe tests", init, NULL)
#endif
