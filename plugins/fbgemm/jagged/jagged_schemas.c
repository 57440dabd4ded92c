/*
** jagged_schemas.c - definitions of the fbgemm jagged ops (compiled into
** both fbgemm packs). Names, argument names and attribute names are those
** of torch.ops.fbgemm.<op> in fbgemm_gpu 1.9. Where fbgemm takes a list of
** offsets (Tensor[] offsets), loom takes the one offsets tensor of a single
** jagged dimension, except jagged_to_padded_dense, its backward and
** dense_to_jagged, which take up to three (offsets, offsets_1, offsets_2).
** Where fbgemm returns (values, offsets), loom returns the values only:
** the offsets are the input's.
*/
#include "jagged.h"
#include "register.h"

/* Value constraints (checked by the core): lengths and row counts >= 0 (the
** kernels check them too). padding_value has none: -inf and NaN padding
** are meaningful, and integer outputs check it is representable. */
#define ATTR_INT_REQUIRED(nm, d) \
    { .name = nm, .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG, \
      .dflt = LOOM_DEFAULT_NONE, .doc = d }

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
static const loom_attr_def to_padded_attrs[] = {
    { .name = "max_lengths", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_NONE,
      .doc = "one max length per jagged dim: entries kept per row; longer rows are truncated" },
    { .name = "padding_value", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(0.0),
      .doc = "value of the positions past a row's length" },
};

const loom_op_schema jg_jagged_to_padded_dense_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_to_padded_dense",
    .version = 1,
    .doc = "jagged values [total_L, inner..] + offsets [B+1] (+ deeper levels) -> dense [B, max_L.., inner..], "
           "padded, rows truncated",
    .n_inputs = 4, .inputs = to_padded_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 2, .attrs = to_padded_attrs,
    .cost = jg_cost_bytes,
};

static const loom_arg_def to_padded_backward_inputs[] = {
    { .name = "grad_output", .dtypes = JG_COPYABLE, .ndim = -1, .doc = "[B, max_L.., inner...]" },
    OFFSETS_LIST("offsets", "[B+1], int32 or int64"),
};
static const loom_attr_def to_padded_backward_attrs[] = {
    ATTR_INT_REQUIRED("total_L", "rows of the gradient of values (offsets[B] <= total_L)"),
};

const loom_op_schema jg_jagged_to_padded_dense_backward_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_to_padded_dense_backward",
    .version = 1,
    .doc = "gradient of values: the valid positions of grad_output [B, max_L.., inner..] -> [total_L, inner..]",
    .n_inputs = 4, .inputs = to_padded_backward_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = to_padded_backward_attrs,
    .cost = jg_cost_bytes,
};

/* -------------------------------------------------------- dense_to_jagged */

static const loom_arg_def to_jagged_inputs[] = {
    { .name = "dense", .dtypes = JG_COPYABLE, .ndim = -1, .doc = "[B, max_L.., inner...]" },
    OFFSETS_LIST("x_offsets", "[B+1], int32 or int64"),
};
static const loom_attr_def to_jagged_attrs[] = {
    { .name = "total_L", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_NONNEG, .dflt = LOOM_DEFAULT_NONE,
      .doc = "rows of the output (default: the last offset); rows past a dense row's extent are 0" },
};

const loom_op_schema jg_dense_to_jagged_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.dense_to_jagged",
    .version = 1,
    .doc = "the valid positions of dense [B, max_L.., inner..] as jagged values [total_L, inner..]",
    .n_inputs = 4, .inputs = to_jagged_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = to_jagged_attrs,
    .cost = jg_cost_bytes,
};

/* ---------------------------------------------------------- elementwise */

static const loom_arg_def elementwise_inputs[] = {
    { .name = "x_values", .dtypes = JG_FLOATS, .ndim = -1, .doc = "[total_L, inner...]" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
    { .name = "y", .dtypes = JG_FLOATS, .ndim = -1, .doc = "[B, max_L, inner...], x_values' dtype" },
};

const loom_op_schema jg_elementwise_add_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_dense_elementwise_add",
    .version = 1,
    .doc = "dense output: jagged_to_padded_dense(x, 0) + y, so padded positions equal y",
    .n_inputs = 3, .inputs = elementwise_inputs,
    .n_outputs = 1, .outputs = one_output,
    .cost = jg_cost_bytes,
};

const loom_op_schema jg_elementwise_add_jagged_output_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_dense_elementwise_add_jagged_output",
    .version = 1,
    .doc = "jagged output: x_values + y at the valid positions; rows past y's max_L keep x",
    .n_inputs = 3, .inputs = elementwise_inputs,
    .n_outputs = 1, .outputs = one_output,
    .cost = jg_cost_bytes,
};

const loom_op_schema jg_elementwise_mul_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_dense_elementwise_mul",
    .version = 1,
    .doc = "jagged output: x_values * y at the valid positions; rows past y's max_L are 0",
    .n_inputs = 3, .inputs = elementwise_inputs,
    .n_outputs = 1, .outputs = one_output,
    .cost = jg_cost_bytes,
};

static const loom_arg_def mul_backward_inputs[] = {
    { .name = "grad_output", .dtypes = JG_FLOATS, .ndim = -1, .doc = "[total_L, inner...]" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
    { .name = "y", .dtypes = JG_FLOATS, .ndim = -1, .doc = "[B, max_L, inner...]" },
    { .name = "x_values", .dtypes = JG_FLOATS, .ndim = -1, .doc = "[total_L, inner...]" },
};
static const loom_arg_def mul_backward_outputs[] = {
    { .name = "x_values_grad", .dtypes = 0, .ndim = -1, .doc = "[total_L, inner...] grad_output * y" },
    { .name = "y_grad", .dtypes = 0, .ndim = -1, .doc = "[B, max_L, inner...] grad_output * x_values, 0 padded" },
};

const loom_op_schema jg_elementwise_mul_backward_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_dense_elementwise_mul_backward",
    .version = 1,
    .doc = "gradients of jagged_dense_elementwise_mul: (grad_output * y jagged, grad_output * x_values dense)",
    .n_inputs = 4, .inputs = mul_backward_inputs,
    .n_outputs = 2, .outputs = mul_backward_outputs,
    .cost = jg_cost_bytes,
};

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
    { .name = "x_values", .dtypes = JG_FLOATS, .ndim = 2, .doc = "[total_L, K]" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
    { .name = "y", .dtypes = JG_FLOATS, .ndim = 3, .doc = "[B, K, N], x_values' dtype" },
};
static const loom_attr_def bmm_attrs[] = {
    ATTR_INT_REQUIRED("max_L", "rows of each batch row that take part; later rows give 0"),
};

const loom_op_schema jg_dense_bmm_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_dense_bmm",
    .version = 1,
    .doc = "x_values [total_L, K] (jagged) @ y [B, K, N] -> [total_L, N]; rows l >= max_L of a batch row are 0",
    .n_inputs = 3, .inputs = dense_bmm_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = bmm_attrs,
    .cost = bmm_cost,
};

static const loom_arg_def jagged_bmm_inputs[] = {
    { .name = "x_values", .dtypes = JG_FLOATS, .ndim = 2, .doc = "[total_L, M]" },
    { .name = "y_values", .dtypes = JG_FLOATS, .ndim = 2, .doc = "[total_L, N], x_values' dtype" },
    { .name = "x_offsets", .dtypes = JG_INDEX, .ndim = 1, .doc = "[B+1], int32 or int64" },
};

const loom_op_schema jg_jagged_bmm_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.jagged_jagged_bmm",
    .version = 1,
    .doc = "out[b] = sum over the first min(L_b, max_L) rows l of x[l]^T y[l] -> [B, M, N]",
    .n_inputs = 3, .inputs = jagged_bmm_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 1, .attrs = bmm_attrs,
    .cost = bmm_cost,
};

static void permute102_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *a = call->inputs[1], *b = call->inputs[2];
    if (a == NULL || b == NULL || a->ndim != 3 || b->ndim != 3)
        return;
    jg_cost_bytes(call, flops, bytes);
    *flops = 2.0 * (double)loom_numel(a) * (double)b->shape[2];
}

static const loom_arg_def permute102_inputs[] = {
    { .name = "bias", .dtypes = JG_FLOATS, .ndim = 2, .doc = "[b, n]" },
    { .name = "A", .dtypes = JG_FLOATS, .ndim = 3, .doc = "[m, b, k]" },
    { .name = "B", .dtypes = JG_FLOATS, .ndim = 3, .doc = "[b, k, n]" },
};

const loom_op_schema jg_permute102_baddbmm_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.permute102_baddbmm_permute102",
    .version = 1,
    .doc = "out[i, j, :] = bias[j, :] + A[i, j, :] @ B[j] -> [m, b, n] (compact)",
    .n_inputs = 3, .inputs = permute102_inputs,
    .n_outputs = 1, .outputs = one_output,
    .cost = permute102_cost,
};

/* ---------------------------------------------------------- index_select */

static const loom_arg_def index_select_inputs[] = {
    { .name = "input", .dtypes = 0, .ndim = -1, .doc = "[N, inner...], any dtype" },
    { .name = "indices", .dtypes = JG_INDEX, .ndim = 1, .doc = "[K] in [0, N), int32 or int64" },
};
static const loom_attr_def index_select_attrs[] = {
    { .name = "consecutive_range_start", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_NONNEG, .dflt = LOOM_DEFAULT_INT(0),
      .doc = "backward hint of fbgemm's GPU path; no effect on the forward" },
    { .name = "consecutive_range_length", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_NONNEG, .dflt = LOOM_DEFAULT_INT(0),
      .doc = "backward hint of fbgemm's GPU path; no effect on the forward" },
    { .name = "skip_indices_sorting_fwd", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(0),
      .doc = "fbgemm's GPU path sorts indices for locality unless set; no effect on the result" },
};

const loom_op_schema jg_index_select_dim0_schema = {
    .struct_size = sizeof(loom_op_schema),
    .name = "fbgemm.index_select_dim0",
    .version = 1,
    .doc = "input [N, inner..] rows at indices [K] -> [K, inner..] (torch.index_select(input, 0, indices))",
    .n_inputs = 2, .inputs = index_select_inputs,
    .n_outputs = 1, .outputs = one_output,
    .n_attrs = 3, .attrs = index_select_attrs,
    .cost = jg_cost_bytes,
};

const loom_op_schema *const fbgemm_jagged_ops[] = {
    &jg_jagged_to_padded_dense_schema,
    &jg_jagged_to_padded_dense_backward_schema,
    &jg_dense_to_jagged_schema,
    &jg_elementwise_add_schema,
    &jg_elementwise_add_jagged_output_schema,
    &jg_elementwise_mul_schema,
    &jg_elementwise_mul_backward_schema,
    &jg_dense_bmm_schema,
    &jg_jagged_bmm_schema,
    &jg_permute102_baddbmm_schema,
    &jg_index_select_dim0_schema,
};
const size_t fbgemm_jagged_n_ops = PK_COUNT(fbgemm_jagged_ops);
