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

#endif
