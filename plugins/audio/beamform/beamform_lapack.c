/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_lapack.c - LAPACKE's column-major _work entry points, which
** neither allocate nor transpose (the row-major LAPACKE entries would copy
** and malloc on every call). The workspace of heevd is sized by its
** documented minimum for JOBZ = 'V' so one query-free layout serves every
** problem of a call: lwork = 2n + n^2, lrwork = 1 + 5n + 2n^2,
** liwork = 3 + 5n.
*/
#include <lapacke.h>

#include "beamform_lapack.h"

int bf_getrf_c64(int n, float *a, int *ipiv)
{
    return (int)LAPACKE_cgetrf2_work(LAPACK_COL_MAJOR, n, n, (lapack_complex_float *)a, n, ipiv);
}

int bf_getrf_c128(int n, double *a, int *ipiv)
{
    return (int)LAPACKE_zgetrf2_work(LAPACK_COL_MAJOR, n, n, (lapack_complex_double *)a, n, ipiv);
}

void bf_getrs_c64(int n, int nrhs, const float *lu, const int *ipiv, float *b)
{
    LAPACKE_cgetrs_work(LAPACK_COL_MAJOR, 'N', n, nrhs, (const lapack_complex_float *)lu, n, ipiv,
                        (lapack_complex_float *)b, n);
}

void bf_getrs_c128(int n, int nrhs, const double *lu, const int *ipiv, double *b)
{
    LAPACKE_zgetrs_work(LAPACK_COL_MAJOR, 'N', n, nrhs, (const lapack_complex_double *)lu, n, ipiv,
                        (lapack_complex_double *)b, n);
}

static size_t lwork_of(int n) { return (size_t)(2 * n + n * n); }
static size_t lrwork_of(int n) { return (size_t)(1 + 5 * n + 2 * n * n); }
static size_t liwork_of(int n) { return (size_t)(3 + 5 * n); }

size_t bf_heevd_work_bytes(int n, size_t real_size)
{
    return lwork_of(n) * 2 * real_size + lrwork_of(n) * real_size + liwork_of(n) * sizeof(lapack_int) + 64;
}

int bf_heevd_c64(int n, float *a, float *w, void *work)
{
    lapack_complex_float *cw = work;
    float *rw = (float *)(cw + lwork_of(n));
    lapack_int *iw = (lapack_int *)(rw + lrwork_of(n));
    return (int)LAPACKE_cheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, (lapack_complex_float *)a, n, w, cw,
                                    (lapack_int)lwork_of(n), rw, (lapack_int)lrwork_of(n), iw,
                                    (lapack_int)liwork_of(n));
}

int bf_heevd_c128(int n, double *a, double *w, void *work)
{
    lapack_complex_double *cw = work;
    double *rw = (double *)(cw + lwork_of(n));
    lapack_int *iw = (lapack_int *)(rw + lrwork_of(n));
    return (int)LAPACKE_zheevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, (lapack_complex_double *)a, n, w, cw,
                                    (lapack_int)lwork_of(n), rw, (lapack_int)lrwork_of(n), iw,
                                    (lapack_int)liwork_of(n));
}
