/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_fasterrcnn_mobilenet.c - the MobileNetV3 Faster R-CNN classes
** (vision.fasterrcnn_mobilenet_v3, vision.fasterrcnn_mobilenet_v3_large_fpn,
** vision.fasterrcnn_mobilenet_v3_large_320_fpn) against torchvision, on a
** tiny fasterrcnn_mobilenet_v3_large_fpn built from torchvision's own classes
** with random weights (tools/gen_vision_fasterrcnn_mobilenet_goldens.py;
** tests/data/vision/detection/frcnn_mnv3_tiny/): the MobileNetV3-Large body
** at width_mult 0.1 (every block kind: with and without expansion, SE,
** relu and hardswish, residual and strided), its body saved as a pretrained
** file has it (no num_batches_tracked), a 16-channel FPN on modules 13 and
** 16 with LastLevelMaxPool, 15 anchors per location (5 sizes x 3 ratios on
** each of the three maps, all of stride 32), rpn_score_thresh 0.05, 5
** classes, run on a list of two images of different sizes (3 x 40 x 56 and
** 3 x 50 x 36, min_size 128, max_size 160: a 160 x 160 batch).
** Tolerances: the issue's. The same detection counts per image, boxes
** within 1e-3 px, scores within 1e-4, labels and order identical, except
** within runs of equal scores (torchvision's sort leaves their order
** open), compared as sets; the test prints how many rows were. The
** differences come from the convolutions' and linears' summation order (our
** GEMM's against PyTorch's, ~1e-6 relative), carried through.
** The intermediate results come from the method
** vision.fasterrcnn_mobilenet_v3_rpn: the FPN maps (within 2e-5: 19 convs
** of the body, then the FPN's, in another summation order), the resized
** sizes (identical) and the proposals (within 1e-3 px, the same counts).
** The named classes in full run when their random-weights files are in
** build-models/vision/<name>/ (the script with --full: one 3 x 120 x 160
** image, box_score_thresh 0, the classes' other defaults), skipped with a
** message otherwise; rows whose scores are within 1e-6 of their
** neighbour's are compared as sets there, and a box the per-class nms kept
** in place of a tied, overlapping candidate (IoU >= 0.5) is said so.
** Bad input: an empty image list, a 1 x 1 image (accepted, as torchvision
** accepts it), a ResNet Faster R-CNN's file (the message names the key), a
** width other than the file's, and attributes out of range.
*/
#include "detector_checks.h"

static const char *const TINY_ATTRS = "width_mult=0.1;fpn_channels=16;min_size=128;max_size=160;"
                                      "rpn_pre_nms_top_n_test=100;rpn_post_nms_top_n_test=30;box_score_thresh=0;"
                                      "box_detections_per_img=12";
#define TINY_DIR "vision/detection/frcnn_mnv3_tiny"
#define PREFIX "frcnn_mnv3_tiny/"

static loom_object *tiny(void)
{
    char w[512];
    loom_object *obj = NULL;
    if (dc_create(&obj, "vision.fasterrcnn_mobilenet_v3", TINY_ATTRS, NULL,
                  dc_data_file(w, sizeof w, TINY_DIR, "model.safetensors")) != LOOM_OK)
        fail_msg("vision.fasterrcnn_mobilenet_v3: %s", loom_last_error());
    return obj;
}

static void tiny_matches_torchvision(void **state)
{
    (void)state;
    loom_object *obj = tiny();
    dc_check_detections(obj, "vision.fasterrcnn_mobilenet_v3", PREFIX);
    loom_object_free(obj);
}

/* The _rpn method: the FPN maps, image sizes and proposals against torchvision's. 19 convolutions of the
** body, then the FPN's, each summing in another order than PyTorch's (~1e-7 relative each, on maps of
** magnitude ~1): the maps within 2e-5. */
static void tiny_rpn_matches_torchvision(void **state)
{
    (void)state;
    loom_object *obj = tiny();
    dc_check_intermediates(obj, "vision.fasterrcnn_mobilenet_v3_rpn", PREFIX, 3, 1);
    loom_object_free(obj);
}

/* An empty list and an empty batch: refused; a 1x1 image: torchvision scales it to min_size like any other,
** accepted, 12 detections inside it. */
static void bad_input_is_refused(void **state)
{
    (void)state;
    loom_object *obj = tiny();
    dc_check_empty_list_refused(obj, "vision.fasterrcnn_mobilenet_v3", 4);
    dc_check_empty_batch_refused(obj, "vision.fasterrcnn_mobilenet_v3", 4);
    dc_check_one_pixel_boxes(obj, "vision.fasterrcnn_mobilenet_v3");
    loom_object_free(obj);
}

/* vision.fasterrcnn_mobilenet_v3 of file (in dir) with the tiny attributes and extra ones must be refused */
static void expect_create_refused(const char *dir, const char *file, const char *extra, const char *needle)
{
    char w[512];
    dc_expect_create_refused("vision.fasterrcnn_mobilenet_v3", TINY_ATTRS, extra, dc_data_file(w, sizeof w, dir, file),
                             needle);
}

static void wrong_file_names_the_key(void **state)
{
    (void)state;
    /* a ResNet Faster R-CNN's file: its body has conv1, not the stem '0' */
    expect_create_refused("vision/detection/frcnn_tiny", "v1_model.safetensors", NULL,
                          "key 'backbone.body.0.0.weight'");
    /* another width: the stem's channels differ (8 at 0.1, 16 at 1.0) */
    expect_create_refused(TINY_DIR, "model.safetensors", "width_mult=1.0",
                          "key 'backbone.body.0.0.weight' is f32[8,3,3,3] in the weights file, expected f32[16,3,3,3]");
    /* the FPN's width */
    expect_create_refused(TINY_DIR, "model.safetensors", "fpn_channels=32", "'backbone.fpn.inner_blocks.0.0.weight'");
    /* num_classes other than the file's */
    expect_create_refused(TINY_DIR, "model.safetensors", "num_classes=91", "cls_score.weight' has 5 classes");
    /* a weight entry on a class without entries */
    expect_create_refused(TINY_DIR, "model.safetensors", "weights=COCO_V1",
                          "vision.fasterrcnn_mobilenet_v3 has no weight entry 'COCO_V1'");
}

static void bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    expect_create_refused(TINY_DIR, "model.safetensors", "width_mult=0", "attribute 'width_mult' is 0");
    expect_create_refused(TINY_DIR, "model.safetensors", "image_std=0.5,0.5", "attribute 'image_std' must hold 3");
}

/* The named classes take torchvision's architecture: the tiny file is refused naming the first key that
** differs, and a COCO entry is checked against the file's parameters. */
static void named_classes_check_the_file(void **state)
{
    (void)state;
    static const char *const classes[] = { "vision.fasterrcnn_mobilenet_v3_large_fpn",
                                           "vision.fasterrcnn_mobilenet_v3_large_320_fpn" };
    char w[512];
    dc_data_file(w, sizeof w, TINY_DIR, "model.safetensors");
    for (int i = 0; i < 2; i++) {
        dc_expect_create_refused(classes[i], "weights=COCO_V1", NULL, w,
                                 "key 'backbone.body.0.0.weight' is f32[8,3,3,3] in the weights file, "
                                 "expected f32[16,3,3,3]");
        dc_expect_create_refused(classes[i], "weights=IMAGENET1K_V1", NULL, w, "its entries are COCO_V1 and DEFAULT");
    }
}

/* vision.<name> in full, from build-models when it is there; the file fits the COCO entry's 19386354
** parameters and 91 classes. Rows whose torchvision scores are within 1e-6 of their neighbour's (below the
** float32 differences of two summation orders through the body's 60 convolutions) have no defined order:
** compared as sets; and where two overlapping candidates of one class tie, the per-class nms (IoU 0.5) may
** keep either (seen once in the 320 model: boxes 0.05 px apart, scores 2e-9 apart). */
static void check_full(const char *name)
{
    dc_check_full(name, "box_score_thresh=0;weights=COCO_V1", "tools/gen_vision_fasterrcnn_mobilenet_goldens.py",
                  0.5);
}

static void full_large_fpn_matches_torchvision(void **state)
{
    (void)state;
    check_full("fasterrcnn_mobilenet_v3_large_fpn");
}

/* min_size 320, max_size 640, rpn top-n 150 */
static void full_large_320_fpn_matches_torchvision(void **state)
{
    (void)state;
    check_full("fasterrcnn_mobilenet_v3_large_320_fpn");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_matches_torchvision),
        cmocka_unit_test(tiny_rpn_matches_torchvision),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(wrong_file_names_the_key),
        cmocka_unit_test(bad_attributes_name_the_attribute),
        cmocka_unit_test(named_classes_check_the_file),
        cmocka_unit_test(full_large_fpn_matches_torchvision),
        cmocka_unit_test(full_large_320_fpn_matches_torchvision),
    };
    return cmocka_run_group_tests_name("vision_fasterrcnn_mobilenet", tests, tu_setup, tu_teardown);
}
