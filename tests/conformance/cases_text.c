/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_text.c - case generators of the text pack's ops (torchtext).
**
** text.bert_tokenizer has a cpu kernel only (no other backend to compare)
** and its result is integer ids, checked id for id against torchtext and
** tokenizers in its own test.
**
** text.bert_encoder has one kernel (cpu) whose products are core.matmul
** calls: the backend of each product is the core's choice, and core.matmul
** itself is checked here on every backend (cases_core.c). The encoder is
** checked end to end against transformers under LOOM_BACKENDS=cpu and
** onednn by tests/text/encoder. text.glue reads files and has no tensor
** inputs to generate; tests/text/glue checks it against torchtext.
*/
#include "conformance.h"

const cf_gen cf_text_gens[] = {
    { "text.bert_tokenizer", 0, 0, NULL,
      "tests/text/tokenizer/test_bert_tokenizer.c: cpu only; ids against torchtext and tokenizers goldens" },
    { "text.bert_encoder", 0, 0, NULL,
      "tests/text/encoder/test_encoder.c: one cpu kernel; its products go through core.matmul on the backend "
      "the core picks, checked against transformers with LOOM_BACKENDS cpu and onednn" },
    { "text.glue", 0, 0, NULL, "tests/text/glue/test_glue.c: reads files, no tensor inputs; checked against "
      "torchtext's parser" },
};
const size_t cf_text_n_gens = sizeof cf_text_gens / sizeof cf_text_gens[0];
