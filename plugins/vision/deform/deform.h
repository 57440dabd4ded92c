/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform.h - what the files of the vision `deform` module share:
** vision.deform_conv2d (+ _backward), vision.drop_block2d/3d and
** vision.stochastic_depth (torchvision.ops semantics).
**
** The checks (deform_checks.c) are compiled into both packs, so the cpu and
** cuda kernels refuse the same calls with the same messages. Everything here
** has hidden visibility.
*/
#ifndef LOOM_VISION_DEFORM_H
#define LOOM_VISION_DEFORM_H

#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

/* ----------------------------------------------------- schemas, attributes */

/* The ops of the module, in registration order. */
#define VISION_DEFORM_OPS(X)                                                                       \
    X(vision_deform_conv2d_schema) X(vision_deform_conv2d_backward_schema)                         \
    X(vision_drop_block2d_schema) X(vision_drop_block3d_schema) X(vision_stochastic_depth_schema)
PK_OPS_DECLARE(vision_deform_ops, VISION_DEFORM_OPS);

/* Input positions in the schemas. */
enum { DC_INPUT = 0, DC_OFFSET = 1, DC_WEIGHT = 2, DC_BIAS = 3, DC_MASK = 4 };
enum { DCB_GRAD = 0, DCB_INPUT = 1, DCB_WEIGHT = 2, DCB_OFFSET = 3, DCB_MASK = 4, DCB_BIAS = 5 };
enum { DROP_INPUT = 0, DROP_NOISE = 1 };

/* The attribute lists, A(op, name, TYPE, default, flags, doc, extra)
** (pack.h). deform_conv2d and its backward share one list (its defaults
** point at deform_schemas.c's arrays); drop_block2d and 3d share one.
** Value constraints (checked by the core; p <= 1 is the kernels' check):
** stride and dilation > 0, padding >= 0, probabilities finite and >= 0,
** block_size > 0, eps finite and >= 0; the seed is any integer. */
#define DEFORM_INTS_DEFAULT(arr) { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2, .u = { .ints = (arr) } }
#define DEFORM_CONV_ATTRS(A, op)                                                                   \
    A(op, stride, INTS, DEFORM_INTS_DEFAULT(deform_ones2), LOOM_ATTR_POSITIVE,                     \
      "(sh, sw) or one value for both; > 0", )                                                     \
    A(op, padding, INTS, DEFORM_INTS_DEFAULT(deform_zeros2), LOOM_ATTR_NONNEG,                     \
      "(ph, pw) or one value for both; >= 0 (zeros around the image)", )                           \
    A(op, dilation, INTS, DEFORM_INTS_DEFAULT(deform_ones2), LOOM_ATTR_POSITIVE,                   \
      "(dh, dw) or one value for both; > 0", )
#define DEFORM_SEED_DOC "seed of the Bernoulli draw (counter-based: same seed, same output on every backend)"
#define DROP_BLOCK_ATTRS(A, op)                                                                    \
    A(op, p, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,   \
      "probability of an element to be dropped, in [0, 1]", )                                      \
    A(op, block_size, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,             \
      "side of the dropped blocks; min(block_size, sizes) must be odd", )                          \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-6), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "added to the kept count in the normalisation", )                                            \
    A(op, training, BOOL, LOOM_DEFAULT_BOOL(1), 0, "false: identity", )                            \
    A(op, seed, INT, LOOM_DEFAULT_INT(0), 0, DEFORM_SEED_DOC, )
#define STOCHASTIC_DEPTH_ATTRS(A, op)                                                              \
    A(op, p, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,   \
      "probability of a row (or the batch) to be zeroed, in [0, 1]", )                             \
    A(op, mode, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "\"row\" or \"batch\"", )           \
    A(op, training, BOOL, LOOM_DEFAULT_BOOL(1), 0, "false: identity", )                            \
    A(op, seed, INT, LOOM_DEFAULT_INT(0), 0, DEFORM_SEED_DOC, )
PK_ATTR_ENUM(deform_conv2d, DEFORM_CONV_ATTRS);
PK_ATTR_ENUM(drop_block, DROP_BLOCK_ATTRS);
PK_ATTR_ENUM(stochastic_depth, STOCHASTIC_DEPTH_ATTRS);

/* ------------------------------------------------------- deform_conv2d */

/* The geometry of one deform_conv2d call. Every size is int64. */
typedef struct deform_geom {
    loom_dtype dtype;
    int64_t n, cin, h, w;            /* input [n, cin, h, w] */
    int64_t cout, kh, kw;            /* weight [cout, cin/groups, kh, kw] */
    int64_t groups, offset_groups;   /* inferred from the shapes as torchvision does */
    int64_t sh, sw, ph, pw, dh, dw;  /* stride, padding, dilation */
    int64_t ho, wo;                  /* output size */
    int use_mask;
    /* f16 data computed in f32: sample positions are rounded to f16 as
    ** torchvision computes them in half (floor() must see the same value) */
    int half_coords;
    /* borrowed data pointers (NULL for absent optional inputs) */
    const void *input, *offset, *weight, *bias, *mask, *grad;
} deform_geom;

/* Check a forward (backward = 0) or backward (backward = 1) call: dtypes
** equal, contiguous, attribute values, every shape against the geometry;
** fills g. Messages name the argument and the expected shape. */
loom_status deform_conv_check(const loom_call *call, int backward, deform_geom *g);

/* Allocate the outputs of a checked call (1 for forward, 5 for backward,
** with grad_mask [n, 0, ho, wo] when there is no mask). */
loom_status deform_conv_alloc(loom_call *call, const deform_geom *g, int backward, loom_tensor **outs);

/* Work of a forward call: 2 * n*cout*ho*wo * (cin/groups)*kh*kw flops. */
void deform_conv_cost(const loom_call *call, double *flops, double *bytes);
/* Work of a backward call: the two GEMMs, 4 * n*cout*ho*wo * (cin/groups)*kh*kw. */
void deform_conv_backward_cost(const loom_call *call, double *flops, double *bytes);

/* ------------------------------------------- drop_block, stochastic_depth */

/* A checked drop_block{2,3}d call. dims = 2 or 3; the spatial sizes are
** sp[0..dims) (D, H, W or H, W); the Bernoulli draw has shape
** [n, c, sp - bs + 1 ...]. identity: !training or p == 0 (output = input). */
typedef struct drop_block_plan {
    loom_dtype dtype;
    int dims;
    int identity;
    int64_t n, c, sp[3], nsp[3];     /* nsp: spatial sizes of the noise */
    int64_t bs;                      /* block size after min(block_size, sizes) */
    int64_t numel, noise_numel;
    double p, gamma, eps;
    uint64_t seed;
    const void *input, *noise;       /* noise NULL: draw it with the seed */
} drop_block_plan;

loom_status drop_block_check(const loom_call *call, int dims, drop_block_plan *pl);

/* A checked stochastic_depth call: one draw per row (mode "row": noise
** [n, 1, ...]) or one for the whole tensor (mode "batch": [1, ...]). */
typedef struct stochastic_depth_plan {
    loom_dtype dtype;
    int identity;
    int64_t rows, row_len;           /* rows = n for "row", 1 for "batch" */
    double p;
    uint64_t seed;
    const void *input, *noise;
} stochastic_depth_plan;

loom_status stochastic_depth_check(const loom_call *call, stochastic_depth_plan *pl);

/* ------------------------------------------------------------ cpu kernels */

loom_status deform_conv2d_cpu(loom_call *call);            /* deform_conv_cpu.c */
loom_status deform_conv2d_backward_cpu(loom_call *call);
loom_status drop_block2d_cpu(loom_call *call);             /* dropout_cpu.c */
loom_status drop_block3d_cpu(loom_call *call);
loom_status stochastic_depth_cpu(loom_call *call);

#endif /* LOOM_VISION_DEFORM_H */
