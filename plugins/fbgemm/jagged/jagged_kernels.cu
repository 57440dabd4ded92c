/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_kernels.cu - device code of the jagged ops (see jagged_kernels.h).
**
** Layout of the work: one thread block per jagged row, dense row (b, l),
** bmm output row or selected index, its threads striding over the row's
** D (or N) elements; blocks stride over the rows when there are more than
** the grid holds. The semantics are those of the cpu kernels: copies are
** bit-exact; element-wise ops compute in float (double for f64) and round
** once; the jagged bmm kernels round each 16-bit product before the f32
** sum over k, as fbgemm's CPU kernels do; permute102 keeps f32 products.
*/
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "jagged_kernels.h"

namespace {

const int kThreads = 128;
const int64_t kMaxBlocks = 1 << 20;

template <typename T> struct num;
template <> struct num<float> {
    typedef float acc;
    __device__ static float load(float v) { return v; }
    __device__ static float store(float v) { return v; }
    __device__ static float round_product(float v) { return v; }
};
template <> struct num<double> {
    typedef double acc;
    __device__ static double load(double v) { return v; }
    __device__ static double store(double v) { return v; }
    __device__ static double round_product(double v) { return v; }
};
template <> struct num<__half> {
    typedef float acc;
    __device__ static float load(__half v) { return __half2float(v); }
    __device__ static __half store(float v) { return __float2half_rn(v); }
    __device__ static float round_product(float v) { return __half2float(__float2half_rn(v)); }
};
template <> struct num<__nv_bfloat16> {
    typedef float acc;
    __device__ static float load(__nv_bfloat16 v) { return __bfloat162float(v); }
    __device__ static __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
    __device__ static float round_product(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }
};

/* The batch row owning jagged row r, or -1 when none does. */
__device__ int64_t batch_of(const int64_t *off, int64_t B, int64_t r)
{
    if (B <= 0 || r < off[0] || r >= off[B])
        return -1;
    int64_t lo = 0, hi = B;           /* off[lo] <= r < off[hi] */
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (off[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

__device__ int64_t length_of(const int64_t *off, int64_t b, int64_t total)
{
    int64_t s = off[b], e = off[b + 1];
    if (s < 0)
        s = 0;
    if (e > total)
        e = total;
    return e > s ? e - s : 0;
}

/* The values rows [*first, *first + *len) under outer position q of batch
** row b, walking the levels of offsets; 0 when a level above is shorter. */
__device__ int leaf_rows(const jg_cuda_args &a, int64_t b, int64_t q, int64_t *first, int64_t *len)
{
    int64_t idx = b, stride = a.outer;
    for (int k = 0; k + 1 < a.levels; k++) {
        stride /= a.max_Ls[k];
        int64_t i = q / stride % a.max_Ls[k];
        if (i >= a.offs[k][idx + 1] - a.offs[k][idx])
            return 0;
        idx = a.offs[k][idx] + i;
    }
    const int64_t *last = a.offs[a.levels - 1];
    *first = last[idx];
    *len = last[idx + 1] - last[idx];
    if (*first < 0 || *len < 0 || *first + *len > a.total_L)
        return 0;
    return 1;
}

unsigned grid_for(int64_t blocks)
{
    return (unsigned)(blocks < 1 ? 1 : blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

/* ------------------------------------------------------------ copies */

/* one block per dense row (b, q, l) of [B, outer, max_L] */
template <typename U>
__global__ void to_padded_kernel(jg_cuda_args a)
{
    const U *v = static_cast<const U *>(a.x);
    U *out = static_cast<U *>(a.out);
    U pad = (U)a.pad_bits;
    for (int64_t blk = blockIdx.x; blk < a.B * a.outer * a.max_L; blk += gridDim.x) {
        int64_t l = blk % a.max_L, q = blk / a.max_L % a.outer, b = blk / (a.max_L * a.outer);
        int64_t first = 0, len = 0;
        int inside = leaf_rows(a, b, q, &first, &len) && l < len;
        const U *src = v + (first + l) * a.D;
        U *dst = out + blk * a.D;
        for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x)
            dst[d] = inside ? src[d] : pad;
    }
}

template <typename U>
__global__ void to_jagged_kernel(jg_cuda_args a)
{
    const U *dense = static_cast<const U *>(a.x);
    U *out = static_cast<U *>(a.out);
    for (int64_t blk = blockIdx.x; blk < a.B * a.outer * a.max_L; blk += gridDim.x) {
        int64_t l = blk % a.max_L, q = blk / a.max_L % a.outer, b = blk / (a.max_L * a.outer);
        int64_t first = 0, len = 0;
        if (!leaf_rows(a, b, q, &first, &len) || l >= len)
            continue;
        U *dst = out + (first + l) * a.D;
        for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x)
            dst[d] = dense[blk * a.D + d];
    }
}

template <typename U>
__global__ void index_select_kernel(jg_cuda_args a)
{
    const U *in = static_cast<const U *>(a.x);
    U *out = static_cast<U *>(a.out);
    for (int64_t i = blockIdx.x; i < a.B; i += gridDim.x) {
        int64_t r = a.indices32 ? (int64_t) static_cast<const int32_t *>(a.indices)[i]
                                : static_cast<const int64_t *>(a.indices)[i];
        if (r < 0 || r >= a.total_L)
            continue;
        for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x)
            out[i * a.D + d] = in[r * a.D + d];
    }
}

#define LAUNCHER(name, kernel)                                                   \
    template <typename T> struct name {                                          \
        static void launch(const jg_cuda_args &a, unsigned grid, cudaStream_t s) \
        {                                                                        \
            kernel<T><<<grid, kThreads, 0, s>>>(a);                              \
        }                                                                        \
    };
LAUNCHER(to_padded_l, to_padded_kernel)
LAUNCHER(to_jagged_l, to_jagged_kernel)
LAUNCHER(index_select_l, index_select_kernel)

template <template <typename> class K>
int launch_copy(const jg_cuda_args *a, int64_t blocks, cudaStream_t s)
{
    switch (a->es) {
    case 2: K<unsigned short>::launch(*a, grid_for(blocks), s); break;
    case 4: K<unsigned int>::launch(*a, grid_for(blocks), s); break;
    case 8: K<unsigned long long>::launch(*a, grid_for(blocks), s); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

/* ------------------------------------------------------- element-wise */

template <typename A>
__device__ A apply(int op, A x, A y)
{
    return op == 0 ? x + y : x * y;
}

template <typename T>
__global__ void jagged_out_kernel(jg_cuda_args a)
{
    typedef typename num<T>::acc A;
    const T *x = static_cast<const T *>(a.x), *y = static_cast<const T *>(a.y);
    T *out = static_cast<T *>(a.out);
    for (int64_t r = blockIdx.x; r < a.total_L; r += gridDim.x) {
        int64_t b = batch_of(a.off, a.B, r);
        int64_t l = b < 0 ? -1 : r - a.off[b];
        T *o = out + r * a.D;
        const T *xr = x + r * a.D;
        for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x) {
            if (b < 0 || (l >= a.max_L && a.zero_past))
                o[d] = num<T>::store((A)0);
            else if (l >= a.max_L)
                o[d] = num<T>::store(apply<A>(a.op, num<T>::load(xr[d]), (A)0));
            else
                o[d] = num<T>::store(apply<A>(a.op, num<T>::load(xr[d]), num<T>::load(y[(b * a.max_L + l) * a.D + d])));
        }
    }
}

template <typename T>
__global__ void dense_out_kernel(jg_cuda_args a)
{
    typedef typename num<T>::acc A;
    const T *x = static_cast<const T *>(a.x), *x2 = static_cast<const T *>(a.x2), *y = static_cast<const T *>(a.y);
    T *out = static_cast<T *>(a.out);
    for (int64_t blk = blockIdx.x; blk < a.B * a.max_L; blk += gridDim.x) {
        int64_t b = blk / a.max_L, l = blk % a.max_L;
        int inside = l < length_of(a.off, b, a.total_L);
        const T *xr = x + (a.off[b] + l) * a.D;
        for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x) {
            A xv = inside ? num<T>::load(xr[d]) : (A)0;
            if (y != NULL)
                out[blk * a.D + d] = num<T>::store(apply<A>(a.op, xv, num<T>::load(y[blk * a.D + d])));
            else
                out[blk * a.D + d] = inside ? num<T>::store(apply<A>(a.op, xv, num<T>::load(x2[(a.off[b] + l) * a.D + d])))
                                            : num<T>::store((A)0);
        }
    }
}

/* ---------------------------------------------------------------- bmm */

template <typename T>
__global__ void dense_bmm_kernel(jg_cuda_args a)
{
    typedef typename num<T>::acc A;
    const T *x = static_cast<const T *>(a.x), *y = static_cast<const T *>(a.y);
    T *out = static_cast<T *>(a.out);
    for (int64_t r = blockIdx.x; r < a.total_L; r += gridDim.x) {
        int64_t b = batch_of(a.off, a.B, r);
        int use = b >= 0 && r - a.off[b] < a.max_L;
        for (int64_t n = threadIdx.x; n < a.N; n += blockDim.x) {
            A acc = 0;
            if (use)
                for (int64_t k = 0; k < a.K; k++)
                    acc += num<T>::round_product(num<T>::load(x[r * a.K + k]) *
                                                 num<T>::load(y[(b * a.K + k) * a.N + n]));
            out[r * a.N + n] = num<T>::store(acc);
        }
    }
}

template <typename T>
__global__ void jagged_bmm_kernel(jg_cuda_args a)
{
    typedef typename num<T>::acc A;
    const T *x = static_cast<const T *>(a.x), *y = static_cast<const T *>(a.y);
    T *out = static_cast<T *>(a.out);
    for (int64_t blk = blockIdx.x; blk < a.B * a.M; blk += gridDim.x) {
        int64_t b = blk / a.M, m = blk % a.M, o = a.off[b];
        int64_t kept = length_of(a.off, b, a.total_L);
        if (kept > a.max_L)
            kept = a.max_L;
        for (int64_t n = threadIdx.x; n < a.N; n += blockDim.x) {
            A acc = 0;
            for (int64_t l = 0; l < kept; l++)
                acc += num<T>::round_product(num<T>::load(x[(o + l) * a.M + m]) * num<T>::load(y[(o + l) * a.N + n]));
            out[blk * a.N + n] = num<T>::store(acc);
        }
    }
}

/* out[i, j, :] = bias[j, :] + A[i, j, :] @ B[j]; a.M = m, a.B = b */
template <typename T>
__global__ void permute102_kernel(jg_cuda_args a)
{
    typedef typename num<T>::acc A;
    const T *x = static_cast<const T *>(a.x), *y = static_cast<const T *>(a.y);
    const T *bias = static_cast<const T *>(a.bias);
    T *out = static_cast<T *>(a.out);
    for (int64_t blk = blockIdx.x; blk < a.M * a.B; blk += gridDim.x) {
        int64_t j = blk % a.B;
        for (int64_t n = threadIdx.x; n < a.N; n += blockDim.x) {
            A acc = num<T>::load(bias[j * a.N + n]);
            for (int64_t k = 0; k < a.K; k++)
                acc += num<T>::load(x[blk * a.K + k]) * num<T>::load(y[(j * a.K + k) * a.N + n]);
            out[blk * a.N + n] = num<T>::store(acc);
        }
    }
}

template <template <typename> class K>
int launch_float(const jg_cuda_args *a, int64_t blocks, cudaStream_t s)
{
    switch (a->dtype) {
    case 1: K<float>::launch(*a, grid_for(blocks), s); break;
    case 2: K<double>::launch(*a, grid_for(blocks), s); break;
    case 3: K<__half>::launch(*a, grid_for(blocks), s); break;
    case 4: K<__nv_bfloat16>::launch(*a, grid_for(blocks), s); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

LAUNCHER(jagged_out_l, jagged_out_kernel)
LAUNCHER(dense_out_l, dense_out_kernel)
LAUNCHER(dense_bmm_l, dense_bmm_kernel)
LAUNCHER(jagged_bmm_l, jagged_bmm_kernel)
LAUNCHER(permute102_l, permute102_kernel)

} // namespace

extern "C" int jg_cuda_to_padded(const jg_cuda_args *a, void *stream)
{
    return launch_copy<to_padded_l>(a, a->B * a->outer * a->max_L, static_cast<cudaStream_t>(stream));
}

extern "C" int jg_cuda_to_jagged(const jg_cuda_args *a, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaMemsetAsync(a->out, 0, (size_t)(a->total_L * a->D * a->es), s);
    if (e != cudaSuccess || a->B * a->outer * a->max_L == 0)
        return (int)e;
    return launch_copy<to_jagged_l>(a, a->B * a->outer * a->max_L, s);
}

extern "C" int jg_cuda_index_select(const jg_cuda_args *a, void *stream)
{
    return launch_copy<index_select_l>(a, a->B, static_cast<cudaStream_t>(stream));
}

extern "C" int jg_cuda_jagged_out(const jg_cuda_args *a, void *stream)
{
    return launch_float<jagged_out_l>(a, a->total_L, static_cast<cudaStream_t>(stream));
}

extern "C" int jg_cuda_dense_out(const jg_cuda_args *a, void *stream)
{
    return launch_float<dense_out_l>(a, a->B * a->max_L, static_cast<cudaStream_t>(stream));
}

extern "C" int jg_cuda_dense_bmm(const jg_cuda_args *a, void *stream)
{
    return launch_float<dense_bmm_l>(a, a->total_L, static_cast<cudaStream_t>(stream));
}

extern "C" int jg_cuda_jagged_bmm(const jg_cuda_args *a, void *stream)
{
    return launch_float<jagged_bmm_l>(a, a->B * a->M, static_cast<cudaStream_t>(stream));
}

extern "C" int jg_cuda_permute102(const jg_cuda_args *a, void *stream)
{
    return launch_float<permute102_l>(a, a->M * a->B, static_cast<cudaStream_t>(stream));
}
