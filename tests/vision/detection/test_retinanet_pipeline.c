/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_retinanet_pipeline.c - RetinaNet's ops composed as torchvision's
** RetinaNet runs them after its backbone, on a tiny RetinaNet built from
** torchvision's own classes (tools/gen_vision_retinanet_goldens.py
** model_cases: BackboneWithFPN over a three-stage body with LastLevelP6P7,
** five levels, 3 classes, anchors of sizes (x, x 2^1/3, x 2^2/3) for x in
** 8..128 and ratios 0.5, 1, 2; two images of different sizes resized with
** min_size 64, max_size 96, batched to 96 x 96), in two cases: v1 heads
** (8-channel FPN, conv + relu) and v2 heads (32-channel FPN, conv +
** GroupNorm(32) + relu). From the FPN maps torchvision computed:
**   vision.retinanet_head twice (classification, regression) over the five
**   maps; vision.anchor_generator over their grid sizes;
**   vision.retinanet_postprocess (score_thresh 0.3, topk_candidates 40,
**   nms 0.5, detections_per_img 15: the count is fixed by the cap);
**   vision.rcnn_postprocess_boxes back to each original size;
** against torchvision's final detections of model(images).
** Tolerances: the issue's: the same counts per image, boxes within 1e-3 px,
** scores within 1e-4, labels and order identical, except within runs of
** equal scores, compared as sets (the test prints how many rows were). The
** differences come from the heads' convolutions' summation order (~1e-6
** relative) and expf, carried through.
*/
#include "detection_test.h"

#define LEVELS 5
#define ANCHOR_ATTRS "sizes=8,10,12,16,20,25,32,40,50,64,80,101,128,161,203;aspect_ratios=0.5,1,2;image_size=96,96"
#define POST_ATTRS "num_anchors_per_level=1296,324,81,36,9;score_thresh=0.3;topk_candidates=40;nms_thresh=0.5;" \
                   "detections_per_img=15"

static const int64_t original_sizes[2][2] = { { 50, 60 }, { 64, 44 } };

static loom_tensor *golden(const char *variant, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "vision/retinanet/model_%s_%s", variant, name);
    return tu_npy(path);
}

/* One head over the five maps: [N, A, k]. */
static loom_tensor *run_head(const char *variant, const char *tag, int gn, int64_t k, loom_tensor *const *maps)
{
    char name[64];
    loom_tensor *in[11] = { NULL };
    snprintf(name, sizeof name, "%s_conv_weight", gn ? "cls" : tag);     /* v2: the heads share them */
    in[0] = golden(variant, name);
    const char *parts[5] = { "conv_bias", "norm_weight", "norm_bias", "out_weight", "out_bias" };
    for (int i = 0; i < 5; i++) {
        if ((i == 0 && gn) || ((i == 1 || i == 2) && !gn))
            continue;
        snprintf(name, sizeof name, "%s_%s", tag, parts[i]);
        in[1 + i] = golden(variant, name);
    }
    for (int l = 0; l < LEVELS; l++)
        in[6 + l] = maps[l];
    char attrs[32];
    snprintf(attrs, sizeof attrs, "num_outputs=%lld", (long long)k);
    loom_tensor *out[1];
    if (dt_run("vision.retinanet_head", (const loom_tensor *const *)in, 11, attrs, out, 1) != LOOM_OK)
        fail_msg("retinanet_head %s %s: %s", variant, tag, loom_last_error());
    dt_free(in, 6);
    return out[0];
}

static void after_backbone(const char *variant, int gn)
{
    loom_tensor *maps[LEVELS];
    int64_t grid[2 * LEVELS];
    for (int l = 0; l < LEVELS; l++) {
        char name[16];
        snprintf(name, sizeof name, "p%d", l);
        maps[l] = golden(variant, name);
        grid[2 * l] = maps[l]->shape[2];
        grid[2 * l + 1] = maps[l]->shape[3];
    }
    loom_tensor *cls = run_head(variant, "cls", gn, 3, maps), *reg = run_head(variant, "reg", gn, 4, maps);
    loom_tensor *grid_t = NULL, *anchors[1];
    const int64_t gshape[2] = { LEVELS, 2 };
    assert_int_equal(loom_tensor_new(&grid_t, LOOM_DTYPE_I64, 2, gshape, NULL), LOOM_OK);
    memcpy(loom_data(grid_t), grid, sizeof grid);
    const loom_tensor *ain[1] = { grid_t };
    if (dt_run("vision.anchor_generator", ain, 1, ANCHOR_ATTRS, anchors, 1) != LOOM_OK)
        fail_msg("anchor_generator: %s", loom_last_error());
    loom_tensor *sizes = golden(variant, "image_sizes"), *det[4];
    const loom_tensor *pin[4] = { cls, reg, anchors[0], sizes };
    if (dt_run("vision.retinanet_postprocess", pin, 4, POST_ATTRS, det, 4) != LOOM_OK)
        fail_msg("retinanet_postprocess %s: %s", variant, loom_last_error());
    /* transform.postprocess: each image's boxes back to its original size */
    const int64_t *off = loom_data(det[3]), *hw = loom_data(sizes);
    float *boxes = loom_data(det[0]);
    for (int img = 0; img < 2; img++) {
        const int64_t rows = off[img + 1] - off[img];
        loom_tensor *part = NULL, *scaled[1];
        const int64_t bshape[2] = { rows, 4 };
        assert_int_equal(loom_tensor_wrap(&part, boxes + off[img] * 4, LOOM_DTYPE_F32, 2, bshape, NULL, NULL),
                         LOOM_OK);
        char attrs[96];
        snprintf(attrs, sizeof attrs, "image_size=%lld,%lld;original_size=%lld,%lld", (long long)hw[2 * img],
                 (long long)hw[2 * img + 1], (long long)original_sizes[img][0], (long long)original_sizes[img][1]);
        const loom_tensor *bin[1] = { part };
        if (dt_run("vision.rcnn_postprocess_boxes", bin, 1, attrs, scaled, 1) != LOOM_OK)
            fail_msg("rcnn_postprocess_boxes: %s", loom_last_error());
        memcpy(boxes + off[img] * 4, loom_data(scaled[0]), (size_t)rows * 4 * sizeof(float));
        loom_tensor_free(scaled[0]);
        loom_tensor_free(part);
    }
    loom_tensor *want_boxes = golden(variant, "boxes"), *want_scores = golden(variant, "scores");
    loom_tensor *want_labels = golden(variant, "labels"), *want_offsets = golden(variant, "offsets");
    char stem[48];
    snprintf(stem, sizeof stem, "retinanet %s", variant);
    const int64_t tied = dt_check_ranked(stem, det[0], det[1], det[3], want_boxes, want_scores, want_offsets);
    if (tied == 0)
        tu_assert_identical(det[2], want_labels, "retinanet labels");
    assert_int_equal(((const int64_t *)loom_data(want_offsets))[2], 30);     /* 15 per image: the cap */
    loom_tensor *all[] = { cls, reg, grid_t, anchors[0], sizes, det[0], det[1], det[2], det[3], want_boxes,
                           want_scores, want_labels, want_offsets };
    dt_free(all, 13);
    dt_free(maps, LEVELS);
}

static void retinanet_v1_after_backbone_matches_torchvision(void **state)
{
    (void)state;
    after_backbone("v1", 0);
}

static void retinanet_v2_after_backbone_matches_torchvision(void **state)
{
    (void)state;
    after_backbone("v2", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(retinanet_v1_after_backbone_matches_torchvision),
        cmocka_unit_test(retinanet_v2_after_backbone_matches_torchvision),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
