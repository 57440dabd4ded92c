/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_image_io_decode.c - vision.decode_jpeg / decode_png / decode_image
** against torchvision.io on every test image, mode and EXIF setting of
** tests/data/vision/image_io/cases.txt: bit-exact (the same libjpeg-turbo
** settings, ISLOW IDCT and fancy upsampling, and the same libpng
** transformations give the same samples; any difference is a bug). Also:
** the modes torchvision refuses, the cases where torchvision's result is
** uninitialised memory (loom's defined result checked instead), a batch
** through offsets, and max_pixels.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "image_io_test_util.h"

static const char *op_of(const char *image)
{
    return strstr(image, ".jpg") != NULL ? "vision.decode_jpeg" : "vision.decode_png";
}

static void test_goldens(void **state)
{
    (void)state;
    size_t n;
    iot_case *cases = iot_manifest("cases.txt", &n);
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        const iot_case *c = &cases[i];
        char what[200], golden[160];
        snprintf(golden, sizeof golden, "vision/image_io/%s", c->golden);
        loom_tensor *bytes = iot_file(c->image), *want = tu_npy(golden);
        /* the format's own decoder, then decode_image, which must sniff it */
        for (int k = 0; k < 2; k++) {
            const char *op = k == 0 ? op_of(c->image) : "vision.decode_image";
            loom_tensor *got;
            snprintf(what, sizeof what, "%s %s mode %s exif %d", op, c->image, c->mode, c->exif);
            if (iot_decode(op, bytes, c->mode, c->exif, 0, &got) != LOOM_OK)
                fail_msg("%s: %s", what, loom_last_error());
            tu_assert_identical(got, want, what);
            loom_tensor_free(got);
        }
        loom_tensor_free(bytes);
        loom_tensor_free(want);
    }
    free(cases);
}

/* The default mode is UNCHANGED. */
static void test_default_mode(void **state)
{
    (void)state;
    loom_tensor *bytes = iot_file("rgb420.jpg"), *want = tu_npy("vision/image_io/rgb420__UNCHANGED"), *got;
    assert_int_equal(iot_decode("vision.decode_jpeg", bytes, NULL, 0, 0, &got), LOOM_OK);
    tu_assert_identical(got, want, "default mode");
    loom_tensor_free(got);
    assert_int_equal(iot_decode("vision.decode_jpeg", bytes, "RGBA", 0, 0, &got), LOOM_EINVAL);
    loom_tensor_free(bytes);
    loom_tensor_free(want);
}

/* Every mode torchvision refuses, refused with torchvision's reason. */
static void test_refused_modes(void **state)
{
    (void)state;
    size_t n;
    iot_case *cases = iot_manifest("refused.txt", &n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        loom_tensor *bytes = iot_file(cases[i].image), *got = NULL;
        loom_status st = iot_decode(op_of(cases[i].image), bytes, cases[i].mode, 0, 0, &got);
        if (st != LOOM_EINVAL || strstr(loom_last_error(), "not supported for JPEG") == NULL)
            fail_msg("%s mode %s: status %d (%s)", cases[i].image, cases[i].mode, (int)st, loom_last_error());
        loom_tensor_free(bytes);
    }
    free(cases);
}

/* Where torchvision's result is uninitialised memory: a palette PNG without
** tRNS in an alpha mode is the colour mode's result plus an opaque alpha
** plane; a 4-bit palette PNG in UNCHANGED gives its indices, one per byte
** (checked through the palette: RGB of the indices' colours = RGB mode). */
static void test_defined_where_torchvision_is_not(void **state)
{
    (void)state;
    const char *pairs[2][3] = { { "GRAY_ALPHA", "GRAY", "1" }, { "RGB_ALPHA", "RGB", "3" } };
    loom_tensor *bytes = iot_file("palette.png");
    for (int k = 0; k < 2; k++) {
        loom_tensor *alpha, *plain;
        assert_int_equal(iot_decode("vision.decode_png", bytes, pairs[k][0], 0, 0, &alpha), LOOM_OK);
        assert_int_equal(iot_decode("vision.decode_png", bytes, pairs[k][1], 0, 0, &plain), LOOM_OK);
        const int64_t c = atoi(pairs[k][2]), plane = plain->shape[1] * plain->shape[2];
        assert_int_equal(alpha->shape[0], c + 1);
        assert_memory_equal(loom_data(alpha), loom_data(plain), (size_t)(c * plane));
        const uint8_t *a = (const uint8_t *)loom_data(alpha) + c * plane;
        for (int64_t i = 0; i < plane; i++)
            assert_int_equal(a[i], 255);
        loom_tensor_free(alpha);
        loom_tensor_free(plain);
    }
    loom_tensor_free(bytes);

    bytes = iot_file("palette4_trns.png");
    loom_tensor *idx, *rgb;
    assert_int_equal(iot_decode("vision.decode_png", bytes, "UNCHANGED", 0, 0, &idx), LOOM_OK);
    assert_int_equal(iot_decode("vision.decode_png", bytes, "RGB", 0, 0, &rgb), LOOM_OK);
    assert_int_equal(idx->shape[0], 1);
    const int64_t plane = idx->shape[1] * idx->shape[2];
    const uint8_t *ix = loom_data(idx), *px = loom_data(rgb);
    /* one colour per index: pixels with the same index have the same RGB */
    int seen[16] = { 0 };
    uint8_t colour[16][3];
    for (int64_t i = 0; i < plane; i++) {
        assert_true(ix[i] < 16);
        uint8_t here[3] = { px[i], px[plane + i], px[2 * plane + i] };
        if (!seen[ix[i]]) {
            memcpy(colour[ix[i]], here, 3);
            seen[ix[i]] = 1;
        }
        assert_memory_equal(colour[ix[i]], here, 3);
    }
    loom_tensor_free(idx);
    loom_tensor_free(rgb);
    loom_tensor_free(bytes);
}

/* Four JPEGs of one size as a jagged batch: [4, C, H, W], each slot the
** single decode; files of different sizes are refused naming the file. */
static void test_batch(void **state)
{
    (void)state;
    const char *names[4] = { "rgb420.jpg", "rgb444.jpg", "progressive.jpg", "restart.jpg" };
    loom_tensor *single[4];
    uint8_t *all = NULL;
    int64_t offsets[5] = { 0 };
    for (int i = 0; i < 4; i++) {
        loom_tensor *b = iot_file(names[i]);
        const size_t n = (size_t)loom_numel(b);
        all = realloc(all, (size_t)offsets[i] + n);
        memcpy(all + offsets[i], loom_data(b), n);
        offsets[i + 1] = offsets[i] + (int64_t)n;
        assert_int_equal(iot_decode("vision.decode_jpeg", b, "RGB", 0, 0, &single[i]), LOOM_OK);
        loom_tensor_free(b);
    }
    loom_tensor *bytes = iot_bytes(all, (size_t)offsets[4]), *offs, *out;
    assert_int_equal(loom_tensor_new(&offs, LOOM_DTYPE_I64, 1, (const int64_t[]){ 5 }, NULL), LOOM_OK);
    memcpy(loom_data(offs), offsets, sizeof offsets);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "mode", "RGB"), LOOM_OK);
    for (const char *const *op = (const char *const[]){ "vision.decode_jpeg", "vision.decode_image", NULL }; *op; op++) {
        if (tu_call(*op, (const loom_tensor *[]){ bytes, offs }, 2, a, "cpu", &out) != LOOM_OK)
            fail_msg("%s batch: %s", *op, loom_last_error());
        assert_int_equal(out->ndim, 4);
        assert_int_equal(out->shape[0], 4);
        const size_t one = (size_t)loom_numel(single[0]);
        for (int i = 0; i < 4; i++)
            assert_memory_equal((const uint8_t *)loom_data(out) + i * one, loom_data(single[i]), one);
        loom_tensor_free(out);
    }
    /* an empty batch */
    loom_tensor *none, *zero_off;
    assert_int_equal(loom_tensor_new(&none, LOOM_DTYPE_U8, 1, (const int64_t[]){ 0 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&zero_off, LOOM_DTYPE_I64, 1, (const int64_t[]){ 1 }, NULL), LOOM_OK);
    assert_int_equal(tu_call("vision.decode_jpeg", (const loom_tensor *[]){ none, zero_off }, 2, a, "cpu", &out), LOOM_OK);
    assert_int_equal(out->shape[0], 0);
    loom_tensor_free(out);
    loom_tensor_free(none);
    loom_tensor_free(zero_off);
    /* a fifth file of another size */
    loom_tensor *exif = iot_file("exif1.jpg"), *offs5;
    const size_t en = (size_t)loom_numel(exif);
    all = realloc(all, (size_t)offsets[4] + en);
    memcpy(all + offsets[4], loom_data(exif), en);
    loom_tensor *bytes5 = iot_bytes(all, (size_t)offsets[4] + en);
    assert_int_equal(loom_tensor_new(&offs5, LOOM_DTYPE_I64, 1, (const int64_t[]){ 6 }, NULL), LOOM_OK);
    memcpy(loom_data(offs5), offsets, sizeof offsets);
    ((int64_t *)loom_data(offs5))[5] = offsets[4] + (int64_t)en;
    assert_int_equal(tu_call("vision.decode_jpeg", (const loom_tensor *[]){ bytes5, offs5 }, 2, a, "cpu", &out),
                     LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "file 4 decodes to [3, 13, 21]"));
    loom_tensor_free(bytes5);
    loom_tensor_free(offs5);
    int64_t *o = loom_data(offs);
    /* bad offsets: decreasing, not ending at the input's length */
    o[2] = o[3] + 1;
    assert_int_equal(tu_call("vision.decode_jpeg", (const loom_tensor *[]){ bytes, offs }, 2, a, "cpu", &out),
                     LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'offsets'"));
    o[2] = offsets[2];
    o[4] = 7;
    assert_int_equal(tu_call("vision.decode_jpeg", (const loom_tensor *[]){ bytes, offs }, 2, a, "cpu", &out),
                     LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'offsets'"));
    loom_tensor_free(exif);
    loom_attrs_free(a);
    loom_tensor_free(offs);
    loom_tensor_free(bytes);
    for (int i = 0; i < 4; i++)
        loom_tensor_free(single[i]);
    free(all);
}

/* max_pixels: the images are 37 x 29 = 1073 pixels; a limit of 1072 refuses them. */
static void test_max_pixels(void **state)
{
    (void)state;
    const char *names[2] = { "rgb420.jpg", "rgb8.png" };
    const int64_t pixels[2] = { 37 * 29, 27 * 19 };
    for (int i = 0; i < 2; i++) {
        loom_tensor *bytes = iot_file(names[i]), *out;
        assert_int_equal(iot_decode("vision.decode_image", bytes, NULL, 0, pixels[i], &out), LOOM_OK);
        loom_tensor_free(out);
        assert_int_equal(iot_decode("vision.decode_image", bytes, NULL, 0, pixels[i] - 1, &out), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "max_pixels"));
        loom_tensor_free(bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_default_mode),
        cmocka_unit_test(test_refused_modes),
        cmocka_unit_test(test_defined_where_torchvision_is_not),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_max_pixels),
    };
    return cmocka_run_group_tests_name("vision_image_io_decode", tests, tu_setup, tu_teardown);
}
