/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_text.c - case generators of the text pack's ops (torchtext).
**
** text.bert_tokenizer has a cpu kernel only (no other backend to compare)
** and its result is integer ids, checked id for id against torchtext and
** tokenizers in its own test.
*/
#include "conformance.h"

const cf_gen cf_text_gens[] = {
    { "text.bert_tokenizer", 0, 0, NULL,
      "tests/text/tokenizer/test_bert_tokenizer.c: cpu only; ids against torchtext and tokenizers goldens" },
};
const size_t cf_text_n_gens = sizeof cf_text_gens / sizeof cf_text_gens[0];
