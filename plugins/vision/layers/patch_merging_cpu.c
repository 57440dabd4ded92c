/* SPDX-License-Identifier: BSD-3-Clause */
/*
** patch_merging_cpu.c - vision.swin_patch_merging on the cpu backend:
** torchvision's PatchMerging (Swin V1) for input [B, H, W, C]:
** _patch_merging_pad pads H and W to even with zeros and concatenates the
** 2x2 neighbours in the order x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2],
** x[1::2, 1::2] -> [B, H/2, W/2, 4C]; then norm (LayerNorm(4C), the
** dispatched vision.layer_norm) and reduction (Linear 4C -> 2C, no bias,
** on the shared GEMM).
*/
#include <string.h>

#include "attention.h"
#include "gemm/gemm.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

typedef struct merge_job {
    const float *x;
    float *cat;
    int64_t h, w, c, ho, wo;
} merge_job;

static void merge_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const merge_job *j = user;
    /* the (dy, dx) of x0..x3 */
    static const int dy[4] = { 0, 1, 0, 1 }, dx[4] = { 0, 0, 1, 1 };
    for (int64_t r = begin; r < end; r++) {
        int64_t b = r / (j->ho * j->wo), oy = (r / j->wo) % j->ho, ox = r % j->wo;
        float *o = j->cat + r * 4 * j->c;
        for (int q = 0; q < 4; q++) {
            int64_t y = 2 * oy + dy[q], x = 2 * ox + dx[q];
            if (y < j->h && x < j->w)
                memcpy(o + q * j->c, j->x + ((b * j->h + y) * j->w + x) * j->c, (size_t)j->c * sizeof(float));
            else
                memset(o + q * j->c, 0, (size_t)j->c * sizeof(float));
        }
    }
}

enum { PM_X = 0, PM_NORM_W, PM_NORM_B, PM_RED_W };

loom_status swin_patch_merging_run_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[PM_X], *nw = call->inputs[PM_NORM_W], *nb = call->inputs[PM_NORM_B];
    const loom_tensor *rw = call->inputs[PM_RED_W];
    char b1[160], b2[160];
    loom_status st = attention_check_inputs(call, 0);
    if (st != LOOM_OK)
        return st;
    if (x->ndim != 4)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be [B, H, W, C]", DESC(x, b1));
    const int64_t b = x->shape[0], h = x->shape[1], w = x->shape[2], c = x->shape[3];
    if (nw->shape[0] != 4 * c)
        return pk_host->fail(LOOM_EINVAL, "'norm_weight' %s must be [%lld] (4C) for 'input' %s", DESC(nw, b1),
                             (long long)(4 * c), DESC(x, b2));
    if (nb != NULL && nb->shape[0] != 4 * c)
        return pk_host->fail(LOOM_EINVAL, "'norm_bias' %s must be [%lld] (4C) for 'input' %s", DESC(nb, b1),
                             (long long)(4 * c), DESC(x, b2));
    if (rw->shape[0] != 2 * c || rw->shape[1] != 4 * c)
        return pk_host->fail(LOOM_EINVAL, "'reduction_weight' %s must be [%lld, %lld] (2C, 4C) for 'input' %s",
                             DESC(rw, b1), (long long)(2 * c), (long long)(4 * c), DESC(x, b2));
    const int64_t ho = (h + 1) / 2, wo = (w + 1) / 2;
    const int64_t shape[4] = { b, ho, wo, 2 * c };
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int64_t rows = b * ho * wo;
    float *cat = pk_host->scratch(call->ctx, (size_t)(rows * 4 * c) * sizeof(float));
    if (cat == NULL)
        return LOOM_ENOMEM;
    merge_job job = { loom_data(x), cat, h, w, c, ho, wo };
    double eps = call->attrs[PK_ATTR(swin_merge, eps)].u.f;
    if ((st = pk_host->parallel_for(call->ctx, rows, 64, merge_rows, &job)) != LOOM_OK
        || (st = attention_layer_norm(call->ctx, cat, loom_data(nw), nb != NULL ? loom_data(nb) : NULL, cat, rows,
                                      4 * c, eps)) != LOOM_OK)
        return st;
    return attention_linear(call->ctx, cat, rows, 4 * c, loom_data(rw), 2 * c, NULL, PK_GEMM_ACT_NONE, NULL,
                            loom_data(out));
}
