/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_detection_transform.c - vision.rcnn_transform, vision.rcnn_resize
** and vision.rcnn_postprocess_boxes against torchvision's
** GeneralizedRCNNTransform (eval) on the cases of
** tools/gen_vision_detection_goldens.py: two images of different sizes in
** one list, a long edge that caps the scale, a 1x1 image (up-scaled like
** any other, as torchvision does), down-scaling with a divisor of 7.
**
** Tolerances:
**  - sizes (image_sizes, the batch's padded shape): identical.
**  - pixels: |d| <= 2e-6. The normalization is torchvision's float32
**    expression (identical); the bilinear resize (vision.resize) sums its
**    two taps per axis in PyTorch's order but in separable passes, so a
**    value may differ by an ulp of the normalized range (|x| < 2.7: 2.4e-7)
**    per pass; 2e-6 leaves room for a few and would catch a tap off by
**    one pixel (differences of 1e-2 and more on these random images).
**    The padding is exactly 0.
**  - boxes back to the original size: identical (one float32 product by
**    a float32 ratio, as torchvision).
** The run under LOOM_CPU_MAX_ISA=sse4 (vision-detection-transform-scalar)
** checks the same cases with vision.resize's portable passes.
*/
#include "detection_test.h"

#define PIXEL_TOL 2e-6

static void transform_case(const char *stem, const char *attrs)
{
    loom_tensor *in[3] = { dt_golden(stem, "images"), dt_golden(stem, "images_offsets"),
                           dt_golden(stem, "original_sizes") };
    loom_tensor *out[2];
    if (dt_run("vision.rcnn_transform", (const loom_tensor *const *)in, 3, attrs, out, 2) != LOOM_OK)
        fail_msg("vision.rcnn_transform on %s: %s", stem, loom_last_error());
    loom_tensor *tensors = dt_golden(stem, "tensors"), *sizes = dt_golden(stem, "image_sizes");
    char what[96];
    snprintf(what, sizeof what, "%s image_sizes", stem);
    tu_assert_identical(out[1], sizes, what);
    snprintf(what, sizeof what, "%s tensors", stem);
    const double d = dt_max_diff(out[0], tensors, what);
    if (d > PIXEL_TOL)
        fail_msg("%s: largest difference %g > %g", what, d, PIXEL_TOL);
    /* the padding: exactly 0 past each image's size */
    const float *t = loom_data(out[0]);
    const int64_t *s = loom_data(out[1]);
    const int64_t b = out[0]->shape[0], c = out[0]->shape[1], hp = out[0]->shape[2], wp = out[0]->shape[3];
    for (int64_t i = 0; i < b; i++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < hp; y++)
                for (int64_t x = 0; x < wp; x++)
                    if ((y >= s[2 * i] || x >= s[2 * i + 1]) && t[((i * c + k) * hp + y) * wp + x] != 0.0f)
                        fail_msg("%s: padding at image %lld (%lld, %lld) is not 0", stem, (long long)i, (long long)y,
                                 (long long)x);
    loom_tensor *g[4] = { tensors, sizes };
    dt_free(g, 2);
    dt_free(out, 2);
    dt_free(in, 3);
}

static void resize_case(const char *stem, const char *attrs)
{
    char rs[64];
    snprintf(rs, sizeof rs, "%s_resize", stem);
    loom_tensor *in[1] = { dt_golden(rs, "image") }, *want = dt_golden(rs, "output"), *out[1];
    if (dt_run("vision.rcnn_resize", (const loom_tensor *const *)in, 1, attrs, out, 1) != LOOM_OK)
        fail_msg("vision.rcnn_resize on %s: %s", rs, loom_last_error());
    const double d = dt_max_diff(out[0], want, rs);
    if (d > PIXEL_TOL)
        fail_msg("%s: largest difference %g > %g", rs, d, PIXEL_TOL);
    loom_tensor_free(want);
    dt_free(out, 1);
    dt_free(in, 1);
}

static const struct {
    const char *stem, *attrs;
} cases[] = {
    { "transform_two", "min_size=40;max_size=64" },
    { "transform_cap", "min_size=40;max_size=64" },
    { "transform_1x1", "min_size=20;max_size=30" },
    { "transform_down", "min_size=17;max_size=25;size_divisible=7" },
};

static void transform_matches_torchvision(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        transform_case(cases[i].stem, cases[i].attrs);
}

static void resize_matches_torchvision(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* rcnn_resize takes only the size attributes */
        char attrs[64];
        snprintf(attrs, sizeof attrs, "%s", cases[i].attrs);
        char *div = strstr(attrs, ";size_divisible");
        if (div)
            *div = '\0';
        resize_case(cases[i].stem, attrs);
    }
}

static void postprocess_matches_torchvision(void **state)
{
    (void)state;
    static const struct {
        const char *stem, *attrs;
    } pp[] = {
        { "postprocess_up", "image_size=64,91;original_size=45,64" },
        { "postprocess_down", "image_size=33,40;original_size=97,118" },
    };
    for (size_t i = 0; i < sizeof pp / sizeof pp[0]; i++) {
        loom_tensor *in[1] = { dt_golden(pp[i].stem, "boxes") }, *want = dt_golden(pp[i].stem, "output"), *out[1];
        if (dt_run("vision.rcnn_postprocess_boxes", (const loom_tensor *const *)in, 1, pp[i].attrs, out, 1) != LOOM_OK)
            fail_msg("%s: %s", pp[i].stem, loom_last_error());
        tu_assert_identical(out[0], want, pp[i].stem);
        loom_tensor_free(want);
        dt_free(out, 1);
        dt_free(in, 1);
    }
}

static loom_tensor *i64_tensor(int32_t ndim, const int64_t *shape, const int64_t *v)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_I64, ndim, shape, NULL), LOOM_OK);
    if (loom_numel(t) > 0)
        memcpy(loom_data(t), v, loom_tensor_nbytes(t));
    return t;
}

/* images of b [3, h, w] images (sizes hw[2 b]) of zeros, with offsets and sizes */
static void image_list(int64_t b, const int64_t *hw, int64_t extra_values, loom_tensor **in)
{
    int64_t off[8] = { 0 };
    for (int64_t i = 0; i < b; i++)
        off[i + 1] = off[i] + 3 * hw[2 * i] * hw[2 * i + 1];
    const int64_t n[1] = { off[b] + extra_values }, no[1] = { b + 1 }, ns[2] = { b, 2 };
    in[0] = tu_random_f32(1, n, 7);
    in[1] = i64_tensor(1, no, off);
    in[2] = i64_tensor(2, ns, hw);
}

static void transform_refuses_bad_input(void **state)
{
    (void)state;
    loom_tensor *in[3];
    /* an empty list: torchvision's batch_images fails on it (IndexError) */
    image_list(0, NULL, 0, in);
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, NULL, 2, "the image list is empty");
    dt_free(in, 3);
    /* an image without pixels */
    const int64_t zero_w[2] = { 5, 0 };
    image_list(1, zero_w, 0, in);
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, NULL, 2, "image 0 is 5 x 0");
    dt_free(in, 3);
    /* values that do not make [3, h, w] images (a grey image, a file of another size) */
    const int64_t two[4] = { 4, 6, 5, 5 };
    image_list(2, two, 0, in);
    int64_t *sizes = loom_data(in[2]);
    sizes[3] = 4;
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, NULL, 2, "image 1 has 75 values");
    dt_free(in, 3);
    image_list(2, two, 3, in);
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, NULL, 2, "they must run from 0 to the");
    dt_free(in, 3);
    /* sizes that do not match the list, mean and std of other counts */
    image_list(2, two, 0, in);
    loom_tensor_free(in[2]);
    in[2] = i64_tensor(2, (const int64_t[]){ 1, 2 }, two);
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, NULL, 2, "expected [2, 2]");
    dt_free(in, 3);
    image_list(1, two, 0, in);
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, "image_mean=0.5;image_std=0.2,0.3", 2,
               "image_mean has 1 values and image_std 2");
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, "image_mean=0.5;image_std=0.2", 2,
               "image 0 has 72 values");
    dt_free(in, 3);
    /* a long thin image whose short side would vanish under max_size */
    const int64_t thin[2] = { 1, 400 };
    image_list(1, thin, 0, in);
    dt_refused("vision.rcnn_transform", (const loom_tensor *const *)in, 3, "min_size=10;max_size=100", 2,
               "would be resized to 0 x 100");
    dt_free(in, 3);
    /* the one-image resize and the boxes */
    loom_tensor *img = tu_random_f32(3, (const int64_t[]){ 3, 1, 400 }, 3);
    dt_refused("vision.rcnn_resize", (const loom_tensor *const *)&img, 1, "min_size=10;max_size=100", 1,
               "would be resized to 0 x 100");
    loom_tensor_free(img);
    loom_tensor *boxes = tu_random_f32(2, (const int64_t[]){ 3, 5 }, 3);
    dt_refused("vision.rcnn_postprocess_boxes", (const loom_tensor *const *)&boxes, 1,
               "image_size=10,10;original_size=20,20", 1, "expected [N, 4]");
    loom_tensor_free(boxes);
    boxes = tu_random_f32(2, (const int64_t[]){ 3, 4 }, 3);
    dt_refused("vision.rcnn_postprocess_boxes", (const loom_tensor *const *)&boxes, 1,
               "image_size=10;original_size=20,20", 1, "image_size has 1 values");
    loom_tensor_free(boxes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(transform_matches_torchvision),
        cmocka_unit_test(resize_matches_torchvision),
        cmocka_unit_test(postprocess_matches_torchvision),
        cmocka_unit_test(transform_refuses_bad_input),
    };
    return cmocka_run_group_tests_name("vision_detection_transform", tests, tu_setup, tu_teardown);
}
