/* SPDX-License-Identifier: BSD-3-Clause */
/*
** spectral_kernels.cu - the cuFFT engine of audio-cuda.so (see
** spectral_kernels.h). The same steps as the cpu engine (stft_cpu_tmpl.h):
** frames are windowed into a [batch * n_frames, n_fft] array, transformed
** by one batched cuFFT plan (R2C / D2Z forward, C2R / Z2D inverse; C2C /
** Z2Z for a complex signal or a complex istft output), and
** laid out as (..., freq, frames); the inverse overlap-adds per output
** sample (one thread each, no atomics) and divides by the envelope the host
** computed. A plan is made per call and destroyed after the stream has run
** it (cuFFT's plans are not safe to share between streams).
*/
#include <cuda_runtime.h>
#include <cufft.h>
#include <stdio.h>

#include "spectral_kernels.h"

enum { PAD_REFLECT, PAD_CONSTANT, PAD_REPLICATE, PAD_CIRCULAR };
enum { OUT_COMPLEX, OUT_REAL_PAIRS, OUT_POWER };

template <typename T> struct cplx;
template <> struct cplx<float> { typedef cufftComplex type; };
template <> struct cplx<double> { typedef cufftDoubleComplex type; };

static size_t round256(size_t n) { return (n + 255) & ~(size_t)255; }

/* the sample of x at padded position q, or -1 for a zero */
__device__ inline int64_t padded_index(int64_t length, int64_t pad, int mode, int64_t q)
{
    const int64_t lp = length + 2 * pad;
    if (q < 0 || q >= lp) {
        if (mode == PAD_REFLECT) q = q < 0 ? -q : 2 * (lp - 1) - q;
        else if (mode == PAD_REPLICATE) q = q < 0 ? 0 : lp - 1;
        else if (mode == PAD_CIRCULAR) q = ((q % lp) + lp) % lp;
        else return -1;
    }
    q -= pad;
    return q >= 0 && q < length ? q : -1;
}

template <typename T>
__device__ T padded_at(const T *x, int64_t length, int64_t pad, int mode, int64_t q)
{
    const int64_t lp = length + 2 * pad;
    if (q < 0 || q >= lp) {
        if (mode == PAD_REFLECT) q = q < 0 ? -q : 2 * (lp - 1) - q;
        else if (mode == PAD_REPLICATE) q = q < 0 ? 0 : lp - 1;
        else if (mode == PAD_CIRCULAR) q = ((q % lp) + lp) % lp;
        else return T(0);
    }
    q -= pad;
    return q >= 0 && q < length ? x[q] : T(0);
}

/* one thread per (frame, sample): frames[f, j] = padded(x_b)[m hop + j] w[j] */
template <typename T>
__global__ void frame_kernel(audio_cu_geom g, const T *x, const T *w, T *frames)
{
    const int64_t total = g.batch * g.n_frames * g.n_fft;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = i % g.n_fft, f = i / g.n_fft, m = f % g.n_frames, b = f / g.n_frames;
        const T v = w[j];
        frames[i] = v == T(0) ? T(0)
                              : padded_at(x + b * g.length, g.length, g.pad, g.pad_mode, m * g.hop + j - g.center_pad) * v;
    }
}

/* complex x: one thread per (frame, sample), both parts */
template <typename T>
__global__ void frame_c_kernel(audio_cu_geom g, const T *x, const T *w, T *frames)
{
    const int64_t total = g.batch * g.n_frames * g.n_fft;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t j = i % g.n_fft, f = i / g.n_fft, m = f % g.n_frames, b = f / g.n_frames;
        const T v = w[j];
        T re = T(0), im = T(0);
        if (v != T(0)) {
            const int64_t q = padded_index(g.length, g.pad, g.pad_mode, m * g.hop + j - g.center_pad);
            if (q >= 0) {
                re = x[2 * (b * g.length + q)] * v;
                im = x[2 * (b * g.length + q) + 1] * v;
            }
        }
        frames[2 * i] = re;
        frames[2 * i + 1] = im;
    }
}

/* one thread per output value: out[b, k, m] from spec[(b, m), k'] */
template <typename T>
__global__ void layout_kernel(audio_cu_geom g, const T *spec, T *out)
{
    const int64_t half = g.n_fft / 2 + 1, total = g.batch * g.n_freq * g.n_frames;
    const T scale = (T)g.scale;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t m = i % g.n_frames, k = (i / g.n_frames) % g.n_freq, b = i / (g.n_frames * g.n_freq);
        /* a real signal's two-sided spectrum mirrors: X[n - k] = conj(X[k]); a complex one has all n_fft bins */
        const int mirror = !g.complex_in && k >= half;
        const int64_t kk = mirror ? g.n_fft - k : k;
        const T *c = spec + 2 * ((b * g.n_frames + m) * (g.complex_in ? g.n_fft : half) + kk);
        const T re = c[0] * scale, im = mirror ? -(c[1] * scale) : c[1] * scale;
        if (g.out_kind == OUT_POWER) {
            const T sq = re * re + im * im;
            out[i] = g.power == 2.0 ? sq : g.power == 1.0 ? sqrt(sq) : pow(sqrt(sq), (T)g.power);
        } else {
            out[2 * i] = re;
            out[2 * i + 1] = im;
        }
    }
}

/* one thread per (frame, bin) of the first half: the transposed input of C2R */
template <typename T>
__global__ void gather_kernel(audio_cu_geom g, const T *spec, T *c)
{
    const int64_t half = g.n_fft / 2 + 1, total = g.batch * g.n_frames * half;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = i % half, f = i / half, m = f % g.n_frames, b = f / g.n_frames;
        const T *s = spec + 2 * ((b * g.n_freq + k) * g.n_frames + m);
        c[2 * i] = s[0];
        /* a real signal's DC and Nyquist bins are real: irfft ignores their imaginary parts */
        c[2 * i + 1] = k == 0 || (g.n_fft % 2 == 0 && k == half - 1) ? T(0) : s[1];
    }
}

/* return_complex: one thread per (frame, bin) of all n_fft bins, the input of the inverse C2C */
template <typename T>
__global__ void gather_c_kernel(audio_cu_geom g, const T *spec, T *c)
{
    const int64_t total = g.batch * g.n_frames * g.n_fft;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = i % g.n_fft, f = i / g.n_fft, m = f % g.n_frames, b = f / g.n_frames;
        const T *s = spec + 2 * ((b * g.n_freq + k) * g.n_frames + m);
        c[2 * i] = s[0];
        c[2 * i + 1] = s[1];
    }
}

/* return_complex: one thread per complex output sample */
template <typename T>
__global__ void ola_c_kernel(audio_cu_geom g, const T *frames, const T *w, const T *inv, T *out)
{
    const int64_t row = g.out_len - 2 * g.trim, total = g.batch * row;
    const T scale = (T)g.scale;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = i % row, b = i / row, t = o + g.trim;
        T re = T(0), im = T(0);
        if (t < g.out_valid) {
            const int64_t p = t + g.start;
            const int64_t m_lo = p - g.n_fft + 1 > 0 ? (p - g.n_fft + 1 + g.hop - 1) / g.hop : 0;
            const int64_t m_hi = p / g.hop < g.n_frames - 1 ? p / g.hop : g.n_frames - 1;
            for (int64_t m = m_lo; m <= m_hi; m++) {
                const int64_t j = p - m * g.hop;
                const T *fr = frames + 2 * ((b * g.n_frames + m) * g.n_fft + j);
                re += fr[0] * scale * w[j];
                im += fr[1] * scale * w[j];
            }
            re *= inv[t];
            im *= inv[t];
        }
        out[2 * i] = re;
        out[2 * i + 1] = im;
    }
}

/* one thread per output sample: the frames over it, scaled, windowed, over the envelope */
template <typename T>
__global__ void ola_kernel(audio_cu_geom g, const T *frames, const T *w, const T *inv, T *out)
{
    const int64_t row = g.out_len - 2 * g.trim, total = g.batch * row;
    const T scale = (T)g.scale;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t o = i % row, b = i / row, t = o + g.trim;
        T acc = T(0);
        if (t < g.out_valid) {
            const int64_t p = t + g.start;
            const int64_t m_lo = p - g.n_fft + 1 > 0 ? (p - g.n_fft + 1 + g.hop - 1) / g.hop : 0;
            const int64_t m_hi = p / g.hop < g.n_frames - 1 ? p / g.hop : g.n_frames - 1;
            for (int64_t m = m_lo; m <= m_hi; m++) {
                const int64_t j = p - m * g.hop;
                acc += frames[(b * g.n_frames + m) * g.n_fft + j] * scale * w[j];
            }
            acc *= inv[t];
        }
        out[i] = acc;
    }
}

template <typename T>
__global__ void mel_kernel(audio_cu_geom g, const T *fb, int64_t n_mels, const T *spec, T *out)
{
    const int64_t total = g.batch * n_mels * g.n_frames;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t t = i % g.n_frames, mel = (i / g.n_frames) % n_mels, b = i / (g.n_frames * n_mels);
        const T *s = spec + b * g.n_freq * g.n_frames + t;
        T acc = T(0);
        for (int64_t f = 0; f < g.n_freq; f++)
            acc += fb[f * n_mels + mel] * s[f * g.n_frames];
        out[i] = acc;
    }
}

/* AmplitudeToDB('power', amin 1e-10, ref 1.0, top_db) or log(x + 1e-6), in
** place: one block per item of `group` values (torchaudio's amax over the
** packed (channel, mel, time) dims), max(10 log10(max(x, 1e-10)), peak -
** top_db). The arithmetic is the cpu kernel's: in double, rounded to T,
** the floor in T (torch subtracts top_db from the f32 peak in f32). */
#define DB_THREADS 256
template <typename T>
__global__ void db_kernel(T *x, int64_t n_groups, int64_t group, int log_mels, double top_db)
{
    __shared__ T peaks[DB_THREADS];
    for (int64_t g0 = blockIdx.x; g0 < n_groups; g0 += gridDim.x) {
        T *v = x + g0 * group;
        T peak = -INFINITY;
        for (int64_t i = threadIdx.x; i < group; i += DB_THREADS) {
            const double y = (double)v[i];
            const T d = (T)(log_mels ? log(y + 1e-6) : 10.0 * log10(y > 1e-10 ? y : 1e-10));
            v[i] = d;
            peak = d > peak ? d : peak;
        }
        if (log_mels)
            continue;
        peaks[threadIdx.x] = peak;
        __syncthreads();
        for (int half = DB_THREADS / 2; half > 0; half /= 2) {
            if (threadIdx.x < half && peaks[threadIdx.x + half] > peaks[threadIdx.x])
                peaks[threadIdx.x] = peaks[threadIdx.x + half];
            __syncthreads();
        }
        const T floor_db = (T)(peaks[0] - (T)top_db);
        for (int64_t i = threadIdx.x; i < group; i += DB_THREADS)
            v[i] = v[i] > floor_db ? v[i] : floor_db;
        __syncthreads();   /* peaks is reused by the next item */
    }
}

static unsigned blocks_for(int64_t n)
{
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 65535 ? 65535 : b);
}

static int failed(cudaError_t e, const char *what, char *err, size_t size)
{
    if (e == cudaSuccess)
        return 0;
    snprintf(err, size, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    return 1;
}

static int fft_failed(cufftResult r, const char *what, char *err, size_t size)
{
    if (r == CUFFT_SUCCESS)
        return 0;
    snprintf(err, size, "%s: cuFFT error %d", what, (int)r);
    return 1;
}

/* A batched plan of `count` transforms of size n, on stream. */
static int make_plan(cufftHandle *plan, int64_t n, int64_t count, cufftType type, cudaStream_t stream, char *err,
                     size_t size)
{
    if (n > INT32_MAX || count > INT32_MAX) {
        snprintf(err, size, "cuFFT takes at most 2^31 - 1 transforms of at most 2^31 - 1 points");
        return 1;
    }
    int dims[1] = { (int)n };
    const int c2c = type == CUFFT_C2C || type == CUFFT_Z2Z;
    const int real_dist = (int)n, complex_dist = c2c ? (int)n : (int)(n / 2 + 1);
    const int forward = type == CUFFT_R2C || type == CUFFT_D2Z;
    const int idist = c2c ? complex_dist : forward ? real_dist : complex_dist;
    const int odist = c2c ? complex_dist : forward ? complex_dist : real_dist;
    if (fft_failed(cufftPlanMany(plan, 1, dims, NULL, 1, idist, NULL, 1, odist, type, (int)count), "cufftPlanMany",
                   err, size))
        return 1;
    if (fft_failed(cufftSetStream(*plan, stream), "cufftSetStream", err, size)) {
        cufftDestroy(*plan);
        return 1;
    }
    return 0;
}

/* the plan may only go once the stream has run it */
static int finish_plan(cufftHandle plan, cudaStream_t stream, char *err, size_t size)
{
    cudaError_t e = cudaStreamSynchronize(stream);
    cufftDestroy(plan);
    return failed(e, "cuFFT on the call's stream", err, size);
}

extern "C" size_t audio_cu_forward_scratch(const audio_cu_geom *g)
{
    const size_t es = g->f64 ? 8 : 4, n = (size_t)(g->batch * g->n_frames);
    if (g->complex_in || g->complex_out)   /* n_fft complex values each way */
        return 2 * round256(n * (size_t)g->n_fft * 2 * es);
    return round256(n * (size_t)g->n_fft * es) + round256(n * (size_t)(g->n_fft / 2 + 1) * 2 * es);
}

extern "C" size_t audio_cu_inverse_scratch(const audio_cu_geom *g) { return audio_cu_forward_scratch(g); }

/* the C2C steps of a complex signal (forward) or output (inverse); frames and spec are n x n_fft complex */
template <typename T>
static int exec_c2c(cufftHandle plan, T *in, T *out, int dir)
{
    return sizeof(T) == 8 ? cufftExecZ2Z(plan, (cufftDoubleComplex *)in, (cufftDoubleComplex *)out, dir)
                          : cufftExecC2C(plan, (cufftComplex *)in, (cufftComplex *)out, dir);
}

template <typename T>
static int forward_c(const audio_cu_geom *g, const void *x, const void *w, void *out, void *scratch, cudaStream_t s,
                     char *err, size_t size)
{
    const int64_t n = g->batch * g->n_frames;
    T *frames = (T *)scratch;
    T *spec = (T *)((char *)scratch + round256((size_t)(n * g->n_fft) * 2 * sizeof(T)));
    frame_c_kernel<T><<<blocks_for(n * g->n_fft), 256, 0, s>>>(*g, (const T *)x, (const T *)w, frames);
    if (failed(cudaGetLastError(), "framing kernel", err, size))
        return 1;
    cufftHandle plan;
    if (make_plan(&plan, g->n_fft, n, sizeof(T) == 8 ? CUFFT_Z2Z : CUFFT_C2C, s, err, size))
        return 1;
    if (fft_failed((cufftResult)exec_c2c<T>(plan, frames, spec, CUFFT_FORWARD), "cufftExec forward C2C", err,
                   size)) {
        cufftDestroy(plan);
        return 1;
    }
    layout_kernel<T><<<blocks_for(g->batch * g->n_freq * g->n_frames), 256, 0, s>>>(*g, spec, (T *)out);
    if (failed(cudaGetLastError(), "layout kernel", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    return finish_plan(plan, s, err, size);
}

template <typename T>
static int inverse_c(const audio_cu_geom *g, const void *spec, const void *w, const void *inv, void *out,
                     void *scratch, cudaStream_t s, char *err, size_t size)
{
    const int64_t n = g->batch * g->n_frames;
    T *frames = (T *)scratch;
    T *c = (T *)((char *)scratch + round256((size_t)(n * g->n_fft) * 2 * sizeof(T)));
    gather_c_kernel<T><<<blocks_for(n * g->n_fft), 256, 0, s>>>(*g, (const T *)spec, c);
    if (failed(cudaGetLastError(), "gather kernel", err, size))
        return 1;
    cufftHandle plan;
    if (make_plan(&plan, g->n_fft, n, sizeof(T) == 8 ? CUFFT_Z2Z : CUFFT_C2C, s, err, size))
        return 1;
    if (fft_failed((cufftResult)exec_c2c<T>(plan, c, frames, CUFFT_INVERSE), "cufftExec inverse C2C", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    const int64_t total = g->batch * (g->out_len - 2 * g->trim);
    if (total > 0)
        ola_c_kernel<T><<<blocks_for(total), 256, 0, s>>>(*g, frames, (const T *)w, (const T *)inv, (T *)out);
    if (failed(cudaGetLastError(), "overlap-add kernel", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    return finish_plan(plan, s, err, size);
}

template <typename T>
static int forward(const audio_cu_geom *g, const void *x, const void *w, void *out, void *scratch, cudaStream_t s,
                   char *err, size_t size)
{
    const int64_t n = g->batch * g->n_frames;
    T *frames = (T *)scratch;
    T *spec = (T *)((char *)scratch + round256((size_t)(n * g->n_fft) * sizeof(T)));
    frame_kernel<T><<<blocks_for(n * g->n_fft), 256, 0, s>>>(*g, (const T *)x, (const T *)w, frames);
    if (failed(cudaGetLastError(), "framing kernel", err, size))
        return 1;
    cufftHandle plan;
    if (make_plan(&plan, g->n_fft, n, sizeof(T) == 8 ? CUFFT_D2Z : CUFFT_R2C, s, err, size))
        return 1;
    cufftResult r = sizeof(T) == 8
        ? cufftExecD2Z(plan, (cufftDoubleReal *)frames, (cufftDoubleComplex *)spec)
        : cufftExecR2C(plan, (cufftReal *)frames, (cufftComplex *)spec);
    if (fft_failed(r, "cufftExec forward", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    layout_kernel<T><<<blocks_for(g->batch * g->n_freq * g->n_frames), 256, 0, s>>>(*g, spec, (T *)out);
    if (failed(cudaGetLastError(), "layout kernel", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    return finish_plan(plan, s, err, size);
}

template <typename T>
static int inverse(const audio_cu_geom *g, const void *spec, const void *w, const void *inv, void *out, void *scratch,
                   cudaStream_t s, char *err, size_t size)
{
    const int64_t n = g->batch * g->n_frames, half = g->n_fft / 2 + 1;
    T *frames = (T *)scratch;
    T *c = (T *)((char *)scratch + round256((size_t)(n * g->n_fft) * sizeof(T)));
    gather_kernel<T><<<blocks_for(n * half), 256, 0, s>>>(*g, (const T *)spec, c);
    if (failed(cudaGetLastError(), "gather kernel", err, size))
        return 1;
    cufftHandle plan;
    if (make_plan(&plan, g->n_fft, n, sizeof(T) == 8 ? CUFFT_Z2D : CUFFT_C2R, s, err, size))
        return 1;
    cufftResult r = sizeof(T) == 8
        ? cufftExecZ2D(plan, (cufftDoubleComplex *)c, (cufftDoubleReal *)frames)
        : cufftExecC2R(plan, (cufftComplex *)c, (cufftReal *)frames);
    if (fft_failed(r, "cufftExec inverse", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    const int64_t total = g->batch * (g->out_len - 2 * g->trim);
    if (total > 0)
        ola_kernel<T><<<blocks_for(total), 256, 0, s>>>(*g, frames, (const T *)w, (const T *)inv, (T *)out);
    if (failed(cudaGetLastError(), "overlap-add kernel", err, size)) {
        cufftDestroy(plan);
        return 1;
    }
    return finish_plan(plan, s, err, size);
}

extern "C" int audio_cu_forward(const audio_cu_geom *g, const void *x, const void *window, void *out, void *scratch,
                                void *stream, char *err, size_t err_size)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (g->complex_in)
        return g->f64 ? forward_c<double>(g, x, window, out, scratch, s, err, err_size)
                      : forward_c<float>(g, x, window, out, scratch, s, err, err_size);
    return g->f64 ? forward<double>(g, x, window, out, scratch, s, err, err_size)
                  : forward<float>(g, x, window, out, scratch, s, err, err_size);
}

extern "C" int audio_cu_inverse(const audio_cu_geom *g, const void *spec, const void *window, const void *inv_env,
                                void *out, void *scratch, void *stream, char *err, size_t err_size)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (g->complex_out)
        return g->f64 ? inverse_c<double>(g, spec, window, inv_env, out, scratch, s, err, err_size)
                      : inverse_c<float>(g, spec, window, inv_env, out, scratch, s, err, err_size);
    return g->f64 ? inverse<double>(g, spec, window, inv_env, out, scratch, s, err, err_size)
                  : inverse<float>(g, spec, window, inv_env, out, scratch, s, err, err_size);
}

extern "C" int audio_cu_mel(const audio_cu_geom *g, const void *fb, int64_t n_mels, const void *spec, void *out,
                            void *stream, char *err, size_t err_size)
{
    cudaStream_t s = (cudaStream_t)stream;
    const int64_t total = g->batch * n_mels * g->n_frames;
    if (g->f64)
        mel_kernel<double><<<blocks_for(total), 256, 0, s>>>(*g, (const double *)fb, n_mels, (const double *)spec,
                                                             (double *)out);
    else
        mel_kernel<float><<<blocks_for(total), 256, 0, s>>>(*g, (const float *)fb, n_mels, (const float *)spec,
                                                            (float *)out);
    return failed(cudaGetLastError(), "mel kernel", err, err_size);
}

extern "C" int audio_cu_db(int f64, void *x, int64_t total, int64_t group, int log_mels, double top_db, void *stream,
                           char *err, size_t err_size)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (total <= 0 || group <= 0)
        return 0;
    const int64_t n_groups = total / group;
    const unsigned blocks = (unsigned)(n_groups < 65535 ? n_groups : 65535);
    if (f64)
        db_kernel<double><<<blocks, DB_THREADS, 0, s>>>((double *)x, n_groups, group, log_mels, top_db);
    else
        db_kernel<float><<<blocks, DB_THREADS, 0, s>>>((float *)x, n_groups, group, log_mels, top_db);
    return failed(cudaGetLastError(), "decibel kernel", err, err_size);
}
