/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_cuda_kernels.h - the device code of the deform module, called
** from C (deform_cuda_pack.c). Every launcher is asynchronous on `stream`
** and returns the cudaError_t of its launches (0 = success). Data pointers
** are device memory; `ws` is device workspace of the size the matching
** *_workspace function reports.
**
** dtype codes are the loom_dtype values: 1 f32, 2 f64, 3 f16. f16
** deform_conv2d is widened to f32 in the workspace and rounded once at the
** end; drop_block / stochastic_depth do torch's per-step f16 rounding.
*/
#ifndef LOOM_VISION_DEFORM_CUDA_KERNELS_H
#define LOOM_VISION_DEFORM_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct deform_cuda_conv {
    int32_t dtype;
    int32_t use_mask;
    int64_t n, cin, h, w, cout, kh, kw, groups, offset_groups;
    int64_t sh, sw, ph, pw, dh, dw, ho, wo;
    const void *input, *offset, *weight, *bias, *mask, *grad;   /* bias, mask, grad may be NULL */
} deform_cuda_conv;

size_t deform_cuda_forward_workspace(const deform_cuda_conv *c);
int deform_cuda_forward(const deform_cuda_conv *c, void *out, void *ws, void *stream);

/* outs: grad_input, grad_weight, grad_offset, grad_mask (ignored without a
** mask), grad_bias. */
size_t deform_cuda_backward_workspace(const deform_cuda_conv *c);
int deform_cuda_backward(const deform_cuda_conv *c, void *const *outs, void *ws, void *stream);

typedef struct deform_cuda_drop_block {
    int32_t dtype, dims;
    int64_t planes, sp[3], nsp[3], bs, numel;
    double gamma, eps;
    uint64_t seed;
    const void *input, *noise;      /* noise NULL: counter-based draw */
} deform_cuda_drop_block;

size_t deform_cuda_drop_block_workspace(const deform_cuda_drop_block *d);
int deform_cuda_drop_block_run(const deform_cuda_drop_block *d, void *out, void *ws, void *stream);

typedef struct deform_cuda_stochastic_depth {
    int32_t dtype;
    int64_t rows, row_len;
    double p;
    uint64_t seed;
    const void *input, *noise;
} deform_cuda_stochastic_depth;

int deform_cuda_stochastic_depth_run(const deform_cuda_stochastic_depth *s, void *out, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_VISION_DEFORM_CUDA_KERNELS_H */
