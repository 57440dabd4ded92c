/* SPDX-License-Identifier: BSD-3-Clause */
/*
** window_attention_cpu.c - vision.swin_window_attention on the cpu backend:
** torchvision's shifted_window_attention (Swin V1) in eval mode, for input
** [B, H, W, C]:
**   pad H and W up to window multiples (zeros at the bottom and right);
**   a shift on an axis whose padded size the window covers becomes 0;
**   roll by -shift, split into windows of L = wh * ww tokens;
**   qkv = x qkv_weight^T + qkv_bias; q *= (C / heads)^-0.5;
**   attn = q k^T + relative_position_bias (+ the shift mask: -100 between
**   tokens of different regions, regions labelled as torchvision's slices
**   label them); softmax; attn v; proj; roll back by +shift; crop.
** The pad and the roll are one gather: each window token knows the input
** element it comes from (none for padding), and the projected result is
** scattered back to the same elements, plus the optional residual (the
** block's x + attn(norm1(x))). The attention is attention_fused.c's, with
** the bias [heads, L, L] and mask [windows, L, L] built once per call.
** With 'packed_weights' (transformer_packed_get: the block's vit_block_pack)
** the two GEMMs read qkv and proj from it instead of packing them per call.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "gemm/gemm.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

/* Python's slice [start:stop] of a length-n axis as [*a, *b); has_stop 0:
** stop is None. Values as torchvision writes them (-shift may be 0). */
static void py_slice(int64_t start, int has_stop, int64_t stop, int64_t n, int64_t *a, int64_t *b)
{
    start = start < 0 ? start + n : start;
    stop = !has_stop ? n : stop < 0 ? stop + n : stop;
    *a = start < 0 ? 0 : start > n ? n : start;
    *b = stop < 0 ? 0 : stop > n ? n : stop;
}

typedef struct swa_geom {
    int64_t b, h, w, c, heads;
    int64_t wh, ww, sh, sw;
    int64_t ph, pw, nwh, nww, windows, len, tokens;
} swa_geom;

typedef struct swa_job {
    const swa_geom *g;
    const float *x, *residual, *y;
    float *xw, *out;
    const int64_t *src;         /* per window token: its input element, or -1 (padding) */
} swa_job;

static void gather_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const swa_job *j = user;
    const int64_t c = j->g->c;
    for (int64_t t = begin; t < end; t++) {
        if (j->src[t] < 0)
            memset(j->xw + t * c, 0, (size_t)c * sizeof(float));
        else
            memcpy(j->xw + t * c, j->x + j->src[t] * c, (size_t)c * sizeof(float));
    }
}

static void scatter_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const swa_job *j = user;
    const int64_t c = j->g->c;
    for (int64_t t = begin; t < end; t++) {
        if (j->src[t] < 0)
            continue;
        const float *y = j->y + t * c;
        float *o = j->out + j->src[t] * c;
        if (j->residual != NULL) {
            const float *r = j->residual + j->src[t] * c;
            for (int64_t k = 0; k < c; k++)
                o[k] = r[k] + y[k];
        } else {
            memcpy(o, y, (size_t)c * sizeof(float));
        }
    }
}

static loom_status pair(const loom_call *call, int index, int64_t *a, int64_t *b)
{
    const loom_attr_value *v = &call->attrs[index];
    if (!v->is_set || (v->count != 1 && v->count != 2))
        return pk_host->fail(LOOM_EINVAL, "attribute '%s' must hold 1 or 2 integers", call->schema->attrs[index].name);
    *a = v->u.ints[0];
    *b = v->u.ints[v->count - 1];
    if (*a > 4096 || *b > 4096)
        return pk_host->fail(LOOM_EINVAL, "attribute '%s' = (%lld, %lld): at most 4096",
                             call->schema->attrs[index].name, (long long)*a, (long long)*b);
    return LOOM_OK;
}

/* The call's inputs and attributes checked, its geometry into g, and, when
** the call passes one, the four operands of its 'packed_weights' into pw
** (*have_pw 1). */
static loom_status check(const loom_call *call, swa_geom *g, pk_gemm_packed pw[4], int *have_pw)
{
    const loom_tensor *x = call->inputs[SWA_X];
    char b1[160], b2[160];
    loom_status st = attention_check_inputs(call, 1u << SWA_INDEX);
    if (st != LOOM_OK)
        return st;
    memset(g, 0, sizeof *g);
    if (x->ndim != 4)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be [B, H, W, C]", DESC(x, b1));
    g->b = x->shape[0];
    g->h = x->shape[1];
    g->w = x->shape[2];
    g->c = x->shape[3];
    g->heads = call->attrs[PK_ATTR(swin_attn, num_heads)].u.i;
    if ((st = pair(call, PK_ATTR(swin_attn, window_size), &g->wh, &g->ww)) != LOOM_OK
        || (st = pair(call, PK_ATTR(swin_attn, shift_size), &g->sh, &g->sw)) != LOOM_OK)
        return st;
    if (g->sh >= g->wh || g->sw >= g->ww)
        return pk_host->fail(LOOM_EINVAL, "attribute 'shift_size' = (%lld, %lld) must be below 'window_size' = "
                             "(%lld, %lld)", (long long)g->sh, (long long)g->sw, (long long)g->wh, (long long)g->ww);
    if (g->c == 0 || g->c % g->heads != 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: C = %lld must be a positive multiple of attribute "
                             "'num_heads' = %lld", DESC(x, b1), (long long)g->c, (long long)g->heads);
    const int64_t c = g->c, rows = (2 * g->wh - 1) * (2 * g->ww - 1);
    g->len = g->wh * g->ww;
    const attention_shape want[] = {
        { SWA_QKV_W, 2, 3 * c, c }, { SWA_QKV_B, 1, 3 * c, 0 }, { SWA_PROJ_W, 2, c, c }, { SWA_PROJ_B, 1, c, 0 },
        { SWA_TABLE, 2, rows, g->heads }, { SWA_INDEX, 1, g->len * g->len, 0 },
    };
    char context[256];
    snprintf(context, sizeof context, "'input' %s and window_size (%lld, %lld), num_heads %lld", DESC(x, b2),
             (long long)g->wh, (long long)g->ww, (long long)g->heads);
    if ((st = attention_check_shapes(call, want, sizeof want / sizeof want[0], context)) != LOOM_OK)
        return st;
    const loom_tensor *r = call->inputs[SWA_RESIDUAL];
    if (r != NULL && (r->ndim != 4 || memcmp(r->shape, x->shape, 4 * sizeof x->shape[0]) != 0))
        return pk_host->fail(LOOM_EINVAL, "'residual' %s must have the shape of 'input' %s", DESC(r, b1), DESC(x, b2));
    const loom_tensor *packed = call->n_inputs > SWA_PACKED ? call->inputs[SWA_PACKED] : NULL;
    *have_pw = packed != NULL;
    if (packed != NULL && (st = transformer_packed_get(packed, "packed_weights", c, -1, pw)) != LOOM_OK)
        return st;
    const int64_t *idx = loom_data(call->inputs[SWA_INDEX]);
    for (int64_t i = 0; i < g->len * g->len; i++)
        if (idx[i] < 0 || idx[i] >= rows)
            return pk_host->fail(LOOM_EINVAL, "'relative_position_index'[%lld] = %lld is outside the %lld rows of "
                                 "'relative_position_bias_table'", (long long)i, (long long)idx[i], (long long)rows);
    g->ph = (g->h + g->wh - 1) / g->wh * g->wh;
    g->pw = (g->w + g->ww - 1) / g->ww * g->ww;
    if (g->wh >= g->ph)
        g->sh = 0;
    if (g->ww >= g->pw)
        g->sw = 0;
    g->nwh = g->ph / g->wh;
    g->nww = g->pw / g->ww;
    g->windows = g->nwh * g->nww;
    g->tokens = g->b * g->windows * g->len;
    if (g->tokens > (INT64_C(1) << 31))
        return pk_host->fail(LOOM_EINVAL, "'input' %s: more than 2^31 window tokens", DESC(x, b1));
    return LOOM_OK;
}

/* The shift mask [windows, L, L] of torchvision's slices. */
static void build_mask(const swa_geom *g, int64_t *label, float *mask)
{
    int64_t hs[3][2], ws[3][2];
    py_slice(0, 1, -g->wh, g->ph, &hs[0][0], &hs[0][1]);
    py_slice(-g->wh, 1, -g->sh, g->ph, &hs[1][0], &hs[1][1]);
    py_slice(-g->sh, 0, 0, g->ph, &hs[2][0], &hs[2][1]);
    py_slice(0, 1, -g->ww, g->pw, &ws[0][0], &ws[0][1]);
    py_slice(-g->ww, 1, -g->sw, g->pw, &ws[1][0], &ws[1][1]);
    py_slice(-g->sw, 0, 0, g->pw, &ws[2][0], &ws[2][1]);
    /* torchvision's -0 is 0: a zero shift's slice (-0, None) is the whole axis */
    memset(label, 0, (size_t)(g->ph * g->pw) * sizeof *label);
    int64_t count = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++, count++)
            for (int64_t y = hs[a][0]; y < hs[a][1]; y++)
                for (int64_t x = ws[b][0]; x < ws[b][1]; x++)
                    label[y * g->pw + x] = count;
    const int64_t L = g->len;
    for (int64_t w = 0; w < g->windows; w++) {
        int64_t y0 = (w / g->nww) * g->wh, x0 = (w % g->nww) * g->ww;
        float *m = mask + w * L * L;
        for (int64_t i = 0; i < L; i++) {
            int64_t li = label[(y0 + i / g->ww) * g->pw + x0 + i % g->ww];
            for (int64_t j = 0; j < L; j++) {
                int64_t lj = label[(y0 + j / g->ww) * g->pw + x0 + j % g->ww];
                m[i * L + j] = li == lj ? 0.0f : -100.0f;
            }
        }
    }
}

loom_status swin_window_attention_run_cpu(loom_call *call)
{
    swa_geom g;
    pk_gemm_packed pw[4];
    int have_pw = 0;
    loom_status st = check(call, &g, pw, &have_pw);
    if (st != LOOM_OK)
        return st;
    const loom_tensor *x = call->inputs[SWA_X];
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, x->shape, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    loom_exec_ctx *ctx = call->ctx;
    const int64_t T = g.tokens, C = g.c, L = g.len, hd = C / g.heads;
    int64_t *src = pk_host->scratch(ctx, (size_t)T * sizeof *src);
    float *xw = pk_host->scratch(ctx, (size_t)(T * C) * sizeof(float));
    float *qkv = pk_host->scratch(ctx, (size_t)(T * 3 * C) * sizeof(float));
    float *bias = pk_host->scratch(ctx, (size_t)(g.heads * L * L) * sizeof(float));
    int shifted = g.sh + g.sw > 0;
    float *mask = shifted ? pk_host->scratch(ctx, (size_t)(g.windows * L * L) * sizeof(float)) : NULL;
    int64_t *label = shifted ? pk_host->scratch(ctx, (size_t)(g.ph * g.pw) * sizeof(int64_t)) : NULL;
    if (src == NULL || xw == NULL || qkv == NULL || bias == NULL || (shifted && (mask == NULL || label == NULL)))
        return LOOM_ENOMEM;
    /* each window token's input element: rolled (py, px) reads padded (py + sh, px + sw) mod the padded size */
    for (int64_t t = 0; t < T; t++) {
        int64_t i = t % L, w = (t / L) % g.windows, b = t / (L * g.windows);
        int64_t py = (w / g.nww) * g.wh + i / g.ww, px = (w % g.nww) * g.ww + i % g.ww;
        int64_t y = (py + g.sh) % g.ph, xx = (px + g.sw) % g.pw;
        src[t] = y < g.h && xx < g.w ? (b * g.h + y) * g.w + xx : -1;
    }
    const float *table = loom_data(call->inputs[SWA_TABLE]);
    const int64_t *index = loom_data(call->inputs[SWA_INDEX]);
    for (int64_t h = 0; h < g.heads; h++)
        for (int64_t ij = 0; ij < L * L; ij++)
            bias[h * L * L + ij] = table[index[ij] * g.heads + h];
    if (shifted)
        build_mask(&g, label, mask);
    swa_job job = { .g = &g, .x = loom_data(x), .xw = xw, .src = src };
    if ((st = pk_host->parallel_for(ctx, T, 256, gather_rows, &job)) != LOOM_OK)
        return st;
    const loom_tensor *qb = call->inputs[SWA_QKV_B], *pb = call->inputs[SWA_PROJ_B];
    if ((st = attention_linear_packed(ctx, xw, T, C, loom_data(call->inputs[SWA_QKV_W]), have_pw ? &pw[0] : NULL,
                                      3 * C, qb != NULL ? loom_data(qb) : NULL, PK_GEMM_ACT_NONE, NULL,
                                      qkv)) != LOOM_OK)
        return st;
    /* q * (C // num_heads) ** -0.5, before the product, as torchvision */
    const float scale = (float)pow((double)hd, -0.5);
    for (int64_t t = 0; t < T; t++)
        for (int64_t k = 0; k < C; k++)
            qkv[t * 3 * C + k] *= scale;
    attention_problem ap = { .units = g.b * g.windows, .heads = g.heads, .len = L, .head_dim = hd, .q = qkv,
                             .k = qkv + C, .v = qkv + 2 * C, .ld = 3 * C, .unit_stride = L * 3 * C, .out = xw,
                             .ld_out = C, .out_unit_stride = L * C, .scale = 1.0f, .bias = bias, .mask = mask,
                             .mask_units = g.windows };
    if ((st = attention_run(ctx, &ap)) != LOOM_OK
        || (st = attention_linear_packed(ctx, xw, T, C, loom_data(call->inputs[SWA_PROJ_W]),
                                         have_pw ? &pw[1] : NULL, C, pb != NULL ? loom_data(pb) : NULL,
                                         PK_GEMM_ACT_NONE, NULL, qkv)) != LOOM_OK)
        return st;
    const loom_tensor *r = call->inputs[SWA_RESIDUAL];
    job.y = qkv;
    job.out = loom_data(out);
    job.residual = r != NULL ? loom_data(r) : NULL;
    return pk_host->parallel_for(ctx, T, 256, scatter_rows, &job);
}
