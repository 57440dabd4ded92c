/* SPDX-License-Identifier: BSD-3-Clause */
/*
** swin_forward.c - the method ops of the Swin classes (input [N, 3, H, W]
** f32 -> logits [N, classes]) and the swin module. SwinTransformer's
** forward as dispatched ops (swin.h), LOOM_VERBOSE=2 naming each one's
** backend. Tokens are kept channels last, [N, h, w, C], as torchvision
** keeps them after features.0's Permute:
**   features.0   vision.conv2d (kernel = stride = patch), permute, vision.layer_norm
**   each block   x = x + attn(norm1(x))    vision.layer_norm, vision.swin_window_attention
**                                          with x as its residual, written over x
**                x = x + mlp(norm2(x))     vision.swin_mlp (GELU and the residual in the
**                                          GEMM epilogues), written over x
**                both ops read the block's qkv, proj, mlp.0 and mlp.3 weights packed
**                once per model (ensure_packed), so no forward repacks them
**   merging      vision.swin_patch_merging into the other token buffer
**   norm, avgpool, head   vision.layer_norm, the mean of each image's tokens
**                (double), vision.linear
** Any input of at least one patch works: the windows pad what they need
** and the mergings pad odd sides, as torchvision does.
**
** The buffers are planned once per input shape (swin.h: swin_plan); one
** forward runs at a time per model (its lock).
*/
#include <stdlib.h>
#include <string.h>

#include "model_call.h"
#include "swin.h"
#include "layers/attention.h"

static loom_status plan_for(void *model, const loom_tensor *x)
{
    swin_model *m = model;
    const int64_t n = x->shape[0], h = x->shape[2], w = x->shape[3];
    swin_plan *p = &m->plan;
    if (p->n == n && p->h == h && p->w == w)
        return LOOM_OK;
    for (int i = 0; i < 2; i++)
        free(p->x[i]);
    free(p->a);
    free(p->pooled);
    memset(p, 0, sizeof *p);
    const int64_t th = h / m->patch_h, tw = w / m->patch_w;
    int64_t most = 0, hs = th, ws = tw, c = m->embed;
    for (int64_t s = 0; s < m->stages; s++, c *= 2, hs = (hs + 1) / 2, ws = (ws + 1) / 2)
        most = n * hs * ws * c > most ? n * hs * ws * c : most;
    for (int i = 0; i < 2; i++)
        p->x[i] = model_alloc_floats(most);
    p->a = model_alloc_floats(most);
    p->pooled = model_alloc_floats(n * m->features);
    if (p->x[0] == NULL || p->x[1] == NULL || p->a == NULL || p->pooled == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the activations of input [%lld, 3, %lld, %lld]",
                             m->base.cls, (long long)n, (long long)h, (long long)w);
    p->n = n;
    p->h = h;
    p->w = w;
    p->th = th;
    p->tw = tw;
    return LOOM_OK;
}

/* y[rows, c] = layer_norm(x) (eps 1e-5, nn.LayerNorm's default that Swin keeps); y may be x. */
static loom_status norm(loom_call *call, const swin_model *m, const float *x, float *y, int64_t rows, int64_t c,
                        const loom_tensor *w, const loom_tensor *b)
{
    int64_t xs[2] = { rows, c }, ys[2] = { rows, c };
    loom_tensor tx = model_view(x, 2, xs), ty = model_view(y, 2, ys);
    const loom_tensor *ins[3] = { &tx, w, b };
    return model_call_op(call, m->layer_norm, ins, 3, &ty, NULL, 0);
}

typedef struct rows_job {
    const float *src;
    float *dst;
    int64_t c, hw;
} rows_job;

/* [N, C, hw] -> [N, hw, C], rows of the output */
static void permute_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const rows_job *j = user;
    for (int64_t r = begin; r < end; r++) {
        const float *s = j->src + (r / j->hw) * j->c * j->hw + r % j->hw;
        float *d = j->dst + r * j->c;
        for (int64_t k = 0; k < j->c; k++)
            d[k] = s[k * j->hw];
    }
}

/* ---------------------------------------------------- packed weights */

static void pack_blocks(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    swin_model *m = user;
    for (int64_t i = begin; i < end; i++) {
        const swin_block *b = &m->blocks[i];
        const loom_tensor *w[4] = { b->qkv_w, b->proj_w, b->fc1_w, b->fc2_w };
        transformer_pack_block(m->packed + b->packed_off, w, b->dim, b->fc1_w->shape[0]);
    }
}

/* The blocks' weights packed for the kernel in use (once per model, again
** only if the kernel changed): every later call skips repacking them. */
static loom_status ensure_packed(loom_call *call, swin_model *m)
{
    if (m->packed != NULL && m->packed_isa == (int)pk_gemm_current_isa())
        return LOOM_OK;
    free(m->packed);
    m->packed = NULL;
    size_t total = 0;
    for (int64_t i = 0; i < m->n_blocks; i++) {
        swin_block *b = &m->blocks[i];
        size_t bytes = vit_block_packed_bytes(b->dim, b->fc1_w->shape[0]);
        b->packed_off = total;
        b->packed_shape[0] = (int64_t)bytes;
        total += (bytes + 63) & ~(size_t)63;
    }
    m->packed = aligned_alloc(64, total > 0 ? total : 64);
    if (m->packed == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the %zu bytes of packed block weights",
                             m->base.cls, total);
    m->packed_isa = (int)pk_gemm_current_isa();
    return pk_host->parallel_for(call->ctx, m->n_blocks, 1, pack_blocks, m);
}

static loom_status block(loom_call *call, swin_model *m, const swin_block *b, float *x, int64_t n, int64_t h,
                         int64_t w)
{
    swin_plan *p = &m->plan;
    const int64_t c = b->dim, rows = n * h * w;
    loom_status st;
    if ((st = norm(call, m, x, p->a, rows, c, b->norm1_w, b->norm1_b)) != LOOM_OK)
        return st;
    int64_t as[4] = { n, h, w, c }, xs[4] = { n, h, w, c }, os[4] = { n, h, w, c };
    loom_tensor ta = model_view(p->a, 4, as), tx = model_view(x, 4, xs), to = model_view(x, 4, os);
    loom_tensor tp = { .data = m->packed + b->packed_off, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                       .dtype = { LOOM_DL_UINT, 8, 1 }, .shape = (int64_t *)b->packed_shape };
    const loom_tensor *ins[9] = { &ta, b->qkv_w, b->qkv_b, b->proj_w, b->proj_b, b->table, b->index, &tx, &tp };
    const int64_t window[2] = { m->window_h, m->window_w }, shift[2] = { b->shift_h, b->shift_w };
    loom_named_attr attrs[3] = {
        { "window_size", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2, .u = { .ints = window } } },
        { "shift_size", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2, .u = { .ints = shift } } },
        { "num_heads", { .type = LOOM_ATTR_INT, .is_set = 1, .u = { .i = b->heads } } },
    };
    if ((st = model_call_op(call, m->attention, ins, 9, &to, attrs, 3)) != LOOM_OK)
        return st;
    loom_tensor tm = model_view(x, 4, xs), tmo = model_view(x, 4, os);
    const loom_tensor *mins[8] = { &tm, b->norm2_w, b->norm2_b, b->fc1_w, b->fc1_b, b->fc2_w, b->fc2_b, &tp };
    return model_call_op(call, m->mlp, mins, 8, &tmo, NULL, 0);
}

static loom_status forward(loom_call *call, void *model, const loom_tensor *x, loom_tensor *logits)
{
    swin_model *m = model;
    swin_plan *p = &m->plan;
    const int64_t n = p->n;
    int64_t h = p->th, w = p->tw, c = m->embed;
    loom_status st;
    {
        int64_t xs[4] = { n, 3, x->shape[2], x->shape[3] }, ys[4] = { n, c, h, w };
        loom_tensor tx = model_view(loom_data(x), 4, xs), ty = model_view(p->a, 4, ys);
        const loom_tensor *ins[3] = { &tx, m->stem_w, m->stem_b };
        const int64_t stride[2] = { m->patch_h, m->patch_w };
        loom_named_attr a[1] = { { "stride", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2,
                                               .u = { .ints = stride } } } };
        if ((st = model_call_op(call, m->conv2d, ins, 3, &ty, a, 1)) != LOOM_OK)
            return st;
    }
    rows_job pj = { p->a, p->x[0], c, h * w };
    if ((st = pk_host->parallel_for(call->ctx, n * h * w, 64, permute_rows, &pj)) != LOOM_OK
        || (st = norm(call, m, p->x[0], p->x[0], n * h * w, c, m->stem_norm_w, m->stem_norm_b)) != LOOM_OK)
        return st;
    if ((st = ensure_packed(call, m)) != LOOM_OK)
        return st;
    int cur = 0;
    const swin_block *b = m->blocks;
    for (int64_t s = 0; s < m->stages; s++) {
        for (int64_t i = 0; i < m->depths[s]; i++, b++)
            if ((st = block(call, m, b, p->x[cur], n, h, w)) != LOOM_OK)
                return st;
        if (s + 1 == m->stages)
            break;
        int64_t xs[4] = { n, h, w, c }, ys[4] = { n, (h + 1) / 2, (w + 1) / 2, 2 * c };
        loom_tensor tx = model_view(p->x[cur], 4, xs), ty = model_view(p->x[1 - cur], 4, ys);
        const loom_tensor *ins[4] = { &tx, m->merges[s].norm_w, m->merges[s].norm_b, m->merges[s].reduction_w };
        if ((st = model_call_op(call, m->merging, ins, 4, &ty, NULL, 0)) != LOOM_OK)
            return st;
        cur = 1 - cur;
        h = (h + 1) / 2;
        w = (w + 1) / 2;
        c *= 2;
    }
    if ((st = norm(call, m, p->x[cur], p->a, n * h * w, c, m->norm_w, m->norm_b)) != LOOM_OK)
        return st;
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < c; k++) {
            double sum = 0.0;
            for (int64_t t = 0; t < h * w; t++)
                sum += p->a[(i * h * w + t) * c + k];
            p->pooled[i * c + k] = (float)(sum / (double)(h * w));
        }
    int64_t ps[2] = { n, c };
    loom_tensor tp = model_view(p->pooled, 2, ps);
    const loom_tensor *ins[3] = { &tp, m->head_w, m->head_b };
    return model_call_op(call, m->linear, ins, 3, logits, NULL, 0);
}

/* the sizes a Swin takes: at least one patch, at most 16384 a side */
static loom_status check_sizes(const void *model, const loom_tensor *x)
{
    const swin_model *m = model;
    char b1[160];
    if (x->shape[0] > 65536 || x->shape[2] < m->patch_h || x->shape[3] < m->patch_w || x->shape[2] > 16384
        || x->shape[3] > 16384)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: %s needs H >= %lld and W >= %lld (one patch), at most 16384, "
                             "N at most 65536", vision_describe(x, b1, sizeof b1), m->base.cls, (long long)m->patch_h,
                             (long long)m->patch_w);
    return LOOM_OK;
}

static loom_status swin_run(loom_call *call)
{
    return transformer_run(call, check_sizes, plan_for, forward);
}

/* ---------------------------------------------------------------- schemas */

static const loom_arg_def swin_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[N, 3, H, W] f32, any size of at least one patch, normalised as the weights' preset says" },
};
static const loom_arg_def swin_outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[N, classes] logits (classes: head.weight's rows)" },
};

#define SWIN_SCHEMA(id, what) TRANSFORMER_SCHEMA(id, what, swin_inputs, swin_outputs)
SWIN_SCHEMA(swin_t, "torchvision.models.swin_t")
SWIN_SCHEMA(swin_s, "torchvision.models.swin_s")
SWIN_SCHEMA(swin_b, "torchvision.models.swin_b")
SWIN_SCHEMA(swin_transformer, "torchvision.models.SwinTransformer")

#define SWIN_KERNEL(s) PK_KERNEL_CPU(s, "cpu:ops", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), swin_run),
TRANSFORMER_MODULE(vision_swin_cpu, "swin", VISION_SWIN_OPS, vision_swin_ops, vision_swin_classes, SWIN_KERNEL)
