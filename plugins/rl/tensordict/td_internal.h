/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_internal.h - what the files of the tensordict module share: the
** rl.tensordict class and method schemas (td_schemas.c), the object state
** and its registry (td_object.c) and the method kernels (td_methods.c).
*/
#ifndef LOOM_RL_TD_INTERNAL_H
#define LOOM_RL_TD_INTERNAL_H

#include <pthread.h>

#include "pack.h"
#include "td.h"
#include "td_memmap.h"

#define RL_TD_CLASS "rl.tensordict"

#define RL_TD_OPS(X)                 \
    X(rl_td_set_schema)              \
    X(rl_td_get_schema)              \
    X(rl_td_set_non_tensor_schema)   \
    X(rl_td_get_non_tensor_schema)   \
    X(rl_td_del_schema)              \
    X(rl_td_keys_schema)             \
    X(rl_td_batch_size_schema)       \
    X(rl_td_describe_schema)         \
    X(rl_td_id_schema)               \
    X(rl_td_index_schema)            \
    X(rl_td_select_schema)           \
    X(rl_td_exclude_schema)          \
    X(rl_td_flatten_keys_schema)     \
    X(rl_td_unflatten_keys_schema)   \
    X(rl_td_apply_schema)            \
    X(rl_td_update_schema)           \
    X(rl_td_save_schema)
PK_OPS_DECLARE(rl_td_ops, RL_TD_OPS);

/* The class: how a TensorDict is made. */
#define RL_TD_CLASS_ATTRS(A, op)                                                                  \
    A(op, from, STRING, LOOM_DEFAULT_STRING("empty"), 0,                                          \
      "empty (batch_size) | load (path, or the file named src) | clone | stack | cat | split | "   \
      "unbind (of the TensorDicts whose ids are sources)", )                                      \
    A(op, batch_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG, "from=empty: the batch_size", )   \
    A(op, path, STRING, LOOM_DEFAULT_STRING(""), 0, "from=load: a tensordict memmap directory", ) \
    A(op, map, STRING, LOOM_DEFAULT_STRING("private"), 0,                                         \
      "from=load: private (copy-on-write mapping) | shared (writes reach the files) | read (copied in) | "  \
      "read_only (mapped, writes refused)", ) \
    A(op, sources, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE,                                   \
      "ids (rl.td_id) of the TensorDicts to clone, stack, cat, split or unbind", )                \
    A(op, dim, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "the batch dim of stack, cat, split, unbind", ) \
    A(op, sizes, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG,                                       \
      "from=split: one split_size, or the size of every piece", )                                 \
    A(op, part, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "from=split|unbind: which piece this object is", )
PK_ATTR_ENUM(rl_td_class, RL_TD_CLASS_ATTRS);

#define RL_KEY_ATTR(A, op) \
    A(op, key, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                     \
      "a key: \"obs\", \"next.reward\" for (\"next\",\"reward\"), or a JSON list [\"next\",\"a.b\"]", )
#define RL_TD_KEY_ATTRS(A, op) RL_KEY_ATTR(A, op)
#define RL_TD_SET_NON_TENSOR_ATTRS(A, op) \
    RL_KEY_ATTR(A, op)                    \
    A(op, json, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the value as JSON: \"\\\"text\\\"\", 3, [1,2], {...}", ) \
    A(op, stack, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                   \
      "a NonTensorStack: json is nested lists of the batch_size, one value per element", )
#define RL_TD_INDEX_ATTRS(A, op)                                                                   \
    A(op, slice, INTS, LOOM_DEFAULT_NONE, 0,                                                      \
      "[start, stop] or [start, stop, step] along batch dim 0 when no index tensor is given "      \
      "(Python's rules; use INT64_MIN/INT64_MAX for open ends)", )
#define RL_TD_KEYS_LIST_ATTRS(A, op)                                                               \
    A(op, keys, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                    \
      "comma-separated keys (\"obs,next.reward\"), or a JSON list of keys", )                    \
    A(op, strict, BOOL, LOOM_DEFAULT_BOOL(1), 0, "select: a key that is absent is an error", )
#define RL_TD_SEP_ATTRS(A, op) \
    A(op, separator, STRING, LOOM_DEFAULT_STRING("."), 0, "joins the components of a flattened key", )
#define RL_TD_APPLY_ATTRS(A, op) \
    A(op, fn, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                      \
      "an op of one tensor input and one output, run on every tensor leaf", )                    \
    A(op, attrs, STRING, LOOM_DEFAULT_STRING(""), 0,                                              \
      "the op's attributes, name=value comma-separated (\"dtype=f64\"): integers, floats, "      \
      "true/false, else strings", )
#define RL_TD_UPDATE_ATTRS(A, op) \
    A(op, source, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, "id of the TensorDict to take entries from", )
#define RL_TD_SAVE_ATTRS(A, op) \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the directory (tensordict's memmap layout)", )

PK_ATTR_ENUM(rl_td_key, RL_TD_KEY_ATTRS);
PK_ATTR_ENUM(rl_td_set_non_tensor, RL_TD_SET_NON_TENSOR_ATTRS);
PK_ATTR_ENUM(rl_td_index, RL_TD_INDEX_ATTRS);
PK_ATTR_ENUM(rl_td_keys_list, RL_TD_KEYS_LIST_ATTRS);
PK_ATTR_ENUM(rl_td_sep, RL_TD_SEP_ATTRS);
PK_ATTR_ENUM(rl_td_apply, RL_TD_APPLY_ATTRS);
PK_ATTR_ENUM(rl_td_update, RL_TD_UPDATE_ATTRS);
PK_ATTR_ENUM(rl_td_save, RL_TD_SAVE_ATTRS);

extern const loom_object_class rl_td_class;

/* The state of an rl.tensordict object. Its id names it to create (sources)
** and rl.td_update (source). lock serialises the methods of one object. */
#define RL_TD_OBJECT_MAGIC 0x72746431u   /* "rtd1" */
typedef struct rl_td_object {
    uint32_t struct_size;
    uint32_t magic;
    int64_t id;
    pthread_mutex_t lock;
    rl_td *td;
} rl_td_object;

/* A copy (sharing leaf bytes) of the TensorDict of object id; LOOM_ENOENT
** naming `what` when no live object has it. Never holds an object's lock
** while it takes the registry's, so callers may hold their own. */
loom_status rl_td_registry_clone(int64_t id, const char *what, rl_td **out);

/* Replace the TensorDict of object id by td (owned, freed also on failure). */
loom_status rl_td_registry_replace(int64_t id, const char *what, rl_td *td);

/* Parse a list of keys ("a,next.b" or a JSON list of keys) into malloc'd
** keys and storage; free both with free(). */
loom_status rl_keys_parse_list(const char *text, rl_key **keys, int64_t *n, char **storage, const char *what);

#endif /* LOOM_RL_TD_INTERNAL_H */
