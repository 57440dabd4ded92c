/*
** boxes.h - private declarations of the vision pack's box module: the
** schemas, the argument checks shared by the cpu and cuda kernels, and
** the cpu kernels.
**
** Every check fails through vision_host->fail(LOOM_EINVAL, ...) with a
** message naming the op, the argument and what was expected; the kernels
** run only on arguments that passed them.
*/
#ifndef LOOM_VISION_BOXES_H
#define LOOM_VISION_BOXES_H

#include "vision_pack.h"

extern const loom_op_schema vision_nms_schema, vision_batched_nms_schema, vision_box_iou_schema,
    vision_generalized_box_iou_schema, vision_distance_box_iou_schema, vision_complete_box_iou_schema,
    vision_generalized_box_iou_loss_schema, vision_distance_box_iou_loss_schema,
    vision_complete_box_iou_loss_schema, vision_box_convert_schema, vision_box_area_schema,
    vision_clip_boxes_to_image_schema, vision_remove_small_boxes_schema;

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

/* 1 when the cpu kernels may use AVX2: set by vision_boxes_register_cpu
** (cpuid, capped by LOOM_CPU_MAX_ISA) before any kernel runs. */
extern int bx_cpu_avx2;

/* AVX2 rows [begin, end) of box_iou (giou = 0) or generalized_box_iou
** (giou = 1) for f32 xyxy boxes: a is [n, 4]; b holds m x1, then m y1, m x2,
** m y2 and m areas (each run padded to a multiple of 8); out is [n, m]. */
void bx_pair_rows_f32_avx2(int giou, const float *a, const float *b, int64_t m, int64_t begin, int64_t end,
                           float *out);

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
