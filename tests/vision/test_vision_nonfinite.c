/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_vision_nonfinite.c - attribute values and non-finite coordinates.
**
** Attributes: every constrained float and int attribute of the vision ops
** (the LOOM_ATTR_FINITE / POSITIVE / NONNEG flags of the schemas, checked
** by the core, and the kernels' range checks) refuses NaN, +-inf, negative,
** zero where it must be positive, and INT64_MAX / INT32_MAX where a size
** would overflow, with LOOM_EINVAL and a message naming the attribute; a
** finite spatial_scale whose scaled rois overflow (1e300, or 1e5 on f16)
** is refused by the kernels rather than pooling zeros.
**
** Coordinates: NaN, +-inf and huge boxes, rois and offsets reach every op
** that turns coordinates into integers (the RoI ops and their backwards,
** deform_conv2d and its backward) and nms: the calls succeed and UBSan
** (CI runs this suite with halt_on_error=1) sees no float-to-int conversion
** of a value out of range.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"

/* the tables below leave trailing members of their entries to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define TV OC_TV
#define NONE { 0 }

static const double two_rois[10] = { 0, 0, 0, 4, 4, 0, 1, 1, 6, 6 };
static const double boxes2[8] = { 0, 0, 4, 4, 1, 1, 5, 5 };
static const double scores2[2] = { 0.9, 0.8 };

/* ------------------------------------------------------------ attributes */

typedef oc_attr_family attr_family;

#define NAN_INF "nan", "inf", "-inf"
#define BIG "9223372036854775807", "2147483647"

static const attr_family families[] = {
    /* boxes */
    { "vision.nms", { TV(F32, boxes2, 2, 2, 4), TV(F32, scores2, 1, 2) }, NULL, "iou_threshold", { NAN_INF } },
    { "vision.batched_nms", { TV(F64, boxes2, 2, 2, 4), TV(F64, scores2, 1, 2), T(I64, 1, 2) }, NULL,
      "iou_threshold", { NAN_INF } },
    { "vision.distance_box_iou", { TV(F32, boxes2, 2, 2, 4), TV(F32, boxes2, 2, 2, 4) }, NULL, "eps",
      { NAN_INF, "-1e-7" } },
    { "vision.complete_box_iou", { TV(F32, boxes2, 2, 2, 4), TV(F32, boxes2, 2, 2, 4) }, NULL, "eps",
      { NAN_INF, "-1" } },
    { "vision.generalized_box_iou_loss", { TV(F32, boxes2, 2, 2, 4), TV(F32, boxes2, 2, 2, 4) }, NULL, "eps",
      { NAN_INF, "-1" } },
    { "vision.distance_box_iou_loss", { TV(F32, boxes2, 2, 2, 4), TV(F32, boxes2, 2, 2, 4) }, NULL, "eps",
      { NAN_INF, "-1" } },
    { "vision.complete_box_iou_loss", { TV(F64, boxes2, 2, 2, 4), TV(F64, boxes2, 2, 2, 4) }, NULL, "eps",
      { NAN_INF, "-1" } },
    { "vision.clip_boxes_to_image", { TV(F32, boxes2, 2, 2, 4) }, NULL, "size", { "-1,4", "4,-9223372036854775808" } },
    { "vision.remove_small_boxes", { TV(F32, boxes2, 2, 2, 4) }, NULL, "min_size", { NAN_INF } },
    /* roi */
    { "vision.roi_align", { T(F32, 4, 1, 2, 6, 6), TV(F32, two_rois, 2, 2, 5) }, "output_size=2", "spatial_scale",
      { NAN_INF, "-1", "0", "-0" } },
    { "vision.roi_align", { T(F32, 4, 1, 2, 6, 6), TV(F32, two_rois, 2, 2, 5) }, NULL, "output_size",
      { "0", "-1", "2,-3", BIG } },
    { "vision.roi_align", { T(F32, 4, 1, 2, 6, 6), TV(F32, two_rois, 2, 2, 5) }, "output_size=2", "sampling_ratio",
      { BIG } },
    { "vision.roi_pool", { T(F64, 4, 1, 2, 6, 6), TV(F64, two_rois, 2, 2, 5) }, "output_size=2", "spatial_scale",
      { NAN_INF, "-0.5", "0" } },
    { "vision.roi_pool", { T(F64, 4, 1, 2, 6, 6), TV(F64, two_rois, 2, 2, 5) }, NULL, "output_size",
      { "0", "-2", BIG } },
    { "vision.ps_roi_align", { T(F32, 4, 1, 4, 6, 6), TV(F32, two_rois, 2, 2, 5) }, "output_size=2",
      "spatial_scale", { NAN_INF, "-1" } },
    { "vision.ps_roi_align", { T(F32, 4, 1, 4, 6, 6), TV(F32, two_rois, 2, 2, 5) }, "output_size=2",
      "sampling_ratio", { BIG } },
    { "vision.ps_roi_pool", { T(F32, 4, 1, 4, 6, 6), TV(F32, two_rois, 2, 2, 5) }, "output_size=2",
      "spatial_scale", { NAN_INF, "-1" } },
    { "vision.ps_roi_pool", { T(F32, 4, 1, 4, 6, 6), TV(F32, two_rois, 2, 2, 5) }, NULL, "output_size",
      { "0", BIG } },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=2;height=6;width=6", "spatial_scale",
      { NAN_INF, "-1", "0" } },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_width=2;batch_size=1;channels=2;height=6;width=6", "pooled_height", { "0", "-1", BIG } },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;channels=2;height=6;width=6", "batch_size", { "-1", "9223372036854775807" } },
    /* a gradient of 2^31 - 1 images is a valid size, just too much memory */
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;channels=2;height=6;width=6", "batch_size", { "2147483647" },
      "LOOM_MAX_ALLOC", LOOM_ENOMEM },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;height=6;width=6", "channels", { "-1", "9223372036854775807" } },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;height=6;width=6", "channels", { "2147483647" },
      "'grad' f32[2,2,2,2] must be" },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=2;width=6", "height", { "-1", BIG } },
    { "vision.roi_align_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=2;height=6;width=6", "sampling_ratio", { BIG } },
    { "vision.roi_pool_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5), T(I32, 4, 2, 2, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=2;height=6;width=6", "spatial_scale", { NAN_INF } },
    { "vision.roi_pool_backward", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5), T(I32, 4, 2, 2, 2, 2) },
      "pooled_height=2;batch_size=1;channels=2;height=6;width=6", "pooled_width", { "0", "-1", BIG } },
    { "vision.ps_roi_align_backward", { T(F32, 4, 2, 1, 2, 2), TV(F32, two_rois, 2, 2, 5), T(I32, 4, 2, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=4;height=6;width=6", "spatial_scale",
      { NAN_INF, "-1" } },
    { "vision.ps_roi_align_backward", { T(F32, 4, 2, 1, 2, 2), TV(F32, two_rois, 2, 2, 5), T(I32, 4, 2, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;height=6;width=6", "channels", { "-4", "9223372036854775807" } },
    { "vision.ps_roi_align_backward", { T(F32, 4, 2, 1, 2, 2), TV(F32, two_rois, 2, 2, 5), T(I32, 4, 2, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;height=6;width=6", "channels", { "2147483647" }, "divisible" },
    { "vision.ps_roi_pool_backward", { T(F64, 4, 2, 1, 2, 2), TV(F64, two_rois, 2, 2, 5), T(I32, 4, 2, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=4;height=6;width=6", "spatial_scale",
      { NAN_INF, "-1" } },
    { "vision.ps_roi_pool_backward", { T(F64, 4, 2, 1, 2, 2), TV(F64, two_rois, 2, 2, 5), T(I32, 4, 2, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=4;height=6", "width", { "-1", BIG } },
    /* deform */
    { "vision.deform_conv2d", { T(F32, 4, 1, 2, 5, 5), T(F32, 4, 1, 18, 3, 3), T(F32, 4, 4, 2, 3, 3) }, NULL,
      "stride", { "0", "-1", "1,0", BIG } },
    { "vision.deform_conv2d", { T(F32, 4, 1, 2, 5, 5), T(F32, 4, 1, 18, 3, 3), T(F32, 4, 4, 2, 3, 3) }, NULL,
      "padding", { "-1", "0,-1", BIG } },
    { "vision.deform_conv2d", { T(F32, 4, 1, 2, 5, 5), T(F32, 4, 1, 18, 3, 3), T(F32, 4, 4, 2, 3, 3) }, NULL,
      "dilation", { "0", "-1", BIG } },
    { "vision.deform_conv2d_backward",
      { T(F32, 4, 1, 4, 3, 3), T(F32, 4, 1, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), T(F32, 4, 1, 18, 3, 3) }, NULL,
      "stride", { "0", "-1", BIG } },
    { "vision.deform_conv2d_backward",
      { T(F32, 4, 1, 4, 3, 3), T(F32, 4, 1, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), T(F32, 4, 1, 18, 3, 3) }, NULL,
      "padding", { "-1", BIG } },
    { "vision.deform_conv2d_backward",
      { T(F32, 4, 1, 4, 3, 3), T(F32, 4, 1, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), T(F32, 4, 1, 18, 3, 3) }, NULL,
      "dilation", { "0", BIG } },
    /* dropout */
    { "vision.drop_block2d", { T(F32, 4, 1, 2, 5, 5) }, "block_size=3", "p", { NAN_INF, "-0.5", "1.5" } },
    { "vision.drop_block2d", { T(F32, 4, 1, 2, 5, 5) }, "p=0.5", "block_size", { "0", "-1", "-3" } },
    { "vision.drop_block2d", { T(F32, 4, 1, 2, 5, 5) }, "p=0.5;block_size=3", "eps", { NAN_INF, "-1" } },
    { "vision.drop_block3d", { T(F64, 5, 1, 1, 3, 3, 3) }, "block_size=3", "p", { NAN_INF, "-1", "2" } },
    { "vision.drop_block3d", { T(F64, 5, 1, 1, 3, 3, 3) }, "p=0.5", "block_size", { "0", "-2" } },
    { "vision.drop_block3d", { T(F64, 5, 1, 1, 3, 3, 3) }, "p=0.5;block_size=3", "eps", { NAN_INF, "-1e-6" } },
    { "vision.stochastic_depth", { T(F32, 2, 4, 3) }, "mode=row", "p", { NAN_INF, "-0.1", "1.01" } },
};

/* ------------------------------------------------------ non-finite inputs */

static const double nan_rois[25] = {
    0, NAN, 0, 4, 4,
    0, 1, 1, INFINITY, 6,
    0, -INFINITY, 1, 3, NAN,
    0, 1e30, -1e30, -1e30, 1e30,
    0, NAN, NAN, NAN, NAN,
};
/* f16 has no 1e30: the same rois with 3e4 (whose differences still fit) */
static const double nan_rois16[25] = {
    0, NAN, 0, 4, 4,
    0, 1, 1, INFINITY, 6,
    0, -INFINITY, 1, 3, NAN,
    0, 3e4, -3e4, -3e4, 3e4,
    0, NAN, NAN, NAN, NAN,
};
/* finite, but x2 - x1 overflows f32 */
static const double wide_roi[5] = { 0, -3e38, 0, 3e38, 4 };
static const double far_roi[5] = { 0, 0, 0, 1e9, 1e9 };
static const double nan_batch[5] = { NAN, 0, 0, 4, 4 };
static const double inf_batch[5] = { INFINITY, 0, 0, 4, 4 };

/* [1, 18, 3, 3] offsets: a cycle of NaN, +-inf, huge and fractional values */
static double nan_offsets[162];
static double nan_mask[81];
static const double nan_boxes[16] = { 0, 0, NAN, 4, 1, 1, 5, INFINITY, -INFINITY, 0, 2, 2, 1e308, 1e308, -1e308, 3 };
static const double nan_scores[4] = { 0.5, NAN, 0.7, INFINITY };
static const double idxs4[4] = { 0, 1, 0, 1 };

#define ALIGN_ATTRS "output_size=2;sampling_ratio=2"
#define BWD_ATTRS "pooled_height=2;pooled_width=2;batch_size=1;channels=2;height=6;width=6"
#define PS_BWD_ATTRS "pooled_height=2;pooled_width=2;batch_size=1;channels=4;height=6;width=6"

static const oc_case input_cases[] = {
    { "vision.roi_align", "NaN, inf and huge rois", { T(F32, 4, 1, 2, 6, 6), TV(F32, nan_rois, 2, 5, 5) },
      ALIGN_ATTRS, { T(F32, 4, 5, 2, 2, 2) } },
    { "vision.roi_align", "NaN, inf and huge rois, aligned f64",
      { T(F64, 4, 1, 2, 6, 6), TV(F64, nan_rois, 2, 5, 5) }, ALIGN_ATTRS ";aligned=true",
      { T(F64, 4, 5, 2, 2, 2) } },
    { "vision.roi_align", "NaN, inf and huge rois, f16", { T(F16, 4, 1, 2, 6, 6), TV(F16, nan_rois16, 2, 5, 5) },
      ALIGN_ATTRS, { T(F16, 4, 5, 2, 2, 2) } },
    { "vision.roi_align", "NaN batch index", { T(F32, 4, 1, 2, 6, 6), TV(F32, nan_batch, 2, 1, 5) }, ALIGN_ATTRS,
      .expect = LOOM_EINVAL, .message = "batch index" },
    { "vision.roi_align", "inf batch index", { T(F64, 4, 1, 2, 6, 6), TV(F64, inf_batch, 2, 1, 5) }, ALIGN_ATTRS,
      .expect = LOOM_EINVAL, .message = "batch index" },
    { "vision.roi_align", "roi width overflows f32", { T(F32, 4, 1, 2, 6, 6), TV(F32, wide_roi, 2, 1, 5) },
      ALIGN_ATTRS, .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.roi_align", "spatial_scale 1e300", { T(F32, 4, 1, 2, 6, 6), TV(F32, two_rois, 2, 2, 5) },
      ALIGN_ATTRS ";spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.roi_align", "spatial_scale 1e300, f64, overflowing", { T(F64, 4, 1, 2, 6, 6), TV(F64, far_roi, 2, 1, 5) },
      ALIGN_ATTRS ";spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    /* in f64, 4e300 is a finite roi far outside the map: torchvision's zeros */
    { "vision.roi_align", "spatial_scale 1e300, f64, finite", { T(F64, 4, 1, 2, 6, 6), TV(F64, two_rois, 2, 2, 5) },
      ALIGN_ATTRS ";spatial_scale=1e300", { T(F64, 4, 2, 2, 2, 2) }, .zeros = 1 },
    { "vision.roi_align", "spatial_scale 1e5, f16", { T(F16, 4, 1, 2, 6, 6), TV(F16, two_rois, 2, 2, 5) },
      ALIGN_ATTRS ";spatial_scale=1e5", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.roi_align", "spatial_scale 1e300, adaptive grid", { T(F32, 4, 1, 2, 6, 6), TV(F32, two_rois, 2, 2, 5) },
      "output_size=2;spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.roi_pool", "NaN, inf and huge rois", { T(F32, 4, 1, 2, 6, 6), TV(F32, nan_rois, 2, 5, 5) },
      "output_size=2", { T(F32, 4, 5, 2, 2, 2), T(I32, 4, 5, 2, 2, 2) } },
    { "vision.roi_pool", "NaN, inf and huge rois, f64", { T(F64, 4, 1, 3, 6, 6), TV(F64, nan_rois, 2, 5, 5) },
      "output_size=3", { T(F64, 4, 5, 3, 3, 3), T(I32, 4, 5, 3, 3, 3) } },
    { "vision.roi_pool", "spatial_scale 1e300", { T(F32, 4, 1, 2, 6, 6), TV(F32, two_rois, 2, 2, 5) },
      "output_size=2;spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.ps_roi_align", "NaN, inf and huge rois", { T(F32, 4, 1, 4, 6, 6), TV(F32, nan_rois, 2, 5, 5) },
      ALIGN_ATTRS, { T(F32, 4, 5, 1, 2, 2), T(I32, 4, 5, 1, 2, 2) } },
    { "vision.ps_roi_align", "spatial_scale 1e300", { T(F32, 4, 1, 4, 6, 6), TV(F32, two_rois, 2, 2, 5) },
      ALIGN_ATTRS ";spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.ps_roi_pool", "NaN, inf and huge rois", { T(F64, 4, 1, 4, 6, 6), TV(F64, nan_rois, 2, 5, 5) },
      "output_size=2", { T(F64, 4, 5, 1, 2, 2), T(I32, 4, 5, 1, 2, 2) } },
    { "vision.ps_roi_pool", "spatial_scale 1e300", { T(F32, 4, 1, 4, 6, 6), TV(F32, two_rois, 2, 2, 5) },
      "output_size=2;spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.roi_align_backward", "NaN, inf and huge rois", { T(F32, 4, 5, 2, 2, 2), TV(F32, nan_rois, 2, 5, 5) },
      BWD_ATTRS ";sampling_ratio=2", { T(F32, 4, 1, 2, 6, 6) } },
    { "vision.roi_align_backward", "spatial_scale 1e300", { T(F32, 4, 2, 2, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      BWD_ATTRS ";spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.roi_pool_backward", "NaN, inf and huge rois",
      { T(F32, 4, 5, 2, 2, 2), TV(F32, nan_rois, 2, 5, 5), T(I32, 4, 5, 2, 2, 2) }, BWD_ATTRS,
      { T(F32, 4, 1, 2, 6, 6) } },
    { "vision.ps_roi_align_backward", "NaN, inf and huge rois",
      { T(F32, 4, 5, 1, 2, 2), TV(F32, nan_rois, 2, 5, 5), T(I32, 4, 5, 1, 2, 2) }, PS_BWD_ATTRS ";sampling_ratio=2",
      { T(F32, 4, 1, 4, 6, 6) } },
    { "vision.ps_roi_pool_backward", "NaN, inf and huge rois",
      { T(F64, 4, 5, 1, 2, 2), TV(F64, nan_rois, 2, 5, 5), T(I32, 4, 5, 1, 2, 2) }, PS_BWD_ATTRS,
      { T(F64, 4, 1, 4, 6, 6) } },
    { "vision.ps_roi_pool_backward", "spatial_scale 1e300",
      { T(F32, 4, 2, 1, 2, 2), TV(F32, two_rois, 2, 2, 5), T(I32, 4, 2, 1, 2, 2) },
      PS_BWD_ATTRS ";spatial_scale=1e300", .expect = LOOM_EINVAL, .message = "not finite" },
    { "vision.deform_conv2d", "NaN, inf and huge offsets and mask",
      { T(F32, 4, 1, 2, 5, 5), TV(F32, nan_offsets, 4, 1, 18, 3, 3), T(F32, 4, 4, 2, 3, 3), NONE,
        TV(F32, nan_mask, 4, 1, 9, 3, 3) }, NULL, { T(F32, 4, 1, 4, 3, 3) } },
    { "vision.deform_conv2d", "NaN, inf and huge offsets, f64",
      { T(F64, 4, 1, 2, 5, 5), TV(F64, nan_offsets, 4, 1, 18, 3, 3), T(F64, 4, 4, 2, 3, 3) }, NULL,
      { T(F64, 4, 1, 4, 3, 3) } },
    { "vision.deform_conv2d", "NaN, inf and huge offsets, f16",
      { T(F16, 4, 1, 2, 5, 5), TV(F16, nan_offsets, 4, 1, 18, 3, 3), T(F16, 4, 4, 2, 3, 3) }, NULL,
      { T(F16, 4, 1, 4, 3, 3) } },
    { "vision.deform_conv2d_backward", "NaN, inf and huge offsets and mask",
      { T(F32, 4, 1, 4, 3, 3), T(F32, 4, 1, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), TV(F32, nan_offsets, 4, 1, 18, 3, 3),
        TV(F32, nan_mask, 4, 1, 9, 3, 3) }, NULL,
      { T(F32, 4, 1, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), T(F32, 4, 1, 18, 3, 3), T(F32, 4, 1, 9, 3, 3),
        T(F32, 1, 4) } },
    { "vision.deform_conv2d_backward", "NaN, inf and huge offsets, f64",
      { T(F64, 4, 1, 4, 3, 3), T(F64, 4, 1, 2, 5, 5), T(F64, 4, 4, 2, 3, 3), TV(F64, nan_offsets, 4, 1, 18, 3, 3) },
      NULL, { T(F64, 4, 1, 2, 5, 5), T(F64, 4, 4, 2, 3, 3), T(F64, 4, 1, 18, 3, 3), T(F64, 4, 1, 0, 3, 3),
              T(F64, 1, 4) } },
    { "vision.nms", "NaN and inf boxes and scores", { TV(F32, nan_boxes, 2, 4, 4), TV(F32, nan_scores, 1, 4) },
      "iou_threshold=0.5", .expect = LOOM_OK },
    { "vision.batched_nms", "NaN and inf boxes and scores",
      { TV(F64, nan_boxes, 2, 4, 4), TV(F64, nan_scores, 1, 4), TV(I64, idxs4, 1, 4) }, "iou_threshold=0.5",
      .expect = LOOM_OK },
};

/* ------------------------------------------------------------ the group */

static void build_values(void)
{
    static const double cycle[8] = { NAN, INFINITY, -INFINITY, 1e30, -1e30, 0.25, -0.75, 1e9 };
    for (size_t i = 0; i < sizeof nan_offsets / sizeof nan_offsets[0]; i++)
        nan_offsets[i] = cycle[i % 8];
    for (size_t i = 0; i < sizeof nan_mask / sizeof nan_mask[0]; i++)
        nan_mask[i] = cycle[(i + 3) % 8];
}

int main(void)
{
    size_t n, n_extra = sizeof input_cases / sizeof input_cases[0];
    build_values();
    oc_case *all = oc_attr_cases(families, sizeof families / sizeof families[0], input_cases, n_extra, &n);
    /* the nms cases do not fix their output length: they only have to succeed */
    int rc = oc_run_group("vision_nonfinite", NULL, all, n, tu_setup, tu_teardown);
    oc_free_cases(all, n, n_extra);
    return rc;
}
