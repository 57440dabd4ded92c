/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vision_detect.c - `loom demo detect`: the post-processing of a
** detector: batched NMS over clustered candidate boxes, a check of what NMS
** guarantees with box_iou, RoIAlign of the survivors on an FPN-like
** feature map.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

DEMO_DEFINE("detect", 50, "vision.batched_nms,vision.box_iou,vision.roi_align",
            "detector post-processing: batched NMS, IoU check, RoIAlign");

#define N_OBJECTS 24
#define PER_OBJECT 80
#define N_CAND (N_OBJECTS * PER_OBJECT)
#define N_CLASSES 5

/* Candidates the way a detector's head emits them: many jittered boxes
** around each object, with scores, in one of N_CLASSES classes. */
static void make_candidates(float *boxes, float *scores, int64_t *classes)
{
    for (int o = 0; o < N_OBJECTS; o++) {
        float cx = 100.0f + 440.0f * (demo_random() + 1.0f), cy = 100.0f + 300.0f * (demo_random() + 1.0f);
        float w = 60.0f + 40.0f * demo_random(), h = 60.0f + 40.0f * demo_random();
        int64_t cls = o % N_CLASSES;
        for (int j = 0; j < PER_OBJECT; j++) {
            int i = o * PER_OBJECT + j;
            float jx = 12.0f * demo_random(), jy = 12.0f * demo_random();
            float jw = 1.0f + 0.15f * demo_random(), jh = 1.0f + 0.15f * demo_random();
            boxes[4 * i + 0] = cx + jx - 0.5f * w * jw;
            boxes[4 * i + 1] = cy + jy - 0.5f * h * jh;
            boxes[4 * i + 2] = cx + jx + 0.5f * w * jw;
            boxes[4 * i + 3] = cy + jy + 0.5f * h * jh;
            scores[i] = 0.5f + 0.5f * demo_random();
            classes[i] = cls;
        }
    }
}

static int run1(const char *op, const loom_tensor *const *in, int32_t n, loom_attrs *attrs, loom_tensor **out,
                const char *label)
{
    if (loom_run(op, in, n, attrs, out, 1, NULL) != LOOM_OK)
        return demo_fail();
    demo_record(label);
    return DEMO_OK;
}

int demo_run(void)
{
    const int64_t bshape[2] = { N_CAND, 4 }, sshape[1] = { N_CAND };
    const int64_t fshape[4] = { 1, 64, 200, 272 };
    loom_tensor *boxes = demo_tensor(LOOM_DTYPE_F32, 2, bshape), *scores = demo_tensor(LOOM_DTYPE_F32, 1, sshape);
    loom_tensor *classes = demo_tensor(LOOM_DTYPE_I64, 1, sshape), *feat = demo_tensor(LOOM_DTYPE_F32, 4, fshape);
    loom_tensor *keep = NULL, *kept = NULL, *iou = NULL, *rois = NULL, *pooled = NULL;
    loom_attrs *attrs = NULL;
    int rc = boxes && scores && classes && feat && loom_attrs_new(&attrs) == LOOM_OK ? DEMO_OK : DEMO_FAIL;

    if (rc == DEMO_OK) {
        make_candidates(loom_data(boxes), loom_data(scores), loom_data(classes));
        float *f = loom_data(feat);
        for (int64_t i = 0; i < loom_numel(feat); i++)
            f[i] = demo_random();
        printf("  %d candidate boxes around %d objects of %d classes in an 800 x 1088 image\n",
               N_CAND, N_OBJECTS, N_CLASSES);
        loom_attrs_set_float(attrs, "iou_threshold", 0.5);
        const loom_tensor *in[3] = { boxes, scores, classes };
        /* one untimed call first: this process's first call also starts the thread pool */
        if (loom_run("vision.batched_nms", in, 3, attrs, &keep, 1, NULL) != LOOM_OK)
            rc = demo_fail();
        loom_tensor_free(keep);
        keep = NULL;
        double t0 = demo_now();
        if (rc == DEMO_OK)
            rc = run1("vision.batched_nms", in, 3, attrs, &keep, "batched_nms");
        double dt = demo_now() - t0;
        if (rc == DEMO_OK)
            printf("  batched_nms(iou_threshold=0.5): %lld boxes kept in %.3f ms\n",
                   (long long)loom_numel(keep), dt * 1e3);
    }
    int64_t k = rc == DEMO_OK ? loom_numel(keep) : 0;
    if (rc == DEMO_OK) {
        const int64_t kshape[2] = { k, 4 }, rshape[2] = { k, 5 };
        kept = demo_tensor(LOOM_DTYPE_F32, 2, kshape);
        rois = demo_tensor(LOOM_DTYPE_F32, 2, rshape);
        rc = kept && rois ? DEMO_OK : DEMO_FAIL;
    }
    if (rc == DEMO_OK) {
        const int64_t *idx = loom_data(keep);
        const float *b = loom_data(boxes), *s = loom_data(scores);
        const int64_t *c = loom_data(classes);
        float *kb = loom_data(kept), *r = loom_data(rois);
        for (int64_t i = 0; i < k; i++) {
            memcpy(kb + 4 * i, b + 4 * idx[i], 4 * sizeof(float));
            r[5 * i] = 0.0f;
            memcpy(r + 5 * i + 1, b + 4 * idx[i], 4 * sizeof(float));
        }
        for (int64_t i = 0; i < k && i < 4; i++)
            printf("    #%lld class %lld score %.3f box (%.1f, %.1f, %.1f, %.1f)\n", (long long)idx[i],
                   (long long)c[idx[i]], s[idx[i]], b[4 * idx[i]], b[4 * idx[i] + 1], b[4 * idx[i] + 2],
                   b[4 * idx[i] + 3]);
        const loom_tensor *in[2] = { kept, kept };
        rc = run1("vision.box_iou", in, 2, NULL, &iou, "box_iou");
    }
    if (rc == DEMO_OK) {
        /* what NMS guarantees: no two survivors of one class overlap more than the threshold */
        const int64_t *idx = loom_data(keep), *c = loom_data(classes);
        const float *m = loom_data(iou);
        double worst = 0;
        for (int64_t i = 0; i < k; i++)
            for (int64_t j = 0; j < k; j++)
                if (i != j && c[idx[i]] == c[idx[j]])
                    worst = fmax(worst, m[i * k + j]);
        printf("  box_iou of the survivors: largest IoU within a class %.3f (<= 0.5 as NMS promises)\n", worst);
        if (worst > 0.5)
            rc = DEMO_FAIL;
    }
    if (rc == DEMO_OK) {
        const int64_t out_size[2] = { 7, 7 };
        loom_attrs_free(attrs);
        attrs = NULL;
        rc = loom_attrs_new(&attrs) == LOOM_OK && loom_attrs_set_ints(attrs, "output_size", out_size, 2) == LOOM_OK
                     && loom_attrs_set_float(attrs, "spatial_scale", 0.25) == LOOM_OK
                     && loom_attrs_set_int(attrs, "sampling_ratio", 2) == LOOM_OK
                     && loom_attrs_set_bool(attrs, "aligned", 1) == LOOM_OK
                 ? DEMO_OK
                 : demo_fail();
    }
    if (rc == DEMO_OK) {
        const loom_tensor *in[2] = { feat, rois };
        double t0 = demo_now();
        rc = run1("vision.roi_align", in, 2, attrs, &pooled, "roi_align");
        double dt = demo_now() - t0;
        if (rc == DEMO_OK) {
            printf("  roi_align of the survivors on a stride-4 map f32[1,64,200,272], 7x7, sampling 2: "
                   "f32[%lld,%lld,%lld,%lld] in %.3f ms\n", (long long)pooled->shape[0],
                   (long long)pooled->shape[1], (long long)pooled->shape[2], (long long)pooled->shape[3],
                   dt * 1e3);
        }
    }
    loom_attrs_free(attrs);
    loom_tensor_free(boxes);
    loom_tensor_free(scores);
    loom_tensor_free(classes);
    loom_tensor_free(feat);
    loom_tensor_free(keep);
    loom_tensor_free(kept);
    loom_tensor_free(iou);
    loom_tensor_free(rois);
    loom_tensor_free(pooled);
    return rc;
}
