/* SPDX-License-Identifier: BSD-3-Clause */
/*
** depthwise.h - vision.conv2d's direct depthwise kernel on the cpu backend
** (groups == Cin == Cout, any kernel, stride, dilation and padding mode):
** one (n, c) plane per task, no im2col and no GEMM (a depthwise conv is
** K = kh * kw multiply-adds per output, which a GEMM of M = 1 wastes).
**
** A plane is copied once into the task's padded buffer P (hp x wp, the
** padding mode's values written in, a zeroed tail after it), so the tap loop
** has no bounds checks; the taps write conv + bias into T (ho rows of stride
** tw), and the epilogue writes y = act(T + residual) or act(T) + residual
** (residual_after_activation) into the output, the same epilogue as the
** GEMM's. The AVX2+FMA loops (depthwise_avx2.c) run when pk_cpu_avx2 allows
** them; the portable loops are in depthwise_cpu.c.
*/
#ifndef LOOM_VISION_LAYERS_DEPTHWISE_H
#define LOOM_VISION_LAYERS_DEPTHWISE_H

#include <math.h>
#include <stdint.h>

#include "gemm/gemm.h"
#include "layers.h"

/* The floats of P past hp * wp, zeroed: what the vector taps read beyond
** the last row for lanes that are discarded (at most 16 + (kw - 1) * dw). */
#define DEPTHWISE_P_TAIL(g) (32 + ((g)->kw - 1) * (g)->dw)

/* 1 when the call is a depthwise conv the direct kernel runs. */
int conv2d_is_depthwise(const conv2d_geom *g);

/* The same, read from a call's tensors and attributes before its checks
** (oneDNN's supports: it leaves depthwise convs to the cpu kernel). */
int conv2d_call_is_depthwise(const loom_call *call);

/* Runs the depthwise conv g describes (conv2d_is_depthwise(g)) on ctx. */
loom_status conv2d_depthwise_run(loom_exec_ctx *ctx, const conv2d_geom *g);

/* y[0, n) = act(y) in place (pk_gemm_act) with the epilogue's loops,
** threaded on ctx: oneDNN's conv applies silu so (conv2d_onednn.c). */
loom_status layers_activation_inplace(loom_exec_ctx *ctx, float *y, int64_t n, int act);

/* The source index of padded coordinate i (in [-pad, size + pad)) of a map
** of `size` under nn.Conv2d's padding mode, or -1 for a zero: reflect
** mirrors about the edge without repeating it, replicate clamps, circular
** wraps (the im2col's index map too). */
static inline int64_t layers_pad_source(int64_t i, int64_t size, layers_pad_mode mode)
{
    if (i >= 0 && i < size)
        return i;
    switch (mode) {
    case PAD_REFLECT: return i < 0 ? -i : 2 * (size - 1) - i;
    case PAD_REPLICATE: return i < 0 ? 0 : size - 1;
    case PAD_CIRCULAR: return i < 0 ? i + size : i - size;
    default: return -1;
    }
}

/* The GEMM epilogue's activations (pk_gemm_act), torch's formulas in f32. */
static inline float layers_act_scalar(float v, int act)
{
    switch (act) {
    case PK_GEMM_ACT_RELU: return v > 0.0f ? v : (v != v ? v : 0.0f);
    case PK_GEMM_ACT_SILU: return v / (1.0f + expf(-v));
    case PK_GEMM_ACT_GELU_ERF: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case PK_GEMM_ACT_GELU_TANH:
        return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
    default: return v;
    }
}

/* The AVX2+FMA loops (depthwise_avx2.c). Taps at stride 1: T[q] = bias +
** sum of the taps over P for the flat positions q in [0, ho * wp) (output
** rows of stride wp: the columns past wo are discarded by the epilogue),
** rounded up to 8. At stride 2: ho rows of stride tw = wo rounded up to 8.
** wk: the plane's kh * kw weights. */
void depthwise_taps_s1_avx2(const conv2d_geom *g, const float *P, int64_t wp, const float *wk, float bias, float *T);
void depthwise_taps_s2_avx2(const conv2d_geom *g, const float *P, int64_t wp, const float *wk, float bias, float *T,
                            int64_t tw);
/* y[i] = act(t[i] + r[i]) (after == 0) or act(t[i]) + r[i] (after == 1)
** for i < n; r may be NULL, and may equal y when after == 0. */
void depthwise_epilogue_avx2(const float *t, const float *r, float *y, int64_t n, int act, int after);

#endif /* LOOM_VISION_LAYERS_DEPTHWISE_H */
