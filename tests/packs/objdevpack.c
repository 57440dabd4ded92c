/* SPDX-License-Identifier: BSD-3-Clause */
/*
** objdevpack.c - the purpose-made pack "objdev" for the routing of object
** methods by the object's device (ABI 1.5; test_object_device.c).
**
** A fake device type (OBJDEV_DEVICE, host memory behind a provider, so a
** test can read what a kernel wrote) and the class objdev.source, with two
** methods, each with a cpu kernel and a kernel on the fake device:
**   objdev.pop   no inputs; output: an i32 scalar, the device type it ran on
**   objdev.scale input f32; output: input * 2 (the kernel's device checked)
** and a third, objdev.info (no inputs: the number of pops), with a cpu
** kernel only. Each kernel's backend names its device ("cpu", "fake").
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/plugin.h"

#define OBJDEV_DEVICE 66

static const loom_host_api *host;

static int32_t fake_count(void) { return 2; }
static loom_status fake_describe(int32_t id, char *buf, size_t size)
{
    snprintf(buf, size, "fake device %d", id);
    return LOOM_OK;
}
static void *fake_alloc(int32_t id, size_t n) { (void)id; return malloc(n > 0 ? n : 1); }
static void fake_free(int32_t id, void *p) { (void)id; free(p); }
static loom_status fake_copy(void *dst, loom_dl_device dd, const void *src, loom_dl_device sd, size_t n)
{
    (void)dd;
    (void)sd;
    memcpy(dst, src, n);
    return LOOM_OK;
}
static loom_status fake_sync(int32_t id, void *stream) { (void)id; (void)stream; return LOOM_OK; }

static const loom_device_provider fake_provider = {
    .struct_size = sizeof(loom_device_provider), .device_type = OBJDEV_DEVICE, .name = "fake",
    .count = fake_count, .describe = fake_describe, .alloc = fake_alloc, .free = fake_free, .copy = fake_copy,
    .synchronize = fake_sync,
};

typedef struct source { int32_t pops; } source;

static loom_status source_create(const loom_object_args *args, void **state)
{
    (void)args;
    if ((*state = calloc(1, sizeof(source))) == NULL)
        return host->fail(LOOM_ENOMEM, "objdev.source: out of memory");
    return LOOM_OK;
}

static void source_destroy(void *state) { free(state); }

static const loom_attr_def no_attrs[1];
static const loom_object_class source_class = {
    .struct_size = sizeof(loom_object_class), .name = "objdev.source", .doc = "a source of chunks",
    .n_attrs = 0, .attrs = no_attrs, .create = source_create, .destroy = source_destroy,
};

static const loom_arg_def pop_out[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I32), .ndim = 0, .doc = "the device type it ran on" },
};
static const loom_op_schema pop_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "objdev.pop", .version = 1,
    .doc = "a chunk: the device type the kernel ran on", .n_inputs = 0, .n_outputs = 1, .outputs = pop_out,
    .attrs = no_attrs, .object_class = "objdev.source",
};
static const loom_arg_def scale_in[] = { { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1 } };
static const loom_arg_def scale_out[] = { { .name = "output", .ndim = 1 } };
static const loom_op_schema scale_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "objdev.scale", .version = 1, .doc = "input * 2",
    .n_inputs = 1, .inputs = scale_in, .n_outputs = 1, .outputs = scale_out, .attrs = no_attrs,
    .object_class = "objdev.source",
};

static const loom_arg_def info_out[] = { { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I32), .ndim = 0 } };
static const loom_op_schema info_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "objdev.info", .version = 1, .doc = "the number of pops",
    .n_inputs = 0, .n_outputs = 1, .outputs = info_out, .attrs = no_attrs, .object_class = "objdev.source",
};

/* Both kernels of a method share one run(): call->kernel->user is the
** device type the kernel was registered for, checked against ctx->device. */
static loom_status check_device(loom_call *call)
{
    int32_t want = (int32_t)(intptr_t)call->kernel->user;
    if (call->ctx->device.device_type != want)
        return host->fail(LOOM_EINVAL, "a kernel for device type %d called on device type %d", want,
                          call->ctx->device.device_type);
    return LOOM_OK;
}

static loom_status run_pop(loom_call *call)
{
    loom_tensor *y;
    loom_status st;
    if ((st = check_device(call)) != LOOM_OK
        || (st = host->alloc_output(call, 0, LOOM_DTYPE_I32, 0, NULL, &y)) != LOOM_OK)
        return st;
    ((source *)call->object)->pops++;
    *(int32_t *)loom_data(y) = call->ctx->device.device_type;
    return LOOM_OK;
}

static loom_status run_scale(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st;
    if ((st = check_device(call)) != LOOM_OK
        || (st = host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, x->shape, &y)) != LOOM_OK)
        return st;
    const float *a = loom_data(x);
    float *b = loom_data(y);
    for (int64_t i = 0; i < x->shape[0]; i++)
        b[i] = 2 * a[i];
    return LOOM_OK;
}

static loom_status run_info(loom_call *call)
{
    loom_tensor *y;
    loom_status st;
    if ((st = check_device(call)) != LOOM_OK
        || (st = host->alloc_output(call, 0, LOOM_DTYPE_I32, 0, NULL, &y)) != LOOM_OK)
        return st;
    *(int32_t *)loom_data(y) = ((const source *)call->object)->pops;
    return LOOM_OK;
}

static loom_status objdev_init(const loom_host_api *h, loom_registrar *reg)
{
    const loom_op_schema *schemas[2] = { &pop_schema, &scale_schema };
    loom_status (*runs[2])(loom_call *) = { run_pop, run_scale };
    loom_status st;

    host = h;
    if ((st = h->register_device(reg, &fake_provider)) != LOOM_OK
        || (st = h->register_object_class(reg, &source_class)) != LOOM_OK)
        return st;
    for (int m = 0; m < 2; m++)
        for (int d = 0; d < 2; d++) {
            loom_kernel_desc k = {
                .struct_size = sizeof k, .schema = schemas[m], .backend = d == 0 ? "cpu" : "fake",
                .device_type = d == 0 ? LOOM_DEVICE_CPU : OBJDEV_DEVICE, .impl = d == 0 ? "cpu:objdev" : "fake:objdev",
                .run = runs[m], .user = (void *)(intptr_t)(d == 0 ? LOOM_DEVICE_CPU : OBJDEV_DEVICE),
            };
            if ((st = h->register_kernel(reg, &k)) != LOOM_OK)
                return st;
        }
    loom_kernel_desc info = {
        .struct_size = sizeof info, .schema = &info_schema, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
        .impl = "cpu:objdev", .run = run_info, .user = (void *)(intptr_t)LOOM_DEVICE_CPU,
    };
    return h->register_kernel(reg, &info);
}

LOOM_PLUGIN_DEFINE("objdev", "1.0", "object-device routing test pack", objdev_init, NULL)
