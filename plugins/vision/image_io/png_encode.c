/* SPDX-License-Identifier: BSD-3-Clause */
/*
** png_encode.c - CHW u8 (1 or 3 channels) to a PNG file through libpng,
** with torchvision.io.encode_png's settings: 8-bit gray or RGB, no
** interlacing, the default compression and filter types (libpng's adaptive
** filter choice), png_set_compression_level(compression_level), no other
** chunks. libpng's errors longjmp back here and the buffer is freed.
*/
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>

#include "image_codec.h"

typedef struct pe_state {
    jmp_buf jump;
    char *err;
    int code;                           /* the iio_error of a failure */
    iio_buffer buf;
    uint8_t *row;
} pe_state;

static void pe_error(png_structp png, png_const_charp msg)
{
    pe_state *st = png_get_error_ptr(png);
    snprintf(st->err, IIO_ERR_SIZE, "PNG: %s", msg);
    longjmp(st->jump, 1);
}

static void pe_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void pe_write(png_structp png, png_bytep data, size_t n)
{
    pe_state *st = png_get_io_ptr(png);
    if (iio_buffer_reserve(&st->buf, n) != 0) {
        st->code = IIO_NO_MEMORY;
        png_error(png, "out of memory for the PNG file");
    }
    memcpy(st->buf.data + st->buf.size, data, n);
    st->buf.size += n;
}

static void pe_flush(png_structp png) { (void)png; }

static int pe_run(png_structp png, png_infop info, pe_state *st, const uint8_t *chw, int32_t channels,
                  int32_t height, int32_t width, int level)
{
    if (setjmp(st->jump))
        return -1;
    png_set_write_fn(png, st, pe_write, pe_flush);
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
                 channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, level);
    png_write_info(png, info);
    st->row = malloc((size_t)width * (size_t)channels + 1);
    if (st->row == NULL) {
        snprintf(st->err, IIO_ERR_SIZE, "out of memory for a row");
        st->code = IIO_NO_MEMORY;
        return -1;
    }
    const size_t plane = (size_t)height * (size_t)width;
    for (int32_t y = 0; y < height; y++) {
        const uint8_t *r = chw + (size_t)y * (size_t)width;
        if (channels == 1) {
            memcpy(st->row, r, (size_t)width);
        } else {
            const uint8_t *g = r + plane, *b = g + plane;
            for (int32_t x = 0; x < width; x++) {
                st->row[3 * x] = r[x];
                st->row[3 * x + 1] = g[x];
                st->row[3 * x + 2] = b[x];
            }
        }
        png_write_row(png, st->row);
    }
    png_write_end(png, info);
    return 0;
}

int iio_encode_png(const uint8_t *chw, int32_t channels, int32_t height, int32_t width, int level,
                   uint8_t **out, size_t *out_n, char *err)
{
    pe_state st;
    memset(&st, 0, sizeof st);
    st.err = err;
    st.code = IIO_BAD_FILE;             /* a library error: the kernel reports it as a refusal of the image */
    err[0] = '\0';
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &st, pe_error, pe_warning);
    png_infop info = png != NULL ? png_create_info_struct(png) : NULL;
    int rc = -1;
    if (png == NULL || info == NULL) {
        snprintf(err, IIO_ERR_SIZE, "PNG: out of memory for libpng's state");
        st.code = IIO_NO_MEMORY;
    } else
        rc = pe_run(png, info, &st, chw, channels, height, width, level);
    png_destroy_write_struct(png != NULL ? &png : NULL, info != NULL ? &info : NULL);
    free(st.row);
    if (rc != 0) {
        free(st.buf.data);
        return st.code;
    }
    *out = st.buf.data;
    *out_n = st.buf.size;
    return 0;
}
