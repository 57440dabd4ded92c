/* SPDX-License-Identifier: BSD-3-Clause */
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

/* ------------------------------------------------------------- prefetch */

/* Per machine class. The row lookup is a latency-bound gather of rows;
** the numbers come from A/B runs in fbgemm's bench setting: Zipf(1.05)
** indices over 2 tables x 1M rows x D = 128 f32 (1 GB, far above the
** caches), B = 2048, L = 32, 1 and 2 threads, each build timed in its own
** processes in alternation (an in-process switch lets one variant's cache
** state leak into the next call's).
**  - Intel: T0. On Xeon (non-inclusive LLC since Skylake-SP) prefetchnta
**    fills L1 only and a line evicted from L1 is dropped, so the
**    Zipf-hot rows come from DRAM every time they are read again: T0 was
**    1.35x over NTA on a Sapphire Rapids VM (the toolkit issue's A/B).
**    T0 is also fbgemm's own choice (EmbeddingSpMDM prefetches with t0).
**    The prefetch window is at most 4 KB (8 rows at D = 128, the rows of
**    that A/B), against 32-48 KB of L1d: the rows fit until read.
**  - AMD: NTA. On Zen 3 (a 2-core EPYC 7003 VM) T0 was 0.93-0.98x of NTA
**    over 4 runs (noise +-3 %): NTA lines still fill L2 there and are
**    evicted first, so the many cold rows of a Zipf stream do not push
**    the hot ones out, while a hot row read again is kept.
**  - others: NTA, as before (not measured).
** Distance: a byte window, not a row count, since a row's time grows with
** its bytes: 4 KB ahead, 2..16 rows. D = 128 keeps its 8 rows; on the
** Zen 3 VM D = 512 (2 KB rows) at 2 rows was 1.04x over 8, D = 128 was
** flat from 4 to 16 rows, and D = 32 (128-byte rows) at 16 rows was flat
** to 1.1x over 8 and 0.7x at 32 (in-process runs, noisier). */
static const fbg_prefetch_policy policies[] = {
    { "x86-intel", FBG_PF_T0, 4096, 2, 16 },
    { "x86-amd", FBG_PF_NTA, 4096, 2, 16 },
    { "generic", FBG_PF_NTA, 4096, 2, 16 },
};
static const fbg_prefetch_policy *policy = &policies[2];

static const fbg_prefetch_policy *machine_policy(void)
{
#if defined(FBG_X86) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_is("intel"))
        return &policies[0];
    if (__builtin_cpu_is("amd"))
        return &policies[1];
#endif
    return &policies[2];
}

const fbg_prefetch_policy *fbg_prefetch_policy_get(void) { return policy; }

int32_t fbg_prefetch_rows(int64_t row_stride)
{
    const fbg_prefetch_policy *p = policy;
    int64_t rows = row_stride > 0 ? p->window_bytes / row_stride : p->max_rows;
    return (int32_t)(rows < p->min_rows ? p->min_rows : rows > p->max_rows ? p->max_rows : rows);
}

void fbg_rows_init(void)
{
    active = scalar_fns;
#ifdef FBG_X86
    if (pk_cpu_avx2(PK_CPU_FMA | PK_CPU_F16C))
        active = avx2_fns;
#else
#endif
    policy = machine_policy();
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
