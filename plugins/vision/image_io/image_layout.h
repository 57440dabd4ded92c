/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_layout.h - the vector loops of image_layout.c's HWC -> CHW copy,
** chosen at run time (plugins/common/cpu.h, capped by LOOM_CPU_MAX_ISA).
*/
#ifndef LOOM_VISION_IMAGE_LAYOUT_H
#define LOOM_VISION_IMAGE_LAYOUT_H

#include <stdint.h>

/* Split the first pixels of n interleaved RGB pixels into r, g, b; returns
** how many it did (a multiple of 32), the caller does the rest. */
int64_t iio_deinterleave3_avx2(const uint8_t *src, uint8_t *r, uint8_t *g, uint8_t *b, int64_t n);

/* Whether the AVX2 loop runs: read once, at the pack's registration. */
void iio_layout_isa_init(void);
int iio_layout_avx2(void);

#endif
