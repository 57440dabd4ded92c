/* SPDX-License-Identifier: BSD-3-Clause */
/*
** efficientnet_onednn.c - the onednn kernels of the EfficientNetV2 classes'
** method ops (vision.efficientnet_v2_s ...; built when oneDNN is found):
** the whole forward as one oneDNN plan (onednn_net.h) per (object, input
** shape, thread budget), made at the first call of the shape and reused,
** freed with the object. LOOM_BACKENDS=vision.efficientnet_v2_s=cpu (or
** cpu) runs the cpu kernel, the sequence of dispatched layer ops
** (efficientnet_forward.c).
**
** Every convolution carries its bias (the folded batchnorm) and silu; the
** projection sums an identity residual in place (a sum post-op); a
** FusedMBConv without expansion adds its residual after silu (a binary
** post-op, the output in the other block buffer, as the cpu forward does).
** The squeeze-excitation runs in the blocked layout: a global average pool,
** its two 1x1 convolutions (silu, then sigmoid) on [N, C, 1, 1] and a
** broadcast multiply in place.
**
** Buffers: X0, X1 a block's input and output (as the cpu forward), E the
** expansion's output (and the head conv's), D the depthwise conv's, then
** the squeeze-excitation's pooled map (and the head's pooled features), its
** squeezed map and its scale.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efficientnet.h"
#include "layers/onednn_runtime.h"
#include "onednn_net.h"

enum { BUF_X0, BUF_X1, BUF_E, BUF_D, BUF_SE_POOL, BUF_SE_MID, BUF_SE_SCALE, N_BUFS };

/* The squeeze-excitation of d in place: d *= sigmoid(fc2(silu(fc1(mean(d))))). */
static loom_status squeeze_excitation(onednn_net *net, const effnet_block *b, const onednn_value *d)
{
    const int64_t c = d->dims[1], s = b->se_channels;
    model_conv fc1 = model_conv_of(c, s, 1, 1, 1), fc2 = model_conv_of(s, c, 1, 1, 1);
    fc1.weight = (float *)b->se_w1;
    fc1.bias = (float *)b->se_b1;
    fc2.weight = (float *)b->se_w2;
    fc2.bias = (float *)b->se_b2;
    onednn_value pooled, mid, scale;
    loom_status st = onednn_net_global_avg_pool(net, d, BUF_SE_POOL, &pooled);
    if (st == LOOM_OK)
        st = onednn_net_conv_borrowed(net, &fc1, &pooled, BUF_SE_MID, ONEDNN_ACT_SILU, &mid);
    if (st == LOOM_OK)
        st = onednn_net_conv_borrowed(net, &fc2, &mid, BUF_SE_SCALE, ONEDNN_ACT_SIGMOID, &scale);
    return st == LOOM_OK ? onednn_net_scale(net, d, &scale) : st;
}

static loom_status build(effnet_model *m, onednn_net *net)
{
    onednn_value x = onednn_net_input(net), io[2];
    int cur = 0;
    loom_status st = onednn_net_conv(net, &m->stem, &x, BUF_X0, ONEDNN_ACT_SILU, 0, &io[0]);
    for (int i = 0; i < m->n_blocks && st == LOOM_OK; i++) {
        effnet_block *b = &m->blocks[i];
        const onednn_value a = io[cur];
        if (b->fused && !b->has_expand) {
            const int other = cur == 0 ? BUF_X1 : BUF_X0;
            st = b->use_res ? onednn_net_conv_add(net, &b->proj, &a, other, ONEDNN_ACT_SILU, &a, &io[1 - cur])
                            : onednn_net_conv(net, &b->proj, &a, other, ONEDNN_ACT_SILU, 0, &io[1 - cur]);
            cur = 1 - cur;
            continue;
        }
        onednn_value t = a, e, d;
        if (b->has_expand) {
            st = onednn_net_conv(net, &b->expand, &a, BUF_E, ONEDNN_ACT_SILU, 0, &e);
            t = e;
        }
        if (st == LOOM_OK && !b->fused) {
            st = onednn_net_conv(net, &b->dw, &t, BUF_D, ONEDNN_ACT_SILU, 0, &d);
            if (st == LOOM_OK)
                st = squeeze_excitation(net, b, &d);
            t = d;
        }
        /* over the block's input, consumed by now (an identity residual is
        ** summed in place) */
        if (st == LOOM_OK)
            st = onednn_net_conv(net, &b->proj, &t, a.buf, ONEDNN_ACT_NONE, b->use_res, &io[cur]);
    }
    onednn_value h;
    if (st == LOOM_OK)
        st = onednn_net_conv(net, &m->head, &io[cur], BUF_E, ONEDNN_ACT_SILU, 0, &h);
    if (st == LOOM_OK)
        st = onednn_net_head(net, &h, BUF_SE_POOL, m->base.fc_weight, m->base.fc_bias, m->base.classes);
    return st;
}

static loom_status build_plan(void *model, onednn_net *net) { return build(model, net); }

static loom_status effnet_onednn_run(loom_call *call)
{
    effnet_model *m = call->object;
    return onednn_model_run(call, &m->base, N_BUFS, build_plan);
}

#define EFFNET_ONEDNN_KERNEL(R, id)                                                                \
    PK_KERNEL(vision_##id##_schema, "onednn", LOOM_DEVICE_CPU, "onednn:plan", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), \
              effnet_onednn_run, .supports = onednn_model_supports),
const loom_kernel_desc effnet_onednn_kernels[VISION_N_EFFICIENTNETS] = { VISION_EFFICIENTNETS(EFFNET_ONEDNN_KERNEL, _) };
