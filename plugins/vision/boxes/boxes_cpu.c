/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_cpu.c - the box module of vision.so: its ops and their cpu
** kernels. The NMS and box_iou / generalized_box_iou kernels are
** registered after the CPU features are known: their implementation names
** say which vector kernels LOOM_CPU_MAX_ISA left (pk_cpu_avx2).
*/
#include "boxes.h"
#include "cpu.h"

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(vision_distance_box_iou_schema, "cpu:pairwise", VISION_FLOATS, bx_distance_box_iou_cpu),
    PK_KERNEL_CPU(vision_complete_box_iou_schema, "cpu:pairwise", VISION_FLOATS, bx_complete_box_iou_cpu),
    PK_KERNEL_CPU(vision_generalized_box_iou_loss_schema, "cpu:elementwise", VISION_FLOATS, bx_giou_loss_cpu),
    PK_KERNEL_CPU(vision_distance_box_iou_loss_schema, "cpu:elementwise", VISION_FLOATS, bx_diou_loss_cpu),
    PK_KERNEL_CPU(vision_complete_box_iou_loss_schema, "cpu:elementwise", VISION_FLOATS, bx_ciou_loss_cpu),
    PK_KERNEL_CPU(vision_box_convert_schema, "cpu:elementwise", VISION_FLOATS, bx_box_convert_cpu),
    PK_KERNEL_CPU(vision_box_area_schema, "cpu:elementwise", VISION_FLOATS, bx_box_area_cpu),
    PK_KERNEL_CPU(vision_clip_boxes_to_image_schema, "cpu:elementwise", VISION_FLOATS, bx_clip_boxes_cpu),
    PK_KERNEL_CPU(vision_remove_small_boxes_schema, "cpu:elementwise", VISION_FLOATS, bx_remove_small_boxes_cpu),
};

/* The kernels whose implementation name depends on the ISA (the core
** copies a descriptor when it registers it). */
static loom_status boxes_register_isa(const loom_host_api *host, loom_registrar *reg)
{
    const int avx2 = pk_cpu_avx2(0);
    const char *greedy = avx2 ? "cpu:greedy-avx2" : "cpu:greedy-scalar";
    const char *pairwise = avx2 ? "cpu:pairwise-avx2" : "cpu:pairwise";
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(vision_nms_schema, greedy, PK_F32_F64, bx_nms_cpu),
        PK_KERNEL_CPU(vision_batched_nms_schema, greedy, PK_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_I64),
                      bx_batched_nms_cpu),
        PK_KERNEL_CPU(vision_box_iou_schema, pairwise, VISION_FLOATS, bx_box_iou_cpu),
        PK_KERNEL_CPU(vision_generalized_box_iou_schema, pairwise, VISION_FLOATS, bx_generalized_box_iou_cpu),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module vision_boxes_cpu = PK_MODULE("boxes", vision_boxes_ops, cpu_kernels, boxes_register_isa);
