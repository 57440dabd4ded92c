/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_ctc_files.c - feeds: the CTC module's file parsers. The first byte
** chooses the file (bits 0-1): 0 an ARPA model (audio.ctc_lm lm=<input>,
** then one sentence scored), 1 a tokens file (audio.ctc_decoder
** tokens=<input>, lexicon-free), 2 a lexicon (audio.ctc_decoder with the
** tokens '- | a b c d e' and lexicon=<input>), 3 a loom binary n-gram model
** (ngram_binary.h; audio.ctc_lm lm=<input>, one sentence scored; bit 3
** first makes the header's checksum match the bytes, so the checks after
** it are reached); bit 2 makes a decoder also decode 6 frames of fixed
** emissions, so a fuzzed trie (or, with 3, a lexicon-free search on the
** binary model) is searched. The rest is the file.
** Asserts: no sanitizer report; a refused file fails with LOOM_EFORMAT (or
** LOOM_EINVAL for tokens without the blank or the silence) and a message
** that names the file; an ARPA format error names its line, a binary one
** the format; a model that loads
** scores finitely or -inf, never NaN; decoding returns offsets that start at
** 0 and end at the outputs' sizes.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "ngram_binary.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,audio");
    FZ_CHECK(loom_op_find("audio.ctc_decoder") != NULL, "the audio pack did not load");
    return 0;
}

static void check_refusal(loom_status s, const char *path)
{
    const char *e = loom_last_error();
    FZ_CHECK(s == LOOM_EFORMAT || s == LOOM_EINVAL, "refusal %s: %s", loom_status_name(s), e);
    if (s == LOOM_EFORMAT && strstr(e, "out of memory") == NULL)
        FZ_CHECK(strstr(e, path) != NULL || strstr(e, "(token_list)") != NULL, "the message names no file: %s", e);
}

static void score_one(loom_object *lm)
{
    static const char text[] = "a b <s> c </s> <unk> zz";
    loom_tensor *t = NULL, *o = NULL, *out = NULL;
    FZ_CHECK(loom_tensor_new(&t, LOOM_DTYPE_U8, 1, (int64_t[]){ (int64_t)sizeof text - 1 }, NULL) == LOOM_OK, "t");
    memcpy(loom_data(t), text, sizeof text - 1);
    FZ_CHECK(loom_tensor_new(&o, LOOM_DTYPE_I64, 1, (int64_t[]){ 2 }, NULL) == LOOM_OK, "o");
    ((int64_t *)loom_data(o))[1] = (int64_t)sizeof text - 1;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    const loom_tensor *in[2] = { t, o };
    loom_status s = loom_run("audio.ctc_lm_score", in, 2, NULL, &out, 1, &opt);
    FZ_CHECK(s == LOOM_OK, "score: %s", loom_last_error());
    FZ_CHECK(!isnan(((double *)loom_data(out))[0]), "a NaN score");
    loom_tensor_free(out);
    loom_tensor_free(t);
    loom_tensor_free(o);
}

static void decode_some(loom_object *dec, int64_t n_tok)
{
    loom_tensor *e = NULL, *out[7] = { 0 };
    FZ_CHECK(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 1, 6, n_tok }, NULL) == LOOM_OK, "e");
    float *p = loom_data(e);
    for (int64_t i = 0; i < 6 * n_tok; i++)
        p[i] = -(float)((i * 7919) % 13) * 0.5f;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = dec;
    const loom_tensor *in[2] = { e, NULL };
    loom_status s = loom_run("audio.ctc_decoder", in, 2, NULL, out, 7, &opt);
    FZ_CHECK(s == LOOM_OK, "decode: %s", loom_last_error());
    const int64_t *off = loom_data(out[2]), *woff = loom_data(out[4]), *hyp = loom_data(out[6]);
    const int64_t h = out[5]->shape[0];
    FZ_CHECK(off[0] == 0 && off[h] == out[0]->shape[0] && woff[0] == 0 && woff[h] == out[3]->shape[0]
             && hyp[0] == 0 && hyp[1] == h, "offsets");
    for (int k = 0; k < 7; k++) {
        fz_touch_tensor(out[k]);
        loom_tensor_free(out[k]);
    }
    loom_tensor_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const int which = data[0] & 3, decode = (data[0] >> 2) & 1;
    const char *path;
    if (which == 3 && (data[0] & 8) && size - 1 >= sizeof(ngram_bin_header)) {
        /* the checksum made to match: what a forged file meets after it */
        uint8_t *copy = malloc(size - 1);
        FZ_CHECK(copy != NULL, "malloc");
        memcpy(copy, data + 1, size - 1);
        ngram_bin_header h;
        memcpy(&h, copy, sizeof h);
        h.checksum = ngram_bin_checksum(copy + sizeof h, size - 1 - sizeof h);
        memcpy(copy, &h, sizeof h);
        path = fz_file(copy, size - 1);
        free(copy);
    } else {
        path = fz_file(data + 1, size - 1);
    }
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    loom_object *obj = NULL;
    loom_status s;
    if (which == 0 || which == 3) {
        loom_attrs_set_string(a, "lm", path);
        s = loom_object_create(&obj, "audio.ctc_lm", a, NULL);
        if (s == LOOM_OK)
            score_one(obj);
        else
            FZ_CHECK(s == LOOM_EFORMAT && strstr(loom_last_error(), path) != NULL
                         && (strstr(loom_last_error(), "line ") != NULL
                             || strstr(loom_last_error(), "loom binary n-gram model: ") != NULL
                             || strstr(loom_last_error(), "out of memory") != NULL),
                     "LM refusal %s: %s", loom_status_name(s), loom_last_error());
        if (s == LOOM_OK && which == 3 && decode) {
            loom_object_free(obj);
            obj = NULL;
            loom_attrs_free(a);
            FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
            loom_attrs_set_string(a, "token_list", "- | a b c d e");
            loom_attrs_set_string(a, "lm", path);
            loom_attrs_set_int(a, "beam_size", 4);
            s = loom_object_create(&obj, "audio.ctc_decoder", a, NULL);
            FZ_CHECK(s == LOOM_OK, "a decoder on a model audio.ctc_lm loads: %s", loom_last_error());
            decode_some(obj, 7);
        }
    } else {
        if (which == 1) {
            loom_attrs_set_string(a, "tokens", path);
        } else {
            loom_attrs_set_string(a, "token_list", "- | a b c d e");
            loom_attrs_set_string(a, "lexicon", path);
        }
        loom_attrs_set_int(a, "beam_size", 4);
        s = loom_object_create(&obj, "audio.ctc_decoder", a, NULL);
        if (s != LOOM_OK) {
            check_refusal(s, path);
        } else if (decode) {
            int64_t n_tok = 7;
            if (which == 1) {
                /* the number of tokens: the decoder refuses any other N and says it */
                loom_tensor *e = NULL, *out[7] = { 0 };
                FZ_CHECK(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 1, 1, 1 }, NULL) == LOOM_OK, "e");
                loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
                opt.object = obj;
                const loom_tensor *in[2] = { e, NULL };
                loom_status r = loom_run("audio.ctc_decoder", in, 2, NULL, out, 7, &opt);
                const char *m = strstr(loom_last_error(), "with N = ");
                n_tok = r == LOOM_OK ? 1 : m != NULL ? atoll(m + 9) : 0;
                for (int k = 0; k < 7; k++)
                    loom_tensor_free(out[k]);
                loom_tensor_free(e);
            }
            if (n_tok > 0 && n_tok <= 4096)
                decode_some(obj, n_tok);
        }
    }
    loom_object_free(obj);
    loom_attrs_free(a);
    return 0;
}
