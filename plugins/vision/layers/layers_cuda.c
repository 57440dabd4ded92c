/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_cuda.c - the layers module of vision-cuda.so: the same ops as
** vision.so's and the cuda kernels of each file (conv2d on cuDNN when the
** build found it, activations and batch_norm, pools, linear / softmax /
** layer_norm, squeeze_excitation, channel_shuffle and group_norm), registered together.
*/
#include "layers_cuda.h"

static loom_status layers_register_cuda(const loom_host_api *host, loom_registrar *reg)
{
    loom_status st = pk_register_kernels(host, reg, layers_activation_cuda_kernels,
                                         PK_COUNT(layers_activation_cuda_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, layers_pool_cuda_kernels, PK_COUNT(layers_pool_cuda_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, layers_rowwise_cuda_kernels, PK_COUNT(layers_rowwise_cuda_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, layers_blocks_cuda_kernels, PK_COUNT(layers_blocks_cuda_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_group_norm_cuda_kernel, 1);
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_conv_transpose2d_cuda_kernel, 1);
#ifdef LOOM_VISION_HAVE_CUDNN
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, &layers_conv2d_cuda_kernel, 1);
#endif
    return st;
}

const pk_module vision_layers_cuda = { .name = "layers", .ops = vision_layers_ops,
                                       .n_ops = PK_COUNT(vision_layers_ops), .register_more = layers_register_cuda };
