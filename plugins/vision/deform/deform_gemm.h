/*
** deform_gemm.h - the small GEMM pieces of the cpu deform_conv2d.
**
** The forward multiplies the weights of one group, packed once into
** DG_MR-row panels (deform_pack_weights), with columns that im2col writes
** directly in DG_NR-wide panels: a panel is K rows of DG_NR positions, row
** k contiguous. deform_ukr_* computes one DG_MR x DG_NR tile of
** out = weight * columns (+ bias) over the whole depth K and stores the
** rows < `rows` and columns < `cols` of it (edge tiles are partial).
** The f32 kernel uses AVX2+FMA when cpuid reports both (checked once,
** capped by LOOM_CPU_MAX_ISA), else the portable kernel.
*/
#ifndef LOOM_VISION_DEFORM_GEMM_H
#define LOOM_VISION_DEFORM_GEMM_H

#include <stdint.h>

#define DG_MR 6
#define DG_NR 16

/* Pack rows [0, m) of a row-major m x k matrix into ceil(m/MR) panels of
** k x MR (zero-padded rows). */
void deform_pack_weights_f32(float *dst, const float *a, int64_t m, int64_t k);
void deform_pack_weights_f64(double *dst, const double *a, int64_t m, int64_t k);

/* c[r * ldc + j] = sum_p a[p*MR + r] * b[p*NR + j] + (bias ? bias[r] : 0)
** for r < rows, j < cols. */
void deform_ukr_f32(int64_t k, const float *a, const float *b, float *c, int64_t ldc, const float *bias,
                    int rows, int cols);
void deform_ukr_f64(int64_t k, const double *a, const double *b, double *c, int64_t ldc, const double *bias,
                    int rows, int cols);

/* Choose the f32 kernel once, at pack init (before any kernel runs). */
void deform_gemm_init(void);

#endif /* LOOM_VISION_DEFORM_GEMM_H */
