/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detection_cpu_pack.c - the detection module of vision.so: its ops and
** their cpu kernels. Scalar float32 code on every CPU (the pixels of the
** transform go through vision.resize, which picks its AVX2 passes itself).
*/
#include "detection.h"

#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(vision_rcnn_transform_schema, "cpu:normalize-resize-pad", 0, vision_rcnn_transform_cpu),
    PK_KERNEL_CPU(vision_rcnn_resize_schema, "cpu:resize-bilinear", F32, vision_rcnn_resize_cpu),
    PK_KERNEL_CPU(vision_rcnn_postprocess_boxes_schema, "cpu:scale", F32, vision_rcnn_postprocess_boxes_cpu),
    PK_KERNEL_CPU(vision_anchor_generator_schema, "cpu:grid", 0, vision_anchor_generator_cpu),
    PK_KERNEL_CPU(vision_box_coder_decode_schema, "cpu:rows", F32, vision_box_coder_decode_cpu),
    PK_KERNEL_CPU(vision_rpn_proposals_schema, "cpu:topk-nms", 0, vision_rpn_proposals_cpu),
    PK_KERNEL_CPU(vision_multiscale_roi_align_schema, "cpu:roi-align-per-level", 0, vision_multiscale_roi_align_cpu),
    PK_KERNEL_CPU(vision_rcnn_postprocess_detections_schema, "cpu:softmax-decode-nms", 0,
                  vision_rcnn_postprocess_detections_cpu),
};

const pk_module vision_detection_cpu = PK_MODULE("detection", vision_detection_ops, cpu_kernels, NULL);
