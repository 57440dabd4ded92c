/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_decoder_object.c - the audio.ctc_decoder object: torchaudio's
** ctc_decoder factory (tokens, lexicon, lm, lm_dict and the options) and
** its batch method audio.ctc_decoder, which decodes [B, T, N] emissions
** with one search per utterance spread over the core's threads.
*/
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "ctc.h"
#include "ctc_beam.h"
#include "ctc_decoder.h"
#include "ctc_lengths.h"

#define W CTC_DECODER_CLASS

static loom_status read_file(const char *what, const char *path, const void **data, size_t *n)
{
    loom_status st = pk_host->map_file(path, data, n);
    if (st != LOOM_OK)
        return pk_host->fail(st, "%s: %s: cannot read '%s'", W, what, path);
    return LOOM_OK;
}

static loom_status parse_fail(int r, const char *what, const char *path, const char *err)
{
    if (r == CTC_PARSE_ENOMEM)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory reading %s", W, what);
    return pk_host->fail(LOOM_EFORMAT, "%s: %s '%s': %s", W, what, path, err);
}

static loom_status load_tokens(ctc_model *m, const loom_object_args *args)
{
    const char *path = ctc_file_arg(args, "tokens", PK_ATTR(ctc_decoder_class, tokens));
    const loom_attr_value *list = &args->attrs[PK_ATTR(ctc_decoder_class, token_list)];
    char err[256];
    ctc_dict_init(&m->tokens);
    if (path != NULL && list->is_set)
        return pk_host->fail(LOOM_EINVAL, "%s: give tokens=FILE or token_list='a b c', not both", W);
    if (path == NULL && !list->is_set)
        return pk_host->fail(LOOM_EINVAL, "%s: no tokens: give tokens=FILE (one index per line) or token_list", W);
    int r;
    if (path != NULL) {
        const void *data;
        size_t n;
        loom_status st = read_file("'tokens'", path, &data, &n);
        if (st != LOOM_OK)
            return st;
        r = ctc_dict_parse(&m->tokens, data, n, err, sizeof err);
        pk_host->unmap_file(data, n);
    } else {
        path = "(token_list)";
        r = ctc_dict_parse_list(&m->tokens, list->u.s, err, sizeof err);
    }
    return r == CTC_PARSE_OK ? LOOM_OK : parse_fail(r, "tokens", path, err);
}

static loom_status find_token(const ctc_model *m, const char *attr, const char *tok, int32_t *out)
{
    *out = ctc_dict_find(&m->tokens, tok, strlen(tok));
    if (*out < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: %s '%s' is not in the tokens (flashlight: Unknown entry in "
                             "dictionary)", W, attr, tok);
    return LOOM_OK;
}

static loom_status load_lexicon(ctc_model *m, const char *path)
{
    const void *data;
    size_t n;
    char err[256];
    loom_status st = read_file("'lexicon'", path, &data, &n);
    if (st != LOOM_OK)
        return st;
    int r = ctc_lexicon_parse(&m->lexicon, &m->tokens, data, n, err, sizeof err);
    pk_host->unmap_file(data, n);
    return r == CTC_PARSE_OK ? LOOM_OK : parse_fail(r, "lexicon", path, err);
}

static loom_status load_lm_dict(ctc_model *m, const char *path)
{
    const void *data;
    size_t n;
    char err[256];
    loom_status st = read_file("'lm_dict'", path, &data, &n);
    if (st != LOOM_OK)
        return st;
    int r = ctc_dict_parse(&m->lm_dict, data, n, err, sizeof err);
    pk_host->unmap_file(data, n);
    return r == CTC_PARSE_OK ? LOOM_OK : parse_fail(r, "lm_dict", path, err);
}

/* torchaudio's _get_word_dict: lm_dict, else the lexicon's words, else
** (lexicon-free with an n-gram LM) the tokens plus unk_word. Token i is
** word i here; torchaudio builds that dictionary from a C++ unordered_map,
** so its order (and which word a token is scored as) is unspecified. */
static loom_status word_dict(ctc_model *m, const char *lm_dict, const char *unk_word)
{
    if (lm_dict != NULL) {
        loom_status st = load_lm_dict(m, lm_dict);
        if (st != LOOM_OK)
            return st;
        m->words = &m->lm_dict;
        if (m->lexicon_mode)
            for (int32_t w = 0; w < ctc_dict_size(&m->lexicon.words); w++) {
                const char *s = ctc_dict_name(&m->lexicon.words, w);
                if (strcmp(s, "<unk>") != 0 && ctc_dict_find(&m->lm_dict, s, strlen(s)) < 0)
                    return pk_host->fail(LOOM_EINVAL, "%s: word '%s' of the lexicon is not in lm_dict '%s'", W, s,
                                         lm_dict);
            }
    } else if (m->lexicon_mode) {
        m->words = &m->lexicon.words;
    } else if (m->lm_kind == CTC_LM_ARPA) {
        ctc_dict_init(&m->lm_dict);
        for (int32_t i = 0; i < ctc_dict_size(&m->tokens); i++) {
            const char *s = ctc_dict_name(&m->tokens, i);
            if (ctc_dict_add(&m->lm_dict, s, strlen(s), i) == -2)
                return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
        }
        if (ctc_dict_add(&m->lm_dict, unk_word, strlen(unk_word), -1) == -2)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
        m->words = &m->lm_dict;
    }
    if (m->lexicon_mode) {
        m->unk = ctc_dict_find(m->words, unk_word, strlen(unk_word));
        if (m->unk < 0)
            m->unk = ctc_dict_find(m->words, "<unk>", 5);
        if (m->unk < 0)
            return pk_host->fail(LOOM_EINVAL, "%s: unk_word '%s' is not in lm_dict", W, unk_word);
    }
    return LOOM_OK;
}

/* ---------------------------------------------------------- interface LMs */

static int iface_start(void *self, int start_with_nothing, uint64_t *state)
{
    const ctc_decoder *d = self;
    return d->lm_iface->start(d->lm_instance, start_with_nothing, state) == LOOM_OK ? 0 : -1;
}

static int iface_score(void *self, uint64_t state, int32_t word, uint64_t *child, float *score)
{
    const ctc_decoder *d = self;
    return d->lm_iface->score(d->lm_instance, state, word, child, score) == LOOM_OK ? 0 : -1;
}

static int iface_finish(void *self, uint64_t state, uint64_t *child, float *score)
{
    const ctc_decoder *d = self;
    return d->lm_iface->finish(d->lm_instance, state, child, score) == LOOM_OK ? 0 : -1;
}

/* Make the interface LM's instance over the decoder's words (the word
** dictionary, or the tokens without a lexicon). */
static loom_status create_iface_lm(ctc_decoder *d, const char *name, const char *options)
{
    const loom_ctc_lm_v1 *vt = d->lm_iface;
    if (vt->struct_size < sizeof(loom_ctc_lm_v1) || vt->create == NULL || vt->destroy == NULL || vt->start == NULL
        || vt->score == NULL || vt->finish == NULL)
        return pk_host->fail(LOOM_EABI, "%s: the LM interface '%s' (version %u) is incomplete: struct_size %u, "
                             "this decoder needs %zu and every function", W, name, LOOM_CTC_LM_VERSION,
                             vt->struct_size, sizeof(loom_ctc_lm_v1));
    const ctc_dict *words = d->m.words != NULL ? d->m.words : &d->m.tokens;
    const int32_t n = ctc_dict_size(words);
    const char **list = malloc(((size_t)n + 1) * sizeof *list);
    if (list == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    for (int32_t i = 0; i < n; i++)
        list[i] = ctc_dict_name(words, i) != NULL ? ctc_dict_name(words, i) : "";
    loom_status st = vt->create(list, n, options, &d->lm_instance);
    free(list);
    if (st != LOOM_OK)
        return st;
    d->m.custom = (ctc_custom_lm){ .self = d, .start = iface_start, .score = iface_score, .finish = iface_finish };
    return LOOM_OK;
}

/* lm: none (ZeroLM), the name of an interface a pack offers (the vtable is
** kept; its instance is made once the word dictionary is known), or an ARPA
** file or loom's binary model (ctc_arpa_lm_open tells them apart). */
static loom_status load_lm(ctc_decoder *d, const char *lm, int64_t quantize)
{
    ctc_model *m = &d->m;
    if (lm == NULL) {
        m->lm_kind = CTC_LM_ZERO;
        return LOOM_OK;
    }
    if ((d->lm_iface = pk_host->get_extension(lm, LOOM_CTC_LM_VERSION)) != NULL) {
        m->lm_kind = CTC_LM_CUSTOM;
        return LOOM_OK;
    }
    const void *probe;
    size_t probe_n;
    if (pk_host->map_file(lm, &probe, &probe_n) != LOOM_OK)
        return pk_host->fail(LOOM_ENOENT, "%s: lm '%s' is neither an LM interface a pack offers (loom/ctc_lm.h, "
                             "version %u) nor a readable model file (ARPA or loom binary)", W, lm, LOOM_CTC_LM_VERSION);
    pk_host->unmap_file(probe, probe_n);
    loom_status st = ctc_arpa_lm_open(W ": 'lm'", lm, &m->arpa);
    if (st == LOOM_OK)
        st = ctc_arpa_lm_quantize_checked(W ": lm_quantize", m->arpa, quantize);
    if (st != LOOM_OK)
        return st;
    m->lm_kind = CTC_LM_ARPA;
    return LOOM_OK;
}

static loom_status map_words_to_lm(ctc_model *m)
{
    if (m->lm_kind != CTC_LM_ARPA)
        return LOOM_OK;
    const int32_t n = ctc_dict_size(m->words);
    m->usr_to_lm = malloc(((size_t)n + 1) * sizeof *m->usr_to_lm);
    if (m->usr_to_lm == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    for (int32_t i = 0; i < n; i++) {
        const char *s = ctc_dict_name(m->words, i);
        m->usr_to_lm[i] = s == NULL ? 0 : ctc_arpa_lm_index(m->arpa, s, strlen(s));
    }
    return LOOM_OK;
}

static void decoder_destroy(void *state)
{
    ctc_decoder *d = state;
    if (d == NULL)
        return;
    ctc_search_free(d->stream);
    if (d->lm_iface != NULL && d->lm_instance != NULL)
        d->lm_iface->destroy(d->lm_instance);
    ctc_model_free(&d->m);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static loom_status decoder_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    *state_out = NULL;
    ctc_decoder *d = calloc(1, sizeof *d);
    if (d == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    pthread_mutex_init(&d->lock, NULL);
    ctc_model *m = &d->m;
    ctc_options *o = &m->opt;
    o->nbest = (int32_t)a[PK_ATTR(ctc_decoder_class, nbest)].u.i;
    o->beam_size = (int32_t)a[PK_ATTR(ctc_decoder_class, beam_size)].u.i;
    o->beam_size_token = (int32_t)a[PK_ATTR(ctc_decoder_class, beam_size_token)].u.i;
    o->beam_threshold = a[PK_ATTR(ctc_decoder_class, beam_threshold)].u.f;
    o->lm_weight = a[PK_ATTR(ctc_decoder_class, lm_weight)].u.f;
    o->word_score = a[PK_ATTR(ctc_decoder_class, word_score)].u.f;
    o->unk_score = a[PK_ATTR(ctc_decoder_class, unk_score)].u.f;
    o->sil_score = a[PK_ATTR(ctc_decoder_class, sil_score)].u.f;
    o->log_add = a[PK_ATTR(ctc_decoder_class, log_add)].u.b;
    loom_status st = LOOM_OK;
    if (o->nbest > 1000000 || o->beam_size > 1000000 || o->beam_size_token > 1000000)
        st = pk_host->fail(LOOM_EINVAL, "%s: nbest, beam_size and beam_size_token must be at most 1000000", W);
    if (st == LOOM_OK && (isnan(o->unk_score) || o->unk_score == INFINITY))
        st = pk_host->fail(LOOM_EINVAL, "%s: unk_score %g must be a number below +inf (-inf: no unknown words)", W,
                           o->unk_score);
    if (st == LOOM_OK)
        st = load_tokens(m, args);
    if (o->beam_size_token == 0)
        o->beam_size_token = ctc_dict_size(&m->tokens);
    const char *blank = a[PK_ATTR(ctc_decoder_class, blank_token)].u.s;
    const char *sil = a[PK_ATTR(ctc_decoder_class, sil_token)].u.s;
    if (st == LOOM_OK)
        st = find_token(m, "blank_token", blank, &m->blank);
    if (st == LOOM_OK)
        st = find_token(m, "sil_token", sil, &m->sil);
    const char *lexicon = ctc_file_arg(args, "lexicon", PK_ATTR(ctc_decoder_class, lexicon));
    m->lexicon_mode = lexicon != NULL;
    if (st == LOOM_OK && m->lexicon_mode && m->blank == m->sil)
        st = pk_host->fail(LOOM_EINVAL, "%s: blank_token '%s' and sil_token '%s' are the same token (%d): lexicon "
                           "decoding needs a silence that ends words apart from the blank", W, blank, sil, m->blank);
    if (st == LOOM_OK && m->lexicon_mode)
        st = load_lexicon(m, lexicon);
    if (st == LOOM_OK)
        st = load_lm(d, ctc_file_arg(args, "lm", PK_ATTR(ctc_decoder_class, lm)),
                     a[PK_ATTR(ctc_decoder_class, lm_quantize)].u.i);
    if (st == LOOM_OK)
        st = word_dict(m, ctc_file_arg(args, "lm_dict", PK_ATTR(ctc_decoder_class, lm_dict)),
                       a[PK_ATTR(ctc_decoder_class, unk_word)].u.s);
    if (st == LOOM_OK)
        st = map_words_to_lm(m);
    if (st == LOOM_OK && m->lm_kind == CTC_LM_CUSTOM)
        st = create_iface_lm(d, ctc_file_arg(args, "lm", PK_ATTR(ctc_decoder_class, lm)),
                             a[PK_ATTR(ctc_decoder_class, lm_options)].u.s);
    if (st == LOOM_OK && m->lexicon_mode) {
        int r = ctc_model_build_trie(m);
        if (r == -2)
            st = pk_host->fail(LOOM_EINVAL, "%s: the LM failed scoring the lexicon's words", W);
        else if (r != 0)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory building the trie", W);
    }
    if (st != LOOM_OK) {
        decoder_destroy(d);
        return st;
    }
    if (m->trie.dropped_labels > 0)
        pk_host->log(LOOM_LOG_WARN, "%s: %lld spellings dropped: more than %d words share a spelling (flashlight "
                     "drops them too)", W, (long long)m->trie.dropped_labels, CTC_TRIE_MAX_LABEL);
    *state_out = d;
    return LOOM_OK;
}

PK_ATTR_TABLE(ctc_decoder_class, CTC_DECODER_CLASS_ATTRS);

const loom_object_class audio_ctc_decoder_class = {
    .struct_size = sizeof(loom_object_class),
    .name = W,
    .doc = "torchaudio's ctc_decoder (flashlight-text's beam search): lexicon or lexicon-free, an n-gram LM "
           "(ARPA or loom binary), an LM interface or none; methods audio.ctc_decoder (batch) and the streaming ones",
    PK_ATTRS(ctc_decoder_class_attrs),
    .create = decoder_create,
    .destroy = decoder_destroy,
};

/* ------------------------------------------------------------- outputs */

loom_status ctc_decoder_check_emissions(const ctc_decoder *d, const loom_tensor *e, int rank)
{
    char b[160];
    const int64_t n_tok = ctc_dict_size(&d->m.tokens);
    if (e->ndim != rank || e->shape[rank - 1] != n_tok)
        return pk_host->fail(LOOM_EINVAL, "'emissions' %s must be %s with N = %lld, the number of tokens",
                             pk_describe(pk_host, e, b, sizeof b), rank == 3 ? "[B, T, N]" : "[T, N]",
                             (long long)n_tok);
    return LOOM_OK;
}

static loom_status put(loom_call *call, int32_t index, loom_dtype dt, int64_t n, const void *src, size_t elem)
{
    loom_tensor *t;
    loom_status st = pk_host->alloc_output(call, index, dt, 1, &n, &t);
    if (st == LOOM_OK && n > 0)
        memcpy(loom_data(t), src, (size_t)n * elem);
    return st;
}

loom_status ctc_decoder_put_results(loom_call *call, const ctc_results *r, int64_t n_utt, const int64_t *utt_hyps)
{
    int64_t *hyps = malloc(((size_t)n_utt + 1) * sizeof *hyps);
    if (hyps == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    hyps[0] = 0;
    for (int64_t b = 0; b < n_utt; b++)
        hyps[b + 1] = hyps[b] + utt_hyps[b];
    static const int64_t zero = 0;
    const int64_t *tok_off = r->n_hyp > 0 ? r->tok_off : &zero, *word_off = r->n_hyp > 0 ? r->word_off : &zero;
    loom_status st = put(call, CTC_OUT_TOKENS, LOOM_DTYPE_I64, r->n_tok, r->tokens, sizeof(int64_t));
    if (st == LOOM_OK)
        st = put(call, CTC_OUT_TIMESTEPS, LOOM_DTYPE_I64, r->n_tok, r->timesteps, sizeof(int64_t));
    if (st == LOOM_OK)
        st = put(call, CTC_OUT_OFFSETS, LOOM_DTYPE_I64, r->n_hyp + 1, tok_off, sizeof(int64_t));
    if (st == LOOM_OK)
        st = put(call, CTC_OUT_WORDS, LOOM_DTYPE_U8, r->n_words_bytes, r->words, 1);
    if (st == LOOM_OK)
        st = put(call, CTC_OUT_WORDS_OFFSETS, LOOM_DTYPE_I64, r->n_hyp + 1, word_off, sizeof(int64_t));
    if (st == LOOM_OK)
        st = put(call, CTC_OUT_SCORE, LOOM_DTYPE_F64, r->n_hyp, r->score, sizeof(double));
    if (st == LOOM_OK)
        st = put(call, CTC_OUT_HYPOTHESES, LOOM_DTYPE_I64, n_utt + 1, hyps, sizeof(int64_t));
    free(hyps);
    return st;
}

loom_status ctc_decoder_search_fail(int r)
{
    if (r == -2)
        return pk_host->fail(LOOM_EINVAL, "the language model failed");
    return pk_host->fail(LOOM_ENOMEM, "out of memory in the beam search");
}

/* ---------------------------------------------------------- batch decode */

typedef struct batch_job {
    const ctc_decoder *d;
    const float *e;
    const int64_t *lengths;
    int64_t T, N;
    ctc_results *res;             /* one per utterance */
    int *status;                  /* one per utterance */
    ctc_search **searches;        /* one per thread index, made by its first chunk, kept for its next ones */
    int32_t n_searches;
} batch_job;

/* Each thread of the pool decodes its chunks with its own search (its
** scratch stays warm from one chunk to the next; nothing is shared but the
** read-only model); a thread index past the table gets a search of its own. */
static void decode_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    batch_job *j = user;
    const int own = thread_index >= 0 && thread_index < j->n_searches;
    ctc_search *s = own ? j->searches[thread_index] : NULL;
    if (s == NULL) {
        s = ctc_search_new(&j->d->m);
        if (own)
            j->searches[thread_index] = s;
    }
    for (int64_t b = begin; b < end; b++) {
        int r = s == NULL ? -1 : ctc_search_begin(s);
        const int64_t len = j->lengths != NULL ? j->lengths[b] : j->T;
        if (r == 0)
            r = ctc_search_step(s, j->e + b * j->T * j->N, len, j->N);
        if (r == 0)
            r = ctc_search_end(s);
        if (r == 0)
            r = ctc_search_final(s, &j->res[b]);
        j->status[b] = r;
    }
    if (!own)
        ctc_search_free(s);
}

/* Grow *p to hold n elements of size elem; 0, or -1 out of memory. */
static int resize(void **p, int64_t n, size_t elem)
{
    void *q = realloc(*p, (size_t)(n > 0 ? n : 1) * elem);
    if (q == NULL)
        return -1;
    *p = q;
    return 0;
}

/* Append utterance r's hypotheses to all. */
static loom_status append_results(ctc_results *all, const ctc_results *r)
{
    if (r->n_hyp == 0)
        return LOOM_OK;
    const int64_t nh = all->n_hyp + r->n_hyp, nt = all->n_tok + r->n_tok, nw = all->n_words_bytes + r->n_words_bytes;
    if (resize((void **)&all->score, nh, sizeof *all->score) != 0
        || resize((void **)&all->tok_off, nh + 1, sizeof *all->tok_off) != 0
        || resize((void **)&all->word_off, nh + 1, sizeof *all->word_off) != 0
        || resize((void **)&all->tokens, nt, sizeof *all->tokens) != 0
        || resize((void **)&all->timesteps, nt, sizeof *all->timesteps) != 0
        || resize((void **)&all->words, nw, 1) != 0)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    all->hyp_cap = nh;
    all->tok_cap = nt;
    all->words_cap = nw;
    if (all->n_hyp == 0)
        all->tok_off[0] = all->word_off[0] = 0;
    memcpy(all->score + all->n_hyp, r->score, (size_t)r->n_hyp * sizeof *all->score);
    if (r->n_tok > 0) {
        memcpy(all->tokens + all->n_tok, r->tokens, (size_t)r->n_tok * sizeof *all->tokens);
        memcpy(all->timesteps + all->n_tok, r->timesteps, (size_t)r->n_tok * sizeof *all->timesteps);
    }
    if (r->n_words_bytes > 0)
        memcpy(all->words + all->n_words_bytes, r->words, (size_t)r->n_words_bytes);
    for (int64_t h = 0; h < r->n_hyp; h++) {
        all->tok_off[all->n_hyp + h + 1] = all->n_tok + r->tok_off[h + 1];
        all->word_off[all->n_hyp + h + 1] = all->n_words_bytes + r->word_off[h + 1];
    }
    all->n_hyp = nh;
    all->n_tok = nt;
    all->n_words_bytes = nw;
    return LOOM_OK;
}

static loom_status decode_run(loom_call *call)
{
    const ctc_decoder *d = call->object;
    if (d == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is a method: it needs an %s object", W, W);
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    loom_status st = ctc_decoder_check_emissions(d, e, 3);
    if (st != LOOM_OK)
        return st;
    const int64_t B = e->shape[0], T = e->shape[1], N = e->shape[2];
    const int64_t *lengths = NULL;
    if (len != NULL) {
        lengths = loom_data(len);
        if ((st = ctc_check_lengths(len, lengths, B, T, "emissions")) != LOOM_OK)
            return st;
    }
    ctc_results *res = calloc((size_t)B + 1, sizeof *res);
    int *status = calloc((size_t)B + 1, sizeof *status);
    int64_t *counts = calloc((size_t)B + 1, sizeof *counts);
    if (res == NULL || status == NULL || counts == NULL) {
        free(res);
        free(status);
        free(counts);
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    }
    const int32_t n_searches = call->ctx->n_threads > 0 ? call->ctx->n_threads : 1;
    batch_job job = { d, loom_data(e), lengths, T, N, res, status, calloc((size_t)n_searches, sizeof(ctc_search *)),
                      n_searches };
    if (job.searches == NULL)
        job.n_searches = 0;       /* every chunk then makes and frees its own */
    if (B > 0) {
        /* a custom LM is called from one thread */
        if (d->m.lm_kind == CTC_LM_CUSTOM)
            decode_range(&job, 0, B, 0);
        else
            st = pk_host->parallel_for(call->ctx, B, 1, decode_range, &job);
    }
    for (int32_t t = 0; t < job.n_searches; t++)
        ctc_search_free(job.searches[t]);
    free(job.searches);
    ctc_results all;
    ctc_results_init(&all);
    for (int64_t i = 0; st == LOOM_OK && i < B; i++) {
        if (status[i] != 0)
            st = ctc_decoder_search_fail(status[i]);
        else
            st = append_results(&all, &res[i]);
        counts[i] = res[i].n_hyp;
    }
    if (st == LOOM_OK)
        st = ctc_decoder_put_results(call, &all, B, counts);
    for (int64_t i = 0; i < B; i++)
        ctc_results_free(&res[i]);
    ctc_results_free(&all);
    free(res);
    free(status);
    free(counts);
    return st;
}

const loom_kernel_desc audio_ctc_decoder_kernels[] = {
    PK_KERNEL_CPU(ctc_decoder_schema, "cpu:beam-search", 0, decode_run),
};
const size_t audio_ctc_decoder_n_kernels = PK_COUNT(audio_ctc_decoder_kernels);
