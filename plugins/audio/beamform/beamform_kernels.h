/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_kernels.h - the C launchers of the beamforming device code
** (beamform_kernels.cu). Every launcher is asynchronous on `stream`
** (a cudaStream_t) and returns cudaGetLastError() as an int (0: launched).
** `dbl` selects complex128 (1) or complex64 (0); arrays are device
** pointers with beamform.h's layouts; matrices handed to cuBLAS and
** cuSOLVER are column-major, one per bin, C x C apart.
*/
#ifndef LOOM_AUDIO_BEAMFORM_KERNELS_H
#define LOOM_AUDIO_BEAMFORM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The reference channel on the device: index >= 0, or weights u of
** u_dbl (f64 if 1, f32 if 0), u_batch rows of C (1: broadcast). */
typedef struct bf_cuda_ref {
    int present;
    int64_t index;
    const void *u;
    int u_dbl;
    int64_t u_batch;
} bf_cuda_ref;

int bf_cuda_psd(int dbl, void *stream, int64_t batch, int64_t C, int64_t F, int64_t T, const void *x,
                const void *mask, int normalize, double eps, void *psd);
int bf_cuda_apply(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, int64_t T, const void *w, const void *x,
                  void *out);
/* a[bin] = colmajor(tik(psd_n[bin])) when loading, and b[bin] =
** colmajor(rhs[bin]) for an (C x nrhs) row-major rhs (nrhs C: a PSD; 1: a
** vector), or nothing when rhs is NULL; aptr/bptr[bin] point at them. */
int bf_cuda_prepare(int dbl, void *stream, int64_t bins, int64_t C, const void *psd_n, int loading, double diag_eps,
                    const void *rhs, int64_t nrhs, void *a, void *b, void **aptr, void **bptr);
/* out[bin] = (N / (tr N + eps)) u for the solved N (column-major) */
int bf_cuda_souden_finish(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, const void *n, bf_cuda_ref ref,
                          double eps, void *out);
/* out[bin] = n / (Re(v^H n) + eps), times conj(v) u when a reference is given */
int bf_cuda_rtf_weights_finish(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, const void *rtf,
                               const void *n, bf_cuda_ref ref, double eps, void *out);
/* the power iterations of rtf_power from phi (column-major), psd_s
** (row-major) and the loaded psd_n (column-major, for n_iter 1) */
int bf_cuda_rtf_power_finish(int dbl, void *stream, int64_t bins, int64_t C, int64_t F, const void *phi,
                             const void *psd_s, const void *a0, bf_cuda_ref ref, int64_t n_iter, void *out);
/* out[bin] = the last column of the eigenvector matrix v[bin] (column-major) */
int bf_cuda_last_column(int dbl, void *stream, int64_t bins, int64_t C, const void *v, void *out);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_AUDIO_BEAMFORM_KERNELS_H */
