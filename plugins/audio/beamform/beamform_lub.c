/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lub.c - the portable build of the lane-batched solves
** (beamform_lub.h): the same source as beamform_lub_avx2.c, compiled for
** the baseline ISA, where GCC's vector extensions become SSE2 pairs (or
** scalar code on other machines). Both builds do the same IEEE operations
** in the same order (C11 mode contracts no FMAs), so they agree bit for bit.
*/
#include <stdint.h>

/* the template's helpers pass 32-byte vectors by value; they are static and
** inlined, so the psABI note about AVX argument passing concerns no call */
#pragma GCC diagnostic ignored "-Wpsabi"
#define LUB_ATTR

#include "beamform_lub.h"

size_t bf_lub_ws_bytes(int64_t C)
{
    /* rtf_power's: three matrices, four vectors, the weights, the pivots,
    ** and one vector of alignment slack */
    return (size_t)(6 * C * C + 8 * C + 1) * BF_LUB_BYTES;
}

#define LUB_R float
#define LUB_I int32_t
#define LUB_SFX c64
#define LUB_ISA
#include "beamform_lub_tmpl.h"

#define LUB_R double
#define LUB_I int64_t
#define LUB_SFX c128
#define LUB_ISA
#include "beamform_lub_tmpl.h"
