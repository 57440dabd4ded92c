/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_detection_rpn.c - vision.anchor_generator, vision.box_coder_decode
** and vision.rpn_proposals against torchvision's AnchorGenerator, BoxCoder
** and RegionProposalNetwork (test mode, its real RPNHead on random feature
** maps) from tools/gen_vision_detection_goldens.py.
**
** Tolerances:
**  - anchors: identical (the same float32 operations, torch.round's
**    half-to-even rounding).
**  - decoded boxes: |d| <= 1e-3 px (the bound). torchvision's exp
**    is Sleef's (within 1 ulp), loom's glibc's: one ulp of exp(dw) x width
**    on boxes below ~1000 px is under 1e-4; every other operation is the
**    same float32 expression.
**  - proposals: the same count per image (offsets identical), boxes within
**    1e-3 px and scores within 1e-4, in the same order where the scores
**    differ. Scores do tie: sigmoid rounds every logit above ~17 to 1.0f
**    and neighbours of ~9 to one float32, and torchvision's nms sorts
**    them with an unstable sort, so within a run of equal scores the rows
**    are compared as sets (each box matched to its own box within 1e-3).
**    rpn_small runs batched_nms's coordinate-offset path (<= 1000 boxes),
**    rpn_large its per-level path (2040 candidates) and a score threshold.
*/
#include "detection_test.h"

static void anchors_case(const char *stem, const char *attrs, int64_t levels, const int64_t *grid)
{
    loom_tensor *g;
    const int64_t shape[2] = { levels, 2 };
    assert_int_equal(loom_tensor_new(&g, LOOM_DTYPE_I64, 2, shape, NULL), LOOM_OK);
    memcpy(loom_data(g), grid, (size_t)levels * 2 * sizeof(int64_t));
    loom_tensor *out[1], *want = dt_golden(stem, "output");
    if (dt_run("vision.anchor_generator", (const loom_tensor *const *)&g, 1, attrs, out, 1) != LOOM_OK)
        fail_msg("%s: %s", stem, loom_last_error());
    tu_assert_identical(out[0], want, stem);
    loom_tensor_free(want);
    dt_free(out, 1);
    loom_tensor_free(g);
}

static void anchors_match_torchvision(void **state)
{
    (void)state;
    anchors_case("anchors_frcnn", "sizes=32,64,128,256,512;aspect_ratios=0.5,1,2;image_size=64,96", 5,
                 (const int64_t[]){ 16, 24, 8, 12, 4, 6, 2, 3, 1, 2 });
    /* RetinaNet's (x, int(x 2^(1/3)), int(x 2^(2/3))) per level */
    anchors_case("anchors_retina",
                 "sizes=32,40,50,64,80,101,128,161,203,256,322,406,512,645,812;aspect_ratios=0.5,1,2;image_size=96,64",
                 5, (const int64_t[]){ 12, 8, 6, 4, 3, 2, 2, 1, 1, 1 });
    anchors_case("anchors_odd", "sizes=13,27;aspect_ratios=0.3,1,1.7,4;image_size=50,70", 1,
                 (const int64_t[]){ 7, 9 });
}

static void decode_matches_torchvision(void **state)
{
    (void)state;
    static const struct {
        const char *stem, *attrs;
    } cases[] = { { "decode_rpn", NULL }, { "decode_roi", "weights=10,10,5,5" } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_tensor *in[2] = { dt_golden(cases[i].stem, "rel_codes"), dt_golden(cases[i].stem, "boxes") };
        loom_tensor *want = dt_golden(cases[i].stem, "output"), *out[1];
        if (dt_run("vision.box_coder_decode", (const loom_tensor *const *)in, 2, cases[i].attrs, out, 1) != LOOM_OK)
            fail_msg("%s: %s", cases[i].stem, loom_last_error());
        const double d = dt_max_diff(out[0], want, cases[i].stem);
        if (d > 1e-3)
            fail_msg("%s: boxes differ by %g px > 1e-3", cases[i].stem, d);
        loom_tensor_free(want);
        dt_free(out, 1);
        dt_free(in, 2);
    }
}

static void rpn_case(const char *stem, const char *attrs_fmt)
{
    loom_tensor *in[4] = { dt_golden(stem, "objectness"), dt_golden(stem, "pred_bbox_deltas"),
                           dt_golden(stem, "anchors"), dt_golden(stem, "image_sizes") };
    loom_tensor *levels = dt_golden(stem, "per_level");
    char attrs[256] = "num_anchors_per_level=";
    const int64_t *lv = loom_data(levels);
    for (int64_t l = 0; l < levels->shape[0]; l++)
        snprintf(attrs + strlen(attrs), sizeof attrs - strlen(attrs), "%s%lld", l ? "," : "", (long long)lv[l]);
    snprintf(attrs + strlen(attrs), sizeof attrs - strlen(attrs), ";%s", attrs_fmt);
    loom_tensor *out[3];
    if (dt_run("vision.rpn_proposals", (const loom_tensor *const *)in, 4, attrs, out, 3) != LOOM_OK)
        fail_msg("%s: %s", stem, loom_last_error());
    loom_tensor *boxes = dt_golden(stem, "boxes"), *scores = dt_golden(stem, "scores");
    loom_tensor *offsets = dt_golden(stem, "offsets");
    dt_check_ranked(stem, out[0], out[1], out[2], boxes, scores, offsets);
    loom_tensor *g[4] = { boxes, scores, offsets, levels };
    dt_free(g, 4);
    dt_free(out, 3);
    dt_free(in, 4);
}

static void rpn_matches_torchvision(void **state)
{
    (void)state;
    rpn_case("rpn_small", "pre_nms_top_n=50;post_nms_top_n=30;nms_thresh=0.7");
    rpn_case("rpn_large", "pre_nms_top_n=1500;post_nms_top_n=300;nms_thresh=0.7;score_thresh=0.45");
}

static void rpn_refuses_bad_input(void **state)
{
    (void)state;
    loom_tensor *g;
    assert_int_equal(loom_tensor_new(&g, LOOM_DTYPE_I64, 2, (const int64_t[]){ 1, 2 }, NULL), LOOM_OK);
    int64_t *gv = loom_data(g);
    gv[0] = 0;
    gv[1] = 4;
    dt_refused("vision.anchor_generator", (const loom_tensor *const *)&g, 1, "sizes=32;aspect_ratios=1;image_size=8,8",
               1, "level 0's grid is 0 x 4");
    gv[0] = 4;
    dt_refused("vision.anchor_generator", (const loom_tensor *const *)&g, 1, "sizes=32;aspect_ratios=1;image_size=8",
               1, "image_size has 1 values");
    loom_tensor_free(g);
    assert_int_equal(loom_tensor_new(&g, LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, NULL), LOOM_OK);
    gv = loom_data(g);
    gv[0] = gv[1] = 4;
    gv[2] = gv[3] = 2;
    dt_refused("vision.anchor_generator", (const loom_tensor *const *)&g, 1,
               "sizes=32,64,128;aspect_ratios=1;image_size=8,8", 1, "3 sizes for 2 levels");
    loom_tensor_free(g);

    loom_tensor *codes = tu_random_f32(2, (const int64_t[]){ 5, 6 }, 1), *refs = tu_random_f32(2, (const int64_t[]){ 5, 4 }, 2);
    loom_tensor *in[4] = { codes, refs };
    dt_refused("vision.box_coder_decode", (const loom_tensor *const *)in, 2, NULL, 1, "expected [N, 4 K] and [N, 4]");
    loom_tensor_free(codes);
    in[0] = codes = tu_random_f32(2, (const int64_t[]){ 5, 8 }, 1);
    dt_refused("vision.box_coder_decode", (const loom_tensor *const *)in, 2, "weights=1,2", 1, "weights has 2 values");
    dt_free(in, 2);

    in[0] = tu_random_f32(2, (const int64_t[]){ 2, 12 }, 1);
    in[1] = tu_random_f32(3, (const int64_t[]){ 2, 12, 4 }, 2);
    in[2] = tu_random_f32(2, (const int64_t[]){ 12, 4 }, 3);
    assert_int_equal(loom_tensor_new(&in[3], LOOM_DTYPE_I64, 2, (const int64_t[]){ 2, 2 }, NULL), LOOM_OK);
    memset(loom_data(in[3]), 0, loom_tensor_nbytes(in[3]));
    dt_refused("vision.rpn_proposals", (const loom_tensor *const *)in, 4, "num_anchors_per_level=6,5", 3,
               "sums to 11; objectness has 12 anchors");
    dt_refused("vision.rpn_proposals", (const loom_tensor *const *)in, 4, "num_anchors_per_level=6,7", 3,
               "sums past the 12 anchors at level 1");
    loom_tensor_free(in[2]);
    in[2] = tu_random_f32(2, (const int64_t[]){ 11, 4 }, 3);
    dt_refused("vision.rpn_proposals", (const loom_tensor *const *)in, 4, "num_anchors_per_level=12", 3,
               "anchors is [11, 4]; expected [12, 4]");
    dt_free(in, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(anchors_match_torchvision),
        cmocka_unit_test(decode_matches_torchvision),
        cmocka_unit_test(rpn_matches_torchvision),
        cmocka_unit_test(rpn_refuses_bad_input),
    };
    return cmocka_run_group_tests_name("vision_detection_rpn", tests, tu_setup, tu_teardown);
}
