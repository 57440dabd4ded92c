/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_retinanet.c - RetinaNet's ops against torchvision (goldens of
** tools/gen_vision_retinanet_goldens.py; the attributes below are its
** constants): vision.retinanet_head against RetinaNetClassificationHead and
** RetinaNetRegressionHead (v1: conv + relu; v2: conv + GroupNorm(32) + relu)
** on three levels of a batch of two, vision.retinanet_postprocess against
** RetinaNet.postprocess_detections on a batch of two images, three levels,
** a top-k cut on the first level and a detections_per_img cap on image 0,
** and the refusals of inputs that do not fit together.
**
** Heads: max |got - want| <= 1e-5 * max |want| over each output: five
** f32 convs (K = 9 C <= 288 products each) summed in the shared GEMM's order
** against ATen's, a few ulps of the largest partial sums per layer, and
** GroupNorm within its own bound (test_group_norm.c); measured: <= 8.4e-7
** of max |want|.
**
** Postprocess tolerances (the issue's): boxes within 1e-3 px, scores within 1e-4,
** labels and order identical. The scores are sigmoids in f32 (expf against
** Sleef's, within an ulp), the boxes BoxCoder's f32 arithmetic in its order
** (box_decode.c): both are far inside. The generator refuses inputs with a
** score within 1e-5 of the threshold or of the top-k cut, and with equal
** scores, so no ties arise here; dt_check_ranked would compare the boxes of
** a run of equal scores as a set and says how many rows it so compared.
*/
#include "detection_test.h"

#define POST_ATTRS "num_anchors_per_level=576,144,36;score_thresh=0.05;topk_candidates=60;nms_thresh=0.5;" \
                   "detections_per_img=40"

static loom_tensor *golden(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "vision/retinanet/post_%s", name);
    return tu_npy(path);
}

static loom_tensor *head_golden(const char *variant, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "vision/retinanet/head_%s_%s", variant, name);
    return tu_npy(path);
}

static void assert_close_to_max(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    tu_assert_same_shape(got, want, what);
    double m = 0.0, e = 0.0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        const double w = tu_get(want, i), g = tu_get(got, i);
        m = fabs(w) > m ? fabs(w) : m;
        e = fabs(g - w) > e || isnan(g) ? fabs(g - w) : e;
    }
    print_message("%s: max |got - want| = %.3g, max |want| = %.3g\n", what, e, m);
    if (!(e <= 1e-5 * m))
        fail_msg("%s: max |got - want| = %g > 1e-5 * max |want| = %g", what, e, 1e-5 * m);
}

static void head_matches_torchvision(const char *variant, const char *tag, int64_t k, int gn)
{
    char what[64], conv[64];
    snprintf(what, sizeof what, "retinanet_head %s %s", variant, tag);
    snprintf(conv, sizeof conv, "%s_conv_weight", gn ? "cls" : tag);     /* v2: the heads share them */
    char name[6][64];
    const char *parts[6] = { "conv_weight", "conv_bias", "norm_weight", "norm_bias", "out_weight", "out_bias" };
    loom_tensor *in[9] = { NULL };
    for (int i = 0; i < 6; i++) {
        snprintf(name[i], sizeof name[i], "%s_%s", tag, parts[i]);
        if (i == 0)
            in[i] = head_golden(variant, conv);
        else if ((i == 1 && !gn) || ((i == 2 || i == 3) && gn) || i >= 4)
            in[i] = head_golden(variant, name[i]);
    }
    for (int l = 0; l < 3; l++) {
        char f[32];
        snprintf(f, sizeof f, "features%d", l);
        in[6 + l] = head_golden(variant, f);
    }
    char out_name[32];
    snprintf(out_name, sizeof out_name, "%s_output", tag);
    loom_tensor *want = head_golden(variant, out_name), *got[1];
    char attrs[48];
    snprintf(attrs, sizeof attrs, "num_outputs=%lld", (long long)k);
    if (dt_run("vision.retinanet_head", (const loom_tensor *const *)in, 9, attrs, got, 1) != LOOM_OK)
        fail_msg("%s: %s", what, loom_last_error());
    assert_close_to_max(got[0], want, what);
    loom_tensor_free(got[0]);
    loom_tensor_free(want);
    dt_free(in, 9);
}

static void heads_match_torchvision(void **state)
{
    (void)state;
    head_matches_torchvision("v1", "cls", 3, 0);
    head_matches_torchvision("v1", "reg", 4, 0);
    head_matches_torchvision("v2", "cls", 3, 1);
    head_matches_torchvision("v2", "reg", 4, 1);
}

static void head_refuses_bad_inputs(void **state)
{
    (void)state;
    const char *op = "vision.retinanet_head";
    loom_tensor *cw = head_golden("v1", "cls_conv_weight"), *ow = head_golden("v1", "cls_out_weight");
    loom_tensor *f0 = head_golden("v1", "features0"), *f2 = head_golden("v1", "features2");
    loom_tensor *f2v = head_golden("v2", "features2");
    const loom_tensor *gap[9] = { cw, NULL, NULL, NULL, ow, NULL, f0, NULL, f2 };
    dt_refused(op, gap, 9, "num_outputs=3", 1, "features2");
    const loom_tensor *chans[9] = { cw, NULL, NULL, NULL, ow, NULL, f0, f2v, NULL };
    dt_refused(op, chans, 9, "num_outputs=3", 1, "features1");
    const loom_tensor *k4[9] = { cw, NULL, NULL, NULL, ow, NULL, f0, NULL, NULL };
    dt_refused(op, k4, 9, "num_outputs=4", 1, "out_weight");        /* 9 channels: not A * 4 */
    const loom_tensor *wrong_c[9] = { cw, NULL, NULL, NULL, ow, NULL, f2v, NULL, NULL };
    dt_refused(op, wrong_c, 9, "num_outputs=3", 1, "conv_weight");
    loom_tensor *all[] = { cw, ow, f0, f2, f2v };
    dt_free(all, 5);
}

static void postprocess_matches_torchvision(void **state)
{
    (void)state;
    loom_tensor *in[4] = { golden("cls_logits"), golden("bbox_regression"), golden("anchors"),
                           golden("image_sizes") };
    loom_tensor *want[4] = { golden("boxes"), golden("scores"), golden("labels"), golden("offsets") };
    loom_tensor *got[4];
    if (dt_run("vision.retinanet_postprocess", (const loom_tensor *const *)in, 4, POST_ATTRS, got, 4) != LOOM_OK)
        fail_msg("vision.retinanet_postprocess: %s", loom_last_error());
    const int64_t tied = dt_check_ranked("retinanet_postprocess", got[0], got[1], got[3], want[0], want[1], want[3]);
    assert_int_equal(tied, 0);                   /* the generator's inputs have no equal scores */
    tu_assert_identical(got[2], want[2], "retinanet_postprocess labels");
    const int64_t *off = loom_data(want[3]);
    assert_int_equal(off[1] - off[0], 40);       /* image 0: capped by detections_per_img */
    assert_true(off[2] - off[1] < 40);           /* image 1: under the cap */
    dt_free(got, 4);

    /* a lower cap keeps each image's first rows */
    if (dt_run("vision.retinanet_postprocess", (const loom_tensor *const *)in, 4,
               "num_anchors_per_level=576,144,36;topk_candidates=60;detections_per_img=5", got, 4) != LOOM_OK)
        fail_msg("vision.retinanet_postprocess (5 per image): %s", loom_last_error());
    const int64_t *o5 = loom_data(got[3]);
    assert_int_equal(o5[1], 5);
    assert_int_equal(o5[2], 10);
    const float *gb = loom_data(got[0]), *wb = loom_data(want[0]);
    for (int64_t j = 0; j < 10; j++) {
        const int64_t src = j < 5 ? j : off[1] + (j - 5);
        for (int c = 0; c < 4; c++)
            assert_true(gb[j * 4 + c] == wb[src * 4 + c]);
        assert_true(((const int64_t *)loom_data(got[2]))[j] == ((const int64_t *)loom_data(want[2]))[src]);
    }
    dt_free(got, 4);
    dt_free(in, 4);
    dt_free(want, 4);
}

static void bad_inputs_are_refused(void **state)
{
    (void)state;
    const char *op = "vision.retinanet_postprocess";
    loom_tensor *in[4] = { golden("cls_logits"), golden("bbox_regression"), golden("anchors"),
                           golden("image_sizes") };
    const loom_tensor *ok[4] = { in[0], in[1], in[2], in[3] };
    dt_refused(op, ok, 4, "num_anchors_per_level=576,144", 4, "num_anchors_per_level");
    const loom_tensor *swap[4] = { in[0], in[2], in[2], in[3] };      /* anchors as bbox_regression */
    dt_refused(op, swap, 4, POST_ATTRS, 4, "bbox_regression");
    const loom_tensor *short_anchors[4] = { in[0], in[1], in[3], in[3] };
    loom_tensor *f = tu_cast(in[3], LOOM_DTYPE_F32);
    short_anchors[2] = f;                                             /* [2, 2]: not [756, 4] */
    dt_refused(op, short_anchors, 4, POST_ATTRS, 4, "anchors");
    int64_t one[2] = { 1, 2 };
    loom_tensor *sizes1 = NULL;
    assert_int_equal(loom_tensor_new(&sizes1, LOOM_DTYPE_I64, 2, one, NULL), LOOM_OK);
    ((int64_t *)loom_data(sizes1))[0] = 64;
    ((int64_t *)loom_data(sizes1))[1] = 64;
    const loom_tensor *few_sizes[4] = { in[0], in[1], in[2], sizes1 };
    dt_refused(op, few_sizes, 4, POST_ATTRS, 4, "image_sizes");
    loom_tensor_free(f);
    loom_tensor_free(sizes1);
    dt_free(in, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heads_match_torchvision),
        cmocka_unit_test(head_refuses_bad_inputs),
        cmocka_unit_test(postprocess_matches_torchvision),
        cmocka_unit_test(bad_inputs_are_refused),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
