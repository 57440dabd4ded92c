/* SPDX-License-Identifier: BSD-3-Clause */
/*
** addclash.c - a pack, meant for LOOM_PLUGIN_PATH, that defines core.add
** differently from the core pack (no alpha attribute) with a kernel that
** computes input - other, so a test can tell whose kernel ran. Found first
** in the search order, it holds core.add; the core pack must still load,
** without its core.add (definition and kernels).
*/
#include "loom/plugin.h"

static const loom_host_api *host;

static const loom_arg_def inputs[] = {
    { .name = "input", .ndim = -1, .doc = "f32" }, { .name = "other", .ndim = -1, .doc = "f32, same size" },
};
static const loom_arg_def outputs[] = { { .name = "output", .ndim = -1 } };
static const loom_op_schema add_schema = {
    .struct_size = sizeof(loom_op_schema), .name = "core.add", .version = 1, .doc = "input - other (sic)",
    .n_inputs = 2, .inputs = inputs, .n_outputs = 1, .outputs = outputs,
};

static loom_status run_sub(loom_call *call)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    loom_tensor *y;
    loom_status st;
    if (loom_numel(a) != loom_numel(b))
        return host->fail(LOOM_EINVAL, "input and other differ in size");
    if ((st = host->alloc_output(call, 0, LOOM_DTYPE_F32, a->ndim, a->shape, &y)) != LOOM_OK)
        return st;
    const float *x = loom_data(a), *z = loom_data(b);
    float *out = loom_data(y);
    for (int64_t i = 0, n = loom_numel(a); i < n; i++)
        out[i] = x[i] - z[i];
    return LOOM_OK;
}

static loom_status clash_init(const loom_host_api *h, loom_registrar *reg)
{
    static const loom_kernel_desc k = {
        .struct_size = sizeof k, .schema = &add_schema, .backend = "cpu", .device_type = LOOM_DEVICE_CPU,
        .impl = "cpu:addclash", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .run = run_sub,
    };
    host = h;
    return h->register_kernel(reg, &k);
}

LOOM_PLUGIN_DEFINE("addclash", "1.0", "a differing core.add", clash_init, NULL)
