/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_test_util.c - the CTC decoder tests' goldens and comparisons
** (ctc_test_util.h).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctc_test_util.h"

static const char *const names[CT_N_OUT] = { "tokens", "timesteps", "offsets", "words", "words_offsets", "score",
                                             "hypotheses" };

void ct_goldens_load(ct_goldens *g)
{
    memset(g, 0, sizeof *g);
    char name[128];
    for (int k = 0; k < CT_N_OUT; k++) {
        snprintf(name, sizeof name, "audio/ctc/decode_%s", names[k]);
        g->out[k] = tu_npy(name);
    }
    g->emissions = tu_npy("audio/ctc/emissions");
    g->lengths = tu_npy("audio/ctc/lengths");
    g->batch = g->emissions->shape[0];
    FILE *f = fopen(tu_data_path("audio/ctc/decode_cases.txt"), "r");
    assert_non_null(f);
    char line[1024];
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '\0')
            continue;
        g->lines = realloc(g->lines, (size_t)(g->n_cases + 1) * sizeof *g->lines);
        g->lines[g->n_cases++] = strdup(line);
    }
    fclose(f);
    assert_int_equal(g->out[CT_HYPOTHESES]->shape[0], g->n_cases * g->batch + 1);
}

void ct_goldens_free(ct_goldens *g)
{
    for (int k = 0; k < CT_N_OUT; k++)
        loom_tensor_free(g->out[k]);
    loom_tensor_free(g->emissions);
    loom_tensor_free(g->lengths);
    for (int i = 0; i < g->n_cases; i++)
        free(g->lines[i]);
    free(g->lines);
}

static void parse_attrs(loom_attrs *a, const char *spec, int *lexicon, int *lm)
{
    char *copy = strdup(spec), *save = NULL;
    for (char *kv = strtok_r(copy, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (strcmp(kv, "lexicon") == 0 && lexicon != NULL)
            *lexicon = atoi(eq + 1);
        else if (strcmp(kv, "lm") == 0 && lm != NULL)
            *lm = atoi(eq + 1);
        else if (loom_attrs_parse(a, "audio.ctc_decoder", kv, eq + 1) != LOOM_OK)
            fail_msg("attribute %s=%s: %s", kv, eq + 1, loom_last_error());
    }
    free(copy);
}

loom_object *ct_make_decoder(const char *line, const char *extra)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    int lexicon = 0, lm = 0;
    parse_attrs(a, line, &lexicon, &lm);
    if (extra != NULL)
        parse_attrs(a, extra, NULL, NULL);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tu_data_path("audio/ctc/tokens.txt")), LOOM_OK);
    if (lexicon)
        assert_int_equal(loom_attrs_set_string(a, "lexicon", tu_data_path("audio/ctc/lexicon.txt")), LOOM_OK);
    /* lm=1: the 3-gram ARPA model; lm=2: examples/ctc-lm's pack, by its interface's name */
    if (lm == 1)
        assert_int_equal(loom_attrs_set_string(a, "lm", tu_data_path("audio/ctc/lm3.arpa")), LOOM_OK);
    else if (lm == 2)
        assert_int_equal(loom_attrs_set_string(a, "lm", "example.ctc_lm"), LOOM_OK);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, "audio.ctc_decoder", a, NULL) != LOOM_OK)
        fail_msg("create the decoder of '%s': %s", line, loom_last_error());
    loom_attrs_free(a);
    return obj;
}

void ct_check(const ct_goldens *g, int c, int64_t u0, int64_t n_utt, loom_tensor *const *out, const char *what)
{
    const int64_t *gh = loom_data(g->out[CT_HYPOTHESES]), *go = loom_data(g->out[CT_OFFSETS]);
    const int64_t *gwo = loom_data(g->out[CT_WORDS_OFFSETS]);
    const int64_t *gt = loom_data(g->out[CT_TOKENS]), *gs = loom_data(g->out[CT_TIMESTEPS]);
    const uint8_t *gw = loom_data(g->out[CT_WORDS]);
    const double *gsc = loom_data(g->out[CT_SCORE]);
    const int64_t *h = loom_data(out[CT_HYPOTHESES]), *o = loom_data(out[CT_OFFSETS]);
    const int64_t *wo = loom_data(out[CT_WORDS_OFFSETS]);
    const int64_t *t = loom_data(out[CT_TOKENS]), *s = loom_data(out[CT_TIMESTEPS]);
    const uint8_t *w = loom_data(out[CT_WORDS]);
    const double *sc = loom_data(out[CT_SCORE]);
    assert_int_equal(out[CT_HYPOTHESES]->shape[0], n_utt + 1);
    for (int64_t u = 0; u < n_utt; u++) {
        const int64_t row = c * g->batch + u0 + u;
        const int64_t want_n = gh[row + 1] - gh[row], got_n = h[u + 1] - h[u];
        if (got_n != want_n)
            fail_msg("%s: case %d (%s) utterance %lld: %lld hypotheses, flashlight %lld", what, c, g->lines[c],
                     (long long)(u0 + u), (long long)got_n, (long long)want_n);
        for (int64_t k = 0; k < want_n; k++) {
            const int64_t gi = gh[row] + k, i = h[u] + k;
            /* both sum the same float LM scores and emissions in double in
            ** the same order; log-add merges may differ in the order of
            ** their terms: 1e-4, the bound, is far above either */
            if (!(sc[i] > gsc[gi] - 1e-4 && sc[i] < gsc[gi] + 1e-4))
                fail_msg("%s: case %d (%s) utterance %lld hypothesis %lld: score %.9f, flashlight %.9f", what, c,
                         g->lines[c], (long long)(u0 + u), (long long)k, sc[i], gsc[gi]);
            const int64_t n = o[i + 1] - o[i], gn = go[gi + 1] - go[gi];
            int same = n == gn;
            for (int64_t j = 0; same && j < n; j++)
                same = t[o[i] + j] == gt[go[gi] + j] && s[o[i] + j] == gs[go[gi] + j];
            if (!same)
                fail_msg("%s: case %d (%s) utterance %lld hypothesis %lld: tokens or timesteps differ (%lld "
                         "tokens, flashlight %lld)", what, c, g->lines[c], (long long)(u0 + u), (long long)k,
                         (long long)n, (long long)gn);
            const int64_t wn = wo[i + 1] - wo[i], gwn = gwo[gi + 1] - gwo[gi];
            if (wn != gwn || (wn > 0 && memcmp(w + wo[i], gw + gwo[gi], (size_t)wn) != 0))
                fail_msg("%s: case %d (%s) utterance %lld hypothesis %lld: words '%.*s', flashlight '%.*s'", what,
                         c, g->lines[c], (long long)(u0 + u), (long long)k, (int)wn, (const char *)w + wo[i],
                         (int)gwn, (const char *)gw + gwo[gi]);
        }
    }
}

void ct_free_outputs(loom_tensor **out)
{
    for (int k = 0; k < CT_N_OUT; k++) {
        loom_tensor_free(out[k]);
        out[k] = NULL;
    }
}
