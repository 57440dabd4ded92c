/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ngram_model.h - the in-memory layout of a ctc_arpa_lm (arpa_lm.h),
** shared by the ARPA parser and scorer (arpa_lm.c) and the binary format
** (ngram_binary.c), which stores these arrays as they are and maps them
** back. Private to the CTC module.
**
** A model either owns its arrays (parsed from ARPA: malloc'd, freed with
** it) or views them in a read-only file mapping (map != NULL: the arrays
** point into it, nothing may write them, and unmap releases the mapping
** when the model is freed).
*/
#ifndef LOOM_AUDIO_CTC_NGRAM_MODEL_H
#define LOOM_AUDIO_CTC_NGRAM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "arpa_lm.h"

/* One order's n-grams: open addressing over exactly 1.5x as many slots as
** n-grams (KenLM's probing multiplier), arrays per field so the highest
** order, which has no backoffs, takes 12 bytes a slot and the others 16. */
typedef struct ngram_table {
    uint64_t *keys;                /* 0: empty slot */
    float *prob, *backoff;         /* backoff NULL for the highest order; both NULL once quantised */
    uint8_t *qprob, *qbackoff;     /* quantised: codes into the centres */
    float prob_centre[256], backoff_centre[256];
    uint64_t n_slots;
    int64_t count;
} ngram_table;

struct ctc_arpa_lm {
    int32_t order;
    int32_t n_words, words_cap;
    char *pool;                    /* every word, NUL-terminated */
    size_t pool_len, pool_cap;
    uint32_t *word_off;            /* word i at pool + word_off[i] */
    uint32_t *vocab_slots;         /* id + 1, 0 empty */
    uint64_t vocab_mask;           /* slots - 1, a power of 2 less one */
    float *uni_prob, *uni_backoff;
    ngram_table tables[CTC_LM_MAX_ORDER + 1];   /* orders 2..order */
    int32_t bos, eos;
    int unk_seen;                  /* the file has a <unk> 1-gram */
    int quant_bits;                /* 0: float probabilities; else the bits of orders 2 and up */
    const void *map;               /* the file mapping the arrays view, or NULL */
    size_t map_size;
    void (*unmap)(const void *map, size_t map_size);
};

#endif /* LOOM_AUDIO_CTC_NGRAM_MODEL_H */
