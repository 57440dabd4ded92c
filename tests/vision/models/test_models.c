/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models.c - the ResNet-family classes against torchvision
** (tools/gen_vision_models_goldens.py): each class's logits for a seeded
** [2, 3, 64, 64] batch (and resnet50's for [1, 3, 224, 224]) with random
** weights and non-trivial batchnorm statistics, a fine-tuned 10-class head,
** the plan reused across calls and re-made for a new shape, and the
** messages of files that do not fit (each names the key and both shapes).
**
** The weights (tens to hundreds of MB) are made at goldens time into
** build-models/vision/<name>/ (or $LOOM_VISION_MODELS/<name>/); a class
** whose files are absent is skipped with a message. The small files of the
** error cases are committed (tests/data/vision/models).
**
** Tolerance: max |got - want| <= 1e-4 * max |logit| (the bound).
** Both sides compute in f32; the folding of batchnorm into the convs and
** the summation orders of the GEMMs differ, each moving a layer's output by
** a few ulps, which ~50 layers compound to ~1e-6 relative in practice.
** The test runs with the default backends (vision.conv2d on onednn when
** built) and, as vision-models-cpu, with LOOM_BACKENDS keeping it on cpu.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "model_goldens.h"
#include "resnet_memory.h"

static const char *const classes[] = { "resnet18", "resnet34", "resnet50", "resnet101", "resnet152",
                                       "resnext50_32x4d", "resnext101_32x8d", "resnext101_64x4d",
                                       "wide_resnet50_2", "wide_resnet101_2" };

static void every_class_matches_torchvision(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        ran += check_class(classes[i], "model.safetensors", "input.npy", "logits.npy");
    ran += check_class("resnet50", "model.safetensors", "input224.npy", "logits224.npy");
    if (ran == 0)
        skip();
}

/* conv_algorithm=winograd (the onednn plan's 3x3 stride-1 convs on
** oneDNN's Winograd kernel): the same 1e-4 x max |logit| bound against
** torchvision (the transforms add roundings, measured 1e-6 relative); a
** value other than direct or winograd is refused by name. Without oneDNN
** the attribute changes nothing and the check still holds. */
static void winograd_matches_torchvision(void **state)
{
    (void)state;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "conv_algorithm", "winograd"), LOOM_OK);
    int ran = check_class_with("resnet18", "model.safetensors", "input.npy", "logits.npy", a);
    ran += check_class_with("resnet50", "model.safetensors", "input224.npy", "logits224.npy", a);
    ran += check_class_with("wide_resnet50_2", "model.safetensors", "input.npy", "logits.npy", a);
    char w[512];
    if (model_file(w, sizeof w, "resnet18", "model.safetensors")) {
        assert_int_equal(loom_attrs_set_string(a, "conv_algorithm", "fft"), LOOM_OK);
        loom_object *obj = NULL;
        assert_int_equal(loom_object_create(&obj, "vision.resnet18", a, w), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "attribute 'conv_algorithm' must be 'direct' or 'winograd', "
                                                  "not 'fft'"));
    }
    loom_attrs_free(a);
    if (ran == 0)
        skip();
}

/* fc 512 -> 10: the classes come from the file */
static void fine_tuned_head_loads(void **state)
{
    (void)state;
    if (!check_class("resnet18", "classes10.safetensors", "input.npy", "logits10.npy"))
        skip();
}

/* a new input shape re-plans the buffers; the first shape still agrees */
static void new_shape_replans(void **state)
{
    (void)state;
    char w[512], x[512];
    if (!model_file(w, sizeof w, "resnet18", "model.safetensors") || !model_file(x, sizeof x, "resnet18", "input.npy")) {
        printf("# SKIP resnet18: %s is absent\n", w);
        skip();
    }
    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "vision.resnet18", NULL, w), LOOM_OK);
    loom_tensor *in = npy_file(x);
    loom_tensor *two = forward(obj, "vision.resnet18", in);
    /* the first image alone, at [1, 3, 64, 64] */
    int64_t shape[4] = { 1, 3, 64, 64 };
    loom_tensor *one = tu_random_f32(4, shape, 1);
    memcpy(loom_data(one), loom_data(in), 3 * 64 * 64 * sizeof(float));
    loom_tensor *got1 = forward(obj, "vision.resnet18", one);
    for (int64_t i = 0; i < 1000; i++)
        if (fabs(tu_get(got1, i) - tu_get(two, i)) > 1e-5 * (1.0 + fabs(tu_get(two, i))))
            fail_msg("logit %lld of the single image differs from the batch's: %g vs %g", (long long)i,
                     tu_get(got1, i), tu_get(two, i));
    loom_tensor *again = forward(obj, "vision.resnet18", in);
    tu_assert_identical(again, two, "back to batch 2");
    loom_tensor *all[] = { in, two, one, got1, again };
    for (size_t i = 0; i < 5; i++)
        loom_tensor_free(all[i]);
    loom_object_free(obj);
}

static void expect_create_error(const char *weights, const char *const *needles)
{
    loom_object *obj = NULL;
    if (loom_object_create(&obj, "vision.resnet18", NULL, weights) == LOOM_OK)
        fail_msg("%s was accepted", weights);
    for (int i = 0; needles[i] != NULL; i++)
        if (strstr(loom_last_error(), needles[i]) == NULL)
            fail_msg("%s: message \"%s\" does not say %s", weights, loom_last_error(), needles[i]);
}

static void wrong_files_name_the_key(void **state)
{
    (void)state;
    char path[512];
    static const struct { const char *file; const char *needles[4]; } cases[] = {
        { "missing_conv1", { "no key 'conv1.weight'", "f32[64,3,7,7]", NULL } },
        { "wrong_shape", { "'conv1.weight'", "f32[64,3,5,5]", "f32[64,3,7,7]", NULL } },
        { "wrong_dtype", { "'conv1.weight'", "f64[64,3,7,7]", "expected f32[64,3,7,7]", NULL } },
        { "truncated", { "'conv1.weight'", "outside the data", NULL } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(path, sizeof path, "%s", tu_data_path("vision/models"));
        size_t len = strlen(path);
        snprintf(path + len, sizeof path - len, "/%s.safetensors", cases[i].file);
        expect_create_error(path, cases[i].needles);
    }
    const char *none[] = { "needs a weights file", NULL };
    loom_object *obj = NULL;
    assert_int_not_equal(loom_object_create(&obj, "vision.resnet50", NULL, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), none[0]));
    if (model_file(path, sizeof path, "resnet18", "extra_key.safetensors")) {
        const char *extra[] = { "unexpected key 'fc2.weight'", "f32[3,3]", NULL };
        expect_create_error(path, extra);
    } else {
        printf("# SKIP the unexpected key: %s is absent\n", path);
    }
    /* resnet18's file is not a resnet34: the first key layer1.2.* it lacks */
    if (model_file(path, sizeof path, "resnet18", "model.safetensors")) {
        assert_int_not_equal(loom_object_create(&obj, "vision.resnet34", NULL, path), LOOM_OK);
        assert_non_null(strstr(loom_last_error(), "no key 'layer1.2.conv1.weight'"));
        assert_int_not_equal(loom_object_create(&obj, "vision.resnet50", NULL, path), LOOM_OK);
        assert_non_null(strstr(loom_last_error(), "'layer1.0.conv1.weight' is f32[64,64,3,3]"));
    }
}

/* torchvision's entries, chosen by name: a file that fits is accepted,
** DEFAULT is an alias, an unknown name and a head of another size are
** refused by name (resnet18s of zeros made in memory) */
static void weight_entries_are_checked(void **state)
{
    (void)state;
    static const struct { int64_t classes; const char *entry; const char *needle; } cases[] = {
        { 1000, "IMAGENET1K_V1", NULL },
        { 1000, "DEFAULT", NULL },
        { 1000, "IMAGENET1K_V2", "no weight entry 'IMAGENET1K_V2': its entries are IMAGENET1K_V1 and DEFAULT" },
        { 10, "IMAGENET1K_V1", "IMAGENET1K_V1 has 1000 classes but the file's fc.weight has 10" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_attrs *a;
        assert_int_equal(loom_attrs_new(&a), LOOM_OK);
        assert_int_equal(loom_attrs_set_string(a, "weights", cases[i].entry), LOOM_OK);
        rm_keys *k = NULL;
        loom_object *o = resnet18_zeros_with(&k, cases[i].classes, a);
        if (cases[i].needle == NULL && o == NULL)
            fail_msg("weights=%s: %s", cases[i].entry, loom_last_error());
        if (cases[i].needle != NULL) {
            if (o != NULL)
                fail_msg("weights=%s with %lld classes was accepted", cases[i].entry, (long long)cases[i].classes);
            if (strstr(loom_last_error(), cases[i].needle) == NULL)
                fail_msg("message \"%s\" does not say %s", loom_last_error(), cases[i].needle);
        }
        loom_object_free(o);
        resnet18_zeros_free(k);
        loom_attrs_free(a);
    }
}

static void bad_input_is_refused(void **state)
{
    (void)state;
    char w[512];
    if (!model_file(w, sizeof w, "resnet18", "model.safetensors"))
        skip();
    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "vision.resnet18", NULL, w), LOOM_OK);
    int64_t shape[4] = { 1, 4, 32, 32 };
    loom_tensor *x = tu_random_f32(4, shape, 3), *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    const loom_tensor *in[1] = { x };
    assert_int_not_equal(loom_run("vision.resnet18", in, 1, NULL, &out, 1, &opt), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'input'"));
    loom_tensor_free(x);
    loom_object_free(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_class_matches_torchvision),
        cmocka_unit_test(winograd_matches_torchvision),
        cmocka_unit_test(fine_tuned_head_loads),
        cmocka_unit_test(new_shape_replans),
        cmocka_unit_test(wrong_files_name_the_key),
        cmocka_unit_test(weight_entries_are_checked),
        cmocka_unit_test(bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
