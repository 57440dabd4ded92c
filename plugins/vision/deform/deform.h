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

/* ------------------------------------------------------------- schemas */

extern const loom_op_schema vision_deform_conv2d_schema;
extern const loom_op_schema vision_deform_conv2d_backward_schema;
extern const loom_op_schema vision_drop_block2d_schema;
extern const loom_op_schema vision_drop_block3d_schema;
extern const loom_op_schema vision_stochastic_depth_schema;

/* Input positions in the schemas. */
enum { DC_INPUT = 0, DC_OFFSET = 1, DC_WEIGHT = 2, DC_BIAS = 3, DC_MASK = 4 };
enum { DCB_GRAD = 0, DCB_INPUT = 1, DCB_WEIGHT = 2, DCB_OFFSET = 3, DCB_MASK = 4, DCB_BIAS = 5 };
/* Attribute positions (same in forward and backward). */
enum { DC_ATTR_STRIDE = 0, DC_ATTR_PADDING = 1, DC_ATTR_DILATION = 2 };

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

enum { DROP_INPUT = 0, DROP_NOISE = 1 };
enum { DB_ATTR_P = 0, DB_ATTR_BLOCK = 1, DB_ATTR_EPS = 2, DB_ATTR_TRAINING = 3, DB_ATTR_SEED = 4 };
enum { SD_ATTR_P = 0, SD_ATTR_MODE = 1, SD_ATTR_TRAINING = 2, SD_ATTR_SEED = 3 };

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

/* ----------------------------------------------------------- registration */

loom_status vision_deform_conv_register_cpu(const loom_host_api *host, loom_registrar *reg);
loom_status vision_deform_dropout_register_cpu(const loom_host_api *host, loom_registrar *reg);

#endif /* LOOM_VISION_DEFORM_H */
