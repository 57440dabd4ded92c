/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_boxes_utils.c - box_convert (every pair of xyxy, xywh, cxcywh),
** box_area (every format; f16 gives f32), clip_boxes_to_image and
** remove_small_boxes (min_size compared in the box dtype, as torch does)
** against torchvision, in f32, f64 and f16, plus the refusals. The kernels
** repeat torch's steps in its precision: results are bit-identical.
*/
#include "boxes_test.h"

static const char *const tags[] = { "f32", "f64", "f16" };
static const char *const fmts[] = { "xyxy", "xywh", "cxcywh" };

/* golden input <tag>_boxes shared by several outputs */
static void check_with_input(const char *op, const char *in_stem, const char *out_stem, const loom_attrs *a)
{
    loom_tensor *b = bt_golden(in_stem, "boxes"), *want = bt_golden(out_stem, "output"), *got;
    if (tu_call(op, (const loom_tensor *[]){ b }, 1, a, NULL, &got) != LOOM_OK)
        fail_msg("%s %s: %s", op, out_stem, loom_last_error());
    bt_assert_close(got, want, 0, 0, out_stem);
    loom_tensor_free(b);
    loom_tensor_free(want);
    loom_tensor_free(got);
}

static void box_convert_and_area_match_torchvision(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        char in_stem[64], out_stem[96];
        snprintf(in_stem, sizeof in_stem, "box_convert_%s", tags[t]);
        for (int i = 0; i < 3; i++) {
            for (int o = 0; o < 3; o++) {
                loom_attrs *a = bt_attrs();
                assert_int_equal(loom_attrs_set_string(a, "in_fmt", fmts[i]), LOOM_OK);
                assert_int_equal(loom_attrs_set_string(a, "out_fmt", fmts[o]), LOOM_OK);
                snprintf(out_stem, sizeof out_stem, "box_convert_%s_%s_%s", tags[t], fmts[i], fmts[o]);
                check_with_input("vision.box_convert", in_stem, out_stem, a);
                loom_attrs_free(a);
            }
            loom_attrs *a = bt_attrs();
            assert_int_equal(loom_attrs_set_string(a, "fmt", fmts[i]), LOOM_OK);
            snprintf(out_stem, sizeof out_stem, "box_area_%s_%s", tags[t], fmts[i]);
            check_with_input("vision.box_area", in_stem, out_stem, a);
            loom_attrs_free(a);
        }
    }
}

static void clip_and_remove_small_match_torchvision(void **state)
{
    (void)state;
    for (int t = 0; t < 3; t++) {
        char stem[64];
        loom_attrs *a = bt_attrs();
        assert_int_equal(loom_attrs_set_ints(a, "size", (const int64_t[]){ 120, 90 }, 2), LOOM_OK);
        snprintf(stem, sizeof stem, "clip_boxes_to_image_%s", tags[t]);
        bt_check("vision.clip_boxes_to_image", stem, (const char *[]){ "boxes" }, 1, a, 0, 0);
        loom_attrs_free(a);
        a = bt_attrs();
        assert_int_equal(loom_attrs_set_float(a, "min_size", 6.0), LOOM_OK);
        snprintf(stem, sizeof stem, "remove_small_boxes_%s", tags[t]);
        bt_check("vision.remove_small_boxes", stem, (const char *[]){ "boxes" }, 1, a, 0, 0);
        loom_attrs_free(a);
    }
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "min_size", 10.000000001), LOOM_OK);
    bt_check("vision.remove_small_boxes", "remove_small_boxes_f32_round", (const char *[]){ "boxes" }, 1, a, 0, 0);
    loom_attrs_free(a);
}

static void utils_refuse_bad_input(void **state)
{
    (void)state;
    const int64_t s35[2] = { 3, 5 }, s34[2] = { 3, 4 }, s234[3] = { 2, 3, 4 };
    loom_tensor *b35 = bt_zeros(LOOM_DTYPE_F32, 2, s35), *b34 = bt_zeros(LOOM_DTYPE_F32, 2, s34);
    loom_tensor *b234 = bt_zeros(LOOM_DTYPE_F32, 3, s234);
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_string(a, "in_fmt", "xyxy"), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "out_fmt", "yxyx"), LOOM_OK);
    bt_refused("vision.box_convert", (const loom_tensor *[]){ b34 }, 1, a, "'out_fmt' must be one of");
    loom_attrs_free(a);
    a = bt_attrs();
    assert_int_equal(loom_attrs_set_string(a, "in_fmt", "xyxy"), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "out_fmt", "xywh"), LOOM_OK);
    bt_refused("vision.box_convert", (const loom_tensor *[]){ b35 }, 1, a, "'boxes' must be [.., 4]");
    loom_attrs_free(a);
    bt_refused("vision.box_area", (const loom_tensor *[]){ b35 }, 1, NULL, "'boxes' must be [.., 4]");
    a = bt_attrs();
    assert_int_equal(loom_attrs_set_ints(a, "size", (const int64_t[]){ 1, 2, 3 }, 3), LOOM_OK);
    bt_refused("vision.clip_boxes_to_image", (const loom_tensor *[]){ b34 }, 1, a, "'size' must be [height, width]");
    loom_attrs_free(a);
    a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "min_size", 1.0), LOOM_OK);
    bt_refused("vision.remove_small_boxes", (const loom_tensor *[]){ b234 }, 1, a, "3 dimensions");
    bt_refused("vision.remove_small_boxes", (const loom_tensor *[]){ b35 }, 1, a, "'boxes' must be [N, 4]");
    loom_attrs_free(a);
    loom_tensor_free(b35);
    loom_tensor_free(b34);
    loom_tensor_free(b234);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(box_convert_and_area_match_torchvision),
        cmocka_unit_test(clip_and_remove_small_match_torchvision),
        cmocka_unit_test(utils_refuse_bad_input),
    };
    return cmocka_run_group_tests_name("vision_boxes_utils", tests, tu_setup, tu_teardown);
}
