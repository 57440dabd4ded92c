/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rb_schemas.c - the methods of the rl.replay_buffer object.
*/
#include "rb.h"

static const loom_arg_def index_output[] = {
    { .name = "index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "i64 [N]: where each item went (-1: not kept by the max-value writer)" },
};
static const loom_arg_def sample_outputs[] = {
    { .name = "index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [B]: the items drawn" },
    { .name = "priority_weight", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1,
      .doc = "f32 [B]: importance weights (prioritized), else empty" },
};
static const loom_arg_def priority_inputs[] = {
    { .name = "index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [N]; -1 entries are skipped" },
    { .name = "priority", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = -1,
      .doc = "f32|f64 [N] or one value" },
};
static const loom_arg_def weight_input[] = {
    { .name = "index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [N] stored items" },
};
static const loom_arg_def weight_output[] = {
    { .name = "priority_weight", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1,
      .doc = "f32 [N]: (tree[i] / p_min) ^ -beta, as a sample of them would carry" },
};
static const loom_arg_def priorities_output[] = {
    { .name = "priorities", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1,
      .doc = "f64 [len]: the sum tree's leaves, (p + eps) ^ alpha in the tree's precision" },
};
static const loom_arg_def len_output[] = {
    { .name = "len", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [2]: len(buffer), write count" },
};

PK_ATTR_TABLE(rl_rb_extend, RL_RB_EXTEND_ATTRS);
PK_ATTR_TABLE(rl_rb_sample, RL_RB_SAMPLE_ATTRS);
PK_ATTR_TABLE(rl_rb_path, RL_RB_PATH_ATTRS);
PK_ATTR_TABLE(rl_rb_dumps, RL_RB_DUMPS_ATTRS);

#define METHOD .object_class = RL_RB_CLASS

PK_SCHEMA(rl_rb_extend_schema, "rl.rb_extend", 1, "rb.extend(td): the items of a TensorDict (by id)",
          PK_OUTPUTS(index_output), PK_ATTRS(rl_rb_extend_attrs), METHOD);
PK_SCHEMA(rl_rb_sample_schema, "rl.rb_sample", 1,
          "rb.sample(batch_size, return_info=True): the indices, importance weights and (into dest) the items",
          PK_OUTPUTS(sample_outputs), PK_ATTRS(rl_rb_sample_attrs), METHOD);
PK_SCHEMA(rl_rb_update_priority_schema, "rl.rb_update_priority", 1, "rb.update_priority(index, priority)",
          PK_INPUTS(priority_inputs), METHOD);
PK_SCHEMA(rl_rb_priority_weight_schema, "rl.rb_priority_weight", 1,
          "the importance weights PrioritizedSampler gives these items now", PK_INPUTS(weight_input),
          PK_OUTPUTS(weight_output), METHOD);
PK_SCHEMA(rl_rb_priorities_schema, "rl.rb_priorities", 1, "the priority tree's leaves of the stored items",
          PK_OUTPUTS(priorities_output), METHOD);
PK_SCHEMA(rl_rb_len_schema, "rl.rb_len", 1, "len(rb) and the writer's write count", PK_OUTPUTS(len_output), METHOD);

PK_SCHEMA(rl_rb_dumps_schema, "rl.rb_dumps", 1,
          "rb.dumps(path): torchrl's layout, atomically (written aside, synced, swapped in)",
          PK_ATTRS(rl_rb_dumps_attrs), METHOD);
PK_SCHEMA(rl_rb_loads_schema, "rl.rb_loads", 1, "rb.loads(path): the state of a dump; unchanged if it fails",
          PK_ATTRS(rl_rb_path_attrs), METHOD);

static const loom_arg_def id_output[] = {
    { .name = "id", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [1]: the buffer's id" },
};
PK_SCHEMA(rl_rb_id_schema, "rl.rb_id", 1, "the buffer's id, which names it to an rl.replay_buffer_ensemble",
          PK_OUTPUTS(id_output), METHOD);

static const loom_arg_def ensemble_outputs[] = {
    { .name = "index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [B]: items in their buffers" },
    { .name = "buffer_ids", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "i64 [B]: the member (position in buffers) of each item" },
};
PK_SCHEMA(rl_rb_ensemble_sample_schema, "rl.rb_ensemble_sample", 1,
          "ReplayBufferEnsemble.sample: members chosen by p (or all), batch_size / num_buffer_sampled items from each",
          PK_OUTPUTS(ensemble_outputs), PK_ATTRS(rl_rb_sample_attrs), .object_class = RL_RBE_CLASS);

#define RL_RB_EXTEND_LIST_ATTRS(A, op) \
    A(op, json, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "a JSON array: one item (any JSON value) each", )
PK_ATTR_TABLE(rl_rb_extend_list, RL_RB_EXTEND_LIST_ATTRS);
PK_SCHEMA(rl_rb_extend_list_schema, "rl.rb_extend_list", 1,
          "rb.extend(list) on a ListStorage: non-tensor items, as JSON; a sample gives them as the JSON list \"data\"",
          PK_OUTPUTS(index_output), PK_ATTRS(rl_rb_extend_list_attrs), METHOD);

#define RL_RB_EXTEND_TED_ATTRS(A, op)                                                              \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                    \
      "a TED dataset: a TensorDict directory in tensordict's memmap layout", )                    \
    A(op, chunk, INT, LOOM_DEFAULT_INT(65536), LOOM_ATTR_POSITIVE, "items copied per extend", )
PK_ATTR_TABLE(rl_rb_extend_ted, RL_RB_EXTEND_TED_ATTRS);
static const loom_arg_def count_output[] = {
    { .name = "count", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [1]: the items streamed in" },
};
PK_SCHEMA(rl_rb_extend_ted_schema, "rl.rb_extend_ted", 1,
          "stream a TED dataset (TorchRL Episode Data on disk) into the buffer, batch dims flattened, keys checked",
          PK_OUTPUTS(count_output), PK_ATTRS(rl_rb_extend_ted_attrs), METHOD);

static const loom_arg_def trajectories_outputs[] = {
    { .name = "start", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [N]: each trajectory's first slot" },
    { .name = "stop", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "i64 [N]: its last slot (below start when it wraps past the end of a full storage)" },
    { .name = "length", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [N]: its items" },
};
PK_SCHEMA(rl_rb_trajectories_schema, "rl.rb_trajectories", 1,
          "the trajectories a slice sampler draws from, as torchrl's find_start_stop_traj(at_capacity, cursor) "
          "recovers them from traj_key or end_key",
          PK_OUTPUTS(trajectories_outputs), METHOD);

PK_OPS_DEFINE(rl_rb_ops, RL_RB_OPS);
