/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_schemas.c - the methods of the rl.tensordict object (docs/rl-tensordict.md).
** Methods that change the dict (set, del, index, select, exclude, flatten,
** unflatten, apply, update) change it in place; a new dict is a new object
** (the class's `from`).
*/
#include "td_internal.h"

static const loom_arg_def value_input[] = {
    { .name = "value", .dtypes = 0, .ndim = -1, .doc = "the tensor; its leading dims are the batch_size" },
};
static const loom_arg_def value_output[] = {
    { .name = "value", .dtypes = 0, .ndim = -1, .doc = "a copy of the tensor at key" },
};
static const loom_arg_def json_output[] = {
    { .name = "json", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1, .doc = "the value as JSON text, u8 UTF-8" },
};
static const loom_arg_def keys_outputs[] = {
    { .name = "keys", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "every leaf's key (rl.td_get's form), depth first in insertion order" },
    { .name = "keys_offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .flags = LOOM_ARG_OFFSETS, .ndim = 1,
      .doc = "i64 [K+1]" },
    { .name = "kinds", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "i64 [K]: 1 a tensor, 3 a NonTensorData" },
};
static const loom_arg_def batch_output[] = {
    { .name = "batch_size", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [batch dims]" },
};
static const loom_arg_def id_output[] = {
    { .name = "id", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "i64 [1]: the object's id" },
};
static const loom_arg_def index_input[] = {
    { .name = "index", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL),
      .flags = LOOM_ARG_OPTIONAL, .ndim = -1,
      .doc = "along batch dim 0: i64 [] an int, i64 [N] indices, bool [B] a mask; absent: the slice attribute" },
};

PK_ATTR_TABLE(rl_td_key, RL_TD_KEY_ATTRS);
PK_ATTR_TABLE(rl_td_set_non_tensor, RL_TD_SET_NON_TENSOR_ATTRS);
PK_ATTR_TABLE(rl_td_index, RL_TD_INDEX_ATTRS);
PK_ATTR_TABLE(rl_td_keys_list, RL_TD_KEYS_LIST_ATTRS);
PK_ATTR_TABLE(rl_td_sep, RL_TD_SEP_ATTRS);
PK_ATTR_TABLE(rl_td_apply, RL_TD_APPLY_ATTRS);
PK_ATTR_TABLE(rl_td_update, RL_TD_UPDATE_ATTRS);
PK_ATTR_TABLE(rl_td_save, RL_TD_SAVE_ATTRS);

#define METHOD .object_class = RL_TD_CLASS

PK_SCHEMA(rl_td_set_schema, "rl.td_set", 1, "td[key] = value (a copy of the tensor)",
          PK_INPUTS(value_input), PK_ATTRS(rl_td_key_attrs), METHOD);
PK_SCHEMA(rl_td_get_schema, "rl.td_get", 1, "td[key]: a copy of the tensor",
          PK_OUTPUTS(value_output), PK_ATTRS(rl_td_key_attrs), METHOD);
PK_SCHEMA(rl_td_set_non_tensor_schema, "rl.td_set_non_tensor", 1,
          "td[key] = NonTensorData(value) for a JSON value (string, number, bool, null, list, object); stack=true: "
          "NonTensorStack.from_list(value), one value per element",
          PK_ATTRS(rl_td_set_non_tensor_attrs), METHOD);
PK_SCHEMA(rl_td_get_non_tensor_schema, "rl.td_get_non_tensor", 1, "the NonTensorData at key, as JSON text",
          PK_OUTPUTS(json_output), PK_ATTRS(rl_td_key_attrs), METHOD);
PK_SCHEMA(rl_td_del_schema, "rl.td_del", 1, "del td[key] (a leaf or a nested TensorDict)",
          PK_ATTRS(rl_td_key_attrs), METHOD);
PK_SCHEMA(rl_td_keys_schema, "rl.td_keys", 1, "td.keys(include_nested=True, leaves_only=True)",
          PK_OUTPUTS(keys_outputs), METHOD);
PK_SCHEMA(rl_td_batch_size_schema, "rl.td_batch_size", 1, "td.batch_size", PK_OUTPUTS(batch_output), METHOD);
PK_SCHEMA(rl_td_describe_schema, "rl.td_describe", 1,
          "the structure as JSON: {\"batch_size\": [...], \"entries\": [{\"key\", \"kind\": \"tensor\", \"dtype\", "
          "\"shape\"} | {\"key\", \"kind\": \"non_tensor\", \"value\"}]}", PK_OUTPUTS(json_output), METHOD);
PK_SCHEMA(rl_td_id_schema, "rl.td_id", 1, "the object's id, which names it to other objects and methods",
          PK_OUTPUTS(id_output), METHOD);
PK_SCHEMA(rl_td_index_schema, "rl.td_index", 1,
          "td = td[index] along batch dim 0: an int, a slice, a boolean mask or an index tensor",
          PK_INPUTS(index_input), PK_ATTRS(rl_td_index_attrs), METHOD);
PK_SCHEMA(rl_td_select_schema, "rl.td_select", 1, "td = td.select(*keys, strict=strict)",
          PK_ATTRS(rl_td_keys_list_attrs), METHOD);
PK_SCHEMA(rl_td_exclude_schema, "rl.td_exclude", 1, "td = td.exclude(*keys) (strict is ignored)",
          PK_ATTRS(rl_td_keys_list_attrs), METHOD);
PK_SCHEMA(rl_td_flatten_keys_schema, "rl.td_flatten_keys", 1, "td = td.flatten_keys(separator)",
          PK_ATTRS(rl_td_sep_attrs), METHOD);
PK_SCHEMA(rl_td_unflatten_keys_schema, "rl.td_unflatten_keys", 1, "td = td.unflatten_keys(separator)",
          PK_ATTRS(rl_td_sep_attrs), METHOD);
PK_SCHEMA(rl_td_apply_schema, "rl.td_apply", 1, "td = td.apply(fn): the op fn on every tensor leaf",
          PK_ATTRS(rl_td_apply_attrs), METHOD);
PK_SCHEMA(rl_td_update_schema, "rl.td_update", 1, "td.update(source): the entries of another TensorDict",
          PK_ATTRS(rl_td_update_attrs), METHOD);
PK_SCHEMA(rl_td_save_schema, "rl.td_save", 1,
          "td.memmap(path): tensordict's memmap layout, NonTensorData included, leaves written in parallel",
          PK_ATTRS(rl_td_save_attrs), METHOD);

PK_OPS_DEFINE(rl_td_ops, RL_TD_OPS);
