/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_schemas.c - the definitions of the CTC module's ops (ctc.h).
*/
#include "ctc.h"

#define U8 LOOM_DTYPE_BIT(LOOM_DTYPE_U8)
#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)

static const loom_arg_def lm_score_inputs[] = {
    { .name = "sentences", .dtypes = U8, .flags = LOOM_ARG_JAGGED, .ndim = 1,
      .doc = "u8 UTF-8 sentences, words separated by spaces" },
    { .name = "sentences_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS, .ndim = 1, .doc = "i64 [B+1]" },
};
static const loom_arg_def lm_score_outputs[] = {
    { .name = "score", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1,
      .doc = "f64 [B]: the log10 probability of each sentence (kenlm.Model.score)" },
};
PK_ATTR_TABLE(ctc_lm_score, CTC_LM_SCORE_ATTRS);

PK_SCHEMA(ctc_lm_score_schema, "audio.ctc_lm_score", 1,
          "log10 probabilities of sentences under an audio.ctc_lm n-gram model, as KenLM scores them",
          PK_INPUTS(lm_score_inputs), PK_OUTPUTS(lm_score_outputs), PK_ATTRS(ctc_lm_score_attrs),
          .object_class = CTC_LM_CLASS);

PK_OPS_DEFINE(audio_ctc_ops, AUDIO_CTC_OPS);
