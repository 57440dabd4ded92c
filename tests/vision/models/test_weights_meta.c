/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_weights_meta.c - vision.weights_meta: an entry of the weights table
** as JSON, with the values torchvision 0.29.2 gives for
** ResNet50_Weights.IMAGENET1K_V2 (transforms(): resize 232, crop 224,
** bilinear, ImageNet mean and std; num_params 25557032; acc@1 80.858;
** categories[0] "tench", [999] "toilet tissue"), DEFAULT resolved as
** torchvision resolves it, short class names, and the refusals: a class
** without entries and an unknown entry, each naming what there is.
** The detectors' entries as torchvision 0.29.2 has them: every one of the
** eight is COCO_V1 and DEFAULT, preset ObjectDetection, num_params and
** COCO-val2017 box_map (FasterRCNN_ResNet50_FPN_V2: 43712278, 46.7;
** MaskRCNN_ResNet50_FPN: 44401393, box 37.9, mask 34.6), the 91
** _COCO_CATEGORIES names ([0] "__background__", [1] "person", [12] "N/A",
** [90] "toothbrush"). The retinanet_* and maskrcnn_* entries are looked up
** by name, whether or not this build has those classes.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tu_ops.h"

static cJSON *meta(const char *model, const char *weights)
{
    loom_attrs *a = NULL;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "model", model), LOOM_OK);
    if (weights != NULL)
        assert_int_equal(loom_attrs_set_string(a, "weights", weights), LOOM_OK);
    if (tu_call("vision.weights_meta", NULL, 0, a, NULL, &out) != LOOM_OK)
        fail_msg("vision.weights_meta %s %s: %s", model, weights ? weights : "(default)", loom_last_error());
    loom_attrs_free(a);
    cJSON *j = cJSON_ParseWithLength(loom_data(out), loom_tensor_nbytes(out));
    loom_tensor_free(out);
    assert_non_null(j);
    return j;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v == NULL)
        fail_msg("no key '%s'", key);
    return v;
}

static void resnet50_v2_as_torchvision(void **state)
{
    (void)state;
    cJSON *j = meta("vision.resnet50", "IMAGENET1K_V2");
    assert_string_equal(get(j, "model")->valuestring, "vision.resnet50");
    assert_string_equal(get(j, "name")->valuestring, "IMAGENET1K_V2");
    assert_true(cJSON_IsTrue(get(j, "default")));
    assert_string_equal(get(j, "url")->valuestring, "https://download.pytorch.org/models/resnet50-11ad3fa6.pth");
    const cJSON *tr = get(j, "transforms");
    assert_int_equal(get(tr, "resize_size")->valueint, 232);
    assert_int_equal(get(tr, "crop_size")->valueint, 224);
    assert_string_equal(get(tr, "interpolation")->valuestring, "bilinear");
    assert_true(cJSON_IsTrue(get(tr, "antialias")));
    static const double mean[3] = { 0.485, 0.456, 0.406 }, std[3] = { 0.229, 0.224, 0.225 };
    for (int c = 0; c < 3; c++) {
        /* printed with 17 digits: the table's doubles come back exactly */
        assert_true(cJSON_GetArrayItem(get(tr, "mean"), c)->valuedouble == mean[c]);
        assert_true(cJSON_GetArrayItem(get(tr, "std"), c)->valuedouble == std[c]);
    }
    assert_true(get(j, "num_params")->valuedouble == 25557032.0);
    assert_true(fabs(get(get(get(j, "metrics"), "ImageNet-1K"), "acc@1")->valuedouble - 80.858) < 1e-12);
    assert_true(cJSON_IsNull(get(j, "license")));
    const cJSON *cats = get(j, "categories");
    assert_int_equal(cJSON_GetArraySize(cats), 1000);
    assert_string_equal(cJSON_GetArrayItem(cats, 0)->valuestring, "tench");
    assert_string_equal(cJSON_GetArrayItem(cats, 999)->valuestring, "toilet tissue");
    cJSON_Delete(j);
}

static void default_and_short_names(void **state)
{
    (void)state;
    /* torchvision: ResNet50_Weights.DEFAULT is IMAGENET1K_V2, ResNet18's is V1 */
    cJSON *j = meta("resnet50", NULL);
    assert_string_equal(get(j, "name")->valuestring, "IMAGENET1K_V2");
    cJSON_Delete(j);
    j = meta("vision.resnet18", "DEFAULT");
    assert_string_equal(get(j, "name")->valuestring, "IMAGENET1K_V1");
    assert_int_equal(get(get(j, "transforms"), "resize_size")->valueint, 256);
    cJSON_Delete(j);
    j = meta("vision.resnet50", "IMAGENET1K_V1");
    assert_false(cJSON_IsTrue(get(j, "default")));
    cJSON_Delete(j);
}

static void refusals_name_what_there_is(void **state)
{
    (void)state;
    static const struct {
        const char *model, *weights, *message;
    } cases[] = {
        { "vision.nms", "DEFAULT", "'model' vision.nms has no weight entries" },
        { "vision.resnet18", "IMAGENET1K_V2", "its entries are IMAGENET1K_V1 and DEFAULT" },
        { "vision.resnet50", "V2", "no weight entry 'V2'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_attrs *a = NULL;
        loom_tensor *out = NULL;
        assert_int_equal(loom_attrs_new(&a), LOOM_OK);
        assert_int_equal(loom_attrs_set_string(a, "model", cases[i].model), LOOM_OK);
        assert_int_equal(loom_attrs_set_string(a, "weights", cases[i].weights), LOOM_OK);
        assert_int_equal(tu_call("vision.weights_meta", NULL, 0, a, NULL, &out), LOOM_EINVAL);
        if (strstr(loom_last_error(), cases[i].message) == NULL)
            fail_msg("expected '%s' in: %s", cases[i].message, loom_last_error());
        assert_null(out);
        loom_attrs_free(a);
    }
}

static void detectors_as_torchvision(void **state)
{
    (void)state;
    static const struct {
        const char *model;
        double num_params, box_map, mask_map;   /* mask_map < 0: none */
    } want[] = {
        { "vision.fasterrcnn_resnet50_fpn", 41755286, 37.0, -1 },
        { "vision.fasterrcnn_resnet50_fpn_v2", 43712278, 46.7, -1 },
        { "vision.fasterrcnn_mobilenet_v3_large_fpn", 19386354, 32.8, -1 },
        { "vision.fasterrcnn_mobilenet_v3_large_320_fpn", 19386354, 22.8, -1 },
        { "vision.retinanet_resnet50_fpn", 34014999, 36.4, -1 },
        { "vision.retinanet_resnet50_fpn_v2", 38198935, 41.5, -1 },
        { "vision.maskrcnn_resnet50_fpn", 44401393, 37.9, 34.6 },
        { "vision.maskrcnn_resnet50_fpn_v2", 46359409, 47.4, 41.8 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cJSON *j = meta(want[i].model, "DEFAULT");
        assert_string_equal(get(j, "name")->valuestring, "COCO_V1");
        assert_true(cJSON_IsTrue(get(j, "default")));
        assert_string_equal(get(get(j, "transforms"), "preset")->valuestring, "ObjectDetection");
        assert_true(get(j, "num_params")->valuedouble == want[i].num_params);
        const cJSON *coco = get(get(j, "metrics"), "COCO-val2017");
        assert_true(fabs(get(coco, "box_map")->valuedouble - want[i].box_map) < 1e-12);
        const cJSON *mask = cJSON_GetObjectItemCaseSensitive(coco, "mask_map");
        if (want[i].mask_map < 0)
            assert_null(mask);
        else
            assert_true(mask != NULL && fabs(mask->valuedouble - want[i].mask_map) < 1e-12);
        assert_int_equal(get(j, "num_classes")->valueint, 91);
        const cJSON *cats = get(j, "categories");
        assert_int_equal(cJSON_GetArraySize(cats), 91);
        assert_string_equal(cJSON_GetArrayItem(cats, 0)->valuestring, "__background__");
        assert_string_equal(cJSON_GetArrayItem(cats, 1)->valuestring, "person");
        assert_string_equal(cJSON_GetArrayItem(cats, 12)->valuestring, "N/A");
        assert_string_equal(cJSON_GetArrayItem(cats, 90)->valuestring, "toothbrush");
        assert_true(strstr(get(j, "url")->valuestring, "https://download.pytorch.org/models/") != NULL);
        cJSON_Delete(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resnet50_v2_as_torchvision),
        cmocka_unit_test(default_and_short_names),
        cmocka_unit_test(refusals_name_what_there_is),
        cmocka_unit_test(detectors_as_torchvision),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
