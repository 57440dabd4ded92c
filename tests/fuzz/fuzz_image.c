/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_image.c - fuzz_image_jpeg and fuzz_image_png, built from this one
** file with FUZZ_DECODE_OP "vision.decode_jpeg" or "vision.decode_png":
** feeds a JPEG (PNG) file to that decoder (or, by an option bit,
** vision.decode_image) of the vision pack's image_io module.
** The first byte chooses the arguments: bits 0-2 the mode (value mod 5:
** UNCHANGED, GRAY, GRAY_ALPHA, RGB, RGB_ALPHA), bit 3 apply_exif_orientation,
** bit 4 decode_image; the rest is the file, in an exact-size heap copy so a
** read past its end is a heap overflow. max_pixels is 2^20, so a lying
** header cannot make one run allocate gigabytes.
** Asserts: no sanitizer report; a failure sets a message naming 'input'; a
** success gives a [C, H, W] image (C 1..4) whose every byte is read.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#ifndef FUZZ_DECODE_OP
#error "build with -DFUZZ_DECODE_OP=\"vision.decode_jpeg\" or \"vision.decode_png\""
#endif

static const char *const modes[5] = { "UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("vision");
    FZ_CHECK(loom_op_find(FUZZ_DECODE_OP) != NULL, "the vision pack has no image_io (libjpeg / libpng missing?)");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t flags = data[0];
    const int64_t n = (int64_t)(size - 1);
    uint8_t *copy = malloc(n > 0 ? (size_t)n : 1);
    FZ_CHECK(copy != NULL, "out of memory");
    memcpy(copy, data + 1, (size_t)n);
    loom_tensor *src;
    FZ_CHECK(loom_tensor_wrap(&src, copy, LOOM_DTYPE_U8, 1, &n, NULL, NULL) == LOOM_OK, "wrap: %s", loom_last_error());
    loom_attrs *a;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_attrs_set_string(a, "mode", modes[(flags & 7) % 5]);
    loom_attrs_set_bool(a, "apply_exif_orientation", (flags >> 3) & 1);
    loom_attrs_set_int(a, "max_pixels", INT64_C(1) << 20);
    const loom_tensor *in[1] = { src };
    loom_tensor *out[1] = { NULL };
    loom_status st = loom_run(flags & 16 ? "vision.decode_image" : FUZZ_DECODE_OP, in, 1, a, out, 1, NULL);
    if (st == LOOM_OK) {
        FZ_CHECK(out[0]->ndim == 3 && out[0]->shape[0] >= 1 && out[0]->shape[0] <= 4, "decode gave rank %d",
                 out[0]->ndim);
        fz_touch_tensor(out[0]);
        loom_tensor_free(out[0]);
    } else {
        FZ_CHECK(strstr(loom_last_error(), "'input'") != NULL, "the error does not name 'input': %s",
                 loom_last_error());
    }
    loom_attrs_free(a);
    loom_tensor_free(src);
    free(copy);
    return 0;
}
