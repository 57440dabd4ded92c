/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_lm.c - the audio.ctc_lm n-gram model against KenLM: the
** sentence scores of kenlm.Model.score on a 3-gram modified Kneser-Ney
** model (tools/gen_ctc_lm.py: tests/data/audio/ctc/lm3.arpa, lm_sentences.txt,
** lm_scores.npy) with every bos/eos combination; then ARPA files that are
** wrong in each way the parser checks, each refused with LOOM_EFORMAT, the
** line and the reason; the 8-bit quantised model close to KenLM's scores.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_status make_lm(loom_object **obj, const char *path)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm", path), LOOM_OK);
    *obj = NULL;
    loom_status s = loom_object_create(obj, "audio.ctc_lm", a, NULL);
    loom_attrs_free(a);
    return s;
}

static char *read_text(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)len + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    s[len] = '\0';
    *n = (size_t)len;
    return s;
}

/* The lines of a text file as a jagged u8 tensor + offsets [B+1]. */
static void lines_tensor(const char *path, loom_tensor **text, loom_tensor **off, int64_t *rows)
{
    size_t n;
    char *s = read_text(path, &n);
    int64_t b = 0;
    for (size_t i = 0; i < n; i++)
        b += s[i] == '\n';
    assert_int_equal(loom_tensor_new(off, LOOM_DTYPE_I64, 1, (int64_t[]){ b + 1 }, NULL), LOOM_OK);
    int64_t *o = loom_data(*off);
    int64_t k = 0, bytes = 0;
    char *packed = malloc(n + 1);
    o[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            o[++k] = bytes;
        else
            packed[bytes++] = s[i];
    }
    assert_int_equal(loom_tensor_new(text, LOOM_DTYPE_U8, 1, (int64_t[]){ bytes }, NULL), LOOM_OK);
    if (bytes > 0)
        memcpy(loom_data(*text), packed, (size_t)bytes);
    free(packed);
    free(s);
    *rows = b;
}

static void test_kenlm_scores(void **state)
{
    (void)state;
    loom_object *lm;
    if (make_lm(&lm, tu_data_path("audio/ctc/lm3.arpa")) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    loom_tensor *text, *off;
    int64_t rows;
    lines_tensor(tu_data_path("audio/ctc/lm_sentences.txt"), &text, &off, &rows);
    loom_tensor *want = tu_npy("audio/ctc/lm_scores");
    assert_int_equal(want->shape[0], rows);
    const double *w = loom_data(want);
    static const int combos[4][2] = { { 1, 1 }, { 1, 0 }, { 0, 1 }, { 0, 0 } };
    for (int c = 0; c < 4; c++) {
        loom_attrs *a;
        assert_int_equal(loom_attrs_new(&a), LOOM_OK);
        loom_attrs_set_bool(a, "bos", combos[c][0]);
        loom_attrs_set_bool(a, "eos", combos[c][1]);
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = lm;
        loom_tensor *out = NULL;
        const loom_tensor *in[2] = { text, off };
        assert_int_equal(loom_run("audio.ctc_lm_score", in, 2, a, &out, 1, &opt), LOOM_OK);
        assert_int_equal(out->shape[0], rows);
        const double *y = loom_data(out);
        for (int64_t b = 0; b < rows; b++) {
            /* both sum the same float log10 scores of each word in double;
            ** the bound is 1e-4, the agreement is to the rounding */
            if (!(y[b] > w[b * 4 + c] - 1e-5 && y[b] < w[b * 4 + c] + 1e-5))
                fail_msg("sentence %lld bos=%d eos=%d: %.9f, kenlm %.9f", (long long)b, combos[c][0], combos[c][1],
                         y[b], w[b * 4 + c]);
        }
        loom_tensor_free(out);
        loom_attrs_free(a);
    }
    loom_tensor_free(want);
    loom_tensor_free(text);
    loom_tensor_free(off);
    loom_object_free(lm);
}

/* quantize=8: every sentence within 0.02 log10 a word of KenLM's score
** (256 bins of equal count over each order's values: the centres are
** within a bin's width, a few hundredths here, of each value); 1 and 9 bits
** are refused */
static void test_quantized(void **state)
{
    (void)state;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm", tu_data_path("audio/ctc/lm3.arpa")), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "quantize", 8), LOOM_OK);
    loom_object *lm = NULL;
    if (loom_object_create(&lm, "audio.ctc_lm", a, NULL) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    loom_tensor *text, *off;
    int64_t rows;
    lines_tensor(tu_data_path("audio/ctc/lm_sentences.txt"), &text, &off, &rows);
    loom_tensor *want = tu_npy("audio/ctc/lm_scores");
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    loom_tensor *out = NULL;
    const loom_tensor *in[2] = { text, off };
    assert_int_equal(loom_run("audio.ctc_lm_score", in, 2, NULL, &out, 1, &opt), LOOM_OK);
    const double *y = loom_data(out), *w = loom_data(want);
    const int64_t *o = loom_data(off);
    const char *t = loom_data(text);
    double worst = 0.0;
    for (int64_t b = 0; b < rows; b++) {
        int64_t words = 1;      /* </s> */
        for (int64_t i = o[b]; i < o[b + 1]; i++)
            words += t[i] != ' ' && (i == o[b] || t[i - 1] == ' ');
        const double d = y[b] - w[b * 4];
        if (fabs(d) / (double)words > worst)
            worst = fabs(d) / (double)words;
        if (!(fabs(d) <= 0.02 * (double)words))
            fail_msg("sentence %lld: %.6f, kenlm %.6f (%lld words)", (long long)b, y[b], w[b * 4], (long long)words);
    }
    print_message("quantized to 8 bits: at most %.4f log10 a word from KenLM\n", worst);
    loom_tensor_free(out);
    loom_tensor_free(want);
    loom_tensor_free(text);
    loom_tensor_free(off);
    loom_object_free(lm);
    assert_int_equal(loom_attrs_set_int(a, "quantize", 9), LOOM_OK);
    assert_int_equal(loom_object_create(&lm, "audio.ctc_lm", a, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "quantize 9: 0 (floats) or 2..8 bits"));
    assert_int_equal(loom_attrs_set_int(a, "quantize", 1), LOOM_OK);
    assert_int_equal(loom_object_create(&lm, "audio.ctc_lm", a, NULL), LOOM_EINVAL);
    loom_attrs_free(a);
}

/* The model of each bad file below, when it were right. */
#define HEAD "\\data\\\nngram 1=4\nngram 2=2\n\n\\1-grams:\n"
#define UNI "-1.0\t<s>\t-0.5\n-0.7\t</s>\n-0.6\ta\t-0.3\n-0.8\tb\n"
#define BI "\n\\2-grams:\n-0.2\t<s> a\n-0.3\ta b\n"

typedef struct bad_arpa {
    const char *what, *text, *message;
} bad_arpa;

static const bad_arpa bad_files[] = {
    { "the good one", HEAD UNI BI "\n\\end\\\n", NULL },
    { "empty", "", "line 0: no \\data\\ line" },
    { "KenLM binary", "mmap lm http://kheafield.com/code format version 5\n\0\0", "a KenLM binary model" },
    { "not ARPA", "hello\n", "line 1: the first line that is not blank must be \\data\\" },
    { "bad count", "\\data\\\nngram 1=x\n", "line 2: expected 'ngram N=COUNT'" },
    { "orders skip", "\\data\\\nngram 1=4\nngram 3=2\n", "line 3: ngram 3= where ngram 2= was expected" },
    { "count too big", "\\data\\\nngram 1=99999\n\n", "line 2: ngram 1=99999" },
    { "fewer 1-grams", "\\data\\\nngram 1=5\nngram 2=2\n\n\\1-grams:\n" UNI BI "\n\\end\\\n",
      "line 10: the \\data\\ header promises 5 1-grams, the section has 4" },
    { "more 2-grams", HEAD UNI BI "-0.1\tb a\n\\end\\\n", "line 14: more 2-grams than the \\data\\ header" },
    { "bad probability", HEAD "-1.0\t<s>\t-0.5\n-0.7x\t</s>\n-0.6\ta\t-0.3\n-0.8\tb\n" BI "\n\\end\\\n",
      "line 7: bad log10 probability '-0.7x'" },
    { "positive probability", HEAD "-1.0\t<s>\t-0.5\n0.7\t</s>\n-0.6\ta\t-0.3\n-0.8\tb\n" BI "\n\\end\\\n",
      "line 7: log10 probability 0.7 is positive" },
    { "bad backoff", HEAD "-1.0\t<s>\tnan\n-0.7\t</s>\n-0.6\ta\t-0.3\n-0.8\tb\n" BI "\n\\end\\\n",
      "line 6: bad backoff 'nan'" },
    { "duplicate 1-gram", HEAD "-1.0\t<s>\t-0.5\n-0.7\t</s>\n-0.6\ta\t-0.3\n-0.8\ta\n" BI "\n\\end\\\n",
      "line 9: duplicate 1-gram 'a'" },
    { "duplicate 2-gram", HEAD UNI "\n\\2-grams:\n-0.2\t<s> a\n-0.3\t<s> a\n\\end\\\n",
      "line 13: duplicate 2-gram '<s> a'" },
    { "unknown word", HEAD UNI "\n\\2-grams:\n-0.2\t<s> a\n-0.3\ta c\n\\end\\\n",
      "line 13: word 'c' of this 2-gram is not a 1-gram" },
    { "wrong field count", HEAD UNI "\n\\2-grams:\n-0.2\t<s> a\n-0.3\ta\n\\end\\\n",
      "line 13: a 2-gram line is 'log10prob 2 words [backoff]': 2 fields" },
    { "backoff at the top order", HEAD UNI "\n\\2-grams:\n-0.2\t<s> a\n-0.3\ta b\t-0.1\n\\end\\\n",
      "line 13: a 2-gram of the highest order has no backoff" },
    { "missing \\end\\", HEAD UNI BI, "the file ends without \\end\\" },
    { "text after \\end\\", HEAD UNI BI "\\end\\\nmore\n", "line 15: text after \\end\\" },
    { "missing section", HEAD UNI "\n\\3-grams:\n", "line 11: expected the \\2-grams: header" },
    { "no </s>", "\\data\\\nngram 1=2\n\n\\1-grams:\n-1.0\t<s>\n-0.6\ta\n\\end\\\n",
      "the model has no </s> 1-gram" },
    { "missing context", "\\data\\\nngram 1=4\nngram 2=1\nngram 3=1\n\n\\1-grams:\n" UNI
      "\n\\2-grams:\n-0.2\t<s> a\t-0.1\n\n\\3-grams:\n-0.1\ta b a\n\\end\\\n",
      "line 16: the context of this 3-gram (its first 2 words) is not a 2-gram" },
};

static void test_bad_files(void **state)
{
    (void)state;
    char path[] = "/tmp/loom-ctc-lm-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        const bad_arpa *b = &bad_files[i];
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(b->text, 1, strlen(b->text), f);
        fclose(f);
        loom_object *lm;
        loom_status s = make_lm(&lm, path);
        if (b->message == NULL) {
            if (s != LOOM_OK)
                fail_msg("%s: %s", b->what, loom_last_error());
            loom_object_free(lm);
            continue;
        }
        if (s != LOOM_EFORMAT || strstr(loom_last_error(), b->message) == NULL)
            fail_msg("%s: %s: '%s', expected LOOM_EFORMAT and '%s'", b->what, loom_status_name(s), loom_last_error(),
                     b->message);
    }
    unlink(path);
    loom_object *lm;
    assert_int_equal(make_lm(&lm, "/nonexistent/lm.arpa"), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "/nonexistent/lm.arpa"));
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_object_create(&lm, "audio.ctc_lm", a, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "lm=FILE.arpa"));
    loom_attrs_free(a);
}

/* a word with a NUL byte inside: refused with its line (the file is written whole) */
static void test_nul_byte(void **state)
{
    (void)state;
    static const char text[] = HEAD "-1.0\t<s>\t-0.5\n-0.7\t</s>\n-0.6\ta\t-0.3\n-0.8\tb\0c\n" BI "\n\\end\\\n";
    char path[] = "/tmp/loom-ctc-lm-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    close(fd);
    loom_object *lm;
    assert_int_equal(make_lm(&lm, path), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), "line 9: a NUL byte"));
    unlink(path);
}

static void test_bad_offsets(void **state)
{
    (void)state;
    loom_object *lm;
    if (make_lm(&lm, tu_data_path("audio/ctc/lm3.arpa")) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    loom_tensor *text, *off;
    assert_int_equal(loom_tensor_new(&text, LOOM_DTYPE_U8, 1, (int64_t[]){ 3 }, NULL), LOOM_OK);
    memcpy(loom_data(text), "cat", 3);
    assert_int_equal(loom_tensor_new(&off, LOOM_DTYPE_I64, 1, (int64_t[]){ 2 }, NULL), LOOM_OK);
    ((int64_t *)loom_data(off))[0] = 0;
    ((int64_t *)loom_data(off))[1] = 4;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    loom_tensor *out = NULL;
    const loom_tensor *in[2] = { text, off };
    assert_int_equal(loom_run("audio.ctc_lm_score", in, 2, NULL, &out, 1, &opt), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'sentences_offsets'[1] = 4"));
    loom_tensor_free(text);
    loom_tensor_free(off);
    loom_object_free(lm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kenlm_scores),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_bad_offsets),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_quantized),
    };
    return cmocka_run_group_tests_name("audio_ctc_lm", tests, tu_setup, tu_teardown);
}
