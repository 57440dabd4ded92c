/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_resize_strided.c - vision.resize reads its image through the strides
** (plugins/vision/transforms/resize_strided.c): a channels-last buffer (HWC,
** and NHWC for a batch) seen as [..., C, H, W], and a crop of a larger
** image (rows longer than the view), must give the compact image's bits,
** for uint8 and float32, bilinear and bicubic with and without antialias,
** down and up, the width kept (no horizontal pass) and nearest (both of
** which take the compact copy). The compact path itself is checked against
** torchvision by test_transforms_goldens.c. It runs under LOOM_STRICT=1,
** where the core refuses to copy a strided input for a kernel that cannot
** read one, and again with LOOM_CPU_MAX_ISA=sse4 for the portable passes.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tu_ops.h"

static loom_attrs *parse(const char *text)
{
    loom_attrs *a = NULL;
    char buf[256];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    snprintf(buf, sizeof buf, "%s", text);
    for (char *kv = strtok(buf, ";"); kv != NULL; kv = strtok(NULL, ";")) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        if (loom_attrs_parse(a, "vision.resize", kv, eq + 1) != LOOM_OK)
            fail_msg("%s: %s", text, loom_last_error());
    }
    return a;
}

static loom_tensor *resize(const loom_tensor *x, const loom_attrs *a, const char *what)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    loom_tensor *out = NULL;
    if (loom_run("vision.resize", (const loom_tensor *[]){ x }, 1, a, &out, 1, &opt) != LOOM_OK)
        fail_msg("%s: %s", what, loom_last_error());
    return out;
}

static const char *const attr_cases[] = {
    "size=13,17;interpolation=bilinear",                    /* down both ways, antialias */
    "size=13,17;interpolation=bilinear;antialias=false",
    "size=20;interpolation=bicubic",                        /* short edge, bicubic antialias */
    "size=61,83;interpolation=bicubic;antialias=false",     /* up */
    "size=50,77;interpolation=bilinear",                    /* up in width, down in height */
    "size=9,WIDTH;interpolation=bilinear",                  /* width kept: compact copy, vertical pass only */
    "size=17,11;interpolation=nearest",                     /* nearest: compact copy */
    "size=17,11;interpolation=nearest-exact",
};

/* x ([N,] C, H, W compact) against the same pixels in a channels-last
** buffer and inside a wider, taller canvas, for every case of attr_cases. */
static void check_layouts(const char *name)
{
    loom_tensor *x = tu_npy(name);
    const int32_t nd = x->ndim;
    const int64_t n = nd == 4 ? x->shape[0] : 1, c = x->shape[nd - 3], h = x->shape[nd - 2], w = x->shape[nd - 1];
    const size_t es = loom_tensor_nbytes(x) / (size_t)loom_numel(x);
    const uint8_t *src = loom_data(x);
    /* channels-last: element (i, ch, y, x) at ((i * h + y) * w + x) * c + ch */
    uint8_t *hwc = malloc(loom_tensor_nbytes(x));
    /* a canvas 3 rows and 5 columns larger, the image at row 2, column 3 of each plane */
    const int64_t ch_ = h + 3, cw = w + 5;
    uint8_t *canvas = calloc((size_t)(n * c * ch_ * cw), es);
    assert_non_null(hwc);
    assert_non_null(canvas);
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t xx = 0; xx < w; xx++) {
                    const size_t from = (size_t)(((i * c + k) * h + y) * w + xx) * es;
                    memcpy(hwc + (size_t)(((i * h + y) * w + xx) * c + k) * es, src + from, es);
                    memcpy(canvas + (size_t)(((i * c + k) * ch_ + y + 2) * cw + xx + 3) * es, src + from, es);
                }
    int64_t s_hwc[4], s_crop[4];
    if (nd == 4) {
        const int64_t a[4] = { h * w * c, 1, w * c, c }, b[4] = { c * ch_ * cw, ch_ * cw, cw, 1 };
        memcpy(s_hwc, a, sizeof a);
        memcpy(s_crop, b, sizeof b);
    } else {
        const int64_t a[3] = { 1, w * c, c }, b[3] = { ch_ * cw, cw, 1 };
        memcpy(s_hwc, a, sizeof a);
        memcpy(s_crop, b, sizeof b);
    }
    loom_tensor *v_hwc, *v_crop;
    assert_int_equal(loom_tensor_wrap(&v_hwc, hwc, loom_tensor_dtype_of(x), nd, x->shape, s_hwc, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&v_crop, canvas + (size_t)(2 * cw + 3) * es, loom_tensor_dtype_of(x), nd,
                                      x->shape, s_crop, NULL),
                     LOOM_OK);
    for (size_t i = 0; i < sizeof attr_cases / sizeof attr_cases[0]; i++) {
        char text[128], what[200];
        const char *at = strstr(attr_cases[i], "WIDTH");
        if (at != NULL)
            snprintf(text, sizeof text, "%.*s%lld%s", (int)(at - attr_cases[i]), attr_cases[i], (long long)w, at + 5);
        else
            snprintf(text, sizeof text, "%s", attr_cases[i]);
        loom_attrs *a = parse(text);
        loom_tensor *want = resize(x, a, text), *got_hwc = resize(v_hwc, a, text), *got_crop = resize(v_crop, a, text);
        snprintf(what, sizeof what, "%s channels-last, %s", name, text);
        tu_assert_identical(got_hwc, want, what);
        snprintf(what, sizeof what, "%s inside a larger canvas, %s", name, text);
        tu_assert_identical(got_crop, want, what);
        loom_tensor_free(want);
        loom_tensor_free(got_hwc);
        loom_tensor_free(got_crop);
        loom_attrs_free(a);
    }
    loom_tensor_free(v_hwc);
    loom_tensor_free(v_crop);
    free(hwc);
    free(canvas);
    loom_tensor_free(x);
}

static void u8_image(void **state)
{
    (void)state;
    check_layouts("vision/transforms/photo_u8");
}

static void u8_batch(void **state)
{
    (void)state;
    check_layouts("vision/transforms/photo_batch_u8");
}

static void f32_image(void **state)
{
    (void)state;
    check_layouts("vision/transforms/small_f32");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(u8_image),
        cmocka_unit_test(u8_batch),
        cmocka_unit_test(f32_image),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
