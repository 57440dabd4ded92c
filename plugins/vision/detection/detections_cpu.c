/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detections_cpu.c - vision.rcnn_postprocess_detections: torchvision's
** RoIHeads.postprocess_detections. Per image, for each proposal: the class
** scores are softmax(class_logits) (max subtracted, exp, then times 1/sum,
** in float32 as torch's kernel), the class boxes BoxCoder.decode of
** box_regression (box_decode.c) clipped to the image; class 0 (background)
** is dropped; the (proposal, class) pairs in that order with score >
** score_thresh, then both sides >= 1e-2, go to vision.batched_nms per class
** (dispatched); the first detections_per_img are kept. Labels are the class
** indices. Rows come out image after image, each by decreasing score.
** The exp of softmax and of the decode is glibc's expf (PyTorch: Sleef,
** within 1 ulp); the sum of the exps runs in class order (PyTorch's vector
** reduction in lanes), a few ulps apart.
*/
#include <math.h>
#include <string.h>

#include "detection.h"

static loom_status check_inputs(const loom_call *call, int64_t *n_images)
{
    const loom_tensor *logits = call->inputs[0], *reg = call->inputs[1], *props = call->inputs[2];
    const loom_tensor *sizes = call->inputs[4];
    const int64_t k = logits->shape[0], nc = logits->shape[1], b = call->inputs[3]->shape[0] - 1;
    if (nc < 1 || reg->shape[0] != k || reg->shape[1] != 4 * nc || props->shape[0] != k || props->shape[1] != 4)
        return pk_host->fail(LOOM_EINVAL,
                             "vision.rcnn_postprocess_detections: class_logits [%lld, %lld], box_regression [%lld, "
                             "%lld], proposals [%lld, %lld]; expected [K, C >= 1], [K, 4 C], [K, 4]",
                             (long long)k, (long long)nc, (long long)reg->shape[0], (long long)reg->shape[1],
                             (long long)props->shape[0], (long long)props->shape[1]);
    if (b < 1)
        return pk_host->fail(LOOM_EINVAL, "vision.rcnn_postprocess_detections: no images (proposals_offsets has %lld "
                             "entries)", (long long)call->inputs[3]->shape[0]);
    if (sizes->shape[0] != b || sizes->shape[1] != 2)
        return pk_host->fail(LOOM_EINVAL, "vision.rcnn_postprocess_detections: image_sizes is [%lld, %lld]; expected "
                             "[%lld, 2]", (long long)sizes->shape[0], (long long)sizes->shape[1], (long long)b);
    const int64_t *off = loom_data(call->inputs[3]);
    if (off[0] != 0 || off[b] != k)
        return pk_host->fail(LOOM_EINVAL, "vision.rcnn_postprocess_detections: proposals_offsets run from %lld to "
                             "%lld; they must run from 0 to the %lld proposals", (long long)off[0], (long long)off[b],
                             (long long)k);
    for (int64_t i = 0; i < b; i++)
        if (off[i + 1] < off[i])
            return pk_host->fail(LOOM_EINVAL, "vision.rcnn_postprocess_detections: proposals_offsets decrease at "
                                 "image %lld", (long long)i);
    *n_images = b;
    return LOOM_OK;
}

/* softmax of n logits into p */
static void softmax_row(const float *x, int64_t n, float *p)
{
    float m = x[0];
    for (int64_t j = 1; j < n; j++)
        m = x[j] > m || isnan(x[j]) ? x[j] : m;
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        p[j] = expf(x[j] - m);
        sum += p[j];
    }
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < n; j++)
        p[j] *= inv;
}

loom_status vision_rcnn_postprocess_detections_cpu(loom_call *call)
{
    int64_t b = 0;
    loom_status st = check_inputs(call, &b);
    if (st != LOOM_OK)
        return st;
    det_box_coder coder;
    if ((st = det_box_coder_from_attrs("vision.rcnn_postprocess_detections", call->attrs,
                                       PK_ATTR(detections, weights), det_roi_weights, &coder)) != LOOM_OK)
        return st;
    const float *logits = loom_data(call->inputs[0]), *reg = loom_data(call->inputs[1]);
    const float *props = loom_data(call->inputs[2]);
    const int64_t *off = loom_data(call->inputs[3]), *sizes = loom_data(call->inputs[4]);
    const int64_t nc = call->inputs[0]->shape[1];
    const float score_thresh = (float)call->attrs[PK_ATTR(detections, score_thresh)].u.f;
    const double nms_thresh = call->attrs[PK_ATTR(detections, nms_thresh)].u.f;
    const int64_t per_img = call->attrs[PK_ATTR(detections, detections_per_img)].u.i;
    int64_t most = 0;
    for (int64_t i = 0; i < b; i++)
        most = off[i + 1] - off[i] > most ? off[i + 1] - off[i] : most;
    const int64_t cand_max = most * (nc - 1) + 1, kept_max = b * (per_img < cand_max ? per_img : cand_max) + 1;
    float *p = pk_host->scratch(call->ctx, (size_t)nc * sizeof(float));
    float *cb = pk_host->scratch(call->ctx, (size_t)cand_max * 4 * sizeof(float));
    float *cs = pk_host->scratch(call->ctx, (size_t)cand_max * sizeof(float));
    int64_t *cl = pk_host->scratch(call->ctx, (size_t)cand_max * sizeof(int64_t));
    float *all = pk_host->scratch(call->ctx, (size_t)kept_max * 5 * sizeof(float));
    int64_t *labels = pk_host->scratch(call->ctx, (size_t)kept_max * sizeof(int64_t));
    int64_t *offsets = pk_host->scratch(call->ctx, (size_t)(b + 1) * sizeof(int64_t));
    if (p == NULL || cb == NULL || cs == NULL || cl == NULL || all == NULL || labels == NULL || offsets == NULL)
        return LOOM_ENOMEM;
    int64_t total = 0;
    offsets[0] = 0;
    for (int64_t img = 0; img < b; img++) {
        const float h = (float)sizes[2 * img], w = (float)sizes[2 * img + 1];
        int64_t m = 0;
        for (int64_t i = off[img]; i < off[img + 1]; i++) {
            softmax_row(logits + i * nc, nc, p);
            for (int64_t j = 1; j < nc; j++) {
                float box[4];
                det_box_decode(&coder, reg + (i * nc + j) * 4, props + i * 4, box);
                det_clip_box(box, h, w);
                if (!(p[j] > score_thresh) || !(box[2] - box[0] >= 1e-2f && box[3] - box[1] >= 1e-2f))
                    continue;
                memcpy(cb + m * 4, box, sizeof box);
                cs[m] = p[j];
                cl[m++] = j;
            }
        }
        if ((st = det_keep_after_nms(call, m, cb, cs, cl, nms_thresh, per_img, all, labels, &total)) != LOOM_OK)
            return st;
        offsets[img + 1] = total;
    }
    return det_write_detections(call, total, all, labels, offsets, b);
}
