/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_wordpiece.c - feeds: the text pack's text.bert_tokenizer. The first
** byte of an input chooses what the rest is and the options:
**   bit 0   0: the rest is text (strings split at '\n') tokenized with the
**           real vocab (tests/data/text/vocab.txt); 1: the rest is a vocab
**           file, and a fixed set of strings is tokenized with it
**   bit 1   compat=hf          bit 2   do_lower_case=false
**   bit 3   strip_accents set (its value: bit 4)
**   bit 5   never_split "[CLS] [SEP] ##a a##"
**   bit 6   return_char_offsets, return_tokens (text only; pairs of
**           consecutive strings when there are at least two)
**   bit 7   padding=longest with max_length=16 (truncation longest_first)
** Asserts: no sanitizer report; a vocab file is either refused with a
** message (and no object) or makes an object; a call either succeeds with
** sane outputs (offsets from 0 rising to the ids' count, every id inside the
** vocab, char offsets inside their string) or fails with LOOM_EINVAL: for
** text, naming malformed UTF-8 and the row; for a vocab, naming a special
** token the call needs and the vocab lacks.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

#ifndef FUZZ_VOCAB
#error "FUZZ_VOCAB: the path of tests/data/text/vocab.txt"
#endif

#define MAX_STRINGS 64

/* objects over the real vocab, one per option byte (bits 1..5), made once */
static loom_object *real[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("text");
    FZ_CHECK(loom_op_find("text.bert_tokenizer") != NULL, "the text pack did not load");
    return 0;
}

static loom_attrs *class_attrs(uint8_t opt, const char *vocab)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs: %s", loom_last_error());
    loom_attrs_set_string(a, "vocab", vocab);
    if (opt & 2)
        loom_attrs_set_string(a, "compat", "hf");
    if (opt & 4)
        loom_attrs_set_bool(a, "do_lower_case", 0);
    if (opt & 8)
        loom_attrs_set_bool(a, "strip_accents", (opt & 16) != 0);
    if (opt & 32)
        loom_attrs_set_string(a, "never_split", "[CLS] [SEP] ##a a##");
    if (opt & 64)
        loom_attrs_set_bool(a, "return_tokens", 1);
    return a;
}

/* The strings of s[0..n) split at '\n' as the jagged pair. */
static void jagged(const uint8_t *s, size_t n, loom_tensor **values, loom_tensor **offsets, int64_t *rows)
{
    int64_t off[MAX_STRINGS + 1] = { 0 }, b = 0;
    /* string b ends at byte i of s, after b newlines that are not values */
    for (size_t i = 0; i <= n && b < MAX_STRINGS; i++)
        if (i == n || s[i] == '\n') {
            off[b + 1] = (int64_t)i - b;
            b++;
        }
    const int64_t vshape[1] = { off[b] }, oshape[1] = { b + 1 };
    FZ_CHECK(loom_tensor_new(values, LOOM_DTYPE_U8, 1, vshape, NULL) == LOOM_OK, "%s", loom_last_error());
    FZ_CHECK(loom_tensor_new(offsets, LOOM_DTYPE_I64, 1, oshape, NULL) == LOOM_OK, "%s", loom_last_error());
    uint8_t *v = loom_data(*values);
    int64_t k = 0;
    for (size_t i = 0; i < n && k < off[b]; i++)
        if (s[i] != '\n')
            v[k++] = s[i];
    memcpy(loom_data(*offsets), off, (size_t)(b + 1) * sizeof off[0]);
    *rows = b;
}

static void check_outputs(loom_tensor **out, int64_t rows, int64_t n_vocab, int dense, const loom_tensor *text_off)
{
    const int64_t *off = loom_data(out[1]);
    FZ_CHECK(out[1]->shape[0] == rows + 1 && off[0] == 0, "offsets");
    for (int64_t b = 0; b < rows; b++)
        FZ_CHECK(off[b + 1] >= off[b], "offsets fall at row %lld", (long long)b);
    const int64_t *ids = loom_data(out[0]);
    const int64_t n = dense ? out[0]->shape[0] * out[0]->shape[1] : out[0]->shape[0];
    FZ_CHECK(dense || n == off[rows], "%lld ids, offsets end at %lld", (long long)n, (long long)off[rows]);
    for (int64_t i = 0; i < n; i++)
        FZ_CHECK(ids[i] >= 0 && ids[i] < n_vocab, "id %lld of %lld", (long long)ids[i], (long long)n_vocab);
    if (!dense && out[4]->shape[0] > 0) {
        const int64_t *ch = loom_data(out[4]), *to = loom_data(text_off);
        for (int64_t b = 0; b < rows; b++)
            for (int64_t i = off[b]; i < off[b + 1]; i++)
                FZ_CHECK(ch[2 * i] >= 0 && ch[2 * i] <= ch[2 * i + 1] && ch[2 * i + 1] <= to[b + 1] - to[b],
                         "char offsets [%lld, %lld) of row %lld", (long long)ch[2 * i], (long long)ch[2 * i + 1],
                         (long long)b);
    }
    for (int k = 0; k < 7; k++)
        fz_touch_tensor(out[k]);
}

static void run(loom_object *obj, uint8_t opt, const uint8_t *s, size_t n, int64_t n_vocab, int from_text)
{
    loom_tensor *t, *o, *out[7] = { NULL };
    int64_t rows;
    jagged(s, n, &t, &o, &rows);
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    const int pairs = (opt & 64) && from_text && rows >= 2;
    if (opt & 64)
        loom_attrs_set_bool(a, "return_char_offsets", !pairs);
    if (opt & 128) {
        loom_attrs_set_int(a, "max_length", 16);
        loom_attrs_set_string(a, "padding", "longest");
    }
    const loom_tensor *in[4] = { t, o, pairs ? t : NULL, pairs ? o : NULL };
    loom_call_options opts = LOOM_CALL_OPTIONS_INIT;
    opts.object = obj;
    loom_status st = loom_run("text.bert_tokenizer", in, 4, a, out, 7, &opts);
    if (st == LOOM_OK)
        check_outputs(out, rows, n_vocab, (opt & 128) != 0, o);
    else if (from_text)
        FZ_CHECK(st == LOOM_EINVAL && strstr(loom_last_error(), "is not UTF-8") != NULL, "call failed: %s",
                 loom_last_error());
    else    /* a fuzzed vocab may lack the special tokens a call asks for */
        FZ_CHECK(st == LOOM_EINVAL && strstr(loom_last_error(), "in the vocab") != NULL, "call failed: %s",
                 loom_last_error());
    for (int k = 0; k < 7; k++)
        loom_tensor_free(out[k]);
    loom_attrs_free(a);
    loom_tensor_free(t);
    loom_tensor_free(o);
}

static const char sample[] = "Hello, World! unaffable caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 [CLS] a##b ##a\n"
                             "\n  \t x\xe2\x80\xa8y \xf0\x9f\x98\x80 ab\x00" "cd\nzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t opt = data[0];
    if (!(opt & 1)) {
        const int k = (opt >> 1) & 63;
        if (real[k] == NULL) {
            loom_attrs *a = class_attrs((uint8_t)(opt & 0x7E), FUZZ_VOCAB);
            FZ_CHECK(loom_object_create(&real[k], "text.bert_tokenizer", a, NULL) == LOOM_OK, "real vocab: %s",
                     loom_last_error());
            loom_attrs_free(a);
        }
        run(real[k], opt, data + 1, size - 1, 30522, 1);
        return 0;
    }
    const char *path = fz_file(data + 1, size - 1);
    loom_attrs *a = class_attrs(opt, path);
    loom_object *obj = NULL;
    loom_status st = loom_object_create(&obj, "text.bert_tokenizer", a, NULL);
    loom_attrs_free(a);
    if (st != LOOM_OK) {
        FZ_CHECK(obj == NULL && loom_last_error()[0] != '\0', "a refused vocab left an object or no message");
        return 0;
    }
    int64_t lines = 1;
    for (size_t i = 1; i < size; i++)
        lines += data[i] == '\n';
    run(obj, opt, (const uint8_t *)sample, sizeof sample - 1, lines, 0);
    loom_object_free(obj);
    return 0;
}
