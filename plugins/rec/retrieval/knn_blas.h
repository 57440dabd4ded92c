/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_blas.h - the call context FAISS's sgemm_ calls run on (knn_blas.c):
** rec_knn_blas_use(ctx) before the FAISS calls of a kernel or a create,
** rec_knn_blas_use(NULL) after, on the same thread.
*/
#ifndef LOOM_REC_KNN_BLAS_H
#define LOOM_REC_KNN_BLAS_H

#include "loom/plugin.h"

void rec_knn_blas_use(loom_exec_ctx *ctx);

#endif /* LOOM_REC_KNN_BLAS_H */
