/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tbe_bags.h - whole-bag accumulation of the cpu TBE forward for FP32
** tables: acc[0..D) = sum over the bag's rows of w[r] * row[r], with the
** accumulators in vector registers for the whole bag (AVX-512: 8 zmm, 128
** columns per pass; AVX2: 8 ymm, 64 columns per pass), the next rows'
** prefetch interleaved with the loads, as fbgemm's EmbeddingSpMDM JIT
** kernel keeps them.
**
** Why: the per-row functions of tbe_rows.h keep the accumulator in memory
** and are called once per row, so each 512-byte row costs ~60 uops (16
** row loads, 16 accumulator loads, 16 fmas, 16 stores, the call) and a
** load-store chain through the accumulator. The gather is bound by how many
** row misses are in flight at once, i.e. by how many rows the core's
** reorder window holds; with registers a row is ~20 uops and the window
** holds about three times as many rows (measured: the loop's CPU time per
** call fell 2.3x, 200000-row tables, README "Recommendation").
**
** Numerics: per column acc = fma(w, x, acc) in row order from +0, exactly
** what the row functions compute (fma(1, x, a) is a + x rounded once), so
** a bag's bits do not depend on which path ran.
*/
#ifndef LOOM_FBGEMM_TBE_BAGS_H
#define LOOM_FBGEMM_TBE_BAGS_H

#include <stdint.h>

#include "tbe.h"
#include "tbe_rows.h"

/* acc[0..dim) = (init ? 0 : acc) + sum_r (w ? w[r] : 1) * rows[r][0..dim)
** (f32 rows, any alignment). Before reading rows[r], prefetches every
** cache line of pf[r] .. pf[r] + pf_bytes with `hint` when pf and pf[r]
** are not NULL. n may be 0 (then acc is only zeroed when init). */
typedef void (*fbg_bag_acc_fn)(float *acc, int init, const uint8_t *const *rows, const float *w,
                               const uint8_t *const *pf, int32_t n, int64_t dim, int64_t pf_bytes,
                               fbg_prefetch_hint hint);

/* Picks the bag functions for this CPU (AVX-512F, else AVX2+FMA, as the
** core's CPU features allow); once, at pack init, after fbg_rows_init. */
void fbg_bags_init(void);
/* The bag function for a table, or NULL when the row functions must do it
** (not FP32, dim not a multiple of 8, or no vector ISA). */
fbg_bag_acc_fn fbg_bag_acc(fbg_wtype t, int64_t dim);
/* "avx512", "avx2" or NULL (none). */
const char *fbg_bags_isa(void);

#endif
