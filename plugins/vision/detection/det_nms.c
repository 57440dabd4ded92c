/* SPDX-License-Identifier: BSD-3-Clause */
/*
** det_nms.c - the one nms of the detection filters: vision.batched_nms,
** dispatched through the host (so its two paths and its order are
** torchvision's, and LOOM_VERBOSE=2 names its kernel), on buffers the
** caller owns, and what the filters do with its result.
*/
#include <string.h>

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

loom_status det_keep_after_nms(loom_call *call, int64_t m, const float *cb, const float *cs, const int64_t *cl,
                               double iou_threshold, int64_t per_img, float *kept, int64_t *labels, int64_t *total)
{
    loom_tensor *keep = NULL;
    loom_status st = det_batched_nms(call, m, cb, cs, cl, iou_threshold, &keep);
    if (st != LOOM_OK)
        return st;
    const int64_t *kp = loom_data(keep);
    const int64_t take = keep->shape[0] < per_img ? keep->shape[0] : per_img;
    int64_t t = *total;
    for (int64_t j = 0; j < take; j++, t++) {
        memcpy(kept + t * 5, cb + kp[j] * 4, 4 * sizeof(float));
        kept[t * 5 + 4] = cs[kp[j]];
        labels[t] = cl[kp[j]];
    }
    pk_host->tensor_free(keep);
    *total = t;
    return LOOM_OK;
}

loom_status det_write_detections(loom_call *call, int64_t total, const float *kept, const int64_t *labels,
                                 const int64_t *offsets, int64_t n_images)
{
    loom_tensor *ob, *os, *ol, *oo;
    const int64_t box_shape[2] = { total, 4 }, vec[1] = { total }, off_shape[1] = { n_images + 1 };
    loom_status st;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, box_shape, &ob))
        || (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 1, vec, &os))
        || (st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, vec, &ol))
        || (st = pk_host->alloc_output(call, 3, LOOM_DTYPE_I64, 1, off_shape, &oo)))
        return st;
    float *pb = loom_data(ob), *ps = loom_data(os);
    for (int64_t j = 0; j < total; j++) {
        memcpy(pb + j * 4, kept + j * 5, 4 * sizeof(float));
        ps[j] = kept[j * 5 + 4];
    }
    if (total > 0)
        memcpy(loom_data(ol), labels, (size_t)total * sizeof(int64_t));
    memcpy(loom_data(oo), offsets, (size_t)(n_images + 1) * sizeof(int64_t));
    return LOOM_OK;
}
