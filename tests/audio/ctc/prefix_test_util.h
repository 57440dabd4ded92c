/* SPDX-License-Identifier: BSD-3-Clause */
/*
** prefix_test_util.h - what the tests of audio.cuda_ctc_decoder share: the
** goldens of tools/gen_ctc_cuda_goldens.py (tests/data/audio/ctc/cuda_ctc_*)
** and the comparison of one case's results with them.
*/
#ifndef LOOM_TESTS_AUDIO_CTC_PREFIX_TEST_UTIL_H
#define LOOM_TESTS_AUDIO_CTC_PREFIX_TEST_UTIL_H

#include <stdint.h>

#include "tu_ops.h"

typedef struct pt_goldens {
    char lines[16][96];            /* cuda_ctc_cases.txt: "beam_size=..;nbest=..;blank_skip_threshold=.." */
    int n_cases;
    int nbest[16];
    int64_t first_row[17];         /* case c's hypotheses are rows first_row[c] .. first_row[c + 1] */
    loom_tensor *emissions, *lengths, *tokens, *offsets, *score;
} pt_goldens;

/* The goldens every test of a group reads, loaded by pt_setup (after
** tu_setup) and freed by pt_teardown: the group's setup and teardown. */
extern pt_goldens PT;
int pt_setup(void **state);
int pt_teardown(void **state);

void pt_goldens_load(pt_goldens *g);
void pt_goldens_free(pt_goldens *g);
/* Attributes of audio.cuda_ctc_decoder from "k=v;k=v" text. */
loom_attrs *pt_attrs(const char *text);
/* The attributes of case c. */
loom_attrs *pt_case_attrs(const pt_goldens *g, int c);
/* out: tokens, offsets, score (host tensors) of case c against the goldens:
** offsets and tokens identical, scores within atol. */
void pt_check(const pt_goldens *g, int c, loom_tensor *const *out, double atol, const char *what);

#endif /* LOOM_TESTS_AUDIO_CTC_PREFIX_TEST_UTIL_H */
