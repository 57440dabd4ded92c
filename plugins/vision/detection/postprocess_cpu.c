/* SPDX-License-Identifier: BSD-3-Clause */
/*
** postprocess_cpu.c - vision.rcnn_postprocess_boxes: the boxes part of
** GeneralizedRCNNTransform.postprocess (resize_boxes). The ratios are
** float32 quotients of the float32 sizes (torch.tensor(s, float32) divided)
** and each coordinate one float32 product, so the result is torchvision's
** exactly.
*/
#include "detection.h"

loom_status vision_rcnn_postprocess_boxes_cpu(loom_call *call)
{
    const loom_attr_value *from = &call->attrs[PK_ATTR(rcnn_postprocess, image_size)];
    const loom_attr_value *to = &call->attrs[PK_ATTR(rcnn_postprocess, original_size)];
    if (from->count != 2 || to->count != 2)
        return pk_host->fail(LOOM_EINVAL,
                             "vision.rcnn_postprocess_boxes: image_size has %lld values and original_size %lld; "
                             "each is (H, W)",
                             (long long)from->count, (long long)to->count);
    const loom_tensor *boxes = call->inputs[0];
    if (boxes->shape[1] != 4)
        return pk_host->fail(LOOM_EINVAL, "vision.rcnn_postprocess_boxes: boxes is [%lld, %lld]; expected [N, 4]",
                             (long long)boxes->shape[0], (long long)boxes->shape[1]);
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, boxes->shape, &out);
    if (st != LOOM_OK)
        return st;
    const float rh = (float)to->u.ints[0] / (float)from->u.ints[0];
    const float rw = (float)to->u.ints[1] / (float)from->u.ints[1];
    const float *src = loom_data(boxes);
    float *dst = loom_data(out);
    for (int64_t i = 0; i < boxes->shape[0]; i++) {
        dst[4 * i] = src[4 * i] * rw;
        dst[4 * i + 1] = src[4 * i + 1] * rh;
        dst[4 * i + 2] = src[4 * i + 2] * rw;
        dst[4 * i + 3] = src[4 * i + 3] * rh;
    }
    return LOOM_OK;
}
