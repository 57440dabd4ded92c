/* SPDX-License-Identifier: BSD-3-Clause */
/*
** depthwise_cpu.c - vision.conv2d's direct depthwise kernel (depthwise.h):
** the choice of it, the per-plane tasks on the core's pool, the padded copy
** and the portable tap and epilogue loops. Each task's P and T come from one
** scratch block taken before the parallel_for, a slot per thread.
*/
#include <string.h>

#include "cpu.h"
#include "depthwise.h"

int conv2d_is_depthwise(const conv2d_geom *g)
{
    return g->groups > 1 && g->groups == g->cin && g->cout == g->cin;
}

int conv2d_call_is_depthwise(const loom_call *call)
{
    if (call->n_inputs <= CONV_WEIGHT || call->inputs[CONV_INPUT] == NULL || call->inputs[CONV_WEIGHT] == NULL
        || call->n_attrs <= PK_ATTR(conv2d, groups))
        return 0;
    const loom_tensor *x = call->inputs[CONV_INPUT], *w = call->inputs[CONV_WEIGHT];
    int64_t groups = call->attrs[PK_ATTR(conv2d, groups)].u.i;
    return x->ndim == 4 && w->ndim == 4 && groups > 1 && x->shape[1] == groups && w->shape[0] == groups
           && w->shape[1] == 1;
}

typedef struct dw_job {
    const conv2d_geom *g;
    int avx2;
    int64_t hp, wp, tw;             /* P's rows and row stride, T's row stride */
    size_t p_floats, slot_floats;   /* P with its tail; one thread's P and T */
    float *work;                    /* a slot per thread */
} dw_job;

/* P = the plane x (h x w) padded by (ph, pw) under the padding mode. */
static void fill_padded(const conv2d_geom *g, const float *x, float *P, int64_t hp, int64_t wp)
{
    for (int64_t r = 0; r < hp; r++) {
        float *d = P + r * wp;
        int64_t iy = layers_pad_source(r - g->ph, g->h, g->pad_mode);
        if (iy < 0) {
            memset(d, 0, (size_t)wp * sizeof *d);
            continue;
        }
        const float *xr = x + iy * g->w;
        for (int64_t c = 0; c < g->pw; c++) {
            int64_t ix = layers_pad_source(c - g->pw, g->w, g->pad_mode);
            d[c] = ix < 0 ? 0.0f : xr[ix];
        }
        memcpy(d + g->pw, xr, (size_t)g->w * sizeof *d);
        for (int64_t c = g->pw + g->w; c < wp; c++) {
            int64_t ix = layers_pad_source(c - g->pw, g->w, g->pad_mode);
            d[c] = ix < 0 ? 0.0f : xr[ix];
        }
    }
}

/* T (rows of stride tw) = bias + the taps, any stride and dilation. */
static void taps_scalar(const conv2d_geom *g, const float *P, int64_t wp, const float *wk, float bias, float *T,
                        int64_t tw)
{
    for (int64_t oy = 0; oy < g->ho; oy++)
        for (int64_t ox = 0; ox < g->wo; ox++) {
            const float *p = P + oy * g->sh * wp + ox * g->sw;
            float acc = bias;
            for (int64_t ki = 0; ki < g->kh; ki++)
                for (int64_t kj = 0; kj < g->kw; kj++)
                    acc += p[ki * g->dh * wp + kj * g->dw] * wk[ki * g->kw + kj];
            T[oy * tw + ox] = acc;
        }
}

static void epilogue_scalar(const float *t, const float *r, float *y, int64_t n, int act, int after)
{
    for (int64_t i = 0; i < n; i++) {
        float v = t[i];
        if (r != NULL && !after)
            v += r[i];
        v = layers_act_scalar(v, act);
        y[i] = r != NULL && after ? v + r[i] : v;
    }
}

static void dw_planes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const dw_job *j = user;
    const conv2d_geom *g = j->g;
    float *P = j->work + (size_t)thread_index * j->slot_floats, *T = P + j->p_floats;
    const int64_t plane_in = g->h * g->w, plane_out = g->ho * g->wo, taps = g->kh * g->kw;
    const int s1 = j->avx2 && g->sh == 1 && g->sw == 1, s2 = j->avx2 && g->sh == 2 && g->sw == 2;
    const int64_t tw = s1 ? j->wp : j->tw;
    for (int64_t p = begin; p < end; p++) {
        int64_t c = p % g->cin;
        fill_padded(g, g->x + p * plane_in, P, j->hp, j->wp);
        const float *wk = g->wt + c * taps;
        float bias = g->bias != NULL ? g->bias[c] : 0.0f;
        if (s1)
            depthwise_taps_s1_avx2(g, P, j->wp, wk, bias, T);
        else if (s2)
            depthwise_taps_s2_avx2(g, P, j->wp, wk, bias, T, tw);
        else
            taps_scalar(g, P, j->wp, wk, bias, T, tw);
        float *y = g->y + p * plane_out;
        const float *r = g->residual != NULL ? g->residual + p * plane_out : NULL;
        if (s1 && r == NULL) {  /* the epilogue over the flat run (its tail is T's slack), then the rows */
            depthwise_epilogue_avx2(T, NULL, T, (g->ho * tw + 7) / 8 * 8, g->act, 0);
            for (int64_t oy = 0; oy < g->ho; oy++)
                memcpy(y + oy * g->wo, T + oy * tw, (size_t)g->wo * sizeof *y);
            continue;
        }
        if (!s1 && tw == g->wo) {     /* compact rows: one epilogue over the plane */
            (j->avx2 ? depthwise_epilogue_avx2 : epilogue_scalar)(T, r, y, plane_out, g->act, g->residual_after);
            continue;
        }
        for (int64_t oy = 0; oy < g->ho; oy++)
            (j->avx2 ? depthwise_epilogue_avx2 : epilogue_scalar)(T + oy * tw, r != NULL ? r + oy * g->wo : NULL,
                                                                   y + oy * g->wo, g->wo, g->act,
                                                                   g->residual_after);
    }
}

loom_status conv2d_depthwise_run(loom_exec_ctx *ctx, const conv2d_geom *g)
{
    dw_job j = { .g = g, .avx2 = pk_cpu_avx2(PK_CPU_FMA) };
    j.hp = g->h + 2 * g->ph;
    j.wp = g->w + 2 * g->pw;
    j.tw = j.avx2 && g->sh == 2 && g->sw == 2 ? (g->wo + 7) / 8 * 8 : g->wo;
    j.p_floats = (size_t)(j.hp * j.wp + DEPTHWISE_P_TAIL(g) + 15) / 16 * 16;  /* T 64-byte aligned */
    size_t t_rows = (size_t)(j.wp > j.tw ? j.wp : j.tw);
    j.slot_floats = j.p_floats + ((size_t)g->ho * t_rows + 8 + 15) / 16 * 16;
    int32_t slots = ctx->n_threads > 0 ? ctx->n_threads : 1;
    j.work = pk_host->scratch(ctx, j.slot_floats * (size_t)slots * sizeof(float));
    if (j.work == NULL)
        return pk_host->fail(LOOM_ENOMEM, "conv2d: no scratch for the depthwise planes (%d x %zu floats)",
                             (int)slots, j.slot_floats);
    for (int32_t s = 0; s < slots; s++)     /* the tails the vector taps read past the last row */
        memset(j.work + (size_t)s * j.slot_floats + j.hp * j.wp, 0,
               (j.p_floats - (size_t)(j.hp * j.wp)) * sizeof(float));
    int64_t plane = g->ho * g->wo > 0 ? g->ho * g->wo : 1;
    return pk_host->parallel_for(ctx, g->n * g->cin, 1 + 4096 / plane, dw_planes, &j);
}

typedef struct act_inplace_job {
    float *y;
    int act, avx2;
} act_inplace_job;

static void act_inplace_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const act_inplace_job *j = user;
    (j->avx2 ? depthwise_epilogue_avx2 : epilogue_scalar)(j->y + begin, NULL, j->y + begin, end - begin, j->act, 0);
}

loom_status layers_activation_inplace(loom_exec_ctx *ctx, float *y, int64_t n, int act)
{
    act_inplace_job j = { y, act, pk_cpu_avx2(PK_CPU_FMA) };
    return pk_host->parallel_for(ctx, n, 16384, act_inplace_range, &j);
}
