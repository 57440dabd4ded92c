/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm_cpu.c - vision.group_norm on the cpu backend: one task per
** (sample, group), its mean and variance in double (one shifted pass,
** group_norm.h), then
** y = fma(x, scale, shift) in f32 per channel. The AVX2 loops
** (group_norm_avx2.c) are chosen at run time from the core's CPU features;
** both paths round the affine step once (fma), so they differ only in the
** order of the double sums.
*/
#include <math.h>

#include "cpu.h"
#include "group_norm.h"

typedef struct gn_job {
    const group_norm_geom *g;
    const float *x, *w, *b;
    float *y;
    int avx2;
} gn_job;

static void moments_scalar(const float *x, int64_t n, double shift, double *s1, double *s2)
{
    double s = 0.0, q = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = (double)x[i] - shift;
        s += d;
        q += d * d;
    }
    *s1 = s;
    *s2 = q;
}

static void affine_scalar(const float *x, float scale, float shift, float *y, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = fmaf(x[i], scale, shift);
}

static void gn_groups(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const gn_job *j = user;
    const group_norm_geom *g = j->g;
    for (int64_t r = begin; r < end; r++) {
        const float *x = j->x + r * g->len;
        float *y = j->y + r * g->len;
        const double pivot = x[0], n = (double)g->len;
        double s1, s2;
        (j->avx2 ? group_norm_moments_avx2 : moments_scalar)(x, g->len, pivot, &s1, &s2);
        double var = (s2 - s1 * s1 / n) / n;
        var = var > 0.0 ? var : 0.0;            /* rounding below 0 of a constant group */
        const double mean = pivot + s1 / n;
        float rstd = (float)(1.0 / sqrt(var + g->eps)), fmean = (float)mean;
        int64_t c0 = (r % g->g) * g->channels_per_group;
        for (int64_t k = 0; k < g->channels_per_group; k++) {
            float scale = rstd * (j->w != NULL ? j->w[c0 + k] : 1.0f);
            float shift = (j->b != NULL ? j->b[c0 + k] : 0.0f) - scale * fmean;
            (j->avx2 ? group_norm_affine_avx2 : affine_scalar)(x + k * g->inner, scale, shift, y + k * g->inner,
                                                              g->inner);
        }
    }
}

static loom_status group_norm_run_cpu(loom_call *call)
{
    const loom_tensor *w = call->inputs[GN_WEIGHT], *b = call->inputs[GN_BIAS];
    group_norm_geom g;
    loom_tensor *out;
    loom_status st = group_norm_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    gn_job job = { &g, loom_data(call->inputs[GN_INPUT]), w != NULL ? loom_data(w) : NULL,
                   b != NULL ? loom_data(b) : NULL, loom_data(out), pk_cpu_avx2(PK_CPU_FMA) };
    return pk_host->parallel_for(call->ctx, g.groups, 1 + 16384 / g.len, gn_groups, &job);
}

const loom_kernel_desc layers_group_norm_cpu_kernel =
    PK_KERNEL_CPU(vision_group_norm_schema, "cpu:shifted-moments", LAYERS_DTYPES, group_norm_run_cpu);
