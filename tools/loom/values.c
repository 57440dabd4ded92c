/* SPDX-License-Identifier: BSD-3-Clause */
/*
** values.c - read single elements of a host tensor as doubles, for the short
** value previews of `loom run` and `loom demo`.
**
** The half-precision and f8 decoders follow IEEE 754 binary16, bfloat16 (the
** high half of a binary32) and OCP e4m3fn (bias 7, no infinities, S.1111.111
** is NaN). Strided tensors are honoured; device tensors are copied first.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static double from_f16(uint16_t h)
{
    int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp((double)man, -24);
    else if (exp == 31)
        v = man != 0 ? NAN : INFINITY;
    else
        v = ldexp((double)(man | 0x400), exp - 25);
    return sign ? -v : v;
}

static double from_bf16(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static double from_f8e4m3(uint8_t b)
{
    int sign = (b >> 7) & 1, exp = (b >> 3) & 0xf, man = b & 0x7;
    double v;
    if (exp == 15 && man == 7)
        return NAN;
    v = exp == 0 ? ldexp((double)man, -9) : ldexp((double)(man | 0x8), exp - 10);
    return sign ? -v : v;
}

/* Byte address of row-major element i, following strides when present. */
static const char *element(const loom_tensor *t, int64_t i, size_t esize)
{
    int64_t off = 0;
    if (t->strides == NULL)
        return (const char *)loom_data(t) + (size_t)i * esize;
    for (int32_t d = t->ndim - 1; d >= 0; d--) {
        int64_t dim = t->shape[d] > 0 ? t->shape[d] : 1;
        off += (i % dim) * t->strides[d];
        i /= dim;
    }
    return (const char *)loom_data(t) + off * (int64_t)esize;
}

int cli_tensor_get(const loom_tensor *t, int64_t i, double *out)
{
    loom_dtype dt = loom_tensor_dtype_of(t);
    const char *p = element(t, i, loom_dtype_size(dt));
    union { float f; double d; uint16_t u16; uint32_t u32; int8_t i8; uint8_t u8; int16_t i16; int32_t i32; int64_t i64; } u;

    switch (dt) {
    case LOOM_DTYPE_F32:    memcpy(&u.f, p, 4); *out = u.f; return 0;
    case LOOM_DTYPE_F64:    memcpy(&u.d, p, 8); *out = u.d; return 0;
    case LOOM_DTYPE_F16:    memcpy(&u.u16, p, 2); *out = from_f16(u.u16); return 0;
    case LOOM_DTYPE_BF16:   memcpy(&u.u16, p, 2); *out = from_bf16(u.u16); return 0;
    case LOOM_DTYPE_F8E4M3: memcpy(&u.u8, p, 1); *out = from_f8e4m3(u.u8); return 0;
    case LOOM_DTYPE_I8:     memcpy(&u.i8, p, 1); *out = u.i8; return 0;
    case LOOM_DTYPE_U8:     memcpy(&u.u8, p, 1); *out = u.u8; return 0;
    case LOOM_DTYPE_BOOL:   memcpy(&u.u8, p, 1); *out = u.u8 != 0; return 0;
    case LOOM_DTYPE_I16:    memcpy(&u.i16, p, 2); *out = u.i16; return 0;
    case LOOM_DTYPE_U16:    memcpy(&u.u16, p, 2); *out = u.u16; return 0;
    case LOOM_DTYPE_U32:    memcpy(&u.u32, p, 4); *out = u.u32; return 0;
    case LOOM_DTYPE_I32:    memcpy(&u.i32, p, 4); *out = u.i32; return 0;
    case LOOM_DTYPE_I64:    memcpy(&u.i64, p, 8); *out = (double)u.i64; return 0;
    default:                return -1;
    }
}

int cli_print_values(const loom_tensor *t, int64_t max)
{
    loom_tensor *host = NULL;
    const loom_tensor *src = t;
    int64_t n = loom_numel(t);

    if (t->device.device_type != LOOM_DEVICE_CPU) {
        if (loom_tensor_copy_to(&host, t, NULL) != LOOM_OK)
            return cli_fail();
        src = host;
    }
    printf("[");
    for (int64_t i = 0; i < n && i < max; i++) {
        double v;
        if (cli_tensor_get(src, i, &v) != 0) {
            printf("(%s values not shown)", loom_dtype_name(loom_tensor_dtype_of(src)));
            break;
        }
        printf("%s%.7g", i > 0 ? ", " : "", v);
    }
    if (n > max)
        printf(", ... (%lld values)", (long long)n);
    printf("]");
    loom_tensor_free(host);
    return CLI_OK;
}
