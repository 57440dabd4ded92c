/* SPDX-License-Identifier: BSD-3-Clause */
/*
** arpa_lm.h - an n-gram backoff language model read from an ARPA file,
** scored with KenLM's semantics (lm/ngram_query, lm::ngram::Model
** BaseScore), in log10.
**
** Storage (KenLM's "probing" layout): unigrams in two arrays indexed by word
** id; each higher order in an open-addressed table of 1.5x its count slots
** (a 64-bit hash of the word ids, the log10 probability and, below the
** highest order, the backoff: 16 bytes a slot, 12 at the highest). Words are kept once, in a string pool with its own hash
** index. As in KenLM the hash is not verified against the words: two
** n-grams of one order with the same 64-bit hash are refused at load as a
** duplicate (a chance of about n^2 / 2^65).
**
** Semantics (KenLM): word id 0 is <unk>; a word the model does not know
** scores as <unk>. A state holds the most recent words (newest first) that
** can still extend to a longer n-gram, with their backoffs. score() finds
** the longest n-gram ending in the new word that the model has, takes its
** probability, adds the backoffs of every longer context the state holds,
** and returns the new state. An n-gram "extends" when it has a non-zero
** backoff in the file or is the context of a longer n-gram; KenLM marks the
** others with a backoff of -0.0, and so does this model, so states are the
** same words as KenLM's.
**
** The parser is strict: every error names the line and the reason (counts
** that do not match the \data\ header, bad or positive log probabilities,
** non-finite backoffs, words of an n-gram that are not unigrams, an n-gram
** whose context is not in the model, duplicates, a missing \end\, missing
** <s> or </s>). A missing <unk> gets KenLM's log10 probability -100.
**
** The same model can be stored in loom's binary format and mapped back
** without parsing (ngram_binary.h); a KenLM binary file is refused.
*/
#ifndef LOOM_AUDIO_CTC_ARPA_LM_H
#define LOOM_AUDIO_CTC_ARPA_LM_H

#include <stddef.h>
#include <stdint.h>

/* KenLM's default KENLM_MAX_ORDER. */
#define CTC_LM_MAX_ORDER 6

typedef struct ctc_arpa_lm ctc_arpa_lm;

/* A context (KenLM's lm::ngram::State): words[0] is the newest. */
typedef struct ctc_lm_context {
    int32_t length;
    int32_t words[CTC_LM_MAX_ORDER - 1];
    float backoff[CTC_LM_MAX_ORDER - 1];
} ctc_lm_context;

enum { CTC_ARPA_OK = 0, CTC_ARPA_EFORMAT = -1, CTC_ARPA_ENOMEM = -2 };

/* Parse the n bytes of an ARPA file (not NUL-terminated). On an error,
** *out is NULL and err holds "line N: reason". */
int ctc_arpa_lm_load(const char *data, size_t n, ctc_arpa_lm **out, char *err, size_t err_size);
void ctc_arpa_lm_free(ctc_arpa_lm *lm);

int32_t ctc_arpa_lm_order(const ctc_arpa_lm *lm);
int32_t ctc_arpa_lm_vocab_size(const ctc_arpa_lm *lm);
int64_t ctc_arpa_lm_count(const ctc_arpa_lm *lm, int32_t order);   /* n-grams of that order */
/* The bytes the model holds (tables, pool, index). */
size_t ctc_arpa_lm_bytes(const ctc_arpa_lm *lm);
/* The id of a word, 0 (<unk>) when the model does not know it. */
int32_t ctc_arpa_lm_index(const ctc_arpa_lm *lm, const char *word, size_t len);
int32_t ctc_arpa_lm_bos(const ctc_arpa_lm *lm);
int32_t ctc_arpa_lm_eos(const ctc_arpa_lm *lm);
/* 0 for float probabilities, else the bits of orders 2 and up. */
int ctc_arpa_lm_quant_bits(const ctc_arpa_lm *lm);
/* 1 when the model views a mapped loom binary file (ngram_binary.h): it
** cannot be quantised, and ctc_arpa_lm_bytes counts the mapping. */
int ctc_arpa_lm_is_mapped(const ctc_arpa_lm *lm);

/* Quantise the probabilities and backoffs of orders 2 and up to `bits`
** (2..8) bits a value, an option for memory: per order and field, bins of
** equal count whose centres are their means (KenLM's quantiser's rule);
** the -0.0 / +0.0 backoffs stay exact, so states are unchanged; unigrams
** stay floats. Scores then differ from KenLM's by the quantisation error.
** 0, CTC_ARPA_EFORMAT for bits outside 2..8 or a mapped model, CTC_ARPA_ENOMEM. */
int ctc_arpa_lm_quantize(ctc_arpa_lm *lm, int bits);

/* KenLM's BeginSentenceWrite (<s>) and NullContextWrite (no context). */
void ctc_arpa_lm_begin(const ctc_arpa_lm *lm, ctc_lm_context *out);
void ctc_arpa_lm_null(ctc_lm_context *out);
/* KenLM's BaseScore: log10 p(word | in), and the context after it. word
** must be in [0, vocab_size); in and out may not alias. */
float ctc_arpa_lm_score(const ctc_arpa_lm *lm, const ctc_lm_context *in, int32_t word, ctc_lm_context *out);

#endif /* LOOM_AUDIO_CTC_ARPA_LM_H */
