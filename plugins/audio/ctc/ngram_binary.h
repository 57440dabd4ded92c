/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ngram_binary.h - loom's binary n-gram format: a ctc_arpa_lm's arrays
** (ngram_model.h) as they lie in memory, mapped back without parsing.
**
** KenLM's own binary files (build_binary's probing and trie layouts) are
** not read: they are made by KenLM's C++ tools, which Debian does not
** package and the kenlm Python module cannot write, and their layout is an
** implementation detail of one KenLM version. A loom binary is made from the
** ARPA file instead (`loom ctc-lm convert in.arpa out.bin [--quantize B]`,
** the audio.ctc_lm_save method), and is read wherever lm= takes a model,
** recognised by its magic, not its name.
**
** The file, every field in the writer's byte order (the header says which;
** a file of the other order is refused):
**   header (ngram_bin_header, 256 bytes)
**   sections, each starting at a multiple of 64 bytes, zero padding between
**   and after the last (n_slots[n] = counts[n] * 1.5 + 1, as the parser
**   sizes its tables, rounded down):
**     word_off  u32[n_words]        word i's string at pool + word_off[i]
**     pool      char[pool_len]      the words, each NUL-terminated
**     vocab     u32[vocab_slots]    word hash index: id + 1, 0 empty
**     uni_prob  f32[n_words]        log10 p of the 1-grams
**     uni_bo    f32[n_words]        their backoffs (-0.0: no extension)
**     then for each order n = 2..order:
**       keys    u64[n_slots[n]]     the n-gram hashes (0: empty slot)
**       floats (quant_bits 0):  prob f32[n_slots], and below the highest
**                               order backoff f32[n_slots]
**       quantised (2..8 bits):  centres f32[512] (256 of the probabilities,
**                               256 of the backoffs), qprob u8[n_slots], and
**                               below the highest order qbackoff u8[n_slots]
** file_size is the sum of all that, checksum the ngram_bin_checksum of the
** bytes after the header. A load checks, before any array is used: the
** magic, version, byte order, header size, order (1..6), quant_bits, that
** the counts give exactly file_size bytes and that it is the file's size,
** the checksum, and then what the scorer relies on to stay in bounds and to
** end its probes (every vocab entry at most n_words with exactly n_words
** used and an empty one, word offsets inside the pool, a NUL-terminated
** pool, <s> and </s> known, each table with exactly count keys and an
** empty slot). A file that fails says which check and is never used.
*/
#ifndef LOOM_AUDIO_CTC_NGRAM_BINARY_H
#define LOOM_AUDIO_CTC_NGRAM_BINARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arpa_lm.h"

#define NGRAM_BIN_MAGIC "loom n-gram lm\n"      /* 15 bytes + NUL: 16 */
#define NGRAM_BIN_VERSION 1u
#define NGRAM_BIN_BYTE_ORDER 0x01020304u         /* as the writer stores it */
#define NGRAM_BIN_ALIGN 64

typedef struct ngram_bin_header {
    char magic[16];
    uint32_t version;
    uint32_t byte_order;
    uint32_t header_size;                      /* sizeof(ngram_bin_header) */
    int32_t order;
    int32_t n_words;                           /* 1-grams, <unk> (id 0) included */
    int32_t bos, eos;
    int32_t quant_bits;                        /* 0: floats; 2..8 */
    int32_t unk_seen;                          /* the ARPA file had a <unk> 1-gram */
    int32_t reserved0;
    uint64_t pool_len;
    uint64_t vocab_slots;                      /* a power of 2 */
    int64_t counts[CTC_LM_MAX_ORDER + 1];      /* n-grams of orders 2..order */
    uint64_t n_slots[CTC_LM_MAX_ORDER + 1];    /* their table slots */
    uint64_t file_size;
    uint64_t checksum;
    uint8_t reserved[56];                      /* zero */
} ngram_bin_header;

_Static_assert(sizeof(ngram_bin_header) == 256, "the header is 256 bytes");

/* The checksum of n bytes (n a multiple of 32, data 8-byte aligned): four
** lanes of 64-bit words, each rotated, xored and multiplied, then mixed. It
** finds damage, not forgery; a forged file still passes every bound check
** above before it is used. */
static inline uint64_t ngram_bin_checksum(const void *data, size_t n)
{
    const uint64_t *w = data;
    uint64_t h[4] = { UINT64_C(0x243f6a8885a308d3), UINT64_C(0x13198a2e03707344), UINT64_C(0xa4093822299f31d0),
                      UINT64_C(0x082efa98ec4e6c89) };
    for (size_t i = 0; i + 4 <= n / 8; i += 4)
        for (int k = 0; k < 4; k++) {
            const uint64_t x = h[k] ^ w[i + (size_t)k];
            h[k] = ((x << 29) | (x >> 35)) * UINT64_C(0x9e3779b97f4a7c15);
        }
    uint64_t r = (uint64_t)n;
    for (int k = 0; k < 4; k++) {
        r ^= h[k];
        r = ((r << 31) | (r >> 33)) * UINT64_C(0xbf58476d1ce4e5b9);
    }
    return r ^ (r >> 29);
}

/* 1 when the n bytes start as a loom binary model. */
int ctc_ngram_binary_is(const void *data, size_t n);

/* A model viewing the n bytes of a loom binary file (8-byte aligned, as a
** mapping is): checked as above, nothing copied but the quantisation
** centres. The bytes must outlive the model; ctc_ngram_binary_adopt hands
** it the mapping to release. On an error *out is NULL and err holds the
** reason. CTC_ARPA_OK, CTC_ARPA_EFORMAT or CTC_ARPA_ENOMEM. */
int ctc_ngram_binary_view(const void *data, size_t n, ctc_arpa_lm **out, char *err, size_t err_size);
/* The model releases the mapping it views with unmap when it is freed. */
void ctc_ngram_binary_adopt(ctc_arpa_lm *lm, void (*unmap)(const void *map, size_t map_size));

/* Write the model in the binary format to f (at its start: the header is
** written last, once the checksum is known). 0, or -1 with errno set. */
int ctc_ngram_binary_write(const ctc_arpa_lm *lm, FILE *f);

#endif /* LOOM_AUDIO_CTC_NGRAM_BINARY_H */
