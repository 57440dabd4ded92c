/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_io_cuda.c - vision.decode_jpeg on cuda through nvJPEG, as
** torchvision.io.decode_jpeg(device="cuda") decodes: the file's bytes
** (input, a u8 [N] tensor on the device: loom routes a call by its
** tensors' device) are copied to the host, nvJPEG decodes them on the
** call's stream straight into the planes of the [C, H, W] output:
**   UNCHANGED  1 channel (NVJPEG_OUTPUT_Y) for a one-component file, else 3 (RGB)
**   GRAY       NVJPEG_OUTPUT_Y
**   RGB        NVJPEG_OUTPUT_RGB (planar)
** as torchvision's cuda decoder does. What it refuses, loom refuses too:
** the alpha modes, apply_exif_orientation (torchvision: "only implemented
** for JPEG format on CPU"), CMYK / YCCK files (nvJPEG decodes 1- and
** 3-component files). nvJPEG's IDCT and upsampling are not libjpeg's, so
** pixels differ from the cpu kernel's by small amounts, as torchvision's
** cuda and cpu decodes differ. The decode is asynchronous on the stream;
** the host copy of the file stays alive until the stream has read it.
**
** One nvJPEG handle serves the pack (created on first use; nvJPEG handles
** are thread-safe), one decoder state each call (states are not).
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <nvjpeg.h>

#include "image_io.h"

static pthread_once_t nvjpeg_once = PTHREAD_ONCE_INIT;
static nvjpegHandle_t nvjpeg_handle;
static nvjpegStatus_t nvjpeg_create_status;

static void nvjpeg_create(void) { nvjpeg_create_status = nvjpegCreateSimple(&nvjpeg_handle); }

static loom_status nvjpeg_fail(nvjpegStatus_t s, const char *what)
{
    /* a bad file is the file's fault; anything else is the library's */
    const loom_status st = s == NVJPEG_STATUS_BAD_JPEG || s == NVJPEG_STATUS_JPEG_NOT_SUPPORTED ? LOOM_EFORMAT
                                                                                               : LOOM_EDEVICE;
    return pk_host->fail(st, "'input': nvJPEG %s: status %d", what, (int)s);
}

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static loom_status decode_jpeg_cuda(loom_call *call)
{
    const loom_tensor *input = call->inputs[0];
    cudaStream_t stream = (cudaStream_t)call->ctx->stream;
    const char *mode_text = call->attrs[PK_ATTR(iio_decode, mode)].u.s;
    const int64_t max_pixels = call->attrs[PK_ATTR(iio_decode, max_pixels)].u.i;
    char b[64];
    if (call->n_inputs > 1 && call->inputs[1] != NULL)
        return pk_host->fail(LOOM_ENOTSUP, "'offsets': the cuda decoder takes one file per call");
    if (call->attrs[PK_ATTR(iio_decode, apply_exif_orientation)].u.b)
        return pk_host->fail(LOOM_EINVAL, "'apply_exif_orientation' is only implemented on the cpu (as in "
                             "torchvision)");
    const int gray = strcmp(mode_text, "GRAY") == 0, rgb = strcmp(mode_text, "RGB") == 0;
    if (!gray && !rgb && strcmp(mode_text, "UNCHANGED") != 0)
        return pk_host->fail(LOOM_EINVAL, "'mode' %s: the provided mode is not supported for JPEG files "
                             "(UNCHANGED, GRAY and RGB are)", mode_text);
    const size_t n = (size_t)loom_numel(input);
    if (n == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s is empty: it must hold the bytes of a file",
                             vision_describe(input, b, sizeof b));
    pthread_once(&nvjpeg_once, nvjpeg_create);
    if (nvjpeg_create_status != NVJPEG_STATUS_SUCCESS)
        return nvjpeg_fail(nvjpeg_create_status, "handle");

    /* the file on the host (nvJPEG parses it there) */
    uint8_t *file = malloc(n);
    if (file == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory for a %zu-byte file", n);
    loom_status st = LOOM_OK;
    nvjpegJpegState_t state = NULL;
    cudaError_t e = cudaMemcpyAsync(file, loom_data(input), n, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        st = cuda_fail(e, "copying the file to the host");
        goto done;
    }
    if (n < 3 || file[0] != 0xFF || file[1] != 0xD8 || file[2] != 0xFF) {     /* JPEG's SOI and a marker */
        st = pk_host->fail(LOOM_EFORMAT, "'input': not a JPEG file (starts with %02x %02x)", file[0],
                           n > 1 ? file[1] : 0);
        goto done;
    }
    int components = 0, widths[NVJPEG_MAX_COMPONENT] = { 0 }, heights[NVJPEG_MAX_COMPONENT] = { 0 };
    nvjpegChromaSubsampling_t subsampling;
    nvjpegStatus_t s = nvjpegGetImageInfo(nvjpeg_handle, file, n, &components, &subsampling, widths, heights);
    if (s != NVJPEG_STATUS_SUCCESS) {
        st = nvjpeg_fail(s, "header");
        goto done;
    }
    if (components != 1 && components != 3) {
        st = pk_host->fail(LOOM_EFORMAT, "'input': a JPEG of %d components; the cuda decoder takes 1 or 3 "
                           "(decode CMYK files on the cpu)", components);
        goto done;
    }
    const int64_t h = heights[0], w = widths[0];
    if (h <= 0 || w <= 0 || (uint64_t)h * (uint64_t)w > (uint64_t)max_pixels) {
        st = pk_host->fail(h <= 0 || w <= 0 ? LOOM_EFORMAT : LOOM_EINVAL,
                           "'input': JPEG declares %lld x %lld pixels (max_pixels = %lld)", (long long)w,
                           (long long)h, (long long)max_pixels);
        goto done;
    }
    const int channels = gray || (!rgb && components == 1) ? 1 : 3;
    const int64_t shape[3] = { channels, h, w };
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 3, shape, &out)) != LOOM_OK)
        goto done;
    nvjpegImage_t dest;
    memset(&dest, 0, sizeof dest);
    for (int c = 0; c < channels; c++) {
        dest.channel[c] = (unsigned char *)loom_data(out) + (size_t)c * (size_t)(h * w);
        dest.pitch[c] = (size_t)w;
    }
    if ((s = nvjpegJpegStateCreate(nvjpeg_handle, &state)) != NVJPEG_STATUS_SUCCESS) {
        state = NULL;
        st = nvjpeg_fail(s, "state");
        goto done;
    }
    s = nvjpegDecode(nvjpeg_handle, state, file, n, channels == 1 ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_RGB, &dest,
                     stream);
    if (s != NVJPEG_STATUS_SUCCESS) {
        st = nvjpeg_fail(s, "decode");
        goto done;
    }
    /* the host file and the state must outlive the stream's work */
    if ((e = cudaStreamSynchronize(stream)) != cudaSuccess)
        st = cuda_fail(e, "nvJPEG decode");
done:
    if (state != NULL)
        nvjpegJpegStateDestroy(state);
    free(file);
    return st;
}

static const loom_kernel_desc image_io_cuda_kernels[] = {
    PK_KERNEL_CUDA(vision_decode_jpeg_schema, "cuda:nvjpeg", LOOM_DTYPE_BIT(LOOM_DTYPE_U8) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64),
                   decode_jpeg_cuda),
};
const pk_module vision_image_io_cuda = PK_MODULE("image_io", vision_image_io_ops, image_io_cuda_kernels, NULL);
