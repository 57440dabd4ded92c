/* SPDX-License-Identifier: BSD-3-Clause */
/*
** schemas.c - the definitions of the core ops and of the core.linear class.
**
** Compiled into core.so and core-cuda.so alike, so both packs define the
** very same schemas: the core refuses a kernel whose schema differs from
** the op's definition. Argument names follow torch.
*/
#include "core_pack.h"
#include "describe.h"
#include "dtype_traits.h"
#include "pack.h"

#define F32_F64 PK_F32_F64

static const loom_arg_def matmul_inputs[] = {
    { .name = "a", .dtypes = F32_F64, .ndim = -1, .doc = "[.., M, K]" },
    { .name = "b", .dtypes = F32_F64, .ndim = -1, .doc = "[.., K, N]" },
};
static const loom_arg_def one_output[] = {
    { .name = "output", .dtypes = 0, .ndim = -1, .doc = "result" },
};

PK_SCHEMA(core_matmul_schema, "core.matmul", 1,
          "a @ b with torch.matmul semantics for rank >= 2: [.., M, K] @ [.., K, N], batch dims broadcast",
          PK_INPUTS(matmul_inputs), PK_OUTPUTS(one_output), .cost = core_matmul_cost);

static const loom_arg_def add_inputs[] = {
    { .name = "input", .dtypes = 0, .ndim = -1, .doc = "any dtype" },
    { .name = "other", .dtypes = 0, .ndim = -1, .doc = "same dtype as input, broadcastable" },
};
PK_ATTR_TABLE(core_add, CORE_ADD_ATTRS);

static void add_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *out = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (out == NULL)
        return;
    *flops = 2.0 * (double)loom_numel(out);
    *bytes = 3.0 * (double)loom_numel(out) * (double)pk_host->dtype_size(loom_tensor_dtype_of(out));
}

PK_SCHEMA(core_add_schema, "core.add", 1, "torch.add: input + alpha * other with broadcasting",
          PK_INPUTS(add_inputs), PK_OUTPUTS(one_output), PK_ATTRS(core_add_attrs), .cost = add_cost);

static const loom_arg_def cast_inputs[] = {
    { .name = "input", .dtypes = 0, .ndim = -1, .doc = "any dtype, any strides" },
};
PK_ATTR_TABLE(core_cast, CORE_CAST_ATTRS);

PK_SCHEMA(core_cast_schema, "core.cast", 1,
          "torch.Tensor.to(dtype): truncation toward zero, round-to-nearest-even, real part of complex",
          PK_INPUTS(cast_inputs), PK_OUTPUTS(one_output), PK_ATTRS(core_cast_attrs));

static const loom_arg_def linear_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1, .doc = "[.., in_features]" },
};

static void linear_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[0], *y = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (x == NULL || y == NULL || x->ndim < 1 || y->ndim < 1)
        return;
    double in = (double)x->shape[x->ndim - 1];
    *flops = 2.0 * (double)loom_numel(y) * in;
    *bytes = 4.0 * ((double)loom_numel(x) + (double)loom_numel(y)
                    + in * (double)y->shape[y->ndim - 1]);
}

PK_SCHEMA(core_linear_schema, "core.linear", 1,
          "torch.nn.functional.linear with the object's weight [out, in] and optional bias [out]",
          PK_INPUTS(linear_inputs), PK_OUTPUTS(one_output), .object_class = "core.linear", .cost = linear_cost);

char *core_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(pk_host, t, buf, size);
}
