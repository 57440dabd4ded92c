/* SPDX-License-Identifier: BSD-3-Clause */
/*
** audio_ctc.c - `loom demo ctc`: CTC decoding of an acoustic model's
** output, greedy and with the beam-search decoder (torchaudio's
** ctc_decoder), with and without a language model. The "acoustic model"
** is simulated: for each sentence, frames whose log-probabilities favour
** its letters (two frames a letter, blanks between, | between words), plus
** noise. In the first sentence the acoustics of the last word are
** ambiguous and lean the wrong way ("hat" a little over "mat"): greedy
** decoding and the lexicon alone spell "hat"; the bigram LM, which knows
** that "on the mat" is likelier, fixes it. The tokens, the lexicon and a
** small ARPA model are written to a temporary directory.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"

DEMO_DEFINE("ctc", 95, "audio.ctc_greedy_decoder,audio.ctc_decoder",
            "CTC decoding: greedy, beam search with a lexicon, and how an n-gram LM fixes a misheard word");

static const char TOKENS[] = "- | a b c d e f g h i j k l m n o p q r s t u v w x y z '";
#define N_TOK 29

static const char *const WORDS[] = { "the", "cat", "sat", "on", "mat", "hat", "a", "dog", "ran", "rug" };

/* a bigram model: "on the mat" is likely, "the hat" only through the backoff */
static const char ARPA[] =
    "\\data\\\nngram 1=13\nngram 2=8\n\n\\1-grams:\n"
    "-1.0\t<s>\t-0.3\n-1.0\t</s>\n-1.0\t<unk>\n-0.9\tthe\t-0.3\n-1.3\tcat\t-0.3\n-1.3\tsat\t-0.3\n"
    "-1.3\ton\t-0.3\n-1.6\tmat\t-0.3\n-1.4\that\t-0.3\n-1.3\ta\t-0.3\n-1.3\tdog\t-0.3\n-1.3\tran\t-0.3\n"
    "-1.6\trug\t-0.3\n\n\\2-grams:\n"
    "-0.3\t<s> the\n-0.4\tthe cat\n-0.3\tcat sat\n-0.3\tsat on\n-0.3\ton the\n-0.5\tthe mat\n-0.2\tmat </s>\n"
    "-0.4\t<s> a\n\n\\end\\\n";

/* what was said, and what the acoustics say at one letter: (position, the rival letter) */
typedef struct sentence {
    const char *text;
    int ambiguous_at;       /* index into text, -1: none */
    char rival;
} sentence;

static const sentence SENTENCES[] = {
    { "the cat sat on the mat", 19, 'h' },
    { "a dog ran", -1, 0 },
    { "the dog sat on a rug", -1, 0 },
};
#define N_SENT 3
#define T_MAX 80

static int token_of(char c) { return c == ' ' ? 1 : c == '\'' ? 28 : c - 'a' + 2; }

/* log-softmax frames of a sentence into e [T_MAX, N_TOK]; returns the frames used */
static int64_t frames_for(const sentence *s, float *e)
{
    int64_t t = 0;
    float logits[T_MAX][N_TOK];
    for (int64_t i = 0; i < T_MAX; i++)
        for (int k = 0; k < N_TOK; k++)
            logits[i][k] = 0.5f * demo_random();
    for (int i = 0; s->text[i] != '\0' && t + 3 <= T_MAX; i++) {
        const int k = token_of(s->text[i]);
        for (int r = 0; r < 2; r++, t++) {
            if (i == s->ambiguous_at) {
                logits[t][token_of(s->rival)] += 6.5f;     /* the wrong letter, a little ahead */
                logits[t][k] += 6.0f;
            } else {
                logits[t][k] += 7.0f;
            }
        }
        logits[t++][0] += 5.0f;                            /* a blank after each letter */
    }
    logits[t++][1] += 7.0f;                                /* the final silence */
    for (int64_t i = 0; i < T_MAX; i++) {
        if (i >= t)
            logits[i][0] += 8.0f;                          /* padding frames: blank */
        float mx = logits[i][0], sum = 0.0f;
        for (int k = 1; k < N_TOK; k++)
            mx = logits[i][k] > mx ? logits[i][k] : mx;
        for (int k = 0; k < N_TOK; k++)
            sum += expf(logits[i][k] - mx);
        for (int k = 0; k < N_TOK; k++)
            e[i * N_TOK + k] = logits[i][k] - mx - logf(sum);
    }
    return t;
}

static int write_text(const char *dir, const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static loom_object *make_decoder(const char *tokens, const char *lexicon, const char *lm)
{
    loom_attrs *a = NULL;
    loom_object *obj = NULL;
    if (loom_attrs_new(&a) != LOOM_OK || loom_attrs_set_string(a, "tokens", tokens) != LOOM_OK
        || loom_attrs_set_string(a, "lexicon", lexicon) != LOOM_OK
        || (lm != NULL && loom_attrs_set_string(a, "lm", lm) != LOOM_OK)
        || loom_attrs_set_float(a, "lm_weight", 2.0) != LOOM_OK
        || loom_object_create(&obj, "audio.ctc_decoder", a, NULL) != LOOM_OK)
        obj = NULL;
    loom_attrs_free(a);
    return obj;
}

/* "words" of hypothesis 0 of each utterance, and its score */
static int show_beam(const char *label, loom_object *dec, const loom_tensor *e, const loom_tensor *len)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = dec;
    const loom_tensor *in[2] = { e, len };
    loom_tensor *out[7] = { 0 };
    if (loom_run("audio.ctc_decoder", in, 2, NULL, out, 7, &opt) != LOOM_OK)
        return demo_fail();
    demo_record(label);
    const char *w = loom_data(out[3]);
    const int64_t *wo = loom_data(out[4]), *hyp = loom_data(out[6]);
    const double *score = loom_data(out[5]);
    printf("  %s\n", label);
    for (int b = 0; b < N_SENT; b++) {
        const int64_t h = hyp[b];
        printf("    %-28.*s (score %.2f)\n", (int)(wo[h + 1] - wo[h]), w + wo[h], score[h]);
    }
    for (int k = 0; k < 7; k++)
        loom_tensor_free(out[k]);
    return DEMO_OK;
}

int demo_run(void)
{
    char dir[] = "/tmp/loom-demo-ctc-XXXXXX", tokens[64], lexicon[64], lm[64];
    if (mkdtemp(dir) == NULL) {
        fprintf(stderr, "demo: cannot make a temporary directory\n");
        return DEMO_FAIL;
    }
    char lex[512] = "", tok[128];
    for (size_t i = 0; i < sizeof WORDS / sizeof WORDS[0]; i++) {
        size_t n = strlen(lex);
        snprintf(lex + n, sizeof lex - n, "%s", WORDS[i]);
        for (const char *c = WORDS[i]; *c; c++) {
            n = strlen(lex);
            snprintf(lex + n, sizeof lex - n, " %c", *c);
        }
        n = strlen(lex);
        snprintf(lex + n, sizeof lex - n, " |\n");
    }
    snprintf(tok, sizeof tok, "%s", TOKENS);
    for (char *c = tok; *c; c++)
        if (*c == ' ')
            *c = '\n';
    int rc = write_text(dir, "tokens.txt", tok, tokens, sizeof tokens) == 0
             && write_text(dir, "lexicon.txt", lex, lexicon, sizeof lexicon) == 0
             && write_text(dir, "lm.arpa", ARPA, lm, sizeof lm) == 0 ? DEMO_OK : DEMO_FAIL;
    loom_tensor *e = demo_tensor(LOOM_DTYPE_F32, 3, (int64_t[]){ N_SENT, T_MAX, N_TOK });
    loom_tensor *len = demo_tensor(LOOM_DTYPE_I64, 1, (int64_t[]){ N_SENT });
    loom_object *plain = NULL, *with_lm = NULL;
    if (rc == DEMO_OK && e != NULL && len != NULL) {
        printf("  %d sentences, %d frames each at most, %d tokens; what was said:\n", N_SENT, T_MAX, N_TOK);
        for (int b = 0; b < N_SENT; b++) {
            ((int64_t *)loom_data(len))[b] = frames_for(&SENTENCES[b], (float *)loom_data(e) + b * T_MAX * N_TOK);
            printf("    %s%s\n", SENTENCES[b].text,
                   SENTENCES[b].ambiguous_at >= 0 ? "   (the acoustics lean to \"hat\")" : "");
        }
        /* greedy: argmax letters */
        const loom_tensor *in[2] = { e, len };
        loom_tensor *out[2] = { 0 };
        if (loom_run("audio.ctc_greedy_decoder", in, 2, NULL, out, 2, NULL) != LOOM_OK) {
            rc = demo_fail();
        } else {
            demo_record("greedy");
            const int64_t *t = loom_data(out[0]), *o = loom_data(out[1]);
            printf("  greedy (argmax, repeats collapsed, blanks dropped)\n");
            for (int b = 0; b < N_SENT; b++) {
                printf("    ");
                for (int64_t i = o[b]; i < o[b + 1]; i++)
                    putchar(t[i] == 1 ? ' ' : t[i] == 28 ? '\'' : (char)('a' + t[i] - 2));
                putchar('\n');
            }
            loom_tensor_free(out[0]);
            loom_tensor_free(out[1]);
        }
        if (rc == DEMO_OK && ((plain = make_decoder(tokens, lexicon, NULL)) == NULL
                              || (with_lm = make_decoder(tokens, lexicon, lm)) == NULL))
            rc = demo_fail();
        if (rc == DEMO_OK)
            rc = show_beam("beam search, lexicon, no LM", plain, e, len);
        if (rc == DEMO_OK)
            rc = show_beam("beam search, lexicon, bigram LM (lm_weight 2)", with_lm, e, len);
    } else {
        rc = DEMO_FAIL;
    }
    loom_object_free(plain);
    loom_object_free(with_lm);
    loom_tensor_free(e);
    loom_tensor_free(len);
    unlink(tokens);
    unlink(lexicon);
    unlink(lm);
    rmdir(dir);
    return rc;
}
