/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_image_io_encode.c - vision.encode_jpeg / encode_png and read_file.
**
** Bytes: torchvision's wheel bundles its own libjpeg-turbo (3.1), libpng
** (1.6.56) and zlib (1.3); the build here links Debian's (libjpeg-turbo
** 2.1, libpng 1.6.39, zlib 1.2.13). With the same settings both encoders
** give the same files across those versions (libjpeg-turbo's baseline
** Huffman coding and zlib's deflate have not changed output), so the files
** must match torchvision's byte for byte. Should a future zlib change its
** deflate choices, the PNG checks that do not depend on it still hold: the
** decoded pixels equal the source (PNG is lossless).
** Round trips: encode -> decode gives the source back (PNG) or torchvision's
** decode of torchvision's file (JPEG). Refusals: quality, compression_level,
** channels, an image without pixels, an empty / missing file.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "image_io_test_util.h"
#include "tu_env.h"

static loom_status encode(const char *op, const loom_tensor *img, const char *attr, int64_t v, loom_tensor **out)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, attr, v), LOOM_OK);
    loom_status st = tu_call(op, (const loom_tensor *[]){ img }, 1, a, "cpu", out);
    loom_attrs_free(a);
    return st;
}

static void test_jpeg_bytes(void **state)
{
    (void)state;
    const char *srcs[2] = { "rgb", "gray" };
    const int qs[5] = { 1, 50, 75, 95, 100 };
    for (int s = 0; s < 2; s++) {
        char name[96];
        snprintf(name, sizeof name, "vision/image_io/enc_src_%s", srcs[s]);
        loom_tensor *img = tu_npy(name);
        for (int q = 0; q < 5; q++) {
            loom_tensor *got, *back, *want_back;
            snprintf(name, sizeof name, "vision/image_io/enc_jpeg_%s_q%d", srcs[s], qs[q]);
            loom_tensor *want = tu_npy(name);
            if (encode("vision.encode_jpeg", img, "quality", qs[q], &got) != LOOM_OK)
                fail_msg("encode_jpeg %s q%d: %s", srcs[s], qs[q], loom_last_error());
            tu_assert_identical(got, want, name);
            /* round trip: our decode of our file = our decode of torchvision's file */
            assert_int_equal(iot_decode("vision.decode_jpeg", got, NULL, 0, 0, &back), LOOM_OK);
            assert_int_equal(iot_decode("vision.decode_jpeg", want, NULL, 0, 0, &want_back), LOOM_OK);
            tu_assert_identical(back, want_back, name);
            assert_int_equal(back->shape[0], img->shape[0]);
            loom_tensor_free(got);
            loom_tensor_free(back);
            loom_tensor_free(want_back);
            loom_tensor_free(want);
        }
        loom_tensor_free(img);
    }
}

static void test_png_round_trip(void **state)
{
    (void)state;
    const char *srcs[2] = { "rgb", "gray" };
    const int levels[4] = { 0, 1, 6, 9 };
    for (int s = 0; s < 2; s++) {
        char name[96];
        snprintf(name, sizeof name, "vision/image_io/enc_src_%s", srcs[s]);
        loom_tensor *img = tu_npy(name);
        for (int l = 0; l < 4; l++) {
            loom_tensor *got, *back, *tv_back;
            snprintf(name, sizeof name, "vision/image_io/enc_png_%s_l%d", srcs[s], levels[l]);
            loom_tensor *want = tu_npy(name);
            if (encode("vision.encode_png", img, "compression_level", levels[l], &got) != LOOM_OK)
                fail_msg("encode_png %s l%d: %s", srcs[s], levels[l], loom_last_error());
            tu_assert_identical(got, want, name);
            assert_int_equal(iot_decode("vision.decode_png", got, NULL, 0, 0, &back), LOOM_OK);
            tu_assert_identical(back, img, name);
            /* torchvision's file decodes to the same pixels */
            assert_int_equal(iot_decode("vision.decode_image", want, NULL, 0, 0, &tv_back), LOOM_OK);
            tu_assert_identical(tv_back, img, name);
            loom_tensor_free(got);
            loom_tensor_free(back);
            loom_tensor_free(tv_back);
            loom_tensor_free(want);
        }
        loom_tensor_free(img);
    }
}

static void test_encode_refusals(void **state)
{
    (void)state;
    loom_tensor *img = tu_npy("vision/image_io/enc_src_rgb"), *out = NULL, *four, *empty;
    assert_int_equal(encode("vision.encode_jpeg", img, "quality", 0, &out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'quality'"));
    assert_int_equal(encode("vision.encode_jpeg", img, "quality", 101, &out), LOOM_EINVAL);
    assert_int_equal(encode("vision.encode_png", img, "compression_level", -1, &out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'compression_level'"));
    assert_int_equal(encode("vision.encode_png", img, "compression_level", 10, &out), LOOM_EINVAL);
    assert_int_equal(loom_tensor_new(&four, LOOM_DTYPE_U8, 3, (const int64_t[]){ 4, 5, 6 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&empty, LOOM_DTYPE_U8, 3, (const int64_t[]){ 3, 0, 6 }, NULL), LOOM_OK);
    for (int k = 0; k < 2; k++) {
        const char *op = k ? "vision.encode_png" : "vision.encode_jpeg";
        const char *attr = k ? "compression_level" : "quality";
        assert_int_equal(encode(op, four, attr, k ? 6 : 75, &out), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "channels should be 1 or 3"));
        assert_int_equal(encode(op, empty, attr, k ? 6 : 75, &out), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "no pixels"));
    }
    loom_tensor_free(four);
    loom_tensor_free(empty);
    loom_tensor_free(img);
}

static void test_read_file(void **state)
{
    (void)state;
    loom_attrs *a;
    loom_tensor *out, *want = iot_file("rgb420.jpg");
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", tu_data_path("vision/image_io/rgb420.jpg")), LOOM_OK);
    if (tu_call("vision.read_file", NULL, 0, a, "cpu", &out) != LOOM_OK)
        fail_msg("read_file: %s", loom_last_error());
    tu_assert_identical(out, want, "read_file");
    loom_tensor_free(out);
    assert_int_equal(loom_attrs_set_string(a, "path", "/nonexistent/image.jpg"), LOOM_OK);
    assert_int_not_equal(tu_call("vision.read_file", NULL, 0, a, "cpu", &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "/nonexistent/image.jpg"));
    char path[] = "/tmp/loom-empty-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(loom_attrs_set_string(a, "path", path), LOOM_OK);
    assert_int_not_equal(tu_call("vision.read_file", NULL, 0, a, "cpu", &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "empty"));
    unlink(path);
    loom_attrs_free(a);
    loom_tensor_free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jpeg_bytes),
        cmocka_unit_test(test_png_round_trip),
        cmocka_unit_test(test_encode_refusals),
        cmocka_unit_test(test_read_file),
    };
    return cmocka_run_group_tests_name("vision_image_io_encode", tests, tu_setup, tu_teardown);
}
