/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_image_io_cuda.c - vision.decode_jpeg on cuda (nvJPEG, vision-cuda.so)
** against the cpu kernel (libjpeg-turbo, bit-exact with torchvision's cpu
** decode). nvJPEG's IDCT and chroma upsampling are not libjpeg's, so the
** pixels differ a little, as torchvision's cuda and cpu decodes do:
** torchvision's own test of its cuda decoder accepts a mean absolute
** difference below 2 (test_image.py, test_decode_jpeg_cuda); so does this
** one, with every pixel within 32 (a bound on upsampling differences at
** chroma edges, not a tight one). Also: the refusals torchvision makes on
** cuda (alpha modes, EXIF orientation, CMYK files) and a bad file.
** Every test skips with a message without a CUDA device or without
** nvJPEG in vision-cuda.so (suite gpu).
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

static loom_dl_device dev;

static int cuda_device(loom_dl_device *out)
{
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            *out = di.device;
            return 1;
        }
    }
    return 0;
}

#define NEED_CUDA()                                                                                         \
    do {                                                                                                    \
        if (!cuda_device(&dev) || !tu_has_backend("vision.decode_jpeg", "cuda")) {                          \
            print_message("no CUDA device (or vision-cuda.so without nvJPEG): the nvJPEG decoder is not run\n"); \
            skip();                                                                                         \
        }                                                                                                   \
    } while (0)

static loom_status decode_on(const loom_tensor *bytes_host, const char *mode, int exif, loom_tensor **out_host)
{
    loom_tensor *d = NULL, *out = NULL;
    assert_int_equal(loom_tensor_copy_to(&d, bytes_host, &dev), LOOM_OK);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "mode", mode), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "apply_exif_orientation", exif), LOOM_OK);
    loom_status st = tu_call("vision.decode_jpeg", (const loom_tensor *[]){ d }, 1, a, "cuda", &out);
    loom_attrs_free(a);
    loom_tensor_free(d);
    *out_host = NULL;
    if (st == LOOM_OK) {
        const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
        assert_int_equal(loom_tensor_copy_to(out_host, out, &cpu), LOOM_OK);
        loom_tensor_free(out);
    }
    return st;
}

static void test_against_cpu(void **state)
{
    (void)state;
    NEED_CUDA();
    const char *images[5] = { "rgb420.jpg", "rgb422.jpg", "rgb444.jpg", "progressive.jpg", "gray.jpg" };
    const char *modes[3] = { "UNCHANGED", "GRAY", "RGB" };
    for (int i = 0; i < 5; i++) {
        loom_tensor *bytes = iot_file(images[i]);
        for (int m = 0; m < 3; m++) {
            loom_tensor *cpu, *gpu;
            assert_int_equal(iot_decode("vision.decode_jpeg", bytes, modes[m], 0, 0, &cpu), LOOM_OK);
            if (decode_on(bytes, modes[m], 0, &gpu) != LOOM_OK)
                fail_msg("%s %s on cuda: %s", images[i], modes[m], loom_last_error());
            tu_assert_same_shape(gpu, cpu, images[i]);
            const uint8_t *a = loom_data(gpu), *b = loom_data(cpu);
            double sum = 0;
            int worst = 0;
            for (int64_t k = 0; k < loom_numel(cpu); k++) {
                const int d = abs((int)a[k] - (int)b[k]);
                sum += d;
                worst = d > worst ? d : worst;
            }
            const double mean = sum / (double)loom_numel(cpu);
            if (mean >= 2.0 || worst > 32)
                fail_msg("%s %s: nvJPEG differs from libjpeg by %.3f on average, %d at most", images[i], modes[m],
                         mean, worst);
            loom_tensor_free(cpu);
            loom_tensor_free(gpu);
        }
        loom_tensor_free(bytes);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    NEED_CUDA();
    loom_tensor *bytes = iot_file("rgb420.jpg"), *cmyk = iot_file("cmyk.jpg"), *png = iot_file("rgb8.png"), *out;
    assert_int_equal(decode_on(bytes, "RGB_ALPHA", 0, &out), LOOM_EINVAL);
    assert_int_equal(decode_on(bytes, "RGB", 1, &out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "apply_exif_orientation"));
    assert_int_equal(decode_on(cmyk, "RGB", 0, &out), LOOM_EFORMAT);
    assert_int_equal(decode_on(png, "RGB", 0, &out), LOOM_EFORMAT);
    loom_tensor_free(bytes);
    loom_tensor_free(cmyk);
    loom_tensor_free(png);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_cpu),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("vision_image_io_cuda", tests, tu_setup, tu_teardown);
}
