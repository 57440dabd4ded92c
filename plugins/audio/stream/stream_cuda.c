/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_cuda.c - audio.stream_reader on a cuda device (audio-cuda.so):
** hw_accel=cuda outputs decoded by NVDEC through FFmpeg's hwaccel, kept on
** the GPU, and chunks popped as cuda tensors. A reader made with
** loom_object_options.device = cuda:N routes here (ABI 1.5) the methods
** this file has kernels for: add_video_stream, add_basic_video_stream
** (they lend the output the device operations below) and pop_chunk. Its
** other methods (metadata, process_packet, seek ...) have only cpu kernels
** and run in audio.so on the same state (one family of packs), returning
** host values.
**
** Every operation is finished when it returns: NVDEC reuses a picture's
** surface as soon as the decoder's frame is released, and a popped chunk is
** read by the caller on any stream. The device is the reader's, taken from
** the ops' user pointer.
*/
#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "stream.h"
#include "stream_nv12.h"
#include "stream_reader.h"

static int device_of(void *user) { return (int)(intptr_t)user; }

static void *dev_alloc(void *user, size_t n)
{
    void *p = NULL;
    if (cudaSetDevice(device_of(user)) != cudaSuccess || cudaMalloc(&p, n ? n : 1) != cudaSuccess)
        return NULL;
    return p;
}

static void dev_release(void *user, void *p)
{
    if (cudaSetDevice(device_of(user)) == cudaSuccess)
        cudaFree(p);
}

static int dev_copy(void *user, void *dst, const void *src, size_t n)
{
    if (cudaSetDevice(device_of(user)) != cudaSuccess)
        return -1;
    return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, 0) == cudaSuccess
        && cudaStreamSynchronize(0) == cudaSuccess ? 0 : -1;
}

static int to_device(void *user, void *dst, const void *src, size_t n)
{
    if (cudaSetDevice(device_of(user)) != cudaSuccess)
        return -1;
    return cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
}

static int nv12(void *user, uint8_t *dst, const uint8_t *y, int y_pitch, const uint8_t *uv, int uv_pitch, int width,
                int height, int rgb, int bt709, int full_range)
{
    if (cudaSetDevice(device_of(user)) != cudaSuccess)
        return -1;
    /* the legacy stream: ordered after FFmpeg's copy of the picture on the
    ** primary context, and synchronised before the surface goes back */
    if (stream_nv12_to_planes(NULL, dst, y, y_pitch, uv, uv_pitch, width, height, rgb, bt709, full_range) != 0)
        return -1;
    return cudaStreamSynchronize(0) == cudaSuccess ? 0 : -1;
}

/* The operations lent to the outputs of a reader on cuda:N. */
static sr_cuda_ops ops_for(const loom_call *call)
{
    const int dev = call->ctx->device.device_id;
    sr_cuda_ops o = { .mem = { .alloc = dev_alloc, .release = dev_release, .copy = dev_copy,
                               .user = (void *)(intptr_t)dev },
                      .to_device = to_device, .nv12 = nv12, .device_id = dev };
    return o;
}

static loom_status add_video_cuda(loom_call *call)
{
    sr_cuda_ops o = ops_for(call);
    return audio_sr_add_video_on(call, &o);
}

static loom_status add_basic_video_cuda(loom_call *call)
{
    sr_cuda_ops o = ops_for(call);
    return audio_sr_add_basic_video_on(call, &o);
}

static loom_status pop_chunk_cuda(loom_call *call)
{
    sr_cuda_ops o = ops_for(call);
    return audio_sr_pop_chunk_on(call, &o);
}

static const loom_kernel_desc stream_cuda_kernels[] = {
    PK_KERNEL_CUDA(audio_sr_add_video_schema, "cuda:nvdec", 0, add_video_cuda),
    PK_KERNEL_CUDA(audio_sr_add_basic_video_schema, "cuda:nvdec", 0, add_basic_video_cuda),
    PK_KERNEL_CUDA(audio_sr_pop_chunk_schema, "cuda:nvdec", 0, pop_chunk_cuda),
};

const pk_module audio_stream_cuda = PK_MODULE("stream", audio_stream_ops, stream_cuda_kernels, NULL);
