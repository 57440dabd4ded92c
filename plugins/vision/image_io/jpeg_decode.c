/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jpeg_decode.c - JPEG to interleaved pixels through libjpeg-turbo's libjpeg
** API, with the settings torchvision.io.decode_jpeg uses, so the samples
** are bit-identical to its (and PIL's): libjpeg's defaults (JDCT_ISLOW,
** fancy upsampling, no scaling), out_color_space chosen by mode:
**   UNCHANGED  the file's components as libjpeg outputs them by default
**              (YCbCr -> RGB, grayscale, CMYK / YCCK -> CMYK: 4 channels)
**   GRAY       JCS_GRAYSCALE (libjpeg's Y); CMYK / YCCK: decoded as CMYK, then
**              r = c * k / 255 (and g, b; Adobe's inverted CMYK, as
**              torchvision), gray = libjpeg's (19595 r + 38470 g + 7471 b
**              + 2^15) >> 16
**   RGB        JCS_RGB; CMYK / YCCK as above without the gray step
**   others     refused ("not supported for JPEG files", as torchvision)
** The EXIF orientation is read from the first APP1 marker, past its 6-byte
** "Exif\0\0" header (torchvision does not check those 6 bytes either).
**
** Errors: libjpeg's error_exit formats its message and longjmps here; the
** source manager refuses to invent data past the end ("Image is incomplete
** or truncated", torchvision's words); a progress monitor stops a
** progressive file after IIO_JPEG_MAX_SCANS scans.
*/
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "image_codec.h"

/* Scanlines asked of libjpeg at once (it may give fewer). */
#define JD_ROWS 4

typedef struct jd_state {
    struct jpeg_error_mgr pub;          /* first: libjpeg's err pointer is this struct */
    struct jpeg_source_mgr src;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    char *err;
    int code;                           /* the iio_error of a failure */
    const uint8_t *data;
    size_t n;
    uint8_t *rows;                      /* JD_ROWS scanlines as libjpeg writes them; malloc'd */
    uint8_t *line;                      /* one converted scanline (CMYK -> RGB / gray); malloc'd */
    iio_image img;                      /* the shape; pixels: the whole image when it is not streamed */
} jd_state;

static void jd_error_exit(j_common_ptr cinfo)
{
    jd_state *st = (jd_state *)cinfo->err;
    char msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, msg);
    snprintf(st->err, IIO_ERR_SIZE, "JPEG: %s", msg);
    longjmp(st->jump, 1);
}

/* Warnings (corrupt-data notices libjpeg recovers from) are not errors,
** as in torchvision; they are dropped rather than printed. */
static void jd_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void jd_init_source(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean jd_fill_input_buffer(j_decompress_ptr cinfo)
{
    jd_state *st = (jd_state *)cinfo->err;
    snprintf(st->err, IIO_ERR_SIZE, "JPEG: Image is incomplete or truncated");
    longjmp(st->jump, 1);
}

static void jd_skip_input_data(j_decompress_ptr cinfo, long num_bytes)
{
    struct jpeg_source_mgr *src = cinfo->src;
    if (num_bytes <= 0)
        return;
    if ((size_t)num_bytes > src->bytes_in_buffer) {
        /* past the end: the next read asks fill_input_buffer, which fails */
        src->next_input_byte += src->bytes_in_buffer;
        src->bytes_in_buffer = 0;
        return;
    }
    src->next_input_byte += num_bytes;
    src->bytes_in_buffer -= (size_t)num_bytes;
}

static void jd_term_source(j_decompress_ptr cinfo) { (void)cinfo; }

static void jd_progress(j_common_ptr cinfo)
{
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->is_decompressor && d->progressive_mode && d->input_scan_number > IIO_JPEG_MAX_SCANS) {
        jd_state *st = (jd_state *)cinfo->err;
        snprintf(st->err, IIO_ERR_SIZE, "JPEG: more than %d progressive scans (a malformed or hostile file)",
                 IIO_JPEG_MAX_SCANS);
        longjmp(st->jump, 1);
    }
}

/* The first APP1 marker's orientation, as torchvision reads it. */
static int jd_exif_orientation(j_decompress_ptr cinfo)
{
    for (jpeg_saved_marker_ptr m = cinfo->marker_list; m != NULL; m = m->next) {
        if (m->marker != JPEG_APP0 + 1)
            continue;
        if (m->data_length <= 6)
            return -1;
        return iio_exif_orientation(m->data + 6, m->data_length - 6);
    }
    return -1;
}

static inline uint8_t jd_gray_of(int r, int g, int b)
{
    return (uint8_t)((r * 19595 + g * 38470 + b * 7471 + 32768) >> 16);
}

static void jd_cmyk_line(const uint8_t *cmyk, uint8_t *out, int32_t width, int gray)
{
    for (int32_t x = 0; x < width; x++) {
        const int c = cmyk[4 * x], m = cmyk[4 * x + 1], y = cmyk[4 * x + 2], k = cmyk[4 * x + 3];
        const int r = c * k / 255, g = m * k / 255, b = y * k / 255;
        if (gray) {
            out[x] = jd_gray_of(r, g, b);
        } else {
            out[3 * x] = (uint8_t)r;
            out[3 * x + 1] = (uint8_t)g;
            out[3 * x + 2] = (uint8_t)b;
        }
    }
}

/* Everything that may longjmp; the caller owns cinfo and st. */
static int jd_run(struct jpeg_decompress_struct *cinfo, jd_state *st, const iio_decode_opts *opts,
                  const iio_sink *sink)
{
    if (setjmp(st->jump))
        return -1;
    jpeg_create_decompress(cinfo);
    cinfo->src = &st->src;
    cinfo->progress = &st->progress;
    if (opts->apply_exif_orientation)
        jpeg_save_markers(cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_read_header(cinfo, TRUE);

    const uint64_t pixels = (uint64_t)cinfo->image_width * cinfo->image_height;
    if (pixels > (uint64_t)opts->max_pixels) {
        snprintf(st->err, IIO_ERR_SIZE,
                 "JPEG declares %u x %u = %llu pixels, over max_pixels = %lld (a decompression-bomb guard; "
                 "raise max_pixels to decode it)",
                 cinfo->image_width, cinfo->image_height, (unsigned long long)pixels, (long long)opts->max_pixels);
        st->code = IIO_TOO_LARGE;
        return -1;
    }

    const int cmyk_in = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
    int channels = cinfo->num_components, convert = 0;     /* convert: 1 CMYK->gray, 3 CMYK->RGB */
    switch (opts->mode) {
    case IIO_UNCHANGED:
        break;
    case IIO_GRAY:
        if (cmyk_in) {
            cinfo->out_color_space = JCS_CMYK;
            convert = 1;
        } else {
            cinfo->out_color_space = JCS_GRAYSCALE;
        }
        channels = 1;
        break;
    case IIO_RGB:
        if (cmyk_in) {
            cinfo->out_color_space = JCS_CMYK;
            convert = 3;
        } else {
            cinfo->out_color_space = JCS_RGB;
        }
        channels = 3;
        break;
    default:
        snprintf(st->err, IIO_ERR_SIZE, "the provided mode is not supported for JPEG files "
                 "(UNCHANGED, GRAY and RGB are)");
        st->code = IIO_BAD_MODE;
        return -1;
    }
    jpeg_calc_output_dimensions(cinfo);
    if (cinfo->output_components != (convert ? 4 : channels)) {
        snprintf(st->err, IIO_ERR_SIZE, "JPEG: libjpeg gives %d components where %d were expected",
                 cinfo->output_components, convert ? 4 : channels);
        return -1;
    }

    /* the shape, then where the result goes (before any scan is read: a
    ** caller asking for the shape only pays for the header) */
    iio_image *img = &st->img;
    img->channels = channels;
    img->height = (int32_t)cinfo->output_height;
    img->width = (int32_t)cinfo->output_width;
    img->sample_bytes = 1;
    if (opts->apply_exif_orientation)
        img->orientation = jd_exif_orientation(cinfo);
    int64_t shape[3];
    iio_image_chw_shape(img, shape);
    void *dest = NULL;
    const int sunk = sink->begin(sink->user, shape, 1, &dest);
    if (sunk != 0) {
        st->code = sunk;
        return -1;
    }

    jpeg_start_decompress(cinfo);
    const int32_t width = img->width, height = img->height;
    const int streams = iio_image_streams(img);
    const size_t stride = (size_t)width * (size_t)channels, in_stride = (size_t)width * (convert ? 4u : (size_t)channels);
    if (!streams)
        img->pixels = malloc(stride * (size_t)height + 1);
    st->rows = malloc(in_stride * JD_ROWS + 1);
    if (convert)
        st->line = malloc(stride + 1);
    if ((!streams && img->pixels == NULL) || st->rows == NULL || (convert && st->line == NULL)) {
        snprintf(st->err, IIO_ERR_SIZE, "out of memory for %d x %d pixels", width, height);
        st->code = IIO_NO_MEMORY;
        return -1;
    }
    while (cinfo->output_scanline < cinfo->output_height) {
        const JDIMENSION y0 = cinfo->output_scanline;
        JSAMPROW rows[JD_ROWS];
        for (int k = 0; k < JD_ROWS; k++)
            rows[k] = st->rows + in_stride * (size_t)k;
        const JDIMENSION got = jpeg_read_scanlines(cinfo, rows, JD_ROWS);
        if (got == 0) {
            snprintf(st->err, IIO_ERR_SIZE, "JPEG: Image is incomplete or truncated");
            return -1;
        }
        for (JDIMENSION k = 0; k < got; k++) {
            const uint8_t *row = rows[k];
            if (convert) {
                jd_cmyk_line(row, st->line, width, convert == 1);
                row = st->line;
            }
            if (streams)
                iio_row_to_chw(img, row, (int64_t)(y0 + k), dest);
            else
                memcpy(img->pixels + stride * (y0 + k), row, stride);
        }
    }
    jpeg_finish_decompress(cinfo);
    if (!streams)
        iio_image_to_chw(img, dest);
    return 0;
}

int iio_decode_jpeg(const uint8_t *data, size_t n, const iio_decode_opts *opts, const iio_sink *sink, char *err)
{
    struct jpeg_decompress_struct cinfo;
    jd_state st;
    memset(&cinfo, 0, sizeof cinfo);
    memset(&st, 0, sizeof st);
    st.img.orientation = 1;
    st.err = err;
    st.code = IIO_BAD_FILE;
    err[0] = '\0';
    cinfo.err = jpeg_std_error(&st.pub);
    st.pub.error_exit = jd_error_exit;
    st.pub.output_message = jd_output_message;
    st.src.init_source = jd_init_source;
    st.src.fill_input_buffer = jd_fill_input_buffer;
    st.src.skip_input_data = jd_skip_input_data;
    st.src.resync_to_restart = jpeg_resync_to_restart;
    st.src.term_source = jd_term_source;
    st.src.next_input_byte = data;
    st.src.bytes_in_buffer = n;
    st.progress.progress_monitor = jd_progress;
    st.data = data;
    st.n = n;

    int rc = jd_run(&cinfo, &st, opts, sink);
    jpeg_destroy_decompress(&cinfo);
    free(st.rows);
    free(st.line);
    iio_image_free(&st.img);
    return rc != 0 ? st.code : 0;
}
