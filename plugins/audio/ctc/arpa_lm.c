/* SPDX-License-Identifier: BSD-3-Clause */
/*
** arpa_lm.c - the ARPA parser, the probing tables and KenLM's scoring
** (arpa_lm.h).
*/
#include "arpa_lm.h"
#include "ngram_model.h"

#include <math.h>
#include <stdarg.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KenLM's marks: -0.0 is "no longer n-gram starts with this one". */
static int has_extension(float backoff)
{
    return !(backoff == 0.0f && signbit(backoff));
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

/* The key of an n-gram is built from its last word back to its first, the
** order in which score() walks the context. */
static uint64_t key_start(int32_t w) { return mix64((uint64_t)(uint32_t)w + 1); }
static uint64_t key_extend(uint64_t h, int32_t w)
{
    return mix64(h ^ (((uint64_t)(uint32_t)w + 1) * UINT64_C(0x9e3779b97f4a7c15)));
}
static uint64_t key_slot(uint64_t h) { return h == 0 ? 1 : h; }

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
    return mix64(h);
}

__extension__ typedef unsigned __int128 u128;

/* The first slot of a key: its high bits scaled to the table (no power of 2 needed). */
static uint64_t first_slot(uint64_t key, uint64_t n)
{
    return (uint64_t)(((u128)key * n) >> 64);
}

static int64_t table_find(const ngram_table *t, uint64_t key)
{
    if (t->keys == NULL)
        return -1;
    key = key_slot(key);
    for (uint64_t i = first_slot(key, t->n_slots);; i = i + 1 == t->n_slots ? 0 : i + 1) {
        if (t->keys[i] == key)
            return (int64_t)i;
        if (t->keys[i] == 0)
            return -1;
    }
}

/* The slot for key: a new one (*fresh = 1) or the existing one. */
static int64_t table_insert(ngram_table *t, uint64_t key, int *fresh)
{
    key = key_slot(key);
    for (uint64_t i = first_slot(key, t->n_slots);; i = i + 1 == t->n_slots ? 0 : i + 1) {
        if (t->keys[i] == key) {
            *fresh = 0;
            return (int64_t)i;
        }
        if (t->keys[i] == 0) {
            t->keys[i] = key;
            t->count++;
            *fresh = 1;
            return (int64_t)i;
        }
    }
}

/* Power-of-2 slots for n entries at a load factor of at most 2/3 (the vocabulary's index). */
static uint64_t slots_for(int64_t n)
{
    uint64_t want = (uint64_t)n + (uint64_t)n / 2 + 1, s = 4;
    while (s < want)
        s <<= 1;
    return s;
}

/* ------------------------------------------------------------ vocabulary */

static int32_t vocab_find(const ctc_arpa_lm *lm, const char *w, size_t n)
{
    for (uint64_t i = hash_bytes(w, n) & lm->vocab_mask;; i = (i + 1) & lm->vocab_mask) {
        uint32_t v = lm->vocab_slots[i];
        if (v == 0)
            return -1;
        const char *s = lm->pool + lm->word_off[v - 1];
        if (strnlen(s, n + 1) == n && memcmp(s, w, n) == 0)
            return (int32_t)(v - 1);
    }
}

/* Add a word (not yet present) with the next id; -1 out of memory. */
static int32_t vocab_add(ctc_arpa_lm *lm, const char *w, size_t n)
{
    if (lm->pool_len + n + 1 > lm->pool_cap) {
        size_t cap = lm->pool_cap * 2 + n + 1;
        char *p = realloc(lm->pool, cap);
        if (p == NULL)
            return -1;
        lm->pool = p;
        lm->pool_cap = cap;
    }
    int32_t id = lm->n_words++;
    lm->word_off[id] = (uint32_t)lm->pool_len;
    memcpy(lm->pool + lm->pool_len, w, n);
    lm->pool[lm->pool_len + n] = '\0';
    lm->pool_len += n + 1;
    uint64_t i = hash_bytes(w, n) & lm->vocab_mask;
    while (lm->vocab_slots[i] != 0)
        i = (i + 1) & lm->vocab_mask;
    lm->vocab_slots[i] = (uint32_t)id + 1;
    return id;
}

/* ---------------------------------------------------------------- lines */

typedef struct reader {
    const char *p, *end;
    int64_t line;                  /* number of the line last read */
    const char *s;                 /* that line, without its end */
    size_t n;
    int nul;                       /* the line holds a NUL byte */
    char *err;
    size_t err_size;
} reader;

static int next_line(reader *r)
{
    if (r->p >= r->end)
        return 0;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    const char *e = nl != NULL ? nl : r->end;
    r->s = r->p;
    r->n = (size_t)(e - r->p);
    if (r->n > 0 && r->s[r->n - 1] == '\r')
        r->n--;
    r->p = nl != NULL ? nl + 1 : r->end;
    r->line++;
    r->nul = memchr(r->s, '\0', r->n) != NULL;
    return 1;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

static int blank_line(const reader *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (!is_space(r->s[i]))
            return 0;
    return 1;
}

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...)
{
    int k = snprintf(r->err, r->err_size, "line %lld: ", (long long)r->line);
    if (k < 0 || (size_t)k >= r->err_size)
        return CTC_ARPA_EFORMAT;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, r->err_size - (size_t)k, fmt, ap);
    va_end(ap);
    return CTC_ARPA_EFORMAT;
}

/* The line trimmed of spaces equals lit. */
static int line_is(const reader *r, const char *lit)
{
    size_t b = 0, e = r->n, n = strlen(lit);
    while (b < e && is_space(r->s[b]))
        b++;
    while (e > b && is_space(r->s[e - 1]))
        e--;
    return e - b == n && memcmp(r->s + b, lit, n) == 0;
}

/* Split the line into whitespace-separated fields (at most max). */
static int split_fields(const reader *r, const char **f, size_t *len, int max)
{
    int k = 0;
    size_t i = 0;
    while (i < r->n) {
        while (i < r->n && is_space(r->s[i]))
            i++;
        if (i >= r->n)
            break;
        size_t b = i;
        while (i < r->n && !is_space(r->s[i]))
            i++;
        if (k == max)
            return max + 1;
        f[k] = r->s + b;
        len[k] = i - b;
        k++;
    }
    return k;
}

/* A float field: 0 when it is not a number as a whole. */
static int parse_float(const char *s, size_t n, float *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    float v = strtof(buf, &end);
    if (end != buf + n)
        return 0;
    *out = v;
    return 1;
}

static int parse_count(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 15)
        return 0;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* ----------------------------------------------------------------- load */

void ctc_arpa_lm_free(ctc_arpa_lm *lm)
{
    if (lm == NULL)
        return;
    if (lm->map != NULL) {
        /* a mapped model's arrays are views of the file (ngram_binary.c) */
        if (lm->unmap != NULL)
            lm->unmap(lm->map, lm->map_size);
        free(lm);
        return;
    }
    for (int i = 0; i <= CTC_LM_MAX_ORDER; i++) {
        free(lm->tables[i].keys);
        free(lm->tables[i].prob);
        free(lm->tables[i].backoff);
        free(lm->tables[i].qprob);
        free(lm->tables[i].qbackoff);
    }
    free(lm->pool);
    free(lm->word_off);
    free(lm->vocab_slots);
    free(lm->uni_prob);
    free(lm->uni_backoff);
    free(lm);
}

/* The \data\ section: the counts of every order. */
static int read_header(reader *r, int64_t *counts, int32_t *order, size_t file_size)
{
    for (;;) {
        if (!next_line(r))
            return fail(r, "no \\data\\ line: not an ARPA file");
        if (!blank_line(r))
            break;
    }
    if (!line_is(r, "\\data\\"))
        return fail(r, "the first line that is not blank must be \\data\\, found '%.*s'", r->n < 40 ? (int)r->n : 40, r->s);
    *order = 0;
    for (;;) {
        if (!next_line(r))
            return fail(r, "the file ends in the \\data\\ section");
        if (blank_line(r))
            break;
        const char *f[3];
        size_t len[3];
        int k = split_fields(r, f, len, 2);
        const char *eq = k == 2 ? memchr(f[1], '=', len[1]) : NULL;
        int64_t n, c;
        if (k != 2 || len[0] != 5 || memcmp(f[0], "ngram", 5) != 0 || eq == NULL
            || !parse_count(f[1], (size_t)(eq - f[1]), &n)
            || !parse_count(eq + 1, len[1] - (size_t)(eq - f[1]) - 1, &c))
            return fail(r, "expected 'ngram N=COUNT' or a blank line in \\data\\, found '%.*s'", r->n < 40 ? (int)r->n : 40, r->s);
        if (n != *order + 1)
            return fail(r, "ngram %lld= where ngram %d= was expected (orders are listed 1, 2, ...)", (long long)n,
                        *order + 1);
        if (n > CTC_LM_MAX_ORDER)
            return fail(r, "order %lld is above the largest supported, %d (KenLM's default)", (long long)n,
                        CTC_LM_MAX_ORDER);
        /* every n-gram takes a line of at least 4 bytes ("p w\n") */
        if (c < 1 || (uint64_t)c > file_size / 4)
            return fail(r, "ngram %lld=%lld: a count must be at least 1 and fit in the file", (long long)n,
                        (long long)c);
        counts[n] = c;
        *order = (int32_t)n;
    }
    if (*order == 0)
        return fail(r, "\\data\\ lists no 'ngram N=COUNT' line");
    return CTC_ARPA_OK;
}

static int alloc_model(ctc_arpa_lm *lm, const int64_t *counts)
{
    int64_t v = counts[1] + 1;    /* + <unk> when the file lacks it */
    lm->words_cap = (int32_t)v;
    lm->word_off = malloc((size_t)v * sizeof *lm->word_off);
    lm->vocab_mask = slots_for(v) * 2 - 1;
    lm->vocab_slots = calloc(lm->vocab_mask + 1, sizeof *lm->vocab_slots);
    lm->uni_prob = malloc((size_t)v * sizeof(float));
    lm->uni_backoff = malloc((size_t)v * sizeof(float));
    lm->pool_cap = (size_t)v * 8;
    lm->pool = malloc(lm->pool_cap);
    if (lm->word_off == NULL || lm->vocab_slots == NULL || lm->uni_prob == NULL || lm->uni_backoff == NULL
        || lm->pool == NULL)
        return CTC_ARPA_ENOMEM;
    for (int32_t n = 2; n <= lm->order; n++) {
        ngram_table *t = &lm->tables[n];
        t->n_slots = (uint64_t)counts[n] + (uint64_t)counts[n] / 2 + 1;
        t->keys = calloc(t->n_slots, sizeof *t->keys);
        /* zeroed: empty slots hold 0, so a binary written from the model is the same bytes every time */
        t->prob = calloc(t->n_slots, sizeof *t->prob);
        t->backoff = n < lm->order ? calloc(t->n_slots, sizeof *t->backoff) : NULL;
        if (t->keys == NULL || t->prob == NULL || (n < lm->order && t->backoff == NULL))
            return CTC_ARPA_ENOMEM;
    }
    return CTC_ARPA_OK;
}

/* Mark the context of an n-gram (words ids[0..n-2]) as extending. */
static int mark_context(ctc_arpa_lm *lm, reader *r, const int32_t *ids, int32_t n)
{
    float *b;
    if (n == 2) {
        b = &lm->uni_backoff[ids[0]];
    } else {
        uint64_t key = key_start(ids[n - 2]);
        for (int32_t i = n - 3; i >= 0; i--)
            key = key_extend(key, ids[i]);
        const int64_t e = table_find(&lm->tables[n - 1], key);
        if (e < 0)
            return fail(r, "the context of this %d-gram (its first %d words) is not a %d-gram of the model", n,
                        n - 1, n - 1);
        b = &lm->tables[n - 1].backoff[e];
    }
    if (!has_extension(*b))
        *b = 0.0f;
    return CTC_ARPA_OK;
}

static int read_section(ctc_arpa_lm *lm, reader *r, int32_t n, int64_t count)
{
    char want[32];
    snprintf(want, sizeof want, "\\%d-grams:", n);
    for (;;) {
        if (!next_line(r))
            return fail(r, "the file ends before the %s section", want);
        if (!blank_line(r))
            break;
    }
    if (!line_is(r, want))
        return fail(r, "expected the %s header, found '%.*s'", want, r->n < 40 ? (int)r->n : 40, r->s);
    const char *f[CTC_LM_MAX_ORDER + 3];
    size_t len[CTC_LM_MAX_ORDER + 3];
    int32_t ids[CTC_LM_MAX_ORDER];
    for (int64_t i = 0; i < count; i++) {
        if (!next_line(r) || r->n == 0 || r->s[0] == '\\' || blank_line(r))
            return fail(r, "the \\data\\ header promises %lld %d-grams, the section has %lld", (long long)count,
                        n, (long long)i);
        if (r->nul)
            return fail(r, "a NUL byte: not a text file");
        int k = split_fields(r, f, len, n + 2);
        const int with_backoff = k == n + 2;
        if (k < n + 1 || k > n + 2)
            return fail(r, "a %d-gram line is 'log10prob %d words [backoff]': %d fields", n, n, k);
        if (with_backoff && n == lm->order)
            return fail(r, "a %d-gram of the highest order has no backoff: %d fields", n, k);
        float prob, backoff = -0.0f;
        if (!parse_float(f[0], len[0], &prob) || isnan(prob) || prob == INFINITY)
            return fail(r, "bad log10 probability '%.*s'", (int)(len[0] < 40 ? len[0] : 40), f[0]);
        if (prob > 0.0f)
            return fail(r, "log10 probability %g is positive", (double)prob);
        if (with_backoff) {
            if (!parse_float(f[n + 1], len[n + 1], &backoff) || !isfinite(backoff))
                return fail(r, "bad backoff '%.*s'", (int)(len[n + 1] < 40 ? len[n + 1] : 40), f[n + 1]);
            if (backoff == 0.0f)
                backoff = -0.0f;     /* KenLM: a zero backoff is "no extension" until a longer n-gram says so */
        }
        for (int32_t j = 0; j < n; j++) {
            if (n == 1) {
                const int unk = len[1] == 5 && memcmp(f[1], "<unk>", 5) == 0;
                if ((unk && lm->unk_seen) || (!unk && vocab_find(lm, f[1], len[1]) >= 0))
                    return fail(r, "duplicate 1-gram '%.*s'", (int)(len[1] < 60 ? len[1] : 60), f[1]);
                if (unk) {
                    ids[j] = 0;
                    lm->unk_seen = 1;
                } else {
                    if (lm->n_words == lm->words_cap)
                        return fail(r, "more 1-grams than the \\data\\ header promises");
                    ids[j] = vocab_add(lm, f[1], len[1]);
                    if (ids[j] < 0)
                        return CTC_ARPA_ENOMEM;
                }
            } else {
                ids[j] = vocab_find(lm, f[1 + j], len[1 + j]);
                if (ids[j] < 0)
                    return fail(r, "word '%.*s' of this %d-gram is not a 1-gram of the model",
                                (int)(len[1 + j] < 60 ? len[1 + j] : 60), f[1 + j], n);
            }
        }
        if (n == 1) {
            lm->uni_prob[ids[0]] = prob;
            lm->uni_backoff[ids[0]] = backoff;
            continue;
        }
        uint64_t key = key_start(ids[n - 1]);
        for (int32_t j = n - 2; j >= 0; j--)
            key = key_extend(key, ids[j]);
        int fresh;
        ngram_table *t = &lm->tables[n];
        const int64_t e = table_insert(t, key, &fresh);
        if (!fresh)
            return fail(r, "duplicate %d-gram '%.*s'", n, (int)((f[n] + len[n] - f[1]) < 80 ? (f[n] + len[n] - f[1]) : 80),
                        f[1]);
        t->prob[e] = prob;
        if (t->backoff != NULL)
            t->backoff[e] = backoff;
        int st = mark_context(lm, r, ids, n);
        if (st != CTC_ARPA_OK)
            return st;
    }
    return CTC_ARPA_OK;
}

int ctc_arpa_lm_load(const char *data, size_t n, ctc_arpa_lm **out, char *err, size_t err_size)
{
    *out = NULL;
    if (err_size > 0)
        err[0] = '\0';
    reader r = { .p = data, .end = data + n, .err = err, .err_size = err_size };
    int64_t counts[CTC_LM_MAX_ORDER + 1] = { 0 };
    /* KenLM's build_binary output starts with this magic (lm/binary_format.cc) */
    static const char kenlm_magic[] = "mmap lm http://kheafield.com/code";
    if (n >= sizeof kenlm_magic - 1 && memcmp(data, kenlm_magic, sizeof kenlm_magic - 1) == 0) {
        snprintf(err, err_size, "line 1: a KenLM binary model, which is not read here: give the ARPA file it was "
                 "built from, or loom's binary made from it (loom ctc-lm convert in.arpa out.bin)");
        return CTC_ARPA_EFORMAT;
    }
    ctc_arpa_lm *lm = calloc(1, sizeof *lm);
    if (lm == NULL)
        return CTC_ARPA_ENOMEM;
    int st = read_header(&r, counts, &lm->order, n);
    if (st == CTC_ARPA_OK)
        st = alloc_model(lm, counts);
    if (st == CTC_ARPA_OK) {
        /* id 0 is <unk>, with KenLM's probability when the file has none */
        if (vocab_add(lm, "<unk>", 5) != 0) {
            st = CTC_ARPA_ENOMEM;
        } else {
            lm->uni_prob[0] = -100.0f;
            lm->uni_backoff[0] = -0.0f;
        }
    }
    for (int32_t k = 1; st == CTC_ARPA_OK && k <= lm->order; k++)
        st = read_section(lm, &r, k, counts[k]);
    if (st == CTC_ARPA_OK) {
        for (;;) {
            if (!next_line(&r)) {
                st = fail(&r, "the file ends without \\end\\");
                break;
            }
            if (blank_line(&r))
                continue;
            if (line_is(&r, "\\end\\"))
                break;
            st = r.s[0] == '\\' ? fail(&r, "expected \\end\\ after the last section, found '%.*s'", r.n < 40 ? (int)r.n : 40, r.s)
                                : fail(&r, "more %d-grams than the \\data\\ header promises (%lld)", lm->order,
                                       (long long)counts[lm->order]);
            break;
        }
    }
    while (st == CTC_ARPA_OK && next_line(&r)) {
        if (!blank_line(&r))
            st = fail(&r, "text after \\end\\");
    }
    if (st == CTC_ARPA_OK) {
        lm->bos = vocab_find(lm, "<s>", 3);
        lm->eos = vocab_find(lm, "</s>", 4);
        if (lm->bos < 0 || lm->eos < 0)
            st = fail(&r, "the model has no %s 1-gram (KenLM refuses such a model)", lm->bos < 0 ? "<s>" : "</s>");
    }
    if (st == CTC_ARPA_ENOMEM)
        snprintf(err, err_size, "out of memory");
    if (st != CTC_ARPA_OK) {
        ctc_arpa_lm_free(lm);
        return st;
    }
    *out = lm;
    return CTC_ARPA_OK;
}

/* ---------------------------------------------------------------- query */

int32_t ctc_arpa_lm_order(const ctc_arpa_lm *lm) { return lm->order; }
int32_t ctc_arpa_lm_vocab_size(const ctc_arpa_lm *lm) { return lm->n_words; }
int32_t ctc_arpa_lm_bos(const ctc_arpa_lm *lm) { return lm->bos; }
int32_t ctc_arpa_lm_eos(const ctc_arpa_lm *lm) { return lm->eos; }
int ctc_arpa_lm_quant_bits(const ctc_arpa_lm *lm) { return lm->quant_bits; }
int ctc_arpa_lm_is_mapped(const ctc_arpa_lm *lm) { return lm->map != NULL; }

int64_t ctc_arpa_lm_count(const ctc_arpa_lm *lm, int32_t order)
{
    if (order == 1)
        return lm->n_words;
    return order >= 2 && order <= lm->order ? lm->tables[order].count : 0;
}

size_t ctc_arpa_lm_bytes(const ctc_arpa_lm *lm)
{
    if (lm->map != NULL)
        return sizeof *lm + lm->map_size;
    size_t b = sizeof *lm + lm->pool_cap + (size_t)lm->words_cap * (sizeof(uint32_t) + 2 * sizeof(float))
               + (lm->vocab_mask + 1) * sizeof(uint32_t);
    for (int32_t n = 2; n <= lm->order; n++)
        b += lm->tables[n].n_slots * (sizeof(uint64_t) + (lm->tables[n].qprob != NULL ? 1 : sizeof(float))
                                      * (n < lm->order ? 2 : 1));
    return b;
}

int32_t ctc_arpa_lm_index(const ctc_arpa_lm *lm, const char *word, size_t len)
{
    int32_t id = vocab_find(lm, word, len);
    return id < 0 ? 0 : id;
}

void ctc_arpa_lm_begin(const ctc_arpa_lm *lm, ctc_lm_context *out)
{
    out->length = 1;
    out->words[0] = lm->bos;
    out->backoff[0] = lm->uni_backoff[lm->bos];
}

void ctc_arpa_lm_null(ctc_lm_context *out) { out->length = 0; }

float ctc_arpa_lm_score(const ctc_arpa_lm *lm, const ctc_lm_context *in, int32_t word, ctc_lm_context *out)
{
    const int32_t max_ctx = lm->order - 1;
    float prob = lm->uni_prob[word];
    int32_t matched = 1;           /* length of the n-gram whose probability is taken */
    out->words[0] = word;
    out->backoff[0] = lm->uni_backoff[word];
    out->length = has_extension(out->backoff[0]) ? 1 : 0;
    uint64_t key = key_start(word);
    for (int32_t i = 0; i < in->length && matched < lm->order; i++) {
        key = key_extend(key, in->words[i]);
        const ngram_table *t = &lm->tables[matched + 1];
        const int64_t e = table_find(t, key);
        if (e < 0)
            break;
        prob = t->qprob != NULL ? t->prob_centre[t->qprob[e]] : t->prob[e];
        matched++;
        if (matched <= max_ctx) {
            const float bo = t->qbackoff != NULL ? t->backoff_centre[t->qbackoff[e]] : t->backoff[e];
            out->backoff[matched - 1] = bo;
            if (has_extension(bo))
                out->length = matched;
        }
    }
    /* the backoffs of the contexts longer than the one matched */
    for (int32_t j = matched - 1; j < in->length; j++)
        prob += in->backoff[j];
    if (out->length > max_ctx)
        out->length = max_ctx;
    for (int32_t j = 1; j < out->length; j++)
        out->words[j] = in->words[j - 1];
    return prob;
}

/* ------------------------------------------------------------ quantise */

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Codes for the n values v (sorted copy in tmp): `bins` bins of equal
** count, each centre the mean of its bin (KenLM's quantiser's rule), codes
** from `first`; centre[first + i] and the code of each value in q. */
static void quantise_values(const float *v, uint64_t n_slots, const uint64_t *keys, float *tmp, int64_t n,
                            int bins, int first, float *centre, uint8_t *q, int skip_zero)
{
    if (n == 0)
        return;
    if (bins > n)
        bins = (int)n;
    float upper[256];
    for (int i = 0; i < bins; i++) {
        const int64_t b0 = n * i / bins, b1 = n * (i + 1) / bins;
        double sum = 0.0;
        for (int64_t k = b0; k < b1; k++)
            sum += tmp[k];
        centre[first + i] = b1 > b0 ? (float)(sum / (double)(b1 - b0)) : tmp[b0];
        upper[i] = tmp[b1 - 1];
    }
    for (uint64_t s = 0; s < n_slots; s++) {
        if (keys[s] == 0 || (skip_zero && v[s] == 0.0f))
            continue;
        int lo = 0, hi = bins - 1;          /* the first bin whose upper bound is >= v */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (upper[mid] >= v[s])
                hi = mid;
            else
                lo = mid + 1;
        }
        q[s] = (uint8_t)(first + lo);
    }
}

int ctc_arpa_lm_quantize(ctc_arpa_lm *lm, int bits)
{
    if (bits < 2 || bits > 8 || lm->map != NULL)
        return CTC_ARPA_EFORMAT;
    if (lm->quant_bits == 0)
        lm->quant_bits = bits;
    for (int32_t n = 2; n <= lm->order; n++) {
        ngram_table *t = &lm->tables[n];
        if (t->qprob != NULL || t->keys == NULL)
            continue;
        float *tmp = malloc((size_t)(t->count > 0 ? t->count : 1) * sizeof *tmp);
        t->qprob = calloc(t->n_slots, 1);
        t->qbackoff = t->backoff != NULL ? calloc(t->n_slots, 1) : NULL;
        if (tmp == NULL || t->qprob == NULL || (t->backoff != NULL && t->qbackoff == NULL)) {
            free(tmp);
            free(t->qprob);
            free(t->qbackoff);
            t->qprob = t->qbackoff = NULL;
            return CTC_ARPA_ENOMEM;
        }
        int64_t k = 0;
        for (uint64_t s = 0; s < t->n_slots; s++)
            if (t->keys[s] != 0)
                tmp[k++] = t->prob[s];
        qsort(tmp, (size_t)k, sizeof *tmp, cmp_float);
        quantise_values(t->prob, t->n_slots, t->keys, tmp, k, 1 << bits, 0, t->prob_centre, t->qprob, 0);
        if (t->backoff != NULL) {
            /* codes 0 and 1 are -0.0 (no extension) and +0.0 exactly: the state depends on the sign */
            t->backoff_centre[0] = -0.0f;
            t->backoff_centre[1] = 0.0f;
            k = 0;
            for (uint64_t s = 0; s < t->n_slots; s++) {
                if (t->keys[s] == 0)
                    continue;
                if (t->backoff[s] == 0.0f)
                    t->qbackoff[s] = signbit(t->backoff[s]) ? 0 : 1;
                else
                    tmp[k++] = t->backoff[s];
            }
            qsort(tmp, (size_t)k, sizeof *tmp, cmp_float);
            quantise_values(t->backoff, t->n_slots, t->keys, tmp, k, (1 << bits) - 2, 2, t->backoff_centre,
                            t->qbackoff, 1);
        }
        free(tmp);
        free(t->prob);
        free(t->backoff);
        t->prob = t->backoff = NULL;
    }
#ifdef __GLIBC__
    malloc_trim(0);      /* hand the float arrays' pages back: the point of quantising */
#endif
    return CTC_ARPA_OK;
}
