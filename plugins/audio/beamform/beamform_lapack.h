/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lapack.h - the LAPACK calls of the beamforming kernels: the LU
** solve torch.linalg.solve uses (c/zgetrf + c/zgetrs) and the Hermitian eigensolver of
** torch.linalg.eigh (c/zheevd). Matrices are column-major complex arrays
** stored as interleaved (re, im); every call works in memory the caller
** owns (a per-thread workspace), so nothing is allocated per problem.
*/
#ifndef LOOM_AUDIO_BEAMFORM_LAPACK_H
#define LOOM_AUDIO_BEAMFORM_LAPACK_H

#include <stddef.h>
#include <stdint.h>

/* A X = B in two steps, as gesv does them, so that one factorisation
** serves several solves: A (n x n) = P L U in place (LAPACK's recursive
** getrf2, which getrf runs for matrices this small, without getrf's ilaenv
** query per call), then
** B (n x nrhs) becomes X with those factors (getrs). getrf returns
** LAPACK's info: 0, or i > 0 when U(i,i) is exactly zero (A is singular). */
int bf_getrf_c64(int n, float *a, int *ipiv);
int bf_getrf_c128(int n, double *a, int *ipiv);
void bf_getrs_c64(int n, int nrhs, const float *lu, const int *ipiv, float *b);
void bf_getrs_c128(int n, int nrhs, const double *lu, const int *ipiv, double *b);

/* Eigenvalues (ascending, into w[n]) and eigenvectors (the columns of a)
** of the Hermitian A, read from its lower triangle as torch.linalg.eigh
** does. `work` holds bf_heevd_work_bytes(n, ...) bytes. Returns info. */
size_t bf_heevd_work_bytes(int n, size_t real_size);
int bf_heevd_c64(int n, float *a, float *w, void *work);
int bf_heevd_c128(int n, double *a, double *w, void *work);

#endif /* LOOM_AUDIO_BEAMFORM_LAPACK_H */
