/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes.h - private declarations of the vision pack's box module: the
** schemas, the argument checks shared by the cpu and cuda kernels, and
** the cpu kernels.
**
** Every check fails through pk_host->fail(LOOM_EINVAL, ...) with a
** message naming the op, the argument and what was expected; the kernels
** run only on arguments that passed them.
*/
#ifndef LOOM_VISION_BOXES_H
#define LOOM_VISION_BOXES_H

#include "vision_pack.h"

/* The ops of the module, in registration order. */
#define VISION_BOXES_OPS(X)                                                                        \
    X(vision_nms_schema) X(vision_batched_nms_schema) X(vision_box_iou_schema)                     \
    X(vision_generalized_box_iou_schema) X(vision_distance_box_iou_schema)                         \
    X(vision_complete_box_iou_schema) X(vision_generalized_box_iou_loss_schema)                    \
    X(vision_distance_box_iou_loss_schema) X(vision_complete_box_iou_loss_schema)                  \
    X(vision_box_convert_schema) X(vision_box_area_schema) X(vision_clip_boxes_to_image_schema)    \
    X(vision_remove_small_boxes_schema)
PK_OPS_DECLARE(vision_boxes_ops, VISION_BOXES_OPS);

/* The attribute lists, A(op, name, TYPE, default, flags, doc, extra)
** (pack.h); ops of one family share a list. Value constraints (checked
** by the core): thresholds and sizes finite (a NaN or inf threshold
** silently keeps or drops everything), eps finite and >= 0, image sizes
** >= 0. */
#define BX_NMS_ATTRS(A, op)                                                                        \
    A(op, iou_threshold, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,          \
      "discard boxes with IoU > iou_threshold", )
/* box_iou, box_area */
#define BX_FMT_ATTRS(A, op)                                                                        \
    A(op, fmt, STRING, LOOM_DEFAULT_STRING("xyxy"), 0, "box format: xyxy, xywh or cxcywh", )
/* distance_box_iou, complete_box_iou */
#define BX_EPS_ATTRS(A, op)                                                                        \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-7), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "added to the enclosing box's squared diagonal", )
/* the three IoU losses */
#define BX_LOSS_ATTRS(A, op)                                                                       \
    A(op, reduction, STRING, LOOM_DEFAULT_STRING("none"), 0, "none, mean or sum", )                \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-7), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "small number to prevent division by zero", )
#define BX_CONVERT_ATTRS(A, op)                                                                    \
    A(op, in_fmt, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "xyxy, xywh or cxcywh", )         \
    A(op, out_fmt, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "xyxy, xywh or cxcywh", )
#define BX_CLIP_ATTRS(A, op)                                                                       \
    A(op, size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,                    \
      "[height, width] of the image", )
#define BX_SMALL_ATTRS(A, op)                                                                      \
    A(op, min_size, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,               \
      "keep boxes whose width and height are >= min_size", )
PK_ATTR_ENUM(bx_nms, BX_NMS_ATTRS);
PK_ATTR_ENUM(bx_fmt, BX_FMT_ATTRS);
PK_ATTR_ENUM(bx_eps, BX_EPS_ATTRS);
PK_ATTR_ENUM(bx_loss, BX_LOSS_ATTRS);
PK_ATTR_ENUM(bx_convert, BX_CONVERT_ATTRS);
PK_ATTR_ENUM(bx_clip, BX_CLIP_ATTRS);
PK_ATTR_ENUM(bx_small, BX_SMALL_ATTRS);

/* Box formats of torchvision's box_convert / box_iou / box_area. */
typedef enum bx_fmt { BX_XYXY = 0, BX_XYWH = 1, BX_CXCYWH = 2 } bx_fmt;
/* Reductions of the IoU losses. */
typedef enum bx_reduction { BX_NONE = 0, BX_MEAN = 1, BX_SUM = 2 } bx_reduction;

/* Pairwise IoU kinds (vision.box_iou and friends). */
typedef enum bx_pair_kind { BX_IOU = 0, BX_GIOU = 1, BX_DIOU = 2, BX_CIOU = 3 } bx_pair_kind;
/* IoU loss kinds. */
typedef enum bx_loss_kind { BX_GIOU_LOSS = 0, BX_DIOU_LOSS = 1, BX_CIOU_LOSS = 2 } bx_loss_kind;

/* `t` is contiguous [N, 4] (ndim 2) or [.., 4] (any_rank) of a float dtype. */
loom_status bx_check_boxes(const char *op, const char *arg, const loom_tensor *t, int any_rank);
/* Both tensors have the same dtype. */
loom_status bx_check_same_dtype(const char *op, const char *arg_a, const loom_tensor *a,
                                const char *arg_b, const loom_tensor *b);
/* `t` is contiguous [n]. */
loom_status bx_check_vector(const char *op, const char *arg, const loom_tensor *t, int64_t n);
/* Parse a format or reduction attribute. */
loom_status bx_parse_fmt(const char *op, const char *attr, const char *s, bx_fmt *out);
loom_status bx_parse_reduction(const char *op, const char *s, bx_reduction *out);

/* Checks of whole calls, shared by every backend. */
loom_status bx_nms_check(const loom_call *call, int batched);
loom_status bx_pair_check(const loom_call *call, bx_pair_kind kind, bx_fmt *fmt, double *eps);
loom_status bx_loss_check(const loom_call *call, bx_reduction *red, double *eps);
/* box_convert, box_area and clip_boxes_to_image as both backends run them,
** after the checks and with output 0 allocated (the boxes' shape and dtype;
** box_area: [..] of bx_upcast): n boxes of dtype at in, results at out. */
typedef struct bx_util_call {
    loom_dtype dtype, out_dtype;
    int64_t n;
    const void *in;
    void *out;
    bx_fmt fmt_in, fmt_out;     /* box_convert: both; box_area: fmt_in */
    int64_t height, width;      /* clip_boxes_to_image */
} bx_util_call;
typedef loom_status (*bx_util_prepare)(loom_call *call, bx_util_call *u);
loom_status bx_convert_prepare(loom_call *call, bx_util_call *u);
loom_status bx_area_prepare(loom_call *call, bx_util_call *u);
loom_status bx_clip_prepare(loom_call *call, bx_util_call *u);
loom_status bx_small_check(const loom_call *call, double *min_size);

/* Output dtype of the ops that upcast f16 to f32 (torchvision's _upcast). */
static inline loom_dtype bx_upcast(loom_dtype dt)
{
    return dt == LOOM_DTYPE_F16 ? LOOM_DTYPE_F32 : dt;
}

/* AVX2 rows [begin, end) of box_iou (giou = 0) or generalized_box_iou
** (giou = 1) for xyxy boxes held in f32: a is [n, 4]; b holds m x1, then m
** y1, m x2, m y2 and m areas (each run padded to a multiple of 8); out is
** [n, m]. low = 1: the boxes were f16 (widened exactly), so the steps torch
** does in f16 are rounded to f16; the caller checked F16C then. */
void bx_pair_rows_f32_avx2(int giou, int low, const float *a, const float *b, int64_t m, int64_t begin,
                           int64_t end, float *out);

/* cpu kernels (one file per family). */
loom_status bx_nms_cpu(loom_call *call);
loom_status bx_batched_nms_cpu(loom_call *call);
loom_status bx_box_iou_cpu(loom_call *call);
loom_status bx_generalized_box_iou_cpu(loom_call *call);
loom_status bx_distance_box_iou_cpu(loom_call *call);
loom_status bx_complete_box_iou_cpu(loom_call *call);
loom_status bx_giou_loss_cpu(loom_call *call);
loom_status bx_diou_loss_cpu(loom_call *call);
loom_status bx_ciou_loss_cpu(loom_call *call);
loom_status bx_box_convert_cpu(loom_call *call);
loom_status bx_box_area_cpu(loom_call *call);
loom_status bx_clip_boxes_cpu(loom_call *call);
loom_status bx_remove_small_boxes_cpu(loom_call *call);

#endif /* LOOM_VISION_BOXES_H */
