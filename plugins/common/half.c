/* SPDX-License-Identifier: BSD-3-Clause */
/*
** half.c - see half.h.
*/
#include <math.h>
#include <string.h>

#include "half.h"

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* c10::detail::fp16_ieee_from_fp32_value: rounding done by the FPU itself
** (the scale trick), so it is round-to-nearest-even on every input. */
uint16_t pk_f32_to_f16(float f)
{
    const float scale_to_inf = 0x1.0p+112f, scale_to_zero = 0x1.0p-110f;
    float base = (fabsf(f) * scale_to_inf) * scale_to_zero;
    const uint32_t w = f32_bits(f), shl1_w = w + w, sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u)
        bias = 0x71000000u;
    base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = f32_bits(base);
    const uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
    /* NaN keeps its sign and top payload bits, as the F16C conversion that
    ** torch's vectorised cast uses does */
    const uint32_t nan = 0x7E00u | ((w >> 13) & 0x3FFu);
    return (uint16_t)((sign >> 16) | (shl1_w > 0xFF000000u ? nan : nonsign));
}

float pk_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1F)
        return f32_from_bits(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
        float v = ldexpf((float)man, -24);  /* subnormal: exact in float */
        return sign ? -v : v;
    }
    return f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t pk_f32_to_bf16(float f)
{
    if (isnan(f))
        return 0x7FC0u;
    uint32_t u = f32_bits(f);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
