/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pool_cpu.c - vision.max_pool2d, avg_pool2d and adaptive_avg_pool2d on the
** cpu backend, NCHW, threaded over the (n, c) planes. The windows are
** ATen's: max_pool2d skips the padding (a window's first element after the
** padding starts it, NaN wins as in ATen's `val > max || isnan(val)`);
** avg_pool2d clips the window to the padded map for count_include_pad and
** to the map for the sum; adaptive bins are [floor(i*H/Ho), ceil((i+1)*H/Ho)).
** Sums are f32 in window order, as ATen's CPU kernels accumulate.
*/
#include <math.h>

#include "layers.h"

typedef struct pool_job {
    const pool2d_geom *g;
    const float *x;
    float *y;
} pool_job;

static void max_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pool_job *j = user;
    const pool2d_geom *g = j->g;
    for (int64_t p = begin; p < end; p++) {
        const float *x = j->x + p * g->h * g->w;
        float *y = j->y + p * g->ho * g->wo;
        for (int64_t oy = 0; oy < g->ho; oy++) {
            int64_t hs = oy * g->sh - g->ph, he = hs + (g->kh - 1) * g->dh + 1;
            if (he > g->h)
                he = g->h;
            while (hs < 0)
                hs += g->dh;
            for (int64_t ox = 0; ox < g->wo; ox++) {
                int64_t ws = ox * g->sw - g->pw, we = ws + (g->kw - 1) * g->dw + 1;
                if (we > g->w)
                    we = g->w;
                while (ws < 0)
                    ws += g->dw;
                float m = -INFINITY;
                for (int64_t iy = hs; iy < he; iy += g->dh)
                    for (int64_t ix = ws; ix < we; ix += g->dw) {
                        float v = x[iy * g->w + ix];
                        if (v > m || v != v)
                            m = v;
                    }
                y[oy * g->wo + ox] = m;
            }
        }
    }
}

static void avg_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pool_job *j = user;
    const pool2d_geom *g = j->g;
    for (int64_t p = begin; p < end; p++) {
        const float *x = j->x + p * g->h * g->w;
        float *y = j->y + p * g->ho * g->wo;
        for (int64_t oy = 0; oy < g->ho; oy++)
            for (int64_t ox = 0; ox < g->wo; ox++) {
                int64_t hs = oy * g->sh - g->ph, ws = ox * g->sw - g->pw;
                int64_t he = hs + g->kh < g->h + g->ph ? hs + g->kh : g->h + g->ph;
                int64_t we = ws + g->kw < g->w + g->pw ? ws + g->kw : g->w + g->pw;
                int64_t pool_size = (he - hs) * (we - ws);
                hs = hs < 0 ? 0 : hs;
                ws = ws < 0 ? 0 : ws;
                he = he < g->h ? he : g->h;
                we = we < g->w ? we : g->w;
                if (hs >= he || ws >= we) {
                    y[oy * g->wo + ox] = 0.0f;
                    continue;
                }
                float s = 0.0f;
                for (int64_t iy = hs; iy < he; iy++)
                    for (int64_t ix = ws; ix < we; ix++)
                        s += x[iy * g->w + ix];
                int64_t div = g->divisor > 0 ? g->divisor : g->count_include_pad ? pool_size : (he - hs) * (we - ws);
                y[oy * g->wo + ox] = s / (float)div;
            }
    }
}

static void adaptive_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const pool_job *j = user;
    const pool2d_geom *g = j->g;
    for (int64_t p = begin; p < end; p++) {
        const float *x = j->x + p * g->h * g->w;
        float *y = j->y + p * g->ho * g->wo;
        for (int64_t oy = 0; oy < g->ho; oy++) {
            int64_t hs = oy * g->h / g->ho, he = ((oy + 1) * g->h + g->ho - 1) / g->ho;
            for (int64_t ox = 0; ox < g->wo; ox++) {
                int64_t ws = ox * g->w / g->wo, we = ((ox + 1) * g->w + g->wo - 1) / g->wo;
                float s = 0.0f;
                for (int64_t iy = hs; iy < he; iy++)
                    for (int64_t ix = ws; ix < we; ix++)
                        s += x[iy * g->w + ix];
                int64_t cnt = (he - hs) * (we - ws);
                y[oy * g->wo + ox] = cnt > 0 ? s / (float)cnt : 0.0f;
            }
        }
    }
}

static loom_status pool_run(loom_call *call, int is_max)
{
    pool2d_geom g;
    loom_tensor *out;
    loom_status st = pool2d_check(call, is_max, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    pool_job job = { &g, loom_data(call->inputs[0]), loom_data(out) };
    int64_t grain = 1 + 16384 / (g.ho * g.wo * g.kh * g.kw);
    return pk_host->parallel_for(call->ctx, g.planes, grain, is_max ? max_planes : avg_planes, &job);
}

static loom_status max_pool_run_cpu(loom_call *call) { return pool_run(call, 1); }
static loom_status avg_pool_run_cpu(loom_call *call) { return pool_run(call, 0); }

static loom_status adaptive_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    pool2d_geom g;
    loom_tensor *out;
    loom_status st = layers_check_adaptive(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    pool_job job = { &g, loom_data(x), loom_data(out) };
    return pk_host->parallel_for(call->ctx, g.planes, 1 + 16384 / (g.h * g.w + g.ho * g.wo), adaptive_planes, &job);
}

const loom_kernel_desc layers_pool_cpu_kernels[3] = {
    PK_KERNEL_CPU(vision_max_pool2d_schema, "cpu:direct", LAYERS_DTYPES, max_pool_run_cpu),
    PK_KERNEL_CPU(vision_avg_pool2d_schema, "cpu:direct", LAYERS_DTYPES, avg_pool_run_cpu),
    PK_KERNEL_CPU(vision_adaptive_avg_pool2d_schema, "cpu:direct", LAYERS_DTYPES, adaptive_run_cpu),
};
