/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tokenizer.h - the internal contract of text.bert_tokenizer: the vocab,
** the WordPiece trie, the character classes of each compatibility mode and
** the fused encoder every caller of the module goes through.
**
** Pipeline of one string (tt_encode), one pass over its bytes:
**   torchtext mode (torchtext 0.18 BERTTokenizer, bert_tokenizer.cpp):
**     Python's str.strip(); split on ASCII ' ' into pieces; a piece equal to
**     a never_split token keeps its punctuation, case and marks; NFD when
**     stripping accents (do_lower_case, or strip_accents given at all); drop
**     NUL, U+FFFD and control characters; drop Mn when stripping; whitespace
**     ends a word; CJK and punctuation are words of their own; lower-case;
**     WordPiece with [UNK] for words over max_input_chars_per_word BYTES.
**   hf mode (tokenizers' BertWordPieceTokenizer: BertNormalizer,
**     BertPreTokenizer, WordPiece):
**     special tokens ([PAD] [UNK] [CLS] [SEP] [MASK] and never_split) are cut
**     out of the raw text first, leftmost-longest; then drop NUL, U+FFFD and
**     controls; White_Space ends a word; CJK are words of their own; NFD and
**     drop Mn when stripping accents (strip_accents, default do_lower_case);
**     full lower-case mapping; punctuation is a word of its own; WordPiece
**     with [UNK] for words over max_input_chars_per_word CHARACTERS.
** Both modes: a word WordPiece cannot cover entirely becomes one [UNK].
** Unicode data (categories, NFD, case, combining classes) is utf8proc's.
**
** WordPiece is LinMaxMatch (Song et al., "Fast WordPiece Tokenization",
** EMNLP 2021): a trie of the vocab with failure links and failure pops,
** built once at load, so a word of n bytes costs O(n) transitions; the
** result equals greedy longest-match-first (torchtext's _max_seg).
*/
#ifndef LOOM_TEXT_TOKENIZER_H
#define LOOM_TEXT_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"

#define TT_CLASS "text.bert_tokenizer"

/* ------------------------------------------------------------------ vocab */

/* The vocab: token strings in id order and a hash from string to id. */
typedef struct tt_vocab {
    int32_t n;                  /* tokens */
    char *bytes;                /* every token, each NUL-terminated */
    uint32_t *start, *len;      /* token i is bytes[start[i] .. start[i]+len[i]) */
    uint32_t *table;            /* open addressing: id + 1, 0 = empty */
    uint32_t mask;              /* table size - 1 */
} tt_vocab;

typedef enum tt_compat { TT_COMPAT_TORCHTEXT = 0, TT_COMPAT_HF = 1 } tt_compat;

/* Reads a vocab file: one token per line. torchtext: an empty line is the
** token "\n" and a line ends at '\n' only (a '\r' stays in the token); hf:
** trailing white space of each line is trimmed. A file that cannot be read,
** is empty, is not UTF-8 (naming the line and byte), holds a token twice
** (naming both lines: torchtext would drop the second silently and shift
** every later id) or has no unk_token is refused. */
loom_status tt_vocab_load(tt_vocab *v, const char *path, tt_compat compat, const char *unk_token);
void tt_vocab_free(tt_vocab *v);
/* Id of the token s[0..n), or -1. */
int32_t tt_vocab_find(const tt_vocab *v, const char *s, size_t n);

/* ------------------------------------------------------------------- trie */

/* The LinMaxMatch automaton. Two tries share one node array: the word-start
** trie (root) over every token's raw bytes, and the suffix trie (sroot) over
** the tokens that start with "##", without it. A node is a token when token
** >= 0. fail/pops are the paper's failure link f(v) and failure pops F(v):
** when byte c has no edge from v, emit the tokens F(v) (as nodes: their id
** is token[], their byte length depth[]) and continue from f(v); f(v) < 0
** means no segmentation exists (the word is [UNK]). */
typedef struct tt_trie {
    int32_t n_nodes;
    int32_t root, sroot;
    uint32_t *edge_begin;       /* [n_nodes + 1] into edges */
    uint32_t *edges;            /* (child << 8) | byte, sorted by byte within a node */
    int32_t *dense;             /* dense row of a node with many children, or -1 */
    int32_t *dense_rows;        /* [rows * 256] child or -1 */
    int32_t *token;             /* id of the node's token, or -1 */
    int32_t *depth;             /* bytes from its trie's root */
    int32_t *fail;              /* f(v), -1 = none */
    uint32_t *pops_begin;       /* F(v) is pops[pops_begin[v] .. + pops_n[v]) */
    uint32_t *pops_n;
    int32_t *pops;              /* nodes whose tokens F(v) emits, in order */
    size_t n_pops;
} tt_trie;

/* Tokens longer than max_token_bytes (the longest word WordPiece takes)
** are left out: they can never match. */
loom_status tt_trie_build(tt_trie *t, const tt_vocab *v, int32_t max_token_bytes);
void tt_trie_free(tt_trie *t);

static inline int32_t tt_trie_child(const tt_trie *t, int32_t u, uint8_t c)
{
    if (t->dense[u] >= 0)
        return t->dense_rows[(size_t)t->dense[u] * 256 + c];
    for (uint32_t e = t->edge_begin[u], end = t->edge_begin[u + 1]; e < end; e++) {
        uint32_t x = t->edges[e];
        if ((x & 0xFFu) == c)
            return (int32_t)(x >> 8);
        if ((x & 0xFFu) > c)
            break;
    }
    return -1;
}

/* ------------------------------------------------------- character classes */

/* What the normalizer does with one code point (after NFD when that runs). */
enum {
    TT_CH_WORD = 0,     /* part of a word */
    TT_CH_DROP = 1,     /* removed (NUL, U+FFFD, control, Mn when stripping) */
    TT_CH_SPACE = 2,    /* ends the word */
    TT_CH_SPLIT = 3,    /* a word of its own (punctuation, CJK) */
};

/* torchtext's _is_control, _is_whitespace, _is_punct_char, _is_chinese_char. */
int tt_torchtext_is_control(int32_t c);
int tt_torchtext_is_whitespace(int32_t c);
int tt_torchtext_is_punct(int32_t c);
int tt_torchtext_is_cjk(int32_t c);
/* tokenizers' BertNormalizer is_control / is_whitespace / is_chinese_char
** and BertPreTokenizer's is_bert_punc, on utf8proc's tables. */
int tt_hf_is_control(int32_t c);
int tt_hf_is_whitespace(int32_t c);
int tt_hf_is_punct(int32_t c);
int tt_hf_is_cjk(int32_t c);
/* Python's str.isspace (what torchtext's text.strip() removes). */
int tt_py_isspace(int32_t c);

/* ----------------------------------------------------------------- object */

/* A special token cut out of the raw text first (hf mode). */
typedef struct tt_special {
    const char *s;
    uint32_t len;
    int32_t id;
} tt_special;

typedef struct tt_tokenizer {
    tt_vocab vocab;
    tt_trie trie;
    tt_compat compat;
    int do_lower_case;
    int strip;                  /* NFD and drop Mn */
    int return_tokens;
    int32_t max_chars;          /* max_input_chars_per_word */
    int32_t unk_id, cls_id, sep_id, pad_id;     /* cls/sep/pad: -1 when not in the vocab */
    /* never_split (torchtext: whole pieces) or the special tokens (hf) */
    tt_special *never_split;
    int32_t n_never_split;
    char *never_split_bytes;
    uint8_t special_first[256]; /* hf: 1 for a byte a special token starts with */
    /* per ASCII byte: the TT_CH_* class and the byte after lower-casing, for
    ** ordinary pieces [0] and never_split pieces [1] (torchtext) */
    uint8_t ascii_class[2][128];
    uint8_t ascii_lower[2][128];
} tt_tokenizer;

/* The growable result of encoding: token ids and, when spans is set, the
** [start, end) character offsets of each token in its input string. */
typedef struct tt_tokens {
    int64_t *ids;
    int64_t *spans;             /* 2 per token, or NULL */
    size_t n, cap;
    int want_spans;
    int32_t *cidx;              /* encoder scratch: input character of each byte of a word */
    int32_t cidx_cap;
} tt_tokens;

/* An error of one string: its byte offset and what is wrong there. */
typedef struct tt_error {
    int64_t byte;
    const char *what;
} tt_error;

/* Appends the WordPiece ids of s[0..n) to out. Returns LOOM_OK; LOOM_EINVAL
** with *err filled when s is not UTF-8; LOOM_ENOMEM. Thread-safe: t is
** only read. */
loom_status tt_encode(const tt_tokenizer *t, const uint8_t *s, size_t n, tt_tokens *out, tt_error *err);
/* Makes room for `more` tokens; LOOM_ENOMEM when that fails. */
loom_status tt_tokens_reserve(tt_tokens *o, size_t more);
void tt_tokens_free(tt_tokens *o);

/* The object class (tokenizer_object.c). */
extern const loom_object_class tt_bert_tokenizer_class;

#endif /* LOOM_TEXT_TOKENIZER_H */
