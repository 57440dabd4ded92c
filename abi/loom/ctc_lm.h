/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loom/ctc_lm.h - the interface through which a pack offers a language
** model to the audio pack's CTC decoder (audio.ctc_decoder, lm=<name>):
** torchaudio's CTCDecoderLM (start, score, finish) as a size-prefixed,
** append-only vtable. A pack registers it in its init:
**
**   static const loom_ctc_lm_v1 my_lm = { .struct_size = sizeof my_lm, .create = ..., ... };
**   host->register_interface(reg, "mypack.my_lm", LOOM_CTC_LM_VERSION, &my_lm);
**
** and a decoder made with lm=mypack.my_lm finds it by that name and
** version (host->get_extension) when it is created.
**
** Contract:
**  - create makes one model instance for one decoder, for its word list:
**    the lexicon's words in order (then <unk>), or lm_dict's, or for
**    lexicon-free decoding the tokens; `word` arguments index that list.
**    options is the decoder's lm_options attribute ("" when unset).
**  - States are the model's 64-bit handles, valid until destroy. Two equal
**    handles are one state: the decoder merges hypotheses whose states are
**    equal (flashlight compares its LMState pointers the same way), so a
**    model that returns one handle per history (as torchaudio's
**    CTCDecoderLMState.child does) merges nothing it should not.
**  - score and finish return log scores (KenLM's are log10; the decoder's
**    lm_weight scales them). The decoder calls them from one thread at a
**    time for a given instance, and caches each (state, word) result.
**  - Every function returns LOOM_OK or fails through host->fail.
*/
#ifndef LOOM_CTC_LM_H
#define LOOM_CTC_LM_H

#include <stdint.h>

#include "loom/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LOOM_CTC_LM_VERSION 1u

typedef struct loom_ctc_lm_v1 {
    uint32_t struct_size;
    loom_status (*create)(const char *const *words, int32_t n_words, const char *options, void **lm);
    void (*destroy)(void *lm);
    /* torchaudio's start(start_with_nothing): the decoder passes 0 (a sentence start) */
    loom_status (*start)(void *lm, int32_t start_with_nothing, uint64_t *state);
    loom_status (*score)(void *lm, uint64_t state, int32_t word, uint64_t *next, float *score);
    /* the end of the sentence */
    loom_status (*finish)(void *lm, uint64_t state, uint64_t *next, float *score);
} loom_ctc_lm_v1;

#ifdef __cplusplus
}
#endif

#endif /* LOOM_CTC_LM_H */
