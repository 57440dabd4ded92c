/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_fasterrcnn.c - the Faster R-CNN classes (vision.fasterrcnn,
** vision.fasterrcnn_resnet50_fpn[_v2]) against torchvision, on tiny
** FasterRCNNs built from torchvision's own classes with random weights
** (tools/gen_vision_fasterrcnn_goldens.py; tests/data/vision/detection/
** frcnn_tiny/): a Bottleneck ResNet body (layers 1, 1, 1, 1, widths 4, 4,
** 8, 8, stem 8), an 8-channel FPN, 4 classes, v1's parts and v2's, run on
** a list of two images of different sizes (3 x 40 x 56 and 3 x 50 x 36,
** min_size 64, max_size 96: the batch is 96 x 96).
** Tolerances: the issue's. The same detection counts per image, boxes
** within 1e-3 px, scores within 1e-4, labels and order identical, except
** within runs of equal scores (torchvision's sort leaves their order open),
** compared as sets; the test prints how many rows were. The differences
** come from the convolutions' and linears' summation order (our GEMM's
** against PyTorch's, ~1e-6 relative) and expf, carried through.
** The intermediate results come from the method vision.fasterrcnn_rpn:
** the FPN maps (within 2e-5: the body's and the FPN's convolutions in
** another summation order), the resized sizes (identical) and the
** proposals (within 1e-3 px, the same counts per image).
** fasterrcnn_resnet50_fpn_v2 and fasterrcnn_resnet50_fpn in full run when
** their random-weights files are in build-models/vision/<name>/ (made by the script
** with --full: one 3 x 120 x 160 image, min_size 160, box_score_thresh 0,
** 100 detections), and is skipped with a message otherwise; there random
** heads score many boxes alike, and rows whose scores are within 1e-6 of
** their neighbour's are compared as sets (the test prints how many).
** Bad input: an empty image list, a wrong dtype, a file of another model
** (the message names the key), and a 1 x 1 image (accepted, as
** torchvision accepts it).
*/
#include "detector_checks.h"

static const char *const TINY_ATTRS = "block=bottleneck;layers=1,1,1,1;widths=4,4,8,8;stem_width=8;fpn_channels=8;"
                                      "min_size=64;max_size=96;rpn_pre_nms_top_n_test=60;"
                                      "rpn_post_nms_top_n_test=25;box_score_thresh=0;box_detections_per_img=12";
#define TINY_DIR "vision/detection/frcnn_tiny"

/* The tiny attributes with head v1|v2 */
static const char *tiny_attrs(char *buf, size_t size, const char *head)
{
    snprintf(buf, size, "%s;head=%s", TINY_ATTRS, head);
    return buf;
}

/* vision.fasterrcnn of the tiny case's file <head>_model.safetensors with head v1|v2 */
static loom_object *tiny_case(const char *head)
{
    char attrs[512], file[32], w[512];
    snprintf(file, sizeof file, "%s_model.safetensors", head);
    loom_object *obj = NULL;
    if (dc_create(&obj, "vision.fasterrcnn", tiny_attrs(attrs, sizeof attrs, head), NULL,
                  dc_data_file(w, sizeof w, TINY_DIR, file)) != LOOM_OK)
        fail_msg("vision.fasterrcnn %s: %s", head, loom_last_error());
    return obj;
}

static void check_case(const char *head)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "frcnn_tiny/%s_", head);
    loom_object *obj = tiny_case(head);
    dc_check_detections(obj, "vision.fasterrcnn", prefix);
    loom_object_free(obj);
}

/* The _rpn method: the FPN maps, image sizes and proposals against torchvision's (the intermediate results).
** The body's and the FPN's convolutions sum in another order than PyTorch's (~1e-7 relative each, on maps of
** magnitude ~1 through 11 convolutions; 5.3e-6 seen): the maps within 2e-5. */
static void check_rpn(const char *head)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "frcnn_tiny/%s_", head);
    loom_object *obj = tiny_case(head);
    dc_check_intermediates(obj, "vision.fasterrcnn_rpn", prefix, 5, 1);
    loom_object_free(obj);
}

static void tiny_rpn_matches_torchvision(void **state)
{
    (void)state;
    check_rpn("v1");
    check_rpn("v2");
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

/* One NCHW batch is the list of its images: the first image alone, as [1, 3, H, W], gives the list's first
** image's detections (the batch it is transformed into differs, so they are compared with the golden of a
** one-image list: here the same image's own run through the jagged form). */
static void nchw_batch_is_a_list(void **state)
{
    (void)state;
    loom_object *obj = tiny_case("v1");
    loom_tensor *images = dt_golden_at("frcnn_tiny/v1_", "images");
    const int64_t shape[4] = { 1, 3, 40, 56 }, n = 3 * 40 * 56;
    loom_tensor batch = { .data = loom_data(images), .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 4,
                          .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = (int64_t *)shape };
    int64_t offs[2] = { 0, n }, sizes[2] = { 40, 56 }, os[1] = { 2 }, ss[2] = { 1, 2 }, fs[1] = { n };
    loom_tensor flat = batch, to = batch, tsz = batch;
    flat.ndim = 1;
    flat.shape = fs;
    to = (loom_tensor){ .data = offs, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1, .dtype = { LOOM_DL_INT, 64, 1 },
                        .shape = os };
    tsz = (loom_tensor){ .data = sizes, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2, .dtype = { LOOM_DL_INT, 64, 1 },
                         .shape = ss };
    loom_tensor *a[4], *b[4];
    const loom_tensor *list[3] = { &flat, &to, &tsz }, *nchw[1] = { &batch };
    if (dc_run(obj, "vision.fasterrcnn", list, 3, a, 4) != LOOM_OK
        || dc_run(obj, "vision.fasterrcnn", nchw, 1, b, 4) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    for (int i = 0; i < 4; i++)
        tu_assert_identical(b[i], a[i], "NCHW against the list");
    print_message("one NCHW image: %lld detections, as its list\n", (long long)a[0]->shape[0]);
    dt_free(a, 4);
    dt_free(b, 4);
    loom_tensor_free(images);
    loom_object_free(obj);
}

/* An empty list and an empty batch, i64 images, one channel: refused; a 1x1 image: torchvision scales it to
** min_size like any other, accepted, its boxes inside it. */
static void bad_input_is_refused(void **state)
{
    (void)state;
    loom_object *obj = tiny_case("v1");
    dc_check_empty_list_refused(obj, "vision.fasterrcnn", 4);
    dc_check_empty_batch_refused(obj, "vision.fasterrcnn", 4);
    dc_check_bad_images_refused(obj, "vision.fasterrcnn", 4);
    dc_check_one_pixel_boxes(obj, "vision.fasterrcnn");
    loom_object_free(obj);
}

static void expect_create_refused(const char *head, const char *file, const char *extra, const char *needle)
{
    char attrs[512], w[512];
    dc_expect_create_refused("vision.fasterrcnn", tiny_attrs(attrs, sizeof attrs, head), extra,
                             dc_data_file(w, sizeof w, TINY_DIR, file), needle);
}

static void wrong_file_names_the_key(void **state)
{
    (void)state;
    /* v1's file as v2: the FPN's batchnorm is missing */
    expect_create_refused("v2", "v1_model.safetensors", NULL, "'backbone.fpn.inner_blocks.0.1.weight'");
    /* v2's file as v1: its FPN convs have no bias */
    expect_create_refused("v1", "v2_model.safetensors", NULL, "'backbone.fpn.inner_blocks.0.0.bias'");
    /* another body: layer1's widths differ */
    expect_create_refused("v1", "v1_model.safetensors", "widths=8,4,8,8", "key 'backbone.body.layer1.0.conv1.weight'");
    /* a classification model's file */
    char w[512];
    dc_expect_create_refused("vision.fasterrcnn", TINY_ATTRS, NULL,
                             dc_data_file(w, sizeof w, "vision/models", "tiny_resnet_bottleneck/model.safetensors"),
                             "'backbone.body.conv1.weight'");
    /* num_classes other than the file's */
    expect_create_refused("v1", "v1_model.safetensors", "num_classes=91", "cls_score.weight' has 4 classes");
}

static void bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    expect_create_refused("v3", "v1_model.safetensors", NULL, "attribute 'head' must be 'v1' or 'v2', not 'v3'");
    expect_create_refused("v1", "v1_model.safetensors", "image_mean=0.5,0.5", "attribute 'image_mean' must hold 3");
    expect_create_refused("v1", "v1_model.safetensors", "layers=1,1,1", "attribute 'layers' must hold 4 ints");
}

/* vision.<name> in full, from build-models when it is there. Random heads score many boxes alike: rows whose
** torchvision scores are within 1e-6 of their neighbour's (below the float32 differences of two summation
** orders through 60 layers) have no defined order and are compared as sets, their labels as multisets; all
** others in place. */
static void check_full(const char *name)
{
    dc_check_full(name, "min_size=160;max_size=320;box_score_thresh=0", "tools/gen_vision_fasterrcnn_goldens.py", 0);
}

static void full_v2_matches_torchvision(void **state)
{
    (void)state;
    check_full("fasterrcnn_resnet50_fpn_v2");
}

/* v1: its body's batchnorms without num_batches_tracked, as a pretrained file's FrozenBatchNorm2d */
static void full_v1_matches_torchvision(void **state)
{
    (void)state;
    check_full("fasterrcnn_resnet50_fpn");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_v1_matches_torchvision),
        cmocka_unit_test(tiny_v2_matches_torchvision),
        cmocka_unit_test(tiny_rpn_matches_torchvision),
        cmocka_unit_test(nchw_batch_is_a_list),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(wrong_file_names_the_key),
        cmocka_unit_test(bad_attributes_name_the_attribute),
        cmocka_unit_test(full_v2_matches_torchvision),
        cmocka_unit_test(full_v1_matches_torchvision),
    };
    return cmocka_run_group_tests_name("vision_fasterrcnn", tests, tu_setup, tu_teardown);
}
