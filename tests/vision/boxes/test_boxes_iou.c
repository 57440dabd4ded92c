/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_boxes_iou.c - the pairwise IoU family and the IoU losses against
** torchvision: f32, f64 and f16 boxes (f16 gives f32 results like
** torchvision's _upcast / _upcast_non_float), every box_iou format, zero-area boxes (0/0 gives
** NaN where torchvision has NaN), eps, every reduction, empty inputs, and
** the refusals (bad shapes, dtypes, format and reduction strings).
**
** Tolerances: the kernels repeat torch's operations in the same order and
** precision (f16 steps rounded where torch rounds them), so most results
** are bit-identical (all of box_iou, GIoU, DIoU and the per-box losses
** when generated); the slack covers what is not: atan in CIoU (torch uses
** SLEEF, libm here: ~1 ulp, absolute where CIoU cancels to near 0), and the
** loss reductions, which torch sums
** in its own (cascade) order while the kernel sums in f64 and rounds once.
*/
#include "boxes_test.h"

#define F32_TOL 4e-7    /* a few f32 ulps (atan) */
#define F64_TOL 1e-15
#define F16_TOL 4e-7    /* f16 boxes are upcast: f32 arithmetic */

static double tol_of(const char *tag)
{
    return strcmp(tag, "f64") == 0 ? F64_TOL : strcmp(tag, "f16") == 0 ? F16_TOL : F32_TOL;
}

static const char *const tags[] = { "f32", "f64", "f16" };
static const char *const pair_args[] = { "boxes1", "boxes2" };

static void pairwise_ops_match_torchvision(void **state)
{
    (void)state;
    static const char *const fmts[] = { "xyxy", "xywh", "cxcywh" };
    for (int t = 0; t < 3; t++) {
        /* f16 boxes give f32 matrices computed in f32: f32 tolerance */
        double tol = strcmp(tags[t], "f64") == 0 ? F64_TOL : F32_TOL;
        char stem[96];
        for (int f = 0; f < 3; f++) {
            loom_attrs *a = bt_attrs();
            assert_int_equal(loom_attrs_set_string(a, "fmt", fmts[f]), LOOM_OK);
            snprintf(stem, sizeof stem, "box_iou_%s_%s", tags[t], fmts[f]);
            bt_check("vision.box_iou", stem, pair_args, 2, a, tol, 0);
            loom_attrs_free(a);
        }
        static const char *const ops[] = { "generalized_box_iou", "distance_box_iou", "complete_box_iou" };
        for (int o = 0; o < 3; o++) {
            char op[64];
            snprintf(op, sizeof op, "vision.%s", ops[o]);
            snprintf(stem, sizeof stem, "%s_%s", ops[o], tags[t]);
            bt_check(op, stem, pair_args, 2, NULL, tol, tol);
        }
    }
}

static void pairwise_eps_and_empty(void **state)
{
    (void)state;
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "eps", 0.5), LOOM_OK);
    bt_check("vision.distance_box_iou", "distance_box_iou_f32_eps", pair_args, 2, a, F32_TOL, F32_TOL);
    bt_check("vision.complete_box_iou", "complete_box_iou_f32_eps", pair_args, 2, a, F32_TOL, F32_TOL);
    loom_attrs_free(a);
    bt_check("vision.box_iou", "box_iou_f32_empty", pair_args, 2, NULL, 0, 0);
}

static const char *const losses[] = { "generalized_box_iou_loss", "distance_box_iou_loss",
                                      "complete_box_iou_loss" };

static void losses_match_torchvision_for_every_reduction(void **state)
{
    (void)state;
    static const char *const reds[] = { "none", "mean", "sum" };
    for (int l = 0; l < 3; l++)
        for (int t = 0; t < 3; t++)
            for (int r = 0; r < 3; r++) {
                char op[64], stem[96];
                snprintf(op, sizeof op, "vision.%s", losses[l]);
                snprintf(stem, sizeof stem, "%s_%s_%s", losses[l], tags[t], reds[r]);
                loom_attrs *a = bt_attrs();
                assert_int_equal(loom_attrs_set_string(a, "reduction", reds[r]), LOOM_OK);
                double tol = tol_of(tags[t]);
                bt_check(op, stem, pair_args, 2, a, tol, tol);
                loom_attrs_free(a);
            }
}

/* eps = 1 on [2, 3, 4] boxes (CIoU uses it for alpha only); empty inputs. */
static void losses_eps_batch_dims_and_empty(void **state)
{
    (void)state;
    static const char *const reds[] = { "none", "mean", "sum" };
    for (int l = 0; l < 3; l++) {
        char op[64], stem[96];
        snprintf(op, sizeof op, "vision.%s", losses[l]);
        loom_attrs *a = bt_attrs();
        assert_int_equal(loom_attrs_set_float(a, "eps", 1.0), LOOM_OK);
        snprintf(stem, sizeof stem, "%s_f32_eps", losses[l]);
        bt_check(op, stem, pair_args, 2, a, F32_TOL, F32_TOL);
        loom_attrs_free(a);
        for (int r = 0; r < 3; r++) {
            a = bt_attrs();
            assert_int_equal(loom_attrs_set_string(a, "reduction", reds[r]), LOOM_OK);
            snprintf(stem, sizeof stem, "%s_f32_empty_%s", losses[l], reds[r]);
            bt_check(op, stem, pair_args, 2, a, 0, 0);
            loom_attrs_free(a);
        }
    }
}

static void iou_ops_refuse_bad_input(void **state)
{
    (void)state;
    const int64_t s35[2] = { 3, 5 }, s34[2] = { 3, 4 }, s24[2] = { 2, 4 };
    loom_tensor *b35 = bt_zeros(LOOM_DTYPE_F32, 2, s35), *b34 = bt_zeros(LOOM_DTYPE_F32, 2, s34);
    loom_tensor *b34d = bt_zeros(LOOM_DTYPE_F64, 2, s34), *b24 = bt_zeros(LOOM_DTYPE_F32, 2, s24);
    loom_tensor *i34 = bt_zeros(LOOM_DTYPE_I32, 2, s34);
    bt_refused("vision.box_iou", (const loom_tensor *[]){ b35, b34 }, 2, NULL, "'boxes1' must be [N, 4]");
    bt_refused("vision.box_iou", (const loom_tensor *[]){ b34, b35 }, 2, NULL, "'boxes2' must be [N, 4]");
    bt_refused("vision.generalized_box_iou", (const loom_tensor *[]){ b34, b34d }, 2, NULL, "same dtype");
    bt_refused("vision.complete_box_iou", (const loom_tensor *[]){ i34, i34 }, 2, NULL, "i32");
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_string(a, "fmt", "xyxyxyxy"), LOOM_OK);
    bt_refused("vision.box_iou", (const loom_tensor *[]){ b34, b34 }, 2, a, "'fmt' must be one of");
    loom_attrs_free(a);
    bt_refused("vision.generalized_box_iou_loss", (const loom_tensor *[]){ b34, b24 }, 2, NULL,
               "'boxes2' must have the shape of 'boxes1'");
    bt_refused("vision.distance_box_iou_loss", (const loom_tensor *[]){ b34, b34d }, 2, NULL, "same dtype");
    bt_refused("vision.complete_box_iou_loss", (const loom_tensor *[]){ b35, b35 }, 2, NULL, "[.., 4]");
    a = bt_attrs();
    assert_int_equal(loom_attrs_set_string(a, "reduction", "avg"), LOOM_OK);
    bt_refused("vision.complete_box_iou_loss", (const loom_tensor *[]){ b34, b34 }, 2, a,
               "'reduction' must be one of none, mean, sum");
    loom_attrs_free(a);
    loom_tensor *all[] = { b35, b34, b34d, b24, i34 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairwise_ops_match_torchvision),
        cmocka_unit_test(pairwise_eps_and_empty),
        cmocka_unit_test(losses_match_torchvision_for_every_reduction),
        cmocka_unit_test(losses_eps_batch_dims_and_empty),
        cmocka_unit_test(iou_ops_refuse_bad_input),
    };
    return cmocka_run_group_tests_name("vision_boxes_iou", tests, tu_setup, tu_teardown);
}
