/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi.h - what the files of the roi module share: the eight RoI ops of
** torchvision.ops (roi_align, roi_pool, ps_roi_align, ps_roi_pool and the
** four backward ops torchvision registers), their schemas, the argument
** checks every backend runs and the cpu kernels.
**
** Geometry (torchvision semantics): input [N, C, H, W]; rois [K, 5] rows
** (batch_index, x1, y1, x2, y2) in input coordinates, scaled by
** spatial_scale; output [K, C_out, PH, PW] where C_out = C for roi_align /
** roi_pool and C / (PH * PW) for the position-sensitive ops, whose output
** bin (c, i, j) reads input channel (c * PH + i) * PW + j.
**
** Contracts of roi_check_*: they only read shapes, dtypes and attributes
** (never tensor data, which may live on a device), and fail through
** pk_host->fail naming the argument and what was expected. The value
** checks (batch index of each roi, argmax / channel_mapping entries) read
** host memory and are done by roi_check_batch_indices and
** roi_check_index_map.
*/
#ifndef LOOM_VISION_ROI_H
#define LOOM_VISION_ROI_H

#include "vision_pack.h"

/* The four forward kinds; backward ops share the kind of their forward. */
typedef enum roi_kind {
    ROI_ALIGN = 0,
    ROI_POOL = 1,
    PS_ROI_ALIGN = 2,
    PS_ROI_POOL = 3
} roi_kind;

/* Largest adaptive sampling grid per bin side: ceil(roi_size / bins) above
** this is refused (torchvision stores it in an int; such a roi would also
** take hours). 2^15 keeps grid_h * grid_w inside an int32. */
#define ROI_MAX_GRID 32768

/* Everything a kernel needs to know about one call. */
typedef struct roi_geom {
    roi_kind kind;
    int backward;
    loom_dtype dtype;           /* of input / grad and rois */
    int64_t n, c, h, w;         /* input (forward) or grad_input (backward) */
    int64_t k;                  /* rois */
    int64_t ph, pw;             /* pooled height and width */
    int64_t c_out;              /* channels of output / grad */
    double spatial_scale;
    int64_t sampling_ratio;     /* > 0 fixed, else adaptive */
    int aligned;
    int has_index_map;          /* roi_pool argmax or ps channel_mapping is an output/input */
} roi_geom;

/* The ops of the module, in registration order: the four forward ops,
** then their backward ops in the same order (roi_ids follows it). */
#define VISION_ROI_OPS(X)                                                                          \
    X(roi_align_schema) X(roi_pool_schema) X(ps_roi_align_schema) X(ps_roi_pool_schema)            \
    X(roi_align_backward_schema) X(roi_pool_backward_schema) X(ps_roi_align_backward_schema)       \
    X(ps_roi_pool_backward_schema)
PK_OPS_DECLARE(vision_roi_ops, VISION_ROI_OPS);

/* Attribute rows, A(op, name, TYPE, default, flags, doc, extra) (pack.h).
** Value constraints (checked by the core): bins and sizes are counts, the
** scale maps box coordinates to the map and must be finite and > 0 (the
** kernels also refuse rois whose scaled coordinates overflow). No flag on
** sampling_ratio: torchvision reads <= 0 as adaptive. */
#define ROI_A_OUTPUT_SIZE(A, op)                                                                   \
    A(op, output_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "[PH, PW], or [S] for S x S", )
#define ROI_A_SCALE(A, op)                                                                         \
    A(op, spatial_scale, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,    \
      "box coordinates times spatial_scale are feature-map coordinates", )
#define ROI_A_SAMPLING(A, op)                                                                      \
    A(op, sampling_ratio, INT, LOOM_DEFAULT_INT(-1), 0,                                            \
      "samples per bin side; <= 0: adaptive, ceil(roi_size / output_size)", )
#define ROI_A_ALIGNED(A, op)                                                                       \
    A(op, aligned, BOOL, LOOM_DEFAULT_BOOL(0), 0, "shift the box by -0.5 pixel (pixel-centre alignment)", )
#define ROI_A_REQ_INT(A, op, name, flags, doc)                                                     \
    A(op, name, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | (flags), doc, )
#define ROI_A_BINS(A, op)                                                                          \
    ROI_A_REQ_INT(A, op, pooled_height, LOOM_ATTR_POSITIVE, "PH")                                  \
    ROI_A_REQ_INT(A, op, pooled_width, LOOM_ATTR_POSITIVE, "PW")
#define ROI_A_INPUT_SIZE(A, op)                                                                    \
    ROI_A_REQ_INT(A, op, batch_size, LOOM_ATTR_NONNEG, "N of the input")                           \
    ROI_A_REQ_INT(A, op, channels, LOOM_ATTR_NONNEG, "C of the input")                             \
    ROI_A_REQ_INT(A, op, height, LOOM_ATTR_NONNEG, "H of the input")                               \
    ROI_A_REQ_INT(A, op, width, LOOM_ATTR_NONNEG, "W of the input")

/* The lists of the ops, in torchvision's argument order. roi_pool and
** ps_roi_pool share one list, as do their backward ops. */
#define ROI_ALIGN_ATTRS(A, op)                                                                     \
    ROI_A_OUTPUT_SIZE(A, op) ROI_A_SCALE(A, op) ROI_A_SAMPLING(A, op) ROI_A_ALIGNED(A, op)
#define ROI_POOL_ATTRS(A, op) ROI_A_OUTPUT_SIZE(A, op) ROI_A_SCALE(A, op)
#define PS_ROI_ALIGN_ATTRS(A, op) ROI_A_OUTPUT_SIZE(A, op) ROI_A_SCALE(A, op) ROI_A_SAMPLING(A, op)
#define ROI_ALIGN_BACKWARD_ATTRS(A, op)                                                            \
    ROI_A_SCALE(A, op) ROI_A_BINS(A, op) ROI_A_INPUT_SIZE(A, op) ROI_A_SAMPLING(A, op) ROI_A_ALIGNED(A, op)
#define ROI_POOL_BACKWARD_ATTRS(A, op) ROI_A_SCALE(A, op) ROI_A_BINS(A, op) ROI_A_INPUT_SIZE(A, op)
#define PS_ROI_ALIGN_BACKWARD_ATTRS(A, op)                                                         \
    ROI_A_SCALE(A, op) ROI_A_BINS(A, op) ROI_A_SAMPLING(A, op) ROI_A_INPUT_SIZE(A, op)
PK_ATTR_ENUM(roi_align, ROI_ALIGN_ATTRS);
PK_ATTR_ENUM(roi_pool, ROI_POOL_ATTRS);
PK_ATTR_ENUM(ps_roi_align, PS_ROI_ALIGN_ATTRS);
PK_ATTR_ENUM(roi_align_backward, ROI_ALIGN_BACKWARD_ATTRS);
PK_ATTR_ENUM(roi_pool_backward, ROI_POOL_BACKWARD_ATTRS);
PK_ATTR_ENUM(ps_roi_align_backward, PS_ROI_ALIGN_BACKWARD_ATTRS);

/* Which of the eight ops a kernel serves: its loom_kernel_desc.user (ABI
** 1.1) points at one of roi_ids[], so one run() serves them all. */
typedef struct roi_id { roi_kind kind; int backward; } roi_id;
extern const roi_id roi_ids[8];   /* in VISION_ROI_OPS order */
/* The op of a call: from call->kernel->user under a 1.1 core, else by the
** schema's name (a 1.0 core does not pass the kernel). */
void roi_kind_of(const loom_call *call, roi_kind *kind, int *backward);

/* Validate a call's inputs and attributes and fill g (no data is read). */
loom_status roi_check(const loom_call *call, roi_geom *g);

/* Allocate the outputs of a checked call: output (and argmax /
** channel_mapping, i32, for forward roi_pool and the ps ops). */
loom_status roi_alloc_outputs(loom_call *call, const roi_geom *g, loom_tensor **out, loom_tensor **map);

/* Every roi's batch index (rois on the host, dtype g->dtype) truncates
** into [0, g->n); else a failure naming the roi. */
loom_status roi_check_batch_indices(const roi_geom *g, const void *rois);

/* Every roi's coordinates times spatial_scale, and the width and height
** they make, are finite in the kernels' precision where the coordinates
** themselves are (a finite scale can overflow: spatial_scale 1e300, or
** 1e5 on f16 rois). Else a failure naming the roi: torchvision would
** convert the non-finite sample positions to int (undefined) or pool
** nothing. NaN or inf coordinates given as such pass (torchvision's
** results for them are defined and kept). */
loom_status roi_check_scaled(const roi_geom *g, const void *rois);

/* Every entry of an argmax (roi_pool: -1 or a pixel index in [0, H*W)) or
** channel_mapping (ps ops: a channel in [0, C)) map on the host. */
loom_status roi_check_index_map(const roi_geom *g, const int32_t *map);

/* Sampling grid of one roi side, as torchvision's `sampling_ratio > 0 ?
** sampling_ratio : ceil(roi_size / bins)` stored in an int; q is
** roi_size / bins computed in the kernel's precision. NaN gives 0 (x86
** makes INT_MIN of it, which samples nothing either). Above ROI_MAX_GRID
** it fails naming roi `index`. */
loom_status roi_grid(double q, int64_t sampling_ratio, int64_t index, int64_t *grid);

/* cpu kernels (roi_cpu.c). */
loom_status roi_run_cpu(loom_call *call);

#endif /* LOOM_VISION_ROI_H */
