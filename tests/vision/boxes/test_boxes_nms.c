/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_boxes_nms.c - vision.nms and vision.batched_nms against torchvision:
** random scenes at two thresholds, equal scores (visiting order as
** torchvision's), zero-area and duplicate boxes, an IoU exactly at the
** threshold, empty input, f64; batched_nms on both of torchvision's paths
** (coordinate offsets up to 1000 boxes, per-category loop above, whose
** unstable final sort the kernel reproduces). Index lists must be identical.
** Then the refusals: boxes not [N, 4], scores or idxs of the wrong length,
** mismatched dtypes, f16 (torchvision's nms kernel has no half), a
** non-contiguous tensor (refused before ABI 1.2; now the core compacts it).
*/
#include "boxes_test.h"

static void nms_case(const char *stem, double thr)
{
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "iou_threshold", thr), LOOM_OK);
    bt_check("vision.nms", stem, (const char *[]){ "boxes", "scores" }, 2, a, 0, 0);
    loom_attrs_free(a);
}

static void batched_case(const char *stem, double thr)
{
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "iou_threshold", thr), LOOM_OK);
    bt_check("vision.batched_nms", stem, (const char *[]){ "boxes", "scores", "idxs" }, 3, a, 0, 0);
    loom_attrs_free(a);
}

static void nms_matches_torchvision(void **state)
{
    (void)state;
    static const char *const tags[] = { "f32", "f64" };
    for (int t = 0; t < 2; t++) {
        char stem[64];
        snprintf(stem, sizeof stem, "nms_%s_thr3", tags[t]);
        nms_case(stem, 0.3);
        snprintf(stem, sizeof stem, "nms_%s_thr5", tags[t]);
        nms_case(stem, 0.5);
    }
}

static void nms_orders_equal_scores_like_torchvision(void **state)
{
    (void)state;
    nms_case("nms_f32_ties", 0.3);
    nms_case("nms_f64_ties", 0.3);
}

static void nms_handles_zero_area_duplicates_and_exact_threshold(void **state)
{
    (void)state;
    nms_case("nms_f32_special", 0.2);
    nms_case("nms_f64_special", 0.2);
    nms_case("nms_f32_exact", 0.5);
}

static void nms_of_nothing_is_empty(void **state)
{
    (void)state;
    nms_case("nms_f32_empty", 0.5);
    batched_case("bnms_f32_empty", 0.5);
}

static void batched_nms_matches_both_torchvision_paths(void **state)
{
    (void)state;
    batched_case("bnms_f32_small", 0.4);
    batched_case("bnms_f64_small", 0.4);
    batched_case("bnms_f32_large", 0.4);
    batched_case("bnms_f64_large", 0.4);
}

/* NaN scores come first, -0.0 ties with 0.0, NaN coordinates never suppress */
static void nms_orders_nan_and_signed_zero_like_torchvision(void **state)
{
    (void)state;
    nms_case("nms_f32_nan", 0.3);
    batched_case("bnms_f32_nan_small", 0.3);
    batched_case("bnms_f32_nan_large", 0.3);
}

/* A larger scene: exercises the tiled, threaded greedy pass. */
static void nms_large_scene_keeps_a_consistent_set(void **state)
{
    (void)state;
    const int64_t n = 5000, shape[2] = { n, 4 };
    loom_tensor *b = bt_zeros(LOOM_DTYPE_F32, 2, shape), *s = bt_zeros(LOOM_DTYPE_F32, 1, &n), *out;
    float *pb = loom_data(b), *ps = loom_data(s);
    uint32_t seed = 7;
    for (int64_t i = 0; i < n; i++) {
        float v[4];
        for (int k = 0; k < 4; k++) {
            seed = seed * 1664525u + 1013904223u;
            v[k] = (float)(seed >> 8) / 16777216.0f;
        }
        pb[4 * i] = v[0] * 500;
        pb[4 * i + 1] = v[1] * 500;
        pb[4 * i + 2] = pb[4 * i] + 10 + v[2] * 40;
        pb[4 * i + 3] = pb[4 * i + 1] + 10 + v[3] * 40;
        ps[i] = (float)(i % 97) / 97.0f;
    }
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "iou_threshold", 0.5), LOOM_OK);
    assert_int_equal(tu_call("vision.nms", (const loom_tensor *[]){ b, s }, 2, a, NULL, &out), LOOM_OK);
    /* greedy invariants: scores never increase, kept boxes overlap <= 0.5 */
    const int64_t *k = loom_data(out), m = out->shape[0];
    assert_true(m > 0 && m < n);
    for (int64_t i = 1; i < m; i++) {
        assert_true(ps[k[i - 1]] >= ps[k[i]]);
        if (ps[k[i - 1]] == ps[k[i]])
            assert_true(k[i - 1] < k[i]);
    }
    for (int64_t i = 0; i < m && i < 400; i++)
        for (int64_t j = i + 1; j < m; j++) {
            const float *p = pb + 4 * k[i], *q = pb + 4 * k[j];
            float w = fminf(p[2], q[2]) - fmaxf(p[0], q[0]), h = fminf(p[3], q[3]) - fmaxf(p[1], q[1]);
            float inter = (w > 0 ? w : 0) * (h > 0 ? h : 0);
            float ap = (p[2] - p[0]) * (p[3] - p[1]), aq = (q[2] - q[0]) * (q[3] - q[1]);
            assert_true((double)(inter / (ap + aq - inter)) <= 0.5);
        }
    loom_attrs_free(a);
    loom_tensor_free(b);
    loom_tensor_free(s);
    loom_tensor_free(out);
}

/* The greedy pass spread over threads (whole cache lines of the suppression
** mask per thread) keeps exactly the boxes of the 1-thread pass, at sizes
** whose mask ends mid line and at a line boundary, f32 (AVX2 or portable)
** and f64, with many kept boxes per tile (small boxes in a wide image). */
static void nms_threads_keep_what_one_thread_keeps(void **state)
{
    (void)state;
    static const int64_t sizes[] = { 2049, 4096, 6007 };
    static const double thrs[] = { 0.5, 0.3 };
    static const loom_dtype dts[] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64 };
    uint32_t seed = 12345;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int d = 0; d < 2; d++) {
            const int64_t n = sizes[si], shape[2] = { n, 4 };
            loom_tensor *b = bt_zeros(dts[d], 2, shape), *s = bt_zeros(dts[d], 1, &n);
            for (int64_t i = 0; i < n; i++) {
                double v[5];
                for (int k = 0; k < 5; k++) {
                    seed = seed * 1664525u + 1013904223u;
                    v[k] = (double)(seed >> 8) / 16777216.0;
                }
                const double side = 10.0 * sqrt((double)n);     /* 1000 at 10k boxes, as the benchmark */
                double bx[4] = { v[0] * side, v[1] * side, 0, 0 };
                bx[2] = bx[0] + 10 + v[2] * 90;
                bx[3] = bx[1] + 10 + v[3] * 90;
                double sc = (double)(int)(v[4] * 4096) / 4096.0;    /* some equal scores */
                for (int k = 0; k < 4; k++) {
                    if (dts[d] == LOOM_DTYPE_F32)
                        ((float *)loom_data(b))[4 * i + k] = (float)bx[k];
                    else
                        ((double *)loom_data(b))[4 * i + k] = bx[k];
                }
                if (dts[d] == LOOM_DTYPE_F32)
                    ((float *)loom_data(s))[i] = (float)sc;
                else
                    ((double *)loom_data(s))[i] = sc;
            }
            for (int t = 0; t < 2; t++) {
                loom_attrs *a = bt_attrs();
                assert_int_equal(loom_attrs_set_float(a, "iou_threshold", thrs[t]), LOOM_OK);
                loom_tensor *one = NULL;
                loom_call_options o = LOOM_CALL_OPTIONS_INIT;
                o.num_threads = 1;
                assert_int_equal(loom_run("vision.nms", (const loom_tensor *[]){ b, s }, 2, a, &one, 1, &o), LOOM_OK);
                assert_true(one->shape[0] > n / 4);     /* many kept boxes: every tile has later work */
                for (int32_t nt = 2; nt <= 4; nt += 2) {
                    loom_tensor *many = NULL;
                    o.num_threads = nt;
                    assert_int_equal(loom_run("vision.nms", (const loom_tensor *[]){ b, s }, 2, a, &many, 1, &o),
                                     LOOM_OK);
                    char what[96];
                    snprintf(what, sizeof what, "nms n=%lld %s thr %.1f, %d threads", (long long)n,
                             d ? "f64" : "f32", thrs[t], (int)nt);
                    tu_assert_identical(many, one, what);
                    loom_tensor_free(many);
                }
                loom_tensor_free(one);
                loom_attrs_free(a);
            }
            loom_tensor_free(b);
            loom_tensor_free(s);
        }
}

static void nms_refuses_bad_input(void **state)
{
    (void)state;
    const int64_t s53[2] = { 5, 3 }, s54[2] = { 5, 4 }, n4 = 4, n5 = 5, s45[2] = { 4, 5 };
    loom_tensor *b53 = bt_zeros(LOOM_DTYPE_F32, 2, s53), *b54 = bt_zeros(LOOM_DTYPE_F32, 2, s54);
    loom_tensor *s4 = bt_zeros(LOOM_DTYPE_F32, 1, &n4), *s5 = bt_zeros(LOOM_DTYPE_F32, 1, &n5);
    loom_tensor *s5d = bt_zeros(LOOM_DTYPE_F64, 1, &n5), *b54h = bt_zeros(LOOM_DTYPE_F16, 2, s54);
    loom_tensor *s5h = bt_zeros(LOOM_DTYPE_F16, 1, &n5), *i4 = bt_zeros(LOOM_DTYPE_I64, 1, &n4);
    loom_tensor *i5 = bt_zeros(LOOM_DTYPE_I64, 1, &n5), *i5f = bt_zeros(LOOM_DTYPE_F32, 1, &n5);
    loom_tensor *t = bt_zeros(LOOM_DTYPE_F32, 2, s45), *view;
    int64_t strides[2] = { 1, 5 };
    assert_int_equal(loom_tensor_wrap(&view, loom_data(t), LOOM_DTYPE_F32, 2, s54, strides, NULL), LOOM_OK);
    loom_attrs *a = bt_attrs();
    assert_int_equal(loom_attrs_set_float(a, "iou_threshold", 0.5), LOOM_OK);

    bt_refused("vision.nms", (const loom_tensor *[]){ b53, s5 }, 2, a, "'boxes' must be [N, 4]");
    bt_refused("vision.nms", (const loom_tensor *[]){ b54, s4 }, 2, a, "'scores' must be [5]");
    bt_refused("vision.nms", (const loom_tensor *[]){ b54, s5d }, 2, a, "same dtype");
    bt_refused("vision.nms", (const loom_tensor *[]){ b54h, s5h }, 2, a, "f16");
    /* a strided view runs: the core hands the kernel a compact copy */
    loom_tensor *kept = NULL;
    assert_int_equal(loom_run("vision.nms", (const loom_tensor *[]){ view, s5 }, 2, a, &kept, 1, NULL), LOOM_OK);
    loom_tensor_free(kept);
    bt_refused("vision.nms", (const loom_tensor *[]){ s5, s5 }, 2, a, "'boxes'");
    bt_refused("vision.batched_nms", (const loom_tensor *[]){ b54, s5, i4 }, 3, a, "'idxs' must be [5]");
    bt_refused("vision.batched_nms", (const loom_tensor *[]){ b54, s5, i5f }, 3, a, "'idxs'");
    bt_refused("vision.batched_nms", (const loom_tensor *[]){ b53, s5, i5 }, 3, a, "'boxes' must be [N, 4]");
    bt_refused("vision.batched_nms", (const loom_tensor *[]){ b54, s5d, i5 }, 3, a, "same dtype");
    loom_attrs_free(a);
    /* iou_threshold is required */
    bt_refused("vision.nms", (const loom_tensor *[]){ b54, s5 }, 2, NULL, "iou_threshold");

    loom_tensor *all[] = { b53, b54, s4, s5, s5d, b54h, s5h, i4, i5, i5f, view, t };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nms_matches_torchvision),
        cmocka_unit_test(nms_orders_equal_scores_like_torchvision),
        cmocka_unit_test(nms_handles_zero_area_duplicates_and_exact_threshold),
        cmocka_unit_test(nms_of_nothing_is_empty),
        cmocka_unit_test(batched_nms_matches_both_torchvision_paths),
        cmocka_unit_test(nms_orders_nan_and_signed_zero_like_torchvision),
        cmocka_unit_test(nms_large_scene_keeps_a_consistent_set),
        cmocka_unit_test(nms_threads_keep_what_one_thread_keeps),
        cmocka_unit_test(nms_refuses_bad_input),
    };
    return cmocka_run_group_tests_name("vision_boxes_nms", tests, tu_setup, tu_teardown);
}
