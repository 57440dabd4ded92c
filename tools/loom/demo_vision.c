/*
** demo_vision.c - `loom demo` sections of the vision pack: the
** post-processing of a detector (batched NMS over clustered candidate boxes,
** a check of what NMS guarantees with box_iou, RoIAlign of the survivors on
** an FPN-like feature map) and deform_conv2d with zero offsets, which must
** equal a plain convolution.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "demo.h"

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
        return cli_fail();
    demo_record(label);
    return CLI_OK;
}

int demo_vision_detect(void)
{
    const int64_t bshape[2] = { N_CAND, 4 }, sshape[1] = { N_CAND };
    const int64_t fshape[4] = { 1, 64, 200, 272 };
    loom_tensor *boxes = demo_tensor(LOOM_DTYPE_F32, 2, bshape), *scores = demo_tensor(LOOM_DTYPE_F32, 1, sshape);
    loom_tensor *classes = demo_tensor(LOOM_DTYPE_I64, 1, sshape), *feat = demo_tensor(LOOM_DTYPE_F32, 4, fshape);
    loom_tensor *keep = NULL, *kept = NULL, *iou = NULL, *rois = NULL, *pooled = NULL;
    loom_attrs *attrs = NULL;
    int rc = boxes && scores && classes && feat && loom_attrs_new(&attrs) == LOOM_OK ? CLI_OK : CLI_FAIL;

    if (rc == CLI_OK) {
        make_candidates(loom_data(boxes), loom_data(scores), loom_data(classes));
        float *f = loom_data(feat);
        for (int64_t i = 0; i < loom_numel(feat); i++)
            f[i] = demo_random();
        printf("  %d candidate boxes around %d objects of %d classes in an 800 x 1088 image\n",
               N_CAND, N_OBJECTS, N_CLASSES);
        loom_attrs_set_float(attrs, "iou_threshold", 0.5);
        const loom_tensor *in[3] = { boxes, scores, classes };
        double t0 = cli_now();
        rc = run1("vision.batched_nms", in, 3, attrs, &keep, "batched_nms");
        double dt = cli_now() - t0;
        if (rc == CLI_OK)
            printf("  batched_nms(iou_threshold=0.5): %lld boxes kept in %.3f ms\n",
                   (long long)loom_numel(keep), dt * 1e3);
    }
    int64_t k = rc == CLI_OK ? loom_numel(keep) : 0;
    if (rc == CLI_OK) {
        const int64_t kshape[2] = { k, 4 }, rshape[2] = { k, 5 };
        kept = demo_tensor(LOOM_DTYPE_F32, 2, kshape);
        rois = demo_tensor(LOOM_DTYPE_F32, 2, rshape);
        rc = kept && rois ? CLI_OK : CLI_FAIL;
    }
    if (rc == CLI_OK) {
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
    if (rc == CLI_OK) {
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
            rc = CLI_FAIL;
    }
    if (rc == CLI_OK) {
        const int64_t out_size[2] = { 7, 7 };
        loom_attrs_free(attrs);
        attrs = NULL;
        rc = loom_attrs_new(&attrs) == LOOM_OK && loom_attrs_set_ints(attrs, "output_size", out_size, 2) == LOOM_OK
                     && loom_attrs_set_float(attrs, "spatial_scale", 0.25) == LOOM_OK
                     && loom_attrs_set_int(attrs, "sampling_ratio", 2) == LOOM_OK
                     && loom_attrs_set_bool(attrs, "aligned", 1) == LOOM_OK
                 ? CLI_OK
                 : cli_fail();
    }
    if (rc == CLI_OK) {
        const loom_tensor *in[2] = { feat, rois };
        double t0 = cli_now();
        rc = run1("vision.roi_align", in, 2, attrs, &pooled, "roi_align");
        double dt = cli_now() - t0;
        if (rc == CLI_OK) {
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

/* deform_conv2d with zero offsets and no mask samples the regular grid: it
** is a plain convolution, computed here directly to compare. */
int demo_vision_deform(void)
{
    enum { N = 1, CI = 8, CO = 6, H = 12, W = 12, K = 3 };
    const int64_t ishape[4] = { N, CI, H, W }, wshape[4] = { CO, CI, K, K };
    const int64_t oshape[4] = { N, 2 * K * K, H, W };
    loom_tensor *x = demo_f32(4, ishape, NULL), *w = demo_f32(4, wshape, NULL);
    loom_tensor *off = demo_f32(4, oshape, NULL), *y = NULL;
    loom_attrs *attrs = NULL;
    const int64_t one[2] = { 1, 1 };
    int rc = x && w && off && loom_attrs_new(&attrs) == LOOM_OK
                     && loom_attrs_set_ints(attrs, "padding", one, 2) == LOOM_OK
                 ? CLI_OK
                 : CLI_FAIL;
    if (rc == CLI_OK) {
        float *px = loom_data(x), *pw = loom_data(w);
        for (int64_t i = 0; i < loom_numel(x); i++)
            px[i] = demo_random();
        for (int64_t i = 0; i < loom_numel(w); i++)
            pw[i] = demo_random();
        const loom_tensor *in[3] = { x, off, w };
        rc = run1("vision.deform_conv2d", in, 3, attrs, &y, "deform_conv2d");
    }
    if (rc == CLI_OK) {
        const float *px = loom_data(x), *pw = loom_data(w), *py = loom_data(y);
        double worst = 0;
        for (int co = 0; co < CO; co++)
            for (int i = 0; i < H; i++)
                for (int j = 0; j < W; j++) {
                    double acc = 0;
                    for (int ci = 0; ci < CI; ci++)
                        for (int a = 0; a < K; a++)
                            for (int b = 0; b < K; b++) {
                                int yi = i + a - 1, xj = j + b - 1;
                                if (yi >= 0 && yi < H && xj >= 0 && xj < W)
                                    acc += (double)pw[((co * CI + ci) * K + a) * K + b]
                                           * (double)px[(ci * H + yi) * W + xj];
                            }
                    worst = fmax(worst, fabs(acc - (double)py[(co * H + i) * W + j]));
                }
        printf("  deform_conv2d f32[1,8,12,12] * f32[6,8,3,3], padding 1, zero offsets\n"
               "  max |difference| to a direct 3x3 convolution: %.2g\n", worst);
        if (worst > 1e-4)
            rc = CLI_FAIL;
    }
    loom_attrs_free(attrs);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_tensor_free(off);
    loom_tensor_free(y);
    return rc;
}
