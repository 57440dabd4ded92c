/* SPDX-License-Identifier: BSD-3-Clause */
/*
** efficientnet_forward.c - the method ops of the EfficientNetV2 classes
** (vision.efficientnet_v2_*: input [N, 3, H, W] f32 -> logits):
** dispatched vision.conv2d (folded batchnorm as bias, silu fused, the
** residual fused: after the activation in a FusedMBConv without expansion,
** else at the projection, which has none), vision.squeeze_excitation in
** place, adaptive_avg_pool2d and linear. Stochastic depth is the identity
** at inference and dropout too, so neither is called.
**
** Buffers, planned once per input shape by a dry run of the same walk
** (model_run, model_walk):
**   X0, X1  a block's input and output: a block writes its output over its
**           input (consumed by then; an identity residual is read in place),
**           except a FusedMBConv without expansion, whose activation comes
**           before the residual: it writes the other one and they swap
**   E       the expansion's output,  D  the depthwise conv's output (the SE
**           scales it in place),  H  the head conv's,  P  the pooled features.
*/
#include <string.h>

#include "efficientnet.h"

enum { BUF_X0, BUF_X1, BUF_E, BUF_D, BUF_H, BUF_P, N_BUFS };

static loom_status walk(const model_walk *W, const void *model, const loom_tensor *x, loom_tensor *logits)
{
    const effnet_model *m = model;
    const model_buffers *p = &m->base.plan;
    model_fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    model_fmap io[2] = { { p->buf[BUF_X0], { 0 } }, { p->buf[BUF_X1], { 0 } } };
    model_fmap E = { p->buf[BUF_E], { 0 } }, D = { p->buf[BUF_D], { 0 } }, H = { p->buf[BUF_H], { 0 } };
    int cur = 0;
    loom_status st = model_walk_conv(W, &m->stem, &in, &io[0], BUF_X0, NULL, "silu", 0);
    for (int i = 0; i < m->n_blocks && st == LOOM_OK; i++) {
        const effnet_block *b = &m->blocks[i];
        model_fmap *A = &io[cur];
        const int role = cur == 0 ? BUF_X0 : BUF_X1;
        model_fmap res = *A;
        const model_fmap *r = b->use_res ? &res : NULL;
        if (b->fused && !b->has_expand) {
            model_fmap *O = &io[1 - cur];
            st = model_walk_conv(W, &b->proj, A, O, cur == 0 ? BUF_X1 : BUF_X0, r, "silu", r != NULL);
            cur = 1 - cur;
            continue;
        }
        const model_fmap *t = A;
        if (b->has_expand) {
            st = model_walk_conv(W, &b->expand, A, &E, BUF_E, NULL, "silu", 0);
            t = &E;
        }
        if (st == LOOM_OK && !b->fused) {
            st = model_walk_conv(W, &b->dw, t, &D, BUF_D, NULL, "silu", 0);
            if (st == LOOM_OK)
                st = model_walk_se(W, &m->base, &D, b->se_channels, b->se_w1, b->se_b1, b->se_w2, b->se_b2, "silu");
            t = &D;
        }
        if (st == LOOM_OK)
            st = model_walk_conv(W, &b->proj, t, A, role, r, "none", 0);
    }
    if (st == LOOM_OK)
        st = model_walk_conv(W, &m->head, &io[cur], &H, BUF_H, NULL, "silu", 0);
    return st != LOOM_OK ? st : model_walk_head(W, &m->base, &H, BUF_P, logits);
}

static loom_status effnet_run(loom_call *call)
{
    effnet_model *m = call->object;
    return model_run(call, &m->base, walk, N_BUFS);
}

MODEL_METHODS(VISION_EFFICIENTNETS, effnet_run, effnet_kernels)

/* vision.efficientnet_v2, the class with the stage list as an attribute */
MODEL_SCHEMA(efficientnet_v2)
const loom_kernel_desc effnet_generic_kernels[1] = { MODEL_KERNEL_ROW_(effnet_run, efficientnet_v2) };
