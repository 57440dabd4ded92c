/* SPDX-License-Identifier: BSD-3-Clause */
/*
** knn_index_scan.h - the bounds of a faiss index file, checked before faiss
** reads it (knn_index_scan.c): rec_knn_index_scan returns 0 when the n
** bytes hold an index of a class rec.knn_index reads whose every count fits
** in the bytes and whose quantizer sizes faiss can divide and shift by; else
** -1 with a message naming the byte offset in err.
*/
#ifndef LOOM_REC_KNN_INDEX_SCAN_H
#define LOOM_REC_KNN_INDEX_SCAN_H

#include <stddef.h>
#include <stdint.h>

int rec_knn_index_scan(const void *data, size_t n, char *err, size_t err_size);

#endif /* LOOM_REC_KNN_INDEX_SCAN_H */
