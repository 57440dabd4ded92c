/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_beam.h - flashlight-text's CTC beam search (LexiconDecoder.cpp,
** LexiconFreeDecoder.cpp, Trie.cpp, Utils.h), as torchaudio's ctc_decoder
** drives it, with identical results.
**
** The model (ctc_model) is read-only once built and shared by any number
** of searches (ctc_search), one per thread or stream. Conventions kept
** from flashlight, each a trap for a re-implementation:
**  - an LM state is its path: the words scored since the start, a node of
**    a tree made as the search asks for children (flashlight's LMState
**    children and pointer compare), not the n-gram context; so two
**    hypotheses merge only when they scored the same words;
**  - the trie's look-ahead scores are the unigram scores of the words from
**    <s>, smeared up with MAX; the root's is taken as 0;
**  - scores are double, LM scores and the trie's floats (their
**    differences are taken in float, as flashlight does);
**  - a final step adds the LM's </s> and a silence token; in lexicon mode
**    only hypotheses at the trie root finish, when there is one;
**  - results hold T + 2 tokens (start, frames, end), reduced as
**    torchaudio does: repeats collapsed, blanks dropped, timesteps the
**    positions where a non-blank token starts (frame f at f + 1).
*/
#ifndef LOOM_AUDIO_CTC_BEAM_H
#define LOOM_AUDIO_CTC_BEAM_H

#include <stddef.h>
#include <stdint.h>

#include "arpa_lm.h"
#include "ctc_dict.h"

#define CTC_TRIE_MAX_LABEL 6      /* flashlight's kTrieMaxLabel */

typedef struct ctc_trie_node {
    int32_t first_child, n_children;             /* into ctc_trie.child_* */
    int32_t n_labels;
    int32_t labels[CTC_TRIE_MAX_LABEL];
    float scores[CTC_TRIE_MAX_LABEL];
    float max_score;
} ctc_trie_node;

typedef struct ctc_trie {
    ctc_trie_node *nodes;                         /* 0 is the root */
    int32_t n_nodes;
    int32_t *child_token, *child_node;
    int64_t dropped_labels;                       /* spellings past kTrieMaxLabel at one node */
} ctc_trie;

/* A custom LM (another pack's, through an interface): start, score and
** finish as torchaudio's CTCDecoderLM, on opaque states the LM owns.
** score and finish return the log score; *child is the LM's state id. */
typedef struct ctc_custom_lm {
    void *self;
    int (*start)(void *self, int start_with_nothing, uint64_t *state);
    int (*score)(void *self, uint64_t state, int32_t word, uint64_t *child, float *score);
    int (*finish)(void *self, uint64_t state, uint64_t *child, float *score);
} ctc_custom_lm;

enum { CTC_LM_ZERO = 0, CTC_LM_ARPA = 1, CTC_LM_CUSTOM = 2 };

typedef struct ctc_options {
    int32_t nbest, beam_size, beam_size_token;
    double beam_threshold, lm_weight, word_score, unk_score, sil_score;
    int log_add;
} ctc_options;

typedef struct ctc_model {
    ctc_options opt;
    ctc_dict tokens;
    int lexicon_mode;
    ctc_lexicon lexicon;
    ctc_dict lm_dict;                             /* the word dictionary when it is not the lexicon's */
    const ctc_dict *words;                        /* the word dictionary (NULL: none) */
    ctc_trie trie;
    int32_t blank, sil, unk;                      /* unk: a word id (lexicon mode) */
    int lm_kind;
    ctc_arpa_lm *arpa;                            /* owned */
    int32_t *usr_to_lm;                           /* word id -> the ARPA model's id */
    ctc_custom_lm custom;
} ctc_model;

/* Build the trie from the lexicon and the LM (torchaudio's
** _construct_trie). 0, or -1 out of memory. */
int ctc_model_build_trie(ctc_model *m);
void ctc_model_free(ctc_model *m);

typedef struct ctc_search ctc_search;

ctc_search *ctc_search_new(const ctc_model *m);
void ctc_search_free(ctc_search *s);
/* decode_begin, decode_step (T frames of N floats, row-major), decode_end.
** 0, -1 out of memory, -2 the custom LM failed. */
int ctc_search_begin(ctc_search *s);
int ctc_search_step(ctc_search *s, const float *emissions, int64_t T, int64_t N);
int ctc_search_end(ctc_search *s);
int64_t ctc_search_frames(const ctc_search *s);    /* frames decoded so far */

/* Hypotheses as torchaudio returns them, appended to growing arrays. */
typedef struct ctc_results {
    int64_t n_hyp, hyp_cap;
    double *score;
    int64_t *tok_off;                             /* [n_hyp + 1] into tokens / timesteps */
    int64_t *tokens, *timesteps;
    int64_t n_tok, tok_cap;
    int64_t *word_off;                            /* [n_hyp + 1] into words (bytes) */
    char *words;                                  /* space-separated words of each hypothesis */
    int64_t n_words_bytes, words_cap;
} ctc_results;

void ctc_results_init(ctc_results *r);
void ctc_results_free(ctc_results *r);
/* The final hypotheses (after end), the best nbest; 0 or -1 out of memory. */
int ctc_search_final(const ctc_search *s, ctc_results *out);
/* The best hypothesis so far (mid-stream): its path up to the last frame
** decoded, reduced as the final ones are (flashlight's getBestHypothesis
** with lookBack 0). 0, or -1 out of memory; no hypothesis when none. */
int ctc_search_best(const ctc_search *s, ctc_results *out);

#endif /* LOOM_AUDIO_CTC_BEAM_H */
