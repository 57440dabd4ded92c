/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_cpu.h - the cpu engine of the beamforming module, shared by the
** op kernels (beamform_cpu.c) and the object methods (beamform_objects.c):
** each function runs one batched computation on compact host arrays of
** the geometry g, threaded over the bins through the core's pool, with the
** per-thread workspaces from scratch. A failure (a singular noise PSD, an
** eigensolver that did not converge) names the argument and the bin.
**
** Arithmetic follows torchaudio's order so that complex128 agrees to
** rounding: loading, then an LU solve (LAPACK getrf + getrs, as gesv), then
** the trace or the quadratic form, then the division (rtf_power alone
** reassociates: phi u as psd_n^-1 (psd_s u), one solve per power step,
** never forming phi); psd multiplies each frame's outer
** product by its normalised mask weight before the sum over time.
*/
#ifndef LOOM_AUDIO_BEAMFORM_CPU_H
#define LOOM_AUDIO_BEAMFORM_CPU_H

#include "beamform.h"

/* The reference channel in raw form: an index, or weights u[u_batch][C]
** of dtype u_dtype (f32 or f64). */
typedef struct bf_refv {
    int present;
    int64_t index;
    const void *u;
    loom_dtype u_dtype;
    int64_t u_batch;
} bf_refv;

bf_refv bf_refv_of(const bf_ref *ref);

typedef struct bf_loading {
    int on;
    double diag_eps;
} bf_loading;

/* psd[batch][F][C][C] from x[batch][C][F][T] and mask[batch][F][T] (real of
** x's precision, or NULL). */
loom_status bf_psd_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *x, const void *mask, int normalize,
                       double eps, void *psd);
/* weights[batch][F][C] */
loom_status bf_souden_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *psd_s, const void *psd_n,
                          const bf_refv *ref, bf_loading load, double eps, void *w);
loom_status bf_rtf_weights_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *rtf, const void *psd_n,
                               const bf_refv *ref, bf_loading load, double eps, void *w);
loom_status bf_rtf_evd_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *psd_s, void *rtf);
loom_status bf_rtf_power_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *psd_s, const void *psd_n,
                             const bf_refv *ref, int64_t n_iter, bf_loading load, void *rtf);
/* enhanced[batch][F][T] = sum_c conj(w[batch][F][c]) x[batch][c][F][T] */
loom_status bf_apply_cpu(loom_exec_ctx *ctx, const bf_geom *g, const void *w, const void *x, void *out);

/* The AVX2+FMA loops (beamform_avx2.c), used when the core's features
** allow them: one bin's Hermitian rank-T update from the weighted copies
** (see beamform_tmpl.h), and one bin of apply_beamforming. */
int bf_have_avx2(void);
void bf_psd_bin_avx2_c64(int64_t C, int64_t T, const float *x, int64_t ldx, const float *ym, const float *ys,
                         int64_t ldy, float *acc);
void bf_psd_bin_avx2_c128(int64_t C, int64_t T, const double *x, int64_t ldx, const double *ym, const double *ys,
                          int64_t ldy, double *acc);
void bf_apply_bin_avx2_c64(int64_t C, int64_t T, const float *w, const float *x, int64_t ldx, float *out);
void bf_apply_bin_avx2_c128(int64_t C, int64_t T, const double *w, const double *x, int64_t ldx, double *out);

/* The object classes and their methods (beamform_objects.c). */
extern const loom_object_class bf_psd_class, bf_souden_class, bf_rtf_class, bf_mvdr_class;
loom_status bf_psd_method_run(loom_call *call);
loom_status bf_souden_method_run(loom_call *call);
loom_status bf_rtf_method_run(loom_call *call);
loom_status bf_mvdr_method_run(loom_call *call);

#endif /* LOOM_AUDIO_BEAMFORM_CPU_H */
