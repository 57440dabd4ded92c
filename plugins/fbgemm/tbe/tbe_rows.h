/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_rows.h - the per-weight-type row functions of the cpu TBE kernel:
** acc[0..D) += w * dequant(row), in f32.
**
** Numerics (one formula for every ISA, so scalar and AVX2 results are
** identical bit for bit, and a row read from the cache equals one read from
** the table): float types acc = fma(w, x, acc); integer types, as fbgemm's
** EmbeddingSpMDMNBit, acc = fma(scale*w, q, acc + bias*w).
*/
#ifndef LOOM_FBGEMM_TBE_ROWS_H
#define LOOM_FBGEMM_TBE_ROWS_H

#include <stdint.h>

#include "tbe.h"

typedef struct fbg_row_params {
    int32_t fp8_ebits;
    int32_t fp8_bias;
} fbg_row_params;

typedef void (*fbg_row_acc_fn)(float *acc, const uint8_t *row, int64_t dim, float w, const fbg_row_params *p);

/* Pick the row functions for this CPU (AVX2+FMA+F16C when cpuid has them
** and LOOM_CPU_MAX_ISA does not cap below avx2); once, at pack init. */
void fbg_rows_init(void);
/* The row function of a weight type; "avx2" or "scalar". */
fbg_row_acc_fn fbg_row_acc(fbg_wtype t);
const char *fbg_rows_isa(void);

/* Software prefetch of the rows ahead of the one being accumulated
** (tbe_forward_cpu.c), one choice per machine class, made by
** fbg_rows_init. The lookup prefetches every cache line of the row
** `fbg_prefetch_rows(row_stride)` indices ahead with the class's hint. */
typedef enum fbg_prefetch_hint {
    FBG_PF_NTA = 0,         /* prefetchnta: __builtin_prefetch locality 0 */
    FBG_PF_T0 = 3,          /* prefetcht0: every cache level (locality 3) */
} fbg_prefetch_hint;

typedef struct fbg_prefetch_policy {
    const char *machine;    /* the class: "x86-intel", "x86-amd", "generic" */
    fbg_prefetch_hint hint;
    int32_t window_bytes;   /* bytes of rows in flight ahead of the current one ... */
    int32_t min_rows;       /* ... but at least this many rows */
    int32_t max_rows;       /* ... and at most this many */
} fbg_prefetch_policy;

const fbg_prefetch_policy *fbg_prefetch_policy_get(void);
/* Rows ahead for a table of row_stride bytes:
** clamp(window_bytes / row_stride, min_rows, max_rows). */
int32_t fbg_prefetch_rows(int64_t row_stride);

#endif
