/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy_kernels.h - the C launchers of audio.ctc_greedy_decoder's
** cuda kernel (ctc_greedy_kernels.cu). Every launch is asynchronous on
** `stream`; each returns 0 or writes a message into err. Pointers are
** device memory; lengths may be NULL (T frames each).
*/
#ifndef LOOM_AUDIO_CTC_GREEDY_KERNELS_H
#define LOOM_AUDIO_CTC_GREEDY_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* best[r] = argmax of row r of e [rows, n] (first maximum, NaN the maximum). */
int ctc_greedy_cu_argmax(const float *e, int64_t rows, int64_t n, int32_t *best, void *stream, char *err,
                         size_t err_size);
/* counts[b]: the tokens utterance b keeps (a non-blank that differs from the frame before). */
int ctc_greedy_cu_count(const int32_t *best, const int64_t *lengths, int64_t B, int64_t T, int64_t blank,
                        int64_t *counts, void *stream, char *err, size_t err_size);
/* tokens[offsets[b] ...]: utterance b's tokens, offsets [B+1]. */
int ctc_greedy_cu_write(const int32_t *best, const int64_t *lengths, int64_t B, int64_t T, int64_t blank,
                        const int64_t *offsets, int64_t *tokens, void *stream, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_AUDIO_CTC_GREEDY_KERNELS_H */
