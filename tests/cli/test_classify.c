/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_classify.c - `loom classify` end to end: the built loom ($LOOM_CLI)
** with every pack of the build, on the two JPEGs of tests/data/vision/classify;
** and `loom demo decode`, the same pipeline's stages on the demo's JPEG.
**
** Against torchvision (tools/gen_vision_classify_goldens.py): a resnet18
** with seeded random weights, saved as a reference-script checkpoint and
** converted by tools/convert_torchvision.py, classified with IMAGENET1K_V1's
** preset; torchvision's top-5 (decode_image RGB, weights.transforms(),
** softmax, topk) is in expected.json beside it. Those files (~90 MB) are made
** at goldens time into build-models/vision/classify (or
** $LOOM_VISION_MODELS/classify); the tests that need them skip with a
** message when they are absent. The refusals need no model.
**
** Tolerance: the same categories in the same order, scores within 1e-5.
** Decode and the uint8 bilinear preset are bit-exact with torchvision, so
** both sides feed the model the same floats; the logits then differ by the
** f32 summation orders of the convolutions (~1e-6 of the largest logit),
** moving a softmax score by ~1e-6 (8e-7 seen). The generator checks that
** consecutive top-6 scores are at least 5e-4 apart, so the order is stable.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_spawn.h"

static char tmpdir[256];
static const char *cli;
static char data_dir[512], models_dir[512];
static char img_wide[600], img_tall[600], weights[600], expected[600];

static int have_models(void)
{
    return access(weights, R_OK) == 0 && access(expected, R_OK) == 0;
}

#define NEED_MODELS()                                                                              \
    do {                                                                                           \
        if (!have_models()) {                                                                      \
            printf("# skipped: %s absent (tools/gen_vision_classify_goldens.py makes it at goldens " \
                   "time)\n", weights);                                                            \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

static cJSON *parse_json(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    if (j == NULL)
        print_error("not JSON:\n%s\n", text);
    assert_non_null(j);
    return j;
}

/* The "images" entry of a classify --json answer whose "image" ends with name. */
static const cJSON *image_entry(const cJSON *root, const char *name)
{
    const cJSON *img;
    cJSON_ArrayForEach(img, cJSON_GetObjectItemCaseSensitive(root, "images")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(img, "image");
        if (cJSON_IsString(n) && strlen(n->valuestring) >= strlen(name)
            && strcmp(n->valuestring + strlen(n->valuestring) - strlen(name), name) == 0)
            return img;
    }
    fail_msg("no image %s in the answer", name);
    return NULL;
}

/* got's top list against torchvision's for each image of want. */
static void expect_same_top(const cJSON *got, const cJSON *want)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(want, "images")) {
        const char *name = cJSON_GetObjectItemCaseSensitive(w, "image")->valuestring;
        const cJSON *g = image_entry(got, name);
        const cJSON *gt = cJSON_GetObjectItemCaseSensitive(g, "top"), *wt = cJSON_GetObjectItemCaseSensitive(w, "top");
        assert_int_equal(cJSON_GetArraySize(gt), cJSON_GetArraySize(wt));
        double worst = 0;
        for (int k = 0; k < cJSON_GetArraySize(wt); k++) {
            const cJSON *ge = cJSON_GetArrayItem(gt, k), *we = cJSON_GetArrayItem(wt, k);
            const int gi = cJSON_GetObjectItemCaseSensitive(ge, "index")->valueint;
            const int wi = cJSON_GetObjectItemCaseSensitive(we, "index")->valueint;
            if (gi != wi)
                fail_msg("%s: rank %d is class %d, torchvision says %d", name, k + 1, gi, wi);
            assert_string_equal(cJSON_GetObjectItemCaseSensitive(ge, "category")->valuestring,
                                cJSON_GetObjectItemCaseSensitive(we, "category")->valuestring);
            const double gs = cJSON_GetObjectItemCaseSensitive(ge, "score")->valuedouble;
            const double ws = cJSON_GetObjectItemCaseSensitive(we, "score")->valuedouble;
            worst = fmax(worst, fabs(gs - ws));
            if (!(fabs(gs - ws) <= 1e-5))
                fail_msg("%s: rank %d score %.8f, torchvision %.8f", name, k + 1, gs, ws);
        }
        printf("# %s: top-5 as torchvision, max |score - torchvision's| = %.2e\n", name, worst);
    }
}

static void top5_matches_torchvision(void **state)
{
    (void)state;
    NEED_MODELS();
    char *text = cli_slurp(expected);
    cJSON *want = parse_json(text);
    free(text);
    /* both images in one batch, then one image per forward: the same answer */
    static const char *const batches[] = { "2", "1" };
    for (int b = 0; b < 2; b++) {
        cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", weights,
                                                     "--attr", "weights=IMAGENET1K_V1", "--batch", batches[b],
                                                     "--json", img_wide, img_tall));
        cli_expect_status(&r, 0);
        cJSON *got = parse_json(r.out);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(got, "weights")->valuestring, "IMAGENET1K_V1");
        expect_same_top(got, want);
        cJSON_Delete(got);
        cli_result_free(&r);
    }
    cJSON_Delete(want);
}

static void text_output_and_topk(void **state)
{
    (void)state;
    NEED_MODELS();
    /* DEFAULT is resnet18's IMAGENET1K_V1; the text names the image and the categories */
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", weights,
                                                 "--topk", "2", img_wide));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "scene_wide.jpg\n");
    cli_expect_contains(r.out, "   1. ");
    cli_expect_contains(r.out, "   2. ");
    cli_expect_contains(r.out, "(585)");
    assert_null(strstr(r.out, "   3. "));
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", weights, "--topk", "3",
                                      "--json", img_tall));
    cli_expect_status(&r, 0);
    cJSON *got = parse_json(r.out);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(image_entry(got, "scene_tall.jpg"), "top")),
                     3);
    cJSON_Delete(got);
    cli_result_free(&r);
}

/* A missing file and a file that is not an image are reported by name; the
** image between them is still classified; the exit status is 1. */
static void bad_images_reported_others_classified(void **state)
{
    (void)state;
    NEED_MODELS();
    char missing[600], not_image[600];
    snprintf(missing, sizeof missing, "%s/no_such_photo.jpg", tmpdir);
    snprintf(not_image, sizeof not_image, "%s/not_an_image.jpg", tmpdir);
    FILE *f = fopen(not_image, "wb");
    assert_non_null(f);
    fputs("this is text, not a JPEG", f);
    fclose(f);
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", weights,
                                                 "--json", missing, img_wide, not_image));
    cli_expect_status(&r, 1);
    cli_expect_contains(r.err, "no_such_photo.jpg");
    cli_expect_contains(r.err, "not_an_image.jpg");
    cJSON *got = parse_json(r.out);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(image_entry(got, "no_such_photo.jpg"), "error"));
    assert_non_null(cJSON_GetObjectItemCaseSensitive(image_entry(got, "not_an_image.jpg"), "error"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(image_entry(got, "scene_wide.jpg"), "top")),
                     5);
    cJSON_Delete(got);
    cli_result_free(&r);
}

/* Refusals before any image is read: none needs the model files. */
static void refusals(void **state)
{
    (void)state;
    char small[600];
    snprintf(small, sizeof small, "%s/../models/missing_conv1.safetensors", data_dir);
    static const struct {
        const char *model, *entry, *file_kind, *message;
        int status;
    } cases[] = {
        /* a class without weight entries */
        { "vision.nms", "weights=DEFAULT", "small", "has no weight entries", 1 },
        /* an entry the class does not have: its entries are named */
        { "vision.resnet18", "weights=IMAGENET1K_V2", "small", "its entries are IMAGENET1K_V1", 1 },
        /* a file that does not fit the class */
        { "vision.resnet18", "weights=IMAGENET1K_V1", "small", "conv1.weight", 1 },
        /* a file that is not there */
        { "vision.resnet18", "weights=IMAGENET1K_V1", "none", "no_such.safetensors", 1 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char none[600];
        snprintf(none, sizeof none, "%s/no_such.safetensors", tmpdir);
        cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", cases[i].model, "--weights",
                                                     strcmp(cases[i].file_kind, "small") == 0 ? small : none,
                                                     "--attr", cases[i].entry, img_wide));
        cli_expect_status(&r, cases[i].status);
        cli_expect_contains(r.err, cases[i].message);
        cli_result_free(&r);
    }
    /* with --json the failure is a JSON error object */
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", "vision.nms", "--weights", small, "--json",
                                                 img_wide));
    cli_expect_status(&r, 1);
    cJSON *j = parse_json(r.out);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(j, "error"));
    cJSON_Delete(j);
    cli_result_free(&r);
}

/* A file whose classes do not fit the entry (a fine-tuned 10-class head,
** made by tools/gen_vision_models_goldens.py). */
static void file_not_fitting_entry(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/../resnet18/classes10.safetensors", models_dir);
    if (access(path, R_OK) != 0) {
        printf("# skipped: %s absent (tools/gen_vision_models_goldens.py makes it at goldens time)\n", path);
        skip();
    }
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", path,
                                                 "--attr", "weights=IMAGENET1K_V1", img_wide));
    cli_expect_status(&r, 1);
    cli_expect_contains(r.err, "does not fit IMAGENET1K_V1");
    cli_result_free(&r);
}

static void usage_errors(void **state)
{
    (void)state;
    const struct {
        const char *const *argv;
        const char *message;
    } cases[] = {
        { CLI_ARGV("classify", "--weights", "w.safetensors", "a.jpg"), "--model CLASS is required" },
        { CLI_ARGV("classify", "--model", "vision.resnet18", "a.jpg"), "--weights" },
        { CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", "w.safetensors"), "no IMAGE" },
        { CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", "w", "--topk", "0", "a.jpg"), "--topk" },
        { CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", "w", "--batch", "x", "a.jpg"), "--batch" },
        { CLI_ARGV("classify", "--model", "vision.resnet18", "--weights", "w", "--attr", "weights", "a.jpg"),
          "KEY=VALUE" },
        { CLI_ARGV("classify", "--colour", "a.jpg"), "unknown option" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = cli_run(cli, tmpdir, cases[i].argv);
        cli_expect_status(&r, 2);
        cli_expect_contains(r.err, cases[i].message);
        cli_result_free(&r);
    }
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("classify", "--help"));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "usage: loom classify");
    cli_result_free(&r);
}

/* `loom demo decode` (examples/demos/vision_decode.c): every stage is
** timed, the fused preset gives the [3, 224, 224] output, and the two
** routes stay within one level of 255. */
static void decode_demo_runs(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("demo", "decode"));
    cli_expect_status(&r, 0);
    static const char *const want[] = { "decode_jpeg RGB", "u8[3,480,640]", "resize 232 bilinear antialias",
                                        "center_crop 224", "to_dtype float32 scale", "normalize",
                                        "preprocess (fused)", "f32[3,224,224]", "FNV-1a", "at most 1 level" };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cli_expect_contains(r.out, want[i]);
    cli_result_free(&r);
}

static int setup(void **state)
{
    (void)state;
    cli = getenv("LOOM_CLI");
    const char *data = getenv("LOOM_TEST_DATA"), *models = getenv("LOOM_VISION_MODELS"),
               *src = getenv("LOOM_SOURCE_ROOT");
    if (cli == NULL || data == NULL || src == NULL) {
        fprintf(stderr, "LOOM_CLI, LOOM_TEST_DATA and LOOM_SOURCE_ROOT must be set (meson test does)\n");
        return -1;
    }
    snprintf(data_dir, sizeof data_dir, "%s/vision/classify", data);
    if (models != NULL && models[0] != '\0')
        snprintf(models_dir, sizeof models_dir, "%s/classify", models);
    else
        snprintf(models_dir, sizeof models_dir, "%s/build-models/vision/classify", src);
    snprintf(img_wide, sizeof img_wide, "%s/scene_wide.jpg", data_dir);
    snprintf(img_tall, sizeof img_tall, "%s/scene_tall.jpg", data_dir);
    snprintf(weights, sizeof weights, "%s/resnet18.safetensors", models_dir);
    snprintf(expected, sizeof expected, "%s/expected.json", models_dir);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-classify-XXXXXX");
    return mkdtemp(tmpdir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const files[] = { "stdout.txt", "stderr.txt", "not_an_image.jpg" };
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
        cmocka_unit_test(top5_matches_torchvision),
        cmocka_unit_test(text_output_and_topk),
        cmocka_unit_test(bad_images_reported_others_classified),
        cmocka_unit_test(refusals),
        cmocka_unit_test(file_not_fitting_entry),
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(decode_demo_runs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
