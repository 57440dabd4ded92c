/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_cuda_kernels.cu - device code of the deform module (see
** deform_cuda_kernels.h).
**
** deform_conv2d: per image, a deformable im2col kernel (one thread per
** channel x output position, torchvision's sampling rules) fills the
** columns [Cin*kh*kw, Ho*Wo]; a shared-memory tiled GEMM kernel multiplies
** each weight group with its rows and adds the bias. The backward uses the
** same GEMM for grad_columns = W_g^T grad_g and grad_weight += grad_g cols_g^T
** (images in order, so grad_weight is deterministic), a kernel per (offset
** group, tap, position) for grad_offset / grad_mask that loops over the
** group's channels in order and scatters grad_input with atomicAdd (so
** grad_input may differ from run to run in the last bits, as torchvision's
** CUDA kernel does), and one block per channel for grad_bias.
** drop_block / stochastic_depth: elementwise kernels with the counter-based
** draws of rng.h (identical to the cpu kernels' draws); the mask sum
** is a single-block reduction in double in a fixed order.
*/
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "block_sum.cuh"
#include "deform_cuda_kernels.h"
#include "rng.h"

namespace {

const int kThreads = 256;

unsigned blocks_for(int64_t n)
{
    int64_t b = (n + kThreads - 1) / kThreads;
    return (unsigned)(b > 65535 ? 65535 : (b < 1 ? 1 : b));
}

size_t align256(size_t n) { return (n + 255) & ~(size_t)255; }

/* ------------------------------------------------------------ dtype access */

template <typename S> struct io;
template <> struct io<float> {
    typedef float C;
    __device__ static float ld(const float *p, int64_t i) { return p[i]; }
    __device__ static void st(float *p, int64_t i, float v) { p[i] = v; }
    __device__ static float rd(float v) { return v; }
};
template <> struct io<double> {
    typedef double C;
    __device__ static double ld(const double *p, int64_t i) { return p[i]; }
    __device__ static void st(double *p, int64_t i, double v) { p[i] = v; }
    __device__ static double rd(double v) { return v; }
};
template <> struct io<__half> {
    typedef float C;
    __device__ static float ld(const __half *p, int64_t i) { return __half2float(p[i]); }
    __device__ static void st(__half *p, int64_t i, float v) { p[i] = __float2half_rn(v); }
    __device__ static float rd(float v) { return __half2float(__float2half_rn(v)); }
};

__global__ void widen_kernel(const __half *src, float *dst, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = __half2float(src[i]);
}

__global__ void narrow_kernel(const float *src, __half *dst, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        dst[i] = __float2half_rn(src[i]);
}

/* ---------------------------------------------------------------- sampling */

struct geom {
    int64_t n, cin, h, w, cout, kh, kw, groups, og, sh, sw, ph, pw, dh, dw, ho, wo;
    int64_t taps, hw, in_hw, cpo, kg, cout_g;
    int use_mask;
    int half_coords;            /* f16 data: sample positions rounded to half */
};

geom make_geom(const deform_cuda_conv *c)
{
    geom g;
    g.n = c->n; g.cin = c->cin; g.h = c->h; g.w = c->w; g.cout = c->cout; g.kh = c->kh; g.kw = c->kw;
    g.groups = c->groups; g.og = c->offset_groups; g.sh = c->sh; g.sw = c->sw; g.ph = c->ph; g.pw = c->pw;
    g.dh = c->dh; g.dw = c->dw; g.ho = c->ho; g.wo = c->wo;
    g.taps = g.kh * g.kw; g.hw = g.ho * g.wo; g.in_hw = g.h * g.w; g.cpo = g.cin / g.og;
    g.kg = g.cin / g.groups * g.taps; g.cout_g = g.cout / g.groups; g.use_mask = c->use_mask;
    g.half_coords = c->dtype == 3;
    return g;
}

/* Corners of (y, x): offsets, per-corner validity, fractions; valid = the
** bilinear sample is not forced to 0 (torchvision's early-out). */
template <typename T>
struct corners {
    int64_t idx[4];
    bool ok[4];
    T ly, lx;
    bool valid;
    __device__ corners(T y, T x, int64_t h, int64_t w)
    {
        valid = y > -1 && y < (T)h && x > -1 && x < (T)w;
        bool finite = fabs((double)y) < 1e9 && fabs((double)x) < 1e9;
        int64_t yl = finite ? (int64_t)floor((double)y) : 0, xl = finite ? (int64_t)floor((double)x) : 0;
        int64_t yh = yl + 1, xh = xl + 1;
        bool vyl = finite && yl >= 0 && yl < h, vyh = finite && yh >= 0 && yh < h;
        bool vxl = finite && xl >= 0 && xl < w, vxh = finite && xh >= 0 && xh < w;
        ok[0] = vyl && vxl; ok[1] = vyl && vxh; ok[2] = vyh && vxl; ok[3] = vyh && vxh;
        idx[0] = ok[0] ? yl * w + xl : 0; idx[1] = ok[1] ? yl * w + xh : 0;
        idx[2] = ok[2] ? yh * w + xl : 0; idx[3] = ok[3] ? yh * w + xh : 0;
        ly = finite ? y - (T)yl : (T)0;
        lx = finite ? x - (T)xl : (T)0;
        valid = valid && finite;
    }
};

template <typename T>
__device__ void sample_pos(const geom &g, const T *off, const T *msk, int64_t og, int64_t tap, int64_t p,
                           T *y, T *x, T *m)
{
    int64_t oy = p / g.wo, ox = p % g.wo, i = tap / g.kw, j = tap % g.kw;
    *y = (T)(oy * g.sh - g.ph + i * g.dh) + off[(og * 2 * g.taps + 2 * tap) * g.hw + p];
    *x = (T)(ox * g.sw - g.pw + j * g.dw) + off[(og * 2 * g.taps + 2 * tap + 1) * g.hw + p];
    *m = msk != NULL ? msk[(og * g.taps + tap) * g.hw + p] : (T)1;
    if (g.half_coords) {
        *y = (T)__half2float(__float2half_rn((float)*y));
        *x = (T)__half2float(__float2half_rn((float)*x));
    }
}

/* columns[(c*taps + tap)*hw + p] of one image */
template <typename T>
__global__ void im2col_kernel(geom g, const T *in, const T *off, const T *msk, T *cols)
{
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < g.cin * g.hw;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t ch = idx / g.hw, p = idx % g.hw, og = ch / g.cpo;
        const T *src = in + ch * g.in_hw;
        for (int64_t tap = 0; tap < g.taps; tap++) {
            T y, x, m;
            sample_pos(g, off, msk, og, tap, p, &y, &x, &m);
            corners<T> c(y, x, g.h, g.w);
            T v = 0;
            if (c.valid) {
                T hy = 1 - c.ly, hx = 1 - c.lx;
                T w4[4] = { hy * hx, hy * c.lx, c.ly * hx, c.ly * c.lx };
                T s[4];
                for (int k = 0; k < 4; k++)
                    s[k] = c.ok[k] ? src[c.idx[k]] : (T)0;
                v = m * (w4[0] * s[0] + w4[1] * s[1] + w4[2] * s[2] + w4[3] * s[3]);
            }
            cols[(ch * g.taps + tap) * g.hw + p] = v;
        }
    }
}

/* C[M x N] (+)= A[M x K] B[K x N] (+ bias[row]); any element strides for A, B. */
template <typename T>
__global__ void gemm_kernel(int64_t M, int64_t N, int64_t K, const T *A, int64_t ars, int64_t acs, const T *B,
                            int64_t brs, int64_t bcs, T *C, int64_t ldc, const T *bias, int accumulate)
{
    __shared__ T As[16][17], Bs[16][17];
    int64_t row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    T acc = 0;
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
        int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[row * ars + ka * acs] : (T)0;
        Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[kb * brs + col * bcs] : (T)0;
        __syncthreads();
        for (int k = 0; k < 16; k++)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) {
        T v = acc + (bias != NULL ? bias[row] : (T)0);
        if (accumulate)
            v += C[row * ldc + col];
        C[row * ldc + col] = v;
    }
}

template <typename T>
void gemm(int64_t M, int64_t N, int64_t K, const T *A, int64_t ars, int64_t acs, const T *B, int64_t brs,
          int64_t bcs, T *C, int64_t ldc, const T *bias, int accumulate, cudaStream_t s)
{
    if (M <= 0 || N <= 0)
        return;                 /* an empty product (Cout = 0): a 0-block grid would fail to launch */
    dim3 block(16, 16), grid((unsigned)((N + 15) / 16), (unsigned)((M + 15) / 16));
    gemm_kernel<T><<<grid, block, 0, s>>>(M, N, K, A, ars, acs, B, brs, bcs, C, ldc, bias, accumulate);
}

/* grad_offset, grad_mask and the grad_input scatter of one image. */
template <typename T>
__global__ void coord_kernel(geom g, const T *in, const T *off, const T *msk, const T *gcols, T *gin, T *goff,
                             T *gmask)
{
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < g.og * g.taps * g.hw;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t p = idx % g.hw, tap = (idx / g.hw) % g.taps, og = idx / (g.hw * g.taps);
        T y, x, m, go_y = 0, go_x = 0, gm = 0;
        sample_pos(g, off, msk, og, tap, p, &y, &x, &m);
        corners<T> c(y, x, g.h, g.w);
        T hy = 1 - c.ly, hx = 1 - c.lx;
        T bw[4] = { hy * hx, hy * c.lx, c.ly * hx, c.ly * c.lx };
        T yl = y - c.ly, xl = x - c.lx;
        T sy[2] = { 1 - (y - yl), 1 - ((yl + 1) - y) }, sx[2] = { 1 - (x - xl), 1 - ((xl + 1) - x) };
        T cw[4] = { sy[0] * sx[0], sy[0] * sx[1], sy[1] * sx[0], sy[1] * sx[1] };
        for (int64_t ch = og * g.cpo; ch < (og + 1) * g.cpo; ch++) {
            const T *src = in + ch * g.in_hw;
            T gc = gcols[(ch * g.taps + tap) * g.hw + p], v[4];
            for (int k = 0; k < 4; k++)
                v[k] = c.ok[k] ? src[c.idx[k]] : (T)0;
            T wy = c.lx * (v[3] - v[1]) + (1 - c.lx) * (v[2] - v[0]);
            T wx = c.ly * (v[3] - v[2]) + (1 - c.ly) * (v[1] - v[0]);
            go_y += m * wy * gc;
            go_x += m * wx * gc;
            if (c.valid) {
                if (msk != NULL)
                    gm += gc * (bw[0] * v[0] + bw[1] * v[1] + bw[2] * v[2] + bw[3] * v[3]);
                for (int k = 0; k < 4; k++)
                    if (c.ok[k])
                        atomicAdd(gin + ch * g.in_hw + c.idx[k], m * cw[k] * gc);
            }
        }
        goff[(og * 2 * g.taps + 2 * tap) * g.hw + p] = go_y;
        goff[(og * 2 * g.taps + 2 * tap + 1) * g.hw + p] = go_x;
        if (msk != NULL)
            gmask[(og * g.taps + tap) * g.hw + p] = gm;
    }
}

/* grad_bias[o] = sum over n, p of grad; one block per channel, fixed order. */
template <typename T>
__global__ void bias_grad_kernel(geom g, const T *grad, T *gbias)
{
    __shared__ double part[kThreads];
    int64_t o = blockIdx.x;
    double s = 0;
    for (int64_t i = threadIdx.x; i < g.n * g.hw; i += blockDim.x) {
        int64_t img = i / g.hw, p = i % g.hw;
        s += (double)grad[(img * g.cout + o) * g.hw + p];
    }
    const double total = vision_block_sum(part, s);
    if (threadIdx.x == 0)
        gbias[o] = (T)total;
}

/* --------------------------------------------------------------- workspace */

struct carver {
    char *base;
    size_t used;
    void *take(size_t bytes)
    {
        void *p = base != NULL ? base + used : NULL;
        used += align256(bytes);
        return p;
    }
};

/* f32 views of an f16 call (widened into the workspace) or the call itself. */
struct conv_data {
    const void *input, *offset, *weight, *bias, *mask, *grad;
};

size_t elem_size(int32_t dtype) { return dtype == 2 ? sizeof(double) : sizeof(float); }

int64_t n_input(const deform_cuda_conv *c) { return c->n * c->cin * c->h * c->w; }
int64_t n_offset(const deform_cuda_conv *c) { return c->n * 2 * c->offset_groups * c->kh * c->kw * c->ho * c->wo; }
int64_t n_mask(const deform_cuda_conv *c) { return c->n * c->offset_groups * c->kh * c->kw * c->ho * c->wo; }
int64_t n_weight(const deform_cuda_conv *c) { return c->cout * (c->cin / c->groups) * c->kh * c->kw; }
int64_t n_out(const deform_cuda_conv *c) { return c->n * c->cout * c->ho * c->wo; }

const void *widen_into(carver &cv, const void *src, int64_t n, cudaStream_t s)
{
    if (src == NULL)
        return NULL;
    float *dst = static_cast<float *>(cv.take((size_t)n * sizeof(float)));
    if (dst != NULL && n > 0)
        widen_kernel<<<blocks_for(n), kThreads, 0, s>>>(static_cast<const __half *>(src), dst, n);
    return dst;
}

/* Lay out (base NULL: only size) the widened inputs of an f16 call. */
conv_data prepare(const deform_cuda_conv *c, carver &cv, bool backward, cudaStream_t s)
{
    conv_data d = { c->input, c->offset, c->weight, c->bias, c->mask, c->grad };
    if (c->dtype != 3)
        return d;
    d.input = widen_into(cv, c->input, n_input(c), s);
    d.offset = widen_into(cv, c->offset, n_offset(c), s);
    d.weight = widen_into(cv, c->weight, n_weight(c), s);
    d.bias = widen_into(cv, c->bias, c->cout, s);
    d.mask = c->use_mask ? widen_into(cv, c->mask, n_mask(c), s) : NULL;
    d.grad = backward ? widen_into(cv, c->grad, n_out(c), s) : NULL;
    return d;
}

template <typename T>
void forward_typed(const geom &g, const conv_data &d, T *out, T *cols, cudaStream_t s)
{
    const T *in = static_cast<const T *>(d.input), *off = static_cast<const T *>(d.offset);
    const T *msk = static_cast<const T *>(d.mask), *wt = static_cast<const T *>(d.weight);
    const T *bias = static_cast<const T *>(d.bias);
    for (int64_t img = 0; img < g.n; img++) {
        im2col_kernel<T><<<blocks_for(g.cin * g.hw), kThreads, 0, s>>>(
            g, in + img * g.cin * g.in_hw, off + img * 2 * g.og * g.taps * g.hw,
            msk != NULL ? msk + img * g.og * g.taps * g.hw : NULL, cols);
        for (int64_t grp = 0; grp < g.groups; grp++)
            gemm<T>(g.cout_g, g.hw, g.kg, wt + grp * g.cout_g * g.kg, g.kg, 1, cols + grp * g.kg * g.hw, g.hw, 1,
                    out + (img * g.cout + grp * g.cout_g) * g.hw, g.hw,
                    bias != NULL ? bias + grp * g.cout_g : NULL, 0, s);
    }
}

template <typename T>
void backward_typed(const geom &g, const conv_data &d, T *const *outs, T *cols, T *gcols, cudaStream_t s)
{
    const T *in = static_cast<const T *>(d.input), *off = static_cast<const T *>(d.offset);
    const T *msk = static_cast<const T *>(d.mask), *wt = static_cast<const T *>(d.weight);
    const T *grad = static_cast<const T *>(d.grad);
    /* nothing to clear or launch for an empty gradient (Cout = 0 or N = 0
    ** leave some of them empty; a grid of 0 blocks is a launch error) */
    if (g.n * g.cin * g.in_hw > 0)
        cudaMemsetAsync(outs[0], 0, (size_t)(g.n * g.cin * g.in_hw) * sizeof(T), s);
    if (g.cout * g.kg > 0)
        cudaMemsetAsync(outs[1], 0, (size_t)(g.cout * g.kg) * sizeof(T), s);
    if (g.cout > 0)
        bias_grad_kernel<T><<<(unsigned)g.cout, kThreads, 0, s>>>(g, grad, outs[4]);
    for (int64_t img = 0; img < g.n; img++) {
        const T *gr = grad + img * g.cout * g.hw, *im = in + img * g.cin * g.in_hw;
        const T *of = off + img * 2 * g.og * g.taps * g.hw;
        const T *mk = msk != NULL ? msk + img * g.og * g.taps * g.hw : NULL;
        im2col_kernel<T><<<blocks_for(g.cin * g.hw), kThreads, 0, s>>>(g, im, of, mk, cols);
        for (int64_t grp = 0; grp < g.groups; grp++) {
            const T *wg = wt + grp * g.cout_g * g.kg, *gg = gr + grp * g.cout_g * g.hw;
            /* gcols_g [kg x hw] = W_g^T [kg x cout_g] * grad_g [cout_g x hw] */
            gemm<T>(g.kg, g.hw, g.cout_g, wg, 1, g.kg, gg, g.hw, 1, gcols + grp * g.kg * g.hw, g.hw, NULL, 0, s);
            /* grad_weight_g [cout_g x kg] += grad_g [cout_g x hw] * cols_g^T [hw x kg] */
            gemm<T>(g.cout_g, g.kg, g.hw, gg, g.hw, 1, cols + grp * g.kg * g.hw, 1, g.hw,
                    outs[1] + grp * g.cout_g * g.kg, g.kg, NULL, 1, s);
        }
        coord_kernel<T><<<blocks_for(g.og * g.taps * g.hw), kThreads, 0, s>>>(
            g, im, of, mk, gcols, outs[0] + img * g.cin * g.in_hw, outs[2] + img * 2 * g.og * g.taps * g.hw,
            mk != NULL ? outs[3] + img * g.og * g.taps * g.hw : NULL);
    }
}

size_t conv_workspace(const deform_cuda_conv *c, bool backward)
{
    carver cv = { NULL, 0 };
    prepare(c, cv, backward, 0);
    size_t es = elem_size(c->dtype);
    int64_t cols = c->cin * c->kh * c->kw * c->ho * c->wo;
    cv.take((size_t)cols * es * (backward ? 2 : 1));
    if (c->dtype == 3) {
        if (backward) {
            cv.take((size_t)n_input(c) * sizeof(float));
            cv.take((size_t)n_weight(c) * sizeof(float));
            cv.take((size_t)n_offset(c) * sizeof(float));
            cv.take((size_t)n_mask(c) * sizeof(float));
            cv.take((size_t)c->cout * sizeof(float));
        } else {
            cv.take((size_t)n_out(c) * sizeof(float));
        }
    }
    return cv.used;
}

/* ---------------------------------------------------------------- dropout */

template <typename S>
__global__ void drop_block_mask_kernel(deform_cuda_drop_block d, const S *noise, typename io<S>::C *mask)
{
    typedef typename io<S>::C C;
    int64_t sp0 = d.sp[0], sp1 = d.sp[1], sp2 = d.dims == 3 ? d.sp[2] : 1;
    int64_t n0 = d.nsp[0], n1 = d.nsp[1], n2 = d.dims == 3 ? d.nsp[2] : 1;
    int64_t r = d.bs / 2, r2 = d.dims == 3 ? r : 0, plane = sp0 * sp1 * sp2, nplane = n0 * n1 * n2;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < d.numel;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t pl = i / plane, rem = i % plane, z = rem / (sp1 * sp2), y = (rem / sp2) % sp1, x = rem % sp2;
        int64_t z0 = z - r < 0 ? 0 : z - r, z1 = z + r >= sp0 ? sp0 - 1 : z + r;
        int64_t y0 = y - r < 0 ? 0 : y - r, y1 = y + r >= sp1 ? sp1 - 1 : y + r;
        int64_t x0 = x - r2 < 0 ? 0 : x - r2, x1 = x + r2 >= sp2 ? sp2 - 1 : x + r2;
        C m = 0;
        bool first = true;
        for (int64_t a = z0; a <= z1; a++)
            for (int64_t b = y0; b <= y1; b++)
                for (int64_t e = x0; e <= x1; e++) {
                    int64_t nz = a - r, ny = b - r, nx = e - r2;
                    C v = 0;
                    if (nz >= 0 && nz < n0 && ny >= 0 && ny < n1 && nx >= 0 && nx < n2) {
                        int64_t k = pl * nplane + (nz * n1 + ny) * n2 + nx;
                        v = noise != NULL ? io<S>::ld(noise, k)
                                          : (C)pk_rng_bernoulli(d.seed, (uint64_t)k, d.gamma);
                    }
                    if (first || v > m || isnan(v))
                        m = v;
                    first = false;
                }
        mask[i] = io<S>::rd((C)1 - m);
    }
}

/* One block: sum of the mask in double (fixed order), then the scale. */
template <typename S>
__global__ void drop_block_scale_kernel(deform_cuda_drop_block d, const typename io<S>::C *mask, double *scale)
{
    typedef typename io<S>::C C;
    __shared__ double part[1024];
    double s = 0;
    for (int64_t i = threadIdx.x; i < d.numel; i += blockDim.x)
        s += (double)mask[i];
    const double total = vision_block_sum(part, s);
    if (threadIdx.x == 0) {
        C sum = io<S>::rd((C)total);
        C den = io<S>::rd((C)d.eps + sum);
        C rec = io<S>::rd((C)1 / den);
        *scale = (double)io<S>::rd(rec * (C)d.numel);
    }
}

template <typename S>
__global__ void drop_block_apply_kernel(int64_t n, const S *in, const typename io<S>::C *mask, const double *scale,
                                        S *out)
{
    typedef typename io<S>::C C;
    C sc = (C)*scale;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        io<S>::st(out, i, io<S>::rd(io<S>::rd(io<S>::ld(in, i) * mask[i]) * sc));
}

template <typename S>
int drop_block_typed(const deform_cuda_drop_block *d, void *out, void *ws, cudaStream_t s)
{
    typedef typename io<S>::C C;
    C *mask = static_cast<C *>(ws);
    double *scale = reinterpret_cast<double *>(static_cast<char *>(ws) + align256((size_t)d->numel * sizeof(C)));
    drop_block_mask_kernel<S><<<blocks_for(d->numel), kThreads, 0, s>>>(*d, static_cast<const S *>(d->noise), mask);
    drop_block_scale_kernel<S><<<1, 1024, 0, s>>>(*d, mask, scale);
    drop_block_apply_kernel<S><<<blocks_for(d->numel), kThreads, 0, s>>>(d->numel, static_cast<const S *>(d->input),
                                                                         mask, scale, static_cast<S *>(out));
    return (int)cudaGetLastError();
}

template <typename S>
__global__ void stochastic_depth_kernel(deform_cuda_stochastic_depth d, const S *in, const S *noise, S *out)
{
    typedef typename io<S>::C C;
    double survival = 1.0 - d.p;
    int64_t n = d.rows * d.row_len;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t row = i / d.row_len;
        C f = noise != NULL ? io<S>::ld(noise, row) : (C)pk_rng_bernoulli(d.seed, (uint64_t)row, survival);
        if (survival > 0.0)
            f = io<S>::rd(f / (C)survival);
        io<S>::st(out, i, io<S>::rd(io<S>::ld(in, i) * f));
    }
}

} // namespace

extern "C" size_t deform_cuda_forward_workspace(const deform_cuda_conv *c) { return conv_workspace(c, false); }
extern "C" size_t deform_cuda_backward_workspace(const deform_cuda_conv *c) { return conv_workspace(c, true); }

extern "C" int deform_cuda_forward(const deform_cuda_conv *c, void *out, void *ws, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    carver cv = { static_cast<char *>(ws), 0 };
    geom g = make_geom(c);
    conv_data d = prepare(c, cv, false, s);
    int64_t ncols = g.cin * g.taps * g.hw;
    if (c->dtype == 2) {
        forward_typed<double>(g, d, static_cast<double *>(out), static_cast<double *>(cv.take((size_t)ncols * 8)), s);
    } else {
        float *cols = static_cast<float *>(cv.take((size_t)ncols * 4));
        float *o = c->dtype == 3 ? static_cast<float *>(cv.take((size_t)n_out(c) * 4)) : static_cast<float *>(out);
        forward_typed<float>(g, d, o, cols, s);
        if (c->dtype == 3 && n_out(c) > 0)
            narrow_kernel<<<blocks_for(n_out(c)), kThreads, 0, s>>>(o, static_cast<__half *>(out), n_out(c));
    }
    return (int)cudaGetLastError();
}

extern "C" int deform_cuda_backward(const deform_cuda_conv *c, void *const *outs, void *ws, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    carver cv = { static_cast<char *>(ws), 0 };
    geom g = make_geom(c);
    conv_data d = prepare(c, cv, true, s);
    int64_t ncols = g.cin * g.taps * g.hw;
    if (c->dtype == 2) {
        double *o[5];
        for (int i = 0; i < 5; i++)
            o[i] = static_cast<double *>(outs[i]);
        double *cols = static_cast<double *>(cv.take((size_t)ncols * 8 * 2));
        backward_typed<double>(g, d, o, cols, cols + ncols, s);
        return (int)cudaGetLastError();
    }
    float *cols = static_cast<float *>(cv.take((size_t)ncols * 4 * 2)), *o[5];
    const int64_t counts[5] = { n_input(c), n_weight(c), n_offset(c), n_mask(c), c->cout };
    for (int i = 0; i < 5; i++)
        o[i] = c->dtype == 3 ? static_cast<float *>(cv.take((size_t)counts[i] * 4)) : static_cast<float *>(outs[i]);
    backward_typed<float>(g, d, o, cols, cols + ncols, s);
    if (c->dtype == 3)
        for (int i = 0; i < 5; i++)
            if ((i != 3 || c->use_mask) && counts[i] > 0)
                narrow_kernel<<<blocks_for(counts[i]), kThreads, 0, s>>>(o[i], static_cast<__half *>(outs[i]),
                                                                         counts[i]);
    return (int)cudaGetLastError();
}

extern "C" size_t deform_cuda_drop_block_workspace(const deform_cuda_drop_block *d)
{
    return align256((size_t)d->numel * elem_size(d->dtype)) + 256;
}

extern "C" int deform_cuda_drop_block_run(const deform_cuda_drop_block *d, void *out, void *ws, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    switch (d->dtype) {
    case 1: return drop_block_typed<float>(d, out, ws, s);
    case 2: return drop_block_typed<double>(d, out, ws, s);
    default: return drop_block_typed<__half>(d, out, ws, s);
    }
}

extern "C" int deform_cuda_stochastic_depth_run(const deform_cuda_stochastic_depth *sd, void *out, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    unsigned b = blocks_for(sd->rows * sd->row_len);
    switch (sd->dtype) {
    case 1:
        stochastic_depth_kernel<float><<<b, kThreads, 0, s>>>(*sd, static_cast<const float *>(sd->input),
                                                              static_cast<const float *>(sd->noise),
                                                              static_cast<float *>(out));
        break;
    case 2:
        stochastic_depth_kernel<double><<<b, kThreads, 0, s>>>(*sd, static_cast<const double *>(sd->input),
                                                               static_cast<const double *>(sd->noise),
                                                               static_cast<double *>(out));
        break;
    default:
        stochastic_depth_kernel<__half><<<b, kThreads, 0, s>>>(*sd, static_cast<const __half *>(sd->input),
                                                               static_cast<const __half *>(sd->noise),
                                                               static_cast<__half *>(out));
        break;
    }
    return (int)cudaGetLastError();
}
