/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_detect.c - `loom detect` end to end: the built loom ($LOOM_CLI) with
** every pack of the build, the tiny v1 Faster R-CNN of
** tests/data/vision/detection/frcnn_tiny (vision.fasterrcnn, its body's
** architecture as attributes; box_detections_per_img 12 and
** box_score_thresh 0 fix the count) on tests/data/vision/classify's JPEG:
** the detections as text and JSON, the PNG --draw writes, and refusals
** (no image, a bad --min-score, a file of another model) with their
** messages; and the tiny v2 RetinaNet of retina_tiny (text and --draw).
** The detections themselves are checked against torchvision in
** tests/vision/detection/test_fasterrcnn.c; here the command's plumbing.
** The category names of a weight entry (--attr weights=COCO_V1): `loom
** info` lists a named detector's entry; on a class without entries the
** entry is refused by name; with the random-weights
** fasterrcnn_mobilenet_v3_large_320_fpn of build-models (made by
** tools/gen_vision_fasterrcnn_mobilenet_goldens.py --full; skipped when
** absent: a COCO-sized file is 74 MB), every detection carries the COCO
** name of its label in the JSON and the text, and --draw labels the boxes.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_spawn.h"

static char tmpdir[256];
static const char *cli;
static char image[600], weights[600], other[600], drawn[600], coco[700], mask_weights[600];

#define TINY_ARGS                                                                                  \
    "--model", "vision.fasterrcnn", "--attr", "layers=1,1,1,1", "--attr", "widths=4,4,8,8", "--attr",    \
        "stem_width=8", "--attr", "fpn_channels=8", "--attr", "min_size=64", "--attr", "max_size=96", "--attr", \
        "box_score_thresh=0", "--attr", "box_detections_per_img=12"

static void json_and_text(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("detect", TINY_ARGS, "--weights", weights, "--min-score", "0",
                                                 "--json", image));
    cli_expect_status(&r, 0);
    cJSON *got = cJSON_Parse(r.out);
    assert_non_null(got);
    const cJSON *dets = cJSON_GetObjectItemCaseSensitive(got, "detections");
    assert_int_equal(cJSON_GetArraySize(dets), 12);
    double last = 2.0;
    for (int i = 0; i < 12; i++) {
        const cJSON *d = cJSON_GetArrayItem(dets, i);
        const double label = cJSON_GetObjectItemCaseSensitive(d, "label")->valuedouble;
        const double score = cJSON_GetObjectItemCaseSensitive(d, "score")->valuedouble;
        const cJSON *box = cJSON_GetObjectItemCaseSensitive(d, "box");
        assert_true(label >= 1 && label <= 3);
        assert_true(score <= last);
        last = score;
        assert_int_equal(cJSON_GetArraySize(box), 4);
        /* the image is 320 x 240 (scene_wide.jpg): boxes lie on it */
        for (int c = 0; c < 4; c++) {
            const double v = cJSON_GetArrayItem(box, c)->valuedouble;
            assert_true(v >= 0.0 && v <= (c % 2 == 0 ? 320.0 : 240.0));
        }
    }
    cJSON_Delete(got);
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("detect", TINY_ARGS, "--weights", weights, "--min-score", "0", image));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "12 detections with score >= 0 (of 12)");
    cli_expect_contains(r.out, "label");
    cli_result_free(&r);
}

static void draw_writes_a_png(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("detect", TINY_ARGS, "--weights", weights, "--min-score", "0",
                                                 "--draw", drawn, image));
    cli_expect_status(&r, 0);
    cli_result_free(&r);
    FILE *f = fopen(drawn, "rb");
    assert_non_null(f);
    unsigned char sig[8] = { 0 };
    assert_int_equal(fread(sig, 1, 8, f), 8);
    fclose(f);
    static const unsigned char png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    assert_memory_equal(sig, png, 8);
}

/* A Mask R-CNN (the tiny v1 of tests/data/vision/detection/maskrcnn_tiny): each detection's mask area in JSON
** and text, within its box's area (a mask is pasted into its box, grown by 30/28 and 1 px), and --draw. */
static void masks_of_a_mask_rcnn(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("detect", "--model", "vision.maskrcnn", "--attr", "layers=1,1,1,1",
                                                 "--attr", "widths=4,4,8,8", "--attr", "stem_width=8", "--attr",
                                                 "fpn_channels=8", "--attr", "min_size=64", "--attr", "max_size=96",
                                                 "--attr", "box_score_thresh=0", "--attr", "box_detections_per_img=12",
                                                 "--weights", mask_weights, "--min-score", "0", "--json", image));
    cli_expect_status(&r, 0);
    cJSON *got = cJSON_Parse(r.out);
    assert_non_null(got);
    const cJSON *dets = cJSON_GetObjectItemCaseSensitive(got, "detections");
    assert_int_equal(cJSON_GetArraySize(dets), 12);
    double total = 0.0;
    for (int i = 0; i < 12; i++) {
        const cJSON *d = cJSON_GetArrayItem(dets, i), *box = cJSON_GetObjectItemCaseSensitive(d, "box");
        const cJSON *area = cJSON_GetObjectItemCaseSensitive(d, "mask_area");
        assert_non_null(area);
        const double bw = cJSON_GetArrayItem(box, 2)->valuedouble - cJSON_GetArrayItem(box, 0)->valuedouble;
        const double bh = cJSON_GetArrayItem(box, 3)->valuedouble - cJSON_GetArrayItem(box, 1)->valuedouble;
        assert_true(area->valuedouble >= 0.0);
        assert_true(area->valuedouble <= (bw * 30.0 / 28.0 + 2.0) * (bh * 30.0 / 28.0 + 2.0));
        total += area->valuedouble;
    }
    assert_true(total > 0.0);
    cJSON_Delete(got);
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("detect", "--model", "vision.maskrcnn", "--attr", "layers=1,1,1,1",
                                      "--attr", "widths=4,4,8,8", "--attr", "stem_width=8", "--attr",
                                      "fpn_channels=8", "--attr", "min_size=64", "--attr", "max_size=96",
                                      "--attr", "box_score_thresh=0", "--attr", "box_detections_per_img=12",
                                      "--weights", mask_weights, "--min-score", "0", "--draw", drawn, image));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, " px");
    cli_result_free(&r);
    FILE *f = fopen(drawn, "rb");
    assert_non_null(f);
    unsigned char sig[8] = { 0 };
    assert_int_equal(fread(sig, 1, 8, f), 8);
    fclose(f);
    static const unsigned char png[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    assert_memory_equal(sig, png, 8);
}

static void bad_use_is_refused(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("detect", TINY_ARGS, "--weights", weights));
    assert_int_not_equal(r.status, 0);
    cli_expect_contains(r.err, "one IMAGE is wanted");
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("detect", TINY_ARGS, "--weights", weights, "--min-score", "2", image));
    assert_int_not_equal(r.status, 0);
    cli_expect_contains(r.err, "--min-score takes a score in [0, 1]");
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("detect", "--model", "vision.fasterrcnn_resnet50_fpn_v2", "--weights", other,
                                      image));
    assert_int_not_equal(r.status, 0);
    cli_expect_contains(r.err, "'backbone.body.conv1.weight'");
    cli_result_free(&r);
}

/* A RetinaNet: the tiny v2 one of tests/data/vision/detection/retina_tiny (vision.retinanet; detections_per_img
** 15 and score_thresh 0.2 fix the count), as text and with --draw; its labels are 0..2 (RetinaNet's). */
static void retinanet_detects_and_draws(void **state)
{
    (void)state;
    char w[700];
    snprintf(w, sizeof w, "%s/vision/detection/retina_tiny/v2_model.safetensors", getenv("LOOM_TEST_DATA"));
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("detect", "--model", "vision.retinanet", "--attr", "layers=1,1,1,1",
                                                 "--attr", "widths=4,4,8,16", "--attr", "stem_width=8", "--attr",
                                                 "fpn_channels=32", "--attr", "head=v2", "--attr", "min_size=72",
                                                 "--attr", "max_size=112", "--attr", "score_thresh=0.2", "--attr",
                                                 "detections_per_img=15", "--attr",
                                                 "anchor_sizes=8,10,12,16,20,25,32,40,50,64,80,101,128,161,203",
                                                 "--weights", w, "--min-score", "0", "--draw", drawn, image));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "15 detections with score >= 0 (of 15)");
    cli_expect_contains(r.out, "label");
    cli_result_free(&r);
    FILE *f = fopen(drawn, "rb");
    assert_non_null(f);
    fclose(f);
}

/* the COCO names of a few labels torchvision's _COCO_CATEGORIES has (the whole list: test_weights_meta.c) */
static const char *coco_name(int label)
{
    static const struct { int label; const char *name; } known[] = {
        { 1, "person" }, { 12, "N/A" }, { 18, "dog" }, { 51, "bowl" }, { 62, "chair" }, { 89, "hair drier" },
        { 90, "toothbrush" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].label == label)
            return known[i].name;
    return NULL;
}

static void entry_names_the_detections(void **state)
{
    (void)state;
    /* loom info lists a named detector's entry */
    cli_result r0 = cli_run(cli, tmpdir, CLI_ARGV("info", "vision.fasterrcnn_resnet50_fpn_v2"));
    cli_expect_status(&r0, 0);
    cli_expect_contains(r0.out, "COCO_V1: box_map 46.7 (COCO-val2017), 43712278 params, 91 classes (COCO)");
    cli_result_free(&r0);
    /* a class without entries: the entry is refused by name before the file is read */
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("detect", TINY_ARGS, "--attr", "weights=COCO_V1", "--weights",
                                                 weights, image));
    assert_int_not_equal(r.status, 0);
    cli_expect_contains(r.err, "vision.fasterrcnn has no weight entry 'COCO_V1'");
    cli_result_free(&r);
    FILE *f = fopen(coco, "rb");
    if (f == NULL) {
        print_message("skipped: no %s (tools/gen_vision_fasterrcnn_mobilenet_goldens.py --full makes it)\n", coco);
        skip();
    }
    fclose(f);
#define COCO_ARGS "--model", "vision.fasterrcnn_mobilenet_v3_large_320_fpn", "--weights", coco, "--attr", \
        "weights=COCO_V1", "--attr", "box_score_thresh=0", "--attr", "box_detections_per_img=20", "--min-score", "0"
    r = cli_run(cli, tmpdir, CLI_ARGV("detect", COCO_ARGS, "--json", image));
    cli_expect_status(&r, 0);
    cJSON *got = cJSON_Parse(r.out);
    assert_non_null(got);
    const cJSON *dets = cJSON_GetObjectItemCaseSensitive(got, "detections");
    assert_int_equal(cJSON_GetArraySize(dets), 20);
    int checked = 0;
    for (int i = 0; i < 20; i++) {
        const cJSON *d = cJSON_GetArrayItem(dets, i);
        const int label = (int)cJSON_GetObjectItemCaseSensitive(d, "label")->valuedouble;
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(d, "category");
        assert_true(cJSON_IsString(cat));
        if (coco_name(label) != NULL) {
            assert_string_equal(cat->valuestring, coco_name(label));
            checked++;
        }
    }
    print_message("20 detections named, %d of them checked against known COCO names\n", checked);
    cJSON_Delete(got);
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("detect", COCO_ARGS, "--draw", drawn, image));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "20 detections with score >= 0 (of 20)");
    cli_result_free(&r);
    f = fopen(drawn, "rb");
    assert_non_null(f);
    fclose(f);
#undef COCO_ARGS
}

static int setup(void **state)
{
    (void)state;
    cli = getenv("LOOM_CLI");
    const char *data = getenv("LOOM_TEST_DATA");
    if (cli == NULL || data == NULL) {
        fprintf(stderr, "LOOM_CLI and LOOM_TEST_DATA must be set (meson test does)\n");
        return -1;
    }
    snprintf(image, sizeof image, "%s/vision/classify/scene_wide.jpg", data);
    snprintf(weights, sizeof weights, "%s/vision/detection/frcnn_tiny/v1_model.safetensors", data);
    snprintf(other, sizeof other, "%s/vision/detection/frcnn_tiny/v2_model.safetensors", data);
    snprintf(mask_weights, sizeof mask_weights, "%s/vision/detection/maskrcnn_tiny/v1_model.safetensors", data);
    snprintf(coco, sizeof coco, "%s/../../build-models/vision/fasterrcnn_mobilenet_v3_large_320_fpn/model.safetensors",
             data);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-detect-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    snprintf(drawn, sizeof drawn, "%s/drawn.png", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const files[] = { "stdout.txt", "stderr.txt", "drawn.png" };
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_and_text),
        cmocka_unit_test(draw_writes_a_png),
        cmocka_unit_test(masks_of_a_mask_rcnn),
        cmocka_unit_test(bad_use_is_refused),
        cmocka_unit_test(retinanet_detects_and_draws),
        cmocka_unit_test(entry_names_the_detections),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
