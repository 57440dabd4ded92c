/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tt_strings.c - the helpers of tt_strings.h (public API only).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tt_strings.h"

void tt_strings(const char *const *s, const int64_t *lens, int64_t n, loom_tensor **values, loom_tensor **offsets)
{
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++)
        total += lens != NULL && lens[i] >= 0 ? lens[i] : (int64_t)strlen(s[i]);
    const int64_t vs[1] = { total }, os[1] = { n + 1 };
    assert_int_equal(loom_tensor_new(values, LOOM_DTYPE_U8, 1, vs, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(offsets, LOOM_DTYPE_I64, 1, os, NULL), LOOM_OK);
    uint8_t *v = loom_data(*values);
    int64_t *o = loom_data(*offsets), at = 0;
    o[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t len = lens != NULL && lens[i] >= 0 ? lens[i] : (int64_t)strlen(s[i]);
        if (len > 0)
            memcpy(v + at, s[i], (size_t)len);
        at += len;
        o[i + 1] = at;
    }
}

void tt_file_lines(const char *path, loom_tensor **values, loom_tensor **offsets)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc((size_t)n + 1);
    assert_non_null(d);
    assert_int_equal(fread(d, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    int64_t lines = 0;
    for (long i = 0; i < n; i++)
        lines += d[i] == '\n';
    lines += n > 0 && d[n - 1] != '\n';
    const char **s = calloc((size_t)lines + 1, sizeof *s);
    int64_t *lens = calloc((size_t)lines + 1, sizeof *lens);
    assert_non_null(s);
    assert_non_null(lens);
    int64_t k = 0;
    long start = 0;
    for (long i = 0; i <= n; i++) {
        if (i == n ? i > start : d[i] == '\n') {
            s[k] = d + start;
            lens[k++] = i - start;
            start = i + 1;
        }
    }
    tt_strings(s, lens, lines, values, offsets);
    free(s);
    free(lens);
    free(d);
}

static loom_attrs *parse(const char *owner, const char *attrs)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (attrs == NULL)
        return a;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", attrs);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(a, owner, kv, eq + 1) != LOOM_OK)
            fail_msg("attribute %s=%s: %s", kv, eq + 1, loom_last_error());
    }
    return a;
}

loom_status tt_make(loom_object **obj, const char *vocab_path, const char *attrs)
{
    loom_attrs *a = parse("text.bert_tokenizer", attrs);
    if (vocab_path != NULL)
        assert_int_equal(loom_attrs_set_string(a, "vocab", vocab_path), LOOM_OK);
    *obj = NULL;
    loom_status st = loom_object_create(obj, "text.bert_tokenizer", a, NULL);
    loom_attrs_free(a);
    return st;
}

loom_status tt_run(loom_object *obj, const loom_tensor *text, const loom_tensor *text_off, const loom_tensor *pair,
                   const loom_tensor *pair_off, const char *attrs, int32_t threads, loom_tensor **out)
{
    loom_attrs *a = parse("text.bert_tokenizer", attrs);
    const loom_tensor *in[4] = { text, text_off, pair, pair_off };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    opt.num_threads = threads;
    for (int i = 0; i < TT_N_OUT; i++)
        out[i] = NULL;
    loom_status st = loom_run("text.bert_tokenizer", in, 4, a, out, TT_N_OUT, &opt);
    loom_attrs_free(a);
    return st;
}

void tt_free_outputs(loom_tensor **out)
{
    for (int i = 0; i < TT_N_OUT; i++) {
        loom_tensor_free(out[i]);
        out[i] = NULL;
    }
}

const char *tt_temp_file(const char *name, const void *data, size_t n)
{
    static char path[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/loom-tt-%d-%s", tmp != NULL && *tmp ? tmp : "/tmp", (int)getpid(), name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n > 0)
        assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}
