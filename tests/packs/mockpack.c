/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mockpack.c - purpose-made packs for the loader and dispatcher tests.
**
** One source, built several times with -DMOCK_<VARIANT>; each variant is a
** good pack or breaks exactly one rule of the ABI:
**   GOOD        ops mock.double, mock.add, mock.count (a method of mock.counter)
**   FAST        a second backend "fast" for mock.double that declines n > 4
**   BAD_MAGIC   descriptor with the wrong magic
**   MAJOR2      descriptor for ABI major 2
**   NEWER_MINOR requires ABI 1.99
**   NULL_DESC   the entry returns NULL
**   INIT_FAILS  init registers an op, then fails: nothing must remain
**   CLASH       defines mock.double with another schema: loads without it
**   DUP_KERNEL  a second cpu kernel for mock.double: loads without it
**   NO_ENTRY    exports no entry symbol at all
** and, with their own init (rule_init below), one per registration limit:
**   MANY_KERNELS  a device provider, then 17 kernels (17 backends) for one op:
**                 over LOOM__MAX_KERNELS, so refused, and the provider's
**                 code is never reached (it sets MOCK_PROVIDER_TOUCHED)
**   MORE_KERNELS  15 more kernels for mock.double (which has 2): refused
**   PROVIDERS5    five device providers (a pack may register 4)
**   DUP_PROVIDER  two providers for one device type
**   SELF_CLASH    defines mock.self twice, differently
**   CLASS_DUP     registers mock.counter again (mock holds it: dropped) and
**                 the op mock.classdup, which loads
*/
#include <string.h>

#include "loom/plugin.h"

#if defined(MOCK_MANY_KERNELS) || defined(MOCK_MORE_KERNELS) || defined(MOCK_PROVIDERS5) \
    || defined(MOCK_DUP_PROVIDER) || defined(MOCK_SELF_CLASH) || defined(MOCK_CLASS_DUP)
#  define MOCK_RULE 1
#endif

static const loom_host_api *host;

static const loom_arg_def in_x[] = { { .name = "input", .dtypes = 0, .ndim = -1, .doc = "any tensor" } };
static const loom_arg_def out_y[] = { { .name = "output", .ndim = -1 } };
static const loom_attr_def double_attrs[] = {
    { .name = "scale", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(2.0), .doc = "factor" },
#ifdef MOCK_CLASH
    { .name = "extra", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(0) },
#endif
};

static const loom_op_schema double_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "mock.double", .version = 1,
    .doc = "output = input * scale (f32)",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
    .n_attrs = sizeof double_attrs / sizeof double_attrs[0], .attrs = double_attrs,
};

static loom_status run_double(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y);
    if (st != LOOM_OK)
        return st;
    const float *a = loom_data(x);
    float *b = loom_data(y);
    float s = (float)call->attrs[0].u.f;
    for (int64_t i = 0, n = loom_numel(x); i < n; i++)
        b[i] = a[i] * s;
    return LOOM_OK;
}

#if defined(MOCK_GOOD)
static const loom_arg_def in_xy[] = {
    { .name = "input", .ndim = -1 }, { .name = "other", .ndim = -1 },
};
static const loom_attr_def no_attrs[1];
static const loom_op_schema add_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "mock.add", .version = 1, .doc = "input + other (f32)",
    .n_inputs = 2, .inputs = in_xy, .n_outputs = 1, .outputs = out_y, .n_attrs = 0, .attrs = no_attrs,
};

static loom_status run_add(loom_call *call)
{
    const loom_tensor *x = call->inputs[0], *z = call->inputs[1];
    loom_tensor *y;
    if (loom_numel(x) != loom_numel(z))
        return host->fail(LOOM_EINVAL, "input and other differ in size");
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y);
    if (st != LOOM_OK)
        return st;
    const float *a = loom_data(x), *b = loom_data(z);
    float *c = loom_data(y);
    for (int64_t i = 0, n = loom_numel(x); i < n; i++)
        c[i] = a[i] + b[i];
    return LOOM_OK;
}

/* mock.counter: state is a counter; mock.count adds input's size to it and
** returns the running total as an i64 scalar. */
typedef struct counter { int64_t total; } counter;
static counter counters[64];
static int n_counters;
static const loom_attr_def counter_attrs[] = {
    { .name = "start", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(0) },
};

static loom_status counter_create(const loom_object_args *args, void **state)
{
    if (n_counters == 64)
        return host->fail(LOOM_ENOMEM, "too many counters");
    counters[n_counters].total = args->attrs[0].u.i;
    *state = &counters[n_counters++];
    return LOOM_OK;
}

static void counter_destroy(void *state) { ((counter *)state)->total = -1; }

static const loom_object_class counter_class = {
    .struct_size = sizeof(loom_object_class), .name = "mock.counter", .doc = "a running count",
    .n_attrs = 1, .attrs = counter_attrs, .create = counter_create, .destroy = counter_destroy,
};
static const loom_arg_def out_total[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 0 } };
static const loom_op_schema count_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "mock.count", .version = 1, .doc = "count elements",
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_total, .attrs = no_attrs,
    .object_class = "mock.counter",
};

static loom_status run_count(loom_call *call)
{
    counter *c = call->object;
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_I64, 0, NULL, &y);
    if (st != LOOM_OK)
        return st;
    c->total += loom_numel(call->inputs[0]);
    *(int64_t *)loom_data(y) = c->total;
    return LOOM_OK;
}
#endif

#if defined(MOCK_FAST)
static loom_status fast_supports(const loom_call *call, char *why, size_t size)
{
    if (loom_numel(call->inputs[0]) > 4) {
        strncpy(why, "only up to 4 elements", size - 1);
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}
#endif

#if !defined(MOCK_RULE)
static loom_status mock_init(const loom_host_api *h, loom_registrar *reg)
{
    loom_kernel_desc k = {
        .struct_size = sizeof k, .schema = &double_schema, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
        .impl = "cpu:mock", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .run = run_double,
    };
    loom_status st;

    host = h;
#if defined(MOCK_FAST)
    k.backend = "fast";
    k.impl = "fast:mock";
    k.supports = fast_supports;
#endif
#if defined(MOCK_INIT_FAILS)
    static const loom_op_schema partial = {
        .struct_size = sizeof(loom_op_schema), .name = "mock.partial", .version = 1,
        .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
    };
    k.schema = &partial;
    if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
        return st;
    return h->fail(LOOM_EDEVICE, "the mock device is on fire");
#endif
    if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
        return st;
#if defined(MOCK_GOOD)
    loom_kernel_desc add = k;
    add.schema = &add_schema;
    add.run = run_add;
    if ((st = h->register_kernel(reg, &add)) != LOOM_OK)
        return st;
    if ((st = h->register_object_class(reg, &counter_class)) != LOOM_OK)
        return st;
    loom_kernel_desc count = k;
    count.schema = &count_schema;
    count.dtypes = 0;
    count.run = run_count;
    if ((st = h->register_kernel(reg, &count)) != LOOM_OK)
        return st;
#endif
    return LOOM_OK;
}
#endif

#if defined(MOCK_RULE)
#  include <stdio.h>
#  include <stdlib.h>
/* Helpers shared by the rule variants; each variant uses some of them. */
#  define MOCK_UNUSED __attribute__((unused))

/* Every entry point of the provider marks the process: a refused pack's
** provider must never be reached. */
MOCK_UNUSED static void touched(void) { setenv("MOCK_PROVIDER_TOUCHED", "1", 1); }
MOCK_UNUSED static int32_t prov_count(void) { touched(); return 1; }
MOCK_UNUSED static loom_status prov_describe(int32_t id, char *buf, size_t size)
{
    touched();
    snprintf(buf, size, "mock device %d", id);
    return LOOM_OK;
}
MOCK_UNUSED static void *prov_alloc(int32_t id, size_t n) { (void)id; touched(); return malloc(n); }
MOCK_UNUSED static void prov_free(int32_t id, void *p) { (void)id; touched(); free(p); }
MOCK_UNUSED static loom_status prov_copy(void *dst, loom_dl_device dd, const void *src, loom_dl_device sd, size_t n)
{
    (void)dd;
    (void)sd;
    touched();
    memcpy(dst, src, n);
    return LOOM_OK;
}
MOCK_UNUSED static loom_status prov_sync(int32_t id, void *stream) { (void)id; (void)stream; touched(); return LOOM_OK; }

MOCK_UNUSED static loom_device_provider provider(int32_t device_type, const char *name)
{
    loom_device_provider p = {
        .struct_size = sizeof p, .device_type = device_type, .name = name, .count = prov_count,
        .describe = prov_describe, .alloc = prov_alloc, .free = prov_free, .copy = prov_copy,
        .synchronize = prov_sync,
    };
    return p;
}

MOCK_UNUSED static const loom_op_schema many_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "mock.many", .version = 1,
    .n_inputs = 1, .inputs = in_x, .n_outputs = 1, .outputs = out_y,
};
MOCK_UNUSED static const char *const backends[17] = {
    "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13", "k14", "k15", "k16",
};

MOCK_UNUSED static const loom_attr_def self_attrs[] = { { .name = "n", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(1) } };
MOCK_UNUSED static const loom_attr_def counter_attrs[] = {
    { .name = "start", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(0) },
};
MOCK_UNUSED static loom_status counter_create(const loom_object_args *args, void **state)
{
    (void)args;
    *state = NULL;
    return LOOM_OK;
}
MOCK_UNUSED static void counter_destroy(void *state) { (void)state; }

static loom_status rule_init(const loom_host_api *h, loom_registrar *reg)
{
    loom_kernel_desc k = {
        .struct_size = sizeof k, .schema = &double_schema, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
        .impl = "cpu:rule", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .run = run_double,
    };
    loom_status st;

    host = h;
#  if defined(MOCK_MANY_KERNELS) || defined(MOCK_PROVIDERS5) || defined(MOCK_DUP_PROVIDER)
    static loom_device_provider provs[5];
    int n_provs = 1;
#    if defined(MOCK_PROVIDERS5)
    n_provs = 5;
#    elif defined(MOCK_DUP_PROVIDER)
    n_provs = 2;
#    endif
    for (int i = 0; i < n_provs; i++) {
#    if defined(MOCK_DUP_PROVIDER)
        provs[i] = provider(77, i == 0 ? "mockdev" : "mockdev2");
#    else
        provs[i] = provider(77 + i, "mockdev");
#    endif
        if ((st = h->register_device(reg, &provs[i])) != LOOM_OK)
            return st;
    }
#  endif
#  if defined(MOCK_MANY_KERNELS)
    k.schema = &many_schema;
    for (int i = 0; i < 17; i++) {
        k.backend = backends[i];
        k.impl = backends[i];
        if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
            return st;
    }
#  elif defined(MOCK_MORE_KERNELS)
    for (int i = 0; i < 15; i++) {
        k.backend = backends[i];
        k.impl = backends[i];
        if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
            return st;
    }
#  elif defined(MOCK_SELF_CLASH)
    loom_op_schema a = many_schema, b = many_schema;
    a.name = b.name = "mock.self";
    b.n_attrs = 1;
    b.attrs = self_attrs;
    if ((st = h->define_op(reg, &a)) != LOOM_OK)
        return st;
    return h->define_op(reg, &b);
#  elif defined(MOCK_CLASS_DUP)
    MOCK_UNUSED static const loom_object_class counter_class = {
        .struct_size = sizeof(loom_object_class), .name = "mock.counter", .doc = "again",
        .n_attrs = 1, .attrs = counter_attrs, .create = counter_create, .destroy = counter_destroy,
    };
    static loom_op_schema op;
    op = many_schema;
    op.name = "mock.classdup";
    if ((st = h->register_object_class(reg, &counter_class)) != LOOM_OK)
        return st;
    k.schema = &op;
    k.dtypes = 0;
    if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
        return st;
#  endif
    return LOOM_OK;
}
#endif

#if defined(MOCK_RULE)
LOOM_PLUGIN_DEFINE(MOCK_RULE_NAME, "1.0", "one registration rule", rule_init, NULL)
#elif defined(MOCK_GOOD)
LOOM_PLUGIN_DEFINE("mock", "1.0", "test pack", mock_init, NULL)
#elif defined(MOCK_FAST)
LOOM_PLUGIN_DEFINE("mockfast", "1.0", "second backend", mock_init, NULL)
#elif defined(MOCK_CLASH)
LOOM_PLUGIN_DEFINE("mockclash", "1.0", "clashing schema", mock_init, NULL)
#elif defined(MOCK_DUP_KERNEL)
LOOM_PLUGIN_DEFINE("mockdup", "1.0", "duplicate kernel", mock_init, NULL)
#elif defined(MOCK_INIT_FAILS)
LOOM_PLUGIN_DEFINE("mockfails", "1.0", "init fails", mock_init, NULL)
#elif defined(MOCK_NO_ENTRY)
LOOM_PLUGIN_EXPORT int mock_not_an_entry(void);
LOOM_PLUGIN_EXPORT int mock_not_an_entry(void) { return mock_init(NULL, NULL) == LOOM_OK; }
#else
/* Hand-written descriptors that break the frozen prefix. */
LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t major, uint16_t minor);
LOOM_PLUGIN_EXPORT const loom_plugin_desc *loom_plugin_entry(uint16_t major, uint16_t minor)
{
    static loom_plugin_desc desc = {
        .magic = LOOM_PLUGIN_MAGIC, .abi_major = LOOM_ABI_MAJOR, .abi_minor_built = LOOM_ABI_MINOR,
        .struct_size = sizeof(loom_plugin_desc), .name = "mockbad", .version = "1.0", .init = mock_init,
    };
    (void)major;
    (void)minor;
#  if defined(MOCK_BAD_MAGIC)
    desc.magic = 0x12345678u;
#  elif defined(MOCK_MAJOR2)
    desc.abi_major = 2;
#  elif defined(MOCK_NEWER_MINOR)
    desc.abi_minor_built = 99;
    desc.abi_minor_required = 99;
#  elif defined(MOCK_NULL_DESC)
    return NULL;
#  endif
    return &desc;
}
#endif
