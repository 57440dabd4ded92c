/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_detection_pipeline.c - the detection ops composed as torchvision's
** FasterRCNN runs them after its ResNet body, on a tiny FasterRCNN built
** from torchvision's own classes (random weights, body maps layer1..layer4
** of 4, 6, 8, 10 channels for a batch of two images of different sizes, an
** 8-channel FPN, 4 classes; tools/gen_vision_detection_goldens.py
** gen_pipeline), every weight under its state_dict key:
** in two cases: v1's parts, and fasterrcnn_resnet50_fpn_v2's (BatchNorm2d
** after each FPN conv, folded into it here as the model classes fold
** their batchnorms; RPNHead(conv_depth=2); FastRCNNConvFCHead: 4 x (conv
** 3x3, BatchNorm2d, relu), flatten, linear, relu):
**   FeaturePyramidNetwork with LastLevelMaxPool: the 1x1 inner blocks
**   (vision.conv2d; each lateral adds the coarser level's vision.resize
**   nearest upsampling as the conv's residual), the 3x3 layer blocks, and
**   vision.max_pool2d 1/2 for "pool"; its five maps compared with
**   torchvision's (|d| <= 1e-5: the convolutions sum in another order and
**   the folded batchnorm rounds once instead of after each operation),
**   then used (loom's, not the goldens) by everything after (a third case
**   checks RetinaNet's LastLevelP6P7 extra block, from C5 and from P5);
**   RPNHead: vision.conv2d 3x3 + relu, then the 1x1 cls_logits and
**   bbox_pred convs on each of the five maps; their outputs reordered as
**   concat_box_prediction_layers does (here, in the test); anchors
**   (vision.anchor_generator, the default sizes 32..512 and ratios);
**   vision.rpn_proposals (top 60 per level, 25 kept); MultiScaleRoIAlign
**   (vision.multiscale_roi_align on maps 0..3, 7 x 7, sampling 2);
**   TwoMLPHead (vision.linear + vision.relu twice) and FastRCNNPredictor
**   (vision.linear); vision.rcnn_postprocess_detections (score_thresh 0:
**   nms and detections_per_img 12 fix the count); boxes back to the
**   original sizes (vision.rcnn_postprocess_boxes).
** Tolerances: the issue's. Proposals and final detections with the same
** counts per image, boxes within 1e-3 px, scores within 1e-4, labels and
** order identical, except within runs of equal scores, compared as sets
** (the test prints how many rows were). The differences that are there
** come from the convolutions' and linears' summation order (our GEMM's
** against PyTorch's, ~1e-6 relative) and expf, carried through.
*/
#include "detection_test.h"

#define N_LEVELS 5
#define ANCHORS 3

/* the case of the running test: "pipeline" (v1) or "pipeline_v2" */
static const char *STEM = "pipeline";

static loom_tensor *weight(const char *key)
{
    return dt_golden(STEM, key);
}

static int has_weight(const char *key)
{
    char path[160];
    snprintf(path, sizeof path, "vision/detection/%s_%s", STEM, key);
    return tu_npy_exists(path);
}

/* The conv of block `prefix` (Conv2dNormActivation: "<prefix>_0_weight"
** with its bias, or without one and then the BatchNorm2d "<prefix>_1_*",
** folded in as the model classes fold it: w * gamma / sqrt(var + 1e-5),
** beta - mean * gamma / sqrt(var + 1e-5), in double then float32). */
static void conv_of(const char *prefix, loom_tensor **w, loom_tensor **b)
{
    char key[96];
    snprintf(key, sizeof key, "%s_0_weight", prefix);
    *w = weight(key);
    snprintf(key, sizeof key, "%s_0_bias", prefix);
    if (has_weight(key)) {
        *b = weight(key);
        return;
    }
    static const char *const bn[4] = { "weight", "bias", "running_mean", "running_var" };
    loom_tensor *p[4];
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s_1_%s", prefix, bn[i]);
        p[i] = weight(key);
    }
    const int64_t cout = (*w)->shape[0], per = loom_numel(*w) / cout;
    assert_int_equal(loom_tensor_new(b, LOOM_DTYPE_F32, 1, &cout, NULL), LOOM_OK);
    float *pw = loom_data(*w), *pb = loom_data(*b);
    const float *g = loom_data(p[0]), *beta = loom_data(p[1]), *mean = loom_data(p[2]), *var = loom_data(p[3]);
    for (int64_t o = 0; o < cout; o++) {
        const double scale = (double)g[o] / sqrt((double)var[o] + 1e-5);
        for (int64_t k = 0; k < per; k++)
            pw[o * per + k] = (float)((double)pw[o * per + k] * scale);
        pb[o] = (float)((double)beta[o] - (double)mean[o] * scale);
    }
    dt_free(p, 4);
}

/* out = op(in...) with attrs, one output, failing the test on error */
static loom_tensor *call1(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs)
{
    loom_tensor *out[1];
    if (dt_run(op, in, n, attrs, out, 1) != LOOM_OK)
        fail_msg("%s: %s", op, loom_last_error());
    return out[0];
}

static loom_tensor *new_f32(int32_t ndim, const int64_t *shape)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, ndim, shape, NULL), LOOM_OK);
    return t;
}

/* The RPN head on every level, reordered and concatenated as
** concat_box_prediction_layers: objectness [N, sum H W A] (location-major,
** anchor minor) and deltas [N, sum H W A, 4]; per_level[l] = H W A. */
static void rpn_head(loom_tensor *const *x, loom_tensor **objectness, loom_tensor **deltas, int64_t *per_level,
                     int64_t *grid)
{
    loom_tensor *lw = weight("rpn_head_cls_logits_weight"), *lb = weight("rpn_head_cls_logits_bias");
    loom_tensor *bw = weight("rpn_head_bbox_pred_weight"), *bb = weight("rpn_head_bbox_pred_bias");
    const int64_t n = x[0]->shape[0];
    int64_t total = 0;
    for (int l = 0; l < N_LEVELS; l++) {
        grid[2 * l] = x[l]->shape[2];
        grid[2 * l + 1] = x[l]->shape[3];
        per_level[l] = x[l]->shape[2] * x[l]->shape[3] * ANCHORS;
        total += per_level[l];
    }
    *objectness = new_f32(2, (const int64_t[]){ n, total });
    *deltas = new_f32(3, (const int64_t[]){ n, total, 4 });
    float *po = loom_data(*objectness), *pd = loom_data(*deltas);
    int64_t start = 0;
    for (int l = 0; l < N_LEVELS; l++) {
        /* the head's conv_depth 3x3 convs with relu (v1: 1, v2: 2) */
        loom_tensor *t = NULL;
        for (int d = 0;; d++) {
            char key[48];
            snprintf(key, sizeof key, "rpn_head_conv_%d_0_weight", d);
            if (!has_weight(key))
                break;
            snprintf(key, sizeof key, "rpn_head_conv_%d", d);
            loom_tensor *cw, *cb;
            conv_of(key, &cw, &cb);
            loom_tensor *y = call1("vision.conv2d", (const loom_tensor *[]){ t ? t : x[l], cw, cb }, 3,
                                   "padding=1;activation=relu");
            loom_tensor *f[3] = { cw, cb, t };
            dt_free(f, 3);
            t = y;
        }
        loom_tensor *lg = call1("vision.conv2d", (const loom_tensor *[]){ t, lw, lb }, 3, NULL);
        loom_tensor *bx = call1("vision.conv2d", (const loom_tensor *[]){ t, bw, bb }, 3, NULL);
        const int64_t h = grid[2 * l], w = grid[2 * l + 1], hw = h * w;
        const float *g = loom_data(lg), *d = loom_data(bx);
        for (int64_t i = 0; i < n; i++)
            for (int64_t p = 0; p < hw; p++)
                for (int64_t a = 0; a < ANCHORS; a++) {
                    const int64_t row = i * total + start + p * ANCHORS + a;
                    po[row] = g[(i * ANCHORS + a) * hw + p];
                    for (int c = 0; c < 4; c++)
                        pd[row * 4 + c] = d[((i * ANCHORS + a) * 4 + c) * hw + p];
                }
        start += per_level[l];
        loom_tensor *f[3] = { t, lg, bx };
        dt_free(f, 3);
    }
    loom_tensor *ws[4] = { lw, lb, bw, bb };
    dt_free(ws, 4);
}

/* The box head on the pooled boxes [K, C, 7, 7] into [K, representation]:
** TwoMLPHead (fc6, fc7 with relu) or, in v2, FastRCNNConvFCHead (3x3 convs
** with folded BatchNorm2d and relu, flatten, one linear with relu). */
static loom_tensor *representation(const loom_tensor *pooled)
{
    loom_tensor *maps = NULL;
    for (int i = 0;; i++) {
        char key[48];
        snprintf(key, sizeof key, "roi_heads_box_head_%d_0_weight", i);
        if (!has_weight(key))
            break;
        snprintf(key, sizeof key, "roi_heads_box_head_%d", i);
        loom_tensor *w, *b;
        conv_of(key, &w, &b);
        loom_tensor *y = call1("vision.conv2d", (const loom_tensor *[]){ maps ? maps : pooled, w, b }, 3,
                               "padding=1;activation=relu");
        loom_tensor *f[3] = { w, b, maps };
        dt_free(f, 3);
        maps = y;
    }
    const loom_tensor *src = maps ? maps : pooled;
    const int64_t k = src->shape[0], flat = src->shape[1] * src->shape[2] * src->shape[3];
    int64_t shape[2] = { k, flat };
    loom_tensor view = *src;
    view.ndim = 2;
    view.shape = shape;
    view.strides = NULL;
    const int v2 = maps != NULL;
    static const char *const fc[3][2] = { { "roi_heads_box_head_fc6_weight", "roi_heads_box_head_fc6_bias" },
                                          { "roi_heads_box_head_fc7_weight", "roi_heads_box_head_fc7_bias" },
                                          { "roi_heads_box_head_5_weight", "roi_heads_box_head_5_bias" } };
    loom_tensor *h = NULL;
    const loom_tensor *in = &view;
    for (int i = v2 ? 2 : 0; i < (v2 ? 3 : 2); i++) {
        loom_tensor *w = weight(fc[i][0]), *b = weight(fc[i][1]);
        loom_tensor *y = call1("vision.linear", (const loom_tensor *[]){ in, w, b }, 3, NULL);
        loom_tensor *r = call1("vision.relu", (const loom_tensor *[]){ y }, 1, NULL);
        loom_tensor *f[4] = { w, b, y, h };
        dt_free(f, 4);
        h = r;
        in = h;
    }
    loom_tensor_free(maps);
    return h;
}

/* The box head and FastRCNNPredictor. */
static void box_head(const loom_tensor *pooled, loom_tensor **class_logits, loom_tensor **box_regression)
{
    loom_tensor *h = representation(pooled);
    loom_tensor *cw = weight("roi_heads_box_predictor_cls_score_weight");
    loom_tensor *cb = weight("roi_heads_box_predictor_cls_score_bias");
    loom_tensor *bw = weight("roi_heads_box_predictor_bbox_pred_weight");
    loom_tensor *bb = weight("roi_heads_box_predictor_bbox_pred_bias");
    *class_logits = call1("vision.linear", (const loom_tensor *[]){ h, cw, cb }, 3, NULL);
    *box_regression = call1("vision.linear", (const loom_tensor *[]){ h, bw, bb }, 3, NULL);
    loom_tensor *f[5] = { cw, cb, bw, bb, h };
    dt_free(f, 5);
}

/* FeaturePyramidNetwork on the body maps c2..c5 into x[0..3] plus the
** extra block's maps: LastLevelMaxPool ("pool", x[4]) or, when p6p7,
** LastLevelP6P7 (x[4] = p6 from C5, or from P5 when p6's input channels
** are the FPN's, as torchvision's use_P5; x[5] = p7 of relu(p6)). The
** weights are "<prefix>inner_blocks_*" and so on; every map is compared
** with the golden x<i>. */
static void fpn(const char *prefix, int p6p7, loom_tensor **x)
{
    loom_tensor *c[4];
    for (int i = 0; i < 4; i++) {
        char name[8];
        snprintf(name, sizeof name, "c%d", i + 2);
        c[i] = dt_golden(STEM, name);
    }
    loom_tensor *last = NULL;
    for (int i = 3; i >= 0; i--) {
        char key[64];
        loom_tensor *iw, *ib, *lw, *lb;
        snprintf(key, sizeof key, "%sinner_blocks_%d", prefix, i);
        conv_of(key, &iw, &ib);
        snprintf(key, sizeof key, "%slayer_blocks_%d", prefix, i);
        conv_of(key, &lw, &lb);
        loom_tensor *inner;
        if (last == NULL) {
            inner = call1("vision.conv2d", (const loom_tensor *[]){ c[i], iw, ib }, 3, NULL);
        } else {
            /* inner_lateral + F.interpolate(last_inner, size, mode="nearest") */
            char attrs[64];
            snprintf(attrs, sizeof attrs, "size=%lld,%lld;interpolation=nearest", (long long)c[i]->shape[2],
                     (long long)c[i]->shape[3]);
            loom_tensor *up = call1("vision.resize", (const loom_tensor *const *)&last, 1, attrs);
            inner = call1("vision.conv2d", (const loom_tensor *[]){ c[i], iw, ib, up }, 4, NULL);
            loom_tensor_free(up);
        }
        x[i] = call1("vision.conv2d", (const loom_tensor *[]){ inner, lw, lb }, 3, "padding=1");
        loom_tensor_free(last);
        last = inner;
        loom_tensor *f[4] = { iw, ib, lw, lb };
        dt_free(f, 4);
    }
    loom_tensor_free(last);
    int n_maps = 5;
    if (p6p7) {
        char key[64];
        snprintf(key, sizeof key, "%sextra_blocks_p6_weight", prefix);
        loom_tensor *w6 = weight(key), *w7;
        snprintf(key, sizeof key, "%sextra_blocks_p6_bias", prefix);
        loom_tensor *b6 = weight(key), *b7;
        snprintf(key, sizeof key, "%sextra_blocks_p7_weight", prefix);
        w7 = weight(key);
        snprintf(key, sizeof key, "%sextra_blocks_p7_bias", prefix);
        b7 = weight(key);
        const loom_tensor *src = w6->shape[1] == x[3]->shape[1] ? x[3] : c[3];
        x[4] = call1("vision.conv2d", (const loom_tensor *[]){ src, w6, b6 }, 3, "stride=2;padding=1");
        loom_tensor *r = call1("vision.relu", (const loom_tensor *const *)&x[4], 1, NULL);
        x[5] = call1("vision.conv2d", (const loom_tensor *[]){ r, w7, b7 }, 3, "stride=2;padding=1");
        loom_tensor *f[5] = { w6, b6, w7, b7, r };
        dt_free(f, 5);
        n_maps = 6;
    } else {
        x[4] = call1("vision.max_pool2d", (const loom_tensor *const *)&x[3], 1, "kernel_size=1;stride=2");
    }
    char maps[48];
    snprintf(maps, sizeof maps, "%s_", STEM);
    dt_check_maps(maps, x, n_maps, 1e-5);
    dt_free(c, 4);
}

static void after_body(void)
{
    loom_tensor *x[N_LEVELS];
    fpn("backbone_fpn_", 0, x);
    loom_tensor *sizes = dt_golden(STEM, "image_sizes");
    loom_tensor *objectness, *deltas;
    int64_t per_level[N_LEVELS], grid[2 * N_LEVELS];
    rpn_head(x, &objectness, &deltas, per_level, grid);

    /* the batch is 64 x 96 (the maps at stride 4) */
    loom_tensor *grid_t;
    assert_int_equal(loom_tensor_new(&grid_t, LOOM_DTYPE_I64, 2, (const int64_t[]){ N_LEVELS, 2 }, NULL), LOOM_OK);
    memcpy(loom_data(grid_t), grid, sizeof grid);
    loom_tensor *anchors = call1("vision.anchor_generator", (const loom_tensor *const *)&grid_t, 1,
                                 "sizes=32,64,128,256,512;aspect_ratios=0.5,1,2;image_size=64,96");
    char attrs[160];
    snprintf(attrs, sizeof attrs,
             "num_anchors_per_level=%lld,%lld,%lld,%lld,%lld;pre_nms_top_n=60;post_nms_top_n=25;nms_thresh=0.7",
             (long long)per_level[0], (long long)per_level[1], (long long)per_level[2], (long long)per_level[3],
             (long long)per_level[4]);
    loom_tensor *prop[3];
    if (dt_run("vision.rpn_proposals", (const loom_tensor *[]){ objectness, deltas, anchors, sizes }, 4, attrs, prop,
               3) != LOOM_OK)
        fail_msg("vision.rpn_proposals: %s", loom_last_error());
    /* torchvision's proposals: compared by position (their scores are not kept by the golden; the boxes are) */
    loom_tensor *want_prop = dt_golden(STEM, "proposals"), *want_prop_off = dt_golden(STEM, "proposals_offsets");
    tu_assert_identical(prop[2], want_prop_off, "pipeline proposals offsets");
    const double dp = dt_max_diff(prop[0], want_prop, "pipeline proposals");
    if (dp > 1e-3)
        fail_msg("pipeline: proposals differ by %g px > 1e-3", dp);
    print_message("%s proposals: largest difference %g px\n", STEM, dp);

    loom_tensor *pooled = call1("vision.multiscale_roi_align",
                                (const loom_tensor *[]){ prop[0], prop[2], sizes, x[0], x[1], x[2], x[3] }, 7,
                                "output_size=7;sampling_ratio=2");
    loom_tensor *class_logits, *box_regression;
    box_head(pooled, &class_logits, &box_regression);
    loom_tensor *det[4];
    if (dt_run("vision.rcnn_postprocess_detections",
               (const loom_tensor *[]){ class_logits, box_regression, prop[0], prop[2], sizes }, 5,
               "score_thresh=0;nms_thresh=0.5;detections_per_img=12", det, 4) != LOOM_OK)
        fail_msg("vision.rcnn_postprocess_detections: %s", loom_last_error());

    /* transform.postprocess: each image's boxes back to its original size */
    static const int64_t original[2][2] = { { 32, 45 }, { 40, 64 } };
    const int64_t *off = loom_data(det[3]), *sz = loom_data(sizes);
    float *boxes = loom_data(det[0]);
    for (int b = 0; b < 2; b++) {
        int64_t shape[2] = { off[b + 1] - off[b], 4 };
        loom_tensor view = { .data = boxes + off[b] * 4, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                             .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
        snprintf(attrs, sizeof attrs, "image_size=%lld,%lld;original_size=%lld,%lld", (long long)sz[2 * b],
                 (long long)sz[2 * b + 1], (long long)original[b][0], (long long)original[b][1]);
        loom_tensor *back = call1("vision.rcnn_postprocess_boxes", (const loom_tensor *const[]){ &view }, 1, attrs);
        if (shape[0] > 0)
            memcpy(view.data, loom_data(back), (size_t)shape[0] * 4 * sizeof(float));
        loom_tensor_free(back);
    }
    loom_tensor *wb = dt_golden(STEM, "boxes"), *ws = dt_golden(STEM, "scores"), *wl = dt_golden(STEM, "labels");
    loom_tensor *wo = dt_golden(STEM, "offsets");
    dt_check_ranked("pipeline detections", det[0], det[1], det[3], wb, ws, wo);
    print_message("%s detections: boxes within %g px, scores within %g\n", STEM,
                  dt_max_diff(det[0], wb, "pipeline boxes"), dt_max_diff(det[1], ws, "pipeline scores"));
    tu_assert_identical(det[2], wl, "pipeline labels");

    loom_tensor *f[] = { objectness, deltas, grid_t, anchors, prop[0], prop[1], prop[2], want_prop, want_prop_off,
                         pooled, class_logits, box_regression, det[0], det[1], det[2], det[3], wb, ws, wl, wo, sizes };
    dt_free(f, (int)(sizeof f / sizeof f[0]));
    dt_free(x, N_LEVELS);
}

static void faster_rcnn_after_body_matches_torchvision(void **state)
{
    (void)state;
    STEM = "pipeline";
    after_body();
}

/* fasterrcnn_resnet50_fpn_v2's parts: BatchNorm2d in the FPN, RPNHead(conv_depth=2), FastRCNNConvFCHead */
static void faster_rcnn_v2_after_body_matches_torchvision(void **state)
{
    (void)state;
    STEM = "pipeline_v2";
    after_body();
}

/* RetinaNet's FPN: LastLevelP6P7 from C5 (v2's, 2048 != 256 channels) and from P5 (v1's) */
static void fpn_p6p7_matches_torchvision(void **state)
{
    (void)state;
    static const char *const stems[2] = { "fpn_p6p7_c5", "fpn_p6p7_p5" };
    for (int i = 0; i < 2; i++) {
        STEM = stems[i];
        loom_tensor *x[6];
        fpn("", 1, x);
        dt_free(x, 6);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(faster_rcnn_after_body_matches_torchvision),
        cmocka_unit_test(faster_rcnn_v2_after_body_matches_torchvision),
        cmocka_unit_test(fpn_p6p7_matches_torchvision),
    };
    return cmocka_run_group_tests_name("vision_detection_pipeline", tests, tu_setup, tu_teardown);
}
