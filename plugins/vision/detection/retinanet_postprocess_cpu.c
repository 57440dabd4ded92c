/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet_postprocess_cpu.c - vision.retinanet_postprocess: torchvision's
** RetinaNet.postprocess_detections, in its order. Per image, per level
** (num_anchors_per_level splits the anchors): the scores are
** sigmoid(cls_logits) over the level's [a, K] (anchor, class) pairs in
** row-major order; those > score_thresh go on; the best topk_candidates of
** them by decreasing score (torch.topk; equal scores by flat index, an order
** torch.topk does not promise); each pair's anchor is index / K, its label
** index % K; its box is BoxCoder.decode_single of the anchor's codes
** (box_decode.c) clipped to the image. The levels' candidates, level after
** level, go to vision.batched_nms per label (dispatched), and the first
** detections_per_img are kept. Rows come out image after image, each by
** decreasing score.
** sigmoid is 1 / (1 + expf(-x)) in f32 (PyTorch: Sleef's expf, within 1
** ulp); exp in the decode likewise (box_decode.c).
** Cost: the sigmoid is evaluated only for logits above logit(score_thresh)
** less a margin (1e-3, far wider than the f32 sigmoid's rounding), so the
** same pairs pass as if every one were evaluated; the level's best k are
** found by a quickselect, then only they are sorted.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "retinanet.h"

#define OP "vision.retinanet_postprocess"

typedef struct rp_cand {
    float score;
    int64_t index;                  /* a * K + k within the level */
} rp_cand;

/* Decreasing score, equal ones by index (the scores are never NaN here:
** NaN > score_thresh is false). */
static int by_score(const void *a, const void *b)
{
    const rp_cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Moves the k best of c pairs (by_score's order) to the front, in any order. */
static void select_best(rp_cand *p, int64_t c, int64_t k)
{
    int64_t lo = 0, hi = c - 1;
    while (lo < hi && k > lo && k <= hi) {
        const rp_cand pivot = p[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (by_score(&p[i], &pivot) < 0)
                i++;
            while (by_score(&p[j], &pivot) > 0)
                j--;
            if (i <= j) {
                const rp_cand t = p[i];
                p[i++] = p[j];
                p[j--] = t;
            }
        }
        if (k <= j + 1)
            hi = j;
        else if (k > i)
            lo = i;
        else
            return;
    }
}

static loom_status check_inputs(const loom_call *call, int64_t *levels)
{
    const loom_tensor *cls = call->inputs[RP_CLS_LOGITS], *reg = call->inputs[RP_BBOX_REGRESSION];
    const loom_tensor *anchors = call->inputs[RP_ANCHORS], *sizes = call->inputs[RP_IMAGE_SIZES];
    const int64_t n = cls->shape[0], a = cls->shape[1], k = cls->shape[2];
    for (int i = 0; i < 4; i++)
        if (!loom_is_contiguous(call->inputs[i]))
            return pk_host->fail(LOOM_EINVAL, OP ": '%s' is not contiguous: pass a compact row-major tensor",
                                 call->schema->inputs[i].name);
    if (k < 1)
        return pk_host->fail(LOOM_EINVAL, OP ": cls_logits [%lld, %lld, %lld] has no classes", (long long)n,
                             (long long)a, (long long)k);
    if (reg->shape[0] != n || reg->shape[1] != a || reg->shape[2] != 4)
        return pk_host->fail(LOOM_EINVAL, OP ": bbox_regression is [%lld, %lld, %lld]; expected [%lld, %lld, 4], "
                             "the N and A of cls_logits", (long long)reg->shape[0], (long long)reg->shape[1],
                             (long long)reg->shape[2], (long long)n, (long long)a);
    if (anchors->shape[0] != a || anchors->shape[1] != 4)
        return pk_host->fail(LOOM_EINVAL, OP ": anchors is [%lld, %lld]; expected [%lld, 4], the A of cls_logits",
                             (long long)anchors->shape[0], (long long)anchors->shape[1], (long long)a);
    if (sizes->shape[0] != n || sizes->shape[1] != 2)
        return pk_host->fail(LOOM_EINVAL, OP ": image_sizes is [%lld, %lld]; expected [%lld, 2]",
                             (long long)sizes->shape[0], (long long)sizes->shape[1], (long long)n);
    const loom_attr_value *per = &call->attrs[PK_ATTR(retinanet_postprocess, num_anchors_per_level)];
    int64_t total = 0;
    for (int64_t l = 0; l < per->count; l++)
        total += per->u.ints[l];
    if (per->count < 1 || total != a)
        return pk_host->fail(LOOM_EINVAL, OP ": num_anchors_per_level (%lld levels) sums to %lld; cls_logits has "
                             "A = %lld anchors", (long long)per->count, (long long)total, (long long)a);
    const int64_t *hw = loom_data(sizes);
    for (int64_t i = 0; i < n; i++)
        if (hw[2 * i] < 1 || hw[2 * i + 1] < 1)
            return pk_host->fail(LOOM_EINVAL, OP ": image_sizes row %lld is (%lld, %lld); sides must be >= 1",
                                 (long long)i, (long long)hw[2 * i], (long long)hw[2 * i + 1]);
    *levels = per->count;
    return LOOM_OK;
}

loom_status vision_retinanet_postprocess_cpu(loom_call *call)
{
    int64_t levels = 0;
    loom_status st = check_inputs(call, &levels);
    if (st != LOOM_OK)
        return st;
    det_box_coder coder;
    if ((st = det_box_coder_from_attrs(OP, call->attrs, PK_ATTR(retinanet_postprocess, weights), det_rpn_weights,
                                       &coder)) != LOOM_OK)
        return st;
    const loom_tensor *cls_t = call->inputs[RP_CLS_LOGITS];
    const int64_t n = cls_t->shape[0], a = cls_t->shape[1], k = cls_t->shape[2];
    const float *cls = loom_data(cls_t), *reg = loom_data(call->inputs[RP_BBOX_REGRESSION]);
    const float *anchors = loom_data(call->inputs[RP_ANCHORS]);
    const int64_t *sizes = loom_data(call->inputs[RP_IMAGE_SIZES]);
    const int64_t *per_level = call->attrs[PK_ATTR(retinanet_postprocess, num_anchors_per_level)].u.ints;
    const float score_thresh = (float)call->attrs[PK_ATTR(retinanet_postprocess, score_thresh)].u.f;
    const double nms_thresh = call->attrs[PK_ATTR(retinanet_postprocess, nms_thresh)].u.f;
    const int64_t per_img = call->attrs[PK_ATTR(retinanet_postprocess, detections_per_img)].u.i;
    const int64_t topk = call->attrs[PK_ATTR(retinanet_postprocess, topk_candidates)].u.i;
    /* sigmoid(x) > t needs x > log(t / (1 - t)); below that less a margin no pair can pass (t <= 0: all
    ** may; t >= 1: none can, but -inf keeps the exact test in charge) */
    const double t = score_thresh;
    const float logit_floor = t > 0.0 && t < 1.0 ? (float)(log(t / (1.0 - t)) - 1e-3) : -INFINITY;
    int64_t most_level = 0, cand_max = 0;
    for (int64_t l = 0; l < levels; l++) {
        most_level = per_level[l] > most_level ? per_level[l] : most_level;
        cand_max += per_level[l] * k < topk ? per_level[l] * k : topk;
    }
    const int64_t kept_max = n * (per_img < cand_max ? per_img : cand_max) + 1;
    rp_cand *pairs = pk_host->scratch(call->ctx, (size_t)(most_level * k + 1) * sizeof *pairs);
    float *cb = pk_host->scratch(call->ctx, (size_t)(cand_max + 1) * 4 * sizeof(float));
    float *cs = pk_host->scratch(call->ctx, (size_t)(cand_max + 1) * sizeof(float));
    int64_t *cl = pk_host->scratch(call->ctx, (size_t)(cand_max + 1) * sizeof(int64_t));
    float *kept = pk_host->scratch(call->ctx, (size_t)kept_max * 5 * sizeof(float));
    int64_t *labels = pk_host->scratch(call->ctx, (size_t)kept_max * sizeof(int64_t));
    int64_t *offsets = pk_host->scratch(call->ctx, (size_t)(n + 1) * sizeof(int64_t));
    if (pairs == NULL || cb == NULL || cs == NULL || cl == NULL || kept == NULL || labels == NULL || offsets == NULL)
        return LOOM_ENOMEM;
    int64_t total = 0;
    offsets[0] = 0;
    for (int64_t img = 0; img < n; img++) {
        const float h = (float)sizes[2 * img], w = (float)sizes[2 * img + 1];
        int64_t m = 0, start = 0;
        for (int64_t l = 0; l < levels; start += per_level[l], l++) {
            const float *logits = cls + (img * a + start) * k;
            int64_t c = 0;
            for (int64_t i = 0; i < per_level[l] * k; i++) {
                if (!(logits[i] > logit_floor))
                    continue;
                const float s = 1.0f / (1.0f + expf(-logits[i]));
                if (s > score_thresh)
                    pairs[c++] = (rp_cand){ s, i };
            }
            const int64_t take = c < topk ? c : topk;
            if (take < c)
                select_best(pairs, c, take);
            qsort(pairs, (size_t)take, sizeof *pairs, by_score);
            for (int64_t j = 0; j < take; j++, m++) {
                const int64_t anchor = start + pairs[j].index / k;
                det_box_decode(&coder, reg + (img * a + anchor) * 4, anchors + anchor * 4, cb + m * 4);
                det_clip_box(cb + m * 4, h, w);
                cs[m] = pairs[j].score;
                cl[m] = pairs[j].index % k;
            }
        }
        if ((st = det_keep_after_nms(call, m, cb, cs, cl, nms_thresh, per_img, kept, labels, &total)) != LOOM_OK)
            return st;
        offsets[img + 1] = total;
    }
    return det_write_detections(call, total, kept, labels, offsets, n);
}
