/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_layout.c - what the decoders share after the libraries are done:
** format sniffing, the EXIF orientation tag, and the HWC -> CHW copy that
** applies the orientation the way torchvision's exif_orientation_transform
** does on the CHW tensor:
**   1 as is            2 flip(-1)              3 flip(-2, -1)     4 flip(-2)
**   5 transpose(-1,-2) 6 transpose + flip(-1)  7 transpose + flip(-2, -1)
**   8 transpose + flip(-2)
** Any other value (or none) leaves the image as it is.
*/
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "deinterleave.h"
#include "image_codec.h"
#include "image_layout.h"

static int use_avx2;

void iio_layout_isa_init(void) { use_avx2 = pk_cpu_avx2(0); }
int iio_layout_avx2(void) { return use_avx2; }

iio_format iio_sniff(const uint8_t *data, size_t n)
{
    static const uint8_t jpeg_magic[3] = { 0xFF, 0xD8, 0xFF };
    static const uint8_t png_magic[4] = { 0x89, 'P', 'N', 'G' };
    if (n >= 3 && memcmp(data, jpeg_magic, 3) == 0)
        return IIO_FORMAT_JPEG;
    if (n >= 4 && memcmp(data, png_magic, 4) == 0)
        return IIO_FORMAT_PNG;
    return IIO_FORMAT_UNKNOWN;
}

void iio_image_free(iio_image *img)
{
    free(img->pixels);
    img->pixels = NULL;
}

/* ------------------------------------------------------------------ EXIF */

/* A 16- or 32-bit field at off, or -1 when it lies (partly) outside n bytes. */
static int64_t exif_u16(const uint8_t *p, size_t n, size_t off, int little)
{
    if (off > n || n - off < 2)
        return -1;
    return little ? (int64_t)(p[off] | (p[off + 1] << 8)) : (int64_t)((p[off] << 8) | p[off + 1]);
}

static int64_t exif_u32(const uint8_t *p, size_t n, size_t off, int little)
{
    if (off > n || n - off < 4)
        return -1;
    uint32_t v = little ? (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 |
                              (uint32_t)p[off + 3] << 24
                        : (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 |
                              (uint32_t)p[off + 3];
    return (int64_t)v;
}

int iio_exif_orientation(const uint8_t *tiff, size_t n)
{
    if (n < 2 || tiff[0] != tiff[1] || (tiff[0] != 'I' && tiff[0] != 'M'))
        return -1;
    const int little = tiff[0] == 'I';
    if (exif_u16(tiff, n, 2, little) != 0x2A)
        return -1;
    const int64_t ifd = exif_u32(tiff, n, 4, little);
    const int64_t entries = ifd < 0 ? -1 : exif_u16(tiff, n, (size_t)ifd, little);
    if (entries < 0)
        return -1;
    size_t off = (size_t)ifd + 2;
    for (int64_t e = 0; e < entries; e++, off += 12) {
        const int64_t tag = exif_u16(tiff, n, off, little);
        if (tag < 0)
            break;
        if (tag == 0x0112)
            return (int)exif_u16(tiff, n, off + 8, little);
    }
    return -1;
}

/* ------------------------------------------------------------ CHW + EXIF */

void iio_image_chw_shape(const iio_image *img, int64_t shape[3])
{
    const int swap = img->orientation >= 5 && img->orientation <= 8;
    shape[0] = img->channels;
    shape[1] = swap ? img->width : img->height;
    shape[2] = swap ? img->height : img->width;
}

/* Source pixel of output (y, x) is origin + y * dy + x * dx (in pixels of
** the HWC buffer). */
static void orientation_walk(const iio_image *img, int64_t *origin, int64_t *dy, int64_t *dx)
{
    const int64_t H = img->height, W = img->width;
    switch (img->orientation) {
    case 2: *origin = W - 1; *dy = W; *dx = -1; break;                  /* sy = y, sx = W-1-x */
    case 3: *origin = (H - 1) * W + W - 1; *dy = -W; *dx = -1; break;   /* sy = H-1-y, sx = W-1-x */
    case 4: *origin = (H - 1) * W; *dy = -W; *dx = 1; break;            /* sy = H-1-y, sx = x */
    case 5: *origin = 0; *dy = 1; *dx = W; break;                       /* sy = x, sx = y */
    case 6: *origin = (H - 1) * W; *dy = 1; *dx = -W; break;            /* sy = H-1-x, sx = y */
    case 7: *origin = (H - 1) * W + W - 1; *dy = -1; *dx = -W; break;   /* sy = H-1-x, sx = W-1-y */
    case 8: *origin = W - 1; *dy = -1; *dx = W; break;                  /* sy = x, sx = W-1-y */
    default: *origin = 0; *dy = W; *dx = 1; break;
    }
}

int iio_image_streams(const iio_image *img)
{
    return img->orientation < 2 || img->orientation > 8;
}

void iio_row_to_chw(const iio_image *img, const uint8_t *row, int64_t y, void *dest)
{
    const int64_t C = img->channels, W = img->width, plane = (int64_t)img->height * W;
    if (img->sample_bytes == 2) {
        uint16_t *o = (uint16_t *)dest + y * W;
        for (int64_t c = 0; c < C; c++)
            for (int64_t x = 0; x < W; x++) {
                uint16_t v;
                memcpy(&v, row + 2 * (x * C + c), 2);
                o[c * plane + x] = v;
            }
        return;
    }
    uint8_t *o = (uint8_t *)dest + y * W;
    if (C == 1) {
        memcpy(o, row, (size_t)W);
    } else if (C == 3) {
        uint8_t *o0 = o, *o1 = o + plane, *o2 = o + 2 * plane;
        for (int64_t x = use_avx2 ? pk_deinterleave3_u8_avx2(row, o0, o1, o2, W) : 0; x < W; x++) {
            o0[x] = row[3 * x];
            o1[x] = row[3 * x + 1];
            o2[x] = row[3 * x + 2];
        }
    } else {
        for (int64_t c = 0; c < C; c++)
            for (int64_t x = 0; x < W; x++)
                o[c * plane + x] = row[x * C + c];
    }
}

void iio_image_to_chw(const iio_image *img, void *out)
{
    int64_t shape[3];
    iio_image_chw_shape(img, shape);
    const int64_t C = shape[0], OH = shape[1], OW = shape[2], plane = OH * OW;
    if (iio_image_streams(img)) {
        const size_t stride = (size_t)img->width * (size_t)C * (size_t)img->sample_bytes;
        for (int64_t y = 0; y < img->height; y++)
            iio_row_to_chw(img, img->pixels + stride * (size_t)y, y, out);
        return;
    }
    int64_t origin, dy, dx;
    orientation_walk(img, &origin, &dy, &dx);
    for (int64_t y = 0; y < OH; y++) {
        for (int64_t x = 0; x < OW; x++) {
            const int64_t p = (origin + y * dy + x * dx) * C;
            for (int64_t c = 0; c < C; c++) {
                if (img->sample_bytes == 2) {
                    uint16_t v;
                    memcpy(&v, img->pixels + 2 * (p + c), 2);
                    ((uint16_t *)out)[c * plane + y * OW + x] = v;
                } else {
                    ((uint8_t *)out)[c * plane + y * OW + x] = img->pixels[p + c];
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- buffer */

int iio_buffer_reserve(iio_buffer *b, size_t more)
{
    if (more <= b->capacity - b->size)
        return 0;
    if (more > SIZE_MAX / 2 - b->size)
        return -1;
    size_t cap = b->capacity > 0 ? b->capacity : 4096;
    while (cap - b->size < more)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (p == NULL)
        return -1;
    b->data = p;
    b->capacity = cap;
    return 0;
}
