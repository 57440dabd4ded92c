/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_roi_align.c - vision.roi_align and vision.roi_align_backward against
** torchvision (tools/gen_vision_roi_goldens.py): every configuration of
** aligned x sampling_ratio {-1, 0, 1, 2} x spatial_scale {1, 0.5, 0.25} on
** rois inside, partly and wholly outside the map, zero-area, reversed and
** sub-pixel, over two images; f64 and f16; the square output_size form;
** no rois; the row-cache path against the direct one.
**
** Tolerances: the kernels replay torchvision's CPU arithmetic operation by
** operation without FMA, so f32 and f64 must match bit for bit (rtol 0);
** f16 mirrors c10::Half's round-after-every-operation, also exactly. The
** backward goldens come from autograd, which calls the same
** _roi_align_backward, and are exact too.
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "roi_test_util.h"

static void check_forward(const char *casename, const char *dt, int square_form)
{
    char what[160];
    roi_params p = roi_load_params(casename);
    loom_tensor *x = roi_npy("feat_%s", dt), *b = roi_npy("boxes_%s", dt), *want = roi_npy("%s", casename);
    loom_attrs *a = roi_forward_attrs("vision.roi_align", &p, square_form);
    loom_tensor *out;
    loom_status st = roi_run("vision.roi_align", (const loom_tensor *[]){ x, b }, 2, a, &out, 1, "cpu");
    if (st != LOOM_OK)
        fail_msg("%s: %s", casename, loom_last_error());
    snprintf(what, sizeof what, "roi_align %s", casename);
    roi_assert_close(out, want, 0, 0, what);
    loom_tensor_free(out);
    loom_tensor_free(want);
    loom_tensor_free(b);
    loom_tensor_free(x);
    loom_attrs_free(a);
}

static void every_configuration_matches_torchvision(void **state)
{
    static const int srs[] = { -1, 0, 1, 2 };
    static const char *const scales[] = { "1.0", "0.5", "0.25" };
    (void)state;
    for (int aligned = 0; aligned < 2; aligned++)
        for (size_t s = 0; s < 4; s++)
            for (size_t c = 0; c < 3; c++) {
                char name[64];
                snprintf(name, sizeof name, "align_a%d_sr%d_ss%s", aligned, srs[s], scales[c]);
                check_forward(name, "f32", 0);
            }
}

static void check_backward(const char *casename, const char *dt)
{
    char what[160];
    roi_params p = roi_load_params(casename);
    loom_tensor *x = roi_npy("feat_%s", dt), *b = roi_npy("boxes_%s", dt);
    loom_tensor *go = roi_npy("%s_gradout", casename), *want = roi_npy("%s_gradin", casename);
    loom_attrs *a = roi_backward_attrs("vision.roi_align_backward", &p, x->shape);
    loom_tensor *out;
    loom_status st = roi_run("vision.roi_align_backward", (const loom_tensor *[]){ go, b }, 2, a, &out, 1, "cpu");
    if (st != LOOM_OK)
        fail_msg("%s backward: %s", casename, loom_last_error());
    snprintf(what, sizeof what, "roi_align_backward %s", casename);
    roi_assert_close(out, want, 0, 0, what);
    loom_tensor_free(out);
    loom_tensor_free(want);
    loom_tensor_free(go);
    loom_tensor_free(b);
    loom_tensor_free(x);
    loom_attrs_free(a);
}

static const char *const dtype_cases[][2] = {
    { "align_f32_a0_sr-1_ss0.5", "f32" }, { "align_f32_a1_sr2_ss0.25", "f32" },
    { "align_f64_a0_sr2_ss0.5", "f64" },  { "align_f64_a1_sr-1_ss1.0", "f64" },
    { "align_f16_a0_sr2_ss0.5", "f16" },  { "align_f16_a1_sr-1_ss0.25", "f16" },
};

static void f32_f64_f16_forward_match_torchvision(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dtype_cases / sizeof dtype_cases[0]; i++)
        check_forward(dtype_cases[i][0], dtype_cases[i][1], 0);
}

static void backward_matches_autograd(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof dtype_cases / sizeof dtype_cases[0]; i++)
        check_backward(dtype_cases[i][0], dtype_cases[i][1]);
}

/* output_size = [2] means 2 x 2, as torchvision's int form */
static void square_output_size_takes_one_value(void **state)
{
    (void)state;
    check_forward("align_f32_a1_sr2_ss0.25", "f32", 1);
}

static void no_rois_give_an_empty_output(void **state)
{
    (void)state;
    roi_params p = { .ph = 3, .pw = 4, .sampling_ratio = -1, .spatial_scale = 1.0 };
    loom_tensor *x = roi_npy("feat_f32"), *b = roi_npy("boxes_empty_f32"), *want = roi_npy("align_empty");
    loom_attrs *a = roi_forward_attrs("vision.roi_align", &p, 0);
    loom_tensor *out;
    assert_int_equal(roi_run("vision.roi_align", (const loom_tensor *[]){ x, b }, 2, a, &out, 1, "cpu"), LOOM_OK);
    roi_assert_close(out, want, 0, 0, "roi_align with K = 0");
    loom_tensor_free(out);
    /* and the backward of no rois is a zero gradient of the input's shape */
    loom_attrs_free(a);
    a = roi_backward_attrs("vision.roi_align_backward", &p, x->shape);
    assert_int_equal(roi_run("vision.roi_align_backward", (const loom_tensor *[]){ want, b }, 2, a, &out, 1, "cpu"),
                     LOOM_OK);
    assert_int_equal(out->ndim, 4);
    for (int64_t i = 0; i < loom_numel(out); i++)
        assert_true(roi_get(out, i) == 0.0);
    loom_tensor_free(out);
    loom_attrs_free(a);
    loom_tensor_free(want);
    loom_tensor_free(b);
    loom_tensor_free(x);
}

/* 300 rois on a [2, 19, 60, 70] map take the row-cache path (the samples
** read the rows they touch densely): rois partly outside the map, a cache
** shorter than the map (rows evicted and transposed again), 19 channels
** (AVX2 blocks of 8 and a tail). Each roi's result must not depend on the
** other rois (visiting order, cache contents, threads): one roi alone must
** give the same bits. And one channel alone takes the direct NCHW path:
** each channel of the 19-channel call must match it bit for bit. */
static void row_cache_and_direct_paths_agree(void **state)
{
    (void)state;
    const int64_t xs[4] = { 2, 19, 60, 70 }, bs[2] = { 300, 5 }, x1s[4] = { 2, 1, 60, 70 };
    loom_tensor *x, *b, *one, *many, *few, *x1;
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 4, xs, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&b, LOOM_DTYPE_F32, 2, bs, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&x1, LOOM_DTYPE_F32, 4, x1s, NULL), LOOM_OK);
    float *px = loom_data(x), *pb = loom_data(b), *px1 = loom_data(x1);
    uint32_t seed = 12345;
    for (int64_t i = 0; i < loom_numel(x); i++) {
        seed = seed * 1664525u + 1013904223u;
        px[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
    }
    for (int64_t r = 0; r < bs[0]; r++) {
        float v[4];
        for (int i = 0; i < 4; i++) {
            seed = seed * 1664525u + 1013904223u;
            v[i] = (float)(seed >> 8) / 16777216.0f * 300.0f - 50.0f;
        }
        pb[r * 5] = (float)(r % 2);
        pb[r * 5 + 1] = v[0];
        pb[r * 5 + 2] = v[1];
        pb[r * 5 + 3] = v[0] + (v[2] + 50.0f) * 0.3f;
        pb[r * 5 + 4] = v[1] + (v[3] + 50.0f) * 0.3f;
    }
    roi_params p = { .ph = 7, .pw = 7, .sampling_ratio = 2, .spatial_scale = 0.25 };
    loom_attrs *a = roi_forward_attrs("vision.roi_align", &p, 0);
    assert_int_equal(roi_run("vision.roi_align", (const loom_tensor *[]){ x, b }, 2, a, &many, 1, "cpu"), LOOM_OK);
    const float *pm = loom_data(many);
    const int64_t per = xs[1] * 49;
    for (int64_t r = 0; r < bs[0]; r += 37) {
        const int64_t s1[2] = { 1, 5 };
        assert_int_equal(loom_tensor_wrap(&one, pb + r * 5, LOOM_DTYPE_F32, 2, s1, NULL, NULL), LOOM_OK);
        assert_int_equal(roi_run("vision.roi_align", (const loom_tensor *[]){ x, one }, 2, a, &few, 1, "cpu"),
                         LOOM_OK);
        const float *pf = loom_data(few);
        for (int64_t i = 0; i < per; i++)
            if (memcmp(&pm[r * per + i], &pf[i], sizeof(float)) != 0)
                fail_msg("roi %lld element %lld: %.9g (many rois) vs %.9g (one roi)", (long long)r, (long long)i,
                         (double)pm[r * per + i], (double)pf[i]);
        loom_tensor_free(few);
        loom_tensor_free(one);
    }
    for (int64_t c = 0; c < xs[1]; c += 6) {
        for (int64_t n = 0; n < 2; n++)
            memcpy(px1 + n * 60 * 70, px + (n * xs[1] + c) * 60 * 70, 60 * 70 * sizeof(float));
        assert_int_equal(roi_run("vision.roi_align", (const loom_tensor *[]){ x1, b }, 2, a, &few, 1, "cpu"),
                         LOOM_OK);
        const float *pf = loom_data(few);
        for (int64_t r = 0; r < bs[0]; r++)
            for (int64_t i = 0; i < 49; i++)
                if (memcmp(&pm[r * per + c * 49 + i], &pf[r * 49 + i], sizeof(float)) != 0)
                    fail_msg("roi %lld channel %lld bin %lld: %.9g (19 channels) vs %.9g (one channel)",
                             (long long)r, (long long)c, (long long)i, (double)pm[r * per + c * 49 + i],
                             (double)pf[r * 49 + i]);
        loom_tensor_free(few);
    }
    loom_tensor_free(many);
    loom_attrs_free(a);
    loom_tensor_free(x1);
    loom_tensor_free(b);
    loom_tensor_free(x);
}

/* An out-of-range sample reads pixel (0, 0) with weight 0, as torchvision's
** pre_calc: a NaN or an infinity there makes NaN of every bin with such a
** sample, 0 of a finite value (torchvision 0.2x gives exactly this pattern).
** Map [1, 3, 8, 8] with NaN at (0, 0) of channel 1 and +inf of channel 2;
** output 2 x 3, sampling_ratio 2, spatial_scale 1: roi A lies left of the
** map (every sample out of range), roi B's first bin column too, roi C is
** inside. On all three channels (the row cache) and on each channel alone
** (the direct path). */
static void out_of_range_samples_read_pixel_0_0(void **state)
{
    (void)state;
    const int64_t xs[4] = { 1, 3, 8, 8 }, x1s[4] = { 1, 1, 8, 8 }, bs[2] = { 3, 5 };
    static const float boxes[15] = { 0, -6, 3, -2, 6, 0, -3, 3, 4, 7, 0, 1, 1, 6, 6 };
    loom_tensor *x, *x1, *b, *out;
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 4, xs, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&x1, LOOM_DTYPE_F32, 4, x1s, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&b, LOOM_DTYPE_F32, 2, bs, NULL), LOOM_OK);
    float *px = loom_data(x);
    for (int64_t i = 0; i < loom_numel(x); i++)
        px[i] = 0.25f + (float)(i % 7) * 0.125f;
    px[64] = NAN;
    px[128] = INFINITY;
    memcpy(loom_data(b), boxes, sizeof boxes);
    roi_params p = { .ph = 2, .pw = 3, .sampling_ratio = 2, .spatial_scale = 1.0 };
    loom_attrs *a = roi_forward_attrs("vision.roi_align", &p, 0);
    for (int64_t only = -1; only < 3; only++) {
        const int64_t nc = only < 0 ? 3 : 1;
        if (only >= 0)
            memcpy(loom_data(x1), px + only * 64, 64 * sizeof(float));
        assert_int_equal(roi_run("vision.roi_align", (const loom_tensor *[]){ only < 0 ? x : x1, b }, 2, a, &out, 1,
                                 "cpu"), LOOM_OK);
        const float *po = loom_data(out);
        for (int64_t k = 0; k < 3; k++)
            for (int64_t c = 0; c < nc; c++)
                for (int64_t bin = 0; bin < 6; bin++) {
                    const int64_t ch = only < 0 ? c : only;
                    const int outside = k == 0 || (k == 1 && bin % 3 == 0);
                    const float v = po[(k * nc + c) * 6 + bin];
                    const int bad = !outside ? !isfinite(v) : ch == 0 ? v != 0.0f : !isnan(v);
                    if (bad)
                        fail_msg("roi %lld channel %lld bin %lld (%s): %g", (long long)k, (long long)ch,
                                 (long long)bin, only < 0 ? "three channels" : "one channel", (double)v);
                }
        loom_tensor_free(out);
    }
    loom_attrs_free(a);
    loom_tensor_free(b);
    loom_tensor_free(x1);
    loom_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_configuration_matches_torchvision),
        cmocka_unit_test(f32_f64_f16_forward_match_torchvision),
        cmocka_unit_test(backward_matches_autograd),
        cmocka_unit_test(square_output_size_takes_one_value),
        cmocka_unit_test(no_rois_give_an_empty_output),
        cmocka_unit_test(row_cache_and_direct_paths_agree),
        cmocka_unit_test(out_of_range_samples_read_pixel_0_0),
    };
    return cmocka_run_group_tests_name("vision_roi_align", tests, tu_setup, tu_teardown);
}
