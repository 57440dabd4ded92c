/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deinterleave.h - 3-channel 8-bit interleaved pixels into planes, the
** AVX2 loop (deinterleave_avx2.c); call it only where the CPU has AVX2
** (pk_cpu_avx2, cpu.h).
*/
#ifndef LOOM_PK_DEINTERLEAVE_H
#define LOOM_PK_DEINTERLEAVE_H

#include <stdint.h>

/* Split the first pixels of n interleaved RGB pixels (src: 3n bytes) into
** r, g, b; returns how many it did (a multiple of 32), the caller does the
** rest. */
int64_t pk_deinterleave3_u8_avx2(const uint8_t *src, uint8_t *r, uint8_t *g, uint8_t *b, int64_t n);

#endif
