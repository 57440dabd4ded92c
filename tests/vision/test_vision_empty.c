/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_vision_empty.c - every op of the vision pack on inputs without
** elements (zero boxes, zero RoIs, a batch of 0, zero channels, empty maps,
** empty rows): torchvision's output shapes, no error, no read of the (NULL)
** data of an empty tensor, no division by zero. The walk over the registry
** fails for any vision op without a case here.
**
** Where torchvision raises (or crashes, or reads out of bounds) on such an
** input, loom refuses it with LOOM_EINVAL; each of those cases says what
** torchvision does.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "op_cases.h"
#include "models/resnet_memory.h"

/* the table below leaves trailing members of its cases to their zero default */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define TV OC_TV
#define NONE { 0 }

static const double zero_offset[1] = { 0 };
static const double zero_offset3[3] = { 0, 0, 0 };
static const double sizes_2x2[4] = { 32, 32, 30, 28 };
static const double two_rois[10] = { 0, 0, 0, 4, 4, 0, 1, 1, 6, 6 };
/* offsets of -0.5: samples at y = -0.5 lie inside torchvision's (-1, H) even for H = 0 */
static const double half_off[28] = { -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5,
                                      -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5, -0.5 };

static const oc_case cases[] = {
    /* ------------------------------------------------------------ boxes */
    { "vision.nms", "no boxes", { T(F32, 2, 0, 4), T(F32, 1, 0) }, "iou_threshold=0.5", { T(I64, 1, 0) } },
    { "vision.nms", "no boxes f64", { T(F64, 2, 0, 4), T(F64, 1, 0) }, "iou_threshold=0.5", { T(I64, 1, 0) } },
    { "vision.batched_nms", "no boxes", { T(F32, 2, 0, 4), T(F32, 1, 0), T(I64, 1, 0) }, "iou_threshold=0.5",
      { T(I64, 1, 0) } },
    { "vision.box_iou", "no boxes1", { T(F32, 2, 0, 4), T(F32, 2, 3, 4) }, NULL, { T(F32, 2, 0, 3) } },
    { "vision.box_iou", "no boxes2", { T(F32, 2, 3, 4), T(F32, 2, 0, 4) }, NULL, { T(F32, 2, 3, 0) } },
    { "vision.box_iou", "no boxes f16 cxcywh", { T(F16, 2, 0, 4), T(F16, 2, 0, 4) }, "fmt=cxcywh",
      { T(F32, 2, 0, 0) } },
    { "vision.generalized_box_iou", "no boxes1", { T(F32, 2, 0, 4), T(F32, 2, 3, 4) }, NULL, { T(F32, 2, 0, 3) } },
    { "vision.generalized_box_iou", "no boxes2 f64", { T(F64, 2, 2, 4), T(F64, 2, 0, 4) }, NULL,
      { T(F64, 2, 2, 0) } },
    { "vision.distance_box_iou", "no boxes", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) }, NULL, { T(F32, 2, 0, 0) } },
    { "vision.distance_box_iou", "no boxes2", { T(F16, 2, 2, 4), T(F16, 2, 0, 4) }, NULL, { T(F32, 2, 2, 0) } },
    { "vision.complete_box_iou", "no boxes1", { T(F32, 2, 0, 4), T(F32, 2, 5, 4) }, NULL, { T(F32, 2, 0, 5) } },
    { "vision.complete_box_iou", "no boxes2", { T(F64, 2, 1, 4), T(F64, 2, 0, 4) }, NULL, { T(F64, 2, 1, 0) } },
    /* the losses: 'none' keeps the leading dims, mean and sum of nothing are 0
    ** (torchvision: 0.0 * loss.sum() for an empty mean) */
    { "vision.generalized_box_iou_loss", "no boxes, none", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) }, NULL,
      { T(F32, 1, 0) } },
    { "vision.generalized_box_iou_loss", "no boxes, mean", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) },
      "reduction=mean", { T(F32, 0, 0) }, .zeros = 1 },
    { "vision.distance_box_iou_loss", "[3, 0] boxes, none", { T(F64, 3, 3, 0, 4), T(F64, 3, 3, 0, 4) }, NULL,
      { T(F64, 2, 3, 0) } },
    { "vision.distance_box_iou_loss", "no boxes, sum", { T(F16, 2, 0, 4), T(F16, 2, 0, 4) }, "reduction=sum",
      { T(F32, 0, 0) }, .zeros = 1 },
    { "vision.complete_box_iou_loss", "no boxes, none", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) }, NULL,
      { T(F32, 1, 0) } },
    { "vision.complete_box_iou_loss", "no boxes, mean", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) }, "reduction=mean",
      { T(F32, 0, 0) }, .zeros = 1 },
    { "vision.box_convert", "no boxes", { T(F32, 2, 0, 4) }, "in_fmt=xyxy;out_fmt=cxcywh", { T(F32, 2, 0, 4) } },
    { "vision.box_convert", "[3, 0] boxes", { T(F16, 3, 3, 0, 4) }, "in_fmt=xywh;out_fmt=xyxy",
      { T(F16, 3, 3, 0, 4) } },
    { "vision.box_area", "no boxes", { T(F32, 2, 0, 4) }, NULL, { T(F32, 1, 0) } },
    { "vision.box_area", "[3, 0] boxes", { T(F64, 3, 3, 0, 4) }, NULL, { T(F64, 2, 3, 0) } },
    { "vision.box_area", "no f16 boxes", { T(F16, 2, 0, 4) }, "fmt=xywh", { T(F32, 1, 0) } },
    { "vision.clip_boxes_to_image", "no boxes", { T(F32, 2, 0, 4) }, "size=10,20", { T(F32, 2, 0, 4) } },
    { "vision.clip_boxes_to_image", "[2, 0] boxes", { T(F64, 3, 2, 0, 4) }, "size=10,20",
      { T(F64, 3, 2, 0, 4) } },
    { "vision.remove_small_boxes", "no boxes", { T(F32, 2, 0, 4) }, "min_size=1", { T(I64, 1, 0) } },
    /* a zero dim next to huge ones: no elements, so no product of the dims may be formed */
    { "vision.box_area", "[0, 2^60] boxes", { T(F32, 3, 0, INT64_C(1) << 60, 4) }, NULL,
      { T(F32, 2, 0, INT64_C(1) << 60) } },
    { "vision.box_convert", "[2^60, 0] boxes", { T(F64, 4, INT64_C(1) << 60, 0, 1, 4) },
      "in_fmt=cxcywh;out_fmt=xywh", { T(F64, 4, INT64_C(1) << 60, 0, 1, 4) } },
    { "vision.complete_box_iou_loss", "[0, 2^60] boxes, none",
      { T(F32, 3, 0, INT64_C(1) << 60, 4), T(F32, 3, 0, INT64_C(1) << 60, 4) }, NULL,
      { T(F32, 2, 0, INT64_C(1) << 60) } },
    { "vision.generalized_box_iou_loss", "[2^60, 0] boxes, sum",
      { T(F32, 3, INT64_C(1) << 60, 0, 4), T(F32, 3, INT64_C(1) << 60, 0, 4) }, "reduction=sum",
      { T(F32, 0, 0) }, .zeros = 1 },

    /* -------------------------------------------------------------- roi */
    { "vision.roi_align", "no rois", { T(F32, 4, 1, 3, 8, 8), T(F32, 2, 0, 5) }, "output_size=2",
      { T(F32, 4, 0, 3, 2, 2) } },
    { "vision.roi_align", "no images, no rois", { T(F64, 4, 0, 3, 8, 8), T(F64, 2, 0, 5) },
      "output_size=2,3;aligned=true", { T(F64, 4, 0, 3, 2, 3) } },
    { "vision.roi_align", "no channels", { T(F32, 4, 1, 0, 8, 8), TV(F32, two_rois, 2, 2, 5) }, "output_size=2",
      { T(F32, 4, 2, 0, 2, 2) } },
    /* torchvision reads before the map for H = 0; loom samples nothing: 0 */
    { "vision.roi_align", "empty map", { T(F32, 4, 1, 3, 0, 8), TV(F32, two_rois, 2, 2, 5) },
      "output_size=2;sampling_ratio=2", { T(F32, 4, 2, 3, 2, 2) }, .zeros = 1 },
    { "vision.roi_align", "no rois f16", { T(F16, 4, 1, 3, 8, 8), T(F16, 2, 0, 5) }, "output_size=2",
      { T(F16, 4, 0, 3, 2, 2) } },
    /* a roi with a batch index while there is no image: torchvision reads out of bounds */
    { "vision.roi_align", "rois but no images", { T(F32, 4, 0, 3, 8, 8), T(F32, 2, 1, 5) }, "output_size=2",
      .expect = LOOM_EINVAL, .message = "batch index" },
    { "vision.roi_pool", "no rois", { T(F32, 4, 1, 3, 8, 8), T(F32, 2, 0, 5) }, "output_size=2",
      { T(F32, 4, 0, 3, 2, 2), T(I32, 4, 0, 3, 2, 2) } },
    { "vision.roi_pool", "no channels", { T(F64, 4, 1, 0, 8, 8), TV(F64, two_rois, 2, 2, 5) }, "output_size=2",
      { T(F64, 4, 2, 0, 2, 2), T(I32, 4, 2, 0, 2, 2) } },
    { "vision.ps_roi_align", "no rois", { T(F32, 4, 1, 4, 8, 8), T(F32, 2, 0, 5) }, "output_size=2",
      { T(F32, 4, 0, 1, 2, 2), T(I32, 4, 0, 1, 2, 2) } },
    { "vision.ps_roi_align", "no channels", { T(F32, 4, 1, 0, 8, 8), TV(F32, two_rois, 2, 2, 5) },
      "output_size=2", { T(F32, 4, 2, 0, 2, 2), T(I32, 4, 2, 0, 2, 2) } },
    { "vision.ps_roi_pool", "no rois", { T(F64, 4, 2, 8, 4, 4), T(F64, 2, 0, 5) }, "output_size=2",
      { T(F64, 4, 0, 2, 2, 2), T(I32, 4, 0, 2, 2, 2) } },
    { "vision.ps_roi_pool", "empty map", { T(F32, 4, 1, 4, 0, 0), TV(F32, two_rois, 2, 2, 5) }, "output_size=2",
      { T(F32, 4, 2, 1, 2, 2), T(I32, 4, 2, 1, 2, 2) }, .zeros = 1 },
    { "vision.roi_align_backward", "no rois",
      { T(F32, 4, 0, 3, 2, 2), T(F32, 2, 0, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=3;height=8;width=8", { T(F32, 4, 1, 3, 8, 8) },
      .zeros = 1 },
    { "vision.roi_align_backward", "no images",
      { T(F64, 4, 0, 3, 2, 2), T(F64, 2, 0, 5) },
      "pooled_height=2;pooled_width=2;batch_size=0;channels=3;height=8;width=8", { T(F64, 4, 0, 3, 8, 8) } },
    { "vision.roi_align_backward", "empty map",
      { T(F32, 4, 2, 3, 2, 2), TV(F32, two_rois, 2, 2, 5) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=3;height=0;width=8", { T(F32, 4, 1, 3, 0, 8) } },
    { "vision.roi_pool_backward", "no rois",
      { T(F32, 4, 0, 3, 2, 2), T(F32, 2, 0, 5), T(I32, 4, 0, 3, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=2;channels=3;height=4;width=4", { T(F32, 4, 2, 3, 4, 4) },
      .zeros = 1 },
    { "vision.roi_pool_backward", "no channels",
      { T(F64, 4, 2, 0, 2, 2), TV(F64, two_rois, 2, 2, 5), T(I32, 4, 2, 0, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=0;height=4;width=4", { T(F64, 4, 1, 0, 4, 4) } },
    { "vision.ps_roi_align_backward", "no rois",
      { T(F32, 4, 0, 1, 2, 2), T(F32, 2, 0, 5), T(I32, 4, 0, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=4;height=8;width=8", { T(F32, 4, 1, 4, 8, 8) },
      .zeros = 1 },
    { "vision.ps_roi_pool_backward", "no rois",
      { T(F32, 4, 0, 1, 2, 2), T(F32, 2, 0, 5), T(I32, 4, 0, 1, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=1;channels=4;height=8;width=8", { T(F32, 4, 1, 4, 8, 8) },
      .zeros = 1 },
    { "vision.ps_roi_pool_backward", "no images",
      { T(F64, 4, 0, 2, 2, 2), T(F64, 2, 0, 5), T(I32, 4, 0, 2, 2, 2) },
      "pooled_height=2;pooled_width=2;batch_size=0;channels=8;height=8;width=8", { T(F64, 4, 0, 8, 8, 8) } },

    /* ----------------------------------------------------------- deform */
    { "vision.deform_conv2d", "no images",
      { T(F32, 4, 0, 2, 5, 5), T(F32, 4, 0, 18, 3, 3), T(F32, 4, 4, 2, 3, 3), T(F32, 1, 4) }, NULL,
      { T(F32, 4, 0, 4, 3, 3) } },
    { "vision.deform_conv2d", "no images, mask, f16",
      { T(F16, 4, 0, 2, 5, 5), T(F16, 4, 0, 18, 3, 3), T(F16, 4, 4, 2, 3, 3), NONE, T(F16, 4, 0, 9, 3, 3) }, NULL,
      { T(F16, 4, 0, 4, 3, 3) } },
    /* torchvision: out [N, 0, Ho, Wo] for a weight of 0 output channels */
    { "vision.deform_conv2d", "no output channels",
      { T(F32, 4, 1, 2, 5, 5), T(F32, 4, 1, 18, 3, 3), T(F32, 4, 0, 2, 3, 3), T(F32, 1, 0) }, NULL,
      { T(F32, 4, 1, 0, 3, 3) } },
    /* an empty image with padding: every sample is outside, the output is the bias (0) */
    { "vision.deform_conv2d", "empty image, padding",
      { T(F64, 4, 1, 2, 0, 5), T(F64, 4, 1, 2, 2, 7), T(F64, 4, 3, 2, 1, 1) }, "padding=1",
      { T(F64, 4, 1, 3, 2, 7) }, .zeros = 1 },
    { "vision.deform_conv2d", "empty image, samples in (-1, 0)",
      { T(F32, 4, 1, 2, 0, 5), TV(F32, half_off, 4, 1, 2, 2, 7), T(F32, 4, 3, 2, 1, 1) }, "padding=1",
      { T(F32, 4, 1, 3, 2, 7) }, .zeros = 1 },
    /* torchvision: weight.size(0) % groups with groups = 0 // weight.size(1) = 0, an integer
    ** division by zero (SIGFPE) */
    { "vision.deform_conv2d", "no input channels",
      { T(F32, 4, 1, 0, 5, 5), T(F32, 4, 1, 18, 3, 3), T(F32, 4, 4, 1, 3, 3) }, NULL,
      .expect = LOOM_EINVAL, .message = "groups" },
    /* torchvision: TORCH_CHECK(out_h > 0 && out_w > 0) */
    { "vision.deform_conv2d", "empty output",
      { T(F32, 4, 1, 2, 2, 5), T(F32, 4, 1, 18, 0, 3), T(F32, 4, 4, 2, 3, 3) }, NULL,
      .expect = LOOM_EINVAL, .message = "too small" },
    { "vision.deform_conv2d_backward", "no images",
      { T(F32, 4, 0, 4, 3, 3), T(F32, 4, 0, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), T(F32, 4, 0, 18, 3, 3) }, NULL,
      { T(F32, 4, 0, 2, 5, 5), T(F32, 4, 4, 2, 3, 3), T(F32, 4, 0, 18, 3, 3), T(F32, 4, 0, 0, 3, 3),
        T(F32, 1, 4) }, .zeros = OC_ALL },
    { "vision.deform_conv2d_backward", "no images, mask, f16",
      { T(F16, 4, 0, 4, 3, 3), T(F16, 4, 0, 2, 5, 5), T(F16, 4, 4, 2, 3, 3), T(F16, 4, 0, 18, 3, 3),
        T(F16, 4, 0, 9, 3, 3), T(F16, 1, 4) }, NULL,
      { T(F16, 4, 0, 2, 5, 5), T(F16, 4, 4, 2, 3, 3), T(F16, 4, 0, 18, 3, 3), T(F16, 4, 0, 9, 3, 3),
        T(F16, 1, 4) }, .zeros = OC_ALL },
    { "vision.deform_conv2d_backward", "no output channels",
      { T(F64, 4, 2, 0, 3, 3), T(F64, 4, 2, 2, 5, 5), T(F64, 4, 0, 2, 3, 3), T(F64, 4, 2, 18, 3, 3),
        T(F64, 4, 2, 9, 3, 3) }, NULL,
      { T(F64, 4, 2, 2, 5, 5), T(F64, 4, 0, 2, 3, 3), T(F64, 4, 2, 18, 3, 3), T(F64, 4, 2, 9, 3, 3),
        T(F64, 1, 0) }, .zeros = OC_ALL },
    { "vision.deform_conv2d_backward", "empty image, padding",
      { T(F32, 4, 1, 3, 2, 7), T(F32, 4, 1, 2, 0, 5), T(F32, 4, 3, 2, 1, 1), T(F32, 4, 1, 2, 2, 7) }, "padding=1",
      { T(F32, 4, 1, 2, 0, 5), T(F32, 4, 3, 2, 1, 1), T(F32, 4, 1, 2, 2, 7), T(F32, 4, 1, 0, 2, 7),
        T(F32, 1, 3) }, .zeros = OC_ALL },
    { "vision.deform_conv2d_backward", "empty image, samples in (-1, 0)",
      { T(F64, 4, 1, 3, 2, 7), T(F64, 4, 1, 2, 0, 5), T(F64, 4, 3, 2, 1, 1), TV(F64, half_off, 4, 1, 2, 2, 7) },
      "padding=1",
      { T(F64, 4, 1, 2, 0, 5), T(F64, 4, 3, 2, 1, 1), T(F64, 4, 1, 2, 2, 7), T(F64, 4, 1, 0, 2, 7),
        T(F64, 1, 3) }, .zeros = OC_ALL },
    { "vision.drop_block2d", "no images", { T(F32, 4, 0, 3, 5, 5) }, "p=0.5;block_size=3", { T(F32, 4, 0, 3, 5, 5) } },
    { "vision.drop_block2d", "no images, noise", { T(F64, 4, 0, 3, 5, 5), T(F64, 4, 0, 3, 3, 3) },
      "p=0.5;block_size=3", { T(F64, 4, 0, 3, 5, 5) } },
    /* torchvision: block_size = min(block_size, H, W) = 0 is even: ValueError */
    { "vision.drop_block2d", "empty map", { T(F32, 4, 2, 3, 0, 5) }, "p=0.5;block_size=3",
      .expect = LOOM_EINVAL, .message = "odd" },
    /* torchvision: F.max_pool2d refuses a channel dim of 0 (RuntimeError) */
    { "vision.drop_block2d", "no channels", { T(F32, 4, 2, 0, 5, 5) }, "p=0.5;block_size=3",
      .expect = LOOM_EINVAL, .message = "channel" },
    { "vision.drop_block2d", "empty map, not training", { T(F32, 4, 2, 3, 0, 5) },
      "p=0.5;block_size=3;training=false", { T(F32, 4, 2, 3, 0, 5) } },
    { "vision.drop_block3d", "no images", { T(F32, 5, 0, 2, 3, 3, 3) }, "p=0.5;block_size=3",
      { T(F32, 5, 0, 2, 3, 3, 3) } },
    { "vision.drop_block3d", "empty depth", { T(F16, 5, 1, 2, 0, 3, 3) }, "p=0.5;block_size=3",
      .expect = LOOM_EINVAL, .message = "odd" },
    /* torchvision: F.max_pool3d refuses a non-batch dim of 0 (RuntimeError) */
    { "vision.drop_block3d", "no channels", { T(F32, 5, 1, 0, 3, 3, 3) }, "p=0.5;block_size=3",
      .expect = LOOM_EINVAL, .message = "channel" },
    { "vision.drop_block3d", "no channels, p = 0", { T(F32, 5, 1, 0, 3, 3, 3) }, "p=0;block_size=3",
      { T(F32, 5, 1, 0, 3, 3, 3) } },
    { "vision.stochastic_depth", "no rows", { T(F32, 2, 0, 3) }, "p=0.5;mode=row", { T(F32, 2, 0, 3) } },
    { "vision.stochastic_depth", "empty rows", { T(F64, 2, 3, 0), T(F64, 2, 3, 1) }, "p=0.5;mode=row",
      { T(F64, 2, 3, 0) } },
    { "vision.stochastic_depth", "no rows, batch", { T(F16, 1, 0) }, "p=0.25;mode=batch", { T(F16, 1, 0) } },
    { "vision.stochastic_depth", "no rows, p = 1", { T(F32, 3, 0, 2, 2) }, "p=1;mode=row",
      { T(F32, 3, 0, 2, 2) } },
    { "vision.stochastic_depth", "empty rows of 2^60", { T(F32, 3, 3, 0, INT64_C(1) << 60) }, "p=0.5;mode=row",
      { T(F32, 3, 3, 0, INT64_C(1) << 60) } },
    /* ------------------------------------------------------- transforms */
    { "vision.resize", "no images", { T(U8, 4, 0, 3, 8, 8) }, "size=4,5", { T(U8, 4, 0, 3, 4, 5) } },
    { "vision.resize", "no channels f32 bicubic", { T(F32, 3, 0, 8, 6) }, "size=4;interpolation=bicubic",
      { T(F32, 3, 0, 5, 4) } },
    { "vision.resize", "no images, nearest", { T(F32, 4, 0, 1, 8, 8) }, "size=3;interpolation=nearest",
      { T(F32, 4, 0, 1, 3, 3) } },
    /* torchvision: reshape of the empty input to [3, 4, 5] raises */
    { "vision.resize", "zero width to a non-empty size", { T(U8, 3, 3, 8, 0) }, "size=4,5", { NONE },
      LOOM_EINVAL, "'image'" },
    { "vision.resize_mask", "no masks", { T(U8, 3, 0, 8, 8) }, "size=4", { T(U8, 3, 0, 4, 4) } },
    { "vision.resize_mask", "zero height to a non-empty size", { T(I64, 2, 0, 8) }, "size=4,5", { NONE },
      LOOM_EINVAL, "'mask'" },
    { "vision.resize_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "size=4;canvas_size=8,16",
      { T(F32, 2, 0, 4), T(I64, 1, 2) } },
    { "vision.crop", "no images", { T(U8, 4, 0, 3, 8, 8) }, "top=-2;left=3;height=4;width=9",
      { T(U8, 4, 0, 3, 4, 9) } },
    { "vision.crop", "empty crop of a mask", { T(I64, 2, 8, 8) }, "top=1;left=1;height=0;width=5",
      { T(I64, 2, 0, 5) } },
    { "vision.crop", "window of an empty image: zeros", { T(F32, 3, 2, 0, 0) }, "top=0;left=0;height=2;width=3",
      { T(F32, 3, 2, 2, 3) }, .zeros = 1 },
    { "vision.center_crop", "no images", { T(F32, 4, 0, 3, 8, 8) }, "output_size=5", { T(F32, 4, 0, 3, 5, 5) } },
    { "vision.center_crop", "zero width", { T(U8, 3, 3, 8, 0) }, "output_size=5", { NONE }, LOOM_EINVAL,
      "'image'" },
    { "vision.resized_crop", "no images", { T(U8, 4, 0, 3, 8, 8) }, "top=0;left=0;height=4;width=4;size=6,7",
      { T(U8, 4, 0, 3, 6, 7) } },
    { "vision.pad", "no images", { T(U8, 4, 0, 3, 8, 8) }, "padding=1,2", { T(U8, 4, 0, 3, 12, 10) } },
    { "vision.pad", "empty image, constant: fill only", { T(F32, 3, 1, 0, 4) }, "padding=1", { T(F32, 3, 1, 2, 6) },
      .zeros = 1 },
    { "vision.pad", "empty image, edge", { T(F32, 3, 1, 0, 4) }, "padding=1;padding_mode=edge", { NONE }, LOOM_EINVAL,
      "'padding_mode'" },
    { "vision.horizontal_flip", "no images", { T(U8, 4, 0, 3, 8, 8) }, NULL, { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.vertical_flip", "empty rows", { T(BOOL, 2, 5, 0) }, NULL, { T(BOOL, 2, 5, 0) } },
    { "vision.convert_bounding_box_format", "no boxes", { T(F32, 2, 0, 4) }, "old_format=xywh;new_format=cxcywh",
      { T(F32, 2, 0, 4) } },
    { "vision.clamp_bounding_boxes", "no boxes", { T(F32, 3, 2, 0, 4) }, "canvas_size=5,6", { T(F32, 3, 2, 0, 4) } },
    { "vision.sanitize_bounding_boxes", "no boxes, no labels", { T(F32, 2, 0, 4) }, "canvas_size=5,6",
      { T(F32, 2, 0, 4), T(I64, 1, 0), T(BOOL, 1, 0) } },
    { "vision.sanitize_bounding_boxes", "no boxes, labels", { T(F32, 2, 0, 4), T(I32, 2, 0, 3) }, "canvas_size=5,6",
      { T(F32, 2, 0, 4), T(I32, 2, 0, 3), T(BOOL, 1, 0) } },
    { "vision.horizontal_flip_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "canvas_size=5,6",
      { T(F32, 2, 0, 4) } },
    { "vision.vertical_flip_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "format=cxcywh;canvas_size=5,6",
      { T(F32, 2, 0, 4) } },
    { "vision.crop_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "top=1;left=2;height=3;width=4",
      { T(F32, 2, 0, 4), T(I64, 1, 2) } },
    { "vision.center_crop_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "canvas_size=5,6;output_size=3",
      { T(F32, 2, 0, 4), T(I64, 1, 2) } },
    { "vision.resized_crop_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) },
      "top=1;left=2;height=3;width=4;size=6,8", { T(F32, 2, 0, 4), T(I64, 1, 2) } },
    { "vision.pad_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "canvas_size=5,6;padding=1",
      { T(F32, 2, 0, 4), T(I64, 1, 2) } },
    { "vision.adjust_brightness", "no images", { T(U8, 4, 0, 3, 8, 8) }, "brightness_factor=0.5", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.adjust_contrast", "no images", { T(U8, 4, 0, 3, 8, 8) }, "contrast_factor=0.5", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.adjust_saturation", "no images", { T(U8, 4, 0, 3, 8, 8) }, "saturation_factor=0.5", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.adjust_hue", "no images", { T(U8, 4, 0, 3, 8, 8) }, "hue_factor=0.1", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.adjust_gamma", "no images", { T(U8, 4, 0, 3, 8, 8) }, "gamma=0.5", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.autocontrast", "no images", { T(U8, 4, 0, 3, 8, 8) }, NULL, { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.equalize", "no images", { T(U8, 4, 0, 3, 8, 8) }, NULL, { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.posterize", "no images", { T(U8, 4, 0, 3, 8, 8) }, "bits=3", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.solarize", "no images", { T(U8, 4, 0, 3, 8, 8) }, "threshold=100", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.invert", "no images", { T(U8, 4, 0, 3, 8, 8) }, NULL, { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.gaussian_blur", "no images", { T(U8, 4, 0, 3, 8, 8) }, "kernel_size=3", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.to_dtype", "no images", { T(U8, 4, 0, 3, 8, 8) }, "dtype=float32;scale=true", { T(F32, 4, 0, 3, 8, 8) } },
    { "vision.rgb_to_grayscale", "no images", { T(U8, 4, 0, 3, 8, 8) }, NULL, { T(U8, 4, 0, 1, 8, 8) } },
    { "vision.normalize", "no images", { T(F32, 4, 0, 3, 8, 8) }, "mean=0.5;std=0.2", { T(F32, 4, 0, 3, 8, 8) } },
    { "vision.adjust_contrast", "empty maps", { T(F32, 3, 3, 0, 5) }, "contrast_factor=0.5", { T(F32, 3, 3, 0, 5) } },
    { "vision.equalize", "empty maps", { T(U8, 3, 1, 4, 0) }, NULL, { T(U8, 3, 1, 4, 0) } },
    { "vision.preprocess", "no images", { T(U8, 4, 0, 3, 50, 60) }, "resize_size=40;crop_size=32",
      { T(F32, 4, 0, 3, 32, 32) } },
    { "vision.preprocess", "zero width", { T(U8, 3, 3, 50, 0) }, NULL, { NONE }, LOOM_EINVAL, "'image'" },
    /* ------------------------------------------------------- detection */
    /* an empty image list: torchvision's batch_images indexes the first image (IndexError) */
    { "vision.rcnn_transform", "an empty list", { T(F32, 1, 0), TV(I64, zero_offset, 1, 1), T(I64, 2, 0, 2) }, NULL,
      { NONE }, LOOM_EINVAL, "the image list is empty" },
    /* scale = min(800 / 5, 1333 / 6): 800 x 960 planes, of which there are none */
    { "vision.rcnn_resize", "no channels", { T(F32, 3, 0, 5, 6) }, NULL, { T(F32, 3, 0, 800, 960) } },
    /* torchvision: interpolate refuses an input without pixels */
    { "vision.rcnn_resize", "zero rows", { T(F32, 3, 3, 0, 4) }, NULL, { NONE }, LOOM_EINVAL, "image 0 is 0 x 4" },
    { "vision.rcnn_postprocess_boxes", "no boxes", { T(F32, 2, 0, 4) }, "image_size=10,20;original_size=5,5",
      { T(F32, 2, 0, 4) } },
    /* torchvision: torch.cat of no levels' anchors fails */
    { "vision.anchor_generator", "no levels", { T(I64, 2, 0, 2) }, "sizes=32;aspect_ratios=1;image_size=8,8",
      { NONE }, LOOM_EINVAL, "at least one level" },
    { "vision.box_coder_decode", "no boxes", { T(F32, 2, 0, 4), T(F32, 2, 0, 4) }, NULL, { T(F32, 3, 0, 1, 4) } },
    { "vision.box_coder_decode", "no classes", { T(F32, 2, 3, 0), T(F32, 2, 3, 4) }, NULL, { T(F32, 3, 3, 0, 4) } },
    { "vision.rpn_proposals", "no images", { T(F32, 2, 0, 12), T(F32, 3, 0, 12, 4), T(F32, 2, 12, 4), T(I64, 2, 0, 2) },
      "num_anchors_per_level=12", { T(F32, 2, 0, 4), T(F32, 1, 0), T(I64, 1, 1) }, .zeros = 4 },
    { "vision.rpn_proposals", "no anchors", { T(F32, 2, 2, 0), T(F32, 3, 2, 0, 4), T(F32, 2, 0, 4), T(I64, 2, 2, 2) },
      "num_anchors_per_level=0", { T(F32, 2, 0, 4), T(F32, 1, 0), T(I64, 1, 3) }, .zeros = 4 },
    /* no boxes on two images: [0, C, 7, 7] */
    { "vision.multiscale_roi_align", "no boxes",
      { T(F32, 2, 0, 4), TV(I64, zero_offset3, 1, 3), TV(I64, sizes_2x2, 2, 2, 2), T(F32, 4, 2, 3, 8, 8),
        T(F32, 4, 2, 3, 4, 4) },
      "output_size=7", { T(F32, 4, 0, 3, 7, 7) } },
    /* torchvision's _setup_scales: "images list should not be empty" */
    { "vision.multiscale_roi_align", "no images", { T(F32, 2, 0, 4), TV(I64, zero_offset, 1, 1), T(I64, 2, 0, 2),
      T(F32, 4, 0, 3, 8, 8) }, "output_size=7", { NONE }, LOOM_EINVAL, "no images" },
    { "vision.rcnn_postprocess_detections", "no proposals",
      { T(F32, 2, 0, 5), T(F32, 2, 0, 20), T(F32, 2, 0, 4), TV(I64, zero_offset3, 1, 3), TV(I64, sizes_2x2, 2, 2, 2) },
      NULL, { T(F32, 2, 0, 4), T(F32, 1, 0), T(I64, 1, 0), T(I64, 1, 3) }, .zeros = 8 },
    { "vision.retinanet_head", "no images",
      { T(F32, 5, 4, 8, 8, 3, 3), NONE, NONE, NONE, T(F32, 4, 9, 8, 3, 3), T(F32, 1, 9), T(F32, 4, 0, 8, 4, 4) },
      "num_outputs=3", { T(F32, 3, 0, 48, 3) } },
    { "vision.retinanet_head", "empty maps",
      { T(F32, 5, 4, 8, 8, 3, 3), NONE, NONE, NONE, T(F32, 4, 9, 8, 3, 3), T(F32, 1, 9), T(F32, 4, 2, 8, 0, 5) },
      "num_outputs=3", { T(F32, 3, 2, 0, 3) } },
    { "vision.retinanet_postprocess", "no anchors",
      { T(F32, 3, 2, 0, 5), T(F32, 3, 2, 0, 4), T(F32, 2, 0, 4), TV(I64, sizes_2x2, 2, 2, 2) },
      "num_anchors_per_level=0,0", { T(F32, 2, 0, 4), T(F32, 1, 0), T(I64, 1, 0), T(I64, 1, 3) }, .zeros = 8 },
    { "vision.retinanet_postprocess", "no images",
      { T(F32, 3, 0, 12, 5), T(F32, 3, 0, 12, 4), T(F32, 2, 12, 4), T(I64, 2, 0, 2) },
      "num_anchors_per_level=12", { T(F32, 2, 0, 4), T(F32, 1, 0), T(I64, 1, 0), T(I64, 1, 1) }, .zeros = 8 },
    { "vision.affine", "no images", { T(U8, 4, 0, 3, 8, 9) }, "angle=10;translate=1,2;scale=1;shear=0",
      { T(U8, 4, 0, 3, 8, 9) } },
    { "vision.rotate", "no images, 90 expanded", { T(F32, 4, 0, 3, 8, 9) }, "angle=90;expand=true",
      { T(F32, 4, 0, 3, 9, 8) } },
    { "vision.perspective", "no images", { T(U8, 4, 0, 3, 8, 9) }, "coefficients=1,0,0,0,1,0,0,0",
      { T(U8, 4, 0, 3, 8, 9) } },
    { "vision.elastic", "no images", { T(F32, 4, 0, 3, 8, 9), T(F32, 4, 1, 8, 9, 2) }, NULL,
      { T(F32, 4, 0, 3, 8, 9) } },
    { "vision.affine_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) },
      "canvas_size=5,6;angle=10;translate=1,2;scale=1;shear=0", { T(F32, 2, 0, 4) } },
    { "vision.rotate_bounding_boxes", "no boxes, expand", { T(F32, 2, 0, 4) }, "canvas_size=5,6;angle=10;expand=true",
      { T(F32, 2, 0, 4), T(I64, 1, 2) } },
    { "vision.affine_mask", "no masks", { T(U8, 3, 0, 8, 9) }, "angle=10;translate=1,2;scale=1;shear=0",
      { T(U8, 3, 0, 8, 9) } },
    { "vision.rotate_mask", "no masks, 90 expanded", { T(I64, 3, 0, 8, 9) }, "angle=90;expand=true",
      { T(I64, 3, 0, 9, 8) } },
    { "vision.perspective_mask", "no masks", { T(U8, 3, 0, 8, 9) }, "coefficients=1,0,0,0,1,0,0,0",
      { T(U8, 3, 0, 8, 9) } },
    { "vision.elastic_mask", "no masks", { T(U8, 3, 0, 8, 9), T(F32, 4, 1, 8, 9, 2) }, NULL, { T(U8, 3, 0, 8, 9) } },
    { "vision.perspective_bounding_boxes", "no boxes", { T(F32, 2, 0, 4) }, "canvas_size=5,6;coefficients=1,0,0,0,1,0,0,0",
      { T(F32, 2, 0, 4) } },
    { "vision.adjust_sharpness", "no images", { T(U8, 4, 0, 3, 8, 8) }, "sharpness_factor=0.5", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.augmix", "no images", { T(U8, 4, 0, 3, 8, 8) }, "seed=1", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.rand_augment", "no images", { T(U8, 4, 0, 3, 8, 8) }, "seed=1;num_ops=5", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.trivial_augment_wide", "no images", { T(F32, 4, 0, 3, 8, 8) }, "seed=2", { T(F32, 4, 0, 3, 8, 8) } },
    { "vision.auto_augment", "no images", { T(U8, 4, 0, 1, 8, 8) }, "seed=3", { T(U8, 4, 0, 1, 8, 8) } },
    { "vision.random_erasing", "no images", { T(U8, 4, 0, 3, 8, 8) }, "p=1", { T(U8, 4, 0, 3, 8, 8) } },
    { "vision.mixup", "no images", { T(F32, 4, 0, 3, 8, 8), T(I64, 1, 0) }, "num_classes=5",
      { T(F32, 4, 0, 3, 8, 8), T(F32, 2, 0, 5) } },
    { "vision.cutmix", "no images", { T(U8, 4, 0, 3, 8, 8), T(F32, 2, 0, 4) }, NULL,
      { T(U8, 4, 0, 3, 8, 8), T(F32, 2, 0, 4) } },
    { "vision.transform_sample", "no boxes", { T(U8, 3, 3, 8, 8), T(F32, 2, 0, 4) },
      "pipeline=[{\"RandomHorizontalFlip\": {\"p\": 1}}]", { T(U8, 3, 3, 8, 8), T(F32, 2, 0, 4), T(U8, 3, 0, 8, 8), T(I64, 1, 0) } },
    { "vision.elastic_bounding_boxes", "no boxes", { T(F32, 2, 0, 4), T(F32, 4, 1, 5, 6, 2) }, "canvas_size=5,6",
      { T(F32, 2, 0, 4) } },
    { "vision.drop_block2d", "no images of 2^30 x 2^30", { T(F32, 4, 0, 3, INT64_C(1) << 30, INT64_C(1) << 30) },
      "p=0.5;block_size=3", { T(F32, 4, 0, 3, INT64_C(1) << 30, INT64_C(1) << 30) } },
    /* ----------------------------------------------------------- layers */
    { "vision.conv2d", "no images", { T(F32, 4, 0, 4, 5, 5), T(F32, 4, 6, 2, 3, 3) }, "groups=2",
      { T(F32, 4, 0, 6, 3, 3) } },
    { "vision.conv2d", "no output channels", { T(F32, 4, 1, 4, 5, 5), T(F32, 4, 0, 4, 3, 3) }, "padding=1",
      { T(F32, 4, 1, 0, 5, 5) } },
    { "vision.batch_norm", "no images", { T(F32, 4, 0, 3, 4, 4), T(F32, 1, 3), T(F32, 1, 3) }, NULL,
      { T(F32, 4, 0, 3, 4, 4) } },
    { "vision.relu", "no rows", { T(F32, 2, 0, 3) }, NULL, { T(F32, 2, 0, 3) } },
    { "vision.relu6", "no rows", { T(F32, 2, 0, 3) }, NULL, { T(F32, 2, 0, 3) } },
    { "vision.silu", "no rows", { T(F32, 2, 0, 3) }, NULL, { T(F32, 2, 0, 3) } },
    { "vision.gelu", "no rows", { T(F32, 2, 3, 0) }, "approximate=tanh", { T(F32, 2, 3, 0) } },
    { "vision.hardswish", "no rows", { T(F32, 1, 0) }, NULL, { T(F32, 1, 0) } },
    { "vision.sigmoid", "no rows", { T(F32, 3, 2, 0, 2) }, NULL, { T(F32, 3, 2, 0, 2) } },
    { "vision.max_pool2d", "no images", { T(F32, 4, 0, 3, 8, 8) }, "kernel_size=2", { T(F32, 4, 0, 3, 4, 4) } },
    /* torch: "non-zero sizes for non-batch dimensions" */
    { "vision.max_pool2d", "empty map", { T(F32, 4, 1, 3, 0, 8) }, "kernel_size=1", .expect = LOOM_EINVAL,
      .message = "non-zero" },
    { "vision.avg_pool2d", "no images", { T(F32, 4, 0, 3, 8, 8) }, "kernel_size=3;stride=2;padding=1",
      { T(F32, 4, 0, 3, 4, 4) } },
    { "vision.adaptive_avg_pool2d", "no images", { T(F32, 4, 0, 3, 8, 8) }, "output_size=2",
      { T(F32, 4, 0, 3, 2, 2) } },
    { "vision.adaptive_avg_pool2d", "no channels", { T(F32, 4, 1, 0, 8, 8) }, "output_size=2",
      .expect = LOOM_EINVAL, .message = "non-zero" },
    { "vision.linear", "no rows", { T(F32, 2, 0, 5), T(F32, 2, 4, 5) }, NULL, { T(F32, 2, 0, 4) } },
    { "vision.linear", "no in_features", { T(F32, 2, 3, 0), T(F32, 2, 4, 0) }, NULL, { T(F32, 2, 3, 4) },
      .zeros = 1 },
    { "vision.softmax", "no rows", { T(F32, 2, 0, 5) }, "dim=1", { T(F32, 2, 0, 5) } },
    { "vision.layer_norm", "no rows", { T(F32, 2, 0, 8), T(F32, 1, 8) }, NULL, { T(F32, 2, 0, 8) } },
    { "vision.group_norm", "no images", { T(F32, 4, 0, 8, 4, 4), T(F32, 1, 8), T(F32, 1, 8) }, "num_groups=4",
      { T(F32, 4, 0, 8, 4, 4) } },
    { "vision.group_norm", "empty maps", { T(F32, 4, 2, 8, 0, 3) }, "num_groups=2", { T(F32, 4, 2, 8, 0, 3) } },
    /* Mask R-CNN's predictor on no RoIs: [0, Cout, 2H, 2W] */
    { "vision.conv_transpose2d", "no images", { T(F32, 4, 0, 8, 7, 7), T(F32, 4, 8, 5, 2, 2), T(F32, 1, 5) },
      "stride=2", { T(F32, 4, 0, 5, 14, 14) } },
    /* torchvision's paste_masks_in_image of no detections: masks.new_empty((0, 1, H, W)) */
    { "vision.paste_masks", "no masks", { T(F32, 4, 0, 1, 28, 28), T(F32, 2, 0, 4) }, "image_size=30,40",
      { T(F32, 4, 0, 1, 30, 40) } },
    /* torch: a map without pixels gives a non-positive output (here refused by name) */
    { "vision.conv_transpose2d", "empty maps", { T(F32, 4, 1, 8, 0, 7), T(F32, 4, 8, 5, 2, 2) }, "stride=2",
      { NONE }, LOOM_EINVAL, "non-zero H and W" },
    { "vision.squeeze_excitation", "no images",
      { T(F32, 4, 0, 8, 3, 3), T(F32, 4, 2, 8, 1, 1), T(F32, 1, 2), T(F32, 4, 8, 2, 1, 1), T(F32, 1, 8) }, NULL,
      { T(F32, 4, 0, 8, 3, 3) } },
    { "vision.squeeze_excitation", "empty maps",
      { T(F32, 4, 1, 8, 0, 3), T(F32, 4, 2, 8, 1, 1), T(F32, 1, 2), T(F32, 4, 8, 2, 1, 1), T(F32, 1, 8) }, NULL,
      .expect = LOOM_EINVAL, .message = "non-zero" },
    { "vision.channel_shuffle", "no images", { T(F32, 4, 0, 6, 2, 2) }, "groups=3", { T(F32, 4, 0, 6, 2, 2) } },
    { "vision.channel_shuffle", "empty maps", { T(U8, 3, 2, 6, 0) }, "groups=2", { T(U8, 3, 2, 6, 0) } },
#define VIT_BLOCK_WEIGHTS(d, m) T(F32, 1, d), T(F32, 1, d), T(F32, 2, 3 * (d), d), T(F32, 1, 3 * (d)),            \
                                T(F32, 2, d, d), T(F32, 1, d), T(F32, 1, d), T(F32, 1, d), T(F32, 2, m, d), \
                                T(F32, 1, m), T(F32, 2, d, m), T(F32, 1, d)
    { "vision.vit_encoder_block", "no images", { T(F32, 3, 0, 5, 8), VIT_BLOCK_WEIGHTS(8, 16) }, "num_heads=2",
      { T(F32, 3, 0, 5, 8) } },
    { "vision.vit_encoder_block", "no tokens", { T(F32, 3, 2, 0, 8), VIT_BLOCK_WEIGHTS(8, 16) }, "num_heads=2",
      { T(F32, 3, 2, 0, 8) } },
#undef VIT_BLOCK_WEIGHTS
#define SWIN_ATTN_WEIGHTS T(F32, 2, 24, 8), T(F32, 1, 24), T(F32, 2, 8, 8), T(F32, 1, 8), T(F32, 2, 9, 2), T(I64, 1, 16)
    { "vision.swin_window_attention", "no images", { T(F32, 4, 0, 5, 5, 8), SWIN_ATTN_WEIGHTS },
      "window_size=2;shift_size=1;num_heads=2", { T(F32, 4, 0, 5, 5, 8) } },
    { "vision.swin_window_attention", "no rows", { T(F32, 4, 2, 0, 5, 8), SWIN_ATTN_WEIGHTS },
      "window_size=2;num_heads=2", { T(F32, 4, 2, 0, 5, 8) } },
#undef SWIN_ATTN_WEIGHTS
    { "vision.swin_patch_merging", "no images", { T(F32, 4, 0, 5, 5, 8), T(F32, 1, 32), T(F32, 1, 32),
      T(F32, 2, 16, 32) }, NULL, { T(F32, 4, 0, 3, 3, 16) } },
    { "vision.swin_mlp", "no images", { T(F32, 4, 0, 5, 5, 8), T(F32, 1, 8), T(F32, 1, 8), T(F32, 2, 32, 8),
      T(F32, 1, 32), T(F32, 2, 8, 32), T(F32, 1, 8) }, NULL, { T(F32, 4, 0, 5, 5, 8) } },

    /* ----------------------------------------------------------- models */
    /* object 1: a resnet18 of zeros with 7 classes (setup) */
    { "vision.resnet18", "no images", { T(F32, 4, 0, 3, 64, 64) }, NULL, { T(F32, 2, 0, 7) }, .object = 1 },
    { "vision.resnet18", "one image", { T(F32, 4, 1, 3, 32, 32) }, NULL, { T(F32, 2, 1, 7) }, .object = 1,
      .zeros = 1 },
    /* the other classes' weights are hundreds of MB: their calls without an
    ** object (tests/vision/models runs them) */
#define MODEL_NO_OBJECT(id) { "vision." #id, "no object", { T(F32, 4, 0, 3, 64, 64) }, NULL, .expect = LOOM_EINVAL, \
                              .message = "object" },
    MODEL_NO_OBJECT(resnet34) MODEL_NO_OBJECT(resnet50) MODEL_NO_OBJECT(resnet101) MODEL_NO_OBJECT(resnet152)
    MODEL_NO_OBJECT(resnext50_32x4d) MODEL_NO_OBJECT(resnext101_32x8d) MODEL_NO_OBJECT(resnext101_64x4d)
    MODEL_NO_OBJECT(wide_resnet50_2) MODEL_NO_OBJECT(wide_resnet101_2)
    MODEL_NO_OBJECT(regnet_y_400mf) MODEL_NO_OBJECT(regnet_y_800mf) MODEL_NO_OBJECT(regnet_y_1_6gf)
    MODEL_NO_OBJECT(regnet_y_3_2gf) MODEL_NO_OBJECT(regnet_y_8gf) MODEL_NO_OBJECT(regnet_y_16gf)
    MODEL_NO_OBJECT(regnet_y_32gf) MODEL_NO_OBJECT(regnet_y_128gf) MODEL_NO_OBJECT(regnet_x_400mf)
    MODEL_NO_OBJECT(regnet_x_800mf) MODEL_NO_OBJECT(regnet_x_1_6gf) MODEL_NO_OBJECT(regnet_x_3_2gf)
    MODEL_NO_OBJECT(regnet_x_8gf) MODEL_NO_OBJECT(regnet_x_16gf) MODEL_NO_OBJECT(regnet_x_32gf)
    MODEL_NO_OBJECT(efficientnet_v2_s) MODEL_NO_OBJECT(efficientnet_v2_m) MODEL_NO_OBJECT(efficientnet_v2_l)
    MODEL_NO_OBJECT(shufflenet_v2_x0_5) MODEL_NO_OBJECT(shufflenet_v2_x1_0) MODEL_NO_OBJECT(shufflenet_v2_x1_5)
    MODEL_NO_OBJECT(shufflenet_v2_x2_0) MODEL_NO_OBJECT(mnasnet0_5) MODEL_NO_OBJECT(mnasnet0_75)
    MODEL_NO_OBJECT(mnasnet1_0) MODEL_NO_OBJECT(mnasnet1_3)
    MODEL_NO_OBJECT(vit_b_16) MODEL_NO_OBJECT(vit_b_32) MODEL_NO_OBJECT(vit_l_16) MODEL_NO_OBJECT(vit_h_14)
    MODEL_NO_OBJECT(vision_transformer) MODEL_NO_OBJECT(resnet) MODEL_NO_OBJECT(regnet) MODEL_NO_OBJECT(efficientnet_v2)
    MODEL_NO_OBJECT(shufflenet_v2) MODEL_NO_OBJECT(mnasnet)
    MODEL_NO_OBJECT(swin_t) MODEL_NO_OBJECT(swin_s) MODEL_NO_OBJECT(swin_b) MODEL_NO_OBJECT(swin_transformer)
    MODEL_NO_OBJECT(fasterrcnn) MODEL_NO_OBJECT(fasterrcnn_resnet50_fpn) MODEL_NO_OBJECT(fasterrcnn_resnet50_fpn_v2)
    MODEL_NO_OBJECT(fasterrcnn_rpn) MODEL_NO_OBJECT(fasterrcnn_resnet50_fpn_rpn)
    MODEL_NO_OBJECT(fasterrcnn_resnet50_fpn_v2_rpn)
    MODEL_NO_OBJECT(maskrcnn) MODEL_NO_OBJECT(maskrcnn_resnet50_fpn) MODEL_NO_OBJECT(maskrcnn_resnet50_fpn_v2)
    MODEL_NO_OBJECT(retinanet) MODEL_NO_OBJECT(retinanet_resnet50_fpn) MODEL_NO_OBJECT(retinanet_resnet50_fpn_v2)
    MODEL_NO_OBJECT(retinanet_features) MODEL_NO_OBJECT(retinanet_resnet50_fpn_features)
    MODEL_NO_OBJECT(retinanet_resnet50_fpn_v2_features)
    MODEL_NO_OBJECT(fasterrcnn_mobilenet_v3) MODEL_NO_OBJECT(fasterrcnn_mobilenet_v3_large_fpn)
    MODEL_NO_OBJECT(fasterrcnn_mobilenet_v3_large_320_fpn) MODEL_NO_OBJECT(fasterrcnn_mobilenet_v3_rpn)
    MODEL_NO_OBJECT(fasterrcnn_mobilenet_v3_large_fpn_rpn) MODEL_NO_OBJECT(fasterrcnn_mobilenet_v3_large_320_fpn_rpn)
#undef MODEL_NO_OBJECT
    /* no inputs: an entry of the table as JSON (any length), or a refusal */
    { "vision.weights_meta", "an entry", { NONE }, "model=vision.resnet18;weights=DEFAULT", { NONE } },
    { "vision.weights_meta", "a class without entries", { NONE }, "model=vision.nms", { NONE },
      .expect = LOOM_EINVAL, .message = "no weight entries" },
#ifdef LOOM_TEST_HAVE_IMAGE_IO  /* the image_io module is built with libjpeg-turbo and libpng */
    /* ------------------------------------------------------------ image_io */
    /* torchvision: "Expected a non empty 1-dimensional tensor" for empty file bytes */
    { "vision.decode_jpeg", "no bytes", { T(U8, 1, 0) }, NULL, { T(U8, 3, 0, 0, 0) }, .expect = LOOM_EINVAL,
      .message = "empty" },
    { "vision.decode_png", "no bytes", { T(U8, 1, 0) }, NULL, { T(U8, 3, 0, 0, 0) }, .expect = LOOM_EINVAL,
      .message = "empty" },
    { "vision.decode_image", "no bytes", { T(U8, 1, 0) }, NULL, { T(U8, 3, 0, 0, 0) }, .expect = LOOM_EINVAL,
      .message = "empty" },
    { "vision.decode_image", "a batch of no files", { T(U8, 1, 0), TV(I64, zero_offset, 1, 1) }, NULL,
      { T(U8, 4, 0, 0, 0, 0) } },
    /* torchvision: libjpeg's "Empty JPEG image", libpng's "Image width is zero in IHDR" */
    { "vision.encode_jpeg", "no rows", { T(U8, 3, 3, 0, 5) }, NULL, { T(U8, 1, 0) }, .expect = LOOM_EINVAL,
      .message = "no pixels" },
    { "vision.encode_png", "no columns", { T(U8, 3, 1, 4, 0) }, NULL, { T(U8, 1, 0) }, .expect = LOOM_EINVAL,
      .message = "no pixels" },
    /* a device is not a file (torchvision: "Expected a non empty file") */
    { "vision.read_file", "an empty device", { NONE }, "path=/dev/null", { T(U8, 1, 0) }, .expect = LOOM_EIO,
      .message = "/dev/null" },
#endif
};

static rm_keys *resnet_keys;

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    oc_objects[0] = resnet18_zeros(&resnet_keys, 7);
    if (oc_objects[0] == NULL) {
        fprintf(stderr, "vision.resnet18 from memory: %s\n", loom_last_error());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    loom_object_free(oc_objects[0]);
    oc_objects[0] = NULL;
    resnet18_zeros_free(resnet_keys);
    return tu_teardown(state);
}

int main(void)
{
    return oc_run_group("vision_empty", "vision.", cases, sizeof cases / sizeof cases[0], setup, teardown);
}
