/* SPDX-License-Identifier: BSD-3-Clause */
/*
** quantize.c - see quantize.h. Scalar on purpose: these run once per table
** row when tables are converted, and bit-exactness with fbgemm's reference
** arithmetic (float ops in a fixed order, lrintf under round-to-nearest-
** even) matters more than speed here. The lookup kernels dequantise on the
** fly in tbe_rows.c.
*/
#include <math.h>
#include <string.h>
#include <strings.h>

#include "half.h"
#include "quantize.h"

static uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static void put_f16(uint8_t *p, float v) { uint16_t h = pk_f32_to_f16(v); memcpy(p, &h, 2); }
static float get_f16(const uint8_t *p) { uint16_t h; memcpy(&h, p, 2); return pk_f16_to_f32(h); }

static const struct { const char *name; fbg_wtype t; int bits; } wtypes[] = {
    { "fp32", FBG_WT_FP32, 32 }, { "fp16", FBG_WT_FP16, 16 }, { "int8", FBG_WT_INT8, 8 },
    { "int4", FBG_WT_INT4, 4 },  { "int2", FBG_WT_INT2, 2 },  { "bf16", FBG_WT_BF16, 16 },
    { "fp8", FBG_WT_FP8, 8 },
};

int fbg_wtype_from_name(const char *s, int64_t len)
{
    for (size_t i = 0; i < sizeof wtypes / sizeof wtypes[0]; i++)
        if ((int64_t)strlen(wtypes[i].name) == len && strncasecmp(s, wtypes[i].name, (size_t)len) == 0)
            return (int)wtypes[i].t;
    return -1;
}

const char *fbg_wtype_name(fbg_wtype t)
{
    for (size_t i = 0; i < sizeof wtypes / sizeof wtypes[0]; i++)
        if (wtypes[i].t == t)
            return wtypes[i].name;
    return "?";
}

/* Bits per element of the integer types. */
static int nbits(fbg_wtype t) { return t == FBG_WT_INT4 ? 4 : t == FBG_WT_INT2 ? 2 : 8; }

int64_t fbg_format_row_bytes(const fbg_row_format *f)
{
    if (f->dim < 0 || f->dim > FBG_MAX_DIM)
        return -1;          /* no row of that many elements (and no overflow below) */
    if (f->layout == FBG_LAYOUT_FUSED) {
        if (f->wtype == FBG_WT_INT8)
            return f->dim + 8;
        if (f->wtype == FBG_WT_INT4 || f->wtype == FBG_WT_INT2) {
            int per = 8 / nbits(f->wtype);
            return (f->dim + per - 1) / per + 4;
        }
        return fbg_row_bytes_unpadded(f->wtype, f->dim);
    }
    return fbg_row_bytes_padded(f->wtype, f->dim, f->row_alignment);
}

/* ------------------------------------------------------------------ hfp8 */

float fbg_hfp8_max_pos(int ebits, int bias)
{
    return ldexpf(2.0f - ldexpf(1.0f, ebits - 7), (1 << ebits) - 2 - bias);
}

uint8_t fbg_float_to_hfp8(float x, int ebits, int bias, float max_pos)
{
    const int mbits = 7 - ebits;
    uint32_t v = bits_of(x);
    const uint32_t sign = v & 0x80000000u;
    v &= 0x7FFFFFFFu;
    v = bits_of(fminf(float_of(v), max_pos));
    const float smallest_normal = float_of((uint32_t)(127 - bias + 1) << 23);
    if (float_of(v) >= smallest_normal) {
        /* round to mbits of mantissa with an FP32 bouncer, then re-bias */
        float bouncer = float_of((v & 0xFF800000u) + ((uint32_t)(23 - mbits) << 23));
        v = bits_of((bouncer + float_of(v)) - bouncer);
        v = (uint32_t)(v - ((uint32_t)(127 - bias) << 23)) << (8 - ebits);
        v = (v | sign) >> 24;
    } else {
        /* fixed point with LSB 2^(1-bias-mbits): the sum's low byte is the code */
        float bouncer = float_of((uint32_t)(127 + (23 + (1 - bias - mbits))) << 23);
        v = bits_of(bouncer + float_of(v));
        v |= sign >> 24;
    }
    return (uint8_t)v;
}

float fbg_hfp8_to_float(uint8_t h, int ebits, int bias)
{
    uint32_t sign = (uint32_t)(h & 0x80u) << 24;
    uint32_t v = (uint32_t)(h & 0x7Fu) << (24 - (8 - ebits));
    float mult = float_of((uint32_t)(127 + (127 - bias)) << 23);
    return float_of(bits_of(float_of(v) * mult) | sign);
}

/* ------------------------------------------------------------- rowwise */

/* min and max as std::min_element / std::max_element find them: the first
** element starts, a later one replaces it only when strictly smaller
** (larger), so NaNs after the first element are skipped. */
static void row_min_max(const float *x, int64_t n, float *mn, float *mx)
{
    float lo = n > 0 ? x[0] : 0.0f, hi = lo;
    for (int64_t i = 1; i < n; i++) {
        if (x[i] < lo)
            lo = x[i];
        if (hi < x[i])
            hi = x[i];
    }
    *mn = lo;
    *mx = hi;
}

/* FloatOrHalfToFused8BitRowwiseQuantizedSBFloat: q[dim], f32 scale, bias. */
static void quant8(const float *x, int64_t dim, uint8_t *q, float *scale, float *bias)
{
    float mn, mx;
    row_min_max(x, dim, &mn, &mx);
    const float range = mx - mn;
    *scale = range / 255.0f;
    *bias = mn;
    const float inv = 255.0f / (range + 1e-8f);
    for (int64_t i = 0; i < dim; i++)
        q[i] = (uint8_t)lrintf((x[i] - mn) * inv);
}

/* FloatOrHalfToFusedNBitRowwiseQuantizedSBHalf: packed q, f16 scale, bias. */
static void quantn(const float *x, int64_t dim, int bits, uint8_t *q, float *scale_out, float *bias_out)
{
    const int per = 8 / bits, qmax = (1 << bits) - 1;
    float mn, mx;
    row_min_max(x, dim, &mn, &mx);
    mn = pk_f16_to_f32(pk_f32_to_f16(mn));
    const float range = mx - mn;
    float scale = pk_f16_to_f32(pk_f32_to_f16(range == 0 ? 1.0f : range / (float)qmax));
    if (scale == 0)
        scale = 1.0f;
    float inv = 1.0f / scale;
    if (isinf(inv)) {
        scale = 1.0f;
        inv = 1.0f;
    }
    *scale_out = scale;
    *bias_out = mn;
    memset(q, 0, (size_t)((dim + per - 1) / per));
    for (int64_t i = 0; i < dim; i++) {
        long v = lrintf((x[i] - mn) * inv);
        v = v < 0 ? 0 : v > qmax ? qmax : v;
        q[i / per] |= (uint8_t)(v << ((i % per) * bits));
    }
}

void fbg_quantize_row(const fbg_row_format *f, const float *x, uint8_t *out)
{
    const int64_t dim = f->dim, total = fbg_format_row_bytes(f);
    memset(out, 0, (size_t)total);
    switch (f->wtype) {
    case FBG_WT_FP32:
        memcpy(out, x, (size_t)dim * 4);
        return;
    case FBG_WT_FP16:
        for (int64_t i = 0; i < dim; i++)
            put_f16(out + 2 * i, x[i]);
        return;
    case FBG_WT_BF16:
        for (int64_t i = 0; i < dim; i++) {
            uint16_t h = pk_f32_to_bf16(x[i]);
            memcpy(out + 2 * i, &h, 2);
        }
        return;
    case FBG_WT_FP8: {
        const float max_pos = fbg_hfp8_max_pos(f->fp8_ebits, f->fp8_bias);
        for (int64_t i = 0; i < dim; i++)
            out[i] = fbg_float_to_hfp8(x[i], f->fp8_ebits, f->fp8_bias, max_pos);
        return;
    }
    case FBG_WT_INT8: {
        float scale, bias;
        if (f->layout == FBG_LAYOUT_FUSED) {
            quant8(x, dim, out, &scale, &bias);
            memcpy(out + dim, &scale, 4);
            memcpy(out + dim + 4, &bias, 4);
        } else {
            quant8(x, dim, out + FBG_SCALE_BIAS_BYTES, &scale, &bias);
            put_f16(out, scale);
            put_f16(out + 2, bias);
        }
        return;
    }
    case FBG_WT_INT4:
    case FBG_WT_INT2: {
        const int bits = nbits(f->wtype), per = 8 / bits;
        const int64_t packed = (dim + per - 1) / per;
        float scale, bias;
        uint8_t *q = f->layout == FBG_LAYOUT_FUSED ? out : out + FBG_SCALE_BIAS_BYTES;
        uint8_t *sb = f->layout == FBG_LAYOUT_FUSED ? out + packed : out;
        quantn(x, dim, bits, q, &scale, &bias);
        if (isnan(scale)) {
            /* fbgemm's scalar cpu_float2half_rn encodes every NaN as 0x7fff */
            const uint16_t nan16 = 0x7FFFu;
            memcpy(sb, &nan16, 2);
        } else {
            put_f16(sb, scale);
        }
        put_f16(sb + 2, bias);
        return;
    }
    default:
        return;
    }
}

void fbg_dequantize_row(const fbg_row_format *f, const uint8_t *row, float *y)
{
    const int64_t dim = f->dim;
    switch (f->wtype) {
    case FBG_WT_FP32:
        memcpy(y, row, (size_t)dim * 4);
        return;
    case FBG_WT_FP16:
        for (int64_t i = 0; i < dim; i++)
            y[i] = get_f16(row + 2 * i);
        return;
    case FBG_WT_BF16:
        for (int64_t i = 0; i < dim; i++) {
            uint16_t h;
            memcpy(&h, row + 2 * i, 2);
            y[i] = pk_bf16_to_f32(h);
        }
        return;
    case FBG_WT_FP8:
        for (int64_t i = 0; i < dim; i++)
            y[i] = fbg_hfp8_to_float(row[i], f->fp8_ebits, f->fp8_bias);
        return;
    case FBG_WT_INT8:
    case FBG_WT_INT4:
    case FBG_WT_INT2: {
        const int bits = nbits(f->wtype), per = 8 / bits, mask = (1 << bits) - 1;
        const int64_t packed = (dim + per - 1) / per;
        const uint8_t *q;
        float scale, bias;
        if (f->layout == FBG_LAYOUT_FUSED && f->wtype == FBG_WT_INT8) {
            q = row;
            memcpy(&scale, row + dim, 4);
            memcpy(&bias, row + dim + 4, 4);
        } else if (f->layout == FBG_LAYOUT_FUSED) {
            q = row;
            scale = get_f16(row + packed);
            bias = get_f16(row + packed + 2);
        } else {
            q = row + FBG_SCALE_BIAS_BYTES;
            scale = get_f16(row);
            bias = get_f16(row + 2);
        }
        /* fbgemm's dequantisers: fma(q, scale, bias) (Fused8BitRowwise-
        ** QuantizedToFloat rounds once; with an f16 scale the product is exact
        ** and a product-then-sum gives the same) */
        for (int64_t i = 0; i < dim; i++) {
            int v = (q[i / per] >> ((i % per) * bits)) & mask;
            y[i] = fmaf((float)v, scale, bias);
        }
        return;
    }
    default:
        return;
    }
}
