/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_dict.h - the dictionaries and the lexicon of the CTC decoder, read as
** flashlight-text reads them (dictionary/Dictionary.cpp, Utils.cpp
** loadWords):
**   tokens   one index per non-empty line; every whitespace-separated entry
**            of a line maps to that index, the first names it; an entry
**            that appears twice is an error
**   words    (lm_dict) the same format
**   lexicon  "word tok tok ..." per line (whitespace-split, at least one
**            token); repeated lines add spellings; <unk> is appended with
**            no spelling, as loadWords does
** Every error names the line and the reason.
*/
#ifndef LOOM_AUDIO_CTC_DICT_H
#define LOOM_AUDIO_CTC_DICT_H

#include <stddef.h>
#include <stdint.h>

/* Strings to indices (several strings may share one index) and indices to
** their first string. */
typedef struct ctc_dict {
    char *pool;
    size_t pool_len, pool_cap;
    uint32_t *entry_off;           /* entry e's string at pool + entry_off[e] */
    int32_t *entry_index;          /* entry e's index */
    int32_t n_entries, entries_cap;
    int32_t *slots;                /* open addressing: entry + 1, 0 empty */
    uint64_t mask;
    int32_t *name_entry;           /* index i's first entry */
    int32_t n_index, index_cap;
} ctc_dict;

void ctc_dict_init(ctc_dict *d);
void ctc_dict_free(ctc_dict *d);
/* The index of a string, or -1. */
int32_t ctc_dict_find(const ctc_dict *d, const char *s, size_t n);
/* Add s with index `index` (-1: the next free index). Returns the index,
** -1 when s is already there, -2 out of memory. */
int32_t ctc_dict_add(ctc_dict *d, const char *s, size_t n, int32_t index);
const char *ctc_dict_name(const ctc_dict *d, int32_t index);
static inline int32_t ctc_dict_size(const ctc_dict *d) { return d->n_index; }

enum { CTC_PARSE_OK = 0, CTC_PARSE_EFORMAT = -1, CTC_PARSE_ENOMEM = -2 };

/* A tokens or lm_dict file (bytes, not NUL-terminated). err: "line N: why". */
int ctc_dict_parse(ctc_dict *d, const char *data, size_t n, char *err, size_t err_size);
/* Tokens given as one string, entries separated by whitespace, one index
** each (torchaudio's list of tokens). */
int ctc_dict_parse_list(ctc_dict *d, const char *list, char *err, size_t err_size);

/* The lexicon: words in file order (their first line), each with its
** spellings as token indices. */
typedef struct ctc_lexicon {
    ctc_dict words;                /* the lexicon's words, then <unk> */
    int32_t *spell_word;           /* spelling s belongs to word spell_word[s] */
    int64_t *spell_off;            /* its tokens: tokens[spell_off[s] .. spell_off[s+1]) */
    int32_t *tokens;
    int64_t n_spell, spell_cap, n_tokens, tokens_cap;
} ctc_lexicon;

void ctc_lexicon_free(ctc_lexicon *lx);
/* Parse a lexicon file; every token must be in `tokens` (flashlight:
** "Unknown entry in dictionary"). */
int ctc_lexicon_parse(ctc_lexicon *lx, const ctc_dict *tokens, const char *data, size_t n, char *err,
                      size_t err_size);

#endif /* LOOM_AUDIO_CTC_DICT_H */
