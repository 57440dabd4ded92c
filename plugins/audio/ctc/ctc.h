/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc.h - the CTC module of the audio pack (audio.so):
**   audio.ctc_lm         an n-gram LM read from an ARPA file (arpa_lm.h),
**                        with its method audio.ctc_lm_score: sentence
**                        scores as KenLM's Python module computes them
**   audio.ctc_decoder    torchaudio's ctc_decoder (ctc_decoder.h), with its
**                        batch method audio.ctc_decoder and the streaming
**                        ones (ctc_stream.c): audio.ctc_decoder_begin,
**                        _step, _end, _final (get_final_hypothesis) and
**                        _best (getBestHypothesis, mid-stream)
*/
#ifndef LOOM_AUDIO_CTC_H
#define LOOM_AUDIO_CTC_H

#include "audio_pack.h"
#include "arpa_lm.h"

#define CTC_LM_CLASS "audio.ctc_lm"

#define CTC_LM_CLASS_ATTRS(A, op)                                                                   \
    A(op, lm, STRING, LOOM_DEFAULT_NONE, 0,                                                         \
      "the ARPA file or loom's binary model of it (or a named file 'lm'); KenLM's binary format is not " \
      "read", )                                                                                   \
    A(op, quantize, INT, LOOM_DEFAULT_INT(0), LOOM_ATTR_NONNEG,                                     \
      "0: float probabilities; 2..8: orders 2 and up quantised to that many bits (less memory)", )
PK_ATTR_ENUM(ctc_lm_class, CTC_LM_CLASS_ATTRS);

#define CTC_LM_SCORE_ATTRS(A, op)                                                                   \
    A(op, bos, BOOL, LOOM_DEFAULT_BOOL(1), 0, "start each sentence after <s> (kenlm's bos)", )      \
    A(op, eos, BOOL, LOOM_DEFAULT_BOOL(1), 0, "end each sentence with </s> (kenlm's eos)", )
PK_ATTR_ENUM(ctc_lm_score, CTC_LM_SCORE_ATTRS);

#define CTC_LM_SAVE_ATTRS(A, op)                                                                    \
    A(op, path, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                      \
      "the binary model written (replaced whole, never in part)", )
PK_ATTR_ENUM(ctc_lm_save, CTC_LM_SAVE_ATTRS);

#define AUDIO_CTC_OPS(X)                                                                              \
    X(ctc_lm_score_schema) X(ctc_lm_save_schema) X(ctc_decoder_schema) X(ctc_decoder_begin_schema) X(ctc_decoder_step_schema)   \
    X(ctc_decoder_end_schema) X(ctc_decoder_final_schema) X(ctc_decoder_best_schema)
PK_OPS_DECLARE(audio_ctc_ops, AUDIO_CTC_OPS);

extern const loom_object_class audio_ctc_lm_class, audio_ctc_decoder_class;

/* The path of file `name`: the named file of the object's create, else the
** string attribute at index attr (NULL when neither is given). */
const char *ctc_file_arg(const loom_object_args *args, const char *name, int32_t attr);

/* Load an ARPA file into *out; fails naming `what` (e.g. "audio.ctc_lm:
** 'lm'"), the path, the line and the reason. */
loom_status ctc_arpa_lm_open(const char *what, const char *path, ctc_arpa_lm **out);
/* Quantise a loaded model to `bits` (0: leave it), failing naming `what`. */
loom_status ctc_arpa_lm_quantize_checked(const char *what, ctc_arpa_lm *lm, int64_t bits);

#endif /* LOOM_AUDIO_CTC_H */
