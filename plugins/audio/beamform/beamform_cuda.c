/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_cuda.c - the cuda kernels of the beamforming functions and the
** beamform module of audio-cuda.so: the checks of beamform_checks.c, then
** the device code of beamform_kernels.cu and the batched solvers on the
** call's stream: cuBLAS getrfBatched/getrsBatched (the LU solve, as
** torch.linalg.solve and the cpu's LAPACK gesv) and cuSOLVER's batched
** Jacobi eigensolver heevjBatched (rtf_evd; eigenvalues sorted ascending,
** the last column is the RTF).
**
** Two checks need the data on the host, as on the cpu and with the same
** messages: the PSDs are copied back to be checked Hermitian, and the LU
** factorisations' info array to find a singular noise PSD. Both wait for
** the stream; the rest is asynchronous. The object classes run on the cpu
** only (their methods have no cuda kernel).
**
** The cuda kernels take up to 31 channels (BF_CUDA_MAX_CHANNELS: the psd
** kernel's pairs per block and heevjBatched's n <= 32); supports() declines
** more, with the reason.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"   /* one declaration of cusolverDn.h */
#include <cusolverDn.h>
#pragma GCC diagnostic pop

#include "beamform.h"
#include "beamform_kernels.h"

#define BF_CUDA_MAX_CHANNELS 31
#define MAX_DEVICES 64

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static cublasHandle_t blas[MAX_DEVICES];
static cusolverDnHandle_t solver[MAX_DEVICES];

void audio_beamform_cuda_release(void)
{
    pthread_mutex_lock(&handle_lock);
    for (int i = 0; i < MAX_DEVICES; i++) {
        if (blas[i] != NULL)
            cublasDestroy(blas[i]);
        if (solver[i] != NULL)
            cusolverDnDestroy(solver[i]);
        blas[i] = NULL;
        solver[i] = NULL;
    }
    pthread_mutex_unlock(&handle_lock);
}

static loom_status cuda_fail(int e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString((cudaError_t)e),
                         cudaGetErrorName((cudaError_t)e));
}

/* the device's handles, bound to the call's stream; the lock is held until
** release_handles (one handle serves one stream at a time) */
static loom_status get_handles(const loom_call *call, cublasHandle_t *b, cusolverDnHandle_t *s)
{
    const int32_t id = call->ctx->device.device_id;
    if (id < 0 || id >= MAX_DEVICES)
        return pk_host->fail(LOOM_EINVAL, "CUDA device %d out of range", (int)id);
    cudaError_t e = cudaSetDevice(id);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    pthread_mutex_lock(&handle_lock);
    if (blas[id] == NULL && cublasCreate(&blas[id]) != CUBLAS_STATUS_SUCCESS) {
        blas[id] = NULL;
        pthread_mutex_unlock(&handle_lock);
        return pk_host->fail(LOOM_EDEVICE, "cublasCreate failed");
    }
    if (s != NULL && solver[id] == NULL && cusolverDnCreate(&solver[id]) != CUSOLVER_STATUS_SUCCESS) {
        solver[id] = NULL;
        pthread_mutex_unlock(&handle_lock);
        return pk_host->fail(LOOM_EDEVICE, "cusolverDnCreate failed");
    }
    *b = blas[id];
    cublasSetStream(*b, (cudaStream_t)call->ctx->stream);
    if (s != NULL) {
        *s = solver[id];
        cusolverDnSetStream(*s, (cudaStream_t)call->ctx->stream);
    }
    return LOOM_OK;
}

static void release_handles(void) { pthread_mutex_unlock(&handle_lock); }

/* The cached handles serve the pack's other cuda modules too (spectral's mfcc). */
loom_status audio_cuda_blas_get(const loom_call *call, void **handle)
{
    cublasHandle_t b;
    loom_status st = get_handles(call, &b, NULL);
    *handle = st == LOOM_OK ? (void *)b : NULL;
    return st;
}

void audio_cuda_blas_put(void) { release_handles(); }

static loom_status dscratch(loom_call *call, size_t bytes, void **out)
{
    *out = pk_host->scratch(call->ctx, bytes ? bytes : 16);
    return *out != NULL ? LOOM_OK : LOOM_ENOMEM;
}

/* The Hermitian check of beamform_checks.c on a host copy of p. */
static loom_status check_hermitian_device(const loom_call *call, const loom_tensor *p, const char *name,
                                          const bf_geom *g)
{
    const size_t bytes = (size_t)(g->batch * g->F * g->C * g->C) * pk_host->dtype_size(g->dtype);
    if (bytes == 0)
        return LOOM_OK;
    void *h = malloc(bytes);
    if (h == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory for %zu bytes", bytes);
    cudaStream_t s = (cudaStream_t)call->ctx->stream;
    cudaError_t e = cudaMemcpyAsync(h, loom_data(p), bytes, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        free(h);
        return cuda_fail(e, "copying a PSD to the host");
    }
    loom_tensor t = *p;
    t.data = h;
    t.byte_offset = 0;
    t.device = (loom_dl_device){ LOOM_DEVICE_CPU, 0 };
    loom_status st = bf_check_hermitian(&t, name, g);
    free(h);
    return st;
}

static bf_cuda_ref cuda_ref_of(const bf_ref *r)
{
    bf_cuda_ref c = { .present = r->present, .index = r->index };
    if (r->u != NULL) {
        c.index = -1;
        c.u = loom_data(r->u);
        c.u_dbl = loom_tensor_dtype_of(r->u) == LOOM_DTYPE_F64;
        c.u_batch = r->u_batch;
    }
    return c;
}

/* The LU factorisation of the (loaded) psd_n of every bin, then the solve
** of rhs (C x nrhs per bin, or none): a[] holds the factors, b[] the
** solutions (column-major). A zero pivot is reported like the cpu's. */
typedef struct bf_solve {
    void *a, *b, *a0;
    int *piv, *info;
    void **aptr, **bptr;
} bf_solve;

static loom_status lu_solve(loom_call *call, const bf_geom *g, const void *psd_n, int loading, double diag_eps,
                            const void *rhs, int64_t nrhs, int keep_a0, bf_solve *sv)
{
    const int dbl = g->dtype == LOOM_DTYPE_C128;
    const int64_t bins = g->batch * g->F, C = g->C;
    const size_t cs = pk_host->dtype_size(g->dtype), mat = (size_t)(C * C) * cs;
    loom_status st;
    memset(sv, 0, sizeof *sv);
    if ((st = dscratch(call, mat * (size_t)bins, &sv->a)) != LOOM_OK
        || (st = dscratch(call, (size_t)(C * nrhs) * cs * (size_t)bins, &sv->b)) != LOOM_OK
        || (st = dscratch(call, sizeof(int) * (size_t)(bins * (C + 1)), (void **)&sv->piv)) != LOOM_OK
        || (st = dscratch(call, sizeof(void *) * (size_t)(2 * bins), (void **)&sv->aptr)) != LOOM_OK)
        return st;
    sv->info = sv->piv + bins * C;
    sv->bptr = sv->aptr + bins;
    cudaStream_t s = (cudaStream_t)call->ctx->stream;
    int e = bf_cuda_prepare(dbl, s, bins, C, psd_n, loading, diag_eps, rhs, nrhs, sv->a, sv->b, sv->aptr, sv->bptr);
    if (e != 0)
        return cuda_fail(e, "beamforming: preparing the solves");
    if (keep_a0) {
        if ((st = dscratch(call, mat * (size_t)bins, &sv->a0)) != LOOM_OK)
            return st;
        cudaError_t ce = cudaMemcpyAsync(sv->a0, sv->a, mat * (size_t)bins, cudaMemcpyDeviceToDevice, s);
        if (ce != cudaSuccess)
            return cuda_fail(ce, "copying the loaded psd_n");
    }
    cublasHandle_t h;
    if ((st = get_handles(call, &h, NULL)) != LOOM_OK)
        return st;
    int arg = 0;
    cublasStatus_t bs = dbl ? cublasZgetrfBatched(h, (int)C, (cuDoubleComplex *const *)sv->aptr, (int)C, sv->piv,
                                                  sv->info, (int)bins)
                            : cublasCgetrfBatched(h, (int)C, (cuComplex *const *)sv->aptr, (int)C, sv->piv, sv->info,
                                                  (int)bins);
    if (bs == CUBLAS_STATUS_SUCCESS && rhs != NULL)
        bs = dbl ? cublasZgetrsBatched(h, CUBLAS_OP_N, (int)C, (int)nrhs, (const cuDoubleComplex *const *)sv->aptr,
                                       (int)C, sv->piv, (cuDoubleComplex *const *)sv->bptr, (int)C, &arg, (int)bins)
                 : cublasCgetrsBatched(h, CUBLAS_OP_N, (int)C, (int)nrhs, (const cuComplex *const *)sv->aptr, (int)C,
                                       sv->piv, (cuComplex *const *)sv->bptr, (int)C, &arg, (int)bins);
    release_handles();
    if (bs != CUBLAS_STATUS_SUCCESS || arg != 0)
        return pk_host->fail(LOOM_EDEVICE, "cuBLAS batched LU failed with status %d (argument %d)", (int)bs, -arg);
    /* a zero pivot: the first bin that has one, as the cpu reports it */
    int *info = malloc(sizeof(int) * (size_t)bins);
    if (info == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory");
    cudaError_t ce = cudaMemcpyAsync(info, sv->info, sizeof(int) * (size_t)bins, cudaMemcpyDeviceToHost, s);
    if (ce == cudaSuccess)
        ce = cudaStreamSynchronize(s);
    if (ce != cudaSuccess) {
        free(info);
        return cuda_fail(ce, "copying the LU infos");
    }
    for (int64_t k = 0; k < bins; k++)
        if (info[k] != 0) {
            int i = info[k];
            free(info);
            return pk_host->fail(LOOM_EINVAL, "'psd_n' is singular at matrix %lld (batch %lld, freq %lld): U(%d,%d) "
                                 "of its LU factors is zero%s", (long long)k, (long long)(k / g->F),
                                 (long long)(k % g->F), i, i,
                                 loading ? "" : "; diagonal_loading=true makes it invertible");
        }
    free(info);
    return LOOM_OK;
}

/* the channel count: dim -3 of psd's specgram, the last dim of every other
** op's first input */
static loom_status supports(const loom_call *call, char *why, size_t why_size)
{
    const loom_tensor *first = call->inputs[0];
    const int psd = strcmp(call->schema->name, "audio.psd") == 0;
    int64_t C = 0;
    if (first->ndim >= (psd ? 3 : 1))
        C = first->shape[first->ndim - (psd ? 3 : 1)];
    if (C > BF_CUDA_MAX_CHANNELS) {
        snprintf(why, why_size, "%lld channels: the cuda kernels take at most %d", (long long)C,
                 BF_CUDA_MAX_CHANNELS);
        return LOOM_ENOTSUP;
    }
    return LOOM_OK;
}

/* ------------------------------------------------------------ the kernels */

static loom_status psd_cuda(loom_call *call)
{
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_psd_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    cudaError_t ce = cudaSetDevice(call->ctx->device.device_id);
    if (ce != cudaSuccess)
        return cuda_fail(ce, "cudaSetDevice");
    const loom_tensor *m = call->inputs[BF_PSD_MASK];
    if (g.T == 0) {
        ce = cudaMemsetAsync(loom_data(out), 0, (size_t)loom_numel(out) * pk_host->dtype_size(g.dtype),
                             (cudaStream_t)call->ctx->stream);
        return ce == cudaSuccess ? LOOM_OK : cuda_fail(ce, "cudaMemsetAsync");
    }
    int e = bf_cuda_psd(g.dtype == LOOM_DTYPE_C128, call->ctx->stream, g.batch, g.C, g.F, g.T,
                        loom_data(call->inputs[BF_PSD_SPECGRAM]), m != NULL ? loom_data(m) : NULL,
                        call->attrs[PK_ATTR(bf_psd, normalize)].u.b, call->attrs[PK_ATTR(bf_psd, eps)].u.f,
                        loom_data(out));
    return e == 0 ? LOOM_OK : cuda_fail(e, "audio.psd launch");
}

/* the checks of the two-PSD ops without the host-side Hermitian check,
** which runs here on a host copy */
static loom_status two_psds(loom_call *call, bf_geom *g)
{
    loom_status st = bf_check_psd(call->inputs[0], "psd_s", g, 1);
    if (st == LOOM_OK)
        st = bf_check_psd(call->inputs[1], "psd_n", g, 0);
    if (st == LOOM_OK)
        st = check_hermitian_device(call, call->inputs[0], "psd_s", g);
    if (st == LOOM_OK)
        st = check_hermitian_device(call, call->inputs[1], "psd_n", g);
    return st;
}

static loom_status alloc_weights(loom_call *call, const bf_geom *g, loom_tensor **out)
{
    int64_t shape[LOOM_MAX_NDIM];
    if (g->lead_ndim + 2 > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "the output would have too many dimensions");
    memcpy(shape, g->lead, sizeof(int64_t) * (size_t)g->lead_ndim);
    shape[g->lead_ndim] = g->F, shape[g->lead_ndim + 1] = g->C;
    return pk_host->alloc_output(call, 0, g->dtype, g->lead_ndim + 2, shape, out);
}

static loom_status souden_cuda(loom_call *call)
{
    bf_geom g;
    bf_ref ref;
    loom_tensor *out;
    loom_status st = two_psds(call, &g);
    if (st == LOOM_OK)
        st = bf_check_ref(call, PK_ATTR(bf_weights, reference_channel), call->inputs[BF_SOUDEN_REF], &g, 1, &ref);
    if (st == LOOM_OK)
        st = alloc_weights(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    bf_solve sv;
    const int loading = call->attrs[PK_ATTR(bf_weights, diagonal_loading)].u.b;
    if ((st = lu_solve(call, &g, loom_data(call->inputs[1]), loading, call->attrs[PK_ATTR(bf_weights, diag_eps)].u.f,
                       loom_data(call->inputs[0]), g.C, 0, &sv)) != LOOM_OK)
        return st;
    int e = bf_cuda_souden_finish(g.dtype == LOOM_DTYPE_C128, call->ctx->stream, g.batch * g.F, g.C, g.F, sv.b,
                                  cuda_ref_of(&ref), call->attrs[PK_ATTR(bf_weights, eps)].u.f, loom_data(out));
    return e == 0 ? LOOM_OK : cuda_fail(e, "audio.mvdr_weights_souden launch");
}

static loom_status rtf_weights_cuda(loom_call *call)
{
    bf_geom g;
    bf_ref ref;
    loom_tensor *out;
    char b[160];
    const loom_tensor *rtf = call->inputs[BF_RTFW_RTF];
    loom_status st = bf_check_psd(call->inputs[BF_RTFW_PSD_N], "psd_n", &g, 1);
    if (st != LOOM_OK)
        return st;
    int ok = rtf->ndim == g.lead_ndim + 2 && rtf->shape[rtf->ndim - 2] == g.F && rtf->shape[rtf->ndim - 1] == g.C;
    for (int32_t i = 0; ok && i < g.lead_ndim; i++)
        ok = rtf->shape[i] == g.lead[i];
    if (!ok)
        return pk_host->fail(LOOM_EINVAL, "'rtf' %s must have the shape of psd_n without its last dim (..., F=%lld, "
                             "C=%lld)", bf_describe(rtf, b, sizeof b), (long long)g.F, (long long)g.C);
    if ((st = check_hermitian_device(call, call->inputs[BF_RTFW_PSD_N], "psd_n", &g)) != LOOM_OK
        || (st = bf_check_ref(call, PK_ATTR(bf_weights, reference_channel), call->inputs[BF_RTFW_REF], &g, 0, &ref))
               != LOOM_OK
        || (st = alloc_weights(call, &g, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    bf_solve sv;
    const int loading = call->attrs[PK_ATTR(bf_weights, diagonal_loading)].u.b;
    if ((st = lu_solve(call, &g, loom_data(call->inputs[1]), loading, call->attrs[PK_ATTR(bf_weights, diag_eps)].u.f,
                       loom_data(rtf), 1, 0, &sv)) != LOOM_OK)
        return st;
    int e = bf_cuda_rtf_weights_finish(g.dtype == LOOM_DTYPE_C128, call->ctx->stream, g.batch * g.F, g.C, g.F,
                                       loom_data(rtf), sv.b, cuda_ref_of(&ref),
                                       call->attrs[PK_ATTR(bf_weights, eps)].u.f, loom_data(out));
    return e == 0 ? LOOM_OK : cuda_fail(e, "audio.mvdr_weights_rtf launch");
}

static loom_status rtf_power_cuda(loom_call *call)
{
    bf_geom g;
    bf_ref ref;
    loom_tensor *out;
    loom_status st = two_psds(call, &g);
    if (st == LOOM_OK)
        st = bf_check_ref(call, PK_ATTR(bf_rtf_power, reference_channel), call->inputs[BF_POWER_REF], &g, 1, &ref);
    if (st == LOOM_OK)
        st = alloc_weights(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    bf_solve sv;
    const int loading = call->attrs[PK_ATTR(bf_rtf_power, diagonal_loading)].u.b;
    if ((st = lu_solve(call, &g, loom_data(call->inputs[1]), loading,
                       call->attrs[PK_ATTR(bf_rtf_power, diag_eps)].u.f, loom_data(call->inputs[0]), g.C, 1, &sv))
        != LOOM_OK)
        return st;
    int e = bf_cuda_rtf_power_finish(g.dtype == LOOM_DTYPE_C128, call->ctx->stream, g.batch * g.F, g.C, g.F, sv.b,
                                     loom_data(call->inputs[0]), sv.a0, cuda_ref_of(&ref),
                                     call->attrs[PK_ATTR(bf_rtf_power, n_iter)].u.i, loom_data(out));
    return e == 0 ? LOOM_OK : cuda_fail(e, "audio.rtf_power launch");
}

static loom_status rtf_evd_cuda(loom_call *call)
{
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_check_psd(call->inputs[0], "psd_s", &g, 1);
    if (st == LOOM_OK)
        st = check_hermitian_device(call, call->inputs[0], "psd_s", &g);
    if (st == LOOM_OK)
        st = alloc_weights(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    const int dbl = g.dtype == LOOM_DTYPE_C128;
    const int64_t bins = g.batch * g.F, C = g.C;
    const size_t cs = pk_host->dtype_size(g.dtype), rs = cs / 2;
    void *a, *w, *work;
    int *info;
    void **ptr;
    if ((st = dscratch(call, (size_t)(bins * C * C) * cs, &a)) != LOOM_OK
        || (st = dscratch(call, (size_t)(bins * C) * rs, &w)) != LOOM_OK
        || (st = dscratch(call, sizeof(int) * (size_t)bins, (void **)&info)) != LOOM_OK
        || (st = dscratch(call, sizeof(void *) * (size_t)bins, (void **)&ptr)) != LOOM_OK)
        return st;
    /* the column-major copy (torch's eigh reads the lower triangle of A) */
    int e = bf_cuda_prepare(dbl, call->ctx->stream, bins, C, loom_data(call->inputs[0]), 0, 0, NULL, 0, a, NULL, ptr,
                            NULL);
    if (e != 0)
        return cuda_fail(e, "audio.rtf_evd: preparing");
    cublasHandle_t hb;
    cusolverDnHandle_t hs;
    if ((st = get_handles(call, &hb, &hs)) != LOOM_OK)
        return st;
    syevjInfo_t params = NULL;
    cusolverStatus_t ss = cusolverDnCreateSyevjInfo(&params);
    int lwork = 0;
    if (ss == CUSOLVER_STATUS_SUCCESS)
        ss = dbl ? cusolverDnZheevjBatched_bufferSize(hs, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, (int)C, a,
                                                      (int)C, w, &lwork, params, (int)bins)
                 : cusolverDnCheevjBatched_bufferSize(hs, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, (int)C, a,
                                                      (int)C, w, &lwork, params, (int)bins);
    if (ss == CUSOLVER_STATUS_SUCCESS && (st = dscratch(call, (size_t)lwork * cs, &work)) != LOOM_OK) {
        cusolverDnDestroySyevjInfo(params);
        release_handles();
        return st;
    }
    if (ss == CUSOLVER_STATUS_SUCCESS)
        ss = dbl ? cusolverDnZheevjBatched(hs, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, (int)C, a, (int)C, w,
                                           work, lwork, info, params, (int)bins)
                 : cusolverDnCheevjBatched(hs, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, (int)C, a, (int)C, w,
                                           work, lwork, info, params, (int)bins);
    if (params != NULL)
        cusolverDnDestroySyevjInfo(params);
    release_handles();
    if (ss != CUSOLVER_STATUS_SUCCESS)
        return pk_host->fail(LOOM_EDEVICE, "cuSOLVER heevjBatched failed with status %d", (int)ss);
    e = bf_cuda_last_column(dbl, call->ctx->stream, bins, C, a, loom_data(out));
    return e == 0 ? LOOM_OK : cuda_fail(e, "audio.rtf_evd launch");
}

static loom_status apply_cuda(loom_call *call)
{
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_apply_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    cudaError_t ce = cudaSetDevice(call->ctx->device.device_id);
    if (ce != cudaSuccess)
        return cuda_fail(ce, "cudaSetDevice");
    int e = bf_cuda_apply(g.dtype == LOOM_DTYPE_C128, call->ctx->stream, g.batch * g.F, g.C, g.F, g.T,
                          loom_data(call->inputs[BF_APPLY_WEIGHTS]), loom_data(call->inputs[BF_APPLY_SPECGRAM]),
                          loom_data(out));
    return e == 0 ? LOOM_OK : cuda_fail(e, "audio.apply_beamforming launch");
}

static const loom_kernel_desc cuda_kernels[] = {
    PK_KERNEL_CUDA(bf_psd_schema, "cuda:hermitian-rank-t", BF_COMPLEX | BF_REAL, psd_cuda, .supports = supports),
    PK_KERNEL_CUDA(bf_souden_schema, "cuda:cublas-getrf-batched", BF_COMPLEX | BF_REAL, souden_cuda,
                   .supports = supports),
    PK_KERNEL_CUDA(bf_rtf_weights_schema, "cuda:cublas-getrf-batched", BF_COMPLEX | BF_REAL, rtf_weights_cuda,
                   .supports = supports),
    PK_KERNEL_CUDA(bf_rtf_evd_schema, "cuda:cusolver-heevj-batched", BF_COMPLEX, rtf_evd_cuda, .supports = supports),
    PK_KERNEL_CUDA(bf_rtf_power_schema, "cuda:cublas-getrf-batched", BF_COMPLEX | BF_REAL, rtf_power_cuda,
                   .supports = supports),
    PK_KERNEL_CUDA(bf_apply_schema, "cuda:direct", BF_COMPLEX, apply_cuda, .supports = supports),
};

const pk_module audio_beamform_cuda = PK_MODULE("beamform", audio_beamform_ops, cuda_kernels, bf_objects_cuda_register);
