/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lub_avx2.c - the AVX2 build of the lane-batched solves
** (beamform_lub.h): beamform_lub_tmpl.h compiled for AVX2, one ymm
** register per vector (8 complex64 or 4 complex128 bins). Called only
** when bf_have_avx2() says the CPU has it.
*/
#include <stdint.h>

#include "beamform_lub.h"

/* a per-function target (GCC and clang), not a file-wide pragma, which
** clang ignores; the vectors are passed between inlined static helpers
** only, so the psABI note about AVX argument passing concerns no call */
#define LUB_ATTR __attribute__((target("avx2,fma")))
#pragma GCC diagnostic ignored "-Wpsabi"

#define LUB_R float
#define LUB_I int32_t
#define LUB_SFX c64
#define LUB_ISA _avx2
#include "beamform_lub_tmpl.h"

#define LUB_R double
#define LUB_I int64_t
#define LUB_SFX c128
#define LUB_ISA _avx2
#include "beamform_lub_tmpl.h"
