/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vocab.c - the WordPiece vocab file (tokenizer.h, tt_vocab_load): one
** token per line, ids in line order. What each reference does with a line:
**   torchtext (_read_vocab): std::getline, so a line ends at '\n' only and a
**     '\r' stays in the token; an empty line is the token "\n" (issue 1840);
**     a duplicate is dropped at its first occurrence, which shifts every
**     later id by one. loom refuses duplicates instead, naming both lines.
**   tokenizers (WordPiece::read_file): BufReader::lines drops "\n" and
**     "\r\n", then trim_end() removes trailing white space; a duplicate
**     takes the later line number. loom refuses duplicates here too.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "pack.h"
#include "tokenizer.h"

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < n; i++) {
        h ^= (uint8_t)s[i];
        h *= UINT64_C(1099511628211);
    }
    return h ^ (h >> 29);
}

int32_t tt_vocab_find(const tt_vocab *v, const char *s, size_t n)
{
    uint32_t i = (uint32_t)hash_bytes(s, n) & v->mask;
    for (;;) {
        uint32_t e = v->table[i];
        if (e == 0)
            return -1;
        uint32_t id = e - 1;
        if (v->len[id] == n && memcmp(v->bytes + v->start[id], s, n) == 0)
            return (int32_t)id;
        i = (i + 1) & v->mask;
    }
}

void tt_vocab_free(tt_vocab *v)
{
    free(v->bytes);
    free(v->start);
    free(v->len);
    free(v->table);
    memset(v, 0, sizeof *v);
}

/* Trailing white space in Rust's sense (trim_end), as a byte length. */
static size_t rust_trim_end(const uint8_t *s, size_t n)
{
    while (n > 0) {
        size_t k = n - 1;
        while (k > 0 && (s[k] & 0xC0) == 0x80)
            k--;
        utf8proc_int32_t c;
        if (utf8proc_iterate(s + k, (utf8proc_ssize_t)(n - k), &c) != (utf8proc_ssize_t)(n - k)
            || !tt_hf_is_whitespace(c))
            break;
        n = k;
    }
    return n;
}

/* The byte offset of the first malformed UTF-8 sequence in s[0..n), or -1. */
static int64_t utf8_error_at(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        utf8proc_int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &c);
        if (k <= 0)
            return (int64_t)i;
        i += (size_t)k;
    }
    return -1;
}

loom_status tt_vocab_load(tt_vocab *v, const char *path, tt_compat compat, const char *unk_token)
{
    const void *map = NULL;
    size_t size = 0;
    memset(v, 0, sizeof *v);
    loom_status st = pk_host->map_file(path, &map, &size);
    if (st != LOOM_OK)
        return st;
    const uint8_t *d = map;
    if (size == 0) {
        pk_host->unmap_file(map, size);
        return pk_host->fail(LOOM_EINVAL, "%s: vocab '%s' is empty", TT_CLASS, path);
    }
    /* lines: a last line without '\n' counts; the '\n' ending the file opens no line */
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += d[i] == '\n';
    lines += d[size - 1] != '\n';
    if (lines >= INT32_MAX / 2) {
        pk_host->unmap_file(map, size);
        return pk_host->fail(LOOM_EINVAL, "%s: vocab '%s' has too many lines", TT_CLASS, path);
    }
    v->bytes = malloc(size + lines * 2 + 1);
    v->start = malloc(lines * sizeof *v->start);
    v->len = malloc(lines * sizeof *v->len);
    uint32_t cap = 16;
    while (cap < lines * 2)
        cap <<= 1;
    v->table = calloc(cap, sizeof *v->table);
    v->mask = cap - 1;
    if (v->bytes == NULL || v->start == NULL || v->len == NULL || v->table == NULL) {
        pk_host->unmap_file(map, size);
        tt_vocab_free(v);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for vocab '%s' (%zu lines)", TT_CLASS, path, lines);
    }
    size_t used = 0, pos = 0;
    st = LOOM_OK;
    for (size_t line = 0; line < lines; line++) {
        const uint8_t *p = d + pos;
        const uint8_t *nl = memchr(p, '\n', size - pos);
        size_t n = nl != NULL ? (size_t)(nl - p) : size - pos;
        pos += n + 1;
        int64_t bad = utf8_error_at(p, n);
        if (bad >= 0) {
            st = pk_host->fail(LOOM_EINVAL, "%s: vocab '%s' line %zu is not UTF-8 (malformed sequence at byte %lld "
                               "of the line)", TT_CLASS, path, line + 1, (long long)bad);
            break;
        }
        if (compat == TT_COMPAT_HF)
            n = rust_trim_end(p, n);
        const uint8_t *tok = p;
        if (compat == TT_COMPAT_TORCHTEXT && n == 0) {
            tok = (const uint8_t *)"\n";
            n = 1;
        }
        if (tt_vocab_find(v, (const char *)tok, n) >= 0) {
            int32_t first = tt_vocab_find(v, (const char *)tok, n);
            const int is_nl = n == 1 && tok[0] == '\n';
            st = pk_host->fail(LOOM_EINVAL, "%s: vocab '%s' line %zu repeats the token '%.*s' of line %d (ids are "
                               "line numbers: a repeated token would shift or hide ids)", TT_CLASS, path, line + 1,
                               is_nl ? 2 : (int)(n > 64 ? 64 : n), is_nl ? "\\n" : (const char *)tok,
                               (int)first + 1);
            break;
        }
        memcpy(v->bytes + used, tok, n);
        v->bytes[used + n] = '\0';
        v->start[v->n] = (uint32_t)used;
        v->len[v->n] = (uint32_t)n;
        used += n + 1;
        uint32_t h = (uint32_t)hash_bytes((const char *)tok, n) & v->mask;
        while (v->table[h] != 0)
            h = (h + 1) & v->mask;
        v->table[h] = (uint32_t)v->n + 1;
        v->n++;
    }
    pk_host->unmap_file(map, size);
    if (st == LOOM_OK && tt_vocab_find(v, unk_token, strlen(unk_token)) < 0)
        st = pk_host->fail(LOOM_EINVAL, "%s: vocab '%s' (%d tokens) has no unk_token '%s', which every word "
                           "WordPiece cannot cover becomes", TT_CLASS, path, (int)v->n, unk_token);
    if (st != LOOM_OK)
        tt_vocab_free(v);
    return st;
}
