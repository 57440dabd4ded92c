/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_layout.h - whether image_layout.c's HWC -> CHW copy takes the AVX2
** deinterleave (plugins/common/deinterleave.h), chosen at run time
** (plugins/common/cpu.h, capped by LOOM_CPU_MAX_ISA).
*/
#ifndef LOOM_VISION_IMAGE_LAYOUT_H
#define LOOM_VISION_IMAGE_LAYOUT_H

#include <stdint.h>

/* Whether the AVX2 loop runs: read once, at the pack's registration. */
void iio_layout_isa_init(void);
int iio_layout_avx2(void);

#endif
