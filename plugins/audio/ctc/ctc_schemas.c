/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_schemas.c - the definitions of the CTC module's ops (ctc.h).
*/
#include "ctc.h"
#include "ctc_decoder.h"

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

static const loom_arg_def lm_save_outputs[] = {
    { .name = "bytes", .dtypes = I64, .ndim = 0, .doc = "i64 scalar: the size of the file written" },
};
PK_ATTR_TABLE(ctc_lm_save, CTC_LM_SAVE_ATTRS);

PK_SCHEMA(ctc_lm_save_schema, "audio.ctc_lm_save", 1,
          "write an audio.ctc_lm model in loom's binary n-gram format, which lm= maps back without parsing "
          "(the offline conversion from ARPA)",
          PK_OUTPUTS(lm_save_outputs), PK_ATTRS(ctc_lm_save_attrs), .object_class = CTC_LM_CLASS);

static const loom_arg_def decoder_inputs[] = {
    { .name = "emissions", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 3,
      .doc = "f32 [B, T, N] log-probabilities (or any scores) of the N tokens per frame" },
    { .name = "lengths", .dtypes = I64, .flags = LOOM_ARG_OPTIONAL, .ndim = 1,
      .doc = "i64 [B]: the frames of each utterance (default T)" },
};
#define CTC_RESULT_OUTPUTS                                                                                   \
    [CTC_OUT_TOKENS] = { .name = "tokens", .dtypes = I64, .ndim = 1,                                       \
                         .doc = "i64 token ids of every hypothesis (repeats collapsed, blanks dropped)" },    \
    [CTC_OUT_TIMESTEPS] = { .name = "timesteps", .dtypes = I64, .ndim = 1,                                 \
                            .doc = "i64 where each token starts (frame f is f + 1; 0 and T + 1: the leading " \
                                   "and trailing silence)" },                                                \
    [CTC_OUT_OFFSETS] = { .name = "offsets", .dtypes = I64, .ndim = 1,                                     \
                          .doc = "i64 [H+1]: each hypothesis's tokens and timesteps" },                      \
    [CTC_OUT_WORDS] = { .name = "words", .dtypes = U8, .flags = LOOM_ARG_JAGGED, .ndim = 1,                \
                        .doc = "u8 each hypothesis's words separated by spaces (empty without a lexicon)" }, \
    [CTC_OUT_WORDS_OFFSETS] = { .name = "words_offsets", .dtypes = I64, .flags = LOOM_ARG_OFFSETS,         \
                                .ndim = 1, .doc = "i64 [H+1]" },                                             \
    [CTC_OUT_SCORE] = { .name = "score", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1,              \
                        .doc = "f64 [H] total score of each hypothesis" },                                   \
    [CTC_OUT_HYPOTHESES] = { .name = "hypotheses", .dtypes = I64, .ndim = 1,                               \
                             .doc = "i64 [B+1]: utterance b's hypotheses are rows hypotheses[b]..[b+1], best " \
                                    "first" },
static const loom_arg_def decoder_outputs[] = { CTC_RESULT_OUTPUTS };

PK_SCHEMA(ctc_decoder_schema, CTC_DECODER_CLASS, 1,
          "CTC beam search of a batch of emissions (torchaudio's CTCDecoder.__call__): the nbest hypotheses of each",
          PK_INPUTS(decoder_inputs), PK_OUTPUTS(decoder_outputs), .object_class = CTC_DECODER_CLASS);

static const loom_arg_def step_inputs[] = {
    { .name = "emissions", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "f32 [T, N]: the next T frames (any T, 0 included)" },
};
PK_SCHEMA(ctc_decoder_begin_schema, "audio.ctc_decoder_begin", 1,
          "start a stream on an audio.ctc_decoder (torchaudio's decode_begin); drops any earlier one",
          .object_class = CTC_DECODER_CLASS);
PK_SCHEMA(ctc_decoder_step_schema, "audio.ctc_decoder_step", 1,
          "decode the next frames of the stream (torchaudio's decode_step)", PK_INPUTS(step_inputs),
          .object_class = CTC_DECODER_CLASS);
PK_SCHEMA(ctc_decoder_end_schema, "audio.ctc_decoder_end", 1,
          "finish the stream: the LM's end of sentence (torchaudio's decode_end)", .object_class = CTC_DECODER_CLASS);
PK_SCHEMA(ctc_decoder_final_schema, "audio.ctc_decoder_final", 1,
          "the nbest hypotheses of the ended stream (torchaudio's get_final_hypothesis), as audio.ctc_decoder "
          "gives them for one utterance", PK_OUTPUTS(decoder_outputs), .object_class = CTC_DECODER_CLASS);
PK_SCHEMA(ctc_decoder_best_schema, "audio.ctc_decoder_best", 1,
          "the best hypothesis so far, mid-stream (flashlight's getBestHypothesis): its path back to the last "
          "completed word", PK_OUTPUTS(decoder_outputs), .object_class = CTC_DECODER_CLASS);

PK_OPS_DEFINE(audio_ctc_ops, AUDIO_CTC_OPS);
