/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_cuda.h - the C interface between the cuda glue of fbgemm.tbe
** (tbe_cuda_pack.c) and its device code (tbe_cuda_kernels.cu).
**
** Device layout of the tables: each row starts on a 16-byte boundary
** (stride = the table's row_stride rounded up to 16, the padding zeroed),
** so a thread loads its group of 4 elements with one aligned load (16
** bytes for FP32, 8 for FP16/BF16, 4 for FP8/INT8, 2 for INT4, 1 for INT2;
** the integer rows keep their 4-byte fp16 scale/bias header first).
**
** Numerics are the cpu kernel's (tbe_rows.h), operation for operation and
** with explicit round-to-nearest intrinsics (no contraction), so a cuda
** result equals the cpu result bit for bit:
**   float types   acc = fma(w, x, acc)
**   integer types acc = fma(scale*w, q, acc + bias*w)
**   MEAN (L > 0, also with per-sample weights): acc * (1/L)
**   NONE: per-sample weights are ignored
**   output        round to nearest even into f16/bf16
** Each bag's indices are taken in order by every thread of its warp.
**
** Bounds checks run on the device, with the effect of fbgemm's
** bounds_check_indices on CPU (tbe_plan.c), whatever the mode:
**   offsets: repaired[k] = min(N, max(clamp(o[0], 0, N), o[1..k])) for
**     k < n_bags and repaired[n_bags] = N - exactly what fbgemm's
**     sequential clamping of each bag's start and end produces;
**   an index outside [0, rows) other than -1 reads row 0; -1 is skipped.
** The flags word records what was found (FBG_CUDA_BAD_*) and the first bag
** and index concerned, for FATAL (the call fails) and WARNING (logged).
*/
#ifndef LOOM_FBGEMM_TBE_CUDA_H
#define LOOM_FBGEMM_TBE_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One feature as the kernel reads it (device array, built once per object). */
typedef struct fbg_cuda_feature {
    const uint8_t *rows;        /* device address of row 0 of the feature's table */
    int64_t n_rows;
    int64_t stride;             /* bytes between rows, a multiple of 16 */
    int64_t d_offset;           /* first column of the feature in [B, total_D] */
    int32_t dim;
    int32_t wtype;              /* fbg_wtype */
} fbg_cuda_feature;

/* Bits of flags->bits. */
enum {
    FBG_CUDA_BAD_LAST_OFFSET = 1,   /* offsets[n_bags] != n_indices */
    FBG_CUDA_BAD_BAG = 2,           /* a bag's offsets outside [0, N] or decreasing */
    FBG_CUDA_BAD_INDEX = 4          /* an index outside [0, rows) and not -1 */
};

/* What the device reports back (device memory, zeroed before the launch). */
typedef struct fbg_cuda_flags {
    uint32_t bits;
    uint32_t reserved;
    unsigned long long first_bag;   /* smallest bad bag (ULLONG_MAX: none) */
    unsigned long long first_index; /* smallest position of a bad index (ULLONG_MAX: none) */
} fbg_cuda_flags;

typedef struct fbg_tbe_cuda_args {
    const fbg_cuda_feature *features;   /* device [n_features] */
    int32_t n_features;
    int32_t index_is_i64;               /* indices and offsets: 1 = i64, 0 = i32 */
    const void *indices;                /* device [n_indices] */
    const void *offsets;                /* device [n_bags + 1] */
    int64_t n_indices;
    int64_t n_bags;
    const float *per_sample_weights;    /* device [n_indices] or NULL */
    int32_t pooling;                    /* fbg_pooling */
    int32_t output_kind;                /* 0 f32, 1 f16, 2 bf16 */
    void *output;                       /* device, the plan's layout (tbe.h) */
    int64_t B;                          /* fixed batch: bags per feature */
    int64_t total_D;
    int32_t vbe;                        /* 1: the three vbe arrays below (device) */
    int32_t vbe_ranks;
    const int64_t *vbe_B_offsets;       /* [T + 1] */
    const int64_t *vbe_B_offsets_rank;  /* [T * (R + 1)] */
    const int64_t *vbe_output_offsets;  /* [R * T + 1] */
    int32_t fp8_ebits;
    int32_t fp8_bias;
    int64_t *fixed_offsets;             /* device scratch [n_bags + 1]: repaired offsets */
    fbg_cuda_flags *flags;              /* device */
} fbg_tbe_cuda_args;

/* Launch the bounds repair and the forward on `stream` (a cudaStream_t);
** returns the cudaError_t of the launches (0 = success). Asynchronous. */
int fbg_tbe_cuda_forward(const fbg_tbe_cuda_args *args, void *stream);

/* "no error" or the CUDA runtime's text for a code returned above. */
const char *fbg_tbe_cuda_error_string(int code);

#ifdef __cplusplus
}
#endif
#endif /* LOOM_FBGEMM_TBE_CUDA_H */
