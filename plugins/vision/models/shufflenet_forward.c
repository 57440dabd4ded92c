/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shufflenet_forward.c - the method ops of the ShuffleNetV2 classes
** (vision.shufflenet_v2_*: input [N, 3, H, W] f32 -> logits): dispatched
** vision.conv2d (folded batchnorm as bias, relu fused), max_pool2d,
** vision.channel_shuffle, adaptive_avg_pool2d (x.mean([2, 3])) and linear.
** A block's chunk(2, dim=1) is a strided view of its input: the second
** half is made compact by channel_shuffle with groups 1 (a copy) for the
** 1x1 conv; the first half goes straight into the block's end,
** channel_shuffle(cat([x1, branch2]), 2), which reads it through its
** strides.
**
** Buffers, planned once per input shape by a dry run of the same walk:
**   X0, X1  a block's input and output (each block writes the other one:
**           its end reads the input while writing the output)
**   T, U    branch outputs (T: the compact second half, then branch2's
**           result; stride 2: branch1's result, U branch2's)
**   B, C    the intermediate maps of the branches (B also the stem's output)
**   H       conv5's output,  P  the pooled features.
*/
#include <string.h>

#include "shufflenet.h"

enum { BUF_X0, BUF_X1, BUF_T, BUF_U, BUF_B, BUF_C, BUF_H, BUF_P, N_BUFS };

/* out = channel_shuffle(cat([a[:, c0 : c0 + ca], b]), groups) (b may be
** NULL: a's channels alone); a is read through its strides */
static loom_status shuffle(const model_walk *W, const model_base *base, const model_fmap *a, int64_t c0, int64_t ca, const model_fmap *b,
                           model_fmap *out, int role, int64_t groups)
{
    out->shape[0] = a->shape[0];
    out->shape[1] = ca + (b != NULL ? b->shape[1] : 0);
    out->shape[2] = a->shape[2];
    out->shape[3] = a->shape[3];
    if (W->plan != NULL) {
        model_need(W->plan, role, out->shape[0], out->shape[1], out->shape[2], out->shape[3]);
        return LOOM_OK;
    }
    const int64_t plane = a->shape[2] * a->shape[3];
    int64_t as[4] = { a->shape[0], ca, a->shape[2], a->shape[3] }, astr[4] = { a->shape[1] * plane, plane, a->shape[3], 1 };
    int64_t bs[4], os[4];
    memcpy(os, out->shape, sizeof os);
    loom_tensor ta = model_view(a->data + c0 * plane, 4, as), tb, to = model_view(out->data, 4, os);
    ta.strides = astr;
    if (b != NULL) {
        memcpy(bs, b->shape, sizeof bs);
        tb = model_view(b->data, 4, bs);
    }
    const loom_tensor *ins[2] = { &ta, b != NULL ? &tb : NULL };
    loom_tensor *outs[1] = { &to };
    loom_named_attr attrs[1] = { { "groups", { .type = LOOM_ATTR_INT, .is_set = 1, .u = { .i = groups } } } };
    loom_op_call oc = { .struct_size = sizeof oc, .op = base->shuffle, .n_inputs = b != NULL ? 2 : 1, .inputs = ins,
                        .n_outputs = 1,
                        .outputs = outs, .n_attrs = 1, .attrs = attrs };
    return pk_host->op_call(W->call->ctx, &oc);
}

static loom_status walk(const model_walk *W, const void *model, const loom_tensor *x, loom_tensor *logits)
{
    const shufflenet_model *m = model;
    const model_buffers *p = &m->base.plan;
    model_fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    model_fmap io[2] = { { p->buf[BUF_X0], { 0 } }, { p->buf[BUF_X1], { 0 } } };
    model_fmap T = { p->buf[BUF_T], { 0 } }, U = { p->buf[BUF_U], { 0 } }, B = { p->buf[BUF_B], { 0 } };
    model_fmap C = { p->buf[BUF_C], { 0 } }, H = { p->buf[BUF_H], { 0 } };
    loom_status st = model_walk_conv(W, &m->conv1, &in, &B, BUF_B, NULL, "relu", 0);
    if (st == LOOM_OK) {
        io[0].shape[0] = B.shape[0];
        io[0].shape[1] = B.shape[1];
        io[0].shape[2] = model_out_size(B.shape[2], 3, 2, 1);
        io[0].shape[3] = model_out_size(B.shape[3], 3, 2, 1);
        if (W->plan != NULL)
            model_need(W->plan, BUF_X0, io[0].shape[0], io[0].shape[1], io[0].shape[2], io[0].shape[3]);
        else
            st = model_max_pool_3s2(W->call, m->base.max_pool, &B, &io[0]);
    }
    int cur = 0;
    for (int i = 0; i < m->n_blocks && st == LOOM_OK; i++) {
        const shufflenet_block *b = &m->blocks[i];
        const model_fmap *A = &io[cur];
        model_fmap *O = &io[1 - cur];
        const int out_role = cur == 0 ? BUF_X1 : BUF_X0;
        const model_walk *w = W;
        if (b->stride == 1) {
            const int64_t half = A->shape[1] / 2;
            if ((st = shuffle(W, &m->base, A, half, half, NULL, &T, BUF_T, 1)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b2_pw1, &T, &B, BUF_B, NULL, "relu", 0)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b2_dw, &B, &C, BUF_C, NULL, "none", 0)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b2_pw2, &C, &T, BUF_T, NULL, "relu", 0)) == LOOM_OK)
                st = shuffle(W, &m->base, A, 0, half, &T, O, out_role, 2);
        } else {
            if ((st = model_walk_conv(w, &b->b1_dw, A, &C, BUF_C, NULL, "none", 0)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b1_pw, &C, &T, BUF_T, NULL, "relu", 0)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b2_pw1, A, &B, BUF_B, NULL, "relu", 0)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b2_dw, &B, &C, BUF_C, NULL, "none", 0)) == LOOM_OK
                && (st = model_walk_conv(w, &b->b2_pw2, &C, &U, BUF_U, NULL, "relu", 0)) == LOOM_OK)
                st = shuffle(W, &m->base, &T, 0, T.shape[1], &U, O, out_role, 2);
        }
        cur = 1 - cur;
    }
    if (st == LOOM_OK)
        st = model_walk_conv(W, &m->conv5, &io[cur], &H, BUF_H, NULL, "relu", 0);
    return st != LOOM_OK ? st : model_walk_head(W, &m->base, &H, BUF_P, logits);
}

static loom_status shufflenet_run(loom_call *call)
{
    shufflenet_model *m = call->object;
    return model_run(call, &m->base, walk, N_BUFS);
}

MODEL_METHODS(VISION_SHUFFLENETS, shufflenet_run, shufflenet_kernels)

/* vision.shufflenet_v2, the class with the architecture as attributes */
MODEL_SCHEMA(shufflenet_v2)
const loom_kernel_desc shufflenet_generic_kernels[1] = { MODEL_KERNEL_ROW_(shufflenet_run, shufflenet_v2) };
