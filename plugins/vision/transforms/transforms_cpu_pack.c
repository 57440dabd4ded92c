/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transforms_cpu_pack.c - the transforms module of vision.so: its ops and
** their cpu kernels. vision.resize is registered once the CPU features are
** known, so its implementation name says whether the AVX2 passes run.
*/
#include "cpu.h"
#include "register.h"
#include "augment.h"
#include "sample.h"
#include "transforms.h"

static int have_avx2 = -1;

int transforms_have_avx2(void)
{
    if (have_avx2 < 0)
        have_avx2 = pk_cpu_avx2(PK_CPU_FMA);
    return have_avx2;
}

#define MASK_KERNEL_DTYPES 0   /* the schema's dtypes */

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(vision_resize_mask_schema, "cpu:nearest-rows", MASK_KERNEL_DTYPES, vision_resize_mask_cpu),
    PK_KERNEL_CPU(vision_resize_bounding_boxes_schema, "cpu:scale", LOOM_DTYPE_BIT(LOOM_DTYPE_F32),
                  vision_resize_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_crop_schema, "cpu:window-rows", 0, vision_crop_cpu),
    PK_KERNEL_CPU(vision_center_crop_schema, "cpu:window-rows", 0, vision_center_crop_cpu),
    PK_KERNEL_CPU(vision_resized_crop_schema, "cpu:window-then-separable", 0, vision_resized_crop_cpu),
    PK_KERNEL_CPU(vision_pad_schema, "cpu:window-rows", 0, vision_pad_cpu),
    PK_KERNEL_CPU(vision_horizontal_flip_schema, "cpu:window-rows", 0, vision_horizontal_flip_cpu),
    PK_KERNEL_CPU(vision_vertical_flip_schema, "cpu:window-rows", 0, vision_vertical_flip_cpu),
    PK_KERNEL_CPU(vision_convert_bounding_box_format_schema, "cpu:boxes", 0, vision_convert_bounding_box_format_cpu),
    PK_KERNEL_CPU(vision_clamp_bounding_boxes_schema, "cpu:boxes", 0, vision_clamp_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_sanitize_bounding_boxes_schema, "cpu:boxes", 0, vision_sanitize_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_horizontal_flip_bounding_boxes_schema, "cpu:boxes", 0,
                  vision_horizontal_flip_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_vertical_flip_bounding_boxes_schema, "cpu:boxes", 0, vision_vertical_flip_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_crop_bounding_boxes_schema, "cpu:boxes", 0, vision_crop_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_center_crop_bounding_boxes_schema, "cpu:boxes", 0, vision_center_crop_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_resized_crop_bounding_boxes_schema, "cpu:boxes", 0, vision_resized_crop_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_pad_bounding_boxes_schema, "cpu:boxes", 0, vision_pad_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_adjust_brightness_schema, "cpu:pixels", 0, vision_adjust_brightness_cpu),
    PK_KERNEL_CPU(vision_adjust_sharpness_schema, "cpu:pixels-3x3", 0, vision_adjust_sharpness_cpu),
    PK_KERNEL_CPU(vision_adjust_contrast_schema, "cpu:pixels", 0, vision_adjust_contrast_cpu),
    PK_KERNEL_CPU(vision_adjust_saturation_schema, "cpu:pixels", 0, vision_adjust_saturation_cpu),
    PK_KERNEL_CPU(vision_adjust_hue_schema, "cpu:pixels-hsv", 0, vision_adjust_hue_cpu),
    PK_KERNEL_CPU(vision_adjust_gamma_schema, "cpu:pixels", 0, vision_adjust_gamma_cpu),
    PK_KERNEL_CPU(vision_autocontrast_schema, "cpu:pixels", 0, vision_autocontrast_cpu),
    PK_KERNEL_CPU(vision_equalize_schema, "cpu:histogram-lut", 0, vision_equalize_cpu),
    PK_KERNEL_CPU(vision_posterize_schema, "cpu:pixels", 0, vision_posterize_cpu),
    PK_KERNEL_CPU(vision_solarize_schema, "cpu:pixels", 0, vision_solarize_cpu),
    PK_KERNEL_CPU(vision_invert_schema, "cpu:pixels", 0, vision_invert_cpu),
    PK_KERNEL_CPU(vision_gaussian_blur_schema, "cpu:conv2d-reflect", 0, vision_gaussian_blur_cpu),
    PK_KERNEL_CPU(vision_normalize_schema, "cpu:pixels", 0, vision_normalize_cpu),
    PK_KERNEL_CPU(vision_to_dtype_schema, "cpu:pixels", 0, vision_to_dtype_cpu),
    PK_KERNEL_CPU(vision_affine_schema, "cpu:affine-grid-sample", 0, vision_affine_cpu),
    PK_KERNEL_CPU(vision_rotate_schema, "cpu:affine-grid-sample", 0, vision_rotate_cpu),
    PK_KERNEL_CPU(vision_perspective_schema, "cpu:perspective-grid-sample", 0, vision_perspective_cpu),
    PK_KERNEL_CPU(vision_elastic_schema, "cpu:displaced-grid-sample", 0, vision_elastic_cpu),
    PK_KERNEL_CPU(vision_affine_bounding_boxes_schema, "cpu:boxes", 0, vision_affine_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_rotate_bounding_boxes_schema, "cpu:boxes", 0, vision_rotate_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_affine_mask_schema, "cpu:affine-grid-nearest", 0, vision_affine_mask_cpu),
    PK_KERNEL_CPU(vision_rotate_mask_schema, "cpu:affine-grid-nearest", 0, vision_rotate_mask_cpu),
    PK_KERNEL_CPU(vision_perspective_mask_schema, "cpu:perspective-grid-nearest", 0, vision_perspective_mask_cpu),
    PK_KERNEL_CPU(vision_elastic_mask_schema, "cpu:displaced-grid-nearest", 0, vision_elastic_mask_cpu),
    PK_KERNEL_CPU(vision_perspective_bounding_boxes_schema, "cpu:boxes", 0, vision_perspective_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_elastic_bounding_boxes_schema, "cpu:boxes", 0, vision_elastic_bounding_boxes_cpu),
    PK_KERNEL_CPU(vision_augmix_schema, "cpu:op-chains-mixed", 0, vision_augmix_cpu),
    PK_KERNEL_CPU(vision_rand_augment_schema, "cpu:op-chain", 0, vision_rand_augment_cpu),
    PK_KERNEL_CPU(vision_trivial_augment_wide_schema, "cpu:op-chain", 0, vision_trivial_augment_wide_cpu),
    PK_KERNEL_CPU(vision_auto_augment_schema, "cpu:op-chain", 0, vision_auto_augment_cpu),
    PK_KERNEL_CPU(vision_random_erasing_schema, "cpu:region-fill", 0, vision_random_erasing_cpu),
    PK_KERNEL_CPU(vision_mixup_schema, "cpu:blend-rolled", 0, vision_mixup_cpu),
    PK_KERNEL_CPU(vision_cutmix_schema, "cpu:box-from-rolled", 0, vision_cutmix_cpu),
    PK_KERNEL_CPU(vision_transform_sample_schema, "cpu:op-pipeline", 0, vision_transform_sample_cpu),
    PK_KERNEL_CPU(vision_rgb_to_grayscale_schema, "cpu:pixels", 0, vision_rgb_to_grayscale_cpu),
};

static loom_status transforms_register_isa(const loom_host_api *host, loom_registrar *reg)
{
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(vision_resize_schema, transforms_have_avx2() ? "cpu:separable-fixed-point-avx2"
                                                                   : "cpu:separable-fixed-point",
                      LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), vision_resize_cpu,
                      .flags = LOOM_KERNEL_STRIDED),
        PK_KERNEL_CPU(vision_preprocess_schema, transforms_have_avx2() ? "cpu:fused-crop-window-avx2"
                                                                       : "cpu:fused-crop-window",
                      LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), vision_preprocess_cpu,
                      .flags = LOOM_KERNEL_STRIDED),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module vision_transforms_cpu = PK_MODULE("transforms", vision_transforms_ops, cpu_kernels,
                                                  transforms_register_isa);
