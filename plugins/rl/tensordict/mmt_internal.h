/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mmt_internal.h - the rl.memmap_tensor object (tensordict's
** MemoryMappedTensor) and its rl.mmt_* methods: what mmt_object.c (the
** class) and mmt_methods.c (the method schemas and kernels) share.
*/
#ifndef LOOM_RL_MMT_INTERNAL_H
#define LOOM_RL_MMT_INTERNAL_H

#include "memmap_tensor.h"
#include "pack.h"

#define RL_MMT_CLASS "rl.memmap_tensor"

#define RL_MMT_OPS(X)               \
    X(rl_mmt_as_tensor_schema)      \
    X(rl_mmt_write_schema)          \
    X(rl_mmt_flush_schema)          \
    X(rl_mmt_describe_schema)
PK_OPS_DECLARE(rl_mmt_ops, RL_MMT_OPS);

#define RL_MMT_CLASS_ATTRS(A, op)                                                                   \
    A(op, from, STRING, LOOM_DEFAULT_STRING("from_filename"), 0,                                    \
      "from_tensor (the tensor named input, loom_object_options.tensors) | empty (zeros of shape and " \
      "dtype) | from_filename (an existing file of shape and dtype)", )                              \
    A(op, filename, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the file holding the bytes", )  \
    A(op, dtype, STRING, LOOM_DEFAULT_STRING(""), 0,                                                \
      "empty, from_filename: torch's name (\"torch.float32\", \"float32\", \"torch.bool\", ...)", ) \
    A(op, shape, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG, "empty, from_filename: the shape (none: a scalar)", ) \
    A(op, existsok, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                  \
      "from_tensor, empty: replace the content of an existing file instead of refusing it", )       \
    A(op, mode, STRING, LOOM_DEFAULT_STRING("auto"), 0,                                             \
      "from_filename: auto (shared when the file is writable, else private, as tensordict) | shared " \
      "(writes reach the file) | private (copy-on-write) | read_only (writes refused)", )
PK_ATTR_ENUM(rl_mmt_class, RL_MMT_CLASS_ATTRS);

#define RL_MMT_ROWS_ATTRS(A, op)                                                                    \
    A(op, rows, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_NONNEG,                                          \
      "[start, stop]: only these rows along dim 0 (none: the whole tensor)", )
#define RL_MMT_WRITE_ATTRS(A, op)                                                                   \
    A(op, offset, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                       \
      "the first row along dim 0 that value's rows replace", )
PK_ATTR_ENUM(rl_mmt_rows, RL_MMT_ROWS_ATTRS);
PK_ATTR_ENUM(rl_mmt_write, RL_MMT_WRITE_ATTRS);

extern const loom_object_class rl_mmt_class;

/* The state of an rl.memmap_tensor. Nothing of it changes after create but
** the mapped bytes, so methods run concurrently without a lock; concurrent
** writes to the same rows race as they would on a torch tensor. */
#define RL_MMT_OBJECT_MAGIC 0x726d6d31u   /* "rmm1" */
typedef struct rl_mmt_object {
    uint32_t struct_size;
    uint32_t magic;
    char *filename;
    rl_map_mode mode;
    rl_leaf leaf;           /* dtype, shape and the mapping (buf) */
} rl_mmt_object;

/* A dtype by torch's name, with or without "torch." (INVALID when none). */
loom_dtype rl_mmt_dtype_parse(const char *name);

#endif /* LOOM_RL_MMT_INTERNAL_H */
