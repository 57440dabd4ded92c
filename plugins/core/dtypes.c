/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dtypes.c - one table row per loom dtype: load an element exactly into a
** core_value, store a core_value with torch's Tensor.to() conversion rules.
**
** Rules (torch CPU, c10 scalar types):
**  - f16, bf16 and f8e4m3 are produced from a float: a double or an integer
**    is first converted to float (as c10::Half(float) etc. do), then rounded
**    to nearest even. NaN -> f16 keeps sign and top payload bits (F16C);
**    NaN -> bf16 is 0xffff from f32/f64 sources (torch's vectorised
**    conversion) and 0x7fc0 from the others (c10's scalar one), so the
**    value carries the dtype it was loaded from (core_value.from).
**  - f8e4m3 (float8_e4m3fn) has no infinity: torch's Tensor.to() saturates
**    finite overflow and +-inf to +-448; NaN stays NaN (0x7f | sign).
**  - integers are stored modulo 2^bits; floats are truncated toward zero.
**    Out-of-range floats and NaN are undefined in C++ (torch): here they
**    follow x86 (INT64_MIN, then modulo 2^bits).
**  - bool is x != 0 (NaN is true; complex: either part nonzero).
**  - complex -> real keeps the real part.
** Loads are exact: every dtype fits a double or an int64.
*/
#include <math.h>
#include <string.h>

#include "core_pack.h"
#include "half.h"

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* c10::detail::fp8e4m3fn_from_fp32_value's rounding, with the saturation
** torch's Tensor.to() applies: finite overflow and +-inf give +-448, only
** NaN gives NaN (0x7f with the sign). */
uint8_t core_f32_to_f8e4m3(float f)
{
    const uint32_t fp8_max = UINT32_C(1087) << 20;          /* 480.0f: rounds past 448 */
    const uint32_t denorm_mask = UINT32_C(141) << 23;
    uint32_t f_bits = f32_bits(f);
    const uint32_t sign = f_bits & 0x80000000u;
    uint8_t result;
    f_bits ^= sign;
    if (isnan(f)) {
        result = 0x7F;
    } else if (f_bits >= fp8_max) {
        result = 0x7E;                                      /* saturate, also inf */
    } else if (f_bits < (UINT32_C(121) << 23)) {
        /* subnormal range: let the FPU round by adding a magic number */
        f_bits = f32_bits(f32_from_bits(f_bits) + f32_from_bits(denorm_mask));
        result = (uint8_t)(f_bits - denorm_mask);
    } else {
        const uint32_t mant_odd = (f_bits >> 20) & 1u;
        f_bits += ((uint32_t)(7 - 127) << 23) + 0x7FFFFu;
        f_bits += mant_odd;
        result = (uint8_t)(f_bits >> 20);
        if (result == 0x7F)                                 /* (464, 480) rounds up past 448 */
            result = 0x7E;
    }
    return (uint8_t)(result | (sign >> 24));
}

float core_f8e4m3_to_f32(uint8_t v)
{
    int neg = v & 0x80, exp = (v >> 3) & 0xF, man = v & 7;
    float r;
    if (exp == 0xF && man == 7)
        return f32_from_bits((neg ? 0x80000000u : 0u) | 0x7FF00000u);   /* NaN, payload as c10 */
    else if (exp == 0)
        r = ldexpf((float)man, -9);
    else
        r = ldexpf((float)(8 + man), exp - 10);
    return neg ? -r : r;
}

/* ------------------------------------------------------------- values */

static core_value vint(int64_t i) { return (core_value){ .kind = CORE_KIND_INT, .i = i }; }
static core_value vflt(double d) { return (core_value){ .kind = CORE_KIND_FLOAT, .re = d }; }
static core_value vcpx(double re, double im) { return (core_value){ .kind = CORE_KIND_COMPLEX, .re = re, .im = im }; }

/* The value as torch's float conversion sees it (the base of every
** narrow float store). */
static float as_float(core_value v) { return v.kind == CORE_KIND_INT ? (float)v.i : (float)v.re; }
static double as_double(core_value v) { return v.kind == CORE_KIND_INT ? (double)v.i : v.re; }

/* Truncation toward zero; NaN and out-of-range give INT64_MIN like x86. */
static int64_t as_int(core_value v)
{
    if (v.kind == CORE_KIND_INT)
        return v.i;
    double t = trunc(v.re);
    if (!(t >= -9223372036854775808.0 && t < 9223372036854775808.0))
        return INT64_MIN;
    return (int64_t)t;
}

static int as_bool(core_value v)
{
    if (v.kind == CORE_KIND_INT)
        return v.i != 0;
    return v.re != 0 || isnan(v.re) || (v.kind == CORE_KIND_COMPLEX && (v.im != 0 || isnan(v.im)));
}

#define LOADER(NAME, T, MAKE)                                            \
    static core_value load_##NAME(const void *p)                         \
    {                                                                    \
        T x;                                                             \
        memcpy(&x, p, sizeof x);                                         \
        return MAKE;                                                     \
    }

LOADER(f32, float, vflt(x))
LOADER(f64, double, vflt(x))
LOADER(f16, uint16_t, vflt(pk_f16_to_f32(x)))
LOADER(bf16, uint16_t, vflt(pk_bf16_to_f32(x)))
LOADER(f8, uint8_t, vflt(core_f8e4m3_to_f32(x)))
LOADER(i8, int8_t, vint(x))
LOADER(u8, uint8_t, vint(x))
LOADER(i16, int16_t, vint(x))
LOADER(i32, int32_t, vint(x))
LOADER(i64, int64_t, vint(x))
LOADER(u16, uint16_t, vint(x))
LOADER(u32, uint32_t, vint(x))
LOADER(bool, uint8_t, vint(x != 0))

static core_value load_c64(const void *p)
{
    float x[2];
    memcpy(x, p, sizeof x);
    return vcpx(x[0], x[1]);
}

static core_value load_c128(const void *p)
{
    double x[2];
    memcpy(x, p, sizeof x);
    return vcpx(x[0], x[1]);
}

#define STORER(NAME, T, EXPR)                                            \
    static void store_##NAME(void *p, core_value v)                      \
    {                                                                    \
        T x = (EXPR);                                                    \
        memcpy(p, &x, sizeof x);                                         \
    }

/* integers wrap: convert through uint64 so the narrowing is modular */
STORER(f32, float, as_float(v))
STORER(f64, double, as_double(v))
STORER(f16, uint16_t, pk_f32_to_f16(as_float(v)))
STORER(bf16, uint16_t, isnan(as_float(v)) && (v.from == LOOM_DTYPE_F32 || v.from == LOOM_DTYPE_F64)
                          ? 0xFFFFu : pk_f32_to_bf16(as_float(v)))
STORER(f8, uint8_t, core_f32_to_f8e4m3(as_float(v)))
STORER(i8, int8_t, (int8_t)(uint8_t)(uint64_t)as_int(v))
STORER(u8, uint8_t, (uint8_t)(uint64_t)as_int(v))
STORER(i16, int16_t, (int16_t)(uint16_t)(uint64_t)as_int(v))
STORER(i32, int32_t, (int32_t)(uint32_t)(uint64_t)as_int(v))
STORER(i64, int64_t, as_int(v))
STORER(u16, uint16_t, (uint16_t)(uint64_t)as_int(v))
STORER(u32, uint32_t, (uint32_t)(uint64_t)as_int(v))
STORER(bool, uint8_t, (uint8_t)as_bool(v))

static void store_c64(void *p, core_value v)
{
    float x[2] = { as_float(v), v.kind == CORE_KIND_COMPLEX ? (float)v.im : 0.0f };
    memcpy(p, x, sizeof x);
}

static void store_c128(void *p, core_value v)
{
    double x[2] = { as_double(v), v.kind == CORE_KIND_COMPLEX ? v.im : 0.0 };
    memcpy(p, x, sizeof x);
}

#define ROW(D, NAME, T, KIND, WIDE) \
    [D] = { NULL, sizeof(T), KIND, WIDE, load_##NAME, store_##NAME }

typedef struct { float re, im; } c64_t;
typedef struct { double re, im; } c128_t;

/* names are loom_dtype_name()'s, filled by core_dtypes_init */
static core_dtype_row rows[LOOM_DTYPE_COUNT] = {
    ROW(LOOM_DTYPE_F32, f32, float, CORE_KIND_FLOAT, 0),
    ROW(LOOM_DTYPE_F64, f64, double, CORE_KIND_FLOAT, 1),
    ROW(LOOM_DTYPE_F16, f16, uint16_t, CORE_KIND_FLOAT, 0),
    ROW(LOOM_DTYPE_BF16, bf16, uint16_t, CORE_KIND_FLOAT, 0),
    ROW(LOOM_DTYPE_F8E4M3, f8, uint8_t, CORE_KIND_FLOAT, 0),
    ROW(LOOM_DTYPE_I8, i8, int8_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_U8, u8, uint8_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_I16, i16, int16_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_I32, i32, int32_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_I64, i64, int64_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_BOOL, bool, uint8_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_C64, c64, c64_t, CORE_KIND_COMPLEX, 0),
    ROW(LOOM_DTYPE_C128, c128, c128_t, CORE_KIND_COMPLEX, 1),
    ROW(LOOM_DTYPE_U16, u16, uint16_t, CORE_KIND_INT, 1),
    ROW(LOOM_DTYPE_U32, u32, uint32_t, CORE_KIND_INT, 1),
};

const core_dtype_row *core_dtype(loom_dtype dtype)
{
    if ((int)dtype <= (int)LOOM_DTYPE_INVALID || (int)dtype >= (int)LOOM_DTYPE_COUNT)
        return NULL;
    if (rows[dtype].load == NULL)
        return NULL;
    return &rows[dtype];
}

void core_dtypes_init(void)
{
    for (int d = LOOM_DTYPE_INVALID + 1; d < LOOM_DTYPE_COUNT; d++)
        rows[d].name = pk_host->dtype_name((loom_dtype)d);
}
