/* SPDX-License-Identifier: BSD-3-Clause */
/*
** det_nms.c - the one nms of the detection filters: vision.batched_nms,
** dispatched through the host (so its two paths and its order are
** torchvision's, and LOOM_VERBOSE=2 names its kernel), on buffers the
** caller owns.
*/
#include "detection.h"

loom_status det_batched_nms(loom_call *call, int64_t m, const float *boxes, const float *scores,
                            const int64_t *idxs, double iou_threshold, loom_tensor **keep)
{
    const loom_op *op = pk_host->op_find("vision.batched_nms");
    *keep = NULL;
    if (op == NULL)
        return pk_host->fail(LOOM_ENOTSUP, "vision.batched_nms is not registered; the detection filters need it");
    int64_t box_shape[2] = { m, 4 }, vec_shape[1] = { m };
    const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
    loom_tensor b = { .data = m ? (void *)boxes : NULL, .device = cpu, .ndim = 2, .dtype = { LOOM_DL_FLOAT, 32, 1 },
                      .shape = box_shape };
    loom_tensor s = { .data = m ? (void *)scores : NULL, .device = cpu, .ndim = 1, .dtype = { LOOM_DL_FLOAT, 32, 1 },
                      .shape = vec_shape };
    loom_tensor i = { .data = m ? (void *)idxs : NULL, .device = cpu, .ndim = 1, .dtype = { LOOM_DL_INT, 64, 1 },
                      .shape = vec_shape };
    const loom_tensor *ins[3] = { &b, &s, &i };
    loom_tensor *outs[1] = { NULL };
    const loom_named_attr attrs[1] = {
        { "iou_threshold", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = iou_threshold } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 1, .attrs = attrs };
    loom_status st = pk_host->op_call(call->ctx, &oc);
    *keep = outs[0];
    return st;
}
