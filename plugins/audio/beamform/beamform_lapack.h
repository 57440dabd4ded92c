/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lapack.h - the LAPACK calls of the beamforming kernels: the LU
** solve torch.linalg.solve uses (c/zgesv) and the Hermitian eigensolver of
** torch.linalg.eigh (c/zheevd). Matrices are column-major complex arrays
** stored as interleaved (re, im); every call works in memory the caller
** owns (a per-thread workspace), so nothing is allocated per problem.
*/
#ifndef LOOM_AUDIO_BEAMFORM_LAPACK_H
#define LOOM_AUDIO_BEAMFORM_LAPACK_H

#include <stddef.h>
#include <stdint.h>

/* Solve A X = B in place: A (n x n) becomes its LU factors, B (n x nrhs)
** the solution. Returns LAPACK's info: 0, or i > 0 when U(i,i) is exactly
** zero (A is singular), or < 0 for a bad argument. */
int bf_gesv_c64(int n, int nrhs, float *a, int *ipiv, float *b);
int bf_gesv_c128(int n, int nrhs, double *a, int *ipiv, double *b);

/* Eigenvalues (ascending, into w[n]) and eigenvectors (the columns of a)
** of the Hermitian A, read from its lower triangle as torch.linalg.eigh
** does. `work` holds bf_heevd_work_bytes(n, ...) bytes. Returns info. */
size_t bf_heevd_work_bytes(int n, size_t real_size);
int bf_heevd_c64(int n, float *a, float *w, void *work);
int bf_heevd_c128(int n, double *a, double *w, void *work);

#endif /* LOOM_AUDIO_BEAMFORM_LAPACK_H */
