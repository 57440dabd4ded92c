/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_test_util.h - what the CTC decoder's tests share: the golden cases
** of tools/gen_ctc_goldens.py (tests/data/audio/ctc/decode_*), making a
** decoder from a case's line, and comparing results with the goldens.
*/
#ifndef LOOM_TESTS_AUDIO_CTC_TEST_UTIL_H
#define LOOM_TESTS_AUDIO_CTC_TEST_UTIL_H

#include <stdint.h>

#include "tu_ops.h"

enum { CT_TOKENS, CT_TIMESTEPS, CT_OFFSETS, CT_WORDS, CT_WORDS_OFFSETS, CT_SCORE, CT_HYPOTHESES, CT_N_OUT };

typedef struct ct_goldens {
    char **lines;                  /* decode_cases.txt */
    int n_cases;
    loom_tensor *out[CT_N_OUT];    /* every case's results, concatenated */
    loom_tensor *emissions, *lengths;
    int64_t batch;
} ct_goldens;

void ct_goldens_load(ct_goldens *g);
void ct_goldens_free(ct_goldens *g);

/* A decoder for a case line ("lexicon=1;lm=0;nbest=5;..."), with the test
** data's tokens, lexicon and LM; extra ("name=value;...") is parsed after it. */
loom_object *ct_make_decoder(const char *line, const char *extra);

/* Compare results (the 7 outputs, for the utterances [u0, u0 + n_utt) of
** case c) with the goldens: counts, tokens, timesteps, words identical,
** scores within 1e-4. */
void ct_check(const ct_goldens *g, int c, int64_t u0, int64_t n_utt, loom_tensor *const *out, const char *what);

void ct_free_outputs(loom_tensor **out);

#endif /* LOOM_TESTS_AUDIO_CTC_TEST_UTIL_H */
