/* SPDX-License-Identifier: BSD-3-Clause */
/*
** png_decode.c - PNG to interleaved pixels through libpng, with the
** transformations torchvision.io.decode_png asks libpng for (filler alpha
** included: (1 << bit_depth) - 1, so 1 for a 1-bit gray image):
**   1/2/4-bit gray is expanded to 8 bits; Adam7 interlacing is undone;
**   GRAY        palette -> RGB, alpha stripped, rgb_to_gray(0.2989, 0.587)
**   GRAY_ALPHA  palette -> RGB(A), filler alpha 2^bits - 1 when there is none,
**               rgb_to_gray
**   RGB         palette -> RGB / gray -> RGB, alpha stripped
**   RGB_ALPHA   palette -> RGB(A) / gray -> RGB, filler alpha when none
**   UNCHANGED   as stored (palette images give their indices; tRNS is
**               ignored, as torchvision ignores it)
** 16-bit images keep 16-bit samples (native byte order); the kernel
** returns them as u16, as torchvision >= 0.21 returns uint16.
**
** Two cases where torchvision returns uninitialised memory are defined
** here instead (tools/gen_vision_image_io_goldens.py lists them): a palette
** image without tRNS in GRAY_ALPHA / RGB_ALPHA gets an opaque alpha (255;
** torchvision assumes palette images have alpha and adds none), and a
** 1/2/4-bit palette image in UNCHANGED gives one index per byte (torchvision
** leaves the rows packed). The channel count is always the one libpng
** reports after the transformations, so no row can overrun its buffer.
**
** The EXIF orientation comes from an eXIf chunk before the image data
** (torchvision does not read past the image data either).
*/
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "image_codec.h"

typedef struct pd_state {
    jmp_buf jump;
    char *err;
    int code;                           /* the iio_error of a failure */
    const uint8_t *data;
    size_t n, pos;
    png_bytep *rows;                    /* malloc'd row pointers (whole-image decodes) */
    uint8_t *row;                       /* one row (streamed decodes); malloc'd */
    iio_image img;                      /* the shape; pixels: the whole image when it is not streamed */
} pd_state;

static void pd_error(png_structp png, png_const_charp msg)
{
    pd_state *st = png_get_error_ptr(png);
    snprintf(st->err, IIO_ERR_SIZE, "PNG: %s", msg);
    longjmp(st->jump, 1);
}

static void pd_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void pd_read(png_structp png, png_bytep out, size_t count)
{
    pd_state *st = png_get_io_ptr(png);
    if (count > st->n - st->pos) {
        snprintf(st->err, IIO_ERR_SIZE, "PNG: Image is incomplete or truncated (a read of %zu bytes at offset %zu "
                 "of %zu)", count, st->pos, st->n);
        longjmp(st->jump, 1);
    }
    memcpy(out, st->data + st->pos, count);
    st->pos += count;
}

static int pd_run(png_structp png, png_infop info, pd_state *st, const iio_decode_opts *opts, const iio_sink *sink)
{
    iio_image *img = &st->img;
    if (setjmp(st->jump))
        return -1;
    png_set_read_fn(png, st, pd_read);
    /* the limits: libpng refuses images over 2^31 - 1 a side itself; the pixel limit is checked below */
    png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
    png_read_info(png, info);

    png_uint_32 width, height;
    int bit_depth, color_type, interlace;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    const uint64_t pixels = (uint64_t)width * height;
    if (pixels > (uint64_t)opts->max_pixels) {
        snprintf(st->err, IIO_ERR_SIZE,
                 "PNG declares %u x %u = %llu pixels, over max_pixels = %lld (a decompression-bomb guard; "
                 "raise max_pixels to decode it)",
                 (unsigned)width, (unsigned)height, (unsigned long long)pixels, (long long)opts->max_pixels);
        st->code = IIO_TOO_LARGE;
        return -1;
    }
    const int is_palette = (color_type & PNG_COLOR_MASK_PALETTE) != 0;
    const int has_color = (color_type & PNG_COLOR_MASK_COLOR) != 0;
    const int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    int has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
    if (color_type == PNG_COLOR_TYPE_GRAY && bit_depth < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    if (is_palette && bit_depth < 8)
        png_set_packing(png);
    const int passes = interlace == PNG_INTERLACE_ADAM7 ? png_set_interlace_handling(png) : 1;
    /* torchvision's filler alpha is (1 << bit_depth) - 1 of the file's depth: 1 for a
    ** 1-bit gray image, 3 for 2 bits, 15 for 4 bits (libpng expands the samples,
    ** not the filler); kept for bit-exactness. Palette images (only without tRNS,
    ** where torchvision adds none) get an opaque 255. */
    const png_uint_32 filler = is_palette ? 0xFFu : (png_uint_32)((1u << bit_depth) - 1u);

    switch (opts->mode) {
    case IIO_UNCHANGED:
        break;
    case IIO_GRAY:
        if (color_type != PNG_COLOR_TYPE_GRAY) {
            if (is_palette) {
                png_set_palette_to_rgb(png);
                has_alpha = has_trns;
            }
            if (has_alpha)
                png_set_strip_alpha(png);
            if (has_color)
                png_set_rgb_to_gray(png, 1, 0.2989, 0.587);
        }
        break;
    case IIO_GRAY_ALPHA:
        if (color_type != PNG_COLOR_TYPE_GRAY_ALPHA) {
            if (is_palette) {
                png_set_palette_to_rgb(png);
                has_alpha = has_trns;
            }
            if (!has_alpha)
                png_set_add_alpha(png, filler, PNG_FILLER_AFTER);
            if (has_color)
                png_set_rgb_to_gray(png, 1, 0.2989, 0.587);
        }
        break;
    case IIO_RGB:
        if (color_type != PNG_COLOR_TYPE_RGB) {
            if (is_palette) {
                png_set_palette_to_rgb(png);
                has_alpha = has_trns;
            } else if (!has_color) {
                png_set_gray_to_rgb(png);
            }
            if (has_alpha)
                png_set_strip_alpha(png);
        }
        break;
    case IIO_RGB_ALPHA:
        if (color_type != PNG_COLOR_TYPE_RGB_ALPHA) {
            if (is_palette) {
                png_set_palette_to_rgb(png);
                has_alpha = has_trns;
            } else if (!has_color) {
                png_set_gray_to_rgb(png);
            }
            if (!has_alpha)
                png_set_add_alpha(png, filler, PNG_FILLER_AFTER);
        }
        break;
    default:
        snprintf(st->err, IIO_ERR_SIZE, "the provided mode is not supported for PNG files");
        st->code = IIO_BAD_MODE;
        return -1;
    }
    if (bit_depth == 16)
        png_set_swap(png);      /* native order on little-endian hosts (PNG stores big-endian) */
    png_read_update_info(png, info);

    const int channels = png_get_channels(png, info);
    const int out_depth = png_get_bit_depth(png, info);
    const size_t rowbytes = png_get_rowbytes(png, info);
    const int sample_bytes = out_depth == 16 ? 2 : 1;
    if ((out_depth != 8 && out_depth != 16) || rowbytes != (size_t)width * (size_t)channels * (size_t)sample_bytes) {
        snprintf(st->err, IIO_ERR_SIZE, "PNG: libpng gives rows of %zu bytes at %d bits, %d channels: "
                 "not %u whole pixels", rowbytes, out_depth, channels, (unsigned)width);
        return -1;
    }
    if (opts->apply_exif_orientation) {
        png_uint_32 exif_n = 0;
        png_bytep exif = NULL;
        if (png_get_valid(png, info, PNG_INFO_eXIf) && png_get_eXIf_1(png, info, &exif_n, &exif) != 0 &&
            exif != NULL && exif_n > 0)
            img->orientation = iio_exif_orientation(exif, exif_n);
    }

    img->channels = channels;
    img->height = (int32_t)height;
    img->width = (int32_t)width;
    img->sample_bytes = sample_bytes;
    int64_t shape[3];
    iio_image_chw_shape(img, shape);
    void *dest = NULL;
    const int sunk = sink->begin(sink->user, shape, sample_bytes, &dest);
    if (sunk != 0) {
        st->code = sunk;
        return -1;
    }

    /* one row at a time into the CHW planes, unless the passes of an
    ** interlaced image or a rotation need the whole image first */
    const int streams = passes == 1 && iio_image_streams(img);
    if (streams) {
        st->row = malloc(rowbytes + 1);
    } else {
        img->pixels = malloc(rowbytes * height + 1);
        st->rows = malloc(sizeof(png_bytep) * (height + 1));
    }
    if (streams ? st->row == NULL : img->pixels == NULL || st->rows == NULL) {
        snprintf(st->err, IIO_ERR_SIZE, "out of memory for %u x %u pixels", (unsigned)width, (unsigned)height);
        st->code = IIO_NO_MEMORY;
        return -1;
    }
    if (streams) {
        for (png_uint_32 y = 0; y < height; y++) {
            png_read_row(png, st->row, NULL);
            iio_row_to_chw(img, st->row, y, dest);
        }
        return 0;
    }
    for (png_uint_32 y = 0; y < height; y++)
        st->rows[y] = img->pixels + rowbytes * y;
    for (int p = 0; p < passes; p++)
        for (png_uint_32 y = 0; y < height; y++)
            png_read_row(png, st->rows[y], NULL);
    iio_image_to_chw(img, dest);
    return 0;
}

int iio_decode_png(const uint8_t *data, size_t n, const iio_decode_opts *opts, const iio_sink *sink, char *err)
{
    pd_state st;
    memset(&st, 0, sizeof st);
    st.img.orientation = 1;
    st.err = err;
    st.code = IIO_BAD_FILE;
    st.data = data;
    st.n = n;
    err[0] = '\0';
    if (n < 8 || png_sig_cmp(data, 0, 8) != 0) {
        snprintf(err, IIO_ERR_SIZE, "not a PNG file (no PNG signature)");
        return IIO_BAD_FILE;
    }
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &st, pd_error, pd_warning);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    int rc = -1;
    if (png == NULL || info == NULL) {
        snprintf(err, IIO_ERR_SIZE, "PNG: out of memory for libpng's state");
        st.code = IIO_NO_MEMORY;
    } else {
        rc = pd_run(png, info, &st, opts, sink);
    }
    png_destroy_read_struct(png != NULL ? &png : NULL, info != NULL ? &info : NULL, NULL);
    free(st.rows);
    free(st.row);
    iio_image_free(&st.img);
    return rc != 0 ? st.code : 0;
}
