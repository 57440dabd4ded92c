/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_io_test_util.h - what the image_io tests share: the test images of
** tests/data/vision/image_io (tools/gen_vision_image_io_goldens.py) as u8
** tensors, the golden manifest, and one decode / encode call.
*/
#ifndef LOOM_TESTS_IMAGE_IO_UTIL_H
#define LOOM_TESTS_IMAGE_IO_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tu_ops.h"

/* The bytes of tests/data/vision/image_io/<name> as a u8 [N] tensor. */
loom_tensor *iot_file(const char *name);
/* u8 [n] over a copy of bytes (n may be 0: an empty tensor). */
loom_tensor *iot_bytes(const uint8_t *bytes, size_t n);

/* op on the bytes; mode NULL: the default. max_pixels <= 0: the default. */
loom_status iot_decode(const char *op, const loom_tensor *bytes, const char *mode, int exif, int64_t max_pixels,
                       loom_tensor **out);

/* One line of cases.txt. */
typedef struct iot_case {
    char image[64], mode[16], golden[96];
    int exif;
} iot_case;
/* Every line of cases.txt (or of another manifest with the same format:
** refused.txt and undefined.txt have no golden / exif columns); *n set. */
iot_case *iot_manifest(const char *name, size_t *n);

/* The names of the distinct test images (every .jpg / .png of cases.txt). */
size_t iot_images(char names[][64], size_t max);

#endif
