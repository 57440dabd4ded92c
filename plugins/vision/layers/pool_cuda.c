/* SPDX-License-Identifier: BSD-3-Clause */
/*
** pool_cuda.c - vision.max_pool2d, avg_pool2d and adaptive_avg_pool2d on the
** cuda backend: the checks of layers_checks.c (pool2d_check) and
** layers_cuda_checks.c, then one launch of pool_cuda_kernels.cu on the
** call's stream.
*/
#include "layers_cuda.h"

typedef int (*pool_launch)(const lcu_pool *p, const float *x, float *y, void *stream);

static loom_status pool_launch_geom(loom_call *call, const pool2d_geom *g, loom_tensor *out, pool_launch launch)
{
    cudaStream_t stream;
    loom_status st = layers_cuda_stream(call, &stream);
    if (st != LOOM_OK)
        return st;
    lcu_pool p = { .planes = g->planes, .h = g->h, .w = g->w, .kh = g->kh, .kw = g->kw, .sh = g->sh, .sw = g->sw,
                   .ph = g->ph, .pw = g->pw, .dh = g->dh, .dw = g->dw, .ho = g->ho, .wo = g->wo,
                   .count_include_pad = g->count_include_pad, .divisor = g->divisor };
    cudaError_t e = (cudaError_t)launch(&p, loom_data(call->inputs[0]), loom_data(out), stream);
    return e == cudaSuccess ? LOOM_OK : layers_cuda_fail(e, "pool kernel launch");
}

static loom_status pool_run(loom_call *call, int is_max)
{
    pool2d_geom g;
    loom_tensor *out;
    loom_status st = pool2d_check(call, is_max, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    return pool_launch_geom(call, &g, out, is_max ? lcu_max_pool2d : lcu_avg_pool2d);
}

static loom_status max_pool_run_cuda(loom_call *call) { return pool_run(call, 1); }
static loom_status avg_pool_run_cuda(loom_call *call) { return pool_run(call, 0); }

static loom_status adaptive_run_cuda(loom_call *call)
{
    pool2d_geom g;
    loom_tensor *out;
    loom_status st = layers_check_adaptive(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    return pool_launch_geom(call, &g, out, lcu_adaptive_avg_pool2d);
}

const loom_kernel_desc layers_pool_cuda_kernels[3] = {
    PK_KERNEL_CUDA(vision_max_pool2d_schema, "cuda:direct", LAYERS_DTYPES, max_pool_run_cuda),
    PK_KERNEL_CUDA(vision_avg_pool2d_schema, "cuda:direct", LAYERS_DTYPES, avg_pool_run_cuda),
    PK_KERNEL_CUDA(vision_adaptive_avg_pool2d_schema, "cuda:direct", LAYERS_DTYPES, adaptive_run_cuda),
};
