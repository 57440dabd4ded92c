/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mnasnet_forward.c - the method ops of the MNASNet classes
** (vision.mnasnet*: input [N, 3, H, W] f32 -> logits): dispatched
** vision.conv2d (folded batchnorm as bias, relu fused, the block's residual
** fused at its projection), adaptive_avg_pool2d (x.mean([2, 3])) and
** linear; dropout is the identity at inference.
**
** Buffers, planned once per input shape by a dry run of the same walk:
**   X  a block's input and output (the projection writes over the input,
**      consumed by the expansion; an identity residual is read in place)
**   E  the expansion's output (the stem's 3x3 output too)
**   D  the depthwise conv's output,  H  the head's,  P  the pooled features.
*/
#include <string.h>

#include "mnasnet.h"

enum { BUF_X, BUF_E, BUF_D, BUF_H, BUF_P, N_BUFS };

static loom_status walk(const model_walk *W, const void *model, const loom_tensor *x, loom_tensor *logits)
{
    const mnasnet_model *m = model;
    const model_buffers *p = &m->base.plan;
    model_fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    model_fmap X = { p->buf[BUF_X], { 0 } }, E = { p->buf[BUF_E], { 0 } }, D = { p->buf[BUF_D], { 0 } };
    model_fmap H = { p->buf[BUF_H], { 0 } };
    loom_status st = model_walk_conv(W, &m->stem, &in, &E, BUF_E, NULL, "relu", 0);
    if (st == LOOM_OK)
        st = model_walk_conv(W, &m->stem_dw, &E, &D, BUF_D, NULL, "relu", 0);
    if (st == LOOM_OK)
        st = model_walk_conv(W, &m->stem_pw, &D, &X, BUF_X, NULL, "none", 0);
    for (int i = 0; i < m->n_blocks && st == LOOM_OK; i++) {
        const mnasnet_block *b = &m->blocks[i];
        model_fmap res = X;
        if ((st = model_walk_conv(W, &b->expand, &X, &E, BUF_E, NULL, "relu", 0)) == LOOM_OK
            && (st = model_walk_conv(W, &b->dw, &E, &D, BUF_D, NULL, "relu", 0)) == LOOM_OK)
            st = model_walk_conv(W, &b->proj, &D, &X, BUF_X, b->use_res ? &res : NULL, "none", 0);
    }
    if (st == LOOM_OK)
        st = model_walk_conv(W, &m->head, &X, &H, BUF_H, NULL, "relu", 0);
    return st != LOOM_OK ? st : model_walk_head(W, &m->base, &H, BUF_P, logits);
}

static loom_status mnasnet_run(loom_call *call)
{
    mnasnet_model *m = call->object;
    return model_run(call, &m->base, walk, N_BUFS);
}

MODEL_METHODS(VISION_MNASNETS, mnasnet_run, mnasnet_kernels)

/* vision.mnasnet, the class with the architecture as attributes */
MODEL_SCHEMA(mnasnet)
const loom_kernel_desc mnasnet_generic_kernels[1] = { MODEL_KERNEL_ROW_(mnasnet_run, mnasnet) };
