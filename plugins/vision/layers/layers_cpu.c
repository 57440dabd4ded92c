/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_cpu.c - the layers module of vision.so: its ops and the cpu
** kernels of each file (conv2d, activations and batch_norm, pools, linear /
** softmax / layer_norm, squeeze_excitation, channel_shuffle, group_norm) and, when oneDNN is built, conv2d's onednn kernel,
** registered together.
*/
#include "layers.h"

extern const loom_kernel_desc layers_conv2d_cpu_kernel;
extern const loom_kernel_desc layers_activation_cpu_kernels[7];
extern const loom_kernel_desc layers_pool_cpu_kernels[3];
extern const loom_kernel_desc layers_rowwise_cpu_kernels[3];
extern const loom_kernel_desc layers_squeeze_excitation_cpu_kernel, layers_channel_shuffle_cpu_kernel;
extern const loom_kernel_desc layers_group_norm_cpu_kernel;
extern const loom_kernel_desc layers_conv_transpose2d_cpu_kernel;
#ifdef LOOM_VISION_HAVE_ONEDNN
extern const loom_kernel_desc layers_conv2d_onednn_kernel;
#endif

static loom_status layers_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    loom_status st = pk_register_kernels(host, reg, &layers_conv2d_cpu_kernel, 1);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, layers_activation_cpu_kernels, PK_COUNT(layers_activation_cpu_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, layers_pool_cpu_kernels, PK_COUNT(layers_pool_cpu_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, layers_rowwise_cpu_kernels, PK_COUNT(layers_rowwise_cpu_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_squeeze_excitation_cpu_kernel, 1);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_channel_shuffle_cpu_kernel, 1);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_group_norm_cpu_kernel, 1);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_conv_transpose2d_cpu_kernel, 1);
#ifdef LOOM_VISION_HAVE_ONEDNN
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_conv2d_onednn_kernel, 1);
#endif
    return st;
}

const pk_module vision_layers_cpu = { .name = "layers", .ops = vision_layers_ops,
                                      .n_ops = PK_COUNT(vision_layers_ops), .register_more = layers_register_cpu };
