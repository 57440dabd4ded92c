/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_transforms_sample.c - vision.transform_sample:
**   - fed torchvision's recorded draws, every pipeline of sample/cases.txt
**     gives what torchvision.transforms.v2.Compose gives on the same
**     {image, boxes, masks, labels}: uint8 images, boxes, masks and labels
**     identical (the same kernels as the single ops, whose goldens are
**     identical), float32 images within 1e-5 (ColorJitter, Normalize);
**     ElasticTransform's boxes within 1e-4 pixels: its displacement is a
**     float32 Gaussian blur of the noise, summed in another order than
**     PyTorch's convolution (a few ulps of a value below 1), and the boxes
**     are the displaced corners themselves (the resampled image and masks
**     of these cases are identical all the same);
**   - RandomErasing (value='random' too) passes boxes and masks through;
**     MixUp and CutMix take a batch with its [N] class labels and give
**     [N, K] float32 labels, within 1e-6 of torchvision's (two float32
**     products and their sum, which the compiler may fuse);
**   - seeded: the same seed, the same sample; another seed, another;
**   - a bad pipeline fails naming the transform's index and the argument.
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

#define DATA "vision/transforms/sample/"

static loom_tensor *golden(const char *name)
{
    char rel[160];
    snprintf(rel, sizeof rel, DATA "%s", name);
    return tu_npy(rel);
}

static char *read_text(const char *name)
{
    char rel[160];
    snprintf(rel, sizeof rel, DATA "%s", name);
    FILE *f = fopen(tu_data_path(rel), "rb");
    if (!f)
        fail_msg("cannot open %s", rel);
    static char buf[4096];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static loom_attrs *sample_attrs(const char *pipeline, const char *format, const char *seed)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "pipeline", pipeline), LOOM_OK);
    if (format)
        assert_int_equal(loom_attrs_set_string(a, "format", format), LOOM_OK);
    if (seed)
        assert_int_equal(loom_attrs_parse(a, "vision.transform_sample", "seed", seed), LOOM_OK);
    return a;
}

static void every_pipeline_matches_torchvision(void **state)
{
    (void)state;
    FILE *f = fopen(tu_data_path(DATA "cases.txt"), "r");
    assert_non_null(f);
    char line[512];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char name[96], inputs[256], format[16], file[128];
        assert_int_equal(sscanf(line, "%95s %255s %15s", name, inputs, format), 3);
        loom_tensor *in[5] = { NULL };
        int k = 0;
        for (char *save = NULL, *tok = strtok_r(inputs, "+", &save); tok && k < 5; tok = strtok_r(NULL, "+", &save), k++)
            in[k] = strcmp(tok, "-") == 0 ? NULL : golden(tok);
        snprintf(file, sizeof file, "%s.json", name);
        loom_attrs *a = sample_attrs(read_text(file), format, NULL);
        loom_tensor *outs[4] = { NULL };
        if (loom_run("vision.transform_sample", (const loom_tensor *const *)in, 5, a, outs, 4, NULL) != LOOM_OK)
            fail_msg("%s: %s", name, loom_last_error());
        static const char *const parts[4] = { "image", "boxes", "masks", "labels" };
        for (int p = 0; p < 4; p++) {
            char g[128];
            snprintf(g, sizeof g, "%s_%s", name, parts[p]);
            char rel[160];
            snprintf(rel, sizeof rel, DATA "%s", g);
            if (p == 2 && !tu_npy_exists(rel))
                continue;   /* no masks in this case */
            loom_tensor *want = golden(g);
            if (p == 0 && loom_tensor_dtype_of(want) == LOOM_DTYPE_F32)
                tu_assert_close(outs[p], want, 0.0, 1e-5, g);
            else if (p == 1 && strncmp(name, "elastic", 7) == 0)
                tu_assert_close(outs[p], want, 0.0, 1e-4, g);   /* see the top: the blurred displacement */
            else if (p == 3 && loom_tensor_dtype_of(want) == LOOM_DTYPE_F32)
                tu_assert_close(outs[p], want, 0.0, 1e-6, g);   /* mixed labels: two float32 products and a sum */
            else
                tu_assert_identical(outs[p], want, g);
            loom_tensor_free(want);
        }
        for (int p = 0; p < 4; p++)
            loom_tensor_free(outs[p]);
        for (int p = 0; p < 5; p++)
            loom_tensor_free(in[p]);
        loom_attrs_free(a);
        cases++;
    }
    fclose(f);
    assert_true(cases >= 43);
}

static loom_tensor *run_seeded(const loom_tensor *const *in, const char *pipeline, const char *seed)
{
    loom_attrs *a = sample_attrs(pipeline, NULL, seed);
    loom_tensor *outs[4] = { NULL };
    if (loom_run("vision.transform_sample", in, 4, a, outs, 4, NULL) != LOOM_OK)
        fail_msg("seed %s: %s", seed, loom_last_error());
    for (int p = 1; p < 4; p++)
        loom_tensor_free(outs[p]);
    loom_attrs_free(a);
    return outs[0];
}

static void a_seed_reproduces_its_sample(void **state)
{
    (void)state;
    const char *pipeline = "[{\"RandomResizedCrop\": {\"size\": [20, 20]}}, {\"RandomHorizontalFlip\": {}},"
                           " {\"ColorJitter\": {\"brightness\": 0.5, \"hue\": 0.2}}]";
    const loom_tensor *in[4] = { golden("img_u8"), golden("boxes_xyxy"), golden("mask_u8"), golden("labels") };
    loom_tensor *a = run_seeded(in, pipeline, "5"), *b = run_seeded(in, pipeline, "5"), *c = run_seeded(in, pipeline, "6");
    tu_assert_identical(a, b, "seed 5 twice");
    assert_true(memcmp(loom_data(a), loom_data(c), (size_t)loom_numel(a)) != 0);
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(c);
    for (int i = 0; i < 4; i++)
        loom_tensor_free((loom_tensor *)in[i]);
}

static void a_bad_pipeline_names_the_transform_and_argument(void **state)
{
    (void)state;
    static const struct { const char *pipeline, *words[2]; } bad[] = {
        { "[{\"Resize\": {\"size\": [8]}}, {\"RandomCrop\": {}}]", { "'pipeline'[1]", "'size'" } },
        { "[{\"Resize\": {\"size\": [8], \"antialias\": 3}}]", { "'pipeline'[0]", "'antialias'" } },
        { "[{\"Resize\": {\"sizes\": [8]}}]", { "'pipeline'[0]", "'sizes'" } },
        { "[{\"CenterCrop\": {\"size\": [8]}}, {\"Sharpen\": {}}]", { "'pipeline'[1]", "Sharpen" } },
        { "[{\"Pad\": {\"padding\": [1, 2, 3]}}]", { "'pipeline'[0]", "'padding'" } },
        { "[{\"ColorJitter\": {\"hue\": 0.7}}]", { "'pipeline'[0]", "'hue'" } },
        { "[{\"RandomHorizontalFlip\": {\"p\": 2}}]", { "'pipeline'[0]", "'p'" } },
        { "[{\"ToDtype\": {\"dtype\": \"float16\"}}]", { "'pipeline'[0]", "'dtype'" } },
        { "[{\"RandomCrop\": {\"size\": [80, 80]}}]", { "'pipeline'[0]", "RandomCrop" } },
        { "[{\"Pad\": {\"padding\": 1}}, {\"RandomIoUCrop\": {}}]", { "'pipeline'[1]", "'boxes'" } },
        { "[{\"RandomIoUCrop\": {\"sampler_options\": []}}]", { "'pipeline'[0]", "'sampler_options'" } },
        { "[{\"Resize\": {\"size\": [8]}", { "'pipeline'", "JSON" } },
        { "{\"Resize\": {}}", { "'pipeline'", "list" } },
        { "[[\"Resize\", {}]]", { "'pipeline'[0]", "Transform" } },
        { "[{\"RandomErasing\": {\"value\": \"noise\"}}]", { "'pipeline'[0]", "'value'" } },
        { "[{\"RandomErasing\": {\"scale\": [0.5, 1.5]}}]", { "'pipeline'[0]", "'scale'" } },
        { "[{\"RandomErasing\": {\"ratio\": [0, 2]}}]", { "'pipeline'[0]", "'ratio'" } },
        { "[{\"RandomErasing\": {\"value\": [1, 2]}}]", { "'pipeline'[0]", "'value'" } },
        { "[{\"MixUp\": {\"num_classes\": 0}}]", { "'pipeline'[0]", "'num_classes'" } },
        { "[{\"CutMix\": {\"alpha\": -1}}]", { "'pipeline'[0]", "'alpha'" } },
        { "[{\"CutMix\": {\"labels_getter\": null}}]", { "'pipeline'[0]", "'labels_getter'" } },
        { "[{\"Resize\": {\"size\": 8}}, {\"CutMix\": {\"num_classes\": 3}}]", { "'pipeline'[1]", "'labels'" } },
    };
    loom_tensor *x = golden("img_u8");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        loom_attrs *a = sample_attrs(bad[i].pipeline, NULL, NULL);
        loom_tensor *outs[4] = { NULL };
        const loom_tensor *in[1] = { x };
        if (loom_run("vision.transform_sample", in, 1, a, outs, 4, NULL) == LOOM_OK)
            fail_msg("%s: accepted", bad[i].pipeline);
        for (int w = 0; w < 2; w++)
            if (!strstr(loom_last_error(), bad[i].words[w]))
                fail_msg("%s: '%s' does not name %s", bad[i].pipeline, loom_last_error(), bad[i].words[w]);
        loom_attrs_free(a);
    }
    /* the augmentations refuse boxes and masks, as torchvision's */
    loom_tensor *bx = golden("boxes_xyxy");
    loom_attrs *a = sample_attrs("[{\"CenterCrop\": {\"size\": 20}}, {\"RandAugment\": {}}]", NULL, NULL);
    loom_tensor *outs[4] = { NULL };
    const loom_tensor *in[2] = { x, bx };
    assert_int_not_equal(loom_run("vision.transform_sample", in, 2, a, outs, 4, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'pipeline'[1] (RandAugment)"));
    loom_attrs_free(a);
    loom_tensor_free(bx);
    loom_tensor_free(x);
}

/* MixUp and CutMix: the batch and its labels checked, naming the step. */
static void a_mix_step_checks_its_batch(void **state)
{
    (void)state;
    loom_tensor *batch = golden("batch_u8"), *labels = golden("batch_labels"), *img = golden("img_u8"),
                *boxes = golden("boxes_xyxy"), *box_labels = golden("labels");
    static const struct { const char *pipeline; int image, with_boxes; const char *words[2]; } bad[] = {
        { "[{\"MixUp\": {\"num_classes\": 5}}]", 0, 0, { "'pipeline'[0] (MixUp)", "float32" } },
        { "[{\"CutMix\": {}}]", 0, 0, { "'pipeline'[0] (CutMix)", "'num_classes'" } },
        { "[{\"CutMix\": {\"num_classes\": 3}}]", 0, 0, { "'pipeline'[0] (CutMix)", "'labels'[2] = 4" } },
        { "[{\"CutMix\": {\"num_classes\": 5}}]", 1, 0, { "'pipeline'[0] (CutMix)", "'image'" } },
        { "[{\"CutMix\": {\"num_classes\": 5}}]", 1, 1, { "'pipeline'[0] (CutMix)", "bounding boxes" } },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        loom_attrs *a = sample_attrs(bad[i].pipeline, NULL, NULL);
        loom_tensor *outs[4] = { NULL };
        const loom_tensor *in[4] = { bad[i].image ? img : batch, bad[i].with_boxes ? boxes : NULL, NULL,
                                     bad[i].with_boxes ? box_labels : labels };
        if (loom_run("vision.transform_sample", in, 4, a, outs, 4, NULL) == LOOM_OK)
            fail_msg("%s: accepted", bad[i].pipeline);
        for (int w = 0; w < 2; w++)
            if (!strstr(loom_last_error(), bad[i].words[w]))
                fail_msg("%s: '%s' does not name %s", bad[i].pipeline, loom_last_error(), bad[i].words[w]);
        loom_attrs_free(a);
    }
    /* seeded: the labels come out one-hot mixed, each row summing to 1 */
    loom_attrs *a = sample_attrs("[{\"RandomErasing\": {\"value\": \"random\", \"p\": 1}}, "
                                 "{\"CutMix\": {\"num_classes\": 5}}]", NULL, "3");
    loom_tensor *outs[4] = { NULL };
    const loom_tensor *in[4] = { batch, NULL, NULL, labels };
    assert_int_equal(loom_run("vision.transform_sample", in, 4, a, outs, 4, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_dtype_of(outs[3]), LOOM_DTYPE_F32);
    assert_int_equal(outs[3]->ndim, 2);
    assert_int_equal(outs[3]->shape[1], 5);
    for (int64_t r = 0; r < 4; r++) {
        double sum = 0;
        for (int c = 0; c < 5; c++)
            sum += ((const float *)loom_data(outs[3]))[r * 5 + c];
        assert_true(fabs(sum - 1.0) < 1e-6);
    }
    for (int p = 0; p < 4; p++)
        loom_tensor_free(outs[p]);
    loom_attrs_free(a);
    loom_tensor_free(batch);
    loom_tensor_free(labels);
    loom_tensor_free(img);
    loom_tensor_free(boxes);
    loom_tensor_free(box_labels);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_pipeline_matches_torchvision),
        cmocka_unit_test(a_seed_reproduces_its_sample),
        cmocka_unit_test(a_bad_pipeline_names_the_transform_and_argument),
        cmocka_unit_test(a_mix_step_checks_its_batch),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
