/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_codec.h - the JPEG (libjpeg-turbo, libjpeg API) and PNG (libpng)
** decoders and encoders of the image_io module, as plain functions of
** bytes: no tensors, no host table, so the kernels call them from worker
** threads and the fuzz targets reach them through the ops unchanged.
**
** Contracts:
**  - Every function returns 0 on success, or an iio_error with a message
**    in err[IIO_ERR_SIZE] (no argument names: the caller adds them). Errors of
**    the libraries (libjpeg's error_exit, libpng's error_fn) longjmp back to
**    the function that called them, which releases everything it holds:
**    no exit(), no abort(), no leak on any path. Library warnings are
**    dropped (torchvision prints libjpeg's to stderr and ignores them).
**  - A decoder reads nothing outside data[0, n) and refuses, before any
**    pixel memory is allocated, an image whose declared width * height is
**    over max_pixels (a decompression-bomb guard, PIL's idea).
**  - The libraries give interleaved rows (HWC) of 8-bit samples, or of
**    native-endian 16-bit samples for a 16-bit PNG, in the channel layout
**    of the requested mode, exactly as torchvision.io asks them; the
**    decoder writes torchvision's CHW result (EXIF orientation applied)
**    where its sink says, once the header has told the shape. An image in
**    its stored orientation goes row by row from the library to the CHW
**    planes (each row still in cache); only a rotated or flipped one, or an
**    interlaced PNG, is decoded whole first.
*/
#ifndef LOOM_VISION_IMAGE_CODEC_H
#define LOOM_VISION_IMAGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#define IIO_ERR_SIZE 256

/* What went wrong (the kernels map these to loom statuses). */
typedef enum iio_error {
    IIO_BAD_FILE = -1,              /* truncated, corrupt, lying or not this format */
    IIO_BAD_MODE = -2,              /* the mode is not one this format has */
    IIO_NO_MEMORY = -3,
    IIO_TOO_LARGE = -4,             /* declares more than max_pixels */
    IIO_SINK_FAILED = -5            /* the sink refused the image (its own error) */
} iio_error;
/* Not an error: the sink wanted the shape only, and the decode stopped. */
#define IIO_STOPPED 1

/* torchvision.io.ImageReadMode values. */
typedef enum iio_mode {
    IIO_UNCHANGED = 0,
    IIO_GRAY = 1,
    IIO_GRAY_ALPHA = 2,
    IIO_RGB = 3,
    IIO_RGB_ALPHA = 4
} iio_mode;

/* Default pixel limit: 2^28 pixels (a 16384 x 16384 image), the order of
** PIL's MAX_IMAGE_PIXELS decompression-bomb error threshold. */
#define IIO_DEFAULT_MAX_PIXELS (INT64_C(1) << 28)

/* Progressive JPEG scans decoded at most (libjpeg-turbo's TurboJPEG API
** offers the same guard): a crafted file of endless tiny scans would
** otherwise make one decode take minutes. */
#define IIO_JPEG_MAX_SCANS 500

typedef struct iio_decode_opts {
    iio_mode mode;
    int apply_exif_orientation;
    int64_t max_pixels;             /* > 0 */
} iio_decode_opts;

/* Where a decode writes: begin is called once the header is read, with
** the [C, H, W] shape of the result (after the EXIF orientation) and its
** sample size (1, or 2 for 16-bit PNG samples, written as u16). It returns
** 0 with *dest pointing at C * H * W compact elements, IIO_STOPPED when the
** caller wanted the shape only, or IIO_SINK_FAILED. */
typedef struct iio_sink {
    int (*begin)(void *user, const int64_t shape[3], int32_t sample_bytes, void **dest);
    void *user;
} iio_sink;

/* A decoded image before the CHW transpose. */
typedef struct iio_image {
    int32_t channels, height, width;
    int32_t sample_bytes;           /* 1, or 2 for 16-bit PNG samples */
    int32_t orientation;            /* EXIF orientation 1..8 to apply; 1 when none */
    uint8_t *pixels;                /* height rows of width * channels samples; malloc'd */
} iio_image;

/* Which decoder the first bytes call for (torchvision.io.decode_image's sniffing). */
typedef enum iio_format { IIO_FORMAT_UNKNOWN = 0, IIO_FORMAT_JPEG, IIO_FORMAT_PNG } iio_format;
iio_format iio_sniff(const uint8_t *data, size_t n);

/* 0 once the result is written, IIO_STOPPED, or an iio_error. */
int iio_decode_jpeg(const uint8_t *data, size_t n, const iio_decode_opts *opts, const iio_sink *sink, char *err);
int iio_decode_png(const uint8_t *data, size_t n, const iio_decode_opts *opts, const iio_sink *sink, char *err);
void iio_image_free(iio_image *img);
/* Whether img (its header fields) goes to CHW row by row: stored orientation. */
int iio_image_streams(const iio_image *img);
/* Row y of an image in its stored orientation into the CHW result dest. */
void iio_row_to_chw(const iio_image *img, const uint8_t *row, int64_t y, void *dest);

/* [C, H, W] of the result: H and W swap for orientations 5..8. */
void iio_image_chw_shape(const iio_image *img, int64_t shape[3]);
/* The CHW result into out: u8 elements, or u16 for 16-bit samples. */
void iio_image_to_chw(const iio_image *img, void *out);

/* The EXIF orientation (1..8 as stored; any other value is returned as is)
** of a TIFF structure ("II"/"MM", 42, IFD 0), or -1 when it has none. */
int iio_exif_orientation(const uint8_t *tiff, size_t n);

/* Encoders: CHW u8 input (channels 1 or 3) to a malloc'd file in *out, *out_n. */
int iio_encode_jpeg(const uint8_t *chw, int32_t channels, int32_t height, int32_t width, int quality,
                    uint8_t **out, size_t *out_n, char *err);
int iio_encode_png(const uint8_t *chw, int32_t channels, int32_t height, int32_t width, int level,
                   uint8_t **out, size_t *out_n, char *err);

/* A growing byte buffer (the encoders' destinations). */
typedef struct iio_buffer {
    uint8_t *data;
    size_t size, capacity;
} iio_buffer;
/* Room for `more` bytes after size; 0, or -1 when out of memory. */
int iio_buffer_reserve(iio_buffer *b, size_t more);

#endif /* LOOM_VISION_IMAGE_CODEC_H */
