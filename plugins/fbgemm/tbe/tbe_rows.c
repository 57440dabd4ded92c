/*
** tbe_rows.c - see tbe_rows.h. Each weight type has one element decoder
** (scalar) and one 8-lane decoder (AVX2); a macro builds both row loops
** from them, so the loop structure exists once. Table rows may be
** unaligned (safetensors does not align data), so every load is unaligned.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define FBG_X86 1
#endif

#include "cpu.h"
#include "half.h"
#include "quantize.h"
#include "tbe_rows.h"

static float ld_f32(const uint8_t *p) { float f; memcpy(&f, p, 4); return f; }
static uint16_t ld_u16(const uint8_t *p) { uint16_t h; memcpy(&h, p, 2); return h; }

/* ---------------------------------------------------------------- scalar */

/* Element i of a row as f32 (float types) or as its integer code. */
#define DEC_FP32(row, i) ld_f32((row) + 4 * (i))
#define DEC_FP16(row, i) pk_f16_to_f32(ld_u16((row) + 2 * (i)))
#define DEC_BF16(row, i) pk_bf16_to_f32(ld_u16((row) + 2 * (i)))
#define DEC_FP8(row, i) fbg_hfp8_to_float((row)[i], p->fp8_ebits, p->fp8_bias)
#define DEC_INT8(q, i) (float)(q)[i]
#define DEC_INT4(q, i) (float)(((q)[(i) >> 1] >> (((i) & 1) * 4)) & 0xF)
#define DEC_INT2(q, i) (float)(((q)[(i) >> 2] >> (((i) & 3) * 2)) & 0x3)

#define SCALAR_FLOAT(NAME, DEC)                                                                       \
    static void NAME##_scalar(float *acc, const uint8_t *row, int64_t dim, float w,                  \
                              const fbg_row_params *p)                                                \
    {                                                                                                 \
        (void)p;                                                                                      \
        for (int64_t i = 0; i < dim; i++)                                                             \
            acc[i] = fmaf(w, DEC(row, i), acc[i]);                                                    \
    }

#define SCALAR_INT(NAME, DEC)                                                                         \
    static void NAME##_scalar(float *acc, const uint8_t *row, int64_t dim, float w,                  \
                              const fbg_row_params *p)                                                \
    {                                                                                                 \
        (void)p;                                                                                      \
        const float s = pk_f16_to_f32(ld_u16(row)) * w, b = pk_f16_to_f32(ld_u16(row + 2)) * w;       \
        const uint8_t *q = row + FBG_SCALE_BIAS_BYTES;                                                \
        for (int64_t i = 0; i < dim; i++)                                                             \
            acc[i] = fmaf(s, DEC(q, i), acc[i] + b);                                                  \
    }

SCALAR_FLOAT(fp32, DEC_FP32)
SCALAR_FLOAT(fp16, DEC_FP16)
SCALAR_FLOAT(bf16, DEC_BF16)
SCALAR_FLOAT(fp8, DEC_FP8)
SCALAR_INT(int8, DEC_INT8)
SCALAR_INT(int4, DEC_INT4)
SCALAR_INT(int2, DEC_INT2)

/* ------------------------------------------------------------------ AVX2 */

#ifdef FBG_X86
#define AVX2 __attribute__((target("avx2,fma,f16c")))

/* 8 lanes of a row starting at element i, as f32 or integer codes. */
#define V8_FP32(row, i) _mm256_loadu_ps((const float *)(const void *)((row) + 4 * (i)))
#define V8_FP16(row, i) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)((row) + 2 * (i))))
#define V8_BF16(row, i)                                                                              \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                                            \
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((row) + 2 * (i)))), 16))
#define V8_FP8(row, i) fp8x8((row) + (i), p)
#define V8_INT8(q, i) _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((q) + (i)))))
#define V8_INT4(q, i) nibbles8((q) + ((i) >> 1))
#define V8_INT2(q, i) crumbs8((q) + ((i) >> 2))

AVX2 static inline __m128i load4(const uint8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
}

/* fbg_hfp8_to_float on 8 bytes: mantissa and exponent moved into f32
** position, scaled by 2^(127-bias), sign or-ed back in. */
AVX2 static inline __m256 fp8x8(const uint8_t *b, const fbg_row_params *p)
{
    __m256i x = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)b));
    __m256i mag = _mm256_sll_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7F)),
                                   _mm_cvtsi32_si128(16 + p->fp8_ebits));
    __m256i sign = _mm256_slli_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x80)), 24);
    __m256 mult = _mm256_castsi256_ps(_mm256_set1_epi32((127 + (127 - p->fp8_bias)) << 23));
    __m256 v = _mm256_mul_ps(_mm256_castsi256_ps(mag), mult);
    return _mm256_or_ps(v, _mm256_castsi256_ps(sign));
}

/* 8 nibbles (4 bytes), low nibble first. */
AVX2 static inline __m256 nibbles8(const uint8_t *q)
{
    int32_t word;
    memcpy(&word, q, 4);
    __m256i x = _mm256_srlv_epi32(_mm256_set1_epi32(word), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
    return _mm256_cvtepi32_ps(_mm256_and_si256(x, _mm256_set1_epi32(0xF)));
}

/* 8 2-bit codes (2 bytes), lowest bits first. */
AVX2 static inline __m256 crumbs8(const uint8_t *q)
{
    uint16_t word;
    memcpy(&word, q, 2);
    __m256i x = _mm256_srlv_epi32(_mm256_set1_epi32(word), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
    return _mm256_cvtepi32_ps(_mm256_and_si256(x, _mm256_set1_epi32(0x3)));
}

#define AVX2_FLOAT(NAME, V8, DEC)                                                                    \
    AVX2 static void NAME##_avx2(float *acc, const uint8_t *row, int64_t dim, float w,               \
                                 const fbg_row_params *p)                                            \
    {                                                                                                \
        (void)p;                                                                                     \
        const __m256 wv = _mm256_set1_ps(w);                                                         \
        int64_t i = 0;                                                                               \
        for (; i + 16 <= dim; i += 16) {                                                             \
            __m256 a0 = _mm256_fmadd_ps(wv, V8(row, i), _mm256_loadu_ps(acc + i));                   \
            __m256 a1 = _mm256_fmadd_ps(wv, V8(row, i + 8), _mm256_loadu_ps(acc + i + 8));           \
            _mm256_storeu_ps(acc + i, a0);                                                           \
            _mm256_storeu_ps(acc + i + 8, a1);                                                       \
        }                                                                                            \
        for (; i + 8 <= dim; i += 8)                                                                 \
            _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(wv, V8(row, i), _mm256_loadu_ps(acc + i)));    \
        for (; i < dim; i++)                                                                         \
            acc[i] = fmaf(w, DEC(row, i), acc[i]);                                                   \
    }

#define AVX2_INT(NAME, V8, DEC)                                                                      \
    AVX2 static void NAME##_avx2(float *acc, const uint8_t *row, int64_t dim, float w,               \
                                 const fbg_row_params *p)                                            \
    {                                                                                                \
        (void)p;                                                                                     \
        const float s = _cvtsh_ss(ld_u16(row)) * w, b = _cvtsh_ss(ld_u16(row + 2)) * w;              \
        const __m256 sv = _mm256_set1_ps(s), bv = _mm256_set1_ps(b);                                 \
        const uint8_t *q = row + FBG_SCALE_BIAS_BYTES;                                               \
        int64_t i = 0;                                                                               \
        for (; i + 8 <= dim; i += 8)                                                                 \
            _mm256_storeu_ps(acc + i,                                                                \
                             _mm256_fmadd_ps(sv, V8(q, i), _mm256_add_ps(_mm256_loadu_ps(acc + i), bv))); \
        for (; i < dim; i++)                                                                         \
            acc[i] = fmaf(s, DEC(q, i), acc[i] + b);                                                 \
    }

AVX2_FLOAT(fp32, V8_FP32, DEC_FP32)
AVX2_FLOAT(fp16, V8_FP16, DEC_FP16)
AVX2_FLOAT(bf16, V8_BF16, DEC_BF16)
AVX2_FLOAT(fp8, V8_FP8, DEC_FP8)
AVX2_INT(int8, V8_INT8, DEC_INT8)
AVX2_INT(int4, V8_INT4, DEC_INT4)
AVX2_INT(int2, V8_INT2, DEC_INT2)
#endif

/* ---------------------------------------------------------------- table */

static const fbg_row_acc_fn scalar_fns[FBG_WT_COUNT] = {
    [FBG_WT_FP32] = fp32_scalar, [FBG_WT_FP16] = fp16_scalar, [FBG_WT_INT8] = int8_scalar,
    [FBG_WT_INT4] = int4_scalar, [FBG_WT_INT2] = int2_scalar, [FBG_WT_BF16] = bf16_scalar,
    [FBG_WT_FP8] = fp8_scalar,
};

#ifdef FBG_X86
static const fbg_row_acc_fn avx2_fns[FBG_WT_COUNT] = {
    [FBG_WT_FP32] = fp32_avx2, [FBG_WT_FP16] = fp16_avx2, [FBG_WT_INT8] = int8_avx2,
    [FBG_WT_INT4] = int4_avx2, [FBG_WT_INT2] = int2_avx2, [FBG_WT_BF16] = bf16_avx2,
    [FBG_WT_FP8] = fp8_avx2,
};
#endif

static const fbg_row_acc_fn *active = scalar_fns;

void fbg_rows_init(void)
{
    active = scalar_fns;
#ifdef FBG_X86
    if (pk_cpu_avx2(PK_CPU_FMA | PK_CPU_F16C))
        active = avx2_fns;
#else
#endif
}

fbg_row_acc_fn fbg_row_acc(fbg_wtype t) { return active[t]; }

const char *fbg_rows_isa(void)
{
#ifdef FBG_X86
    return active == avx2_fns ? "avx2" : "scalar";
#else
    return "scalar";
#endif
}
