/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_pixels.h - packed 3-byte pixels (rgb24, bgr24) to three planes,
** the [C, H, W] layout of video chunks: a portable loop and an SSSE3 one
** (pshufb, 16 pixels a step), chosen once from the core's CPU features
** (LOOM_CPU_MAX_ISA=scalar keeps the portable one).
*/
#ifndef LOOM_AUDIO_STREAM_PIXELS_H
#define LOOM_AUDIO_STREAM_PIXELS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*sp_deinterleave3_fn)(const uint8_t *src, size_t n, uint8_t *p0, uint8_t *p1, uint8_t *p2);
/* The row function for this CPU. */
sp_deinterleave3_fn sp_deinterleave3(void);

#endif /* LOOM_AUDIO_STREAM_PIXELS_H */
