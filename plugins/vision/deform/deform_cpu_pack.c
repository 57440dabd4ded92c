/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_cpu_pack.c - the deform module of vision.so: its ops and their
** cpu kernels (deform_conv_cpu.c, dropout_cpu.c).
*/
#include "deform.h"

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(vision_deform_conv2d_schema, "cpu:tiled-im2col-gemm", VISION_FLOATS, deform_conv2d_cpu),
    PK_KERNEL_CPU(vision_deform_conv2d_backward_schema, "cpu:im2col-col2im", VISION_FLOATS,
                  deform_conv2d_backward_cpu),
    PK_KERNEL_CPU(vision_drop_block2d_schema, "cpu:separable-maxpool", VISION_FLOATS, drop_block2d_cpu),
    PK_KERNEL_CPU(vision_drop_block3d_schema, "cpu:separable-maxpool", VISION_FLOATS, drop_block3d_cpu),
    PK_KERNEL_CPU(vision_stochastic_depth_schema, "cpu:rows", VISION_FLOATS, stochastic_depth_cpu),
};

const pk_module vision_deform_cpu = PK_MODULE("deform", vision_deform_ops, cpu_kernels, NULL);
