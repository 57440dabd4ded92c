/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_schemas.c - definitions of the fbgemm jagged ops (compiled into
** both fbgemm packs). Names, argument names and attribute names are those
** of torch.ops.fbgemm.<op> in fbgemm_gpu 1.9. Where fbgemm takes a list of
** offsets (Tensor[] offsets), loom takes the one offsets tensor of a single
** jagged dimension, except jagged_to_padded_dense, its backward and
** dense_to_jagged, which take up to three (offsets, offsets_1, offsets_2).
** Where fbgemm returns (values, offsets), loom returns the values only:
** the offsets are the input's. The op list (JG_OPS) and the attribute
** lists are in jagged.h, where the kernels read the attribute indices.
*/
#include "jagged.h"
#include "pack.h"

static const loom_arg_def one_output[] = {
    { .name = "output", .dtypes = 0, .ndim = -1, .doc = "result" },
};

/* ------------------------------------------------ jagged_to_padded_dense */

/* fbgemm's offsets list: offsets, then the optional deeper levels */
#define OFFSETS_LIST(nm, doc0)                                                                       \
    { .name = nm, .dtypes = JG_INDEX, .ndim = 1, .doc = doc0 },                                     \
    { .name = nm "_1", .dtypes = JG_INDEX, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,                    \
      .doc = "second jagged dim: [entries of " nm " + 1], indexes " nm "_2's entries or values rows" }, \
    { .name = nm "_2", .dtypes = JG_INDEX, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,                    \
      .doc = "third jagged dim: [entries of " nm "_1 + 1], indexes values rows" }

static const loom_arg_def to_padded_inputs[] = {
    { .name = "values", .dtypes = JG_COPYABLE, .ndim = -1, .doc = "[total_L, inner...]" },
    OFFSETS_LIST("offsets", "[B+1], int32 or int64"),
};
PK_ATTR_TABLE(jg_to_padded, JG_TO_PADDED_ATTRS);

PK_SCHEMA(jg_jagged_to_padded_dense_schema, "fbgemm.jagged_to_padded_dense", 1,
          "jagged values [total_L, inner..] + offsets [B+1] (+ deeper levels) -> dense [B, max_L.., inner..], "
          "padded, rows truncated",
          PK_INPUTS(to_padded_inputs), PK_OUTPUTS(one_output), PK_ATTRS(jg_to_padded_attrs), .cost = jg_cost_bytes);

static const loom_arg_def to_padded_backward_inputs[] = {
    { .name = "grad_output", .dtypes = JG_COPYABLE, .ndim = -1, .doc = "[B, max_L.., inner...]" },
    OFFSETS_LIST("offsets", "[B+1], int32 or int64"),
};
PK_ATTR_TABLE(jg_to_padded_backward, JG_TO_PADDED_BACKWARD_ATTRS);

PK_SCHEMA(jg_jagged_to_padded_dense_backward_schema, "fbgemm.jagged_to_padded_dense_backward", 1,
          "gradient of values: the valid positions of grad_output [B, max_L.., inner..] -> [total_L, inner..]",
          PK_INPUTS(to_padded_backward_inputs), PK_OUTPUTS(one_output), PK_ATTRS(jg_to_padded_backward_attrs),
          .cost = jg_cost_bytes);

/* -------------------------------------------------------- dense_to_jagged */

static const loom_arg_def to_jagged_inputs[] = {
    { .name = "dense", .dtypes = JG_COPYABLE, .ndim = -1, .doc = "[B, max_L.., inner...]" },
    OFFSETS_LIST("x_offsets", "[B+1], int32 or int64"),
};
PK_ATTR_TABLE(jg_to_jagged, JG_TO_JAGGED_ATTRS);

PK_SCHEMA(jg_dense_to_jagged_schema, "fbgemm.dense_to_jagged", 1,
          "the valid positions of dense [B, max_L.., inner..] as jagged values [total_L, inner..]",
          PK_INPUTS(to_jagged_inputs), PK_OUTPUTS(one_output), PK_ATTRS(jg_to_jagged_attrs), .cost = jg_cost_bytes);

/* ---------------------------------------------------------- elementwise */

static const loom_arg_def elementwise_inputs[] = {
    { .name = "x_values", .dtypes = PK_FLOAT_MASK, .ndim = -1, .doc = "[total_L, inner...]" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
    { .name = "y", .dtypes = PK_FLOAT_MASK, .ndim = -1, .doc = "[B, max_L, inner...], x_values' dtype" },
};

PK_SCHEMA(jg_elementwise_add_schema, "fbgemm.jagged_dense_elementwise_add", 1,
          "dense output: jagged_to_padded_dense(x, 0) + y, so padded positions equal y",
          PK_INPUTS(elementwise_inputs), PK_OUTPUTS(one_output), .cost = jg_cost_bytes);

PK_SCHEMA(jg_elementwise_add_jagged_output_schema, "fbgemm.jagged_dense_elementwise_add_jagged_output", 1,
          "jagged output: x_values + y at the valid positions; rows past y's max_L keep x",
          PK_INPUTS(elementwise_inputs), PK_OUTPUTS(one_output), .cost = jg_cost_bytes);

PK_SCHEMA(jg_elementwise_mul_schema, "fbgemm.jagged_dense_elementwise_mul", 1,
          "jagged output: x_values * y at the valid positions; rows past y's max_L are 0",
          PK_INPUTS(elementwise_inputs), PK_OUTPUTS(one_output), .cost = jg_cost_bytes);

static const loom_arg_def mul_backward_inputs[] = {
    { .name = "grad_output", .dtypes = PK_FLOAT_MASK, .ndim = -1, .doc = "[total_L, inner...]" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
    { .name = "y", .dtypes = PK_FLOAT_MASK, .ndim = -1, .doc = "[B, max_L, inner...]" },
    { .name = "x_values", .dtypes = PK_FLOAT_MASK, .ndim = -1, .doc = "[total_L, inner...]" },
};
static const loom_arg_def mul_backward_outputs[] = {
    { .name = "x_values_grad", .dtypes = 0, .ndim = -1, .doc = "[total_L, inner...] grad_output * y" },
    { .name = "y_grad", .dtypes = 0, .ndim = -1, .doc = "[B, max_L, inner...] grad_output * x_values, 0 padded" },
};

PK_SCHEMA(jg_elementwise_mul_backward_schema, "fbgemm.jagged_dense_elementwise_mul_backward", 1,
          "gradients of jagged_dense_elementwise_mul: (grad_output * y jagged, grad_output * x_values dense)",
          PK_INPUTS(mul_backward_inputs), PK_OUTPUTS(mul_backward_outputs), .cost = jg_cost_bytes);

/* ------------------------------------------------------------------ bmm */

static void bmm_cost(const loom_call *call, double *flops, double *bytes)
{
    /* jagged_dense_bmm: 2 * total_L * K * N; jagged_jagged_bmm: 2 * total_L * M * N */
    const loom_tensor *x = call->inputs[0], *y = call->inputs[1];
    if (x == NULL || y == NULL || x->ndim != 2 || y->ndim < 2)
        return;
    jg_cost_bytes(call, flops, bytes);
    *flops = 2.0 * (double)x->shape[0] * (double)x->shape[1] * (double)y->shape[y->ndim - 1];
}

static const loom_arg_def dense_bmm_inputs[] = {
    { .name = "x_values", .dtypes = PK_FLOAT_MASK, .ndim = 2, .doc = "[total_L, K]" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
    { .name = "y", .dtypes = PK_FLOAT_MASK, .ndim = 3, .doc = "[B, K, N], x_values' dtype" },
};
PK_ATTR_TABLE(jg_bmm, JG_BMM_ATTRS);

PK_SCHEMA(jg_dense_bmm_schema, "fbgemm.jagged_dense_bmm", 1,
          "x_values [total_L, K] (jagged) @ y [B, K, N] -> [total_L, N]; rows l >= max_L of a batch row are 0",
          PK_INPUTS(dense_bmm_inputs), PK_OUTPUTS(one_output), PK_ATTRS(jg_bmm_attrs), .cost = bmm_cost);

static const loom_arg_def jagged_bmm_inputs[] = {
    { .name = "x_values", .dtypes = PK_FLOAT_MASK, .ndim = 2, .doc = "[total_L, M]" },
    { .name = "y_values", .dtypes = PK_FLOAT_MASK, .ndim = 2, .doc = "[total_L, N], x_values' dtype" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
};

PK_SCHEMA(jg_jagged_bmm_schema, "fbgemm.jagged_jagged_bmm", 1,
          "out[b] = sum over the first min(L_b, max_L) rows l of x[l]^T y[l] -> [B, M, N]",
          PK_INPUTS(jagged_bmm_inputs), PK_OUTPUTS(one_output), PK_ATTRS(jg_bmm_attrs), .cost = bmm_cost);

static void permute102_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *a = call->inputs[1], *b = call->inputs[2];
    if (a == NULL || b == NULL || a->ndim != 3 || b->ndim != 3)
        return;
    jg_cost_bytes(call, flops, bytes);
    *flops = 2.0 * (double)loom_numel(a) * (double)b->shape[2];
}

static const loom_arg_def permute102_inputs[] = {
    { .name = "bias", .dtypes = PK_FLOAT_MASK, .ndim = 2, .doc = "[b, n]" },
    { .name = "A", .dtypes = PK_FLOAT_MASK, .ndim = 3, .doc = "[m, b, k]" },
    { .name = "B", .dtypes = PK_FLOAT_MASK, .ndim = 3, .doc = "[b, k, n]" },
};

PK_SCHEMA(jg_permute102_baddbmm_schema, "fbgemm.permute102_baddbmm_permute102", 1,
          "out[i, j, :] = bias[j, :] + A[i, j, :] @ B[j] -> [m, b, n] (compact)",
          PK_INPUTS(permute102_inputs), PK_OUTPUTS(one_output), .cost = permute102_cost);

/* ---------------------------------------------------------- index_select */

static const loom_arg_def index_select_inputs[] = {
    { .name = "input", .dtypes = 0, .ndim = -1, .doc = "[N, inner...], any dtype" },
    { .name = "indices", .dtypes = JG_INDEX, .ndim = 1, .doc = "[K] in [0, N), int32 or int64" },
};
PK_ATTR_TABLE(jg_index_select, JG_INDEX_SELECT_ATTRS);

PK_SCHEMA(jg_index_select_dim0_schema, "fbgemm.index_select_dim0", 1,
          "input [N, inner..] rows at indices [K] -> [K, inner..] (torch.index_select(input, 0, indices))",
          PK_INPUTS(index_select_inputs), PK_OUTPUTS(one_output), PK_ATTRS(jg_index_select_attrs),
          .cost = jg_cost_bytes);

/* the module's ops table, compiled into both packs (jagged.h) */
PK_OPS_DEFINE(fbgemm_jagged_ops, JG_OPS);
