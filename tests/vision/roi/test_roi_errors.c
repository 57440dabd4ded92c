/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_roi_errors.c - the RoI ops refuse bad input with LOOM_EINVAL and a
** message naming the argument and what was expected: rois not [K, 5], a
** batch index outside [0, N) (torchvision reads out of bounds there),
** input not 4-D, dtypes that differ or that the op does not take,
** strided views (run as their compact copies), output_size of the wrong length or <= 0, a
** channel count the position-sensitive ops cannot split, a grad whose
** shape disagrees with the attributes, argmax / channel_mapping entries
** out of range. And degenerate but valid input runs without reading out of
** bounds: an empty feature map, NaN and huge box coordinates. The cuda
** kernels refuse what the cpu kernels refuse (where a CUDA device exists).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "roi_test_util.h"

static loom_tensor *zeros(loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, dt, ndim, shape, NULL), LOOM_OK);
    return t;
}

static loom_tensor *map4(int64_t n, int64_t c, int64_t h, int64_t w)
{
    return zeros(LOOM_DTYPE_F32, 4, (const int64_t[]){ n, c, h, w });
}

/* [k, 5] f32 rois, each (batch, 0, 0, 4, 4) */
static loom_tensor *rois(int64_t k, float batch)
{
    loom_tensor *t = zeros(LOOM_DTYPE_F32, 2, (const int64_t[]){ k, 5 });
    float *p = loom_data(t);
    for (int64_t i = 0; i < k; i++) {
        p[i * 5] = batch;
        p[i * 5 + 3] = p[i * 5 + 4] = 4;
    }
    return t;
}

static loom_status call_fwd(const char *op, const loom_tensor *x, const loom_tensor *b, const int64_t *os,
                            int64_t n_os, int64_t sampling_ratio)
{
    loom_attrs *a;
    loom_tensor *out[2];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "output_size", os, n_os), LOOM_OK);
    if (strstr(op, "align") != NULL)
        assert_int_equal(loom_attrs_set_int(a, "sampling_ratio", sampling_ratio), LOOM_OK);
    loom_status st = roi_run(op, (const loom_tensor *[]){ x, b }, 2, a, out, 1, "cpu");
    loom_attrs_free(a);
    if (st == LOOM_OK)
        loom_tensor_free(out[0]);
    return st;
}

static const char *const fwd_ops[] = { "vision.roi_align", "vision.roi_pool", "vision.ps_roi_align",
                                       "vision.ps_roi_pool" };
static const int64_t os2[2] = { 2, 2 };

static void rois_must_be_k_by_5(void **state)
{
    (void)state;
    loom_tensor *x = map4(1, 4, 8, 8), *b4 = zeros(LOOM_DTYPE_F32, 2, (const int64_t[]){ 3, 4 });
    loom_tensor *b1 = zeros(LOOM_DTYPE_F32, 1, (const int64_t[]){ 5 });
    for (size_t i = 0; i < 4; i++) {
        roi_assert_fails(call_fwd(fwd_ops[i], x, b4, os2, 2, -1), LOOM_EINVAL, "'boxes' must be [K, 5]");
        roi_assert_fails(call_fwd(fwd_ops[i], x, b1, os2, 2, -1), LOOM_EINVAL, "'boxes'");
    }
    loom_tensor_free(b1);
    loom_tensor_free(b4);
    loom_tensor_free(x);
}

static void batch_index_must_name_an_image(void **state)
{
    (void)state;
    loom_tensor *x = map4(2, 4, 8, 8);
    const float bad[] = { 2.0f, -1.0f, 7.5f, -3.0f };
    for (size_t i = 0; i < 4; i++)
        for (size_t v = 0; v < sizeof bad / sizeof bad[0]; v++) {
            loom_tensor *b = rois(3, 0.0f);
            ((float *)loom_data(b))[2 * 5] = bad[v];          /* roi 2 */
            roi_assert_fails(call_fwd(fwd_ops[i], x, b, os2, 2, -1), LOOM_EINVAL, "roi 2 of 'boxes' has batch index");
            assert_non_null(strstr(loom_last_error(), "[0, 2)"));
            loom_tensor_free(b);
        }
    /* a NaN index is refused too; 1.7 truncates to 1 as in torchvision */
    loom_tensor *b = rois(1, 0.0f);
    ((float *)loom_data(b))[0] = 0.0f / 0.0f;
    roi_assert_fails(call_fwd("vision.roi_align", x, b, os2, 2, -1), LOOM_EINVAL, "batch index");
    ((float *)loom_data(b))[0] = 1.7f;
    assert_int_equal(call_fwd("vision.roi_align", x, b, os2, 2, -1), LOOM_OK);
    loom_tensor_free(b);
    loom_tensor_free(x);
}

static void input_must_be_4d(void **state)
{
    (void)state;
    loom_tensor *x = zeros(LOOM_DTYPE_F32, 3, (const int64_t[]){ 4, 8, 8 }), *b = rois(1, 0);
    for (size_t i = 0; i < 4; i++)
        roi_assert_fails(call_fwd(fwd_ops[i], x, b, os2, 2, -1), LOOM_EINVAL, "'input' has 3 dimensions; expected 4");
    loom_tensor_free(b);
    loom_tensor_free(x);
}

static void dtypes_must_match_and_be_supported(void **state)
{
    (void)state;
    loom_tensor *x = map4(1, 4, 8, 8), *b = zeros(LOOM_DTYPE_F64, 2, (const int64_t[]){ 1, 5 });
    for (size_t i = 0; i < 4; i++)
        roi_assert_fails(call_fwd(fwd_ops[i], x, b, os2, 2, -1), LOOM_EINVAL, "must have the dtype of 'input'");
    loom_tensor *h = zeros(LOOM_DTYPE_F16, 4, (const int64_t[]){ 1, 4, 8, 8 });
    loom_tensor *hb = zeros(LOOM_DTYPE_F16, 2, (const int64_t[]){ 1, 5 });
    /* torchvision's roi_pool and ps_roi_pool take f32 and f64 only */
    roi_assert_fails(call_fwd("vision.roi_pool", h, hb, os2, 2, -1), LOOM_EINVAL, "'input' has dtype f16");
    roi_assert_fails(call_fwd("vision.ps_roi_pool", h, hb, os2, 2, -1), LOOM_EINVAL, "'input' has dtype f16");
    assert_int_equal(call_fwd("vision.roi_align", h, hb, os2, 2, -1), LOOM_OK);
    loom_tensor *i32 = zeros(LOOM_DTYPE_I32, 4, (const int64_t[]){ 1, 4, 8, 8 });
    roi_assert_fails(call_fwd("vision.roi_align", i32, b, os2, 2, -1), LOOM_EINVAL, "'input' has dtype i32");
    loom_tensor *all[] = { x, b, h, hb, i32 };
    for (size_t i = 0; i < 5; i++)
        loom_tensor_free(all[i]);
}

/* Strided views (a channels-last map, strided boxes) give exactly what their
** compact copies give: the core hands the kernels compact copies. */
static void strided_views_run_as_their_compact_copies(void **state)
{
    (void)state;
    static float data[1 * 4 * 8 * 8], bdata[2 * 5];
    const int64_t shape[4] = { 1, 4, 8, 8 }, strides[4] = { 256, 1, 32, 4 };   /* channels last */
    const int64_t bshape[2] = { 1, 5 }, bstrides[2] = { 1, 2 };
    loom_tensor *x, *b, *xc = map4(1, 4, 8, 8), *bc = rois(1, 0);
    const float *xv = loom_data(xc), *bv = loom_data(bc);
    for (int64_t c = 0; c < 4; c++)
        for (int64_t h = 0; h < 8; h++)
            for (int64_t w = 0; w < 8; w++)
                data[c * strides[1] + h * strides[2] + w * strides[3]] = xv[(c * 8 + h) * 8 + w];
    for (int64_t k = 0; k < 5; k++)
        bdata[k * bstrides[1]] = bv[k];
    assert_int_equal(loom_tensor_wrap(&x, data, LOOM_DTYPE_F32, 4, shape, strides, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&b, bdata, LOOM_DTYPE_F32, 2, bshape, bstrides, NULL), LOOM_OK);
    for (size_t i = 0; i < 4; i++) {
        const loom_tensor *pairs[3][2] = { { xc, bc }, { x, bc }, { xc, b } };
        loom_tensor *got[3] = { NULL, NULL, NULL };
        for (int p = 0; p < 3; p++) {
            loom_attrs *a;
            loom_tensor *out[2] = { NULL, NULL };
            assert_int_equal(loom_attrs_new(&a), LOOM_OK);
            assert_int_equal(loom_attrs_set_ints(a, "output_size", os2, 2), LOOM_OK);
            assert_int_equal(roi_run(fwd_ops[i], pairs[p], 2, a, out, 1, "cpu"), LOOM_OK);
            loom_attrs_free(a);
            got[p] = out[0];
        }
        size_t nbytes = (size_t)loom_numel(got[0]) * sizeof(float);
        assert_memory_equal(loom_data(got[1]), loom_data(got[0]), nbytes);
        assert_memory_equal(loom_data(got[2]), loom_data(got[0]), nbytes);
        for (int p = 0; p < 3; p++)
            loom_tensor_free(got[p]);
    }
    loom_tensor *all[] = { x, b, xc, bc };
    for (size_t i = 0; i < 4; i++)
        loom_tensor_free(all[i]);
}

static void output_size_must_have_one_or_two_positive_values(void **state)
{
    (void)state;
    loom_tensor *x = map4(1, 4, 8, 8), *b = rois(1, 0);
    const int64_t three[3] = { 2, 2, 2 }, zero[2] = { 0, 2 }, neg[2] = { 2, -1 };
    for (size_t i = 0; i < 4; i++) {
        roi_assert_fails(call_fwd(fwd_ops[i], x, b, three, 3, -1), LOOM_EINVAL, "'output_size' must have 1 or 2 values");
        /* refused by the core (the schema's LOOM_ATTR_POSITIVE) before the kernel's own range check */
        roi_assert_fails(call_fwd(fwd_ops[i], x, b, zero, 2, -1), LOOM_EINVAL, "'output_size' must be > 0");
        roi_assert_fails(call_fwd(fwd_ops[i], x, b, neg, 2, -1), LOOM_EINVAL, "'output_size' must be > 0");
        roi_assert_fails(call_fwd(fwd_ops[i], x, b, (const int64_t[]){ 65537 }, 1, -1), LOOM_EINVAL,
                         "'output_size' must be in [1,");
    }
    loom_tensor_free(b);
    loom_tensor_free(x);
}

static void position_sensitive_channels_must_divide(void **state)
{
    (void)state;
    loom_tensor *x = map4(1, 6, 8, 8), *b = rois(1, 0);
    roi_assert_fails(call_fwd("vision.ps_roi_align", x, b, os2, 2, -1), LOOM_EINVAL, "got 6 channels");
    roi_assert_fails(call_fwd("vision.ps_roi_pool", x, b, os2, 2, -1), LOOM_EINVAL, "divisible");
    loom_tensor_free(b);
    loom_tensor_free(x);
}

static void huge_adaptive_grid_is_refused(void **state)
{
    (void)state;
    loom_tensor *x = map4(1, 4, 8, 8), *b = rois(1, 0);
    ((float *)loom_data(b))[3] = 1e9f;
    const int64_t one[1] = { 1 };
    roi_assert_fails(call_fwd("vision.roi_align", x, b, one, 1, -1), LOOM_EINVAL, "adaptive sampling grid");
    assert_int_equal(call_fwd("vision.roi_align", x, b, one, 1, 2), LOOM_OK);
    roi_assert_fails(call_fwd("vision.roi_align", x, b, one, 1, 1 << 20), LOOM_EINVAL, "'sampling_ratio' must be <=");
    loom_tensor_free(b);
    loom_tensor_free(x);
}

static loom_status call_bwd(const char *op, const loom_tensor *grad, const loom_tensor *b, const loom_tensor *map,
                            const int64_t *nchw, int64_t ph, int64_t pw)
{
    loom_attrs *a;
    loom_tensor *out;
    roi_params p = { .ph = ph, .pw = pw, .sampling_ratio = -1, .spatial_scale = 1.0 };
    a = roi_backward_attrs(op, &p, nchw);
    loom_status st = roi_run(op, (const loom_tensor *[]){ grad, b, map }, map != NULL ? 3 : 2, a, &out, 1, "cpu");
    loom_attrs_free(a);
    if (st == LOOM_OK)
        loom_tensor_free(out);
    return st;
}

static void backward_checks_grad_shape_and_maps(void **state)
{
    (void)state;
    const int64_t nchw[4] = { 2, 8, 6, 6 };
    loom_tensor *b = rois(3, 1), *g = map4(3, 8, 2, 2), *gbad = map4(3, 7, 2, 2);
    loom_tensor *am = zeros(LOOM_DTYPE_I32, 4, (const int64_t[]){ 3, 8, 2, 2 });
    roi_assert_fails(call_bwd("vision.roi_align_backward", gbad, b, NULL, nchw, 2, 2), LOOM_EINVAL,
                     "'grad' f32[3,7,2,2] must be [K, channels, PH, PW] = [3, 8, 2, 2]");
    assert_int_equal(call_bwd("vision.roi_align_backward", g, b, NULL, nchw, 2, 2), LOOM_OK);
    /* argmax entries: -1 or a pixel of the 6 x 6 map */
    assert_int_equal(call_bwd("vision.roi_pool_backward", g, b, am, nchw, 2, 2), LOOM_OK);
    ((int32_t *)loom_data(am))[5] = 36;
    roi_assert_fails(call_bwd("vision.roi_pool_backward", g, b, am, nchw, 2, 2), LOOM_EINVAL,
                     "'argmax' element 5 is 36");
    ((int32_t *)loom_data(am))[5] = -2;
    roi_assert_fails(call_bwd("vision.roi_pool_backward", g, b, am, nchw, 2, 2), LOOM_EINVAL, "'argmax' element 5");
    /* ps: grad [K, channels / 4, 2, 2], channel_mapping in [0, channels) */
    loom_tensor *gp = map4(3, 2, 2, 2), *cm = zeros(LOOM_DTYPE_I32, 4, (const int64_t[]){ 3, 2, 2, 2 });
    assert_int_equal(call_bwd("vision.ps_roi_align_backward", gp, b, cm, nchw, 2, 2), LOOM_OK);
    assert_int_equal(call_bwd("vision.ps_roi_pool_backward", gp, b, cm, nchw, 2, 2), LOOM_OK);
    ((int32_t *)loom_data(cm))[3] = 8;
    roi_assert_fails(call_bwd("vision.ps_roi_align_backward", gp, b, cm, nchw, 2, 2), LOOM_EINVAL,
                     "'channel_mapping' element 3 is 8");
    roi_assert_fails(call_bwd("vision.ps_roi_pool_backward", gp, b, cm, nchw, 2, 2), LOOM_EINVAL,
                     "'channel_mapping' element 3 is 8");
    roi_assert_fails(call_bwd("vision.ps_roi_pool_backward", gp, b, am, nchw, 2, 2), LOOM_EINVAL,
                     "'channel_mapping' i32[3,8,2,2] must have the shape of 'grad'");
    /* batch index against batch_size */
    const int64_t one_image[4] = { 1, 8, 6, 6 };
    roi_assert_fails(call_bwd("vision.roi_align_backward", g, b, NULL, one_image, 2, 2), LOOM_EINVAL,
                     "roi 0 of 'rois' has batch index 1");
    const int64_t negative[4] = { 2, 8, -6, 6 };
    roi_assert_fails(call_bwd("vision.roi_align_backward", g, b, NULL, negative, 2, 2), LOOM_EINVAL, "must be >= 0");
    loom_tensor *all[] = { b, g, gbad, am, gp, cm };
    for (size_t i = 0; i < 6; i++)
        loom_tensor_free(all[i]);
}

/* H = 0: every sample is outside, every pooling bin empty: zeros, argmax -1 */
static void empty_map_pools_nothing(void **state)
{
    (void)state;
    loom_tensor *x = map4(1, 4, 0, 5), *b = rois(2, 0), *out[2];
    const int64_t os1[1] = { 1 };
    for (size_t i = 0; i < 4; i++) {
        loom_attrs *a;
        assert_int_equal(loom_attrs_new(&a), LOOM_OK);
        assert_int_equal(loom_attrs_set_ints(a, "output_size", os1, 1), LOOM_OK);
        int n_out = i == 0 ? 1 : 2;
        if (roi_run(fwd_ops[i], (const loom_tensor *[]){ x, b }, 2, a, out, n_out, "cpu") != LOOM_OK)
            fail_msg("%s on an empty map: %s", fwd_ops[i], loom_last_error());
        for (int64_t e = 0; e < loom_numel(out[0]); e++)
            assert_true(roi_get(out[0], e) == 0.0);
        if (i == 1)
            for (int64_t e = 0; e < loom_numel(out[1]); e++)
                assert_true(roi_get(out[1], e) == -1.0);
        for (int o = 0; o < n_out; o++)
            loom_tensor_free(out[o]);
        loom_attrs_free(a);
    }
    const int64_t nchw[4] = { 1, 4, 0, 5 };
    loom_tensor *g = map4(2, 4, 1, 1);
    assert_int_equal(call_bwd("vision.roi_align_backward", g, b, NULL, nchw, 1, 1), LOOM_OK);
    loom_tensor_free(g);
    loom_tensor_free(b);
    loom_tensor_free(x);
}

/* NaN and huge coordinates sample nothing (or saturate) instead of
** overflowing an int as torchvision's casts would */
static void nan_and_huge_coordinates_are_safe(void **state)
{
    (void)state;
    loom_tensor *x = map4(2, 4, 8, 8), *b = rois(4, 1);
    float *p = loom_data(b);
    p[1] = 0.0f / 0.0f;
    p[5 + 3] = 1e30f;
    p[10 + 1] = -1e30f;
    p[15 + 2] = 1.0f / 0.0f;
    p[15 + 4] = 1.0f / 0.0f;
    for (size_t i = 0; i < 4; i++)
        if (call_fwd(fwd_ops[i], x, b, os2, 2, 2) != LOOM_OK)
            fail_msg("%s with NaN / huge boxes: %s", fwd_ops[i], loom_last_error());
    /* an adaptive grid from a huge box is refused rather than run for hours */
    roi_assert_fails(call_fwd("vision.roi_align", x, b, os2, 2, -1), LOOM_EINVAL, "roi 1");
    loom_tensor_free(b);
    loom_tensor_free(x);
}

/* The cuda kernels refuse what the cpu kernels refuse (a bad batch index). */
static void cuda_refuses_bad_batch_index(void **state)
{
    (void)state;
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) != LOOM_OK || di.device.device_type != LOOM_DEVICE_CUDA)
            continue;
        loom_tensor *x = map4(2, 18, 13, 17), *b = rois(4, 0), *dx, *db, *out;
        ((float *)loom_data(b))[3 * 5] = 2.0f;
        assert_int_equal(loom_tensor_copy_to(&dx, x, &di.device), LOOM_OK);
        assert_int_equal(loom_tensor_copy_to(&db, b, &di.device), LOOM_OK);
        roi_params p = { .ph = 2, .pw = 2, .spatial_scale = 1.0, .sampling_ratio = -1 };
        loom_attrs *a = roi_forward_attrs("vision.roi_align", &p, 0);
        roi_assert_fails(roi_run("vision.roi_align", (const loom_tensor *[]){ dx, db }, 2, a, &out, 1, "cuda"),
                         LOOM_EINVAL, "roi 3 of 'boxes' has batch index 2");
        loom_attrs_free(a);
        loom_tensor *all[] = { x, b, dx, db };
        for (size_t j = 0; j < 4; j++)
            loom_tensor_free(all[j]);
        return;
    }
    print_message("no CUDA device: cuda kernels not run\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rois_must_be_k_by_5),
        cmocka_unit_test(batch_index_must_name_an_image),
        cmocka_unit_test(input_must_be_4d),
        cmocka_unit_test(dtypes_must_match_and_be_supported),
        cmocka_unit_test(strided_views_run_as_their_compact_copies),
        cmocka_unit_test(output_size_must_have_one_or_two_positive_values),
        cmocka_unit_test(position_sensitive_channels_must_divide),
        cmocka_unit_test(huge_adaptive_grid_is_refused),
        cmocka_unit_test(backward_checks_grad_shape_and_maps),
        cmocka_unit_test(empty_map_pools_nothing),
        cmocka_unit_test(nan_and_huge_coordinates_are_safe),
        cmocka_unit_test(cuda_refuses_bad_batch_index),
    };
    return cmocka_run_group_tests_name("vision_roi_errors", tests, tu_setup, tu_teardown);
}
