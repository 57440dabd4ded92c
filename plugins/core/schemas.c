/*
** schemas.c - the definitions of the core ops and of the core.linear class.
**
** Compiled into core.so and core-cuda.so alike, so both packs define the
** very same schemas: the core refuses a kernel whose schema differs from
** the op's definition. Argument names follow torch.
*/
#include "core_pack.h"
#include "describe.h"

#define F32_F64 (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))

static const loom_arg_def matmul_inputs[] = {
    { .name = "a", .dtypes = F32_F64, .ndim = -1, .doc = "[.., M, K]" },
    { .name = "b", .dtypes = F32_F64, .ndim = -1, .doc = "[.., K, N]" },
};
static const loom_arg_def one_output[] = {
    { .name = "output", .dtypes = 0, .ndim = -1, .doc = "result" },
};

const loom_op_schema core_matmul_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "core.matmul",
    .version = 1,
    .doc = "a @ b with torch.matmul semantics for rank >= 2: [.., M, K] @ [.., K, N], batch dims broadcast",
    .n_inputs = 2, .inputs = matmul_inputs,
    .n_outputs = 1, .outputs = one_output,
    .cost = core_matmul_cost,
};

static const loom_arg_def add_inputs[] = {
    { .name = "input", .dtypes = 0, .ndim = -1, .doc = "any dtype" },
    { .name = "other", .dtypes = 0, .ndim = -1, .doc = "same dtype as input, broadcastable" },
};
static const loom_attr_def add_attrs[] = {
    { .name = "alpha", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(1.0),
      .doc = "multiplier of other (integral for integer dtypes)" },
};

static void add_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *out = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (out == NULL)
        return;
    *flops = 2.0 * (double)loom_numel(out);
    *bytes = 3.0 * (double)loom_numel(out) * (double)core_host->dtype_size(loom_tensor_dtype_of(out));
}

const loom_op_schema core_add_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "core.add",
    .version = 1,
    .doc = "torch.add: input + alpha * other with broadcasting",
    .n_inputs = 2, .inputs = add_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = add_attrs,
    .cost = add_cost,
};

static const loom_arg_def cast_inputs[] = {
    { .name = "input", .dtypes = 0, .ndim = -1, .doc = "any dtype, any strides" },
};
static const loom_attr_def cast_attrs[] = {
    { .name = "dtype", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_REQUIRED,
      .dflt = LOOM_DEFAULT_NONE, .doc = "target dtype name: f32 f64 f16 bf16 f8e4m3 i8 u8 i16 i32 i64 bool c64 c128" },
};

const loom_op_schema core_cast_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "core.cast",
    .version = 1,
    .doc = "torch.Tensor.to(dtype): truncation toward zero, round-to-nearest-even, real part of complex",
    .n_inputs = 1, .inputs = cast_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = cast_attrs,
};

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

const loom_op_schema core_linear_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "core.linear",
    .version = 1,
    .doc = "torch.nn.functional.linear with the object's weight [out, in] and optional bias [out]",
    .n_inputs = 1, .inputs = linear_inputs,
    .n_outputs = 1, .outputs = one_output,
    .object_class = "core.linear",
    .cost = linear_cost,
};

char *core_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(core_host, t, buf, size);
}
