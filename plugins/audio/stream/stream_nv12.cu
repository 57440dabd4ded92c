// SPDX-License-Identifier: BSD-3-Clause
//
// stream_nv12.cu - NV12 pictures (NVDEC's output) to the reader's [3, H, W]
// u8 rows, one thread per pixel: RGB by the BT.601 / BT.709 matrices (the
// ones swscale applies on the cpu path), or Y, U, V planes with chroma
// repeated 2x2 (the cpu path's yuv420p layout). Coalesced: consecutive
// threads of a row read consecutive luma bytes and write consecutive bytes
// of each plane.
#include <cuda_runtime.h>

#include "stream_nv12.h"

namespace {

struct matrix {
    float cr_r, cb_g, cr_g, cb_b;    // R = Y + cr_r V, G = Y - cb_g U - cr_g V, B = Y + cb_b U
};

__device__ __forceinline__ unsigned char clamp_u8(float v)
{
    v = fminf(fmaxf(v, 0.0f), 255.0f);
    return (unsigned char)__float2int_rn(v);
}

__global__ void nv12_to_rgb(unsigned char *dst, const unsigned char *y, int y_pitch, const unsigned char *uv,
                            int uv_pitch, int width, int height, matrix m, float y_off, float y_scale,
                            float c_scale)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || r >= height)
        return;
    const float Y = ((float)y[(size_t)r * y_pitch + x] - y_off) * y_scale;
    const unsigned char *c = uv + (size_t)(r / 2) * uv_pitch + (x / 2) * 2;
    const float U = ((float)c[0] - 128.0f) * c_scale, V = ((float)c[1] - 128.0f) * c_scale;
    const size_t plane = (size_t)width * height, at = (size_t)r * width + x;
    dst[at] = clamp_u8(Y + m.cr_r * V);
    dst[plane + at] = clamp_u8(Y - m.cb_g * U - m.cr_g * V);
    dst[2 * plane + at] = clamp_u8(Y + m.cb_b * U);
}

__global__ void nv12_to_yuv(unsigned char *dst, const unsigned char *y, int y_pitch, const unsigned char *uv,
                            int uv_pitch, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || r >= height)
        return;
    const unsigned char *c = uv + (size_t)(r / 2) * uv_pitch + (x / 2) * 2;
    const size_t plane = (size_t)width * height, at = (size_t)r * width + x;
    dst[at] = y[(size_t)r * y_pitch + x];
    dst[plane + at] = c[0];
    dst[2 * plane + at] = c[1];
}

}  // namespace

extern "C" int stream_nv12_to_planes(void *stream, uint8_t *dst, const uint8_t *y, int y_pitch, const uint8_t *uv,
                                     int uv_pitch, int width, int height, int rgb, int bt709, int full_range)
{
    const dim3 block(64, 4), grid((unsigned)(width + 63) / 64, (unsigned)(height + 3) / 4);
    cudaStream_t s = (cudaStream_t)stream;
    if (rgb) {
        // Kr, Kb of ITU-R BT.601 (0.299, 0.114) and BT.709 (0.2126, 0.0722)
        const float kr = bt709 ? 0.2126f : 0.299f, kb = bt709 ? 0.0722f : 0.114f, kg = 1.0f - kr - kb;
        const matrix m = { 2.0f * (1.0f - kr), 2.0f * (1.0f - kb) * kb / kg, 2.0f * (1.0f - kr) * kr / kg,
                           2.0f * (1.0f - kb) };
        // limited range: luma 16..235, chroma 16..240 (224 steps) to 0..255
        const float y_off = full_range ? 0.0f : 16.0f, y_scale = full_range ? 1.0f : 255.0f / 219.0f;
        const float c_scale = full_range ? 1.0f : 255.0f / 224.0f;
        nv12_to_rgb<<<grid, block, 0, s>>>(dst, y, y_pitch, uv, uv_pitch, width, height, m, y_off, y_scale, c_scale);
    } else {
        nv12_to_yuv<<<grid, block, 0, s>>>(dst, y, y_pitch, uv, uv_pitch, width, height);
    }
    return (int)cudaGetLastError();
}
