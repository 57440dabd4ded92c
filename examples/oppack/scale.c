/* SPDX-License-Identifier: BSD-3-Clause */
/*
** scale.c - a third-party op pack with one operator, built out of tree
** against nothing but the `loom-plugin` pkg-config file:
**
**   example.scale   output = input * factor   (f32, any shape; factor: float, default 2.0)
**
** The pack never links libloom: every service (errors, output allocation,
** the thread pool) comes through the host table handed to example_init.
** Only loom_plugin_entry is exported (see Makefile and example.map).
*/
#include <stdio.h>
#include <loom/plugin.h>

static const loom_host_api *host;   /* set once by example_init */

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

static const loom_arg_def scale_inputs[] = {
    { .name = "input", .dtypes = F32, .flags = 0, .ndim = -1, .doc = "any shape" },
};
static const loom_arg_def scale_outputs[] = {
    { .name = "output", .dtypes = F32, .flags = 0, .ndim = -1, .doc = "input * factor, same shape" },
};
static const loom_attr_def scale_attrs[] = {
    { .name = "factor", .type = LOOM_ATTR_FLOAT, .flags = 0, .dflt = LOOM_DEFAULT_FLOAT(2.0),
      .doc = "the multiplier" },
};

/* Declared work, for `loom bench`: one multiply, 4 bytes read, 4 written. */
static void scale_cost(const loom_call *call, double *flops, double *bytes)
{
    double n = (double)loom_numel(call->inputs[0]);
    *flops = n;
    *bytes = 8.0 * n;
}

static const loom_op_schema scale_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "example.scale",
    .version = 1,
    .doc = "output = input * factor",
    .n_inputs = 1, .inputs = scale_inputs,
    .n_outputs = 1, .outputs = scale_outputs,
    .n_attrs = 1, .attrs = scale_attrs,
    .cost = scale_cost,
};

typedef struct scale_job {
    const float *in;
    float *out;
    float factor;
} scale_job;

static void scale_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const scale_job *j = user;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        j->out[i] = j->in[i] * j->factor;
}

/* The kernel walks memory linearly: strided tensors go to another kernel. */
static loom_status scale_supports(const loom_call *call, char *why, size_t why_size)
{
    if (!loom_is_contiguous(call->inputs[0])) {
        snprintf(why, why_size, "input is not contiguous");
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

static loom_status scale_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *y;
    scale_job job;
    loom_status st = host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, &y);

    if (st != LOOM_OK)
        return st;
    if (!loom_is_contiguous(y))
        return host->fail(LOOM_ENOTSUP, "example.scale: output must be contiguous");
    job.in = loom_data(x);
    job.out = loom_data(y);
    job.factor = (float)call->attrs[0].u.f;
    return host->parallel_for(call->ctx, loom_numel(x), 16384, scale_range, &job);
}

static const loom_kernel_desc scale_kernel = {
    .struct_size = sizeof(loom_kernel_desc),
    .schema = &scale_schema,
    .backend = "cpu",
    .device_type = LOOM_DEVICE_CPU,
    .priority = 0,
    .impl = "cpu:example-linear",
    .dtypes = F32,
    .supports = scale_supports,
    .run = scale_cpu,
};

static loom_status example_init(const loom_host_api *h, loom_registrar *reg)
{
    loom_status st;

    host = h;
    st = h->define_op(reg, &scale_schema);
    if (st == LOOM_OK)
        st = h->register_kernel(reg, &scale_kernel);
    return st;
}

LOOM_PLUGIN_DEFINE("example", "1.0.0", "an out-of-tree example pack: example.scale",
                   example_init, NULL)
