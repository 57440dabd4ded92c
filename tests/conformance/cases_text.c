/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_text.c - the text pack's rows of the conformance table.
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
    { "text.bert_encoder", 0, 0, NULL,
      "tests/text/encoder/test_encoder.c: one cpu kernel; its products go through core.matmul on the backend "
      "the core picks, checked against transformers with LOOM_BACKENDS cpu and onednn" },
    { "text.glue", 0, 0, NULL, "tests/text/glue/test_glue.c: reads files, no tensor inputs; checked against "
      "torchtext's parser" },
};
const size_t cf_text_n_gens = sizeof cf_text_gens / sizeof cf_text_gens[0];
