/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ctc_errors.c - audio.ctc_decoder's refusals: bad tokens and lexicon
** files (each with its line and reason), tokens of the lexicon missing
** from the tokens, blank or silence missing, blank equal to silence in
** lexicon mode, emissions and lengths of the wrong shape, and a method
** called without its object. Every refusal is LOOM_EINVAL or LOOM_EFORMAT
** with a message naming the argument.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ctc_test_util.h"

static char tmp_tokens[] = "/tmp/loom-ctc-tokens-XXXXXX";
static char tmp_lexicon[] = "/tmp/loom-ctc-lexicon-XXXXXX";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(text, 1, strlen(text), f);
    fclose(f);
}

/* create with tokens text (NULL: the test data's), lexicon text (NULL: none) and extra attributes */
static loom_status create(const char *tokens, const char *lexicon, const char *extra, loom_object **obj)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (tokens != NULL)
        write_file(tmp_tokens, tokens);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tokens != NULL ? tmp_tokens
                                                                        : tu_data_path("audio/ctc/tokens.txt")),
                     LOOM_OK);
    if (lexicon != NULL) {
        write_file(tmp_lexicon, lexicon);
        assert_int_equal(loom_attrs_set_string(a, "lexicon", tmp_lexicon), LOOM_OK);
    }
    if (extra != NULL) {
        char *copy = strdup(extra), *save = NULL;
        for (char *kv = strtok_r(copy, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(kv, '=');
            *eq = '\0';
            assert_int_equal(loom_attrs_parse(a, "audio.ctc_decoder", kv, eq + 1), LOOM_OK);
        }
        free(copy);
    }
    *obj = NULL;
    loom_status s = loom_object_create(obj, "audio.ctc_decoder", a, NULL);
    loom_attrs_free(a);
    return s;
}

typedef struct bad_create {
    const char *what, *tokens, *lexicon, *extra;
    loom_status status;
    const char *message;
} bad_create;

#define TOK "-\n|\na\nb\nc\n"

static const bad_create bad[] = {
    { "good tokens and lexicon", TOK, "ab a b |\nc c |\n", NULL, LOOM_OK, NULL },
    { "duplicate token", "-\n|\na\nb a\n", NULL, NULL, LOOM_EFORMAT, "line 4: duplicate entry 'a' (it has index 2)" },
    { "empty tokens", "\n\n", NULL, NULL, LOOM_EFORMAT, "tokens" },
    { "no blank", "|\na\n", NULL, NULL, LOOM_EINVAL, "blank_token '-' is not in the tokens" },
    { "no silence", "-\na\n", NULL, NULL, LOOM_EINVAL, "sil_token '|' is not in the tokens" },
    { "token missing from the tokens", TOK, "ab a b |\ncd c d |\n", NULL, LOOM_EFORMAT,
      "line 2: token 'd' of the spelling of 'cd' is not in the tokens" },
    { "word without spelling", TOK, "ab a b |\nc\n", NULL, LOOM_EFORMAT, "line 2: 'c' has no spelling" },
    { "empty lexicon line", TOK, "ab a b |\n\nc c |\n", NULL, LOOM_EFORMAT, "line 2: an empty line" },
    { "empty lexicon", TOK, "", NULL, LOOM_EFORMAT, "no words" },
    { "blank is silence, lexicon", TOK, "ab a b |\n", "sil_token=-", LOOM_EINVAL,
      "blank_token '-' and sil_token '-' are the same token" },
    { "blank is silence, lexicon-free", TOK, NULL, "sil_token=-", LOOM_OK, NULL },
    { "tokens and token_list", TOK, NULL, "token_list=- | a", LOOM_EINVAL, "not both" },
    { "unk_score +inf", TOK, NULL, "unk_score=inf", LOOM_EINVAL, "unk_score" },
    { "missing LM file", TOK, NULL, "lm=/nonexistent/lm.arpa", LOOM_ENOENT,
      "lm '/nonexistent/lm.arpa' is neither an LM interface a pack offers" },
    { "LM interface not offered", TOK, NULL, "lm=example.ctc_lm", LOOM_ENOENT, "'example.ctc_lm' is neither" },
    { "missing lexicon word in lm_dict", TOK, "ab a b |\n", "lm_dict=/nonexistent/words.txt", LOOM_ENOENT,
      "lm_dict" },
};

static void test_bad_create(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        loom_object *obj;
        loom_status s = create(bad[i].tokens, bad[i].lexicon, bad[i].extra, &obj);
        if (s != bad[i].status || (bad[i].message != NULL && strstr(loom_last_error(), bad[i].message) == NULL))
            fail_msg("%s: %s '%s', expected %s '%s'", bad[i].what, loom_status_name(s),
                     s == LOOM_OK ? "" : loom_last_error(), loom_status_name(bad[i].status),
                     bad[i].message ? bad[i].message : "");
        loom_object_free(obj);
    }
    loom_object *obj;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "no tokens"));
    assert_int_equal(loom_attrs_set_string(a, "token_list", "- | a b"), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_OK);
    loom_object_free(obj);
    loom_attrs_free(a);
}

/* files with a NUL byte inside a token or word: refused with the line */
static void test_nul_bytes(void **state)
{
    (void)state;
    static const char tokens[] = "-\n|\na\0b\na\n", lexicon[] = "ab a b |\na\0b a |\n";
    FILE *f = fopen(tmp_tokens, "wb");
    fwrite(tokens, 1, sizeof tokens - 1, f);
    fclose(f);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tmp_tokens), LOOM_OK);
    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), "line 3: a NUL byte"));
    f = fopen(tmp_lexicon, "wb");
    fwrite(lexicon, 1, sizeof lexicon - 1, f);
    fclose(f);
    assert_int_equal(loom_attrs_set_string(a, "tokens", tu_data_path("audio/ctc/tokens.txt")), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "lexicon", tmp_lexicon), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "audio.ctc_decoder", a, NULL), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), "line 2: a NUL byte"));
    loom_attrs_free(a);
}

static loom_status decode(loom_object *obj, const loom_tensor *e, const loom_tensor *len)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    const loom_tensor *in[2] = { e, len };
    loom_tensor *out[CT_N_OUT] = { 0 };
    loom_status s = loom_run("audio.ctc_decoder", in, 2, NULL, out, CT_N_OUT, &opt);
    ct_free_outputs(out);
    return s;
}

static void test_bad_inputs(void **state)
{
    (void)state;
    loom_object *obj;
    assert_int_equal(create(NULL, NULL, NULL, &obj), LOOM_OK);
    loom_tensor *e, *len;
    /* 28 tokens per frame where the tokens list has 29 */
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 4, 28 }, NULL), LOOM_OK);
    assert_int_equal(decode(obj, e, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'emissions' f32[2,4,28] must be [B, T, N] with N = 29"));
    loom_tensor_free(e);
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 2, (int64_t[]){ 4, 29 }, NULL), LOOM_OK);
    assert_int_equal(decode(obj, e, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "emissions"));
    loom_tensor_free(e);
    assert_int_equal(loom_tensor_new(&e, LOOM_DTYPE_F32, 3, (int64_t[]){ 2, 4, 29 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&len, LOOM_DTYPE_I64, 1, (int64_t[]){ 3 }, NULL), LOOM_OK);
    assert_int_equal(decode(obj, e, len), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'lengths' i64[3] must be [B] with B = 2"));
    loom_tensor_free(len);
    assert_int_equal(loom_tensor_new(&len, LOOM_DTYPE_I64, 1, (int64_t[]){ 2 }, NULL), LOOM_OK);
    ((int64_t *)loom_data(len))[1] = 5;
    assert_int_equal(decode(obj, e, len), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'lengths'[1] = 5 is outside [0, T = 4]"));
    ((int64_t *)loom_data(len))[1] = -1;
    assert_int_equal(decode(obj, e, len), LOOM_EINVAL);
    ((int64_t *)loom_data(len))[1] = 2;
    assert_int_equal(decode(obj, e, len), LOOM_OK);
    /* a method without its object */
    const loom_tensor *in[2] = { e, len };
    loom_tensor *out[CT_N_OUT] = { 0 };
    assert_int_not_equal(loom_run("audio.ctc_decoder", in, 2, NULL, out, CT_N_OUT, NULL), LOOM_OK);
    loom_tensor_free(len);
    loom_tensor_free(e);
    loom_object_free(obj);
}

static int setup(void **state)
{
    int fd1 = mkstemp(tmp_tokens), fd2 = mkstemp(tmp_lexicon);
    if (fd1 < 0 || fd2 < 0)
        return -1;
    close(fd1);
    close(fd2);
    return tu_setup(state);
}

static int teardown(void **state)
{
    unlink(tmp_tokens);
    unlink(tmp_lexicon);
    return tu_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_create),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_nul_bytes),
    };
    return cmocka_run_group_tests_name("audio_ctc_errors", tests, setup, teardown);
}
