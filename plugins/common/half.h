/* SPDX-License-Identifier: BSD-3-Clause */
/*
** half.h - scalar conversions between f32 and the 16-bit float formats,
** shared by every pack (linked in from the pack_common static library).
**
** Contract: pk_f32_to_f16 and pk_f32_to_bf16 round to nearest even, as
** torch's Tensor.half() / Tensor.bfloat16() do on CPU. NaN -> f16 keeps
** the sign and top payload bits (F16C); NaN -> bf16 is 0x7fc0.
*/
#ifndef LOOM_PACK_HALF_H
#define LOOM_PACK_HALF_H

#include <stdint.h>
#include <string.h>

uint16_t pk_f32_to_f16(float f);
float pk_f16_to_f32(uint16_t h);
uint16_t pk_f32_to_bf16(float f);

/* Inline: it is the load of every bf16 element in the packs' row loops. */
static inline float pk_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

#endif
