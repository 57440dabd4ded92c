/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform.h - the beamforming module of the audio packs: torchaudio's
** multi-channel functions (psd, mvdr_weights_souden, mvdr_weights_rtf,
** rtf_evd, rtf_power, apply_beamforming) and its modules (PSD, SoudenMVDR,
** RTFMVDR and the mask-based MVDR with its online mode) as object classes.
**
** Layouts are torchaudio's, any batch shape in front, complex64 or
** complex128 stored as interleaved (re, im) pairs:
**   specgram  (..., C, F, T)     mask  (..., F, T) real, or (..., C, F, T) for multi_mask
**   psd       (..., F, C, C)     rtf / weights  (..., F, C)     enhanced  (..., F, T)
** A matrix psd[..., f, :, :] is row-major: element (c, e) = sum_t x_c conj(x_e).
**
** reference_channel is either the int attribute of that name or the
** optional real input of that name, shape (C) or (..., C) (torchaudio's
** one-hot tensor, used as weights: w = Ws u); giving both is an error.
**
** Every op's schema and checks are compiled into audio.so and audio-cuda.so
** alike; beamform_cpu.c and beamform_cuda.c hold the kernels.
*/
#ifndef LOOM_AUDIO_BEAMFORM_H
#define LOOM_AUDIO_BEAMFORM_H

#include <stddef.h>
#include <stdint.h>

#include "describe.h"
#include "loom/plugin.h"
#include "pack.h"

#define BF_COMPLEX (LOOM_DTYPE_BIT(LOOM_DTYPE_C64) | LOOM_DTYPE_BIT(LOOM_DTYPE_C128))
#define BF_REAL (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
/* The largest channel count: the C x C problems are solved in per-thread
** workspaces sized by it (torchaudio has no limit; arrays beyond 64
** microphones are not beamformed with a dense MVDR). */
#define BF_MAX_CHANNELS 64

/* ------------------------------------------------------------ attributes */

#define BF_PSD_ATTRS(A, op)                                                                               \
    A(op, normalize, BOOL, LOOM_DEFAULT_BOOL(1), 0, "divide the mask by its sum over time (plus eps)", ) \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-10), LOOM_ATTR_FINITE,                                        \
      "added to the mask's sum (torchaudio's code uses 1e-10; its docstring says 1e-15)", )
PK_ATTR_ENUM(bf_psd, BF_PSD_ATTRS);

/* reference_channel, diagonal_loading, diag_eps, eps: the weights' arguments */
#define BF_LOADING_ATTRS(A, op)                                                                             \
    A(op, diagonal_loading, BOOL, LOOM_DEFAULT_BOOL(1), 0,                                                  \
      "add (diag_eps * Re tr(psd_n) + 1e-8) to the diagonal of psd_n first", )                              \
    A(op, diag_eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-7), LOOM_ATTR_FINITE, "the loading's factor of the trace", )
#define BF_WEIGHTS_ATTRS(A, op)                                                                             \
    A(op, reference_channel, INT, LOOM_DEFAULT_NONE, 0,                                                     \
      "index of the reference channel (or give the reference_channel input)", )                             \
    BF_LOADING_ATTRS(A, op)                                                                                 \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-8), LOOM_ATTR_FINITE, "added to the weights' denominator", )
PK_ATTR_ENUM(bf_weights, BF_WEIGHTS_ATTRS);

#define BF_RTF_POWER_ATTRS(A, op)                                                                           \
    A(op, reference_channel, INT, LOOM_DEFAULT_NONE, 0,                                                     \
      "index of the reference channel (or give the reference_channel input)", )                             \
    A(op, n_iter, INT, LOOM_DEFAULT_INT(3), LOOM_ATTR_POSITIVE, "iterations of the power method", )         \
    BF_LOADING_ATTRS(A, op)
PK_ATTR_ENUM(bf_rtf_power, BF_RTF_POWER_ATTRS);

/* the object classes */
#define BF_PSD_CLASS_ATTRS(A, op)                                                                          \
    A(op, multi_mask, BOOL, LOOM_DEFAULT_BOOL(0), 0, "the mask is (..., C, F, T): averaged over C first", ) \
    A(op, normalize, BOOL, LOOM_DEFAULT_BOOL(1), 0, "divide the mask by its sum over time (plus eps)", )    \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-15), LOOM_ATTR_FINITE, "added to the mask's sum", )
PK_ATTR_ENUM(bf_psd_class, BF_PSD_CLASS_ATTRS);

#define BF_MVDR_CLASS_ATTRS(A, op)                                                                          \
    A(op, ref_channel, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "the reference channel", )              \
    A(op, solution, STRING, LOOM_DEFAULT_STRING("ref_channel"), 0, "ref_channel, stv_evd or stv_power", )   \
    A(op, multi_mask, BOOL, LOOM_DEFAULT_BOOL(0), 0, "the masks are (..., C, F, T): averaged over C", )    \
    A(op, diag_loading, BOOL, LOOM_DEFAULT_BOOL(1), 0, "diagonal loading of the noise PSD", )              \
    A(op, diag_eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-7), LOOM_ATTR_FINITE, "the loading's factor", )           \
    A(op, online, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                                            \
      "update the PSDs recursively from the previous calls' (torchaudio's recursive mode)", )
PK_ATTR_ENUM(bf_mvdr_class, BF_MVDR_CLASS_ATTRS);

#define BF_SOLUTION_REF_CHANNEL 0
#define BF_SOLUTION_STV_EVD 1
#define BF_SOLUTION_STV_POWER 2

/* ---------------------------------------------------------------- op list */

#define AUDIO_BEAMFORM_OPS(X)                                                                              \
    X(bf_psd_schema) X(bf_souden_schema) X(bf_rtf_weights_schema) X(bf_rtf_evd_schema)                     \
    X(bf_rtf_power_schema) X(bf_apply_schema) X(bf_psd_method_schema) X(bf_souden_method_schema)           \
    X(bf_rtf_method_schema) X(bf_mvdr_method_schema)
PK_OPS_DECLARE(audio_beamform_ops, AUDIO_BEAMFORM_OPS);

/* the argument indices of the ops (schema order) */
enum { BF_PSD_SPECGRAM = 0, BF_PSD_MASK = 1 };
enum { BF_SOUDEN_PSD_S = 0, BF_SOUDEN_PSD_N = 1, BF_SOUDEN_REF = 2 };
enum { BF_RTFW_RTF = 0, BF_RTFW_PSD_N = 1, BF_RTFW_REF = 2 };
enum { BF_POWER_PSD_S = 0, BF_POWER_PSD_N = 1, BF_POWER_REF = 2 };
enum { BF_APPLY_WEIGHTS = 0, BF_APPLY_SPECGRAM = 1 };

/* --------------------------------------------------------------- geometry */

/* The sizes of one call: `batch` problems (the product of the leading
** dims), each of F bins with C channels and T frames. */
/* The state of an audio.PSD object (beamform_objects.c makes it; the cuda
** method reads it too: audio.so and audio-cuda.so are one family). */
typedef struct bf_psd_state {
    int multi_mask, normalize;
    double eps;
} bf_psd_state;

/* The cuda kernels of the object methods (beamform_objects_cuda.c), the
** register_more hook of audio-cuda.so's beamform module. */
loom_status bf_objects_cuda_register(const loom_host_api *host, loom_registrar *reg);

typedef struct bf_geom {
    loom_dtype dtype;     /* LOOM_DTYPE_C64 or LOOM_DTYPE_C128 */
    int64_t batch, F, C, T;
    int32_t lead_ndim;    /* rank of the batch shape */
    int64_t lead[LOOM_MAX_NDIM];
} bf_geom;

/* The reference channel of a call: an index, or weights u[batch or 1][C]
** (read from the f32/f64 input, any batch broadcast when it is (C)). */
typedef struct bf_ref {
    int present;          /* 0: none given (allowed for mvdr_weights_rtf only) */
    int64_t index;        /* >= 0: the int attribute */
    const loom_tensor *u; /* else the tensor */
    int64_t u_batch;      /* 1 (broadcast) or geom.batch */
} bf_ref;

/* The checks of each op (shared by every backend). Each fills the geometry,
** allocates the output and returns LOOM_OK, or fails naming the argument. */
loom_status bf_psd_check(loom_call *call, bf_geom *g, loom_tensor **out);
loom_status bf_souden_check(loom_call *call, bf_geom *g, bf_ref *ref, loom_tensor **out);
loom_status bf_rtf_weights_check(loom_call *call, bf_geom *g, bf_ref *ref, loom_tensor **out);
loom_status bf_rtf_evd_check(loom_call *call, bf_geom *g, loom_tensor **out);
loom_status bf_rtf_power_check(loom_call *call, bf_geom *g, bf_ref *ref, loom_tensor **out);
loom_status bf_apply_check(loom_call *call, bf_geom *g, loom_tensor **out);

/* The pieces the checks and the object methods share. */
/* specgram (..., C, F, T) complex: fills dtype, batch, C, F, T. */
loom_status bf_check_specgram(const loom_tensor *x, const char *name, bf_geom *g);
/* A real mask of specgram's precision with shape lead + (F, T), or
** lead + (C, F, T) when multi_mask. */
loom_status bf_check_mask(const loom_tensor *m, const char *name, const bf_geom *g, int multi_mask);
/* A PSD (..., F, C, C) of dtype g->dtype (or the first one: fills g). */
loom_status bf_check_psd(const loom_tensor *p, const char *name, bf_geom *g, int first);
/* reference_channel from the int attribute at attrs[attr] and the optional
** input `in`; required: fail when neither is given. */
loom_status bf_check_ref(const loom_call *call, int32_t attr, const loom_tensor *in, const bf_geom *g,
                         int required, bf_ref *ref);
/* Every matrix of p (compact, g's geometry) is Hermitian within a
** tolerance of its precision; else fails naming `name` and the bin. */
loom_status bf_check_hermitian(const loom_tensor *p, const char *name, const bf_geom *g);

/* "c64[2,3]" into buf */
static inline char *bf_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(pk_host, t, buf, size);
}

/* The modules and the cuda pack's release of the module's handles. */
#include "audio_pack.h"

#endif /* LOOM_AUDIO_BEAMFORM_H */
