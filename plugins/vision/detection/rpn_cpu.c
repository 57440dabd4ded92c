/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rpn_cpu.c - vision.rpn_proposals: what torchvision's
** RegionProposalNetwork does after its head, in test mode: decode the box
** codes against the anchors (BoxCoder with the op's weights), then
** filter_proposals per image:
**   1. each level's best min(pre_nms_top_n, anchors of the level) anchors by
**      objectness (torch.topk: decreasing, NaN first; equal logits by index,
**      an order torch.topk does not promise): a quickselect of the best,
**      then a sort of those alone;
**   2. scores = sigmoid(objectness) = 1 / (1 + exp(-x)), as torch's kernel;
**   3. clip_boxes_to_image to the image's (h, w);
**   4. remove_small_boxes(min_size), then scores >= score_thresh (both
**      compared in float32, as torch compares a float32 tensor with a
**      Python float);
**   5. batched_nms per level (vision.batched_nms, dispatched: torchvision's
**      two paths and its order), the first post_nms_top_n kept.
** Rows come out image after image, each image's by decreasing score.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detection.h"

/* A candidate of one level: its logit and anchor index. */
typedef struct rpn_candidate {
    float logit;
    int64_t index;
} rpn_candidate;

/* Decreasing logit with NaN first (torch.topk's order), equal ones by index. */
static int by_logit(const void *pa, const void *pb)
{
    const rpn_candidate *a = pa, *b = pb;
    const int na = isnan(a->logit), nb = isnan(b->logit);
    if (na != nb)
        return na ? -1 : 1;
    if (!na && a->logit != b->logit)
        return a->logit > b->logit ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Rearranges c[0..n) so that its first k are the k first in by_logit's
** (total) order, in any order: quickselect with a median-of-three pivot,
** so the level's best k cost O(n) before their O(k log k) sort. */
static void select_best(rpn_candidate *c, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1;
    while (hi > lo && k > lo && k <= hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (by_logit(&c[mid], &c[lo]) < 0) {
            const rpn_candidate t = c[mid]; c[mid] = c[lo]; c[lo] = t;
        }
        if (by_logit(&c[hi], &c[lo]) < 0) {
            const rpn_candidate t = c[hi]; c[hi] = c[lo]; c[lo] = t;
        }
        if (by_logit(&c[hi], &c[mid]) < 0) {
            const rpn_candidate t = c[hi]; c[hi] = c[mid]; c[mid] = t;
        }
        const rpn_candidate pivot = c[mid];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (by_logit(&c[i], &pivot) < 0)
                i++;
            while (by_logit(&pivot, &c[j]) < 0)
                j--;
            if (i <= j) {
                const rpn_candidate t = c[i]; c[i] = c[j]; c[j] = t;
                i++;
                j--;
            }
        }
        /* [lo, j] <= pivot <= [i, hi]; the k-th boundary lies in one part */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return;
    }
}

/* What one call works with. */
typedef struct rpn_run {
    loom_call *call;
    det_box_coder coder;
    const float *logits, *deltas, *anchors;
    const int64_t *levels, *image_sizes;
    int64_t n_levels, n_anchors, pre, post;
    double nms_thresh;          /* as torchvision passes it: a double */
    float score_thresh, min_size;
    rpn_candidate *cand;     /* [anchors of the largest level] */
    float *boxes, *scores;   /* [candidates of one image] */
    int64_t *lvl;
} rpn_run;

/* Steps 1 to 4 for image b: the surviving candidates into r->boxes,
** r->scores, r->lvl; returns their count. */
static int64_t image_candidates(rpn_run *r, int64_t b)
{
    const float *logits = r->logits + b * r->n_anchors, *deltas = r->deltas + b * r->n_anchors * 4;
    const float h = (float)r->image_sizes[2 * b], w = (float)r->image_sizes[2 * b + 1];
    int64_t m = 0, start = 0;
    for (int64_t l = 0; l < r->n_levels; start += r->levels[l], l++) {
        const int64_t n = r->levels[l], k = n < r->pre ? n : r->pre;
        for (int64_t i = 0; i < n; i++)
            r->cand[i] = (rpn_candidate){ logits[start + i], start + i };
        if (k < n)
            select_best(r->cand, n, k);
        qsort(r->cand, (size_t)k, sizeof *r->cand, by_logit);
        for (int64_t i = 0; i < k; i++) {
            const int64_t a = r->cand[i].index;
            float box[4];
            det_box_decode(&r->coder, deltas + a * 4, r->anchors + a * 4, box);
            det_clip_box(box, h, w);
            const float score = 1.0f / (1.0f + expf(-r->cand[i].logit));
            if (!(box[2] - box[0] >= r->min_size && box[3] - box[1] >= r->min_size) || !(score >= r->score_thresh))
                continue;
            memcpy(r->boxes + m * 4, box, sizeof box);
            r->scores[m] = score;
            r->lvl[m] = l;
            m++;
        }
    }
    return m;
}

static loom_status check_inputs(const loom_call *call, int64_t *n_levels)
{
    const loom_tensor *obj = call->inputs[0], *deltas = call->inputs[1], *anchors = call->inputs[2];
    const loom_tensor *sizes = call->inputs[3];
    const int64_t b = obj->shape[0], a = obj->shape[1];
    if (deltas->shape[0] != b || deltas->shape[1] != a || deltas->shape[2] != 4)
        return pk_host->fail(LOOM_EINVAL, "vision.rpn_proposals: pred_bbox_deltas is [%lld, %lld, %lld]; expected "
                             "[%lld, %lld, 4] for objectness [%lld, %lld]",
                             (long long)deltas->shape[0], (long long)deltas->shape[1], (long long)deltas->shape[2],
                             (long long)b, (long long)a, (long long)b, (long long)a);
    if (anchors->shape[0] != a || anchors->shape[1] != 4)
        return pk_host->fail(LOOM_EINVAL, "vision.rpn_proposals: anchors is [%lld, %lld]; expected [%lld, 4]",
                             (long long)anchors->shape[0], (long long)anchors->shape[1], (long long)a);
    if (sizes->shape[0] != b || sizes->shape[1] != 2)
        return pk_host->fail(LOOM_EINVAL, "vision.rpn_proposals: image_sizes is [%lld, %lld]; expected [%lld, 2]",
                             (long long)sizes->shape[0], (long long)sizes->shape[1], (long long)b);
    const loom_attr_value *lv = &call->attrs[PK_ATTR(rpn, num_anchors_per_level)];
    int64_t sum = 0;
    for (int64_t l = 0; l < lv->count; l++) {
        if (lv->u.ints[l] > a - sum)
            return pk_host->fail(LOOM_EINVAL, "vision.rpn_proposals: num_anchors_per_level sums past the %lld anchors "
                                 "at level %lld", (long long)a, (long long)l);
        sum += lv->u.ints[l];
    }
    if (sum != a || lv->count < 1)
        return pk_host->fail(LOOM_EINVAL, "vision.rpn_proposals: num_anchors_per_level (%lld levels) sums to %lld; "
                             "objectness has %lld anchors", (long long)lv->count, (long long)sum, (long long)a);
    const int64_t *s = loom_data(sizes);
    for (int64_t i = 0; i < b; i++)
        if (s[2 * i] < 0 || s[2 * i + 1] < 0)
            return pk_host->fail(LOOM_EINVAL, "vision.rpn_proposals: image %lld's size is %lld x %lld", (long long)i,
                                 (long long)s[2 * i], (long long)s[2 * i + 1]);
    *n_levels = lv->count;
    return LOOM_OK;
}

loom_status vision_rpn_proposals_cpu(loom_call *call)
{
    rpn_run r = { .call = call };
    loom_status st = check_inputs(call, &r.n_levels);
    if (st != LOOM_OK)
        return st;
    if ((st = det_box_coder_from_attrs("vision.rpn_proposals", call->attrs, PK_ATTR(rpn, weights), det_rpn_weights,
                                       &r.coder)))
        return st;
    const int64_t b = call->inputs[0]->shape[0];
    r.n_anchors = call->inputs[0]->shape[1];
    r.logits = loom_data(call->inputs[0]);
    r.deltas = loom_data(call->inputs[1]);
    r.anchors = loom_data(call->inputs[2]);
    r.image_sizes = loom_data(call->inputs[3]);
    r.levels = call->attrs[PK_ATTR(rpn, num_anchors_per_level)].u.ints;
    r.pre = call->attrs[PK_ATTR(rpn, pre_nms_top_n)].u.i;
    r.post = call->attrs[PK_ATTR(rpn, post_nms_top_n)].u.i;
    r.nms_thresh = call->attrs[PK_ATTR(rpn, nms_thresh)].u.f;
    r.score_thresh = (float)call->attrs[PK_ATTR(rpn, score_thresh)].u.f;
    r.min_size = (float)call->attrs[PK_ATTR(rpn, min_size)].u.f;
    int64_t largest = 0, per_image = 0;
    for (int64_t l = 0; l < r.n_levels; l++) {
        largest = r.levels[l] > largest ? r.levels[l] : largest;
        per_image += r.levels[l] < r.pre ? r.levels[l] : r.pre;
    }
    const int64_t kept_max = per_image < r.post ? per_image : r.post;
    r.cand = pk_host->scratch(call->ctx, (size_t)(largest + 1) * sizeof *r.cand);
    r.boxes = pk_host->scratch(call->ctx, (size_t)(per_image + 1) * 4 * sizeof(float));
    r.scores = pk_host->scratch(call->ctx, (size_t)(per_image + 1) * sizeof(float));
    r.lvl = pk_host->scratch(call->ctx, (size_t)(per_image + 1) * sizeof(int64_t));
    float *all = pk_host->scratch(call->ctx, (size_t)(b * kept_max + 1) * 5 * sizeof(float));
    int64_t *offsets = pk_host->scratch(call->ctx, (size_t)(b + 1) * sizeof(int64_t));
    if (r.cand == NULL || r.boxes == NULL || r.scores == NULL || r.lvl == NULL || all == NULL || offsets == NULL)
        return LOOM_ENOMEM;
    int64_t total = 0;
    offsets[0] = 0;
    for (int64_t i = 0; i < b; i++) {
        const int64_t m = image_candidates(&r, i);
        loom_tensor *keep = NULL;
        if ((st = det_batched_nms(call, m, r.boxes, r.scores, r.lvl, r.nms_thresh, &keep)) != LOOM_OK)
            return st;
        const int64_t *k = loom_data(keep);
        const int64_t n = keep->shape[0] < r.post ? keep->shape[0] : r.post;
        for (int64_t j = 0; j < n; j++, total++) {
            memcpy(all + total * 5, r.boxes + k[j] * 4, 4 * sizeof(float));
            all[total * 5 + 4] = r.scores[k[j]];
        }
        pk_host->tensor_free(keep);
        offsets[i + 1] = total;
    }
    loom_tensor *out_boxes, *out_scores, *out_offsets;
    const int64_t box_shape[2] = { total, 4 }, score_shape[1] = { total }, off_shape[1] = { b + 1 };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, box_shape, &out_boxes))
        || (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 1, score_shape, &out_scores))
        || (st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, off_shape, &out_offsets)))
        return st;
    float *ob = loom_data(out_boxes), *os = loom_data(out_scores);
    for (int64_t j = 0; j < total; j++) {
        memcpy(ob + j * 4, all + j * 5, 4 * sizeof(float));
        os[j] = all[j * 5 + 4];
    }
    memcpy(loom_data(out_offsets), offsets, (size_t)(b + 1) * sizeof(int64_t));
    return LOOM_OK;
}
