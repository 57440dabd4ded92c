/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_io_cpu.c - the cpu kernels of the image_io ops: argument checks
** (torchvision's refusals, naming the argument), the jagged batch decoded
** in parallel over the core's pool, the encoders and read_file.
**
** One file: the decoder's sink allocates the output once the header has
** told its shape, and the rows go straight into it. A batch takes two
** passes over the core's pool, one task per file (libjpeg and libpng decode
** one file on one thread): every header (the sink stops the decode there),
** then, once all files are known to have one shape and the [B, C, H, W]
** output exists, every file into its slot. A failing file fails the call,
** naming its index and its bytes.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image_codec.h"
#include "image_io.h"
#include "image_layout.h"

/* ---------------------------------------------------------------- decode */

static iio_mode mode_of(const char *s)
{
    if (strcmp(s, "GRAY") == 0)
        return IIO_GRAY;
    if (strcmp(s, "GRAY_ALPHA") == 0)
        return IIO_GRAY_ALPHA;
    if (strcmp(s, "RGB") == 0)
        return IIO_RGB;
    if (strcmp(s, "RGB_ALPHA") == 0 || strcmp(s, "RGBA") == 0)
        return IIO_RGB_ALPHA;
    return IIO_UNCHANGED;
}

/* A codec's failure as a loom status: a bad file is LOOM_EFORMAT, a mode
** the format lacks or a file over max_pixels LOOM_EINVAL (the caller's
** arguments decide), memory LOOM_ENOMEM. An encoder's library error is a
** refusal of its image (LOOM_EINVAL: libjpeg's 65500-pixel side limit). */
static loom_status status_of(int code, int encoding)
{
    switch (code) {
    case IIO_NO_MEMORY: return LOOM_ENOMEM;
    case IIO_BAD_MODE: case IIO_TOO_LARGE: return LOOM_EINVAL;
    default: return encoding ? LOOM_EINVAL : LOOM_EFORMAT;
    }
}

/* How a decode of the call uses its sink. */
enum { SINK_SINGLE, SINK_PROBE, SINK_BATCH };

typedef struct decode_job {
    const uint8_t *data;
    const int64_t *offsets;         /* NULL: one file, data[0, n) */
    int64_t n;
    iio_format format;              /* IIO_FORMAT_UNKNOWN: sniff each file */
    iio_decode_opts opts;
    int sink_mode;
    int *failed;                    /* the iio_error of each file, 0 when decoded */
    char (*errors)[IIO_ERR_SIZE];
    int64_t (*shapes)[3];           /* SINK_PROBE: each file's [C, H, W] */
    int32_t *sample_bytes;
    loom_call *call;                /* SINK_SINGLE: the output is allocated when the shape is known */
    loom_status alloc_status;
    uint8_t *out;                   /* SINK_BATCH: the output and one image's bytes */
    size_t image_bytes;
} decode_job;

typedef struct file_sink {
    decode_job *job;
    int64_t index;
} file_sink;

static int file_begin(void *user, const int64_t shape[3], int32_t sample_bytes, void **dest)
{
    file_sink *fs = user;
    decode_job *j = fs->job;
    switch (j->sink_mode) {
    case SINK_SINGLE: {
        loom_tensor *out;
        j->alloc_status = pk_host->alloc_output(j->call, 0, sample_bytes == 2 ? LOOM_DTYPE_U16 : LOOM_DTYPE_U8, 3,
                                                shape, &out);
        if (j->alloc_status != LOOM_OK)
            return IIO_SINK_FAILED;
        *dest = loom_data(out);
        return 0;
    }
    case SINK_PROBE:
        memcpy(j->shapes[fs->index], shape, 3 * sizeof shape[0]);
        j->sample_bytes[fs->index] = sample_bytes;
        return IIO_STOPPED;
    default:
        /* the same bytes as the probe: the same shape */
        if (memcmp(j->shapes[fs->index], shape, 3 * sizeof shape[0]) != 0) {
            snprintf(j->errors[fs->index], IIO_ERR_SIZE, "decodes to another shape than its header said");
            return IIO_SINK_FAILED;
        }
        *dest = j->out + (size_t)fs->index * j->image_bytes;
        return 0;
    }
}

static void decode_one(decode_job *j, int64_t i)
{
    const size_t begin = j->offsets != NULL ? (size_t)j->offsets[i] : 0;
    const size_t end = j->offsets != NULL ? (size_t)j->offsets[i + 1] : (size_t)j->n;
    const uint8_t *p = j->data + begin;
    const size_t n = end - begin;
    file_sink fs = { j, i };
    const iio_sink sink = { file_begin, &fs };
    iio_format f = j->format;
    if (n == 0) {
        snprintf(j->errors[i], IIO_ERR_SIZE, "an empty file (torchvision: expected a non empty 1-dimensional tensor)");
        j->failed[i] = IIO_BAD_FILE;
        return;
    }
    if (f == IIO_FORMAT_UNKNOWN)
        f = iio_sniff(p, n);
    int rc;
    if (f == IIO_FORMAT_JPEG) {
        rc = iio_decode_jpeg(p, n, &j->opts, &sink, j->errors[i]);
    } else if (f == IIO_FORMAT_PNG) {
        rc = iio_decode_png(p, n, &j->opts, &sink, j->errors[i]);
    } else {
        snprintf(j->errors[i], IIO_ERR_SIZE, "not a JPEG or PNG file (starts with %02x %02x %02x %02x); "
                 "decode_image reads JPEG and PNG", p[0], n > 1 ? p[1] : 0, n > 2 ? p[2] : 0, n > 3 ? p[3] : 0);
        rc = IIO_BAD_FILE;
    }
    j->failed[i] = rc == IIO_STOPPED ? 0 : rc;
}

static void decode_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        decode_one(user, i);
}

/* The offsets of a batch: non-decreasing from 0 to the input's length. */
static loom_status check_offsets(const loom_tensor *input, const loom_tensor *offsets, int64_t *batch)
{
    char b[64];
    const int64_t nb = loom_numel(offsets);
    if (nb < 1)
        return pk_host->fail(LOOM_EINVAL, "'offsets' %s must hold B + 1 bounds (at least one)",
                             vision_describe(offsets, b, sizeof b));
    const int64_t *o = loom_data(offsets);
    if (o[0] != 0 || o[nb - 1] != loom_numel(input))
        return pk_host->fail(LOOM_EINVAL, "'offsets' must start at 0 and end at the length of 'input' (%lld); "
                             "they go from %lld to %lld", (long long)loom_numel(input), (long long)o[0],
                             (long long)o[nb - 1]);
    for (int64_t i = 0; i + 1 < nb; i++)
        if (o[i + 1] < o[i])
            return pk_host->fail(LOOM_EINVAL, "'offsets' must not decrease: offsets[%lld] = %lld > offsets[%lld] = %lld",
                                 (long long)i, (long long)o[i], (long long)(i + 1), (long long)o[i + 1]);
    *batch = nb - 1;
    return LOOM_OK;
}

/* The first failed file's error, named. */
static loom_status file_failure(const decode_job *j, int64_t i, int64_t batch)
{
    if (j->failed[i] == IIO_SINK_FAILED && j->sink_mode == SINK_SINGLE)
        return j->alloc_status;             /* the core's message about the output */
    const loom_status code = status_of(j->failed[i], 0);
    if (j->offsets == NULL)
        return pk_host->fail(code, "'input': %s", j->errors[i]);
    return pk_host->fail(code, "'input' file %lld of %lld (bytes [%lld, %lld)): %s", (long long)i, (long long)batch,
                         (long long)j->offsets[i], (long long)j->offsets[i + 1], j->errors[i]);
}

/* A batch: every file's shape (headers only), one output, then every file
** into its slot, one task per file. */
static loom_status decode_batch(loom_call *call, decode_job *job, int64_t batch)
{
    job->shapes = calloc((size_t)batch, sizeof *job->shapes);
    job->sample_bytes = calloc((size_t)batch, sizeof *job->sample_bytes);
    loom_status st = LOOM_OK;
    if (job->shapes == NULL || job->sample_bytes == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "out of memory for a batch of %lld files", (long long)batch);
        goto done;
    }
    job->sink_mode = SINK_PROBE;
    if ((st = pk_host->parallel_for(call->ctx, batch, 1, decode_range, job)) != LOOM_OK)
        goto done;
    for (int64_t i = 0; i < batch; i++) {
        if (job->failed[i]) {
            st = file_failure(job, i, batch);
            goto done;
        }
        const int64_t *s = job->shapes[i], *s0 = job->shapes[0];
        if (memcmp(s, s0, sizeof job->shapes[0]) != 0 || job->sample_bytes[i] != job->sample_bytes[0]) {
            st = pk_host->fail(LOOM_EINVAL, "'input' file %lld decodes to [%lld, %lld, %lld] (%d-bit), file 0 to "
                               "[%lld, %lld, %lld] (%d-bit): a batch needs one shape", (long long)i, (long long)s[0],
                               (long long)s[1], (long long)s[2], 8 * job->sample_bytes[i], (long long)s0[0],
                               (long long)s0[1], (long long)s0[2], 8 * job->sample_bytes[0]);
            goto done;
        }
    }
    const int wide = job->sample_bytes[0] == 2;
    const int64_t shape4[4] = { batch, job->shapes[0][0], job->shapes[0][1], job->shapes[0][2] };
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, wide ? LOOM_DTYPE_U16 : LOOM_DTYPE_U8, 4, shape4, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        goto done;
    job->out = loom_data(out);
    job->image_bytes = (size_t)(shape4[1] * shape4[2] * shape4[3]) * (wide ? 2u : 1u);
    job->sink_mode = SINK_BATCH;
    if ((st = pk_host->parallel_for(call->ctx, batch, 1, decode_range, job)) != LOOM_OK)
        goto done;
    for (int64_t i = 0; i < batch; i++)
        if (job->failed[i]) {
            st = file_failure(job, i, batch);
            goto done;
        }
done:
    free(job->shapes);
    free(job->sample_bytes);
    return st;
}

static loom_status decode_run(loom_call *call, iio_format format)
{
    const loom_tensor *input = call->inputs[0];
    const loom_tensor *offsets = call->n_inputs > 1 ? call->inputs[1] : NULL;
    char b[64];
    iio_decode_opts opts = {
        .mode = mode_of(call->attrs[PK_ATTR(iio_decode, mode)].u.s),
        .apply_exif_orientation = call->attrs[PK_ATTR(iio_decode, apply_exif_orientation)].u.b != 0,
        .max_pixels = call->attrs[PK_ATTR(iio_decode, max_pixels)].u.i,
    };
    int64_t batch = 1;
    if (offsets != NULL) {
        loom_status st = check_offsets(input, offsets, &batch);
        if (st != LOOM_OK)
            return st;
        if (batch == 0) {
            const int64_t shape[4] = { 0, 0, 0, 0 };
            loom_tensor *out;
            return pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 4, shape, &out);
        }
    } else if (loom_numel(input) == 0) {
        return pk_host->fail(LOOM_EINVAL, "'input' %s is empty: it must hold the bytes of a file "
                             "(torchvision: expected a non empty 1-dimensional tensor)",
                             vision_describe(input, b, sizeof b));
    }

    decode_job job = { .data = loom_data(input), .offsets = offsets != NULL ? loom_data(offsets) : NULL,
                       .n = loom_numel(input), .format = format, .opts = opts, .call = call };
    job.failed = calloc((size_t)batch, sizeof *job.failed);
    job.errors = calloc((size_t)batch, sizeof *job.errors);
    loom_status st = LOOM_OK;
    if (job.failed == NULL || job.errors == NULL) {
        st = pk_host->fail(LOOM_ENOMEM, "out of memory for a batch of %lld files", (long long)batch);
    } else if (offsets == NULL) {
        job.sink_mode = SINK_SINGLE;
        decode_one(&job, 0);
        if (job.failed[0])
            st = file_failure(&job, 0, 1);
    } else {
        st = decode_batch(call, &job, batch);
    }
    free(job.failed);
    free(job.errors);
    return st;
}

static loom_status decode_jpeg_run(loom_call *call) { return decode_run(call, IIO_FORMAT_JPEG); }
static loom_status decode_png_run(loom_call *call) { return decode_run(call, IIO_FORMAT_PNG); }
static loom_status decode_image_run(loom_call *call) { return decode_run(call, IIO_FORMAT_UNKNOWN); }

/* ---------------------------------------------------------------- encode */

/* torchvision's checks: u8 [C, H, W] with C = 1 or 3; loom also refuses an
** image without pixels (libjpeg and libpng would fail on it). */
static loom_status check_encode_input(const loom_tensor *x)
{
    char b[64];
    if (x->shape[0] != 1 && x->shape[0] != 3)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: the number of channels should be 1 or 3, got %lld",
                             vision_describe(x, b, sizeof b), (long long)x->shape[0]);
    if (x->shape[1] <= 0 || x->shape[2] <= 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s has no pixels", vision_describe(x, b, sizeof b));
    if (x->shape[1] > INT32_MAX || x->shape[2] > INT32_MAX)
        return pk_host->fail(LOOM_EINVAL, "'input' %s is over 2^31 - 1 pixels a side", vision_describe(x, b, sizeof b));
    return LOOM_OK;
}

static loom_status emit_file(loom_call *call, int rc, uint8_t *file, size_t n, const char *err)
{
    if (rc != 0)
        return pk_host->fail(status_of(rc, 1), "'input': %s", err);
    const int64_t shape[1] = { (int64_t)n };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, shape, &out);
    if (st == LOOM_OK && n > 0)
        memcpy(loom_data(out), file, n);
    free(file);
    return st;
}

static loom_status encode_jpeg_run(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const int64_t quality = call->attrs[PK_ATTR(iio_encode_jpeg, quality)].u.i;
    if (quality < 1 || quality > 100)
        return pk_host->fail(LOOM_EINVAL, "'quality' = %lld: image quality should be a number between 1 and 100",
                             (long long)quality);
    loom_status st = check_encode_input(x);
    if (st != LOOM_OK)
        return st;
    uint8_t *file = NULL;
    size_t n = 0;
    char err[IIO_ERR_SIZE];
    int rc = iio_encode_jpeg(loom_data(x), (int32_t)x->shape[0], (int32_t)x->shape[1], (int32_t)x->shape[2],
                             (int)quality, &file, &n, err);
    return emit_file(call, rc, file, n, err);
}

static loom_status encode_png_run(loom_call *call)
{
    const loom_tensor *x = call->inputs[0];
    const int64_t level = call->attrs[PK_ATTR(iio_encode_png, compression_level)].u.i;
    if (level < 0 || level > 9)
        return pk_host->fail(LOOM_EINVAL, "'compression_level' = %lld: compression level should be between 0 and 9",
                             (long long)level);
    loom_status st = check_encode_input(x);
    if (st != LOOM_OK)
        return st;
    uint8_t *file = NULL;
    size_t n = 0;
    char err[IIO_ERR_SIZE];
    int rc = iio_encode_png(loom_data(x), (int32_t)x->shape[0], (int32_t)x->shape[1], (int32_t)x->shape[2],
                            (int)level, &file, &n, err);
    return emit_file(call, rc, file, n, err);
}

/* ------------------------------------------------------------- read_file */

static loom_status read_file_run(loom_call *call)
{
    const char *path = call->attrs[PK_ATTR(iio_read_file, path)].u.s;
    const void *data = NULL;
    size_t n = 0;
    loom_status st = pk_host->map_file(path, &data, &n);
    if (st != LOOM_OK)
        return st;
    if (n == 0) {
        pk_host->unmap_file(data, n);
        return pk_host->fail(LOOM_EINVAL, "'path' '%s' is an empty file (torchvision: expected a non empty file)", path);
    }
    const int64_t shape[1] = { (int64_t)n };
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, shape, &out);
    if (st == LOOM_OK)
        memcpy(loom_data(out), data, n);
    pk_host->unmap_file(data, n);
    return st;
}

/* --------------------------------------------------------------- kernels */

#define U8_I64 (LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))

/* The decoders: their names say whether the HWC -> CHW copy has its AVX2
** loop (LOOM_CPU_MAX_ISA may leave it out), so they are registered once the
** CPU features are known. */
static loom_status image_io_register_isa(const loom_host_api *host, loom_registrar *reg)
{
    iio_layout_isa_init();
    const int avx2 = iio_layout_avx2();
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(vision_decode_jpeg_schema, avx2 ? "cpu:libjpeg-turbo-avx2" : "cpu:libjpeg-turbo", U8_I64,
                      decode_jpeg_run),
        PK_KERNEL_CPU(vision_decode_png_schema, avx2 ? "cpu:libpng-avx2" : "cpu:libpng", U8_I64, decode_png_run),
        PK_KERNEL_CPU(vision_decode_image_schema, avx2 ? "cpu:libjpeg-turbo+libpng-avx2" : "cpu:libjpeg-turbo+libpng",
                      U8_I64, decode_image_run),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

static const loom_kernel_desc image_io_cpu_kernels[] = {
    PK_KERNEL_CPU(vision_encode_jpeg_schema, "cpu:libjpeg-turbo", LOOM_DTYPE_BIT(LOOM_DTYPE_U8), encode_jpeg_run),
    PK_KERNEL_CPU(vision_encode_png_schema, "cpu:libpng", LOOM_DTYPE_BIT(LOOM_DTYPE_U8), encode_png_run),
    PK_KERNEL_CPU(vision_read_file_schema, "cpu:file", 0, read_file_run),
};
const pk_module vision_image_io_cpu = PK_MODULE("image_io", vision_image_io_ops, image_io_cpu_kernels,
                                                image_io_register_isa);
