/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_decoder.h - the audio.ctc_decoder object (torchaudio's ctc_decoder)
** and what its methods share.
**
** Results, for H hypotheses of B utterances (at most nbest each, best
** first), as torchaudio's CTCHypothesis fields:
**   tokens      i64 values: the token ids of every hypothesis, repeats
**               collapsed and blanks dropped (starting and ending with the
**               silence of the first and last step)
**   timesteps   i64 values: where each token starts; frame f is f + 1, the
**               leading silence 0 and the trailing one T + 1
**   offsets     i64 [H+1]: hypothesis h's tokens and timesteps
**   words       u8: each hypothesis's words, separated by one space (empty
**               in lexicon-free decoding); words_offsets i64 [H+1]
**   score       f64 [H]: the total score (acoustic + weighted LM + word
**               and silence scores)
**   hypotheses  i64 [B+1]: utterance b's hypotheses are rows
**               hypotheses[b] .. hypotheses[b+1]
*/
#ifndef LOOM_AUDIO_CTC_DECODER_H
#define LOOM_AUDIO_CTC_DECODER_H

#include <pthread.h>

#include "ctc.h"
#include "ctc_beam.h"
#include "loom/ctc_lm.h"

#define CTC_DECODER_CLASS "audio.ctc_decoder"

#define CTC_DECODER_CLASS_ATTRS(A, op)                                                                 \
    A(op, lexicon, STRING, LOOM_DEFAULT_NONE, 0,                                                       \
      "lexicon file, 'word tok tok ...' per line; none: lexicon-free decoding", )                      \
    A(op, tokens, STRING, LOOM_DEFAULT_NONE, 0,                                                        \
      "tokens file: one index per line, every entry of a line maps to it", )                           \
    A(op, token_list, STRING, LOOM_DEFAULT_NONE, 0,                                                    \
      "the tokens as one string, separated by spaces (torchaudio's list), instead of tokens", )        \
    A(op, lm, STRING, LOOM_DEFAULT_NONE, 0,                                                            \
      "an ARPA n-gram model or loom's binary of one (told apart by its magic), or the name of an LM "   \
      "interface a pack offers (loom/ctc_lm.h); none: no LM (ZeroLM)", )                                                                                 \
    A(op, lm_options, STRING, LOOM_DEFAULT_STRING(""), 0, "what an interface LM's create receives", ) \
    A(op, lm_quantize, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                     \
      "an ARPA lm: 0 floats, 2..8 bits a value (audio.ctc_lm's quantize)", )                           \
    A(op, lm_dict, STRING, LOOM_DEFAULT_NONE, 0,                                                       \
      "the LM's word dictionary, one word per line; none: the lexicon's words (lexicon-free: the "     \
      "tokens and unk_word)", )                                                                        \
    A(op, nbest, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE, "hypotheses returned per utterance", )  \
    A(op, beam_size, INT, LOOM_DEFAULT_INT(50), LOOM_ATTR_POSITIVE, "hypotheses kept after each step", ) \
    A(op, beam_size_token, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                 \
      "tokens considered at each step; 0: all (torchaudio's None)", )                                  \
    A(op, beam_threshold, FLOAT, LOOM_DEFAULT_FLOAT(50), LOOM_ATTR_NONNEG,                             \
      "hypotheses more than this below the best are pruned", )                                         \
    A(op, lm_weight, FLOAT, LOOM_DEFAULT_FLOAT(2), LOOM_ATTR_FINITE,                                   \
      "weight of the LM's scores (KenLM's are log10, emissions natural log)", )                        \
    A(op, word_score, FLOAT, LOOM_DEFAULT_FLOAT(0), LOOM_ATTR_FINITE, "word insertion score", )        \
    A(op, unk_score, FLOAT, LOOM_DEFAULT_FLOAT(-INFINITY), 0,                                          \
      "unknown word insertion score; -inf: no unknown words", )                                        \
    A(op, sil_score, FLOAT, LOOM_DEFAULT_FLOAT(0), LOOM_ATTR_FINITE, "silence insertion score", )      \
    A(op, log_add, BOOL, LOOM_DEFAULT_BOOL(0), 0, "merge equal hypotheses by log-add (else max)", )    \
    A(op, blank_token, STRING, LOOM_DEFAULT_STRING("-"), 0, "the CTC blank", )                         \
    A(op, sil_token, STRING, LOOM_DEFAULT_STRING("|"), 0, "the silence (word boundary)", )             \
    A(op, unk_word, STRING, LOOM_DEFAULT_STRING("<unk>"), 0, "the unknown word", )
PK_ATTR_ENUM(ctc_decoder_class, CTC_DECODER_CLASS_ATTRS);

enum { CTC_OUT_TOKENS, CTC_OUT_TIMESTEPS, CTC_OUT_OFFSETS, CTC_OUT_WORDS, CTC_OUT_WORDS_OFFSETS, CTC_OUT_SCORE,
       CTC_OUT_HYPOTHESES, CTC_N_OUT };

typedef struct ctc_decoder {
    ctc_model m;
    pthread_mutex_t lock;         /* the streaming search */
    ctc_search *stream;
    int stream_state;             /* 0 none, 1 begun, 2 ended */
    const loom_ctc_lm_v1 *lm_iface;   /* an interface LM, and its instance */
    void *lm_instance;
} ctc_decoder;

extern const loom_object_class audio_ctc_decoder_class;

/* emissions of rank 3 ([B, T, N]) or 2 ([T, N]) with N the tokens. */
loom_status ctc_decoder_check_emissions(const ctc_decoder *d, const loom_tensor *e, int rank);
/* Write the result outputs (CTC_OUT_*), utt_hyps[b] hypotheses per utterance. */
loom_status ctc_decoder_put_results(loom_call *call, const ctc_results *r, int64_t n_utt, const int64_t *utt_hyps);
loom_status ctc_decoder_search_fail(int r);

#endif /* LOOM_AUDIO_CTC_DECODER_H */
