/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_io.h - the image_io module of the vision pack: torchvision.io's
** image decoding and encoding (decode_jpeg, decode_png, decode_image,
** encode_jpeg, encode_png, read_file) with its names and arguments. The
** codecs themselves are in image_codec.h (libjpeg-turbo, libpng).
**
** Tensors: a file is a u8 [N] tensor of its bytes (what read_file gives);
** an image is CHW, u8 (u16 for a 16-bit PNG).
** The decoders also take a batch in the jagged convention: input holds B
** files back to back and offsets (i64 [B + 1]) their bounds; the files are
** decoded in parallel over the core's pool into one [B, C, H, W] output,
** so they must decode to one shape.
*/
#ifndef LOOM_VISION_IMAGE_IO_H
#define LOOM_VISION_IMAGE_IO_H

#include "vision_pack.h"

#define VISION_IMAGE_IO_OPS(X)                                                                     \
    X(vision_decode_jpeg_schema) X(vision_decode_png_schema) X(vision_decode_image_schema)         \
    X(vision_encode_jpeg_schema) X(vision_encode_png_schema) X(vision_read_file_schema)
PK_OPS_DECLARE(vision_image_io_ops, VISION_IMAGE_IO_OPS);

/* The decoders' attributes (the same three for the three ops). */
#define IIO_DECODE_ATTRS(A, op)                                                                    \
    A(op, mode, STRING, LOOM_DEFAULT_STRING("UNCHANGED"), 0,                                       \
      "torchvision.io.ImageReadMode: UNCHANGED, GRAY, GRAY_ALPHA, RGB, RGB_ALPHA (or RGBA); JPEG takes "  \
      "UNCHANGED, GRAY and RGB", )                                                                 \
    A(op, apply_exif_orientation, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                   \
      "rotate / flip the image as its EXIF orientation tag says", )                                \
    A(op, max_pixels, INT, LOOM_DEFAULT_INT(INT64_C(1) << 28), LOOM_ATTR_POSITIVE,                 \
      "refuse a file that declares more pixels (width * height) than this: a decompression-bomb guard", )
PK_ATTR_ENUM(iio_decode, IIO_DECODE_ATTRS);

#define IIO_ENCODE_JPEG_ATTRS(A, op)                                                               \
    A(op, quality, INT, LOOM_DEFAULT_INT(75), 0, "JPEG quality, 1 to 100", )
PK_ATTR_ENUM(iio_encode_jpeg, IIO_ENCODE_JPEG_ATTRS);

#define IIO_ENCODE_PNG_ATTRS(A, op)                                                                \
    A(op, compression_level, INT, LOOM_DEFAULT_INT(6), 0, "zlib compression level, 0 to 9", )
PK_ATTR_ENUM(iio_encode_png, IIO_ENCODE_PNG_ATTRS);

#define IIO_READ_FILE_ATTRS(A, op)                                                                 \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the file to read", )
PK_ATTR_ENUM(iio_read_file, IIO_READ_FILE_ATTRS);

extern const loom_op_schema vision_decode_jpeg_schema, vision_decode_png_schema, vision_decode_image_schema,
    vision_encode_jpeg_schema, vision_encode_png_schema, vision_read_file_schema;

#endif /* LOOM_VISION_IMAGE_IO_H */
