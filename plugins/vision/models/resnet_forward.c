/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resnet_forward.c - the method ops of the ResNet classes (vision.resnet50
** ...: input [N, 3, H, W] f32 -> logits [N, classes]). The forward is a sequence of dispatched ops (host->op_call):
** vision.conv2d with the folded batchnorm as its bias, relu and the block's
** residual fused, vision.max_pool2d, vision.adaptive_avg_pool2d and
** vision.linear (fc), so LOOM_VERBOSE=2 names each layer's backend.
**
** Activation buffers are planned once per input shape (the first call with
** a shape sizes them, later calls of that shape reuse them) in four roles,
** so that at most three feature maps are live at once:
**   A  a block's input and output: the last conv writes the block's output
**      over its input, which conv1 and the downsample have consumed by then
**      (an identity residual is read in place: the element it adds is the
**      element it writes)
**   B  the stem's output (before the max pool), conv1's output and, in a
**      bottleneck, the downsample's, run after conv2 has consumed conv1's
**      output (so the two share B)
**   C  a bottleneck's conv2 output, or a basic block's downsample
**   P  the pooled features [N, features].
** Each is as large as the largest tensor of its role. One forward runs at a
** time per model (its lock): calls on one object from several threads are
** serialised, those on distinct objects are not.
*/
#include <stdlib.h>
#include <string.h>

#include "model_common.h"

enum { BUF_A, BUF_B, BUF_C, BUF_P, N_BUFS };

/* The floats each role needs for input [n, 3, h, w]. */
static void plan_sizes(const resnet_model *m, int64_t n, int64_t h, int64_t w, size_t *floats)
{
    memset(floats, 0, N_BUFS * sizeof *floats);
#define NEED(role, c, hh, ww)                                                                      \
    do {                                                                                           \
        size_t need_ = (size_t)(n * (c) * (hh) * (ww));                                             \
        if (need_ > floats[role])                                                                  \
            floats[role] = need_;                                                                  \
    } while (0)
    h = model_out_size(h, 7, 2, 3);
    w = model_out_size(w, 7, 2, 3);
    NEED(BUF_B, m->stem.cout, h, w);
    h = model_out_size(h, 3, 2, 1);
    w = model_out_size(w, 3, 2, 1);
    NEED(BUF_A, m->stem.cout, h, w);
    for (int b = 0; b < m->n_blocks; b++) {
        const resnet_block *B = &m->blocks[b];
        const model_conv *c0 = &B->conv[0], *c1 = &B->conv[1];
        int64_t h1 = model_out_size(h, c0->k, c0->stride, c0->pad), w1 = model_out_size(w, c0->k, c0->stride, c0->pad);
        NEED(BUF_B, c0->cout, h1, w1);
        int64_t h2 = model_out_size(h1, c1->k, c1->stride, c1->pad), w2 = model_out_size(w1, c1->k, c1->stride, c1->pad);
        if (B->n_convs == 3) {
            NEED(BUF_C, c1->cout, h2, w2);
            NEED(BUF_A, B->conv[2].cout, h2, w2);
        } else {
            NEED(BUF_A, c1->cout, h2, w2);
        }
        if (B->has_down)
            NEED(B->n_convs == 3 ? BUF_B : BUF_C, B->down.cout, h2, w2);
        h = h2;
        w = w2;
    }
    NEED(BUF_P, m->base.features, 1, 1);
#undef NEED
}

static loom_status plan_for(resnet_model *m, int64_t n, int64_t h, int64_t w)
{
    size_t floats[N_BUFS];
    plan_sizes(m, n, h, w, floats);
    return model_buffers_fit(&m->base.plan, N_BUFS, floats, n, h, w, m->base.cls);
}

typedef model_fmap fmap;

/* out = conv c of in (+ residual), relu when relu; out->shape is set. */
static loom_status run_conv(loom_call *call, const resnet_model *m, const model_conv *c, const fmap *in, fmap *out,
                            const fmap *residual, int relu)
{
    return model_conv2d(call, m->base.conv2d, c, in, out, residual, relu ? "relu" : "none");
}

static loom_status forward(loom_call *call, resnet_model *m, const loom_tensor *x, loom_tensor *logits)
{
    model_buffers *p = &m->base.plan;
    fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    fmap A = { p->buf[BUF_A], { 0 } }, B = { p->buf[BUF_B], { 0 } }, C = { p->buf[BUF_C], { 0 } };
    loom_status st = run_conv(call, m, &m->stem, &in, &B, NULL, 1);
    if (st != LOOM_OK)
        return st;
    /* maxpool 3/2 pad 1: B -> A */
    if ((st = model_max_pool_3s2(call, m->base.max_pool, &B, &A)) != LOOM_OK)
        return st;
    for (int b = 0; b < m->n_blocks && st == LOOM_OK; b++) {
        const resnet_block *blk = &m->blocks[b];
        fmap res = A;
        if ((st = run_conv(call, m, &blk->conv[0], &A, &B, NULL, 1)) != LOOM_OK)
            return st;
        if (blk->n_convs == 3) {
            if ((st = run_conv(call, m, &blk->conv[1], &B, &C, NULL, 1)) != LOOM_OK)
                return st;
            if (blk->has_down) {    /* conv1's output is consumed: the downsample takes B */
                if ((st = run_conv(call, m, &blk->down, &A, &B, NULL, 0)) != LOOM_OK)
                    return st;
                res = B;
            }
            st = run_conv(call, m, &blk->conv[2], &C, &A, &res, 1);
        } else {
            if (blk->has_down) {
                if ((st = run_conv(call, m, &blk->down, &A, &C, NULL, 0)) != LOOM_OK)
                    return st;
                res = C;
            }
            st = run_conv(call, m, &blk->conv[1], &B, &A, &res, 1);
        }
    }
    if (st != LOOM_OK)
        return st;
    /* avgpool to 1x1, then fc */
    return model_pool_linear(call, m->base.avg_pool, m->base.linear, &A, p->buf[BUF_P], m->base.fc_weight, m->base.fc_bias, m->base.classes,
                             logits);
}

static loom_status resnet_run(loom_call *call)
{
    resnet_model *m = call->object;
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = model_check_input(call, m->base.classes, &out);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&m->base.lock);
    st = plan_for(m, x->shape[0], x->shape[2], x->shape[3]);
    if (st == LOOM_OK)
        st = forward(call, m, x, out);
    pthread_mutex_unlock(&m->base.lock);
    return st;
}

#define RESNET_SCHEMA(id) MODEL_SCHEMA(id)
VISION_RESNETS(RESNET_SCHEMA)

#define RESNET_KERNEL(id) PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), resnet_run),
const loom_kernel_desc resnet_kernels[VISION_N_RESNETS] = { VISION_RESNETS(RESNET_KERNEL) };

/* vision.resnet, the class with the architecture as attributes */
MODEL_SCHEMA(resnet)
const loom_kernel_desc resnet_generic_kernels[1] = { RESNET_KERNEL(resnet) };
