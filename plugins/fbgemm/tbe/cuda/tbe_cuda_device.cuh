/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cuda_device.cuh - the device code of the fbgemm.tbe forward on CUDA
** (contract and numerics in tbe_cuda.h); tbe_cuda_kernels.cu launches it.
** It uses only plain CUDA C++ (no warp intrinsics, no library calls), so
** tests/fbgemm/tbe_cuda can also run it on the host through a small
** emulation of the runtime, without a GPU.
**
** Two launches on the call's stream:
**  1. repair_offsets: one block; the flags are reset, every bag's original
**     offsets are checked, and the repaired offsets (a prefix maximum,
**     clamped to [0, N]) are written to args.fixed_offsets.
**  2. forward: one warp per bag. Lane l of chunk c owns the 4 elements
**     starting at (c * 32 + l) * 4, loaded with one aligned load per row
**     (16, 8, 4, 4, 2 or 1 bytes by type); the warp walks the bag's indices
**     in order. NONE pooling writes one output row per index.
** The weight type is a template parameter of the row decoder; one generic
** bag loop serves every type.
*/
#ifndef LOOM_FBGEMM_TBE_CUDA_DEVICE_CUH
#define LOOM_FBGEMM_TBE_CUDA_DEVICE_CUH

#include <climits>

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "tbe_cuda.h"

namespace {

/* fbgemm's SparseType and PoolingMode codes (the values of tbe.h). */
enum { WT_FP32 = 0, WT_FP16 = 1, WT_INT8 = 2, WT_INT4 = 3, WT_INT2 = 4, WT_BF16 = 5, WT_FP8 = 6 };
enum { POOL_SUM = 0, POOL_MEAN = 1, POOL_NONE = 2 };

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kRepairThreads = 1024;
constexpr int kHeaderBytes = 4;     /* fp16 scale + fp16 bias of INT8/INT4/INT2 rows */

__device__ __forceinline__ int64_t load_index(const void *p, int is64, int64_t i)
{
    return is64 ? (int64_t)((const long long *)p)[i] : (int64_t)((const int *)p)[i];
}

__device__ __forceinline__ float half_bits_to_float(uint32_t h)
{
    return __half2float(__ushort_as_half((unsigned short)(h & 0xFFFFu)));
}

/* fbgemm's hfp8_to_float (tbe/quantize.c: fbg_hfp8_to_float). */
__device__ __forceinline__ float hfp8_to_float(uint32_t b, int ebits, int bias)
{
    const uint32_t sign = (b & 0x80u) << 24;
    const uint32_t mag = (b & 0x7Fu) << (16 + ebits);
    const float mult = __uint_as_float((uint32_t)(127 + (127 - bias)) << 23);
    return __uint_as_float(__float_as_uint(__fmul_rn(__uint_as_float(mag), mult)) | sign);
}

/* Row decoders: G elements from element e (a multiple of G) as f32 values
** (float types) or integer codes (INT types, header separate). */
template <int WT> struct Dec;

template <> struct Dec<WT_FP32> {
    static constexpr int G = 4;
    static constexpr bool kInt = false;
    __device__ static void load(const uint8_t *row, int e, float *v, int, int)
    {
        const float4 x = *reinterpret_cast<const float4 *>(row + 4 * e);
        v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
    }
};

template <> struct Dec<WT_FP16> {
    static constexpr int G = 4;
    static constexpr bool kInt = false;
    __device__ static void load(const uint8_t *row, int e, float *v, int, int)
    {
        const uint2 x = *reinterpret_cast<const uint2 *>(row + 2 * e);
        v[0] = half_bits_to_float(x.x); v[1] = half_bits_to_float(x.x >> 16);
        v[2] = half_bits_to_float(x.y); v[3] = half_bits_to_float(x.y >> 16);
    }
};

template <> struct Dec<WT_BF16> {
    static constexpr int G = 4;
    static constexpr bool kInt = false;
    __device__ static void load(const uint8_t *row, int e, float *v, int, int)
    {
        const uint2 x = *reinterpret_cast<const uint2 *>(row + 2 * e);
        v[0] = __uint_as_float(x.x << 16); v[1] = __uint_as_float(x.x & 0xFFFF0000u);
        v[2] = __uint_as_float(x.y << 16); v[3] = __uint_as_float(x.y & 0xFFFF0000u);
    }
};

template <> struct Dec<WT_FP8> {
    static constexpr int G = 4;
    static constexpr bool kInt = false;
    __device__ static void load(const uint8_t *row, int e, float *v, int ebits, int bias)
    {
        const uint32_t x = *reinterpret_cast<const uint32_t *>(row + e);
#pragma unroll
        for (int j = 0; j < 4; j++)
            v[j] = hfp8_to_float((x >> (8 * j)) & 0xFFu, ebits, bias);
    }
};

/* INT8/INT4/INT2: four codes of `BITS` bits, lowest bits first, in the
** 4 * BITS / 8 bytes (4, 2 or 1) at byte kHeaderBytes + e * BITS / 8, so
** every type keeps all 32 lanes busy on a 128-wide row. */
template <int BITS> struct DecInt {
    static constexpr int G = 4;
    static constexpr bool kInt = true;
    __device__ static void load(const uint8_t *row, int e, float *v, int, int)
    {
        const uint8_t *q = row + kHeaderBytes + e * BITS / 8;
        uint32_t x;
        if (BITS == 8)
            x = *reinterpret_cast<const uint32_t *>(q);
        else if (BITS == 4)
            x = *reinterpret_cast<const unsigned short *>(q);
        else
            x = *q;
#pragma unroll
        for (int j = 0; j < G; j++)
            v[j] = (float)((x >> (BITS * j)) & ((1u << BITS) - 1u));
    }
};
template <> struct Dec<WT_INT8> : DecInt<8> {};
template <> struct Dec<WT_INT4> : DecInt<4> {};
template <> struct Dec<WT_INT2> : DecInt<2> {};

/* pk_f32_to_f16 / pk_f32_to_bf16 of plugins/common/half.c: round to
** nearest even; NaN keeps its sign and top payload bits (f16) or becomes
** 0x7fc0 (bf16). */
__device__ __forceinline__ unsigned short to_f16(float f)
{
    const uint32_t w = __float_as_uint(f);
    if ((w & 0x7FFFFFFFu) > 0x7F800000u)
        return (unsigned short)(((w >> 16) & 0x8000u) | 0x7E00u | ((w >> 13) & 0x3FFu));
    return __half_as_ushort(__float2half_rn(f));
}

__device__ __forceinline__ unsigned short to_bf16(float f)
{
    const uint32_t u = __float_as_uint(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0u;
    return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

__device__ __forceinline__ void store(void *out, int kind, int64_t pos, float v)
{
    if (kind == 0)
        static_cast<float *>(out)[pos] = v;
    else if (kind == 1)
        static_cast<unsigned short *>(out)[pos] = to_f16(v);
    else
        static_cast<unsigned short *>(out)[pos] = to_bf16(v);
}

__device__ __forceinline__ void report_index(fbg_cuda_flags *flags, int64_t i)
{
    atomicOr(&flags->bits, (uint32_t)FBG_CUDA_BAD_INDEX);
    atomicMin(&flags->first_index, (unsigned long long)i);
}

/* The row of index position i, or NULL for a pruned row (-1). A bad index
** reads row 0 (reported once, by lane 0 of the first chunk). */
__device__ __forceinline__ const uint8_t *row_of(const fbg_tbe_cuda_args &a, const fbg_cuda_feature &ft, int64_t i,
                                                 bool report)
{
    int64_t idx = load_index(a.indices, a.index_is_i64, i);
    if (idx == -1)
        return nullptr;
    if (idx < 0 || idx >= ft.n_rows) {
        if (report)
            report_index(a.flags, i);
        idx = 0;
    }
    return ft.rows + idx * ft.stride;
}

/* acc += w * row, in the cpu kernel's operation order. */
template <int WT>
__device__ __forceinline__ void accumulate(float *acc, const uint8_t *row, int e, float w, const fbg_tbe_cuda_args &a)
{
    using D = Dec<WT>;
    float v[D::G];
    D::load(row, e, v, a.fp8_ebits, a.fp8_bias);
    if (D::kInt) {
        const uint32_t hdr = *reinterpret_cast<const uint32_t *>(row);
        const float s = __fmul_rn(half_bits_to_float(hdr), w);
        const float b = __fmul_rn(half_bits_to_float(hdr >> 16), w);
#pragma unroll
        for (int j = 0; j < D::G; j++)
            acc[j] = __fmaf_rn(s, v[j], __fadd_rn(acc[j], b));
    } else {
#pragma unroll
        for (int j = 0; j < D::G; j++)
            acc[j] = __fmaf_rn(w, v[j], acc[j]);
    }
}

template <int G>
__device__ __forceinline__ void store_group(const fbg_tbe_cuda_args &a, int64_t out_pos, int e, int dim,
                                            const float *acc)
{
#pragma unroll
    for (int j = 0; j < G; j++)
        if (e + j < dim)
            store(a.output, a.output_kind, out_pos + e + j, acc[j]);
}

/* One bag (or, for NONE, each index of it) for one weight type. */
template <int WT>
__device__ void run_bag(const fbg_tbe_cuda_args &a, const fbg_cuda_feature &ft, int64_t start, int64_t end,
                        int64_t out_pos, int lane)
{
    constexpr int G = Dec<WT>::G;
    const int dim = ft.dim;
    const int chunks = (dim + kWarp * G - 1) / (kWarp * G);
    for (int c = 0; c < chunks; c++) {
        const int e = (c * kWarp + lane) * G;
        const bool active = e < dim;
        const bool report = c == 0 && lane == 0;
        if (a.pooling == POOL_NONE) {
            for (int64_t i = start; i < end; i++) {
                float acc[G];
#pragma unroll
                for (int j = 0; j < G; j++)
                    acc[j] = 0.0f;
                const uint8_t *row = row_of(a, ft, i, report);
                /* per-sample weights do not apply without pooling (IntNBit's CPU kernel) */
                if (active && row != nullptr)
                    accumulate<WT>(acc, row, e, 1.0f, a);
                if (active)
                    store_group<G>(a, i * (int64_t)dim, e, dim, acc);
            }
            continue;
        }
        float acc[G];
#pragma unroll
        for (int j = 0; j < G; j++)
            acc[j] = 0.0f;
        for (int64_t i = start; i < end; i++) {
            const uint8_t *row = row_of(a, ft, i, report);
            if (active && row != nullptr)
                accumulate<WT>(acc, row, e, a.per_sample_weights ? a.per_sample_weights[i] : 1.0f, a);
        }
        if (a.pooling == POOL_MEAN && end > start) {    /* also with per-sample weights */
            const float scale = __fdiv_rn(1.0f, (float)(end - start));
#pragma unroll
            for (int j = 0; j < G; j++)
                acc[j] = __fmul_rn(acc[j], scale);
        }
        if (active)
            store_group<G>(a, out_pos, e, dim, acc);
    }
}

/* Largest i in [0, n) with v[i] <= x (v ascending, v[0] <= x). */
__device__ __forceinline__ int64_t last_le(const int64_t *v, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        if (v[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

__global__ void forward_kernel(fbg_tbe_cuda_args a)
{
    const int lane = threadIdx.x % kWarp;
    const int64_t k = (int64_t)blockIdx.x * kWarpsPerBlock + threadIdx.x / kWarp;
    if (k >= a.n_bags)
        return;
    const int64_t start = a.fixed_offsets[k], end = a.fixed_offsets[k + 1];
    int32_t f;
    int64_t out_pos;
    if (!a.vbe) {
        f = (int32_t)(k / a.B);
        out_pos = (k - (int64_t)f * a.B) * a.total_D + a.features[f].d_offset;
    } else {
        f = (int32_t)last_le(a.vbe_B_offsets, a.n_features, k);
        const int64_t R = a.vbe_ranks, j = k - a.vbe_B_offsets[f];
        const int64_t *br = a.vbe_B_offsets_rank + (int64_t)f * (R + 1);
        const int64_t r = last_le(br, R, j);
        out_pos = a.vbe_output_offsets[r * a.n_features + f] + (j - br[r]) * a.features[f].dim;
    }
    const fbg_cuda_feature ft = a.features[f];
    switch (ft.wtype) {
    case WT_FP32: run_bag<WT_FP32>(a, ft, start, end, out_pos, lane); break;
    case WT_FP16: run_bag<WT_FP16>(a, ft, start, end, out_pos, lane); break;
    case WT_BF16: run_bag<WT_BF16>(a, ft, start, end, out_pos, lane); break;
    case WT_FP8: run_bag<WT_FP8>(a, ft, start, end, out_pos, lane); break;
    case WT_INT8: run_bag<WT_INT8>(a, ft, start, end, out_pos, lane); break;
    case WT_INT4: run_bag<WT_INT4>(a, ft, start, end, out_pos, lane); break;
    case WT_INT2: run_bag<WT_INT2>(a, ft, start, end, out_pos, lane); break;
    default: break;
    }
}

/* The value whose running maximum gives the repaired offsets. */
__device__ __forceinline__ int64_t repair_term(const fbg_tbe_cuda_args &a, int64_t k)
{
    const int64_t N = a.n_indices;
    if (k == a.n_bags)
        return N;
    const int64_t o = load_index(a.offsets, a.index_is_i64, k);
    if (k == 0)
        return o < 0 ? 0 : o > N ? N : o;
    return o;
}

/* One block of up to kRepairThreads threads (any count works). */
__global__ void repair_offsets_kernel(fbg_tbe_cuda_args a)
{
    __shared__ long long scan[kRepairThreads];
    const int t = threadIdx.x, nt = blockDim.x;
    const int64_t n = a.n_bags + 1, N = a.n_indices;
    if (t == 0) {
        a.flags->bits = 0;
        a.flags->first_bag = ~0ull;
        a.flags->first_index = ~0ull;
    }
    __syncthreads();
    if (t == 0 && load_index(a.offsets, a.index_is_i64, a.n_bags) != N)
        atomicOr(&a.flags->bits, (uint32_t)FBG_CUDA_BAD_LAST_OFFSET);

    const int64_t per = (n + nt - 1) / nt;
    const int64_t lo = (int64_t)t * per, hi = lo + per < n ? lo + per : n;
    long long m = LLONG_MIN;
    for (int64_t k = lo; k < hi; k++) {
        const int64_t v = repair_term(a, k);
        m = v > m ? v : m;
        if (k < a.n_bags) {
            /* the bag as fbgemm checks it, once the last offset is N */
            const int64_t s = load_index(a.offsets, a.index_is_i64, k);
            const int64_t e = k + 1 == a.n_bags ? N : load_index(a.offsets, a.index_is_i64, k + 1);
            if (s < 0 || s > e || e > N) {
                atomicOr(&a.flags->bits, (uint32_t)FBG_CUDA_BAD_BAG);
                atomicMin(&a.flags->first_bag, (unsigned long long)k);
            }
        }
    }
    /* inclusive scan (max) of the per-thread maxima */
    scan[t] = m;
    __syncthreads();
    for (int d = 1; d < nt; d *= 2) {
        const long long other = t >= d ? scan[t - d] : LLONG_MIN;
        __syncthreads();
        if (other > scan[t])
            scan[t] = other;
        __syncthreads();
    }
    long long run = t > 0 ? scan[t - 1] : LLONG_MIN;
    for (int64_t k = lo; k < hi; k++) {
        const int64_t v = repair_term(a, k);
        run = v > run ? v : run;
        a.fixed_offsets[k] = run < N ? run : N;
    }
}

} // namespace

#endif /* LOOM_FBGEMM_TBE_CUDA_DEVICE_CUH */
