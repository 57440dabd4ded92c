/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cuda_kernels.cu - device code of the RoI ops: one thread per output
** element (forward) or per gradient element (backward, scattering with
** atomicAdd), in a grid-stride loop, as torchvision's CUDA kernels do.
**
** Every thread recomputes its roi's geometry and its bin's samples with
** the formulas of the cpu kernels (roi_cpu_tmpl.h), in the same order of
** operations, through the dtype's arithmetic struct: explicit _rn
** intrinsics, so nvcc cannot contract a multiply and an add into an FMA,
** and for f16 a rounding to half after every operation (c10::Half). The
** forward results therefore equal the cpu kernel's; backward sums differ
** only by the order of the atomic additions.
*/
#include <cfloat>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "roi_cuda_kernels.h"

namespace {

const int MAX_GRID = 32768;     /* ROI_MAX_GRID: the host refuses larger grids */

struct f32_ops {
    typedef float S;
    typedef float C;
    __device__ static C ld(const S *p) { return *p; }
    __device__ static S st(C v) { return v; }
    __device__ static C cvt(double v) { return (C)v; }
    __device__ static C mul(C a, C b) { return __fmul_rn(a, b); }
    __device__ static C add(C a, C b) { return __fadd_rn(a, b); }
    __device__ static C sub(C a, C b) { return __fsub_rn(a, b); }
    __device__ static C div(C a, C b) { return __fdiv_rn(a, b); }
    __device__ static void atomic_add(S *p, C v) { atomicAdd(p, v); }
};

struct f64_ops {
    typedef double S;
    typedef double C;
    __device__ static C ld(const S *p) { return *p; }
    __device__ static S st(C v) { return v; }
    __device__ static C cvt(double v) { return v; }
    __device__ static C mul(C a, C b) { return __dmul_rn(a, b); }
    __device__ static C add(C a, C b) { return __dadd_rn(a, b); }
    __device__ static C sub(C a, C b) { return __dsub_rn(a, b); }
    __device__ static C div(C a, C b) { return __ddiv_rn(a, b); }
    __device__ static void atomic_add(S *p, C v) { atomicAdd(p, v); }
};

struct f16_ops {
    typedef __half S;
    typedef float C;
    __device__ static C r(C v) { return __half2float(__float2half_rn(v)); }
    __device__ static C ld(const S *p) { return __half2float(*p); }
    __device__ static S st(C v) { return __float2half_rn(v); }
    __device__ static C cvt(double v) { return r((float)v); }
    __device__ static C mul(C a, C b) { return r(__fmul_rn(a, b)); }
    __device__ static C add(C a, C b) { return r(__fadd_rn(a, b)); }
    __device__ static C sub(C a, C b) { return r(__fsub_rn(a, b)); }
    __device__ static C div(C a, C b) { return r(__fdiv_rn(a, b)); }
    __device__ static void atomic_add(S *p, C v) { atomicAdd(p, __float2half_rn(v)); }
};

template <class T>
struct align_box {
    int64_t b;
    typename T::C sh, sw, bh, bw, count;
    int gh, gw;
};

__device__ int grid_of(double q, int64_t sampling_ratio)
{
    if (sampling_ratio > 0)
        return (int)sampling_ratio;
    double c = ceil(q);
    if (c != c)
        return 0;
    return c > MAX_GRID ? MAX_GRID : c < -MAX_GRID ? -MAX_GRID : (int)c;
}

template <class T>
__device__ align_box<T> make_align_box(const roi_cuda_args &a, int64_t k)
{
    typedef typename T::C C;
    const typename T::S *q = static_cast<const typename T::S *>(a.rois) + k * 5;
    const bool ps = a.kind == 2;
    const C off = (ps || a.aligned) ? (C)0.5 : (C)0;
    const C ss = T::cvt(a.spatial_scale);
    align_box<T> bx;
    bx.b = (int64_t)T::ld(q);
    bx.sw = T::sub(T::mul(T::ld(q + 1), ss), off);
    bx.sh = T::sub(T::mul(T::ld(q + 2), ss), off);
    C ew = T::sub(T::mul(T::ld(q + 3), ss), off), eh = T::sub(T::mul(T::ld(q + 4), ss), off);
    C rw = T::sub(ew, bx.sw), rh = T::sub(eh, bx.sh);
    if (!ps && !a.aligned) {
        rw = rw < (C)1 ? (C)1 : rw;
        rh = rh < (C)1 ? (C)1 : rh;
    }
    bx.bh = T::div(rh, T::cvt((double)a.ph));
    bx.bw = T::div(rw, T::cvt((double)a.pw));
    bx.gh = grid_of((double)bx.bh, a.sampling_ratio);
    bx.gw = grid_of((double)bx.bw, a.sampling_ratio);
    int64_t cnt = (int64_t)bx.gh * bx.gw;
    if (!ps && cnt < 1)
        cnt = 1;
    bx.count = T::cvt((double)cnt);
    return bx;
}

template <class T>
struct axis {
    int lo, hi;
    typename T::C l, h;
    bool valid;
};

/* Coordinate of sample i of bin p along one axis, clamped as torchvision. */
template <class T>
__device__ axis<T> axis_at(typename T::C start, typename T::C bin, int64_t p, int i, int grid, int64_t size)
{
    typedef typename T::C C;
    axis<T> a;
    const C base = T::add(start, T::mul(T::cvt((double)p), bin));
    C v = T::add(base, T::div(T::mul(T::cvt((double)((float)i + 0.5f)), bin), T::cvt((double)grid)));
    a.valid = size > 0 && (double)v >= -1.0 && (double)v <= (double)size;
    a.lo = a.hi = 0;
    a.l = a.h = 0;
    if (!a.valid)
        return a;
    if (v <= 0)
        v = 0;
    int lo = (int)v, hi;
    if (lo >= size - 1) {
        hi = lo = (int)(size - 1);
        v = T::cvt((double)lo);
    } else {
        hi = lo + 1;
    }
    a.lo = lo;
    a.hi = hi;
    a.l = T::sub(v, T::cvt((double)lo));
    a.h = T::sub((C)1, a.l);
    return a;
}

/* Every kernel below takes the output elements idx of [K, C_out, PH, PW]
** in a grid-stride loop; bin_at names the roi k, the channel c and the bin
** (bi, bj) of one. */
#define FOR_EACH_OUTPUT(idx, total)                                                 \
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < (total); \
         idx += (int64_t)gridDim.x * blockDim.x)

struct bin_pos {
    int64_t k, c, bi, bj;
};

__device__ bin_pos bin_at(const roi_cuda_args &a, int64_t idx)
{
    const int64_t nbins = a.ph * a.pw;
    bin_pos o;
    o.bj = idx % a.pw;
    o.bi = (idx / a.pw) % a.ph;
    o.c = (idx / nbins) % a.c_out;
    o.k = idx / nbins / a.c_out;
    return o;
}

template <class T>
__global__ void align_forward(roi_cuda_args a, int64_t total)
{
    typedef typename T::C C;
    typedef typename T::S S;
    const bool ps = a.kind == 2;
    const int64_t hw = a.h * a.w, nbins = a.ph * a.pw;
    FOR_EACH_OUTPUT(idx, total) {
        const bin_pos o = bin_at(a, idx);
        const align_box<T> bx = make_align_box<T>(a, o.k);
        const int64_t ci = ps ? o.c * nbins + o.bi * a.pw + o.bj : o.c;
        const S *plane = static_cast<const S *>(a.input) + (bx.b * a.c + ci) * hw;
        C acc = 0;
        for (int iy = 0; iy < bx.gh; iy++) {
            const axis<T> y = axis_at<T>(bx.sh, bx.bh, o.bi, iy, bx.gh, a.h);
            for (int ix = 0; ix < bx.gw; ix++) {
                const axis<T> x = axis_at<T>(bx.sw, bx.bw, o.bj, ix, bx.gw, a.w);
                C t;
                if (y.valid && x.valid) {
                    t = T::add(T::mul(T::mul(y.h, x.h), T::ld(plane + (int64_t)y.lo * a.w + x.lo)),
                               T::mul(T::mul(y.h, x.l), T::ld(plane + (int64_t)y.lo * a.w + x.hi)));
                    t = T::add(t, T::mul(T::mul(y.l, x.h), T::ld(plane + (int64_t)y.hi * a.w + x.lo)));
                    t = T::add(t, T::mul(T::mul(y.l, x.l), T::ld(plane + (int64_t)y.hi * a.w + x.hi)));
                } else if (!ps && hw > 0) {
                    /* torchvision's pre_calc: weight 0 at element 0 (a NaN there propagates) */
                    const C v = T::ld(plane), z = 0;
                    t = T::add(T::add(T::add(T::mul(z, v), T::mul(z, v)), T::mul(z, v)), T::mul(z, v));
                } else {
                    continue;
                }
                acc = T::add(acc, t);
            }
        }
        static_cast<S *>(a.output)[idx] = T::st(T::div(acc, bx.count));
        if (a.map_out != NULL)
            a.map_out[idx] = (int32_t)ci;
    }
}

template <class T>
__global__ void align_backward(roi_cuda_args a, int64_t total)
{
    typedef typename T::C C;
    typedef typename T::S S;
    const bool ps = a.kind == 2;
    const int64_t hw = a.h * a.w;
    FOR_EACH_OUTPUT(idx, total) {
        const bin_pos o = bin_at(a, idx);
        const align_box<T> bx = make_align_box<T>(a, o.k);
        if (bx.gh <= 0 || bx.gw <= 0)
            continue;
        const int64_t ci = ps ? a.map_in[idx] : o.c;
        S *plane = static_cast<S *>(a.output) + (bx.b * a.c + ci) * hw;
        const C gv = T::ld(static_cast<const S *>(a.input) + idx);
        for (int iy = 0; iy < bx.gh; iy++) {
            const axis<T> y = axis_at<T>(bx.sh, bx.bh, o.bi, iy, bx.gh, a.h);
            for (int ix = 0; ix < bx.gw; ix++) {
                const axis<T> x = axis_at<T>(bx.sw, bx.bw, o.bj, ix, bx.gw, a.w);
                if (!(y.valid && x.valid))
                    continue;
                const int64_t off[4] = { (int64_t)y.lo * a.w + x.lo, (int64_t)y.lo * a.w + x.hi,
                                         (int64_t)y.hi * a.w + x.lo, (int64_t)y.hi * a.w + x.hi };
                const C w[4] = { T::mul(y.h, x.h), T::mul(y.h, x.l), T::mul(y.l, x.h), T::mul(y.l, x.l) };
                for (int q = 0; q < 4; q++)
                    T::atomic_add(plane + off[q], T::div(T::mul(gv, w[q]), bx.count));
            }
        }
    }
}

/* ------------------------------------------------------------------ pool */

__device__ int64_t sat_i64(double v)
{
    if (!(v > -1e15))
        return -(int64_t)1e15;
    return v > 1e15 ? (int64_t)1e15 : (int64_t)v;
}

template <class T>
struct pool_box {
    int64_t b, rsh, rsw;
    typename T::C bh, bw;
};

template <class T>
__device__ pool_box<T> make_pool_box(const roi_cuda_args &a, int64_t k)
{
    typedef typename T::C C;
    const typename T::S *q = static_cast<const typename T::S *>(a.rois) + k * 5;
    const C ss = T::cvt(a.spatial_scale);
    const bool via_float = a.kind == 3 && a.backward;   /* roundf() in ps_roi_pool's backward */
    const int64_t plus = a.kind == 1 ? 1 : 0;
    int64_t v[4];
    for (int i = 0; i < 4; i++) {
        C p = T::mul(T::ld(q + 1 + i), ss);
        v[i] = sat_i64(round(via_float ? (double)(float)p : (double)p));
    }
    pool_box<T> bx;
    bx.b = (int64_t)T::ld(q);
    bx.rsw = v[0];
    bx.rsh = v[1];
    int64_t rw = v[2] - v[0] + plus, rh = v[3] - v[1] + plus;
    rw = rw > 1 ? rw : 1;
    rh = rh > 1 ? rh : 1;
    bx.bh = T::div(T::cvt((double)rh), T::cvt((double)a.ph));
    bx.bw = T::div(T::cvt((double)rw), T::cvt((double)a.pw));
    return bx;
}

template <class T>
__device__ void pool_range(int64_t p, typename T::C bin, int64_t start, int64_t lim, int64_t &s, int64_t &e)
{
    int64_t lo = sat_i64(floor((double)T::mul(T::cvt((double)p), bin))) + start;
    int64_t hi = sat_i64(ceil((double)T::mul(T::cvt((double)(p + 1)), bin))) + start;
    lo = lo > 0 ? lo : 0;
    hi = hi > 0 ? hi : 0;
    s = lo < lim ? lo : lim;
    e = hi < lim ? hi : lim;
}

template <class T>
__global__ void pool_forward(roi_cuda_args a, int64_t total)
{
    typedef typename T::C C;
    typedef typename T::S S;
    const bool ps = a.kind == 3;
    const int64_t hw = a.h * a.w, nbins = a.ph * a.pw;
    const int64_t hl = ps ? a.h - 1 : a.h, wl = ps ? a.w - 1 : a.w;
    FOR_EACH_OUTPUT(idx, total) {
        const bin_pos o = bin_at(a, idx);
        const pool_box<T> bx = make_pool_box<T>(a, o.k);
        int64_t hs, he, ws, we;
        pool_range<T>(o.bi, bx.bh, bx.rsh, hl, hs, he);
        pool_range<T>(o.bj, bx.bw, bx.rsw, wl, ws, we);
        const bool empty = he <= hs || we <= ws;
        const int64_t ci = ps ? o.c * nbins + o.bi * a.pw + o.bj : o.c;
        const S *p = static_cast<const S *>(a.input) + (bx.b * a.c + ci) * hw;
        if (ps) {
            C sum = 0;
            for (int64_t y = hs; y < he; y++)
                for (int64_t x = ws; x < we; x++)
                    sum = T::add(sum, T::ld(p + y * a.w + x));
            static_cast<S *>(a.output)[idx] =
                T::st(empty ? (C)0 : T::div(sum, T::cvt((double)((he - hs) * (we - ws)))));
            a.map_out[idx] = (int32_t)ci;
        } else {
            C m = empty ? (C)0 : (C)-FLT_MAX;            /* -FLT_MAX for f64 too, as torchvision */
            int32_t mi = -1;
            for (int64_t y = hs; y < he; y++)
                for (int64_t x = ws; x < we; x++) {
                    const C v = T::ld(p + y * a.w + x);
                    if (v > m) {
                        m = v;
                        mi = (int32_t)(y * a.w + x);
                    }
                }
            static_cast<S *>(a.output)[idx] = T::st(m);
            a.map_out[idx] = mi;
        }
    }
}

template <class T>
__global__ void pool_backward(roi_cuda_args a, int64_t total)
{
    typedef typename T::C C;
    typedef typename T::S S;
    const int64_t hw = a.h * a.w;
    FOR_EACH_OUTPUT(idx, total) {
        const bin_pos o = bin_at(a, idx);
        const int64_t b = (int64_t)T::ld(static_cast<const S *>(a.rois) + o.k * 5);
        const C g = T::ld(static_cast<const S *>(a.input) + idx);
        if (a.kind == 1) {
            const int32_t am = a.map_in[idx];
            if (am != -1)
                T::atomic_add(static_cast<S *>(a.output) + (b * a.c + o.c) * hw + am, g);
            continue;
        }
        const pool_box<T> bx = make_pool_box<T>(a, o.k);
        int64_t hs, he, ws, we;
        pool_range<T>(o.bi, bx.bh, bx.rsh, a.h, hs, he);
        pool_range<T>(o.bj, bx.bw, bx.rsw, a.w, ws, we);
        if (he <= hs || we <= ws)
            continue;
        S *plane = static_cast<S *>(a.output) + (b * a.c + a.map_in[idx]) * hw;
        const C d = T::div(g, T::cvt((double)((he - hs) * (we - ws))));
        for (int64_t y = hs; y < he; y++)
            for (int64_t x = ws; x < we; x++)
                T::atomic_add(plane + y * a.w + x, d);
    }
}

template <class T>
int launch(const roi_cuda_args *a, cudaStream_t stream)
{
    const int64_t total = a->k * a->c_out * a->ph * a->pw;
    if (total == 0)
        return (int)cudaSuccess;
    const int threads = 256;
    int64_t blocks = (total + threads - 1) / threads;
    if (blocks > 65535 * 8)
        blocks = 65535 * 8;
    const bool align = a->kind == 0 || a->kind == 2;
    if (align && !a->backward)
        align_forward<T><<<(unsigned)blocks, threads, 0, stream>>>(*a, total);
    else if (align)
        align_backward<T><<<(unsigned)blocks, threads, 0, stream>>>(*a, total);
    else if (!a->backward)
        pool_forward<T><<<(unsigned)blocks, threads, 0, stream>>>(*a, total);
    else
        pool_backward<T><<<(unsigned)blocks, threads, 0, stream>>>(*a, total);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int roi_cuda_launch(const roi_cuda_args *args, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (args->dtype) {
    case 1: return launch<f32_ops>(args, s);
    case 2: return launch<f64_ops>(args, s);
    case 3:
        if (args->kind == 1 || args->kind == 3)
            return (int)cudaErrorInvalidValue;      /* pooling ops: f32 and f64 only */
        return launch<f16_ops>(args, s);
    default: return (int)cudaErrorInvalidValue;
    }
}
