/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_cuda_kernels.h - the device code of the layers module, called from
** the C files of vision-cuda.so (*_cuda.c). Every launcher is asynchronous
** on `stream` and returns the cudaError_t of its launch (0 = success). Data
** pointers are device memory of compact row-major f32 tensors, except
** channel_shuffle's, which copies any dtype through the sources' strides.
** The formulas are the cpu kernels' (activation_cpu.c, pool_cpu.c,
** rowwise_cpu.c, squeeze_excitation_cpu.c), evaluated in the same precision
** and order; nvcc may contract a multiply and an add into one FMA.
*/
#ifndef LOOM_VISION_LAYERS_CUDA_KERNELS_H
#define LOOM_VISION_LAYERS_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element-wise functions (torch's formulas in f32). */
typedef enum {
    LCU_ACT_NONE = 0,
    LCU_ACT_RELU,
    LCU_ACT_RELU6,
    LCU_ACT_SILU,
    LCU_ACT_GELU_ERF,
    LCU_ACT_GELU_TANH,
    LCU_ACT_HARDSWISH,
    LCU_ACT_SIGMOID,
    LCU_ACT_HARDSIGMOID,            /* relu6(x + 3) / 6: squeeze_excitation's scale activation */
} lcu_act;

/* y[i] = act(x[i]) for i < n (y may be x). */
int lcu_activation(int act, const float *x, float *y, int64_t n, void *stream);

/* batch_norm at inference over [outer, c, inner]: alpha = weight / sqrt(var
** + eps), beta = bias - mean * alpha (weight, bias may be NULL: 1 and 0),
** y = x * alpha + beta. */
int lcu_batch_norm(const float *x, const float *mean, const float *var, const float *weight, const float *bias,
                   float eps, float *y, int64_t outer, int64_t c, int64_t inner, void *stream);

/* conv2d's epilogue over y [n, c, plane]: y = act(y + bias[c]) (+ residual
** when residual is not NULL: residual_after_activation). bias may be NULL. */
int lcu_conv_epilogue(float *y, const float *bias, const float *residual, int act, int64_t n, int64_t c,
                      int64_t plane, void *stream);

/* nn.Conv2d's padding modes as a copy: planes of h x w into planes of
** (h + 2 ph) x (w + 2 pw); mode 1 reflect, 2 replicate, 3 circular (as
** layers_pad_mode). */
int lcu_pad(const float *x, float *y, int64_t planes, int64_t h, int64_t w, int64_t ph, int64_t pw, int mode,
            void *stream);

/* The 2-D pools (pool2d_geom's fields; ATen's windows, as pool_cpu.c). */
typedef struct lcu_pool {
    int64_t planes, h, w, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo;
    int32_t count_include_pad;
    int64_t divisor;                /* 0: none */
} lcu_pool;

int lcu_max_pool2d(const lcu_pool *p, const float *x, float *y, void *stream);
int lcu_avg_pool2d(const lcu_pool *p, const float *x, float *y, void *stream);
int lcu_adaptive_avg_pool2d(const lcu_pool *p, const float *x, float *y, void *stream);

/* softmax along a dim of len elements with stride inner, outer blocks. */
int lcu_softmax(const float *x, float *y, int64_t outer, int64_t len, int64_t inner, void *stream);

/* layer_norm of rows of len: mean and variance in double, the rest in f32
** (bias may be NULL). */
int lcu_layer_norm(const float *x, const float *weight, const float *bias, double eps, float *y, int64_t rows,
                   int64_t len, void *stream);

/* y[r, j] = bias[j] (bias NULL: 0) for r < rows, j < cols: the GEMM's C
** before it accumulates (beta = 1). */
int lcu_fill_rows(float *y, const float *bias, int64_t rows, int64_t cols, void *stream);

/* means[p] = sum(x[p, :hw]) / hw, each plane's sum in f32. */
int lcu_plane_means(const float *x, float *means, int64_t planes, int64_t hw, void *stream);

/* y[p, i] = x[p, i] * scale[p] for p < planes, i < hw (y may be x). */
int lcu_plane_scale(const float *x, const float *scale, float *y, int64_t planes, int64_t hw, void *stream);

/* channel_shuffle: output [n, c, inner] (compact) from cat([src0, src1], 1)
** viewed as [n, groups, c / groups, inner]; each source given by its data,
** channels and element strides over ndim dims (dims >= 2 are the inner
** ones, of the output's shape). elem: bytes per element. */
#define LCU_MAX_NDIM 12
typedef struct lcu_shuffle {
    int32_t ndim;
    int64_t shape[LCU_MAX_NDIM];    /* the output's */
    int64_t c, groups, inner, elem;
    const void *data[2];
    int64_t channels[2];            /* channels[1] == 0: no second source */
    int64_t stride[2][LCU_MAX_NDIM];
} lcu_shuffle;

int lcu_channel_shuffle(const lcu_shuffle *s, void *y, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_VISION_LAYERS_CUDA_KERNELS_H */
