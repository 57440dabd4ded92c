/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv_transpose.h - vision.conv_transpose2d, F.conv_transpose2d at
** inference (the gradient of conv2d with respect to its input):
**   input [N, Cin, H, W], weight [Cin, Cout / groups, kh, kw], bias [Cout]
**   Ho = (H - 1) sh - 2 ph + dh (kh - 1) + oph + 1 (Wo alike)
**   y[n, g Cout_g + c, iy sh - ph + ki dh, ix sw - pw + kj dw]
**       += x[n, g Cin_g + i, iy, ix] * w[g Cin_g + i, c, ki, kj]
** The cpu kernel (conv_transpose_cpu.c) is the col2im formulation on the
** shared GEMM: col = W_g^T x_g per group, then each output channel gathers
** its kh kw column rows; the cuda kernel (conv_transpose_cuda_kernels.cu)
** gathers per output element. The checks (conv_transpose_schema.c) are
** shared by both, with torch's conditions and messages naming the argument.
*/
#ifndef LOOM_VISION_CONV_TRANSPOSE_H
#define LOOM_VISION_CONV_TRANSPOSE_H

#include <stdint.h>

#include "layers.h"

enum { CT_INPUT = 0, CT_WEIGHT = 1, CT_BIAS = 2 };

#define CONV_TRANSPOSE2D_ATTRS(A, op)                                                              \
    A(op, stride, INTS, LAYERS_INTS_DEFAULT(layers_ones2, 2), LOOM_ATTR_POSITIVE,                  \
      "(sh, sw) or one value for both; > 0", )                                                     \
    A(op, padding, INTS, LAYERS_INTS_DEFAULT(layers_zeros2, 2), LOOM_ATTR_NONNEG,                  \
      "(ph, pw) or one value for both: dilation * (kernel - 1) - padding zeros pad the input", )  \
    A(op, output_padding, INTS, LAYERS_INTS_DEFAULT(layers_zeros2, 2), LOOM_ATTR_NONNEG,           \
      "(oph, opw) or one value for both: added to one side of the output; below stride or dilation", ) \
    A(op, groups, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE,                                    \
      "channel groups: Cin is a multiple of it, Cout = groups * weight.shape[1]", )                \
    A(op, dilation, INTS, LAYERS_INTS_DEFAULT(layers_ones2, 2), LOOM_ATTR_POSITIVE,                \
      "(dh, dw) or one value for both; > 0", )
PK_ATTR_ENUM(conv_transpose2d, CONV_TRANSPOSE2D_ATTRS);

typedef struct conv_transpose_geom {
    int64_t n, cin, h, w;           /* input [n, cin, h, w] */
    int64_t cout, kh, kw, groups;   /* weight [cin, cout / groups, kh, kw] */
    int64_t sh, sw, ph, pw, oph, opw, dh, dw;
    int64_t ho, wo;
    const float *x, *wt, *bias;     /* bias NULL when absent */
    float *y;
} conv_transpose_geom;

/* Checks the call (f32 contiguous, shapes, attributes as torch) and
** allocates the output [n, cout, ho, wo] (*out; its numel may be 0). */
loom_status conv_transpose2d_check(loom_call *call, conv_transpose_geom *g, loom_tensor **out);

#endif /* LOOM_VISION_CONV_TRANSPOSE_H */
