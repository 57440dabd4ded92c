/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_lm_object.c - the audio.ctc_lm object (an ARPA model, arpa_lm.h, or
** loom's binary of one, ngram_binary.h, told apart by the magic)
** and its method audio.ctc_lm_score, which scores whole sentences as
** kenlm.Model.score(sentence, bos, eos) does: words split on whitespace,
** each scored in turn from <s> (or no context), then </s>, the log10
** probabilities summed in double.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctc.h"
#include "ngram_binary.h"

const char *ctc_file_arg(const loom_object_args *args, const char *name, int32_t attr)
{
    for (int32_t i = 0; i < args->n_files && args->files != NULL; i++)
        if (args->files[i].name != NULL && strcmp(args->files[i].name, name) == 0)
            return args->files[i].path;
    const loom_attr_value *v = &args->attrs[attr];
    return v->is_set && v->u.s != NULL && v->u.s[0] != '\0' ? v->u.s : NULL;
}

loom_status ctc_arpa_lm_open(const char *what, const char *path, ctc_arpa_lm **out)
{
    const void *data;
    size_t n;
    *out = NULL;
    loom_status st = pk_host->map_file(path, &data, &n);
    if (st != LOOM_OK)
        return pk_host->fail(st, "%s: cannot read the model file '%s'", what, path);
    char err[256];
    int r;
    if (ctc_ngram_binary_is(data, n)) {
        /* a loom binary: the model views the mapping, which it releases when freed */
        r = ctc_ngram_binary_view(data, n, out, err, sizeof err);
        if (r == CTC_ARPA_OK)
            ctc_ngram_binary_adopt(*out, pk_host->unmap_file);
        else
            pk_host->unmap_file(data, n);
    } else {
        r = ctc_arpa_lm_load(data, n, out, err, sizeof err);
        pk_host->unmap_file(data, n);
    }
    if (r == CTC_ARPA_ENOMEM)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory reading '%s'", what, path);
    if (r != CTC_ARPA_OK)
        return pk_host->fail(LOOM_EFORMAT, "%s: %s: %s", what, path, err);
    return LOOM_OK;
}

loom_status ctc_arpa_lm_quantize_checked(const char *what, ctc_arpa_lm *lm, int64_t bits)
{
    if (bits == 0)
        return LOOM_OK;
    if (bits < 2 || bits > 8)
        return pk_host->fail(LOOM_EINVAL, "%s: quantize %lld: 0 (floats) or 2..8 bits", what, (long long)bits);
    if (ctc_arpa_lm_is_mapped(lm))
        return pk_host->fail(LOOM_EINVAL, "%s: quantize %lld applies to an ARPA file; this binary model is stored "
                             "%s: convert the ARPA file with --quantize %lld instead", what, (long long)bits,
                             ctc_arpa_lm_quant_bits(lm) == 0 ? "with float probabilities" : "already quantised",
                             (long long)bits);
    if (ctc_arpa_lm_quantize(lm, (int)bits) != CTC_ARPA_OK)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory quantising the model", what);
    return LOOM_OK;
}

static loom_status lm_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const char *path = ctc_file_arg(args, "lm", PK_ATTR(ctc_lm_class, lm));
    if (path == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: no model: give lm=FILE.arpa (or loom's binary of it)", CTC_LM_CLASS);
    ctc_arpa_lm *lm;
    loom_status st = ctc_arpa_lm_open(CTC_LM_CLASS ": 'lm'", path, &lm);
    if (st == LOOM_OK)
        st = ctc_arpa_lm_quantize_checked(CTC_LM_CLASS, lm, args->attrs[PK_ATTR(ctc_lm_class, quantize)].u.i);
    if (st == LOOM_OK)
        *state_out = lm;
    else
        ctc_arpa_lm_free(lm);
    return st;
}

static void lm_destroy(void *state) { ctc_arpa_lm_free(state); }

static int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static double score_sentence(const ctc_arpa_lm *lm, const char *s, size_t n, int bos, int eos)
{
    ctc_lm_context st[2];
    int cur = 0;
    if (bos)
        ctc_arpa_lm_begin(lm, &st[0]);
    else
        ctc_arpa_lm_null(&st[0]);
    double total = 0.0;
    size_t i = 0;
    for (;;) {
        while (i < n && is_ws((unsigned char)s[i]))
            i++;
        if (i >= n)
            break;
        size_t b = i;
        while (i < n && !is_ws((unsigned char)s[i]))
            i++;
        total += ctc_arpa_lm_score(lm, &st[cur], ctc_arpa_lm_index(lm, s + b, i - b), &st[cur ^ 1]);
        cur ^= 1;
    }
    if (eos)
        total += ctc_arpa_lm_score(lm, &st[cur], ctc_arpa_lm_eos(lm), &st[cur ^ 1]);
    return total;
}

static loom_status lm_score_run(loom_call *call)
{
    const ctc_arpa_lm *lm = call->object;
    if (lm == NULL)
        return pk_host->fail(LOOM_EINVAL, "audio.ctc_lm_score is a method: it needs an %s object", CTC_LM_CLASS);
    const loom_tensor *text = call->inputs[0], *off = call->inputs[1];
    const int64_t rows = off->shape[0] - 1, nbytes = text->shape[0];
    const int64_t *o = loom_data(off);
    if (rows < 0)
        return pk_host->fail(LOOM_EINVAL, "'sentences_offsets' has no entries: it must be [B+1]");
    for (int64_t b = 0; b <= rows; b++)
        if (o[b] < 0 || o[b] > nbytes || (b > 0 && o[b] < o[b - 1]) || (b == 0 && o[0] != 0))
            return pk_host->fail(LOOM_EINVAL, "'sentences_offsets'[%lld] = %lld: offsets start at 0, never "
                                 "decrease and end at most at the %lld bytes of 'sentences'", (long long)b,
                                 (long long)o[b], (long long)nbytes);
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 1, &rows, &out);
    if (st != LOOM_OK || rows == 0)
        return st;
    const char *s = loom_data(text);
    double *y = loom_data(out);
    const int bos = call->attrs[PK_ATTR(ctc_lm_score, bos)].u.b, eos = call->attrs[PK_ATTR(ctc_lm_score, eos)].u.b;
    for (int64_t b = 0; b < rows; b++)
        y[b] = score_sentence(lm, s == NULL ? "" : s + o[b], (size_t)(o[b + 1] - o[b]), bos, eos);
    return LOOM_OK;
}

PK_ATTR_TABLE(ctc_lm_class, CTC_LM_CLASS_ATTRS);

const loom_object_class audio_ctc_lm_class = {
    .struct_size = sizeof(loom_object_class),
    .name = CTC_LM_CLASS,
    .doc = "an n-gram backoff language model from an ARPA file or loom's binary of one (mapped, not parsed), "
           "scored as KenLM does (log10); methods audio.ctc_lm_score and audio.ctc_lm_save",
    PK_ATTRS(ctc_lm_class_attrs),
    .create = lm_create,
    .destroy = lm_destroy,
};

const loom_kernel_desc audio_ctc_lm_kernels[] = {
    PK_KERNEL_CPU(ctc_lm_score_schema, "cpu:probing-hash", 0, lm_score_run),
};
const size_t audio_ctc_lm_n_kernels = PK_COUNT(audio_ctc_lm_kernels);
