/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_dict.c - tokens, word dictionaries and the lexicon (ctc_dict.h).
*/
#include "ctc_dict.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 29);
}

void ctc_dict_init(ctc_dict *d) { memset(d, 0, sizeof *d); }

void ctc_dict_free(ctc_dict *d)
{
    free(d->pool);
    free(d->entry_off);
    free(d->entry_index);
    free(d->slots);
    free(d->name_entry);
    memset(d, 0, sizeof *d);
}

int32_t ctc_dict_find(const ctc_dict *d, const char *s, size_t n)
{
    if (d->slots == NULL)
        return -1;
    for (uint64_t i = hash_str(s, n) & d->mask;; i = (i + 1) & d->mask) {
        int32_t e = d->slots[i] - 1;
        if (e < 0)
            return -1;
        const char *p = d->pool + d->entry_off[e];
        if (strnlen(p, n + 1) == n && memcmp(p, s, n) == 0)
            return d->entry_index[e];
    }
}

static int grow(void **p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int64_t c = *cap * 2 > need ? *cap * 2 : need + 16;
    void *q = realloc(*p, (size_t)c * elem);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int rehash(ctc_dict *d, uint64_t slots)
{
    int32_t *s = calloc(slots, sizeof *s);
    if (s == NULL)
        return -1;
    free(d->slots);
    d->slots = s;
    d->mask = slots - 1;
    for (int32_t e = 0; e < d->n_entries; e++) {
        const char *p = d->pool + d->entry_off[e];
        uint64_t i = hash_str(p, strlen(p)) & d->mask;
        while (d->slots[i] != 0)
            i = (i + 1) & d->mask;
        d->slots[i] = e + 1;
    }
    return 0;
}

int32_t ctc_dict_add(ctc_dict *d, const char *s, size_t n, int32_t index)
{
    if (ctc_dict_find(d, s, n) >= 0)
        return -1;
    if (index < 0)
        index = d->n_index;
    int64_t ecap = d->entries_cap, icap = d->index_cap, pcap = (int64_t)d->pool_cap;
    if (grow((void **)&d->entry_off, &ecap, d->n_entries + 1, sizeof *d->entry_off) != 0)
        return -2;
    int64_t ecap2 = d->entries_cap;
    if (grow((void **)&d->entry_index, &ecap2, d->n_entries + 1, sizeof *d->entry_index) != 0)
        return -2;
    d->entries_cap = (int32_t)(ecap < ecap2 ? ecap : ecap2);
    if (grow((void **)&d->name_entry, &icap, (int64_t)index + 1, sizeof *d->name_entry) != 0)
        return -2;
    d->index_cap = (int32_t)icap;
    if (grow((void **)&d->pool, &pcap, (int64_t)(d->pool_len + n + 1), 1) != 0)
        return -2;
    d->pool_cap = (size_t)pcap;
    if ((uint64_t)(d->n_entries + 1) * 2 > d->mask + 1 || d->slots == NULL) {
        if (rehash(d, d->slots == NULL ? 64 : (d->mask + 1) * 2) != 0)
            return -2;
    }
    int32_t e = d->n_entries++;
    d->entry_off[e] = (uint32_t)d->pool_len;
    d->entry_index[e] = index;
    memcpy(d->pool + d->pool_len, s, n);
    d->pool[d->pool_len + n] = '\0';
    d->pool_len += n + 1;
    uint64_t i = hash_str(s, n) & d->mask;
    while (d->slots[i] != 0)
        i = (i + 1) & d->mask;
    d->slots[i] = e + 1;
    if (index >= d->n_index) {
        for (int32_t k = d->n_index; k <= index; k++)
            d->name_entry[k] = -1;
        d->n_index = index + 1;
    }
    if (d->name_entry[index] < 0)
        d->name_entry[index] = e;
    return index;
}

const char *ctc_dict_name(const ctc_dict *d, int32_t index)
{
    if (index < 0 || index >= d->n_index || d->name_entry[index] < 0)
        return NULL;
    return d->pool + d->entry_off[d->name_entry[index]];
}

/* ------------------------------------------------------------ parsing */

typedef struct line_reader {
    const char *p, *end, *s;
    size_t n;
    int64_t line;
} line_reader;

static int next_line(line_reader *r)
{
    if (r->p >= r->end)
        return 0;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    const char *e = nl != NULL ? nl : r->end;
    r->s = r->p;
    r->n = (size_t)(e - r->p);
    r->p = nl != NULL ? nl + 1 : r->end;
    r->line++;
    return 1;
}

/* std::isspace in the C locale */
static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'; }

/* The next whitespace-separated field of s[*i..n): 0 at the end. */
static int next_field(const char *s, size_t n, size_t *i, const char **f, size_t *len)
{
    while (*i < n && is_ws(s[*i]))
        (*i)++;
    if (*i >= n)
        return 0;
    size_t b = *i;
    while (*i < n && !is_ws(s[*i]))
        (*i)++;
    *f = s + b;
    *len = *i - b;
    return 1;
}

static int say(char *err, size_t err_size, int64_t line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int say(char *err, size_t err_size, int64_t line, const char *fmt, ...)
{
    int k = line > 0 ? snprintf(err, err_size, "line %lld: ", (long long)line) : 0;
    if (k < 0 || (size_t)k >= err_size)
        return CTC_PARSE_EFORMAT;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + k, err_size - (size_t)k, fmt, ap);
    va_end(ap);
    return CTC_PARSE_EFORMAT;
}

#define SHOW(len) (int)((len) < 60 ? (len) : 60)

int ctc_dict_parse(ctc_dict *d, const char *data, size_t n, char *err, size_t err_size)
{
    line_reader r = { .p = data, .end = data + n };
    while (next_line(&r)) {
        /* std::getline's line; flashlight skips only a line that is empty */
        if (r.n == 0)
            continue;
        if (memchr(r.s, '\0', r.n) != NULL)
            return say(err, err_size, r.line, "a NUL byte: not a text file");
        size_t i = 0;
        const char *f;
        size_t len;
        /* a line of only whitespace adds nothing (and takes no index) */
        int32_t index = d->n_index;
        while (next_field(r.s, r.n, &i, &f, &len)) {
            int32_t got = ctc_dict_add(d, f, len, index);
            if (got == -2)
                return CTC_PARSE_ENOMEM;
            if (got == -1)
                return say(err, err_size, r.line, "duplicate entry '%.*s' (it has index %d)", SHOW(len), f,
                           ctc_dict_find(d, f, len));
        }
    }
    if (d->n_index == 0)
        return say(err, err_size, 0, "no entries");
    return CTC_PARSE_OK;
}

int ctc_dict_parse_list(ctc_dict *d, const char *list, char *err, size_t err_size)
{
    size_t i = 0, n = strlen(list);   /* a C string: no NUL inside */
    const char *f;
    size_t len;
    while (next_field(list, n, &i, &f, &len)) {
        int32_t got = ctc_dict_add(d, f, len, -1);
        if (got == -2)
            return CTC_PARSE_ENOMEM;
        if (got == -1)
            return say(err, err_size, 0, "duplicate token '%.*s'", SHOW(len), f);
    }
    if (d->n_index == 0)
        return say(err, err_size, 0, "no tokens");
    return CTC_PARSE_OK;
}

void ctc_lexicon_free(ctc_lexicon *lx)
{
    ctc_dict_free(&lx->words);
    free(lx->spell_word);
    free(lx->spell_off);
    free(lx->tokens);
    memset(lx, 0, sizeof *lx);
}

int ctc_lexicon_parse(ctc_lexicon *lx, const ctc_dict *tokens, const char *data, size_t n, char *err,
                      size_t err_size)
{
    memset(lx, 0, sizeof *lx);
    line_reader r = { .p = data, .end = data + n };
    if (grow((void **)&lx->spell_off, &lx->spell_cap, 1, sizeof *lx->spell_off) != 0)
        return CTC_PARSE_ENOMEM;
    lx->spell_off[0] = 0;
    int64_t wcap = 0;
    while (next_line(&r)) {
        size_t i = 0;
        const char *f, *word;
        if (memchr(r.s, '\0', r.n) != NULL)
            return say(err, err_size, r.line, "a NUL byte: not a text file");
        size_t len, wlen;
        if (!next_field(r.s, r.n, &i, &word, &wlen))
            return say(err, err_size, r.line, "an empty line: each line is 'word token token ...'");
        int32_t w = ctc_dict_find(&lx->words, word, wlen);
        if (w < 0)
            w = ctc_dict_add(&lx->words, word, wlen, -1);
        if (w < 0)
            return CTC_PARSE_ENOMEM;
        int64_t start = lx->n_tokens;
        while (next_field(r.s, r.n, &i, &f, &len)) {
            int32_t t = ctc_dict_find(tokens, f, len);
            if (t < 0)
                return say(err, err_size, r.line, "token '%.*s' of the spelling of '%.*s' is not in the tokens",
                           SHOW(len), f, SHOW(wlen), word);
            if (grow((void **)&lx->tokens, &lx->tokens_cap, lx->n_tokens + 1, sizeof *lx->tokens) != 0)
                return CTC_PARSE_ENOMEM;
            lx->tokens[lx->n_tokens++] = t;
        }
        if (lx->n_tokens == start)
            return say(err, err_size, r.line, "'%.*s' has no spelling: each line is 'word token token ...'",
                       SHOW(wlen), word);
        int64_t cap = lx->spell_cap;
        if (grow((void **)&lx->spell_off, &cap, lx->n_spell + 2, sizeof *lx->spell_off) != 0
            || grow((void **)&lx->spell_word, &wcap, lx->n_spell + 1, sizeof *lx->spell_word) != 0)
            return CTC_PARSE_ENOMEM;
        lx->spell_cap = cap;
        lx->spell_word[lx->n_spell] = w;
        lx->spell_off[++lx->n_spell] = lx->n_tokens;
    }
    if (ctc_dict_find(&lx->words, "<unk>", 5) < 0 && ctc_dict_add(&lx->words, "<unk>", 5, -1) < 0)
        return CTC_PARSE_ENOMEM;
    if (lx->n_spell == 0)
        return say(err, err_size, 0, "no words");
    return CTC_PARSE_OK;
}
