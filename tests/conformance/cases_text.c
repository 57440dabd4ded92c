/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_text.c - case generators of the text pack's ops (torchtext).
**
** text.bert_tokenizer has a cpu kernel only (no other backend to compare)
** and its result is integer ids, checked id for id against torchtext and
** tokenizers in its own test.
**
** text.bert_encoder: the cuda kernel (text-cuda.so, where a device
** exists) against the cpu kernel on the tiny random BERT of
** tests/data/text/encoder, on random ids, token types and a mask with
** padding at the end, holes and one row of padding only, for each pooling
** (mean, cls, max, none, mean + normalize). Its cpu products go through
** core.matmul on the backend the core picks (core.matmul itself is checked
** here on every backend, cases_core.c); the encoder is checked end to end
** against transformers by tests/text/encoder. text.glue reads files and
** has no tensor inputs to generate; tests/text/glue checks it against
** torchtext.
*/
#include <stdio.h>

#include "conformance.h"
#include "tu_env.h"

/* ---------------------------------------------------- text.bert_encoder */

static int encoder_make(cf_case *c)
{
    static const char *const pools[] = { "mean", "cls", "max", "none", "mean" };
    enum { B = 4, L = 9 };
    const int64_t shape[2] = { B, L };
    int64_t ids[B * L], mask[B * L], types[B * L];
    for (int64_t i = 0; i < B * L; i++) {
        const int64_t b = i / L, t = i % L;
        ids[i] = (int64_t)(cf_draw(c, 0, (uint64_t)i) * 99.0) % 99;      /* vocab_size 99 */
        types[i] = t >= L / 2 && cf_draw(c, 1, (uint64_t)i) < 0.7;
        /* row 0 full, row 1 padded at the end, row 2 with holes, row 3 all padding */
        mask[i] = b == 0 ? 1 : b == 1 ? t < 5 : b == 2 ? cf_draw(c, 2, (uint64_t)i) < 0.6 || t == 0 : 0;
    }
    loom_attrs *a;
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "config",
                                                               tu_data_path("text/encoder/tiny_config.json"))
        != LOOM_OK)
        cf_die("text.bert_encoder: attributes: %s", loom_last_error());
    if (loom_object_create(&c->object, "text.bert_encoder", a, tu_data_path("text/encoder/tiny_bert.safetensors"))
        != LOOM_OK)
        cf_die("text.bert_encoder: create: %s", loom_last_error());
    loom_attrs_free(a);
    c->in[0] = cf_index(c, LOOM_DTYPE_I64, 2, shape, ids);
    c->in[1] = cf_index(c, LOOM_DTYPE_I64, 2, shape, mask);
    c->in[2] = cf_index(c, LOOM_DTYPE_I64, 2, shape, types);
    c->n_in = 3;
    const int norm = c->index == 4;
    cf_attrs(c, "pooling=%s;normalize=%s", pools[c->index], norm ? "true" : "false");
    /* tests/text/encoder's tolerance against float64 references */
    cf_tol_all(c, CF_CLOSE, 1e-5, norm ? 5e-6 : 2e-5);
    cf_what(c, "tiny BERT, ids [%d,%d], padding, holes, an empty row, pooling %s%s", B, L, pools[c->index],
            norm ? " + normalize" : "");
    return 1;
}

const cf_gen cf_text_gens[] = {
    { "text.bert_tokenizer", 0, 0, NULL,
      "tests/text/tokenizer/test_bert_tokenizer.c: cpu only; ids against torchtext and tokenizers goldens" },
    { "text.bert_encoder", LOOM_DTYPE_BIT(LOOM_DTYPE_I64), 5, encoder_make, NULL },
    { "text.glue", 0, 0, NULL, "tests/text/glue/test_glue.c: reads files, no tensor inputs; checked against "
      "torchtext's parser" },
};
const size_t cf_text_n_gens = sizeof cf_text_gens / sizeof cf_text_gens[0];
