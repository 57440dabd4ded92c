/* SPDX-License-Identifier: BSD-3-Clause */
/*
** regnet_forward.c - the method ops of the RegNet classes (vision.regnet_*:
** input [N, 3, H, W] f32 -> logits [N, classes]): dispatched vision.conv2d
** (folded batchnorm as bias; relu, and the block's residual, fused),
** vision.squeeze_excitation in place, adaptive_avg_pool2d and linear.
**
** Buffers, planned once per input shape (model_buffers), in five roles:
**   A  a block's input and output (f.c writes relu(proj + f) over the input,
**      which proj and f.a have consumed; an identity residual is read in
**      place, element for element), and the stem's output
**   B  f.a's output,  C  f.b's output (the SE scales it in place),
**   D  proj's output,  P  the pooled features [N, features].
*/
#include <string.h>

#include "regnet.h"

enum { BUF_A, BUF_B, BUF_C, BUF_D, BUF_P, N_BUFS };

static void plan_sizes(const regnet_model *m, int64_t n, int64_t h, int64_t w, size_t *need)
{
    memset(need, 0, N_BUFS * sizeof *need);
    h = model_out_size(h, 3, 2, 1);
    w = model_out_size(w, 3, 2, 1);
    model_need(need, BUF_A, n, m->stem.cout, h, w);
    for (int i = 0; i < m->n_blocks; i++) {
        const regnet_block *b = &m->blocks[i];
        model_need(need, BUF_B, n, b->a.cout, h, w);
        h = model_out_size(h, 3, b->b.stride, 1);
        w = model_out_size(w, 3, b->b.stride, 1);
        model_need(need, BUF_C, n, b->b.cout, h, w);
        model_need(need, BUF_A, n, b->c.cout, h, w);
        if (b->has_proj)
            model_need(need, BUF_D, n, b->proj.cout, h, w);
    }
    model_need(need, BUF_P, n, m->features, 1, 1);
}

static loom_status forward(loom_call *call, regnet_model *m, const loom_tensor *x, loom_tensor *logits)
{
    model_buffers *p = &m->plan;
    model_fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    model_fmap A = { p->buf[BUF_A], { 0 } }, B = { p->buf[BUF_B], { 0 } }, C = { p->buf[BUF_C], { 0 } };
    model_fmap D = { p->buf[BUF_D], { 0 } };
    loom_status st = model_conv2d(call, m->conv2d, &m->stem, &in, &A, NULL, "relu");
    for (int i = 0; i < m->n_blocks && st == LOOM_OK; i++) {
        const regnet_block *b = &m->blocks[i];
        model_fmap res = A;
        if (b->has_proj && (st = model_conv2d(call, m->conv2d, &b->proj, &A, &D, NULL, "none")) == LOOM_OK)
            res = D;
        if (st == LOOM_OK)
            st = model_conv2d(call, m->conv2d, &b->a, &A, &B, NULL, "relu");
        if (st == LOOM_OK)
            st = model_conv2d(call, m->conv2d, &b->b, &B, &C, NULL, "relu");
        if (st == LOOM_OK && b->se_channels > 0)
            st = model_squeeze_excitation(call, m->se, &C, b->se_channels, b->se_w1, b->se_b1, b->se_w2, b->se_b2,
                                          "relu");
        if (st == LOOM_OK)
            st = model_conv2d(call, m->conv2d, &b->c, &C, &A, &res, "relu");
    }
    if (st != LOOM_OK)
        return st;
    return model_pool_linear(call, m->avg_pool, m->linear, &A, p->buf[BUF_P], m->fc_weight, m->fc_bias, m->classes,
                             logits);
}

static loom_status regnet_run(loom_call *call)
{
    regnet_model *m = call->object;
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = model_check_input(call, m->classes, &out);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&m->lock);
    size_t need[N_BUFS];
    plan_sizes(m, x->shape[0], x->shape[2], x->shape[3], need);
    st = model_buffers_fit(&m->plan, N_BUFS, need, x->shape[0], x->shape[2], x->shape[3], m->arch->name);
    if (st == LOOM_OK)
        st = forward(call, m, x, out);
    pthread_mutex_unlock(&m->lock);
    return st;
}

MODEL_METHODS(VISION_REGNETS, regnet_run, regnet_kernels)
