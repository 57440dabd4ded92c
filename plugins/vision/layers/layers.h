/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers.h - what the files of the vision `layers` module share: the
** building blocks of the classification models, each an op of its own with
** torch.nn.functional's name and semantics (inference only):
**   vision.conv2d               F.conv2d / nn.Conv2d (padding_mode), plus a
**                               fused residual and activation epilogue
**   vision.batch_norm           F.batch_norm(training=False)
**   vision.relu, relu6, silu, gelu, hardswish, sigmoid
**                               one op per torch function: each is its own
**                               F.* (and nn.*) name in torch, and models are
**                               written in those names
**   vision.max_pool2d, avg_pool2d, adaptive_avg_pool2d
**   vision.linear               F.linear
**   vision.softmax              F.softmax(dim)
**   vision.layer_norm           F.layer_norm(normalized_shape = weight's shape)
**   vision.group_norm           F.group_norm (group_norm.h)
**   vision.conv_transpose2d     F.conv_transpose2d (conv_transpose.h)
**   vision.squeeze_excitation, channel_shuffle
**                               the models' blocks (blocks.h)
** Every op takes f32, contiguous (compact row-major) tensors. The checks
** (layers_checks.c) are shared by every backend of the module, so all
** refuse the same calls with the same messages.
*/
#ifndef LOOM_VISION_LAYERS_H
#define LOOM_VISION_LAYERS_H

#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

#define LAYERS_DTYPES LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

#define VISION_LAYERS_OPS(X)                                                                       \
    X(vision_conv2d_schema) X(vision_batch_norm_schema)                                            \
    X(vision_relu_schema) X(vision_relu6_schema) X(vision_silu_schema) X(vision_gelu_schema)       \
    X(vision_hardswish_schema) X(vision_sigmoid_schema)                                            \
    X(vision_max_pool2d_schema) X(vision_avg_pool2d_schema) X(vision_adaptive_avg_pool2d_schema)   \
    X(vision_linear_schema) X(vision_softmax_schema) X(vision_layer_norm_schema)                  \
    X(vision_squeeze_excitation_schema) X(vision_channel_shuffle_schema)                           \
    X(vision_group_norm_schema) X(vision_conv_transpose2d_schema)
PK_OPS_DECLARE(vision_layers_ops, VISION_LAYERS_OPS);

/* Input positions. */
enum { CONV_INPUT = 0, CONV_WEIGHT = 1, CONV_BIAS = 2, CONV_RESIDUAL = 3 };
enum { BN_INPUT = 0, BN_MEAN = 1, BN_VAR = 2, BN_WEIGHT = 3, BN_BIAS = 4 };

#define LAYERS_INTS_DEFAULT(arr, n) { .type = LOOM_ATTR_INTS, .is_set = 1, .count = (n), .u = { .ints = (arr) } }
extern const int64_t layers_ones2[2], layers_zeros2[2];

/* conv2d: torch's attributes and nn.Conv2d's padding_mode; `activation`
** is the epilogue applied to conv + bias (loom's fusion; "none" is F.conv2d). */
#define CONV2D_ATTRS(A, op)                                                                        \
    A(op, stride, INTS, LAYERS_INTS_DEFAULT(layers_ones2, 2), LOOM_ATTR_POSITIVE,                  \
      "(sh, sw) or one value for both; > 0", )                                                     \
    A(op, padding, INTS, LAYERS_INTS_DEFAULT(layers_zeros2, 2), LOOM_ATTR_NONNEG,                  \
      "(ph, pw) or one value for both; >= 0", )                                                    \
    A(op, dilation, INTS, LAYERS_INTS_DEFAULT(layers_ones2, 2), LOOM_ATTR_POSITIVE,                \
      "(dh, dw) or one value for both; > 0", )                                                     \
    A(op, groups, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE,                                    \
      "channel groups: Cin and Cout are multiples of it (groups = Cin: depthwise)", )              \
    A(op, padding_mode, STRING, LOOM_DEFAULT_STRING("zeros"), 0,                                   \
      "nn.Conv2d's: zeros, reflect, replicate or circular", )                                      \
    A(op, activation, STRING, LOOM_DEFAULT_STRING("none"), 0,                                      \
      "applied to conv + bias: none, relu, silu or gelu (erf); fused into the GEMM epilogue", )     \
    A(op, residual_after_activation, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                \
      "false: act(conv + bias + residual) (a ResNet block's end); true: act(conv + bias) + residual " \
      "(torchvision's FusedMBConv without expansion); the residual may not be the output then", )
#define BATCH_NORM_ATTRS(A, op)                                                                    \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "added to running_var before the square root", )
#define NO_ATTRS(A, op)
#define GELU_ATTRS(A, op)                                                                          \
    A(op, approximate, STRING, LOOM_DEFAULT_STRING("none"), 0, "none (erf) or tanh", )
#define MAX_POOL2D_ATTRS(A, op)                                                                    \
    A(op, kernel_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "(kh, kw) or one value for both", )                                                          \
    A(op, stride, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "default: kernel_size", )           \
    A(op, padding, INTS, LAYERS_INTS_DEFAULT(layers_zeros2, 2), LOOM_ATTR_NONNEG,                  \
      "implicit -inf padding; at most half the kernel", )                                          \
    A(op, dilation, INTS, LAYERS_INTS_DEFAULT(layers_ones2, 2), LOOM_ATTR_POSITIVE, "> 0", )       \
    A(op, ceil_mode, BOOL, LOOM_DEFAULT_BOOL(0), 0, "ceil instead of floor for the output size", )
#define AVG_POOL2D_ATTRS(A, op)                                                                    \
    A(op, kernel_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "(kh, kw) or one value for both", )                                                          \
    A(op, stride, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "default: kernel_size", )           \
    A(op, padding, INTS, LAYERS_INTS_DEFAULT(layers_zeros2, 2), LOOM_ATTR_NONNEG,                  \
      "implicit zero padding; at most half the kernel", )                                          \
    A(op, ceil_mode, BOOL, LOOM_DEFAULT_BOOL(0), 0, "ceil instead of floor for the output size", ) \
    A(op, count_include_pad, BOOL, LOOM_DEFAULT_BOOL(1), 0, "padding counts in the divisor", )     \
    A(op, divisor_override, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_POSITIVE, "the divisor, when set", )
#define ADAPTIVE_POOL_ATTRS(A, op)                                                                 \
    A(op, output_size, INTS, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,           \
      "(Ho, Wo) or one value for both", )
#define SOFTMAX_ATTRS(A, op)                                                                       \
    A(op, dim, INT, LOOM_DEFAULT_INT(-1), 0, "the dimension summed to one (negative from the end)", )
#define LAYER_NORM_ATTRS(A, op)                                                                    \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "added to the variance before the square root", )
PK_ATTR_ENUM(conv2d, CONV2D_ATTRS);
PK_ATTR_ENUM(batch_norm, BATCH_NORM_ATTRS);
PK_ATTR_ENUM(gelu, GELU_ATTRS);
PK_ATTR_ENUM(max_pool2d, MAX_POOL2D_ATTRS);
PK_ATTR_ENUM(avg_pool2d, AVG_POOL2D_ATTRS);
PK_ATTR_ENUM(adaptive_pool, ADAPTIVE_POOL_ATTRS);
PK_ATTR_ENUM(softmax, SOFTMAX_ATTRS);
PK_ATTR_ENUM(layer_norm, LAYER_NORM_ATTRS);

/* ------------------------------------------------------------- conv2d */

typedef enum { PAD_ZEROS = 0, PAD_REFLECT, PAD_REPLICATE, PAD_CIRCULAR } layers_pad_mode;

typedef struct conv2d_geom {
    int64_t n, cin, h, w;           /* input [n, cin, h, w] */
    int64_t cout, kh, kw;           /* weight [cout, cin/groups, kh, kw] */
    int64_t groups;
    int64_t sh, sw, ph, pw, dh, dw;
    int64_t ho, wo;
    layers_pad_mode pad_mode;
    int act;                        /* pk_gemm_act */
    const float *x, *wt, *bias;     /* bias NULL when absent */
    const float *residual;          /* NULL when absent; may equal y unless residual_after */
    int residual_after;             /* 1: act(conv + bias) + residual */
    float *y;
} conv2d_geom;

/* Checks the call (shapes, attributes; every tensor f32 and contiguous) and
** allocates the output [n, cout, ho, wo]; *g describes the call. */
loom_status conv2d_check(loom_call *call, conv2d_geom *g, loom_tensor **out);

/* The batchnorm folding of the models' loaders: a conv (weight [cout, k],
** bias or NULL) followed by BatchNorm2d(eps) at inference equals a conv with
** weight * s and bias (bias - mean) * s + beta, s = gamma / sqrt(var + eps),
** computed in double. Writes the folded weight and bias (cout values) to
** w_out / b_out (which may alias the inputs). */
void layers_fold_batch_norm(int64_t cout, int64_t k, const float *weight, const float *bias, const float *gamma,
                            const float *beta, const float *mean, const float *var, double eps, float *w_out,
                            float *b_out);

/* ------------------------------------------------------------- pools */

typedef struct pool2d_geom {
    int64_t planes, h, w;           /* n * c planes of h x w */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t ho, wo;
    int count_include_pad;
    int64_t divisor;                /* 0: none */
} pool2d_geom;

/* max (is_max) or avg pool checks and output allocation. */
loom_status pool2d_check(loom_call *call, int is_max, pool2d_geom *g, loom_tensor **out);

/* The checks of the cpu and cuda kernels of batch_norm, linear, softmax
** (*len: the dim's size, *inner: the elements after it), layer_norm and
** adaptive_avg_pool2d (*g: planes, h, w, ho, wo) (layers_op_checks.c), with
** their messages; each allocates the output on success (*out; its numel
** may be 0). */
loom_status layers_check_batch_norm(loom_call *call, loom_tensor **out);
loom_status layers_check_linear(loom_call *call, loom_tensor **out);
loom_status layers_check_softmax(loom_call *call, int64_t *len, int64_t *inner, loom_tensor **out);
loom_status layers_check_layer_norm(loom_call *call, loom_tensor **out);
loom_status layers_check_adaptive(loom_call *call, pool2d_geom *g, loom_tensor **out);

/* ------------------------------------------------------------ modules */

/* An ints attribute with one value (both dims) or two, each in
** [min_value, 2^30]; the message names the attribute. */
loom_status layers_pair_attr(const loom_call *call, int index, int64_t min_value, int64_t *a, int64_t *b);

/* Every input is f32 and contiguous; the first message names the argument. */
loom_status layers_check_f32_contiguous(const loom_call *call);

extern const pk_module vision_layers_cpu;

/* Destroys the cached oneDNN primitives (the pack's fini); a no-op without
** oneDNN. */
void layers_onednn_fini(void);

/* y[i] = gelu(x[i]) (erf) for n floats, AVX2+FMA (activation_avx2.c; x86
** only, called when pk_cpu_avx2(PK_CPU_FMA)). */
void layers_gelu_erf_avx2(const float *x, float *y, int64_t n);

/* vision.layer_norm's row sums: element i into partial sum i % 8 (the tail
** into a ninth), added in this fixed tree, by the portable row
** (rowwise_cpu.c) and the AVX2 one alike, so both give the same bits. */
#define LAYERS_LN_LANES 8
static inline double layers_ln_reduce(const double p[LAYERS_LN_LANES], double tail)
{
    return (((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]))) + tail;
}

/* One row of vision.layer_norm (len values, weight w, bias b or NULL), the
** same bits as rowwise_cpu.c's portable row (layer_norm_avx2.c; x86 only,
** called when pk_cpu_avx2(0)). */
void layer_norm_row_avx2(const float *x, float *y, const float *w, const float *b, int64_t len, double eps);

#endif /* LOOM_VISION_LAYERS_H */
