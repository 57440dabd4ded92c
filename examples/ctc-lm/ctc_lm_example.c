/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_lm_example.c - a third-party pack that offers a language model to
** the audio pack's CTC decoder through loom/ctc_lm.h: interface
** "example.ctc_lm", version LOOM_CTC_LM_VERSION. Decode with it by naming
** it: audio.ctc_decoder lm=example.ctc_lm.
**
** The model is a toy: every word w costs -0.1 * (1 + w % 7) (log10),
** the end of a sentence -0.5 (or what lm_options says: "end=-0.25").
** Its states are histories, each its own 64-bit handle (a hash of the
** parent's handle and the word), as torchaudio's CTCDecoderLMState.child
** makes one state per history; so the decoder merges hypotheses exactly
** when they said the same words.
**
** Built like examples/oppack: only loom's headers (pkg-config loom-plugin),
** hidden visibility, loom_plugin_entry exported alone.
*/
#include <stdlib.h>
#include <string.h>

#include "loom/ctc_lm.h"
#include "loom/plugin.h"

static const loom_host_api *host;

typedef struct toy_lm {
    int32_t n_words;
    float end_score;
} toy_lm;

static uint64_t mix(uint64_t h, int64_t word)
{
    uint64_t x = h ^ ((uint64_t)(word + 2) * UINT64_C(0x9e3779b97f4a7c15));
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static loom_status toy_create(const char *const *words, int32_t n_words, const char *options, void **out)
{
    (void)words;
    toy_lm *lm = calloc(1, sizeof *lm);
    if (lm == NULL)
        return host->fail(LOOM_ENOMEM, "example.ctc_lm: out of memory");
    lm->n_words = n_words;
    lm->end_score = -0.5f;
    if (options != NULL && strncmp(options, "end=", 4) == 0) {
        char *end;
        lm->end_score = strtof(options + 4, &end);
        if (end == options + 4 || *end != '\0' || !(lm->end_score <= 0.0f)) {
            free(lm);
            return host->fail(LOOM_EINVAL, "example.ctc_lm: lm_options '%s': end= takes a log score <= 0", options);
        }
    } else if (options != NULL && options[0] != '\0') {
        free(lm);
        return host->fail(LOOM_EINVAL, "example.ctc_lm: lm_options '%s' is not end=<score>", options);
    }
    *out = lm;
    return LOOM_OK;
}

static void toy_destroy(void *lm) { free(lm); }

static loom_status toy_start(void *lm, int32_t start_with_nothing, uint64_t *state)
{
    (void)lm;
    *state = start_with_nothing ? 1 : 2;
    return LOOM_OK;
}

static loom_status toy_score(void *self, uint64_t state, int32_t word, uint64_t *next, float *score)
{
    const toy_lm *lm = self;
    if (word < 0 || word >= lm->n_words)
        return host->fail(LOOM_EINVAL, "example.ctc_lm: word %d is outside the %d words", word, lm->n_words);
    *next = mix(state, word);
    *score = -0.1f * (float)(1 + word % 7);
    return LOOM_OK;
}

static loom_status toy_finish(void *self, uint64_t state, uint64_t *next, float *score)
{
    const toy_lm *lm = self;
    *next = mix(state, -1);
    *score = lm->end_score;
    return LOOM_OK;
}

static const loom_ctc_lm_v1 toy_vtable = {
    .struct_size = sizeof(loom_ctc_lm_v1),
    .create = toy_create,
    .destroy = toy_destroy,
    .start = toy_start,
    .score = toy_score,
    .finish = toy_finish,
};

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    host = h;
    if (!LOOM_HAS_MEMBER(h, loom_host_api, register_interface))
        return h->fail(LOOM_EABI, "example.ctc_lm needs ABI 1.1 (register_interface)");
    return h->register_interface(reg, "example.ctc_lm", LOOM_CTC_LM_VERSION, &toy_vtable);
}

LOOM_PLUGIN_DEFINE("ctclm-example", "1.0", "a toy language model for audio.ctc_decoder (interface example.ctc_lm)",
                   init, NULL)
