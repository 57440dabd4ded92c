/*
** boxes_cpu.c - registers the cpu kernels of the box ops (vision.so). The
** table is completed at registration: implementation names follow the
** vector kernels the CPU and LOOM_CPU_MAX_ISA allow (bx_cpu_avx2).
*/

#include "cpu.h"
#include "boxes.h"
#include "register.h"

#define KERNEL(SCHEMA, IMPL, DTYPES, RUN)                                                   \
    { .struct_size = sizeof(loom_kernel_desc), .schema = &SCHEMA, .backend = "cpu",           \
      .device_type = LOOM_DEVICE_CPU, .impl = IMPL, .dtypes = DTYPES, .run = RUN }

static const loom_kernel_desc cpu_kernels[] = {
    KERNEL(vision_nms_schema, "cpu:greedy-avx2", VISION_F32_F64, bx_nms_cpu),
    KERNEL(vision_batched_nms_schema, "cpu:greedy-avx2", VISION_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_I64),
           bx_batched_nms_cpu),
    KERNEL(vision_box_iou_schema, "cpu:pairwise", VISION_FLOATS, bx_box_iou_cpu),
    KERNEL(vision_generalized_box_iou_schema, "cpu:pairwise", VISION_FLOATS, bx_generalized_box_iou_cpu),
    KERNEL(vision_distance_box_iou_schema, "cpu:pairwise", VISION_FLOATS, bx_distance_box_iou_cpu),
    KERNEL(vision_complete_box_iou_schema, "cpu:pairwise", VISION_FLOATS, bx_complete_box_iou_cpu),
    KERNEL(vision_generalized_box_iou_loss_schema, "cpu:elementwise", VISION_FLOATS, bx_giou_loss_cpu),
    KERNEL(vision_distance_box_iou_loss_schema, "cpu:elementwise", VISION_FLOATS, bx_diou_loss_cpu),
    KERNEL(vision_complete_box_iou_loss_schema, "cpu:elementwise", VISION_FLOATS, bx_ciou_loss_cpu),
    KERNEL(vision_box_convert_schema, "cpu:elementwise", VISION_FLOATS, bx_box_convert_cpu),
    KERNEL(vision_box_area_schema, "cpu:elementwise", VISION_FLOATS, bx_box_area_cpu),
    KERNEL(vision_clip_boxes_to_image_schema, "cpu:elementwise", VISION_FLOATS, bx_clip_boxes_cpu),
    KERNEL(vision_remove_small_boxes_schema, "cpu:elementwise", VISION_FLOATS, bx_remove_small_boxes_cpu),
};

int bx_cpu_avx2;


loom_status vision_boxes_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    bx_cpu_avx2 = pk_cpu_avx2(0);
    /* the implementation names say which kernels LOOM_CPU_MAX_ISA left; set
    ** on copies, as the core copies what it registers */
    loom_kernel_desc ks[sizeof cpu_kernels / sizeof cpu_kernels[0]];
    for (size_t i = 0; i < sizeof cpu_kernels / sizeof cpu_kernels[0]; i++) {
        ks[i] = cpu_kernels[i];
        if (ks[i].schema == &vision_nms_schema || ks[i].schema == &vision_batched_nms_schema)
            ks[i].impl = bx_cpu_avx2 ? "cpu:greedy-avx2" : "cpu:greedy-scalar";
        else if (ks[i].schema == &vision_box_iou_schema || ks[i].schema == &vision_generalized_box_iou_schema)
            ks[i].impl = bx_cpu_avx2 ? "cpu:pairwise-avx2" : "cpu:pairwise";
    }
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}
