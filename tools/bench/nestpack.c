/* SPDX-License-Identifier: BSD-3-Clause */
/*
** nestpack.c - the pack behind the nested-call figure of dispatch_overhead:
** bench.nested_add(input, other) calls core.add(input, other) through
** host->op_call into its own (preallocated) output, so
**   t(bench.nested_add) - t(core.add)
** is what one nested dispatch costs a kernel.
*/
#define LOOM_TARGET_ABI_MINOR 1
#include "loom/plugin.h"

static const loom_host_api *host;
static const loom_op *core_add;

static const loom_arg_def ins[] = { { .name = "input", .ndim = -1 }, { .name = "other", .ndim = -1 } };
static const loom_arg_def outs[] = { { .name = "output", .ndim = -1 } };
static const loom_op_schema schema = {
    .struct_size = sizeof(loom_op_schema), .name = "bench.nested_add", .version = 1,
    .doc = "core.add through host->op_call", .n_inputs = 2, .inputs = ins, .n_outputs = 1, .outputs = outs,
};

static loom_status run(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    loom_status st = host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, x->shape, &y);
    if (st != LOOM_OK)
        return st;
    loom_op_call c = { .struct_size = sizeof c, .op = core_add, .n_inputs = 2, .inputs = call->inputs,
                       .n_outputs = 1, .outputs = &y };
    return host->op_call(call->ctx, &c);
}

static const loom_kernel_desc kernel = {
    .struct_size = sizeof(loom_kernel_desc), .schema = &schema, .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU, .impl = "cpu:nested", .run = run,
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    host = h;
    if ((core_add = h->op_find("core.add")) == NULL)
        return LOOM_ENOENT;
    return h->register_kernel(reg, &kernel);
}

static const char *const depends[] = { "core", NULL };
LOOM_PLUGIN_DEFINE_DEPS("bench", "1.0", "nested-call benchmark", init, NULL, depends)
