/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resnet_onednn.c - the onednn kernels of the ResNet classes' method ops
** (vision.resnet50 ...; built when oneDNN is found): the whole forward as
** one oneDNN plan (onednn_net.h) per (object, input shape, thread budget),
** made at the first call of the shape and reused, freed with the object.
** LOOM_BACKENDS=vision.resnet50=cpu (or cpu) runs the cpu kernel, the
** sequence of dispatched layer ops (resnet_forward.c); LOOM_VERBOSE=2 shows
** the implementation oneDNN chose for each layer when a plan is made.
**
** Buffers (resnet_onednn_body, which the detectors' backbone plan shares:
** onednn_net.h): three roles hold at most three feature maps at once, as in
** the cpu forward; the block's output takes whichever of them the walk frees:
**   stem conv -> t, max pool -> cur;
**   Bottleneck: conv1 cur -> f1, conv2 f1 -> f2; with a downsample,
**     down cur -> f1 (conv1's output is consumed) and conv3 f2 summed into
**     f1, which becomes cur; without, conv3 f2 summed into cur in place;
**   BasicBlock: conv1 cur -> f1; with a downsample, down cur -> f2 and
**     conv2 f1 summed into f2, which becomes cur; without, conv2 f1 summed
**     into cur in place;
**   a fourth, small buffer holds the pooled features.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/onednn_runtime.h"
#include "onednn_net.h"

enum { BUF_POOLED = 3, N_BUFS = 4 };

/* The two buffers of the triple {pool, pool + 1, pool + 2} other than cur,
** or its first two when cur is outside it (the previous stage's output,
** which then stays as it is). */
static void others(int pool, int cur, int *a, int *b)
{
    if (cur < pool || cur >= pool + 3) {
        *a = pool;
        *b = pool + 1;
        return;
    }
    *a = pool + (cur - pool + 1) % 3;
    *b = pool + (cur - pool + 2) % 3;
}

loom_status resnet_onednn_body(resnet_model *m, onednn_net *net, const int *stage_pool, onednn_value *stage_out)
{
    onednn_value x = onednn_net_input(net), t, cur;
    loom_status st = onednn_net_conv(net, &m->stem, &x, stage_pool[0] + 1, ONEDNN_ACT_RELU, 0, &t);
    if (st == LOOM_OK)
        st = onednn_net_max_pool(net, 3, 2, 1, &t, stage_pool[0], &cur);
    for (int s = 0, b = 0; s < 4 && st == LOOM_OK; s++) {
        const int pool = stage_pool[s];
        for (int j = 0; j < m->arch.layers[s] && st == LOOM_OK; j++, b++) {
            resnet_block *blk = &m->blocks[b];
            int f1, f2;
            others(pool, cur.buf, &f1, &f2);
            if (!blk->has_down && (cur.buf < pool || cur.buf >= pool + 3))
                return pk_host->fail(LOOM_ENOTSUP, "%s: a oneDNN plan keeps stage %d's input, which block %d "
                                     "(no downsample) would overwrite", m->base.cls, s, b);
            onednn_value v1, v2, r;
            st = onednn_net_conv(net, &blk->conv[0], &cur, f1, ONEDNN_ACT_RELU, 0, &v1);
            if (blk->n_convs == 3) {
                if (st == LOOM_OK)
                    st = onednn_net_conv(net, &blk->conv[1], &v1, f2, ONEDNN_ACT_RELU, 0, &v2);
                int into = cur.buf;
                if (st == LOOM_OK && blk->has_down) {
                    st = onednn_net_conv(net, &blk->down, &cur, f1, ONEDNN_ACT_NONE, 0, &r);
                    into = f1;
                }
                if (st == LOOM_OK)
                    st = onednn_net_conv(net, &blk->conv[2], &v2, into, ONEDNN_ACT_RELU, 1, &cur);
            } else {
                int into = cur.buf;
                if (st == LOOM_OK && blk->has_down) {
                    st = onednn_net_conv(net, &blk->down, &cur, f2, ONEDNN_ACT_NONE, 0, &r);
                    into = f2;
                }
                if (st == LOOM_OK)
                    st = onednn_net_conv(net, &blk->conv[1], &v1, into, ONEDNN_ACT_RELU, 1, &cur);
            }
        }
        stage_out[s] = cur;
    }
    return st;
}

static loom_status build(resnet_model *m, onednn_net *net)
{
    static const int one_pool[4] = { 0, 0, 0, 0 };
    onednn_value stage[4];
    loom_status st = resnet_onednn_body(m, net, one_pool, stage);
    if (st == LOOM_OK)
        st = onednn_net_head(net, &stage[3], BUF_POOLED, m->base.fc_weight, m->base.fc_bias, m->base.classes);
    return st;
}

static loom_status build_plan(void *model, onednn_net *net) { return build(model, net); }

static loom_status resnet_onednn_run(loom_call *call)
{
    resnet_model *m = call->object;
    return onednn_model_run(call, &m->base, N_BUFS, build_plan);
}

#define RESNET_ONEDNN_KERNEL(id)                                                                   \
    PK_KERNEL(vision_##id##_schema, "onednn", LOOM_DEVICE_CPU, "onednn:plan", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), \
              resnet_onednn_run, .supports = onednn_model_supports),
const loom_kernel_desc resnet_onednn_kernels[VISION_N_RESNETS] = { VISION_RESNETS(RESNET_ONEDNN_KERNEL) };
