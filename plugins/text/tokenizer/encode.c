/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encode.c - one string to WordPiece ids in one pass (tokenizer.h,
** tt_encode): normalisation, pre-tokenisation and LinMaxMatch fused, as in
** the end-to-end variant of "Fast WordPiece Tokenization". Every
** normalised byte is fed to the trie as soon as it is known; a word
** boundary (white space, punctuation, CJK, a special token) finishes the
** word with the failure pops of the node reached. Nothing is allocated per
** token or per word: the output grows by doubling.
**
** ASCII takes a table lookup per byte (the tables are made at create from
** the same class functions as the rest). Other code points are decoded
** with utf8proc; when accents are stripped they are decomposed (NFD) one at
** a time, and combining marks (canonical combining class != 0) wait in a
** small buffer until the next starter, where they are put in canonical
** order, so the result equals NFD of the whole piece: canonical reordering
** never crosses a starter, and every ASCII character is one.
**
** Character offsets: every normalised byte of the current word remembers
** the index of the input character it came from, so each emitted token
** gets [first character, last character + 1).
*/
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "tokenizer.h"

/* Combining marks waiting for the next starter. */
#define TT_PENDING_MAX 64

typedef struct enc {
    const tt_tokenizer *t;
    const tt_trie *tr;
    tt_tokens *out;
    int32_t u;              /* trie state */
    size_t word_out;        /* out->n when the word began */
    int32_t wbytes, wchars; /* normalised bytes and characters of the word */
    int failed;             /* the word is [UNK] */
    int64_t wfirst, wlast;  /* input characters of the word: first, last + 1 */
    int32_t mpos;           /* normalised byte where the next token starts */
    int32_t *cidx;          /* input character of each normalised byte, or NULL */
    int32_t cidx_cap;
    int ns;                 /* the current piece is a never_split token (torchtext) */
    int32_t pend_cp[TT_PENDING_MAX];
    int64_t pend_src[TT_PENDING_MAX];
    int n_pend;
    int oom;
} enc;

loom_status tt_tokens_reserve(tt_tokens *o, size_t more)
{
    if (o->n + more <= o->cap)
        return LOOM_OK;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->n + more)
        cap *= 2;
    int64_t *ids = realloc(o->ids, cap * sizeof *ids);
    if (ids == NULL)
        return LOOM_ENOMEM;
    o->ids = ids;
    if (o->want_spans) {
        int64_t *sp = realloc(o->spans, cap * 2 * sizeof *sp);
        if (sp == NULL)
            return LOOM_ENOMEM;
        o->spans = sp;
    }
    o->cap = cap;
    return LOOM_OK;
}

void tt_tokens_free(tt_tokens *o)
{
    free(o->ids);
    free(o->spans);
    free(o->cidx);
    memset(o, 0, sizeof *o);
}

static inline void emit_id(enc *e, int32_t id, int64_t first, int64_t last)
{
    tt_tokens *o = e->out;
    if (o->n == o->cap && tt_tokens_reserve(o, 1) != LOOM_OK) {
        e->oom = 1;
        return;
    }
    o->ids[o->n] = id;
    if (o->want_spans) {
        o->spans[2 * o->n] = first;
        o->spans[2 * o->n + 1] = last;
    }
    o->n++;
}

/* Emit F(u), the failure pops of node u. */
static void emit_pops(enc *e, int32_t u)
{
    const tt_trie *tr = e->tr;
    for (uint32_t k = 0, n = tr->pops_n[u]; k < n; k++) {
        int32_t p = tr->pops[tr->pops_begin[u] + k];
        int32_t len = tr->depth[p];
        int64_t first = 0, last = 0;
        if (e->cidx != NULL) {
            /* canonical reordering may move a mark before its base: the
            ** span covers every character the token's bytes came from */
            int32_t lo = e->cidx[e->mpos], hi = lo;
            for (int32_t k2 = 1; k2 < len; k2++) {
                int32_t x = e->cidx[e->mpos + k2];
                lo = x < lo ? x : lo;
                hi = x > hi ? x : hi;
            }
            first = lo;
            last = (int64_t)hi + 1;
        }
        e->mpos += len;
        emit_id(e, tr->token[p], first, last);
    }
}

/* One normalised byte of the current word, from input character src. */
static inline void step(enc *e, uint8_t c, int64_t src)
{
    if (e->wbytes == 0) {
        e->wfirst = src;
        e->wlast = src + 1;
    } else {
        /* min and max: canonical reordering may put a mark first */
        e->wfirst = src < e->wfirst ? src : e->wfirst;
        e->wlast = src + 1 > e->wlast ? src + 1 : e->wlast;
    }
    if (e->failed) {
        e->wbytes++;
        return;
    }
    if (e->cidx != NULL) {
        if (e->wbytes >= e->cidx_cap) {
            e->failed = 1;          /* longer than any word WordPiece takes */
            e->wbytes++;
            return;
        }
        e->cidx[e->wbytes] = (int32_t)src;
    }
    e->wbytes++;
    if (e->t->compat == TT_COMPAT_TORCHTEXT && e->wbytes > e->t->max_chars) {
        e->failed = 1;              /* torchtext counts bytes: s.size() > 100 */
        return;
    }
    const tt_trie *tr = e->tr;
    int32_t u = e->u, v;
    while ((v = tt_trie_child(tr, u, c)) < 0) {
        if (tr->fail[u] < 0) {
            e->failed = 1;
            return;
        }
        emit_pops(e, u);
        u = tr->fail[u];
    }
    e->u = v;
}

static void end_word(enc *e)
{
    if (e->wbytes == 0)
        return;
    const tt_trie *tr = e->tr;
    if (!e->failed) {
        int32_t u = e->u;
        while (u != tr->root && u != tr->sroot) {
            if (tr->fail[u] < 0) {
                e->failed = 1;
                break;
            }
            emit_pops(e, u);
            u = tr->fail[u];
        }
    }
    if (e->failed) {
        e->out->n = e->word_out;
        emit_id(e, e->t->unk_id, e->wfirst, e->wlast);
    }
    e->u = tr->root;
    e->wbytes = e->wchars = 0;
    e->failed = 0;
    e->mpos = 0;
    e->word_out = e->out->n;
}

/* One normalised character of the current word. */
static void word_char(enc *e, int32_t c, int64_t src)
{
    uint8_t b[4];
    utf8proc_ssize_t k = utf8proc_encode_char(c, b);
    for (utf8proc_ssize_t i = 0; i < k; i++)
        step(e, b[i], src);
    if (e->t->compat == TT_COMPAT_HF && ++e->wchars > e->t->max_chars)
        e->failed = 1;              /* tokenizers counts characters */
}

/* A normalised character that is a word of its own. */
static void split_char(enc *e, int32_t c, int64_t src)
{
    end_word(e);
    word_char(e, c, src);
    end_word(e);
}

/* torchtext: one character after NFD (bert_tokenizer.cpp: _clean,
** _basic_tokenize, to_lower). */
static void torchtext_char(enc *e, int32_t c, int64_t src)
{
    const tt_tokenizer *t = e->t;
    if (c == 0 || c == 0xFFFD || tt_torchtext_is_control(c))
        return;
    if (t->strip && !e->ns && utf8proc_category(c) == UTF8PROC_CATEGORY_MN)
        return;
    if (tt_torchtext_is_whitespace(c)) {
        end_word(e);
        return;
    }
    const int split = tt_torchtext_is_cjk(c) || (!e->ns && tt_torchtext_is_punct(c));
    if (t->do_lower_case && !e->ns)
        c = utf8proc_tolower(c);
    if (split)
        split_char(e, c, src);
    else
        word_char(e, c, src);
}

/* tokenizers: one character after NFD (strip accents, then lowercase, then
** BertPreTokenizer's punctuation split). */
static void hf_char(enc *e, int32_t c, int64_t src)
{
    const tt_tokenizer *t = e->t;
    if (t->strip && utf8proc_category(c) == UTF8PROC_CATEGORY_MN)
        return;
    int32_t low[2] = { c, -1 };
    if (t->do_lower_case) {
        /* Rust's char::to_lowercase is the full mapping: U+0130 is the one
        ** character whose lower case is two (SpecialCasing.txt) */
        if (c == 0x0130) {
            low[0] = 'i';
            low[1] = 0x0307;
        } else {
            low[0] = utf8proc_tolower(c);
        }
    }
    for (int k = 0; k < 2 && low[k] >= 0; k++) {
        if (tt_hf_is_punct(low[k]))
            split_char(e, low[k], src);
        else
            word_char(e, low[k], src);
    }
}

static void normalised_char(enc *e, int32_t c, int64_t src)
{
    if (e->t->compat == TT_COMPAT_HF)
        hf_char(e, c, src);
    else
        torchtext_char(e, c, src);
}

/* The waiting combining marks, in canonical order (a stable sort by
** combining class, as NFD's canonical ordering). */
static void flush_pending(enc *e)
{
    int n = e->n_pend;
    if (n == 0)
        return;
    e->n_pend = 0;
    if (n > 1) {
        for (int i = 1; i < n; i++) {
            int32_t c = e->pend_cp[i];
            int64_t s = e->pend_src[i];
            int cc = utf8proc_get_property(c)->combining_class;
            int j = i - 1;
            while (j >= 0 && utf8proc_get_property(e->pend_cp[j])->combining_class > cc) {
                e->pend_cp[j + 1] = e->pend_cp[j];
                e->pend_src[j + 1] = e->pend_src[j];
                j--;
            }
            e->pend_cp[j + 1] = c;
            e->pend_src[j + 1] = s;
        }
    }
    for (int i = 0; i < n; i++)
        normalised_char(e, e->pend_cp[i], e->pend_src[i]);
}

/* A decoded input character when accents are stripped: NFD, one at a time. */
static void decomposed_char(enc *e, int32_t c, int64_t src)
{
    utf8proc_int32_t d[32];
    int last = 0;
    utf8proc_ssize_t n = utf8proc_decompose_char(c, d, 32, UTF8PROC_DECOMPOSE, &last);
    if (n <= 0 || n > 32) {
        d[0] = c;
        n = 1;
    }
    for (utf8proc_ssize_t i = 0; i < n; i++) {
        if (utf8proc_get_property(d[i])->combining_class != 0) {
            if (e->n_pend == TT_PENDING_MAX)
                flush_pending(e);   /* beyond NFD's stream-safe bound of 30 marks */
            e->pend_cp[e->n_pend] = d[i];
            e->pend_src[e->n_pend] = src;
            e->n_pend++;
        } else {
            flush_pending(e);
            normalised_char(e, d[i], src);
        }
    }
}

/* A decoded non-ASCII input character. */
static void input_char(enc *e, int32_t c, int64_t src)
{
    const tt_tokenizer *t = e->t;
    if (t->compat == TT_COMPAT_HF) {
        /* BertNormalizer: clean, then CJK padding, on the raw character */
        if (c == 0 || c == 0xFFFD || tt_hf_is_control(c))
            return;
        if (tt_hf_is_whitespace(c)) {
            flush_pending(e);
            end_word(e);
            return;
        }
        if (tt_hf_is_cjk(c)) {
            flush_pending(e);
            end_word(e);
            if (t->strip)
                decomposed_char(e, c, src);
            else
                hf_char(e, c, src);
            flush_pending(e);
            end_word(e);
            return;
        }
    }
    if (t->strip)
        decomposed_char(e, c, src);
    else
        normalised_char(e, c, src);
}

/* The byte offset of the first malformed UTF-8 sequence, or -1. */
static int64_t find_invalid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if ((w & UINT64_C(0x8080808080808080)) == 0) {
                i += 8;
                continue;
            }
        }
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

/* Decode the (valid) character at s[i]; returns its length. */
static inline size_t decode(const uint8_t *s, size_t i, size_t n, int32_t *c)
{
    if (s[i] < 0x80) {
        *c = s[i];
        return 1;
    }
    utf8proc_int32_t cp;
    utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
    *c = cp;
    return (size_t)k;
}

/* A never_split token (torchtext: a whole piece) equal to s[0..n)? */
static int is_never_split(const tt_tokenizer *t, const uint8_t *s, size_t n)
{
    for (int32_t k = 0; k < t->n_never_split; k++)
        if (t->never_split[k].len == n && memcmp(t->never_split[k].s, s, n) == 0)
            return 1;
    return 0;
}

/* The longest special token at s[i..n), or -1 (hf: leftmost-longest). */
static int32_t special_at(const tt_tokenizer *t, const uint8_t *s, size_t i, size_t n)
{
    int32_t best = -1;
    uint32_t best_len = 0;
    for (int32_t k = 0; k < t->n_never_split; k++) {
        const tt_special *sp = &t->never_split[k];
        if (sp->len > best_len && sp->len <= n - i && memcmp(sp->s, s + i, sp->len) == 0) {
            best = k;
            best_len = sp->len;
        }
    }
    return best;
}

static int64_t count_chars(const uint8_t *s, size_t n)
{
    int64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += (s[i] & 0xC0) != 0x80;
    return c;
}

loom_status tt_encode(const tt_tokenizer *t, const uint8_t *s, size_t n, tt_tokens *out, tt_error *err)
{
    if (n > (size_t)INT32_MAX) {
        /* character offsets are 32-bit within a word's bookkeeping */
        err->byte = INT32_MAX;
        err->what = "is longer than 2^31 - 1 bytes";
        return LOOM_EINVAL;
    }
    int64_t bad = find_invalid(s, n);
    if (bad >= 0) {
        err->byte = bad;
        err->what = "is not UTF-8 (a malformed, overlong, surrogate or truncated sequence)";
        return LOOM_EINVAL;
    }
    enc e = { .t = t, .tr = &t->trie, .out = out, .u = t->trie.root, .word_out = out->n };
    if (out->want_spans) {
        /* the longest word WordPiece takes, in bytes, plus room to see it is longer */
        int32_t need = t->max_chars * 4 + 8;
        if (out->cidx == NULL || out->cidx_cap < need) {
            int32_t *c = realloc(out->cidx, (size_t)need * sizeof *c);
            if (c == NULL)
                return LOOM_ENOMEM;
            out->cidx = c;
            out->cidx_cap = need;
        }
        e.cidx = out->cidx;
        e.cidx_cap = out->cidx_cap;
    }
    const int tt = t->compat == TT_COMPAT_TORCHTEXT;
    size_t i = 0, end = n;
    int64_t ci = 0;
    if (tt) {
        /* Python's text.strip() before the encoder */
        int32_t c;
        size_t k;
        while (i < end && (k = decode(s, i, end, &c)) > 0 && tt_py_isspace(c)) {
            i += k;
            ci++;
        }
        while (end > i) {
            size_t b = end - 1;
            while (b > i && (s[b] & 0xC0) == 0x80)
                b--;
            decode(s, b, end, &c);
            if (!tt_py_isspace(c))
                break;
            end = b;
        }
    }
    int piece_start = 1;
    while (i < end) {
        uint8_t b = s[i];
        if (tt) {
            if (b == ' ') {
                flush_pending(&e);
                end_word(&e);
                piece_start = 1;
                i++;
                ci++;
                continue;
            }
            if (piece_start) {
                piece_start = 0;
                e.ns = 0;
                if (t->n_never_split > 0) {
                    const uint8_t *sp = memchr(s + i, ' ', end - i);
                    e.ns = is_never_split(t, s + i, (sp != NULL ? (size_t)(sp - s) : end) - i);
                }
            }
            if (b == 0 && t->strip) {
                /* utf8proc_NFD reads a NUL-terminated string: the rest of
                ** the piece is lost */
                const uint8_t *sp = memchr(s + i, ' ', end - i);
                size_t stop = sp != NULL ? (size_t)(sp - s) : end;
                ci += count_chars(s + i, stop - i);
                i = stop;
                continue;
            }
        } else if (t->special_first[b]) {
            int32_t k = special_at(t, s, i, end);
            if (k >= 0) {
                const tt_special *sp = &t->never_split[k];
                int64_t nc = count_chars(s + i, sp->len);
                flush_pending(&e);
                end_word(&e);
                emit_id(&e, sp->id, ci, ci + nc);
                e.word_out = out->n;
                i += sp->len;
                ci += nc;
                continue;
            }
        }
        if (b < 0x80) {
            if (e.n_pend > 0)
                flush_pending(&e);
            const int ns = e.ns;
            switch (t->ascii_class[ns][b]) {
            case TT_CH_WORD:
                step(&e, t->ascii_lower[ns][b], ci);
                if (!tt && ++e.wchars > t->max_chars)
                    e.failed = 1;
                break;
            case TT_CH_SPACE:
                end_word(&e);
                break;
            case TT_CH_SPLIT:
                end_word(&e);
                step(&e, t->ascii_lower[ns][b], ci);
                e.wchars = 1;
                end_word(&e);
                break;
            default:
                break;
            }
            i++;
            ci++;
            continue;
        }
        int32_t c;
        size_t k = decode(s, i, end, &c);
        input_char(&e, c, ci);
        i += k;
        ci++;
    }
    flush_pending(&e);
    end_word(&e);
    return e.oom ? LOOM_ENOMEM : LOOM_OK;
}
