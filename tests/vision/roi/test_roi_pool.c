/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_roi_pool.c - vision.roi_pool, vision.ps_roi_align and
** vision.ps_roi_pool with their argmax / channel_mapping outputs, and their
** backward ops, against torchvision (tools/gen_vision_roi_goldens.py), on
** the same rois as test_roi_align.c (inside, partly and wholly outside,
** zero-area, reversed, half-pixel corners that exercise C round()).
**
** Tolerances: the kernels replay torchvision's CPU arithmetic in its
** order (max with strict >, sums in scan order, one division), so values
** and gradients match bit for bit (rtol 0) in f32, f64 and, for
** ps_roi_align, f16 (c10::Half rounding after every operation); argmax and
** channel_mapping are integers and match exactly.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "roi_test_util.h"

/* forward op, its backward, the map input's stem */
static void check_case(const char *op, const char *bwd, const char *casename, const char *feat, const char *dt,
                       const char *map_suffix)
{
    char what[200];
    roi_params p = roi_load_params(casename);
    loom_tensor *x = roi_npy("%s_%s", feat, dt), *b = roi_npy("boxes_%s", dt);
    loom_tensor *want = roi_npy("%s", casename), *want_map = roi_npy("%s_%s", casename, map_suffix);
    loom_tensor *go = roi_npy("%s_gradout", casename), *want_gi = roi_npy("%s_gradin", casename);
    loom_attrs *a = roi_forward_attrs(op, &p, 0);
    loom_tensor *out[2], *gi;
    loom_status st = roi_run(op, (const loom_tensor *[]){ x, b }, 2, a, out, 2, "cpu");
    if (st != LOOM_OK)
        fail_msg("%s %s: %s", op, casename, loom_last_error());
    snprintf(what, sizeof what, "%s %s output", op, casename);
    roi_assert_close(out[0], want, 0, 0, what);
    snprintf(what, sizeof what, "%s %s %s", op, casename, map_suffix);
    roi_assert_close(out[1], want_map, 0, 0, what);
    loom_attrs_free(a);
    a = roi_backward_attrs(bwd, &p, x->shape);
    st = roi_run(bwd, (const loom_tensor *[]){ go, b, out[1] }, 3, a, &gi, 1, "cpu");
    if (st != LOOM_OK)
        fail_msg("%s %s: %s", bwd, casename, loom_last_error());
    snprintf(what, sizeof what, "%s %s", bwd, casename);
    roi_assert_close(gi, want_gi, 0, 0, what);
    loom_tensor *all[] = { x, b, want, want_map, go, want_gi, out[0], out[1], gi };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

static void roi_pool_and_backward_match_torchvision(void **state)
{
    static const char *const cases[][2] = {
        { "pool_f32_ss1.0", "f32" }, { "pool_f32_ss0.5", "f32" }, { "pool_f32_ss0.25", "f32" },
        { "pool_f64_ss0.5", "f64" },
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case("vision.roi_pool", "vision.roi_pool_backward", cases[i][0], "feat", cases[i][1], "argmax");
}

static void ps_roi_align_and_backward_match_torchvision(void **state)
{
    static const char *const dts[] = { "f32", "f64", "f16" };
    static const char *const cfg[] = { "sr-1_ss1.0", "sr2_ss0.5", "sr-1_ss0.25" };
    (void)state;
    for (size_t d = 0; d < 3; d++)
        for (size_t c = 0; c < 3; c++) {
            char name[64];
            snprintf(name, sizeof name, "psalign_%s_%s", dts[d], cfg[c]);
            check_case("vision.ps_roi_align", "vision.ps_roi_align_backward", name, "feat18", dts[d], "map");
        }
}

static void ps_roi_pool_and_backward_match_torchvision(void **state)
{
    static const char *const dts[] = { "f32", "f64" };
    static const char *const cfg[] = { "sr-1_ss1.0", "sr-1_ss0.25" };
    (void)state;
    for (size_t d = 0; d < 2; d++)
        for (size_t c = 0; c < 2; c++) {
            char name[64];
            snprintf(name, sizeof name, "pspool_%s_%s", dts[d], cfg[c]);
            check_case("vision.ps_roi_pool", "vision.ps_roi_pool_backward", name, "feat18", dts[d], "map");
        }
}

/* One output requested: the trailing argmax is dropped, as
** torchvision.ops.roi_pool returns only the values. */
static void roi_pool_with_one_output(void **state)
{
    (void)state;
    roi_params p = roi_load_params("pool_f32_ss0.5");
    loom_tensor *x = roi_npy("feat_f32"), *b = roi_npy("boxes_f32"), *want = roi_npy("pool_f32_ss0.5"), *out;
    loom_attrs *a = roi_forward_attrs("vision.roi_pool", &p, 0);
    assert_int_equal(roi_run("vision.roi_pool", (const loom_tensor *[]){ x, b }, 2, a, &out, 1, "cpu"), LOOM_OK);
    roi_assert_close(out, want, 0, 0, "roi_pool values only");
    loom_tensor_free(out);
    loom_tensor_free(want);
    loom_tensor_free(b);
    loom_tensor_free(x);
    loom_attrs_free(a);
}

/* 200 rois on a [2, 19, 30, 40] map take the NHWC path of roi_pool (the
** rois cover the map many times), one roi the direct NCHW path: values
** and argmax must not depend on the path (19 channels: AVX2 blocks of 8
** and a tail). */
static void roi_pool_nhwc_and_direct_paths_agree(void **state)
{
    (void)state;
    const int64_t xs[4] = { 2, 19, 30, 40 }, bs[2] = { 200, 5 }, s1[2] = { 1, 5 };
    loom_tensor *x, *b, *one, *many[2], *few[2];
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 4, xs, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&b, LOOM_DTYPE_F32, 2, bs, NULL), LOOM_OK);
    float *px = loom_data(x), *pb = loom_data(b);
    uint32_t seed = 777;
    for (int64_t i = 0; i < loom_numel(x); i++) {
        seed = seed * 1664525u + 1013904223u;
        px[i] = (float)((seed >> 8) % 64u) / 8.0f;          /* coarse values: ties in every bin */
    }
    for (int64_t r = 0; r < bs[0]; r++) {
        float v[4];
        for (int i = 0; i < 4; i++) {
            seed = seed * 1664525u + 1013904223u;
            v[i] = (float)(seed >> 8) / 16777216.0f;
        }
        pb[r * 5] = (float)(r % 2);
        pb[r * 5 + 1] = v[0] * 90.0f - 10.0f;
        pb[r * 5 + 2] = v[1] * 70.0f - 10.0f;
        pb[r * 5 + 3] = pb[r * 5 + 1] + v[2] * 60.0f;
        pb[r * 5 + 4] = pb[r * 5 + 2] + v[3] * 50.0f;
    }
    roi_params p = { .ph = 7, .pw = 7, .spatial_scale = 0.5 };
    loom_attrs *a = roi_forward_attrs("vision.roi_pool", &p, 0);
    assert_int_equal(roi_run("vision.roi_pool", (const loom_tensor *[]){ x, b }, 2, a, many, 2, "cpu"), LOOM_OK);
    const int64_t per = xs[1] * 49;
    for (int64_t r = 0; r < bs[0]; r += 23) {
        assert_int_equal(loom_tensor_wrap(&one, pb + r * 5, LOOM_DTYPE_F32, 2, s1, NULL, NULL), LOOM_OK);
        assert_int_equal(roi_run("vision.roi_pool", (const loom_tensor *[]){ x, one }, 2, a, few, 2, "cpu"), LOOM_OK);
        for (int64_t i = 0; i < per; i++)
            if (roi_get(many[0], r * per + i) != roi_get(few[0], i)
                || roi_get(many[1], r * per + i) != roi_get(few[1], i))
                fail_msg("roi %lld element %lld: %g @ %g (many rois) vs %g @ %g (one roi)", (long long)r,
                         (long long)i, roi_get(many[0], r * per + i), roi_get(many[1], r * per + i),
                         roi_get(few[0], i), roi_get(few[1], i));
        loom_tensor_free(few[0]);
        loom_tensor_free(few[1]);
        loom_tensor_free(one);
    }
    loom_tensor_free(many[0]);
    loom_tensor_free(many[1]);
    loom_attrs_free(a);
    loom_tensor_free(b);
    loom_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(roi_pool_and_backward_match_torchvision),
        cmocka_unit_test(ps_roi_align_and_backward_match_torchvision),
        cmocka_unit_test(ps_roi_pool_and_backward_match_torchvision),
        cmocka_unit_test(roi_pool_with_one_output),
        cmocka_unit_test(roi_pool_nhwc_and_direct_paths_agree),
    };
    return cmocka_run_group_tests_name("vision_roi_pool", tests, tu_setup, tu_teardown);
}
