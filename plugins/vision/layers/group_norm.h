/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm.h - vision.group_norm, F.group_norm at inference:
**   x [N, C, *] (rank >= 2) is N * G groups of (C / G) * prod(*) values;
**   each group's mean and biased variance normalise it, then channel c gets
**   y = x * scale[c] + shift[c], scale = rstd * weight[c],
**   shift = beta[c] - scale * mean (ATen's form of the affine step).
** The statistics are one pass in double over x - shift (shift = the group's
** first value): mean = shift + S1 / n, var = (S2 - S1^2 / n) / n. The shift
** keeps the cancellation to (mean - shift)^2 / var units of double rounding,
** so they are at least as exact as ATen's f32 Welford moments; the affine
** step is f32 as ATen's. The checks (group_norm_schema.c) are
** shared by the cpu and cuda kernels.
*/
#ifndef LOOM_VISION_GROUP_NORM_H
#define LOOM_VISION_GROUP_NORM_H

#include <stdint.h>

#include "layers.h"

enum { GN_INPUT = 0, GN_WEIGHT = 1, GN_BIAS = 2 };

#define GROUP_NORM_ATTRS(A, op)                                                                    \
    A(op, num_groups, INT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,             \
      "G: C is a multiple of it", )                                                                \
    A(op, eps, FLOAT, LOOM_DEFAULT_FLOAT(1e-5), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,               \
      "added to each group's variance before the square root", )
PK_ATTR_ENUM(group_norm, GROUP_NORM_ATTRS);

/* The geometry of a call: groups = N * G of len = (C / G) * inner values,
** channels_per_group = C / G planes of inner values each. */
typedef struct group_norm_geom {
    int64_t n, c, g, inner;
    int64_t groups, channels_per_group, len;
    double eps;
} group_norm_geom;

/* Checks the call (f32 contiguous tensors, rank >= 2, C % G == 0, weight and
** bias [C] when given) and allocates the output (*out; numel may be 0). */
loom_status group_norm_check(loom_call *call, group_norm_geom *g, loom_tensor **out);

/* The AVX2 loops (group_norm_avx2.c, called only when pk_cpu_avx2(PK_CPU_FMA)
** allows): the sums of d = x - shift and of d^2 in double (4 lanes x 2
** accumulators each), and y = x * scale + shift over n. */
void group_norm_moments_avx2(const float *x, int64_t n, double shift, double *s1, double *s2);
void group_norm_affine_avx2(const float *x, float scale, float shift, float *y, int64_t n);

#endif /* LOOM_VISION_GROUP_NORM_H */
