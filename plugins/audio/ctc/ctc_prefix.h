/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_prefix.h - audio.cuda_ctc_decoder: the blank-collapsing CTC prefix
** beam search torchaudio 2.1 added as cuda_ctc_decoder (libtorchaudio's
** cuctc), with its results: per utterance the nbest prefixes (tokens) and
** their scores, no words, no timesteps, no LM.
**   inputs   log_probs f32 [B, T, V] (log-softmax), lengths i64 [B]
**            (optional: T each)
**   attrs    beam_size (10; at most 128, and V when V is smaller, as
**            torchaudio takes min(beam_size, V)), nbest (1; at most that
**            beam), blank_skip_threshold (0.95, in (0, 1])
**   outputs  tokens i64 (every hypothesis's tokens, one after the other),
**            offsets i64 [B * nbest + 1] (hypothesis b * nbest + k of
**            utterance b, best first), score f32 [B, nbest]
** The blank is token 0, as torchaudio requires. The algorithm, per
** utterance (torchaudio's kernels, step by step; tools/gen_ctc_cuda_goldens.py
** reimplements it in NumPy for the goldens):
**   - frames whose blank log-prob is >= log(blank_skip_threshold) are
**     skipped; the others are the steps. need_add_blank(i): the frame of
**     step i + 1 is not the one after step i's;
**   - step 0: the beam best tokens of its frame, best first: a blank is
**     the empty prefix with pb = p; a token c the prefix "c" with pnb = p
**     (pb = p when need_add_blank(0));
**   - step i: every beam j and token c != 0 gives "j c": pnb = p_c + pb(j)
**     when c is j's last token (and j itself gets pnb = p_c + pnb(j)), else
**     p_c + lse(pb(j), pnb(j)); j itself gets pb = p_0 + lse(pb(j), pnb(j))
**     (pnb none when j is empty). Where beam t is beam a and one token c,
**     a's "a c" is merged into t's own (lse of pb and of pnb) and dropped.
**     The beam best of the beam x V candidates by lse(pb, pnb), best first
**     (ties: the lower j * V + c on the cpu), keep pb and pnb, or become
**     (score, none) when need_add_blank(i);
**   - the result is the beam after the utterance's last step, its first
**     nbest. An utterance with no step gives nbest empty hypotheses of score
**     0 (torchaudio leaves those scores unset).
** lse(a, b) = max + log(1 + exp(-|a - b|)) in float; "none" is -FLT_MAX, so
** a -inf log-prob gives NaN scores, as torchaudio's. The cuda kernel
** (audio-cuda.so) uses the device's fast exp and log, so its scores differ
** from the cpu's by float rounding.
*/
#ifndef LOOM_AUDIO_CTC_PREFIX_H
#define LOOM_AUDIO_CTC_PREFIX_H

#include <stdint.h>

#include "audio_pack.h"

#define CTC_PREFIX_MAX_BEAM 128      /* torchaudio's limit ("only support beam size <= 128") */

#define CTC_PREFIX_ATTRS(A, op)                                                                       \
    A(op, beam_size, INT, LOOM_DEFAULT_INT(10), LOOM_ATTR_POSITIVE,                                   \
      "hypotheses kept after each step, at most 128 (and the number of tokens)", )                   \
    A(op, nbest, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE, "hypotheses returned per utterance", ) \
    A(op, blank_skip_threshold, FLOAT, LOOM_DEFAULT_FLOAT(0.95), 0,                                   \
      "frames whose blank probability is at least this are skipped, in (0, 1]", )
PK_ATTR_ENUM(ctc_prefix, CTC_PREFIX_ATTRS);

#define AUDIO_CTC_PREFIX_OPS(X) X(ctc_prefix_schema)
PK_OPS_DECLARE(audio_ctc_prefix_ops, AUDIO_CTC_PREFIX_OPS);

/* What the checks resolve: the beam (min(beam_size, V)), nbest and
** log(blank_skip_threshold). */
typedef struct ctc_prefix_params {
    int32_t beam, nbest;
    float threshold;
} ctc_prefix_params;

/* The checks both backends run: shapes, lengths in [0, T] (from the host
** copy `lengths_host`), the attributes. */
loom_status ctc_prefix_check(const loom_call *call, const int64_t *lengths_host, ctc_prefix_params *p);

#endif /* LOOM_AUDIO_CTC_PREFIX_H */
