/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_lm_binary.c - loom's binary n-gram format (ngram_binary.h):
** tests/data/audio/ctc/lm3.arpa converted by audio.ctc_lm_save (floats and
** 8-bit), mapped back by lm=, scores every sentence of lm_sentences.txt
** bit for bit as the ARPA loader does (and so within 1e-4 of kenlm, which
** test_ctc_lm checks for the ARPA model), and the decoder with the binary
** gives the ARPA decoder's results bit for bit on the golden cases. Then
** the refusals, each LOOM_EFORMAT naming the file and the check: truncated
** files, headers whose sizes lie (with the checksum made to match, so the
** size checks themselves are reached), damaged bytes (the checksum), bad
** version, byte order, order and quantisation, and arrays that would send
** the scorer out of bounds or into endless probes (again with a matching
** checksum); a quantize= on a binary model; a KenLM binary file.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctc_test_util.h"
#include "ngram_binary.h"

static char bin_path[64], q8_path[64], bad_path[64];

static loom_status make_lm(loom_object **obj, const char *path, int64_t quantize)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm", path), LOOM_OK);
    if (quantize != 0)
        assert_int_equal(loom_attrs_set_int(a, "quantize", quantize), LOOM_OK);
    *obj = NULL;
    loom_status s = loom_object_create(obj, "audio.ctc_lm", a, NULL);
    loom_attrs_free(a);
    return s;
}

static void save_lm(loom_object *lm, const char *path)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", path), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    loom_tensor *bytes = NULL;
    if (loom_run("audio.ctc_lm_save", NULL, 0, a, &bytes, 1, &opt) != LOOM_OK)
        fail_msg("save %s: %s", path, loom_last_error());
    assert_true(*(const int64_t *)loom_data(bytes) > (int64_t)sizeof(ngram_bin_header));
    loom_tensor_free(bytes);
    loom_attrs_free(a);
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    snprintf(bin_path, sizeof bin_path, "/tmp/loom-lmbin-%ld.bin", (long)getpid());
    snprintf(q8_path, sizeof q8_path, "/tmp/loom-lmbin-%ld-q8.bin", (long)getpid());
    snprintf(bad_path, sizeof bad_path, "/tmp/loom-lmbin-%ld-bad.bin", (long)getpid());
    loom_object *lm;
    if (make_lm(&lm, tu_data_path("audio/ctc/lm3.arpa"), 0) != LOOM_OK)
        return -1;
    save_lm(lm, bin_path);
    loom_object_free(lm);
    if (make_lm(&lm, tu_data_path("audio/ctc/lm3.arpa"), 8) != LOOM_OK)
        return -1;
    save_lm(lm, q8_path);
    loom_object_free(lm);
    return 0;
}

static int teardown(void **state)
{
    unlink(bin_path);
    unlink(q8_path);
    unlink(bad_path);
    return tu_teardown(state);
}

static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *s = malloc((size_t)len + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return s;
}

static void write_all(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

/* The sentences of lm_sentences.txt as u8 text + offsets, scored by lm. */
static loom_tensor *score_all(loom_object *lm, int bos, int eos)
{
    size_t n;
    unsigned char *s = read_all(tu_data_path("audio/ctc/lm_sentences.txt"), &n);
    int64_t rows = 0;
    for (size_t i = 0; i < n; i++)
        rows += s[i] == '\n';
    loom_tensor *text, *off, *out = NULL;
    assert_int_equal(loom_tensor_new(&off, LOOM_DTYPE_I64, 1, (int64_t[]){ rows + 1 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&text, LOOM_DTYPE_U8, 1, (int64_t[]){ (int64_t)n }, NULL), LOOM_OK);
    int64_t *o = loom_data(off), k = 0, bytes = 0;
    uint8_t *t = loom_data(text);
    o[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            o[++k] = bytes;
        else
            t[bytes++] = s[i];
    }
    free(s);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "bos", bos), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "eos", eos), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    const loom_tensor *in[2] = { text, off };
    if (loom_run("audio.ctc_lm_score", in, 2, a, &out, 1, &opt) != LOOM_OK)
        fail_msg("score: %s", loom_last_error());
    assert_true(out->shape[0] == rows && rows > 10);
    loom_attrs_free(a);
    loom_tensor_free(text);
    loom_tensor_free(off);
    return out;
}

static void check_same_scores(const char *bin, int64_t quantize)
{
    loom_object *arpa, *mapped;
    assert_int_equal(make_lm(&arpa, tu_data_path("audio/ctc/lm3.arpa"), quantize), LOOM_OK);
    if (make_lm(&mapped, bin, 0) != LOOM_OK)
        fail_msg("load %s: %s", bin, loom_last_error());
    for (int m = 0; m < 4; m++) {
        loom_tensor *x = score_all(arpa, m & 1, m >> 1), *y = score_all(mapped, m & 1, m >> 1);
        /* bit for bit: the binary holds the very arrays the ARPA loader built */
        assert_memory_equal(loom_data(x), loom_data(y), (size_t)x->shape[0] * sizeof(double));
        loom_tensor_free(x);
        loom_tensor_free(y);
    }
    loom_object_free(arpa);
    loom_object_free(mapped);
}

static void test_scores_bit_exact(void **state)
{
    (void)state;
    check_same_scores(bin_path, 0);
}

static void test_quantized_bit_exact(void **state)
{
    (void)state;
    check_same_scores(q8_path, 8);
}

/* Every golden case with the ARPA LM, once with lm=the binary: the same
** seven outputs, bit for bit, and so the goldens. */
static void test_decoder_with_binary(void **state)
{
    (void)state;
    ct_goldens g;
    ct_goldens_load(&g);
    char extra[128];
    snprintf(extra, sizeof extra, "lm=%s", bin_path);
    int cases = 0;
    for (int c = 0; c < g.n_cases; c++) {
        const char *lm1 = strstr(g.lines[c], "lm=1;");
        if (lm1 == NULL)
            continue;
        char *line = strdup(g.lines[c]);
        line[lm1 - g.lines[c] + 3] = '0';          /* the case's LM comes from extra instead */
        loom_object *ref = ct_make_decoder(g.lines[c], NULL), *dec = ct_make_decoder(line, extra);
        const loom_tensor *in[2] = { g.emissions, g.lengths };
        loom_tensor *a[CT_N_OUT] = { 0 }, *b[CT_N_OUT] = { 0 };
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = ref;
        assert_int_equal(loom_run("audio.ctc_decoder", in, 2, NULL, a, CT_N_OUT, &opt), LOOM_OK);
        opt.object = dec;
        if (loom_run("audio.ctc_decoder", in, 2, NULL, b, CT_N_OUT, &opt) != LOOM_OK)
            fail_msg("case %d with the binary LM: %s", c, loom_last_error());
        ct_check(&g, c, 0, g.batch, b, "binary LM");
        for (int k = 0; k < CT_N_OUT; k++) {
            assert_int_equal(a[k]->shape[0], b[k]->shape[0]);
            assert_memory_equal(loom_data(a[k]), loom_data(b[k]),
                                (size_t)a[k]->shape[0] * (k == CT_WORDS ? 1 : 8));
        }
        ct_free_outputs(a);
        ct_free_outputs(b);
        loom_object_free(ref);
        loom_object_free(dec);
        free(line);
        cases++;
    }
    assert_true(cases >= 4);
    ct_goldens_free(&g);
}

/* Load bad_path holding data; expect LOOM_EFORMAT naming the file and `reason`. */
static void expect_refused(const void *data, size_t n, const char *reason, const char *what)
{
    write_all(bad_path, data, n);
    loom_object *lm = NULL;
    loom_status s = make_lm(&lm, bad_path, 0);
    if (s != LOOM_EFORMAT)
        fail_msg("%s: %s, expected LOOM_EFORMAT (%s)", what, loom_status_name(s), loom_last_error());
    const char *e = loom_last_error();
    if (strstr(e, bad_path) == NULL || strstr(e, reason) == NULL)
        fail_msg("%s: the message names no file or not '%s': %s", what, reason, e);
    assert_null(lm);
}

static void reseal(unsigned char *f, size_t n)
{
    ngram_bin_header h;
    memcpy(&h, f, sizeof h);
    h.checksum = ngram_bin_checksum(f + sizeof h, n - sizeof h);
    memcpy(f, &h, sizeof h);
}

static void test_truncated(void **state)
{
    (void)state;
    size_t n;
    unsigned char *f = read_all(bin_path, &n);
    const size_t cuts[] = { 16, 100, 255, 256, 320, n / 2, n - 64, n - 1 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char what[48];
        snprintf(what, sizeof what, "cut at %zu", cuts[i]);
        expect_refused(f, cuts[i], cuts[i] < 256 ? "truncated" : "the file has", what);
    }
    /* bytes appended */
    unsigned char *g = calloc(1, n + 64);
    memcpy(g, f, n);
    expect_refused(g, n + 64, "padded", "64 bytes appended");
    free(g);
    free(f);
}

typedef struct header_edit {
    const char *what, *reason;
    int reseal;                     /* make the checksum match, so the check itself is reached */
    void (*edit)(ngram_bin_header *h);
} header_edit;

static void more_2grams(ngram_bin_header *h) { h->counts[2] += 1; }
static void fewer_slots(ngram_bin_header *h) { h->n_slots[3] -= 1; }
static void full_table(ngram_bin_header *h) { h->counts[3] = (int64_t)h->n_slots[3]; }
static void more_words(ngram_bin_header *h) { h->n_words += 16; }
static void bigger_file(ngram_bin_header *h) { h->file_size += 64; }
static void huge_pool(ngram_bin_header *h) { h->pool_len = UINT64_C(1) << 62; }
static void huge_slots(ngram_bin_header *h) { h->n_slots[2] = UINT64_MAX / 2; }
static void version2(ngram_bin_header *h) { h->version = 2; }
static void swapped(ngram_bin_header *h) { h->byte_order = 0x04030201u; }
static void order7(ngram_bin_header *h) { h->order = 7; }
static void order0(ngram_bin_header *h) { h->order = 0; }
static void quant9(ngram_bin_header *h) { h->quant_bits = 9; }
static void quant_flag(ngram_bin_header *h) { h->quant_bits = 8; }
static void header_size(ngram_bin_header *h) { h->header_size = 128; }
static void bos_out(ngram_bin_header *h) { h->bos = h->n_words; }
static void eos_is_bos(ngram_bin_header *h) { h->eos = h->bos; }
static void vocab_small(ngram_bin_header *h) { h->vocab_slots = 4; }
static void vocab_odd(ngram_bin_header *h) { h->vocab_slots -= 1; }
static void checksum(ngram_bin_header *h) { h->checksum ^= 1; }

static void test_lying_header(void **state)
{
    (void)state;
    static const header_edit edits[] = {
        { "one 2-gram more", "sizes lie", 1, more_2grams },
        { "a 3-gram slot fewer", "sizes lie", 1, fewer_slots },
        { "a table without an empty slot", "sizes lie", 1, full_table },
        { "16 words more", "sizes lie", 1, more_words },
        { "a larger file_size", "the header says", 1, bigger_file },
        { "a 4 EiB pool", "4 GiB", 1, huge_pool },
        { "2^63 slots", "sizes lie", 1, huge_slots },
        { "version 2", "version 2", 1, version2 },
        { "the other byte order", "byte order", 1, swapped },
        { "order 7", "order 7", 1, order7 },
        { "order 0", "order 0", 1, order0 },
        { "9 bits", "9 bits", 1, quant9 },
        { "floats said quantised", "sizes lie", 1, quant_flag },
        { "a 128-byte header", "header size", 1, header_size },
        { "<s> out of range", "<s>", 1, bos_out },
        { "</s> equal to <s>", "<s>", 1, eos_is_bos },
        { "4 vocabulary slots", "vocabulary index", 1, vocab_small },
        { "vocabulary slots not a power of 2", "power of 2", 1, vocab_odd },
        { "a checksum off by a bit", "damaged", 0, checksum },
    };
    size_t n;
    unsigned char *f = read_all(bin_path, &n);
    unsigned char *g = malloc(n);
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        memcpy(g, f, n);
        ngram_bin_header h;
        memcpy(&h, g, sizeof h);
        edits[i].edit(&h);
        memcpy(g, &h, sizeof h);
        if (edits[i].reseal)
            reseal(g, n);
        expect_refused(g, n, edits[i].reason, edits[i].what);
    }
    free(g);
    free(f);
}

/* The start of the next section of `bytes` after *c (the format's 64-byte alignment). */
static size_t section(size_t *c, size_t bytes)
{
    const size_t at = (*c + 63) / 64 * 64;
    *c = at + bytes;
    return at;
}

/* Bytes of the arrays: a flipped bit is caught by the checksum; with the
** checksum made to match, what the scorer relies on is still checked. */
static void test_damaged_arrays(void **state)
{
    (void)state;
    size_t n;
    unsigned char *f = read_all(bin_path, &n);
    unsigned char *g = malloc(n);
    const size_t step = n / 37;
    for (size_t at = sizeof(ngram_bin_header); at < n; at += step) {
        memcpy(g, f, n);
        g[at] ^= 0x10;
        char what[48];
        snprintf(what, sizeof what, "a bit flipped at %zu", at);
        expect_refused(g, n, "damaged", what);
    }
    ngram_bin_header h;
    memcpy(&h, f, sizeof h);
    size_t c = sizeof h;
    const size_t word_off = section(&c, (size_t)h.n_words * 4), pool = section(&c, h.pool_len);
    const size_t vocab = section(&c, h.vocab_slots * 4);
    section(&c, (size_t)h.n_words * 4);
    section(&c, (size_t)h.n_words * 4);
    const size_t keys2 = section(&c, h.n_slots[2] * 8);
    struct {
        size_t at, width;
        uint32_t value;
        const char *reason;
    } pokes[] = {
        { word_off + 4, 4, (uint32_t)h.pool_len, "past the" },       /* word 1 starts after the pool */
        { pool + h.pool_len - 1, 1, 'x', "NUL" },                    /* the pool's last NUL */
        { vocab, 4, (uint32_t)h.n_words + 5, "holds id" },           /* an id past the words */
    };
    for (size_t i = 0; i < sizeof pokes / sizeof pokes[0]; i++) {
        memcpy(g, f, n);
        if (pokes[i].width == 1)
            g[pokes[i].at] = (unsigned char)pokes[i].value;
        else
            memcpy(g + pokes[i].at, &pokes[i].value, 4);
        reseal(g, n);
        expect_refused(g, n, pokes[i].reason, pokes[i].reason);
    }
    /* every vocabulary slot taken: lookups of an unknown word would never end */
    memcpy(g, f, n);
    for (uint64_t s = 0; s < h.vocab_slots; s++) {
        uint32_t v;
        memcpy(&v, g + vocab + s * 4, 4);
        if (v == 0) {
            v = 1;
            memcpy(g + vocab + s * 4, &v, 4);
        }
    }
    reseal(g, n);
    expect_refused(g, n, "the vocabulary index holds", "a full vocabulary index");
    /* a 2-gram key zeroed (a table holding fewer n-grams than it says), then one key added */
    for (int add = 0; add < 2; add++) {
        memcpy(g, f, n);
        for (uint64_t s = 0; s < h.n_slots[2]; s++) {
            uint64_t k;
            memcpy(&k, g + keys2 + s * 8, 8);
            if ((k != 0) == !add) {
                k = add ? 12345 : 0;
                memcpy(g + keys2 + s * 8, &k, 8);
                break;
            }
        }
        reseal(g, n);
        expect_refused(g, n, "2-gram table holds", add ? "a key added" : "a key removed");
    }
    free(g);
    free(f);
}

static void test_refusals(void **state)
{
    (void)state;
    /* quantize applies to ARPA files */
    loom_object *lm = NULL;
    assert_int_equal(make_lm(&lm, bin_path, 8), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "convert the ARPA file with --quantize 8"));
    assert_null(lm);
    /* KenLM's binary: refused, saying what to give instead */
    static const char kenlm[] = "mmap lm http://kheafield.com/code format version 5\n\0\0\0\0";
    write_all(bad_path, kenlm, sizeof kenlm);
    assert_int_equal(make_lm(&lm, bad_path, 0), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), "a KenLM binary model, which is not read here"));
    assert_non_null(strstr(loom_last_error(), "loom ctc-lm convert"));
    /* the decoder takes the binary by its magic: no extension needed, and says when it is bad */
    size_t n;
    unsigned char *f = read_all(bin_path, &n);
    f[n - 1] ^= 1;
    write_all(bad_path, f, n);
    free(f);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tu_data_path("audio/ctc/tokens.txt")), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm", bad_path), LOOM_OK);
    loom_object *dec = NULL;
    assert_int_equal(loom_object_create(&dec, "audio.ctc_decoder", a, NULL), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), bad_path));
    assert_non_null(strstr(loom_last_error(), "damaged"));
    loom_attrs_free(a);
    /* save needs a writable place; the target is left alone when it fails */
    assert_int_equal(make_lm(&lm, bin_path, 0), LOOM_OK);
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", "/nonexistent-dir/lm.bin"), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = lm;
    loom_tensor *bytes = NULL;
    assert_int_equal(loom_run("audio.ctc_lm_save", NULL, 0, a, &bytes, 1, &opt), LOOM_EIO);
    assert_non_null(strstr(loom_last_error(), "'path' /nonexistent-dir/lm.bin"));
    loom_attrs_free(a);
    loom_object_free(lm);
}

/* A model saved from a mapped model is the same file. */
static void test_resave(void **state)
{
    (void)state;
    loom_object *lm;
    assert_int_equal(make_lm(&lm, q8_path, 0), LOOM_OK);
    save_lm(lm, bad_path);
    loom_object_free(lm);
    size_t n1, n2;
    unsigned char *a = read_all(q8_path, &n1), *b = read_all(bad_path, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scores_bit_exact),
        cmocka_unit_test(test_quantized_bit_exact),
        cmocka_unit_test(test_decoder_with_binary),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_lying_header),
        cmocka_unit_test(test_damaged_arrays),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_resave),
    };
    return cmocka_run_group_tests_name("audio_ctc_lm_binary", tests, setup, teardown);
}
