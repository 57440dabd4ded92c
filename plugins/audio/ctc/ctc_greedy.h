/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_greedy.h - audio.ctc_greedy_decoder: best path CTC decoding (the
** GreedyCTCDecoder of torchaudio's ASR tutorial): per frame the argmax
** token (the first of equal maxima, a NaN the maximum, as torch.argmax),
** repeats collapsed (unique_consecutive), blanks dropped.
**   inputs   emissions f32 [B, T, N], lengths i64 [B] (optional: T each)
**   attr     blank (default 0)
**   outputs  tokens i64 [L]: every utterance's tokens, one after the other;
**            offsets i64 [B+1]: utterance b's are tokens[offsets[b]..[b+1]]
** The cpu kernel takes the argmax of the frames in parallel (AVX2 when the
** core allows it), then collapses each utterance; the cuda kernel
** (audio-cuda.so) does the same on the device in three launches.
*/
#ifndef LOOM_AUDIO_CTC_GREEDY_H
#define LOOM_AUDIO_CTC_GREEDY_H

#include <stdint.h>

#include "audio_pack.h"

#define CTC_GREEDY_ATTRS(A, op)                                                                        \
    A(op, blank, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG, "the blank token's index", )
PK_ATTR_ENUM(ctc_greedy, CTC_GREEDY_ATTRS);

#define AUDIO_CTC_GREEDY_OPS(X) X(ctc_greedy_schema)
PK_OPS_DECLARE(audio_ctc_greedy_ops, AUDIO_CTC_GREEDY_OPS);

/* The checks both backends run: shapes, lengths in [0, T] (read from the
** host copy `lengths_host`, which the cuda kernel fetches first), blank < N. */
loom_status ctc_greedy_check(const loom_call *call, const int64_t *lengths_host);

/* argmax of rows [begin, end) of x [rows, n] into out (ctc_greedy_avx2.c). */
void ctc_argmax_rows_avx2(const float *x, int64_t n, int64_t begin, int64_t end, int32_t *out);
void ctc_argmax_rows_scalar(const float *x, int64_t n, int64_t begin, int64_t end, int32_t *out);

#endif /* LOOM_AUDIO_CTC_GREEDY_H */
