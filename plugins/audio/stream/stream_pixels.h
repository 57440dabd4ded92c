/* SPDX-License-Identifier: BSD-3-Clause */
/*
** stream_pixels.h - packed 3-byte pixels (rgb24, bgr24) to three planes,
** the [C, H, W] layout of video chunks (the reader), and back (the
** writer): a portable loop and an SSSE3 one (pshufb, 16 pixels a step)
** each, chosen once from the core's CPU features (LOOM_CPU_MAX_ISA=scalar
** keeps the portable ones).
*/
#ifndef LOOM_AUDIO_STREAM_PIXELS_H
#define LOOM_AUDIO_STREAM_PIXELS_H

#include <stddef.h>
#include <stdint.h>

typedef void (*sp_deinterleave3_fn)(const uint8_t *src, size_t n, uint8_t *p0, uint8_t *p1, uint8_t *p2);
/* The row function for this CPU. */
sp_deinterleave3_fn sp_deinterleave3(void);

typedef void (*sp_interleave3_fn)(const uint8_t *p0, const uint8_t *p1, const uint8_t *p2, size_t n, uint8_t *dst);
sp_interleave3_fn sp_interleave3(void);

#endif /* LOOM_AUDIO_STREAM_PIXELS_H */
