/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jpeg_encode.c - CHW u8 (1 or 3 channels) to a JPEG file through
** libjpeg-turbo's libjpeg API, with torchvision.io.encode_jpeg's settings:
** in_color_space JCS_GRAYSCALE / JCS_RGB, jpeg_set_defaults,
** jpeg_set_quality(quality, force_baseline = TRUE), everything else at
** libjpeg's defaults (ISLOW DCT, 4:2:0 for RGB, standard Huffman tables).
** The file grows in a buffer of ours (not jpeg_mem_dest's), so an error
** midway frees it: libjpeg's error_exit longjmps back here.
*/
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "image_codec.h"

#define JE_CHUNK 65536

typedef struct je_state {
    struct jpeg_error_mgr pub;          /* first: cinfo->err points here */
    struct jpeg_destination_mgr dest;
    jmp_buf jump;
    char *err;
    int code;                           /* the iio_error of a failure */
    iio_buffer buf;
    uint8_t *row;                       /* one interleaved scanline */
} je_state;

static void je_error_exit(j_common_ptr cinfo)
{
    je_state *st = (je_state *)cinfo->err;
    char msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, msg);
    snprintf(st->err, IIO_ERR_SIZE, "JPEG: %s", msg);
    longjmp(st->jump, 1);
}

static void je_output_message(j_common_ptr cinfo) { (void)cinfo; }

/* The destination hands libjpeg the free tail of buf, JE_CHUNK at least. */
static void je_give_room(j_compress_ptr cinfo)
{
    je_state *st = (je_state *)cinfo->err;
    if (iio_buffer_reserve(&st->buf, JE_CHUNK) != 0) {
        snprintf(st->err, IIO_ERR_SIZE, "out of memory for the JPEG file");
        st->code = IIO_NO_MEMORY;
        longjmp(st->jump, 1);
    }
    st->dest.next_output_byte = st->buf.data + st->buf.size;
    st->dest.free_in_buffer = st->buf.capacity - st->buf.size;
}

static void je_init_destination(j_compress_ptr cinfo) { je_give_room(cinfo); }

static boolean je_empty_output_buffer(j_compress_ptr cinfo)
{
    je_state *st = (je_state *)cinfo->err;
    st->buf.size = st->buf.capacity;        /* libjpeg filled all it was given */
    je_give_room(cinfo);
    return TRUE;
}

static void je_term_destination(j_compress_ptr cinfo)
{
    je_state *st = (je_state *)cinfo->err;
    st->buf.size = st->buf.capacity - st->dest.free_in_buffer;
}

static int je_run(struct jpeg_compress_struct *cinfo, je_state *st, const uint8_t *chw, int32_t channels,
                  int32_t height, int32_t width, int quality)
{
    if (setjmp(st->jump))
        return -1;
    jpeg_create_compress(cinfo);
    cinfo->dest = &st->dest;
    cinfo->image_width = (JDIMENSION)width;
    cinfo->image_height = (JDIMENSION)height;
    cinfo->input_components = channels;
    cinfo->in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, quality, TRUE);
    st->row = malloc((size_t)width * (size_t)channels + 1);
    if (st->row == NULL) {
        snprintf(st->err, IIO_ERR_SIZE, "out of memory for a scanline");
        st->code = IIO_NO_MEMORY;
        return -1;
    }
    jpeg_start_compress(cinfo, TRUE);
    const size_t plane = (size_t)height * (size_t)width;
    while (cinfo->next_scanline < cinfo->image_height) {
        const size_t y = cinfo->next_scanline;
        if (channels == 1) {
            memcpy(st->row, chw + y * (size_t)width, (size_t)width);
        } else {
            const uint8_t *r = chw + y * (size_t)width, *g = r + plane, *b = g + plane;
            for (int32_t x = 0; x < width; x++) {
                st->row[3 * x] = r[x];
                st->row[3 * x + 1] = g[x];
                st->row[3 * x + 2] = b[x];
            }
        }
        JSAMPROW rows[1] = { st->row };
        jpeg_write_scanlines(cinfo, rows, 1);
    }
    jpeg_finish_compress(cinfo);
    return 0;
}

int iio_encode_jpeg(const uint8_t *chw, int32_t channels, int32_t height, int32_t width, int quality,
                    uint8_t **out, size_t *out_n, char *err)
{
    struct jpeg_compress_struct cinfo;
    je_state st;
    memset(&cinfo, 0, sizeof cinfo);
    memset(&st, 0, sizeof st);
    st.err = err;
    st.code = IIO_BAD_FILE;             /* a library error: the kernel reports it as a refusal of the image */
    err[0] = '\0';
    cinfo.err = jpeg_std_error(&st.pub);
    st.pub.error_exit = je_error_exit;
    st.pub.output_message = je_output_message;
    st.dest.init_destination = je_init_destination;
    st.dest.empty_output_buffer = je_empty_output_buffer;
    st.dest.term_destination = je_term_destination;
    int rc = je_run(&cinfo, &st, chw, channels, height, width, quality);
    jpeg_destroy_compress(&cinfo);
    free(st.row);
    if (rc != 0) {
        free(st.buf.data);
        return st.code;
    }
    *out = st.buf.data;
    *out_n = st.buf.size;
    return 0;
}
