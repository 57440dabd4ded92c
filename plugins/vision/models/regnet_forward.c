/* SPDX-License-Identifier: BSD-3-Clause */
/*
** regnet_forward.c - the method ops of the RegNet classes (vision.regnet_*
** and vision.regnet:
** input [N, 3, H, W] f32 -> logits [N, classes]): dispatched vision.conv2d
** (folded batchnorm as bias; relu, and the block's residual, fused),
** vision.squeeze_excitation in place, adaptive_avg_pool2d and linear.
**
** Buffers, planned once per input shape by a dry run of the same walk
** (model_run), in five roles:
**   A  a block's input and output (f.c writes relu(proj + f) over the input,
**      which proj and f.a have consumed; an identity residual is read in
**      place, element for element), and the stem's output
**   B  f.a's output,  C  f.b's output (the SE scales it in place),
**   D  proj's output,  P  the pooled features [N, features].
*/
#include <string.h>

#include "regnet.h"

enum { BUF_A, BUF_B, BUF_C, BUF_D, BUF_P, N_BUFS };

static loom_status walk(const model_walk *W, const void *model, const loom_tensor *x, loom_tensor *logits)
{
    const regnet_model *m = model;
    const model_buffers *p = &m->base.plan;
    model_fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    model_fmap A = { p->buf[BUF_A], { 0 } }, B = { p->buf[BUF_B], { 0 } }, C = { p->buf[BUF_C], { 0 } };
    model_fmap D = { p->buf[BUF_D], { 0 } };
    loom_status st = model_walk_conv(W, &m->stem, &in, &A, BUF_A, NULL, "relu", 0);
    for (int i = 0; i < m->n_blocks && st == LOOM_OK; i++) {
        const regnet_block *b = &m->blocks[i];
        model_fmap res = A;
        if (b->has_proj && (st = model_walk_conv(W, &b->proj, &A, &D, BUF_D, NULL, "none", 0)) == LOOM_OK)
            res = D;
        if (st == LOOM_OK)
            st = model_walk_conv(W, &b->a, &A, &B, BUF_B, NULL, "relu", 0);
        if (st == LOOM_OK)
            st = model_walk_conv(W, &b->b, &B, &C, BUF_C, NULL, "relu", 0);
        if (st == LOOM_OK && b->se_channels > 0)
            st = model_walk_se(W, &m->base, &C, b->se_channels, b->se_w1, b->se_b1, b->se_w2, b->se_b2, "relu");
        if (st == LOOM_OK)
            st = model_walk_conv(W, &b->c, &C, &A, BUF_A, &res, "relu", 0);
    }
    return st != LOOM_OK ? st : model_walk_head(W, &m->base, &A, BUF_P, logits);
}

static loom_status regnet_run(loom_call *call)
{
    regnet_model *m = call->object;
    return model_run(call, &m->base, walk, N_BUFS);
}

MODEL_METHODS(VISION_REGNETS, regnet_run, regnet_kernels)

/* vision.regnet, the class with the architecture as attributes */
MODEL_SCHEMA(regnet)
const loom_kernel_desc regnet_generic_kernels[1] = { MODEL_KERNEL_ROW_(regnet_run, regnet) };
