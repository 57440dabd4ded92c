/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_kernels.cu - device code of the box ops (contracts in
** boxes_kernels.h).
**
** NMS: the visiting order is a stable radix sort (CUB) of the same 64-bit
** descending keys as the cpu (NaN first, -0 == 0, ties by index); IoU
** tests use the cpu's arithmetic with explicitly rounded intrinsics
** (__fadd_rn ...), so no multiply-add is fused and the kept set is the
** cpu's bit for bit. The mask kernel is torchvision's: block (r, c) tests
** the 64 boxes of row block r against the 64 of column block c. One block
** of threads then walks the boxes in order, OR-ing each kept box's row of
** the mask into the `removed` bits.
**
** Element-wise ops instantiate boxes_formulas.inc for the device (float
** for f16/f32 boxes, double for f64); nvcc may fuse multiply-adds there,
** which the conformance test's tolerance allows.
*/
#include <cub/device/device_radix_sort.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "block_sum.cuh"
#include "boxes_kernels.h"

#include "dtype_traits.h"

#define BX_HD static __device__ __forceinline__
#include "boxes_formulas_all.inc"

namespace {

const int kBlock = 64;          /* boxes per mask word */

size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

__device__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }
__device__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }

__device__ double load_any(const void *p, int dt, int64_t i)
{
    if (dt == 2)
        return static_cast<const double *>(p)[i];
    if (dt == 3)
        return (double)__half2float(static_cast<const __half *>(p)[i]);
    return (double)static_cast<const float *>(p)[i];
}

__device__ void store_any(void *p, int dt, int64_t i, double v)
{
    if (dt == 2)
        static_cast<double *>(p)[i] = v;
    else if (dt == 3)
        static_cast<__half *>(p)[i] = __float2half_rn((float)v);
    else
        static_cast<float *>(p)[i] = (float)v;
}

/* the cpu's bx_desc_key: increasing key = decreasing score, NaN first */
__device__ uint64_t desc_key(double v)
{
    if (v != v)
        return 0;
    if (v == 0)
        v = 0;
    uint64_t u = (uint64_t)__double_as_longlong(v);
    u = (u >> 63) ? ~u : u | (1ull << 63);
    return ~u + 1;
}

/* ------------------------------------------------------------------ nms */

template <typename T>
struct nms_buffers {
    uint64_t *keys_in, *keys_out;
    int64_t *vals_in, *order;
    T *sorted, *areas, *shifted, *maxv;
    int64_t *cls;
    unsigned long long *mask, *removed;
    int64_t *keep_rank, *count;
    void *cub_temp;
    size_t cub_bytes;
};

template <typename T>
size_t nms_layout(int64_t n, char *base, nms_buffers<T> *b)
{
    const int64_t cb = (n + kBlock - 1) / kBlock;
    size_t off = 0;
    auto take = [&](size_t bytes) -> char * {
        char *p = base != nullptr ? base + off : nullptr;
        off += align256(bytes);
        return p;
    };
    b->keys_in = (uint64_t *)take(n * 8);
    b->keys_out = (uint64_t *)take(n * 8);
    b->vals_in = (int64_t *)take(n * 8);
    b->order = (int64_t *)take(n * 8);
    b->sorted = (T *)take(n * 4 * sizeof(T));
    b->areas = (T *)take(n * sizeof(T));
    b->shifted = (T *)take(n * 4 * sizeof(T));
    b->maxv = (T *)take(sizeof(T));
    b->cls = (int64_t *)take(n * 8);
    b->mask = (unsigned long long *)take((size_t)n * cb * 8);
    b->removed = (unsigned long long *)take(cb * 8);
    b->keep_rank = (int64_t *)take(n * 8);
    b->count = (int64_t *)take(8);
    b->cub_bytes = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, b->cub_bytes, b->keys_in, b->keys_out, b->vals_in, b->order,
                                    (int)n);
    b->cub_temp = take(b->cub_bytes);
    return off;
}

template <typename T>
__global__ void keys_kernel(const T *scores, int64_t n, uint64_t *keys, int64_t *vals)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        keys[i] = desc_key((double)scores[i]);
        vals[i] = i;
    }
}

/* torch.max over all coordinates (NaN wins), one block */
template <typename T>
__device__ T max_nan(T a, T b)
{
    return a != a ? a : b != b ? b : b > a ? b : a;
}

template <typename T>
__global__ void max_kernel(const T *b, int64_t count, T *out)
{
    __shared__ T part[256];
    T m = b[0];
    for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
        m = max_nan(m, b[i]);
    part[threadIdx.x] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        T r = part[0];
        for (int k = 1; k < (int)blockDim.x; k++)
            r = max_nan(r, part[k]);
        *out = r;
    }
}

/* boxes + idxs * (max + 1), each step rounded in T */
template <typename T>
__global__ void shift_kernel(const T *b, const int64_t *idxs, int64_t n, const T *maxv, T *out)
{
    const T step = add_rn(*maxv, (T)1);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T off = mul_rn((T)idxs[i], step);
        for (int k = 0; k < 4; k++)
            out[4 * i + k] = add_rn(b[4 * i + k], off);
    }
}

template <typename T>
__global__ void gather_kernel(const T *b, const int64_t *idxs, const int64_t *order, int64_t n, T *sorted,
                              T *areas, int64_t *cls)
{
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x) {
        int64_t o = order[k];
        T x1 = b[4 * o], y1 = b[4 * o + 1], x2 = b[4 * o + 2], y2 = b[4 * o + 3];
        sorted[4 * k] = x1;
        sorted[4 * k + 1] = y1;
        sorted[4 * k + 2] = x2;
        sorted[4 * k + 3] = y2;
        areas[k] = mul_rn(sub_rn(x2, x1), sub_rn(y2, y1));
        if (cls != nullptr)
            cls[k] = idxs[o];
    }
}

/* torchvision's cpu IoU test: std::max / std::min, w = max(0, xx2 - xx1) */
template <typename T>
__device__ bool iou_above(const T *a, T aa, const T *b, T ab, double thr)
{
    T xx1 = a[0] < b[0] ? b[0] : a[0], yy1 = a[1] < b[1] ? b[1] : a[1];
    T xx2 = b[2] < a[2] ? b[2] : a[2], yy2 = b[3] < a[3] ? b[3] : a[3];
    T dw = sub_rn(xx2, xx1), dh = sub_rn(yy2, yy1);
    T w = (T)0 < dw ? dw : (T)0, h = (T)0 < dh ? dh : (T)0;
    T inter = mul_rn(w, h);
    T ovr = div_rn(inter, sub_rn(add_rn(aa, ab), inter));
    return (double)ovr > thr;
}

template <typename T>
__global__ void mask_kernel(int64_t n, const T *sorted, const T *areas, const int64_t *cls, double thr,
                            unsigned long long *mask, int64_t cb)
{
    const int64_t row_block = blockIdx.y, col_block = blockIdx.x;
    if (row_block > col_block)
        return;
    const int row_size = (int)min((int64_t)kBlock, n - row_block * kBlock);
    const int col_size = (int)min((int64_t)kBlock, n - col_block * kBlock);
    __shared__ T sb[kBlock * 4], sa[kBlock];
    __shared__ int64_t sc[kBlock];
    if ((int)threadIdx.x < col_size) {
        int64_t j = col_block * kBlock + threadIdx.x;
        for (int k = 0; k < 4; k++)
            sb[threadIdx.x * 4 + k] = sorted[4 * j + k];
        sa[threadIdx.x] = areas[j];
        sc[threadIdx.x] = cls != nullptr ? cls[j] : 0;
    }
    __syncthreads();
    if ((int)threadIdx.x < row_size) {
        const int64_t i = row_block * kBlock + threadIdx.x;
        const T *a = sorted + 4 * i;
        const T aa = areas[i];
        const int64_t ci = cls != nullptr ? cls[i] : 0;
        unsigned long long bits = 0;
        for (int k = row_block == col_block ? (int)threadIdx.x + 1 : 0; k < col_size; k++)
            if (sc[k] == ci && iou_above(a, aa, sb + 4 * k, sa[k], thr))
                bits |= 1ull << k;
        mask[i * cb + col_block] = bits;
    }
}

/* one block: the greedy walk over the mask rows. A kept box only sets bits
** of later boxes, so threads reading `removed` while others OR into it
** still agree on every decision; the barrier orders consecutive kept rows. */
__global__ void reduce_kernel(int64_t n, int64_t cb, const unsigned long long *mask, unsigned long long *removed,
                              int64_t *keep_rank, int64_t *count)
{
    for (int64_t w = threadIdx.x; w < cb; w += blockDim.x)
        removed[w] = 0;
    __syncthreads();
    int64_t nk = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t w = i / kBlock;
        if ((((volatile unsigned long long *)removed)[w] >> (i % kBlock)) & 1ull)
            continue;
        if (threadIdx.x == 0)
            keep_rank[nk] = i;
        nk++;
        for (int64_t k = w + threadIdx.x; k < cb; k += blockDim.x)
            removed[k] |= mask[i * cb + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *count = nk;
}

__global__ void map_kernel(const int64_t *keep_rank, const int64_t *order, const int64_t *count, int64_t *keep)
{
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < *count; k += (int64_t)gridDim.x * blockDim.x)
        keep[k] = order[keep_rank[k]];
}

unsigned grid_for(int64_t n, int threads)
{
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

template <typename T>
int nms_typed(const bx_cuda_nms_args *a, int64_t *kept, cudaStream_t s)
{
    const int64_t n = a->n, cb = (n + kBlock - 1) / kBlock;
    nms_buffers<T> b;
    nms_layout<T>(n, static_cast<char *>(a->scratch), &b);
    const T *boxes = static_cast<const T *>(a->boxes);
    keys_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(static_cast<const T *>(a->scores), n, b.keys_in, b.vals_in);
    cudaError_t e = cub::DeviceRadixSort::SortPairs(b.cub_temp, b.cub_bytes, b.keys_in, b.keys_out, b.vals_in,
                                                    b.order, (int)n, 0, 64, s);
    if (e != cudaSuccess)
        return (int)e;
    if (a->shift) {
        max_kernel<T><<<1, 256, 0, s>>>(boxes, 4 * n, b.maxv);
        shift_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(boxes, a->idxs, n, b.maxv, b.shifted);
        boxes = b.shifted;
    }
    int64_t *cls = a->shift || a->idxs == nullptr ? nullptr : b.cls;
    gather_kernel<T><<<grid_for(n, 256), 256, 0, s>>>(boxes, a->idxs, b.order, n, b.sorted, b.areas, cls);
    dim3 grid((unsigned)cb, (unsigned)cb);
    mask_kernel<T><<<grid, kBlock, 0, s>>>(n, b.sorted, b.areas, cls, a->iou_threshold, b.mask, cb);
    reduce_kernel<<<1, 256, 0, s>>>(n, cb, b.mask, b.removed, b.keep_rank, b.count);
    map_kernel<<<grid_for(n, 256), 256, 0, s>>>(b.keep_rank, b.order, b.count, a->keep);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(kept, b.count, sizeof *kept, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    return (int)e;
}

/* ------------------------------------------------------------ element-wise */

template <typename T>
__device__ void load4(const void *p, int dt, int64_t i, T *out)
{
    for (int k = 0; k < 4; k++)
        out[k] = (T)load_any(p, dt, 4 * i + k);
}

/* the formulas of one compute type under common names */
template <typename T> struct F;
template <> struct F<float> {
    __device__ static float iou(const float *a, const float *b, int fmt, int low)
    {
        float u;
        return bx_iou_f32(a, b, fmt, low, &u);
    }
    __device__ static float giou(const float *a, const float *b, int low) { return bx_giou_f32(a, b, low); }
    __device__ static float diou(const float *a, const float *b, float eps)
    {
        float i;
        return bx_diou_f32(a, b, eps, &i);
    }
    __device__ static float ciou(const float *a, const float *b, float eps) { return bx_ciou_f32(a, b, eps); }
    __device__ static float loss(int op, const float *a, const float *b, float eps)
    {
        float i;
        return op == 0 ? bx_giou_loss_f32(a, b, eps, 0) : op == 1 ? bx_diou_loss_f32(a, b, eps, 0, &i)
                                                                 : bx_ciou_loss_f32(a, b, eps, 0);
    }
    __device__ static void convert(const float *b, int in, int out, int low, float *r)
    {
        bx_convert_f32(b, in, out, low, r);
    }
    __device__ static float area(const float *b, int fmt) { return bx_area_f32(b, fmt); }
    __device__ static float clamp(float x, float hi) { return bx_clamp_f32(x, hi); }
    __device__ static float rl(float x, int low) { return bx_rl_f32(x, low); }
};
template <> struct F<double> {
    __device__ static double iou(const double *a, const double *b, int fmt, int low)
    {
        double u;
        return bx_iou_f64(a, b, fmt, low, &u);
    }
    __device__ static double giou(const double *a, const double *b, int low) { return bx_giou_f64(a, b, low); }
    __device__ static double diou(const double *a, const double *b, double eps)
    {
        double i;
        return bx_diou_f64(a, b, eps, &i);
    }
    __device__ static double ciou(const double *a, const double *b, double eps) { return bx_ciou_f64(a, b, eps); }
    __device__ static double loss(int op, const double *a, const double *b, double eps)
    {
        double i;
        return op == 0 ? bx_giou_loss_f64(a, b, eps, 0) : op == 1 ? bx_diou_loss_f64(a, b, eps, 0, &i)
                                                                  : bx_ciou_loss_f64(a, b, eps, 0);
    }
    __device__ static void convert(const double *b, int in, int out, int low, double *r)
    {
        bx_convert_f64(b, in, out, low, r);
    }
    __device__ static double area(const double *b, int fmt) { return bx_area_f64(b, fmt); }
    __device__ static double clamp(double x, double hi) { return bx_clamp_f64(x, hi); }
    __device__ static double rl(double x, int low) { return bx_rl_f64(x, low); }
};

template <typename T>
__global__ void pair_kernel(int kind, int fmt, int dt, int64_t n, int64_t m, const void *b1, const void *b2,
                            double eps, T *out)
{
    const int low = dt == 3;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n * m; e += (int64_t)gridDim.x * blockDim.x) {
        T a[4], b[4];
        load4<T>(b1, dt, e / m, a);
        load4<T>(b2, dt, e % m, b);
        out[e] = kind == 0 ? F<T>::iou(a, b, fmt, low) : kind == 1 ? F<T>::giou(a, b, low)
               : kind == 2 ? F<T>::diou(a, b, (T)eps) : F<T>::ciou(a, b, (T)eps);
    }
}

template <typename T>
__global__ void elem_kernel(bx_cuda_elem_args a)
{
    const int low = a.dtype == 3 && a.op >= 3;      /* the losses upcast f16 first */
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < a.n; i += (int64_t)gridDim.x * blockDim.x) {
        T x[4], y[4], r[4];
        load4<T>(a.in1, a.dtype, i, x);
        if (a.op <= 2) {
            load4<T>(a.in2, a.dtype, i, y);
            T v = F<T>::loss(a.op, x, y, (T)a.eps);
            if (a.partial != nullptr)
                a.partial[i] = (double)v;
            else
                store_any(a.out, a.out_dtype, i, (double)v);
        } else if (a.op == 3) {
            F<T>::convert(x, a.fmt_in, a.fmt_out, low, r);
            for (int k = 0; k < 4; k++)
                store_any(a.out, a.out_dtype, 4 * i + k, (double)r[k]);
        } else if (a.op == 4) {
            store_any(a.out, a.out_dtype, i, (double)F<T>::area(x, a.fmt_in));
        } else {
            T hx = F<T>::rl((T)a.width, low), hy = F<T>::rl((T)a.height, low);
            for (int k = 0; k < 4; k++)
                store_any(a.out, a.out_dtype, 4 * i + k, (double)F<T>::clamp(x[k], k % 2 ? hy : hx));
        }
    }
}

__global__ void reduce_sum_kernel(const double *p, int64_t n, int mean, int out_dt, void *out)
{
    __shared__ double part[256];
    double s = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        s += p[i];
    const double total = vision_block_sum(part, s);
    if (threadIdx.x == 0)
        store_any(out, out_dt, 0, mean && n > 0 ? total / (double)n : total);
}

template <typename T>
__global__ void small_kernel(int dt, int64_t n, const void *boxes, double min_size, uint8_t *flags)
{
    const int low = dt == 3;
    const T ms = F<T>::rl((T)min_size, low);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T a[4];
        load4<T>(boxes, dt, i, a);
        T w = F<T>::rl(a[2] - a[0], low), h = F<T>::rl(a[3] - a[1], low);
        flags[i] = (uint8_t)(w >= ms && h >= ms);
    }
}

} // namespace

extern "C" size_t bx_cuda_nms_scratch_bytes(int64_t n, int32_t dtype)
{
    if (dtype == 2) {
        nms_buffers<double> b;
        return nms_layout<double>(n, nullptr, &b);
    }
    nms_buffers<float> b;
    return nms_layout<float>(n, nullptr, &b);
}

extern "C" int bx_cuda_nms(const bx_cuda_nms_args *args, int64_t *kept, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    return args->dtype == 2 ? nms_typed<double>(args, kept, s) : nms_typed<float>(args, kept, s);
}

extern "C" int bx_cuda_pair(int32_t kind, int32_t fmt, int32_t dtype, int64_t n, int64_t m, const void *b1,
                            const void *b2, double eps, void *out, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    unsigned g = grid_for(n * m, 256);
    if (dtype == 2)
        pair_kernel<double><<<g, 256, 0, s>>>(kind, fmt, dtype, n, m, b1, b2, eps, static_cast<double *>(out));
    else
        pair_kernel<float><<<g, 256, 0, s>>>(kind, fmt, dtype, n, m, b1, b2, eps, static_cast<float *>(out));
    return (int)cudaGetLastError();
}

extern "C" int bx_cuda_elem(const bx_cuda_elem_args *args, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    unsigned g = grid_for(args->n, 256);
    if (args->dtype == 2)
        elem_kernel<double><<<g, 256, 0, s>>>(*args);
    else
        elem_kernel<float><<<g, 256, 0, s>>>(*args);
    return (int)cudaGetLastError();
}

extern "C" int bx_cuda_reduce(const double *partial, int64_t n, int32_t mean, int32_t out_dtype, void *out,
                              void *stream)
{
    reduce_sum_kernel<<<1, 256, 0, static_cast<cudaStream_t>(stream)>>>(partial, n, mean, out_dtype, out);
    return (int)cudaGetLastError();
}

extern "C" int bx_cuda_small_flags(int32_t dtype, int64_t n, const void *boxes, double min_size, uint8_t *flags,
                                   void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    unsigned g = grid_for(n, 256);
    if (dtype == 2)
        small_kernel<double><<<g, 256, 0, s>>>(dtype, n, boxes, min_size, flags);
    else
        small_kernel<float><<<g, 256, 0, s>>>(dtype, n, boxes, min_size, flags);
    return (int)cudaGetLastError();
}
