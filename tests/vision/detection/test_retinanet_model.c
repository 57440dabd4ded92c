/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_retinanet_model.c - the RetinaNet classes (vision.retinanet,
** vision.retinanet_resnet50_fpn[_v2]) against torchvision, on tiny
** RetinaNets built from torchvision's own classes with random weights
** (tools/gen_vision_retinanet_model_goldens.py; tests/data/vision/
** detection/retina_tiny/): a Bottleneck ResNet body (layers 1, 1, 1, 1,
** stem 8), the FPN of layer2..4 with LastLevelP6P7, 3 classes, anchors
** (x, x 2^1/3, x 2^2/3) for x in 8..128, ratios 0.5, 1, 2, in two cases:
**   v1  widths 4, 4, 8, 8, 8-channel FPN, p6 from P5, heads conv + relu
**   v2  widths 4, 4, 8, 16, 32-channel FPN, p6 from C5, heads conv +
**       GroupNorm(32) + relu
** run on a list of two images of different sizes (3 x 64 x 96 and
** 3 x 80 x 64, min_size 72, max_size 112: resized to 72 x 108 and 90 x 72,
** batched to 96 x 128), score_thresh 0.2, topk_candidates 40,
** detections_per_img 15 (the cap fixes the count: 15 per image).
** Tolerances: the issue's. The same detection counts per image, boxes
** within 1e-3 px, scores within 1e-4, labels and order identical, except
** within runs of equal scores (torchvision's sort and nms leave their
** order open), whose boxes are compared as sets (the test prints how many
** rows were; none in these goldens, so the labels are compared in place).
** The differences come from the convolutions' summation order (our GEMM's
** against PyTorch's, ~1e-6 relative), GroupNorm's and expf's rounding.
** The intermediate results come from the method vision.retinanet_features:
** the five backbone maps (within 2e-5: 8 to 10 convolutions in another
** summation order on maps of magnitude ~1) and the resized sizes
** (identical).
** retinanet_resnet50_fpn_v2 and retinanet_resnet50_fpn in full run when
** their random-weights files are in build-models/vision/<name>/ (made by the
** script with --full: one 3 x 120 x 160 image, min_size 160, max_size 320,
** 300 detections) and are skipped with a message otherwise; there random
** heads score many boxes alike, and rows whose scores are within 1e-6 of
** their neighbour's are compared as sets (the test prints how many).
** Bad input: an empty image list, an empty batch, a wrong dtype, a 1 x 1
** image (accepted, as torchvision accepts it), a Faster R-CNN file (the
** message names the key), a classifier's file, v1's file as v2.
*/
#include "detector_checks.h"

static const char *const V1_ATTRS = "block=bottleneck;layers=1,1,1,1;widths=4,4,8,8;stem_width=8;fpn_channels=8";
static const char *const V2_ATTRS = "block=bottleneck;layers=1,1,1,1;widths=4,4,8,16;stem_width=8;fpn_channels=32";
static const char *const DETECTOR_ATTRS = "min_size=72;max_size=112;score_thresh=0.2;detections_per_img=15;"
                                          "topk_candidates=40;anchor_sizes=8,10,12,16,20,25,32,40,50,64,80,101,128,"
                                          "161,203";
#define TINY_DIR "vision/detection/retina_tiny"

/* The tiny attributes of case's architecture with head `head` */
static const char *tiny_attrs(char *buf, size_t size, const char *arch_case, const char *head)
{
    snprintf(buf, size, "%s;%s;head=%s", strcmp(arch_case, "v2") == 0 ? V2_ATTRS : V1_ATTRS, DETECTOR_ATTRS, head);
    return buf;
}

/* vision.retinanet of case c's file <c>_model.safetensors, its architecture and head c */
static loom_object *tiny_case(const char *c)
{
    char attrs[512], w[512], file[32];
    snprintf(file, sizeof file, "%s_model.safetensors", c);
    loom_object *obj = NULL;
    if (dc_create(&obj, "vision.retinanet", tiny_attrs(attrs, sizeof attrs, c, c), NULL,
                  dc_data_file(w, sizeof w, TINY_DIR, file)) != LOOM_OK)
        fail_msg("vision.retinanet %s: %s", c, loom_last_error());
    return obj;
}

static void check_case(const char *c)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "retina_tiny/%s_", c);
    loom_object *obj = tiny_case(c);
    /* no equal scores here: labels in place */
    assert_int_equal(dc_check_detections(obj, "vision.retinanet", prefix), 0);
    loom_object_free(obj);
}

/* The _features method: the five maps and the resized sizes against torchvision's. The body's, the FPN's and
** p6 / p7's convolutions sum in another order than PyTorch's (~1e-7 relative each, on maps of magnitude ~1
** through up to 10 convolutions): the maps within 2e-5. */
static void check_features(const char *c)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "retina_tiny/%s_", c);
    loom_object *obj = tiny_case(c);
    dc_check_intermediates(obj, "vision.retinanet_features", prefix, 5, 0);
    loom_object_free(obj);
}

static void tiny_v1_matches_torchvision(void **state)
{
    (void)state;
    check_case("v1");
}

static void tiny_v2_matches_torchvision(void **state)
{
    (void)state;
    check_case("v2");
}

static void tiny_features_match_torchvision(void **state)
{
    (void)state;
    check_features("v1");
    check_features("v2");
}

/* The backbone plan (the onednn kernel, the default where oneDNN is) and
** the dispatched backbone (backend cpu) on one object, one after the
** other: the plan releases the plain conv weights it reorders, and the cpu
** kernel makes them again; then the plan again, reused. The maps agree
** within 2e-5 of their largest value (the two sum their convolutions in
** other orders, as against torchvision), and the second plan run gives the
** first one's bits. */
static void backbone_plan_and_dispatched_agree(void **state)
{
    (void)state;
    loom_object *obj = tiny_case("v2");
    loom_tensor *in[3], *a[6], *b[6], *c[6];
    dc_golden_inputs("retina_tiny/v2_", in);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    opt.backend = "onednn";
    for (int i = 0; i < 6; i++)
        a[i] = b[i] = c[i] = NULL;
    if (loom_run("vision.retinanet_features", (const loom_tensor *const *)in, 3, NULL, a, 6, &opt) != LOOM_OK) {
        print_message("skipped: no onednn kernel (%s)\n", loom_last_error());
        for (int i = 0; i < 3; i++)
            loom_tensor_free(in[i]);
        loom_object_free(obj);
        skip();
    }
    opt.backend = "cpu";
    if (loom_run("vision.retinanet_features", (const loom_tensor *const *)in, 3, NULL, b, 6, &opt) != LOOM_OK)
        fail_msg("cpu after the plan: %s", loom_last_error());
    opt.backend = "onednn";
    if (loom_run("vision.retinanet_features", (const loom_tensor *const *)in, 3, NULL, c, 6, &opt) != LOOM_OK)
        fail_msg("the plan again: %s", loom_last_error());
    for (int l = 0; l < 5; l++) {
        assert_int_equal(loom_numel(a[l]), loom_numel(b[l]));
        const float *pa = loom_data(a[l]), *pb = loom_data(b[l]), *pc = loom_data(c[l]);
        double m = 0, e = 0;
        for (int64_t i = 0; i < loom_numel(a[l]); i++) {
            m = fabs(pb[i]) > m ? fabs(pb[i]) : m;
            e = fabs(pa[i] - pb[i]) > e ? fabs(pa[i] - pb[i]) : e;
        }
        if (e > 2e-5 * m)
            fail_msg("map %d: plan and dispatched differ by %g (max |map| %g)", l, e, m);
        if (memcmp(pa, pc, (size_t)loom_numel(a[l]) * sizeof(float)) != 0)
            fail_msg("map %d: the reused plan gives other bits", l);
    }
    for (int i = 0; i < 6; i++) {
        loom_tensor_free(a[i]);
        loom_tensor_free(b[i]);
        loom_tensor_free(c[i]);
    }
    for (int i = 0; i < 3; i++)
        loom_tensor_free(in[i]);
    loom_object_free(obj);
}

/* An empty list and an empty batch, i64 images, one channel: refused; a 1x1 image: torchvision scales it to
** min_size like any other, accepted, boxes inside the 1x1 image. */
static void bad_input_is_refused(void **state)
{
    (void)state;
    loom_object *obj = tiny_case("v1");
    dc_check_empty_list_refused(obj, "vision.retinanet", 4);
    dc_check_empty_batch_refused(obj, "vision.retinanet", 4);
    dc_check_bad_images_refused(obj, "vision.retinanet", 4);
    dc_check_one_pixel_boxes(obj, "vision.retinanet");
    loom_object_free(obj);
}

static void expect_create_refused(const char *arch_case, const char *head, const char *dir, const char *file,
                                  const char *extra, const char *needle)
{
    char attrs[512], w[512];
    dc_expect_create_refused("vision.retinanet", tiny_attrs(attrs, sizeof attrs, arch_case, head), extra,
                             dc_data_file(w, sizeof w, dir, file), needle);
}

static void wrong_file_names_the_key(void **state)
{
    (void)state;
    const char *rt = TINY_DIR, *ft = "vision/detection/frcnn_tiny";
    /* a Faster R-CNN file (the same body): its FPN takes layer1..4, so its inner_blocks.1 takes layer2's 16
    ** channels where RetinaNet's takes layer3's 32 (inner_blocks.0: 16 channels in both) */
    expect_create_refused("v1", "v1", ft, "v1_model.safetensors", NULL,
                          "key 'backbone.fpn.inner_blocks.1.0.weight' is f32[8,16,1,1] in the weights file, "
                          "expected f32[8,32,1,1]");
    /* v1's file as v2: the heads' GroupNorm is missing */
    expect_create_refused("v1", "v2", rt, "v1_model.safetensors", NULL,
                          "'head.classification_head.conv.0.1.weight'");
    /* v2's file as v1: its head convs have no bias */
    expect_create_refused("v2", "v1", rt, "v2_model.safetensors", NULL, "'head.classification_head.conv.0.0.bias'");
    /* another body: layer1's widths differ */
    expect_create_refused("v1", "v1", rt, "v1_model.safetensors", "widths=8,4,8,8",
                          "key 'backbone.body.layer1.0.conv1.weight'");
    /* a classification model's file */
    expect_create_refused("v1", "v1", "vision/models", "tiny_resnet_bottleneck/model.safetensors", NULL,
                          "'backbone.body.conv1.weight'");
    /* num_classes other than the file's */
    expect_create_refused("v1", "v1", rt, "v1_model.safetensors", "num_classes=91", "cls_logits.weight' has 3 classes");
    /* anchors per location other than the file's: 2 sizes per level x 3 ratios = 6 does not divide 27 rows */
    expect_create_refused("v1", "v1", rt, "v1_model.safetensors", "anchor_sizes=8,10,16,20,32,40,64,80,128,161",
                          "a multiple of the 6 anchors per location");
}

static void bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    const char *rt = TINY_DIR;
    expect_create_refused("v1", "v3", rt, "v1_model.safetensors", NULL, "attribute 'head' must be 'v1' or 'v2'");
    expect_create_refused("v1", "v1", rt, "v1_model.safetensors", "image_mean=0.5,0.5",
                          "attribute 'image_mean' must hold 3");
    expect_create_refused("v1", "v1", rt, "v1_model.safetensors", "anchor_sizes=8,16,32,64",
                          "attribute 'anchor_sizes' holds 4 values");
}

/* vision.<name> in full, from build-models when it is there. The file fits torchvision's COCO_V1 entry: 91
** classes, its num_params (v1's FrozenBatchNorm2d uncounted). Random heads score many boxes alike: rows whose
** torchvision scores are within 1e-6 of their neighbour's (below the float32 differences of two summation
** orders through 60 layers) have no defined order and are compared as sets, their labels as multisets; all
** others in place. */
static void check_full(const char *name)
{
    dc_check_full(name, "min_size=160;max_size=320;weights=COCO_V1", "tools/gen_vision_retinanet_model_goldens.py",
                  0);
}

static void full_v2_matches_torchvision(void **state)
{
    (void)state;
    check_full("retinanet_resnet50_fpn_v2");
}

/* v1: its body's batchnorms without num_batches_tracked, as a pretrained file's FrozenBatchNorm2d */
static void full_v1_matches_torchvision(void **state)
{
    (void)state;
    check_full("retinanet_resnet50_fpn");
}

/* The named classes take torchvision's files only: the tiny v2 file's body is not ResNet-50's */
static void named_class_refuses_another_architecture(void **state)
{
    (void)state;
    char w[512];
    dc_data_file(w, sizeof w, TINY_DIR, "v2_model.safetensors");
    dc_expect_create_refused("vision.retinanet_resnet50_fpn_v2", NULL, NULL, w, "key 'backbone.body.conv1.weight'");
    /* a weight entry the class lacks: refused by name, with the class's entries, before the keys are read */
    dc_expect_create_refused("vision.retinanet_resnet50_fpn_v2", "weights=COCO_V9", NULL, w,
                             "no weight entry 'COCO_V9': its entries are COCO_V1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_v1_matches_torchvision),
        cmocka_unit_test(tiny_v2_matches_torchvision),
        cmocka_unit_test(tiny_features_match_torchvision),
        cmocka_unit_test(backbone_plan_and_dispatched_agree),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(wrong_file_names_the_key),
        cmocka_unit_test(bad_attributes_name_the_attribute),
        cmocka_unit_test(named_class_refuses_another_architecture),
        cmocka_unit_test(full_v2_matches_torchvision),
        cmocka_unit_test(full_v1_matches_torchvision),
    };
    return cmocka_run_group_tests_name("vision_retinanet_model", tests, tu_setup, tu_teardown);
}
