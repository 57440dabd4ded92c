/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_io_schemas.c - the definitions of the image_io ops (torchvision.io
** names and arguments; see image_io.h for the tensors).
*/
#include "image_io.h"

#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
#define U16 LOOM_DTYPE_BIT(LOOM_DTYPE_U16)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def decode_in[] = {
    { .name = "input", .dtypes = U8, .ndim = 1, .doc = "the file's bytes (u8 [N]); with offsets, B files back to back" },
    { .name = "offsets", .dtypes = I64, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "[B + 1] bounds of the files in input (jagged batch): output [B, C, H, W]" },
};
static const loom_arg_def decode_out[] = {
    { .name = "output", .dtypes = U8 | U16, .ndim = -1,
      .doc = "[C, H, W] u8 ([B, C, H, W] for a batch); u16 for a 16-bit PNG" },
};
static const char *const mode_values[] = { "UNCHANGED", "GRAY", "GRAY_ALPHA", "RGB", "RGB_ALPHA", "RGBA", NULL };
static const loom_attr_choices decode_choices[] = { { PK_ATTR(iio_decode, mode), mode_values } };
PK_ATTR_TABLE(iio_decode, IIO_DECODE_ATTRS);

/* Bytes: the file plus the pixels (a guess of 10:1 compression). */
static void decode_cost(const loom_call *call, double *flops, double *bytes)
{
    (void)flops;
    if (call->n_inputs > 0 && call->inputs[0] != NULL)
        *bytes = 11.0 * (double)loom_numel(call->inputs[0]);
}

#define DECODE_SCHEMA(VAR, NAME, DOC)                                                              \
    PK_SCHEMA(VAR, NAME, 1, DOC, PK_INPUTS(decode_in), PK_OUTPUTS(decode_out), PK_ATTRS(iio_decode_attrs), \
              PK_CHOICES(decode_choices), .cost = decode_cost)

DECODE_SCHEMA(vision_decode_jpeg_schema, "vision.decode_jpeg",
              "torchvision.io.decode_jpeg: a JPEG file to a CHW u8 image (libjpeg-turbo)");
DECODE_SCHEMA(vision_decode_png_schema, "vision.decode_png",
              "torchvision.io.decode_png: a PNG file to a CHW image (libpng; 16-bit samples as u16)");
DECODE_SCHEMA(vision_decode_image_schema, "vision.decode_image",
              "torchvision.io.decode_image: a JPEG or PNG file (told by its first bytes) to a CHW image");

static const loom_arg_def encode_in[] = {
    { .name = "input", .dtypes = U8, .ndim = 3, .doc = "[C, H, W] u8 image, C = 1 (gray) or 3 (RGB)" },
};
static const loom_arg_def encode_out[] = {
    { .name = "output", .dtypes = U8, .ndim = 1, .doc = "the file's bytes" },
};
PK_ATTR_TABLE(iio_encode_jpeg, IIO_ENCODE_JPEG_ATTRS);
PK_ATTR_TABLE(iio_encode_png, IIO_ENCODE_PNG_ATTRS);
PK_SCHEMA(vision_encode_jpeg_schema, "vision.encode_jpeg", 1,
          "torchvision.io.encode_jpeg: a CHW u8 image to a JPEG file (libjpeg-turbo)",
          PK_INPUTS(encode_in), PK_OUTPUTS(encode_out), PK_ATTRS(iio_encode_jpeg_attrs));
PK_SCHEMA(vision_encode_png_schema, "vision.encode_png", 1,
          "torchvision.io.encode_png: a CHW u8 image to a PNG file (libpng)",
          PK_INPUTS(encode_in), PK_OUTPUTS(encode_out), PK_ATTRS(iio_encode_png_attrs));

static const loom_arg_def read_file_out[] = {
    { .name = "output", .dtypes = U8, .ndim = 1, .doc = "the file's bytes (u8 [N])" },
};
PK_ATTR_TABLE(iio_read_file, IIO_READ_FILE_ATTRS);
PK_SCHEMA(vision_read_file_schema, "vision.read_file", 1,
          "torchvision.io.read_file: a file's bytes as a u8 [N] tensor",
          .n_inputs = 0, .inputs = NULL, PK_OUTPUTS(read_file_out), PK_ATTRS(iio_read_file_attrs));

PK_OPS_DEFINE(vision_image_io_ops, VISION_IMAGE_IO_OPS);
