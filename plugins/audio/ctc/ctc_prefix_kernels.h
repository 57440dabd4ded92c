/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_prefix_kernels.h - the C launchers of audio.cuda_ctc_decoder's cuda
** kernel (ctc_prefix_kernels.cu). Every launch is asynchronous on `stream`;
** each returns 0 or writes a message into err. Pointers are device memory;
** lengths may be NULL (T frames each).
*/
#ifndef LOOM_AUDIO_CTC_PREFIX_KERNELS_H
#define LOOM_AUDIO_CTC_PREFIX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Device scratch of the search, per utterance: 3 * beam * V floats and
** (2 * beam + 1) * T ints, from ctc_prefix_cu_scratch_bytes. */
size_t ctc_prefix_cu_scratch_bytes(int64_t B, int64_t T, int64_t V, int32_t beam);

/* The search of every utterance of lp [B, T, V] (one block each): for
** hypothesis h = b * nbest + k, n_tokens[h], score[h] and its tokens at
** staged[h * T]. */
int ctc_prefix_cu_search(const float *lp, const int64_t *lengths, int64_t B, int64_t T, int64_t V, int32_t beam,
                         int32_t nbest, float threshold, void *scratch, int32_t *staged, int32_t *n_tokens,
                         float *score, void *stream, char *err, size_t err_size);

/* tokens[offsets[h] ...] = the n_tokens[h] staged tokens of hypothesis h, for H hypotheses. */
int ctc_prefix_cu_gather(const int32_t *staged, const int32_t *n_tokens, const int64_t *offsets, int64_t H,
                         int64_t T, int64_t *tokens, void *stream, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_AUDIO_CTC_PREFIX_KERNELS_H */
