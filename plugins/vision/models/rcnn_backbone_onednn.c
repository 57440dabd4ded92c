/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rcnn_backbone_onednn.c - the detectors' backbone as one oneDNN plan
** (rcnn_backbone.h: rcnn_backbone_plan_forward; built when oneDNN is
** found): the ResNet body (resnet_onednn_body), the FPN and its extra block
** in oneDNN's blocked layout from the image batch to the maps, which leave
** the plan in plain NCHW. The dispatched form (rcnn_backbone.c) reorders
** every convolution's input and output between NCHW and the blocked layout,
** which at 800 x 1216 moves more bytes than the early convolutions compute
** on: 1x1 convs of 64 channels ran at 50 GFLOP/s there.
**
** Buffers: the body's stage s takes the triple 3 * pool(s) (stages up to the
** FPN's first share triple 0; each later stage has its own, so the stage
** outputs the FPN reads stay), then two FPN inner maps (alternating, the
** coarser one upsampled into the other's buffer and the lateral 1x1 conv
** summed onto it), the layer conv's output, p6 and relu(p6) or the pool,
** p7, and one plain NCHW buffer per map given.
**
** The plan needs the image batch's sides to be multiples of 32 (the
** detectors' transform pads them so): every FPN level is then exactly twice
** the next, where oneDNN's nearest upsampling is F.interpolate's.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/onednn_runtime.h"
#include "onednn_net.h"
#include "rcnn_backbone.h"

enum {
    BUF_INNER = 3 * RCNN_BODY_STAGES,   /* two */
    BUF_LAYER = BUF_INNER + 2,
    BUF_P6,
    BUF_P6_RELU,
    BUF_P7,
    BUF_MAP0,                           /* RCNN_MAX_LEVELS plain maps */
    N_BUFS = BUF_MAP0 + RCNN_MAX_LEVELS,
};

_Static_assert(N_BUFS <= ONEDNN_NET_MAX_BUFS, "the backbone plan's buffers");

int rcnn_backbone_plan_fits(const rcnn_backbone *b, const loom_tensor *batch)
{
    return b->body_kind == RCNN_BODY_RESNET && batch->ndim == 4 && batch->shape[2] % 32 == 0
           && batch->shape[3] % 32 == 0 && batch->shape[2] > 0 && batch->shape[3] > 0;
}

static loom_status build(rcnn_backbone *b, onednn_net *net)
{
    int pool[RCNN_BODY_STAGES];
    for (int s = 0; s < RCNN_BODY_STAGES; s++)
        pool[s] = 3 * (s > b->first_stage ? s - b->first_stage : 0);
    onednn_value c[RCNN_BODY_STAGES], last = { 0 }, inner, map, up;
    loom_status st = resnet_onednn_body(b->body, net, pool, c);
    const int n = rcnn_backbone_fpn_inputs(b);
    for (int i = n - 1; i >= 0 && st == LOOM_OK; i--) {
        const onednn_value *ci = &c[b->first_stage + i];
        const int into = BUF_INNER + i % 2;
        if (i < n - 1) {    /* inner_lateral + F.interpolate(last_inner, size=feature's, mode="nearest") */
            if (ci->dims[2] != 2 * last.dims[2] || ci->dims[3] != 2 * last.dims[3])
                return pk_host->fail(LOOM_ENOTSUP, "%s: FPN level %d is not twice the size of level %d", b->cls,
                                     i, i + 1);
            st = onednn_net_upsample2x(net, &last, into, &up);
            if (st == LOOM_OK)
                st = onednn_net_conv(net, &b->inner[i], ci, into, ONEDNN_ACT_NONE, 1, &inner);
        } else {
            st = onednn_net_conv(net, &b->inner[i], ci, into, ONEDNN_ACT_NONE, 0, &inner);
        }
        if (st == LOOM_OK)
            st = onednn_net_conv(net, &b->layer[i], &inner, BUF_LAYER, ONEDNN_ACT_NONE, 0, &map);
        if (st == LOOM_OK)
            st = onednn_net_output(net, &map, BUF_MAP0 + i);
        if (st == LOOM_OK && i == n - 1) {     /* the extra block, from P_last while it is in BUF_LAYER */
            onednn_value p6, r, p7;
            if (b->extra == RCNN_EXTRA_MAXPOOL) {
                st = onednn_net_max_pool(net, 1, 2, 0, &map, BUF_P6, &p6);
                if (st == LOOM_OK)
                    st = onednn_net_output(net, &p6, BUF_MAP0 + n);
            } else {
                const onednn_value *src = b->extra == RCNN_EXTRA_P6P7_FROM_P5 ? &map : &c[RCNN_BODY_STAGES - 1];
                st = onednn_net_conv(net, &b->p6, src, BUF_P6, ONEDNN_ACT_NONE, 0, &p6);
                if (st == LOOM_OK)
                    st = onednn_net_output(net, &p6, BUF_MAP0 + n);
                if (st == LOOM_OK)
                    st = onednn_net_relu(net, &p6, BUF_P6_RELU, &r);
                if (st == LOOM_OK)
                    st = onednn_net_conv(net, &b->p7, &r, BUF_P7, ONEDNN_ACT_NONE, 0, &p7);
                if (st == LOOM_OK)
                    st = onednn_net_output(net, &p7, BUF_MAP0 + n + 1);
            }
        }
        last = inner;
    }
    return st;
}

loom_status rcnn_backbone_plan_forward(loom_call *call, const rcnn_backbone *cb, const loom_tensor *batch,
                                       loom_tensor **x)
{
    /* the plan releases the plain conv weights it reorders: the object is
    ** the caller's, under its lock (the const is the forwards' view) */
    rcnn_backbone *b = (rcnn_backbone *)(uintptr_t)cb;
    onednn_nets *nets = onednn_nets_of(call);
    if (nets == NULL)
        return LOOM_ENOMEM;            /* the error is set */
    const int threads = onednn_call_threads(call);
    onednn_net *net = onednn_nets_find(nets, batch->shape, threads);
    loom_status st = LOOM_OK;
    if (net == NULL) {
        st = onednn_net_begin(nets, batch->shape, threads, N_BUFS, &net);
        if (st == LOOM_OK && (st = build(b, net)) != LOOM_OK)
            onednn_net_abandon(net);
        if (st == LOOM_OK)
            st = onednn_net_end(nets, net);
    }
    if (st == LOOM_OK)
        st = onednn_net_run(net, loom_data(batch), NULL);
    /* each map into a tensor of the forward's own (core.cast: a copy) */
    const char *f32 = "f32";
    const loom_named_attr attrs[1] = { rcnn_string_attr("dtype", f32) };
    for (int l = 0; l < rcnn_backbone_levels(b) && st == LOOM_OK; l++) {
        int64_t dims[4];
        const float *data = onednn_net_map(net, BUF_MAP0 + l, dims);
        loom_tensor view = model_view(data, 4, dims);
        const loom_tensor *in[1] = { &view };
        st = rcnn_call_op(call, b->copy, in, 1, &x[l], 1, attrs, 1);
    }
    return st;
}
