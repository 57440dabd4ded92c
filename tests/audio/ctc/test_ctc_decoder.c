/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_decoder.c - audio.ctc_decoder against flashlight-text
** (tools/gen_ctc_goldens.py): every case of decode_cases.txt (lexicon and
** lexicon-free, the 3-gram LM and none, log_add on and off, nbest 1 and 5,
** unk_score, and the custom LM of examples/ctc-lm through its interface) on
** the whole batch with its lengths, on the default threads and on one; the
** custom LM's refusal of bad lm_options; an lm_dict in another order gives
** the same hypotheses, and one that lacks a lexicon word is refused.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctc_test_util.h"

static ct_goldens G;

static void run_case(int c, int threads)
{
    loom_object *dec = ct_make_decoder(G.lines[c], NULL);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = dec;
    opt.num_threads = threads;
    const loom_tensor *in[2] = { G.emissions, G.lengths };
    loom_tensor *out[CT_N_OUT] = { 0 };
    if (loom_run("audio.ctc_decoder", in, 2, NULL, out, CT_N_OUT, &opt) != LOOM_OK)
        fail_msg("case %d (%s): %s", c, G.lines[c], loom_last_error());
    char what[64];
    snprintf(what, sizeof what, "batch, %d threads", threads);
    ct_check(&G, c, 0, G.batch, out, what);
    ct_free_outputs(out);
    loom_object_free(dec);
}

static void test_cases(void **state)
{
    (void)state;
    for (int c = 0; c < G.n_cases; c++)
        run_case(c, 0);
}

static void test_cases_one_thread(void **state)
{
    (void)state;
    for (int c = 0; c < G.n_cases; c++)
        run_case(c, 1);
}

/* lm_dict: the LM's words in another order (reversed, then <unk>) give the
** same hypotheses: the LM is asked by word, never by the dictionary's order */
static void test_lm_dict(void **state)
{
    (void)state;
    FILE *lx = fopen(tu_data_path("audio/ctc/lexicon.txt"), "r");
    assert_non_null(lx);
    char line[256], *words[256];
    int n = 0;
    while (n < 256 && fgets(line, sizeof line, lx) != NULL)
        words[n++] = strndup(line, strcspn(line, " \t\n"));
    fclose(lx);
    char path[] = "/tmp/loom-ctc-lm-dict-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = n - 1; i >= 0; i--) {
        fprintf(f, "%s\n", words[i]);
        free(words[i]);
    }
    fprintf(f, "<unk>\n");
    fclose(f);
    char extra[128];
    snprintf(extra, sizeof extra, "lm_dict=%s", path);
    for (int c = 0; c < G.n_cases; c++) {
        if (strncmp(G.lines[c], "lexicon=1;lm=1;", 15) != 0)
            continue;
        loom_object *dec = ct_make_decoder(G.lines[c], extra);
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = dec;
        const loom_tensor *in[2] = { G.emissions, G.lengths };
        loom_tensor *out[CT_N_OUT] = { 0 };
        if (loom_run("audio.ctc_decoder", in, 2, NULL, out, CT_N_OUT, &opt) != LOOM_OK)
            fail_msg("case %d with lm_dict: %s", c, loom_last_error());
        ct_check(&G, c, 0, G.batch, out, "lm_dict in reverse order");
        ct_free_outputs(out);
        loom_object_free(dec);
    }
    /* a lexicon word missing from lm_dict is refused */
    f = fopen(path, "w");
    fprintf(f, "the\n<unk>\n");
    fclose(f);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tu_data_path("audio/ctc/tokens.txt")), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lexicon", tu_data_path("audio/ctc/lexicon.txt")), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm_dict", path), LOOM_OK);
    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "of the lexicon is not in lm_dict"));
    loom_attrs_free(a);
    unlink(path);
}

/* lm_quantize=8: on the golden emissions the quantised LM picks the same
** best words for every utterance of every case with the LM, with scores
** within 0.1 (lm_weight times a few words' quantisation error) */
static void test_quantized_lm(void **state)
{
    (void)state;
    const int64_t *gh = loom_data(G.out[CT_HYPOTHESES]), *gwo = loom_data(G.out[CT_WORDS_OFFSETS]);
    const uint8_t *gw = loom_data(G.out[CT_WORDS]);
    const double *gs = loom_data(G.out[CT_SCORE]);
    for (int c = 0; c < G.n_cases; c++) {
        if (strstr(G.lines[c], ";lm=1;") == NULL)
            continue;
        loom_object *dec = ct_make_decoder(G.lines[c], "lm_quantize=8");
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = dec;
        const loom_tensor *in[2] = { G.emissions, G.lengths };
        loom_tensor *out[CT_N_OUT] = { 0 };
        if (loom_run("audio.ctc_decoder", in, 2, NULL, out, CT_N_OUT, &opt) != LOOM_OK)
            fail_msg("case %d quantised: %s", c, loom_last_error());
        const int64_t *h = loom_data(out[CT_HYPOTHESES]), *wo = loom_data(out[CT_WORDS_OFFSETS]);
        const uint8_t *w = loom_data(out[CT_WORDS]);
        const double *sc = loom_data(out[CT_SCORE]);
        for (int64_t b = 0; b < G.batch; b++) {
            const int64_t i = h[b], gi = gh[c * G.batch + b];
            const int64_t n = wo[i + 1] - wo[i], gn = gwo[gi + 1] - gwo[gi];
            if (n != gn || memcmp(w + wo[i], gw + gwo[gi], (size_t)n) != 0 || fabs(sc[i] - gs[gi]) > 0.1)
                fail_msg("case %d utterance %lld quantised: '%.*s' %.4f, unquantised '%.*s' %.4f", c, (long long)b,
                         (int)n, (const char *)w + wo[i], sc[i], (int)gn, (const char *)gw + gwo[gi], gs[gi]);
        }
        ct_free_outputs(out);
        loom_object_free(dec);
    }
}

/* the example LM pack refuses options it does not know, and the decoder says so */
static void test_custom_lm_options(void **state)
{
    (void)state;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tu_data_path("audio/ctc/tokens.txt")), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm", "example.ctc_lm"), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lm_options", "bad"), LOOM_OK);
    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "lm_options 'bad' is not end=<score>"));
    assert_int_equal(loom_attrs_set_string(a, "lm_options", "end=-0.25"), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_OK);
    loom_object_free(obj);
    loom_attrs_free(a);
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    ct_goldens_load(&G);
    return 0;
}

static int teardown(void **state)
{
    ct_goldens_free(&G);
    return tu_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cases),
        cmocka_unit_test(test_cases_one_thread),
        cmocka_unit_test(test_custom_lm_options),
        cmocka_unit_test(test_lm_dict),
        cmocka_unit_test(test_quantized_lm),
    };
    return cmocka_run_group_tests_name("audio_ctc_decoder", tests, setup, teardown);
}
