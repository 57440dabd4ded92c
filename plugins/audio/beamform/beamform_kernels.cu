/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_kernels.cu - the device code of the beamforming ops (the
** launchers of beamform_kernels.h), for float (complex64) and double
** (complex128), complex numbers as interleaved (re, im) pairs.
**
** psd: one block per bin. The block first sums the bin's mask (torch
** normalises by the sum plus eps), then walks the frames in tiles kept in
** shared memory (the mask-weighted frames of every channel), each thread
** accumulating its (c, e) pairs of the upper triangle; the lower triangle
** is the conjugate and the diagonal exactly real, as on the cpu.
** apply: one thread per output (bin, frame). The small per-bin steps around
** the batched solves (loading, the trace and division, the power
** iterations) are one thread per bin: C <= 64 and the work per bin is
** O(C^2), next to the solves' O(C^3).
*/
#include <cuda_runtime.h>
#include <stdint.h>

#include "beamform_kernels.h"

#define PSD_TILE 64
#define PSD_THREADS 128

template <typename R>
__device__ inline R ref_weight(const bf_cuda_ref &ref, int64_t b, int64_t C, int64_t c)
{
    int64_t row = ref.u_batch == 1 ? 0 : b;
    return ref.u_dbl ? (R)((const double *)ref.u)[row * C + c] : (R)((const float *)ref.u)[row * C + c];
}

template <typename R>
__global__ void psd_kernel(int64_t C, int64_t F, int64_t T, const R *x, const R *mask, int normalize, double eps,
                           R *psd)
{
    extern __shared__ unsigned char smem_raw[];
    R *tile = reinterpret_cast<R *>(smem_raw);            /* [C][PSD_TILE][2] */
    __shared__ double red[PSD_THREADS];
    const int64_t bin = blockIdx.x, b = bin / F, f = bin % F;
    const R *xb = x + 2 * ((b * C) * F + f) * T;
    const R *m = mask != nullptr ? mask + (b * F + f) * T : nullptr;
    R scale = 1;
    if (m != nullptr && normalize) {
        double s = 0;
        for (int64_t t = threadIdx.x; t < T; t += blockDim.x)
            s += m[t];
        red[threadIdx.x] = s;
        __syncthreads();
        for (int w = blockDim.x / 2; w > 0; w /= 2) {
            if ((int)threadIdx.x < w)
                red[threadIdx.x] += red[threadIdx.x + w];
            __syncthreads();
        }
        scale = (R)red[0] + (R)eps;
    }
    const int64_t npairs = C * (C + 1) / 2;
    R acc_r[4] = { 0, 0, 0, 0 }, acc_i[4] = { 0, 0, 0, 0 };   /* pairs tid, tid + 128, ... */
    for (int64_t t0 = 0; t0 < T; t0 += PSD_TILE) {
        const int64_t nt = T - t0 < PSD_TILE ? T - t0 : PSD_TILE;
        __syncthreads();
        for (int64_t i = threadIdx.x; i < C * nt; i += blockDim.x) {
            const int64_t c = i / nt, t = i % nt;
            R w = m != nullptr ? (normalize ? m[t0 + t] / scale : m[t0 + t]) : (R)1;
            const R *src = xb + 2 * (c * F * T + t0 + t);
            tile[2 * (c * PSD_TILE + t)] = src[0] * w;
            tile[2 * (c * PSD_TILE + t) + 1] = src[1] * w;
        }
        __syncthreads();
        int k = 0;
        for (int64_t p = threadIdx.x; p < npairs && k < 4; p += blockDim.x, k++) {
            /* pair p -> (c, e), e >= c, row by row */
            int64_t c = 0, rest = p;
            while (rest >= C - c) {
                rest -= C - c;
                c++;
            }
            const int64_t e = c + rest;
            const R *xc = xb + 2 * (c * F * T + t0), *ye = tile + 2 * e * PSD_TILE;
            R sr = 0, si = 0;
            for (int64_t t = 0; t < nt; t++) {
                sr += xc[2 * t] * ye[2 * t] + xc[2 * t + 1] * ye[2 * t + 1];
                si += xc[2 * t + 1] * ye[2 * t] - xc[2 * t] * ye[2 * t + 1];
            }
            acc_r[k] += sr;
            acc_i[k] += si;
        }
    }
    int k = 0;
    R *o = psd + 2 * bin * C * C;
    for (int64_t p = threadIdx.x; p < npairs && k < 4; p += blockDim.x, k++) {
        int64_t c = 0, rest = p;
        while (rest >= C - c) {
            rest -= C - c;
            c++;
        }
        const int64_t e = c + rest;
        o[2 * (c * C + e)] = acc_r[k];
        o[2 * (c * C + e) + 1] = c == e ? (R)0 : acc_i[k];
        if (c != e) {
            o[2 * (e * C + c)] = acc_r[k];
            o[2 * (e * C + c) + 1] = -acc_i[k];
        }
    }
}

/* a thread keeps 4 pairs: 4 * PSD_THREADS = 512 pairs cover C <= 31, the
** limit of the cuda kernels (BF_CUDA_MAX_CHANNELS in beamform_cuda.c, which
** is also cuSOLVER's heevjBatched limit of 32) */

template <typename R>
__global__ void apply_kernel(int64_t bins, int64_t C, int64_t F, int64_t T, const R *w, const R *x, R *out)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= bins * T)
        return;
    const int64_t bin = i / T, t = i % T, b = bin / F, f = bin % F;
    const R *wb = w + 2 * bin * C;
    R re = 0, im = 0;
    for (int64_t c = 0; c < C; c++) {
        const R *xc = x + 2 * (((b * C + c) * F + f) * T + t);
        re += wb[2 * c] * xc[0] + wb[2 * c + 1] * xc[1];
        im += wb[2 * c] * xc[1] - wb[2 * c + 1] * xc[0];
    }
    out[2 * i] = re;
    out[2 * i + 1] = im;
}

template <typename R>
__global__ void prepare_kernel(int64_t bins, int64_t C, const R *psd_n, int loading, double diag_eps, const R *rhs,
                               int64_t nrhs, R *a, R *b, void **aptr, void **bptr)
{
    const int64_t bin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (bin >= bins)
        return;
    const R *src = psd_n + 2 * bin * C * C;
    R *dst = a + 2 * bin * C * C;
    for (int64_t r = 0; r < C; r++)
        for (int64_t c = 0; c < C; c++) {
            dst[2 * (c * C + r)] = src[2 * (r * C + c)];
            dst[2 * (c * C + r) + 1] = src[2 * (r * C + c) + 1];
        }
    if (loading) {
        R tr = 0;
        for (int64_t i = 0; i < C; i++)
            tr += dst[2 * (i * C + i)];
        R e = tr * (R)diag_eps;
        e = e + (R)1e-8;
        for (int64_t i = 0; i < C; i++)
            dst[2 * (i * C + i)] += e;
    }
    aptr[bin] = dst;
    if (rhs == nullptr)
        return;
    const R *rs = rhs + 2 * bin * C * nrhs;
    R *bd = b + 2 * bin * C * nrhs;
    for (int64_t r = 0; r < C; r++)
        for (int64_t c = 0; c < nrhs; c++) {
            bd[2 * (c * C + r)] = rs[2 * (r * nrhs + c)];
            bd[2 * (c * C + r) + 1] = rs[2 * (r * nrhs + c) + 1];
        }
    bptr[bin] = bd;
}

/* (a + bi) / (c + di), scaled as the cpu (c10::complex's algorithm) */
template <typename R>
__device__ inline void cdiv(R a, R b, R c, R d, R *re, R *im)
{
    R ac = c < 0 ? -c : c, ad = d < 0 ? -d : d;
    if (ac >= ad) {
        if (ac == 0 && ad == 0) {
            *re = a / ac;
            *im = b / ad;
            return;
        }
        R rat = d / c, scl = (R)1.0 / (c + d * rat);
        *re = (a + b * rat) * scl;
        *im = (b - a * rat) * scl;
    } else {
        R rat = c / d, scl = (R)1.0 / (d + c * rat);
        *re = (a * rat + b) * scl;
        *im = (b * rat - a) * scl;
    }
}

/* v = M u (column-major M): the reference column or the weights' combination */
template <typename R>
__device__ inline void select_ref(int64_t C, const R *m, const bf_cuda_ref &ref, int64_t b, int64_t r, R *vr, R *vi)
{
    if (ref.index >= 0) {
        *vr = m[2 * (ref.index * C + r)];
        *vi = m[2 * (ref.index * C + r) + 1];
        return;
    }
    R sr = 0, si = 0;
    for (int64_t c = 0; c < C; c++) {
        R u = ref_weight<R>(ref, b, C, c);
        sr += m[2 * (c * C + r)] * u;
        si += m[2 * (c * C + r) + 1] * u;
    }
    *vr = sr;
    *vi = si;
}

template <typename R>
__global__ void souden_finish_kernel(int64_t bins, int64_t C, int64_t F, const R *n, bf_cuda_ref ref, double eps,
                                     R *out)
{
    const int64_t bin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (bin >= bins)
        return;
    const R *m = n + 2 * bin * C * C;
    R tr = 0, ti = 0;
    for (int64_t i = 0; i < C; i++) {
        tr += m[2 * (i * C + i)];
        ti += m[2 * (i * C + i) + 1];
    }
    tr = tr + (R)eps;
    R *o = out + 2 * bin * C;
    for (int64_t r = 0; r < C; r++) {
        if (ref.index >= 0) {
            cdiv(m[2 * (ref.index * C + r)], m[2 * (ref.index * C + r) + 1], tr, ti, &o[2 * r], &o[2 * r + 1]);
            continue;
        }
        R sr = 0, si = 0;
        for (int64_t c = 0; c < C; c++) {
            R qr, qi, u = ref_weight<R>(ref, bin / F, C, c);
            cdiv(m[2 * (c * C + r)], m[2 * (c * C + r) + 1], tr, ti, &qr, &qi);
            sr += qr * u;
            si += qi * u;
        }
        o[2 * r] = sr;
        o[2 * r + 1] = si;
    }
}

template <typename R>
__global__ void rtf_weights_finish_kernel(int64_t bins, int64_t C, int64_t F, const R *rtf, const R *n,
                                          bf_cuda_ref ref, double eps, R *out)
{
    const int64_t bin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (bin >= bins)
        return;
    const R *v = rtf + 2 * bin * C, *s = n + 2 * bin * C;
    R dr = 0;
    for (int64_t c = 0; c < C; c++)
        dr += v[2 * c] * s[2 * c] + v[2 * c + 1] * s[2 * c + 1];
    dr = dr + (R)eps;
    R sr = 1, si = 0;
    if (ref.present) {
        if (ref.index >= 0) {
            sr = v[2 * ref.index];
            si = -v[2 * ref.index + 1];
        } else {
            sr = 0, si = 0;
            for (int64_t c = 0; c < C; c++) {
                R u = ref_weight<R>(ref, bin / F, C, c);
                sr += v[2 * c] * u;
                si -= v[2 * c + 1] * u;
            }
        }
    }
    R *o = out + 2 * bin * C;
    for (int64_t c = 0; c < C; c++) {
        R wr = s[2 * c] / dr, wi = s[2 * c + 1] / dr;
        if (ref.present) {
            o[2 * c] = wr * sr - wi * si;
            o[2 * c + 1] = wr * si + wi * sr;
        } else {
            o[2 * c] = wr;
            o[2 * c + 1] = wi;
        }
    }
}

/* y = M v for M column-major (cm = 1) or row-major (cm = 0) */
template <typename R>
__device__ inline void matvec(int64_t C, const R *m, int cm, const R *v, R *y)
{
    for (int64_t r = 0; r < C; r++) {
        R sr = 0, si = 0;
        for (int64_t c = 0; c < C; c++) {
            const R *e = m + 2 * (cm ? c * C + r : r * C + c);
            sr += e[0] * v[2 * c] - e[1] * v[2 * c + 1];
            si += e[0] * v[2 * c + 1] + e[1] * v[2 * c];
        }
        y[2 * r] = sr;
        y[2 * r + 1] = si;
    }
}

#define BF_CUDA_MAX_C 64

template <typename R>
__global__ void rtf_power_finish_kernel(int64_t bins, int64_t C, int64_t F, const R *phi, const R *psd_s, const R *a0,
                                        bf_cuda_ref ref, int64_t n_iter, R *out)
{
    const int64_t bin = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (bin >= bins)
        return;
    const R *p = phi + 2 * bin * C * C;
    R *o = out + 2 * bin * C;   /* r and y alternate between o and a local buffer */
    R r[2 * BF_CUDA_MAX_C];
    for (int64_t i = 0; i < C; i++)
        select_ref(C, p, ref, bin / F, i, &r[2 * i], &r[2 * i + 1]);
    if (n_iter >= 2) {
        for (int64_t it = 0; it < n_iter - 2; it++) {
            matvec(C, p, 1, r, o);
            for (int64_t i = 0; i < 2 * C; i++)
                r[i] = o[i];
        }
        matvec(C, psd_s + 2 * bin * C * C, 0, r, o);
    } else {
        matvec(C, a0 + 2 * bin * C * C, 1, r, o);
    }
}

template <typename R>
__global__ void last_column_kernel(int64_t bins, int64_t C, const R *v, R *out)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= bins * C)
        return;
    const int64_t bin = i / C, r = i % C;
    out[2 * i] = v[2 * (bin * C * C + (C - 1) * C + r)];
    out[2 * i + 1] = v[2 * (bin * C * C + (C - 1) * C + r) + 1];
}

static unsigned blocks_of(int64_t n, int threads) { return (unsigned)((n + threads - 1) / threads); }

extern "C" {

int bf_cuda_psd(int dbl, void *stream, int64_t batch, int64_t C, int64_t F, int64_t T, const void *x,
                const void *mask, int normalize, double eps, void *psd)
{
    const int64_t bins = batch * F;
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        psd_kernel<double><<<(unsigned)bins, PSD_THREADS, (size_t)(2 * C * PSD_TILE) * sizeof(double), s>>>(
            C, F, T, (const double *)x, (const double *)mask, normalize, eps, (double *)psd);
    else
        psd_kernel<float><<<(unsigned)bins, PSD_THREADS, (size_t)(2 * C * PSD_TILE) * sizeof(float), s>>>(
            C, F, T, (const float *)x, (const float *)mask, normalize, eps, (float *)psd);
    return (int)cudaGetLastError();
}

int bf_cuda_apply(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, int64_t T, const void *w, const void *x,
                  void *out)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        apply_kernel<double><<<blocks_of(bins * T, 256), 256, 0, s>>>(bins, C, F, T, (const double *)w,
                                                                      (const double *)x, (double *)out);
    else
        apply_kernel<float><<<blocks_of(bins * T, 256), 256, 0, s>>>(bins, C, F, T, (const float *)w,
                                                                     (const float *)x, (float *)out);
    return (int)cudaGetLastError();
}

int bf_cuda_prepare(int dbl, void *stream, int64_t bins, int64_t C, const void *psd_n, int loading, double diag_eps,
                    const void *rhs, int64_t nrhs, void *a, void *b, void **aptr, void **bptr)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        prepare_kernel<double><<<blocks_of(bins, 128), 128, 0, s>>>(bins, C, (const double *)psd_n, loading, diag_eps,
                                                                    (const double *)rhs, nrhs, (double *)a,
                                                                    (double *)b, aptr, bptr);
    else
        prepare_kernel<float><<<blocks_of(bins, 128), 128, 0, s>>>(bins, C, (const float *)psd_n, loading, diag_eps,
                                                                   (const float *)rhs, nrhs, (float *)a, (float *)b,
                                                                   aptr, bptr);
    return (int)cudaGetLastError();
}

int bf_cuda_souden_finish(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, const void *n, bf_cuda_ref ref,
                          double eps, void *out)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        souden_finish_kernel<double><<<blocks_of(bins, 128), 128, 0, s>>>(bins, C, F, (const double *)n, ref, eps,
                                                                          (double *)out);
    else
        souden_finish_kernel<float><<<blocks_of(bins, 128), 128, 0, s>>>(bins, C, F, (const float *)n, ref, eps,
                                                                         (float *)out);
    return (int)cudaGetLastError();
}

int bf_cuda_rtf_weights_finish(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, const void *rtf,
                               const void *n, bf_cuda_ref ref, double eps, void *out)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        rtf_weights_finish_kernel<double><<<blocks_of(bins, 128), 128, 0, s>>>(
            bins, C, F, (const double *)rtf, (const double *)n, ref, eps, (double *)out);
    else
        rtf_weights_finish_kernel<float><<<blocks_of(bins, 128), 128, 0, s>>>(
            bins, C, F, (const float *)rtf, (const float *)n, ref, eps, (float *)out);
    return (int)cudaGetLastError();
}

int bf_cuda_rtf_power_finish(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, const void *phi,
                             const void *psd_s, const void *a0, bf_cuda_ref ref, int64_t n_iter, void *out)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        rtf_power_finish_kernel<double><<<blocks_of(bins, 64), 64, 0, s>>>(
            bins, C, F, (const double *)phi, (const double *)psd_s, (const double *)a0, ref, n_iter, (double *)out);
    else
        rtf_power_finish_kernel<float><<<blocks_of(bins, 64), 64, 0, s>>>(
            bins, C, F, (const float *)phi, (const float *)psd_s, (const float *)a0, ref, n_iter, (float *)out);
    return (int)cudaGetLastError();
}

int bf_cuda_last_column(int dbl, void *stream, int64_t bins, int64_t C, const void *v, void *out)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (dbl)
        last_column_kernel<double><<<blocks_of(bins * C, 256), 256, 0, s>>>(bins, C, (const double *)v,
                                                                            (double *)out);
    else
        last_column_kernel<float><<<blocks_of(bins * C, 256), 256, 0, s>>>(bins, C, (const float *)v, (float *)out);
    return (int)cudaGetLastError();
}

}   /* extern "C" */
