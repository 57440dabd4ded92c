/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_detection_heads.c - vision.multiscale_roi_align and
** vision.rcnn_postprocess_detections against torchvision's
** MultiScaleRoIAlign and RoIHeads.postprocess_detections
** (tools/gen_vision_detection_goldens.py).
**
** Tolerances:
**  - multiscale_roi_align: identical. The level of each box is the same
**    float32 expression (the boxes keep clear of level boundaries by more
**    than log2's ulp), and vision.roi_align is torchvision's bits
**    (tests/vision/roi). The boxes (sides 8 to 800 px on a 256 px batch)
**    reach all four levels; a second case pools from one map at its
**    inferred scale.
**  - postprocess_detections: counts per image (offsets) and labels
**    identical, boxes within 1e-3 px, scores within 1e-4, in the same
**    order: softmax and the decode use glibc's expf where PyTorch uses
**    Sleef's (1 ulp) and sum the exps in another order (a few ulps); the
**    random logits give no equal scores, which the test checks (the order
**    is otherwise ambiguous).
*/
#include "detection_test.h"

static void multiscale_matches_torchvision(void **state)
{
    (void)state;
    loom_tensor *in[7] = { dt_golden("multiscale", "boxes"), dt_golden("multiscale", "boxes_offsets"),
                           dt_golden("multiscale", "image_sizes"), dt_golden("multiscale", "x0"),
                           dt_golden("multiscale", "x1"), dt_golden("multiscale", "x2"), dt_golden("multiscale", "x3") };
    loom_tensor *out[1], *want = dt_golden("multiscale", "output");
    if (dt_run("vision.multiscale_roi_align", (const loom_tensor *const *)in, 7, "output_size=7", out, 1) != LOOM_OK)
        fail_msg("multiscale: %s", loom_last_error());
    tu_assert_identical(out[0], want, "multiscale four levels");
    loom_tensor_free(want);
    loom_tensor_free(out[0]);
    /* one map (x1 alone, as featmap_names ['0'] of a map at 1/8) */
    const loom_tensor *one[4] = { in[0], in[1], in[2], in[4] };
    want = dt_golden("multiscale_one", "output");
    if (dt_run("vision.multiscale_roi_align", one, 4, "output_size=3,5", out, 1) != LOOM_OK)
        fail_msg("multiscale_one: %s", loom_last_error());
    tu_assert_identical(out[0], want, "multiscale one level");
    loom_tensor_free(want);
    loom_tensor_free(out[0]);
    /* a gap in the maps, and boxes of a list that does not add up */
    const loom_tensor *gap[6] = { in[0], in[1], in[2], in[3], NULL, in[5] };
    dt_refused("vision.multiscale_roi_align", gap, 6, "output_size=7", 1, "x2 is given but x1 is not");
    int64_t *off = loom_data(in[1]);
    off[2] = 20;
    dt_refused("vision.multiscale_roi_align", (const loom_tensor *const *)in, 7, "output_size=7", 1,
               "must run from 0 to the 21 boxes");
    dt_free(in, 7);
}

static void detections_match_torchvision(void **state)
{
    (void)state;
    static const char *const names[5] = { "class_logits", "box_regression", "proposals", "proposals_offsets",
                                          "image_sizes" };
    loom_tensor *in[5];
    for (int i = 0; i < 5; i++)
        in[i] = dt_golden("detections", names[i]);
    loom_tensor *out[4];
    if (dt_run("vision.rcnn_postprocess_detections", (const loom_tensor *const *)in, 5,
               "score_thresh=0.15;nms_thresh=0.5;detections_per_img=20", out, 4) != LOOM_OK)
        fail_msg("detections: %s", loom_last_error());
    loom_tensor *boxes = dt_golden("detections", "boxes"), *scores = dt_golden("detections", "scores");
    loom_tensor *labels = dt_golden("detections", "labels"), *offsets = dt_golden("detections", "offsets");
    tu_assert_identical(out[3], offsets, "detections offsets");
    tu_assert_identical(out[2], labels, "detections labels");
    const float *s = loom_data(scores);
    const int64_t *o = loom_data(offsets);
    for (int64_t b = 0; b + 1 < offsets->shape[0]; b++)
        for (int64_t j = o[b] + 1; j < o[b + 1]; j++)
            if (!(s[j] < s[j - 1]))
                fail_msg("detections: torchvision's scores tie at %lld; the order is then ambiguous", (long long)j);
    double d = dt_max_diff(out[0], boxes, "detections boxes");
    if (d > 1e-3)
        fail_msg("detections: boxes differ by %g px > 1e-3", d);
    d = dt_max_diff(out[1], scores, "detections scores");
    if (d > 1e-4)
        fail_msg("detections: scores differ by %g > 1e-4", d);
    loom_tensor *g[4] = { boxes, scores, labels, offsets };
    dt_free(g, 4);
    dt_free(out, 4);
    /* rows that do not match the proposals, no images */
    dt_refused("vision.rcnn_postprocess_detections", (const loom_tensor *const *)(const loom_tensor *[]){ in[0], in[0],
               in[2], in[3], in[4] }, 5, NULL, 4, "expected [K, C >= 1], [K, 4 C], [K, 4]");
    loom_tensor *none;
    assert_int_equal(loom_tensor_new(&none, LOOM_DTYPE_I64, 1, (const int64_t[]){ 1 }, NULL), LOOM_OK);
    ((int64_t *)loom_data(none))[0] = 0;
    loom_tensor *empty[5] = { NULL };
    empty[0] = tu_random_f32(2, (const int64_t[]){ 0, 5 }, 1);
    empty[1] = tu_random_f32(2, (const int64_t[]){ 0, 20 }, 1);
    empty[2] = tu_random_f32(2, (const int64_t[]){ 0, 4 }, 1);
    empty[3] = none;
    assert_int_equal(loom_tensor_new(&empty[4], LOOM_DTYPE_I64, 2, (const int64_t[]){ 0, 2 }, NULL), LOOM_OK);
    dt_refused("vision.rcnn_postprocess_detections", (const loom_tensor *const *)empty, 5, NULL, 4, "no images");
    dt_free(empty, 5);
    dt_free(in, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(multiscale_matches_torchvision),
        cmocka_unit_test(detections_match_torchvision),
    };
    return cmocka_run_group_tests_name("vision_detection_heads", tests, tu_setup, tu_teardown);
}
