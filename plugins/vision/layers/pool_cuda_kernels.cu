/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pool_cuda_kernels.cu - the 2-D pools of the layers module on the device, one
** thread per output element, with pool_cpu.c's windows: max_pool2d skips
** the padding and lets NaN win (ATen's `val > max || isnan(val)`),
** avg_pool2d clips the window to the padded map for count_include_pad and
** to the map for the sum, adaptive bins are [floor(i H / Ho), ceil((i + 1)
** H / Ho)). Sums are f32 in window order, as the cpu kernels add them.
** cuDNN's pooling is not used: it has no dilation, no ceil_mode and no
** divisor_override, and rounds its average differently.
*/
#include <math.h>

#include "layers_cuda_launch.cuh"

static __global__ void max_kernel(lcu_pool g, const float *xs, float *ys, int64_t total)
{
    LCU_FOR(i, total) {
        int64_t p = i / (g.ho * g.wo), oy = (i / g.wo) % g.ho, ox = i % g.wo;
        const float *x = xs + p * g.h * g.w;
        int64_t hs = oy * g.sh - g.ph, he = hs + (g.kh - 1) * g.dh + 1;
        int64_t ws0 = ox * g.sw - g.pw, we = ws0 + (g.kw - 1) * g.dw + 1;
        he = he > g.h ? g.h : he;
        we = we > g.w ? g.w : we;
        while (hs < 0)
            hs += g.dh;
        while (ws0 < 0)
            ws0 += g.dw;
        float m = -INFINITY;
        for (int64_t iy = hs; iy < he; iy += g.dh)
            for (int64_t ix = ws0; ix < we; ix += g.dw) {
                float v = x[iy * g.w + ix];
                if (v > m || v != v)
                    m = v;
            }
        ys[i] = m;
    }
}

static __global__ void avg_kernel(lcu_pool g, const float *xs, float *ys, int64_t total)
{
    LCU_FOR(i, total) {
        int64_t p = i / (g.ho * g.wo), oy = (i / g.wo) % g.ho, ox = i % g.wo;
        const float *x = xs + p * g.h * g.w;
        int64_t hs = oy * g.sh - g.ph, ws0 = ox * g.sw - g.pw;
        int64_t he = hs + g.kh < g.h + g.ph ? hs + g.kh : g.h + g.ph;
        int64_t we = ws0 + g.kw < g.w + g.pw ? ws0 + g.kw : g.w + g.pw;
        int64_t pool_size = (he - hs) * (we - ws0);
        hs = hs < 0 ? 0 : hs;
        ws0 = ws0 < 0 ? 0 : ws0;
        he = he < g.h ? he : g.h;
        we = we < g.w ? we : g.w;
        if (hs >= he || ws0 >= we) {
            ys[i] = 0.0f;
            continue;
        }
        float s = 0.0f;
        for (int64_t iy = hs; iy < he; iy++)
            for (int64_t ix = ws0; ix < we; ix++)
                s += x[iy * g.w + ix];
        int64_t div = g.divisor > 0 ? g.divisor : g.count_include_pad ? pool_size : (he - hs) * (we - ws0);
        ys[i] = s / (float)div;
    }
}

static __global__ void adaptive_kernel(lcu_pool g, const float *xs, float *ys, int64_t total)
{
    LCU_FOR(i, total) {
        int64_t p = i / (g.ho * g.wo), oy = (i / g.wo) % g.ho, ox = i % g.wo;
        const float *x = xs + p * g.h * g.w;
        int64_t hs = oy * g.h / g.ho, he = ((oy + 1) * g.h + g.ho - 1) / g.ho;
        int64_t ws0 = ox * g.w / g.wo, we = ((ox + 1) * g.w + g.wo - 1) / g.wo;
        float s = 0.0f;
        for (int64_t iy = hs; iy < he; iy++)
            for (int64_t ix = ws0; ix < we; ix++)
                s += x[iy * g.w + ix];
        int64_t cnt = (he - hs) * (we - ws0);
        ys[i] = cnt > 0 ? s / (float)cnt : 0.0f;
    }
}

#define POOL_LAUNCH(kernel)                                                                        \
    int64_t total = p->planes * p->ho * p->wo;                                                     \
    if (total == 0)                                                                                \
        return 0;                                                                                  \
    kernel<<<lcu_blocks(total), LCU_THREADS, 0, (cudaStream_t)stream>>>(*p, x, y, total);          \
    return (int)cudaGetLastError()

extern "C" int lcu_max_pool2d(const lcu_pool *p, const float *x, float *y, void *stream) { POOL_LAUNCH(max_kernel); }
extern "C" int lcu_avg_pool2d(const lcu_pool *p, const float *x, float *y, void *stream) { POOL_LAUNCH(avg_kernel); }
extern "C" int lcu_adaptive_avg_pool2d(const lcu_pool *p, const float *x, float *y, void *stream)
{
    POOL_LAUNCH(adaptive_kernel);
}
