/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_nv12.h - the device code of the reader's NVDEC outputs
** (stream_nv12.cu), called by stream_cuda.c: one NV12 picture to a
** [3, H, W] u8 row, RGB or YUV planes.
*/
#ifndef LOOM_AUDIO_STREAM_NV12_H
#define LOOM_AUDIO_STREAM_NV12_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Launch on `stream` (a cudaStream_t) the conversion of the NV12 picture
** (y, uv: device planes with their pitches, width and height even) into
** dst [3, height, width]: rgb != 0: RGB planes from the BT.601 (bt709 == 0)
** or BT.709 matrix, limited range (16..235 luma) unless full_range; else
** the Y plane and the U and V planes with chroma repeated 2x2. 0, or the
** cudaError_t of the launch. */
int stream_nv12_to_planes(void *stream, uint8_t *dst, const uint8_t *y, int y_pitch, const uint8_t *uv,
                          int uv_pitch, int width, int height, int rgb, int bt709, int full_range);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_AUDIO_STREAM_NV12_H */
