/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ngram_binary.c - loom's binary n-gram format (ngram_binary.h): the
** layout both sides compute from the header, the checked view of a mapped
** file and the writer.
*/
#include "ngram_binary.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ngram_model.h"

/* Where each array lies, from the start of the file. */
typedef struct bin_layout {
    uint64_t word_off, pool, vocab, uni_prob, uni_bo;
    uint64_t keys[CTC_LM_MAX_ORDER + 1], prob[CTC_LM_MAX_ORDER + 1], backoff[CTC_LM_MAX_ORDER + 1];
    uint64_t centres[CTC_LM_MAX_ORDER + 1];     /* quantised only */
    uint64_t size;                             /* the file's size */
} bin_layout;

/* Append a section of n elements of `size` bytes at the next multiple of
** NGRAM_BIN_ALIGN; 0 when the sum passes `limit` (the bytes there are). */
static int place(uint64_t *at, uint64_t *cursor, uint64_t n, uint64_t size, uint64_t limit)
{
    if (n > limit / size)
        return 0;
    const uint64_t start = (*cursor + NGRAM_BIN_ALIGN - 1) / NGRAM_BIN_ALIGN * NGRAM_BIN_ALIGN;
    if (start > limit || n * size > limit - start)
        return 0;
    *at = start;
    *cursor = start + n * size;
    return 1;
}

/* The sections of the header's model; 0 when they need more than limit bytes. */
static int layout(const ngram_bin_header *h, bin_layout *l, uint64_t limit)
{
    uint64_t c = sizeof *h;
    const uint64_t nw = (uint64_t)h->n_words;
    int ok = place(&l->word_off, &c, nw, 4, limit) && place(&l->pool, &c, h->pool_len, 1, limit)
             && place(&l->vocab, &c, h->vocab_slots, 4, limit) && place(&l->uni_prob, &c, nw, 4, limit)
             && place(&l->uni_bo, &c, nw, 4, limit);
    for (int32_t n = 2; ok && n <= h->order; n++) {
        const uint64_t s = h->n_slots[n];
        const int with_backoff = n < h->order;
        ok = place(&l->keys[n], &c, s, 8, limit);
        if (ok && h->quant_bits == 0) {
            ok = place(&l->prob[n], &c, s, 4, limit) && (!with_backoff || place(&l->backoff[n], &c, s, 4, limit));
        } else if (ok) {
            ok = place(&l->centres[n], &c, 512, 4, limit) && place(&l->prob[n], &c, s, 1, limit)
                 && (!with_backoff || place(&l->backoff[n], &c, s, 1, limit));
        }
    }
    if (!ok)
        return 0;
    l->size = (c + NGRAM_BIN_ALIGN - 1) / NGRAM_BIN_ALIGN * NGRAM_BIN_ALIGN;
    return l->size <= limit;
}

int ctc_ngram_binary_is(const void *data, size_t n)
{
    return n >= 16 && memcmp(data, NGRAM_BIN_MAGIC, 16) == 0;
}

static int bad(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t err_size, const char *fmt, ...)
{
    int k = snprintf(err, err_size, "loom binary n-gram model: ");
    if (k >= 0 && (size_t)k < err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + k, err_size - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return CTC_ARPA_EFORMAT;
}

/* The header's own fields, before any size is computed from them. */
static int check_header(const ngram_bin_header *h, size_t n, char *err, size_t es)
{
    if (h->byte_order != NGRAM_BIN_BYTE_ORDER)
        return bad(err, es, "written on a machine of the other byte order (marker 0x%08x): convert the ARPA "
                   "file here", (unsigned)h->byte_order);
    if (h->version != NGRAM_BIN_VERSION)
        return bad(err, es, "format version %u, this build reads version %u: convert the ARPA file again",
                   (unsigned)h->version, NGRAM_BIN_VERSION);
    if (h->header_size != sizeof *h)
        return bad(err, es, "header size %u, expected %zu", (unsigned)h->header_size, sizeof *h);
    if (h->file_size != n)
        return bad(err, es, "the header says %llu bytes, the file has %zu: truncated or padded",
                   (unsigned long long)h->file_size, n);
    if (h->order < 1 || h->order > CTC_LM_MAX_ORDER)
        return bad(err, es, "order %d is outside 1..%d", (int)h->order, CTC_LM_MAX_ORDER);
    if (h->quant_bits != 0 && (h->quant_bits < 2 || h->quant_bits > 8))
        return bad(err, es, "quantisation of %d bits: 0 (floats) or 2..8", (int)h->quant_bits);
    if (h->n_words < 3 || h->pool_len < 1)
        return bad(err, es, "%d words in a pool of %llu bytes: at least <unk>, <s> and </s>", (int)h->n_words,
                   (unsigned long long)h->pool_len);
    if (h->pool_len > UINT32_MAX)
        return bad(err, es, "a word pool of %llu bytes, over the 4 GiB its offsets reach",
                   (unsigned long long)h->pool_len);
    if (h->vocab_slots <= (uint64_t)h->n_words || (h->vocab_slots & (h->vocab_slots - 1)) != 0)
        return bad(err, es, "the vocabulary index has %llu slots: a power of 2 above the %d words",
                   (unsigned long long)h->vocab_slots, (int)h->n_words);
    if (h->bos <= 0 || h->bos >= h->n_words || h->eos <= 0 || h->eos >= h->n_words || h->bos == h->eos)
        return bad(err, es, "<s> (%d) and </s> (%d) must be two words of the %d", (int)h->bos, (int)h->eos,
                   (int)h->n_words);
    for (int32_t k = 2; k <= h->order; k++) {
        /* the writer's rule (ngram_model.h): 1.5x the count, plus one, so a probe always meets an empty slot */
        const uint64_t c = h->counts[k] < 0 ? 0 : (uint64_t)h->counts[k];
        if (c < 1 || c > n / 8 || h->n_slots[k] != c + c / 2 + 1)
            return bad(err, es, "order %d: %lld n-grams in %llu slots, where the format has 1.5 times the count "
                       "plus one: its sizes lie", k, (long long)h->counts[k], (unsigned long long)h->n_slots[k]);
    }
    return CTC_ARPA_OK;
}

/* Backoffs are finite numbers; log-probabilities may also be -inf (the
** ARPA reader takes it: a word the model never predicts), never NaN or +inf. */
static int all_finite(const float *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

static int all_log_probs(const float *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (isnan(v[i]) || v[i] == INFINITY)
            return 0;
    return 1;
}

/* What scoring and lookups rely on: the probes end, ids and offsets stay
** inside, no score can become NaN. */
static int check_arrays(const ctc_arpa_lm *lm, char *err, size_t es)
{
    if (lm->pool[lm->pool_len - 1] != '\0')
        return bad(err, es, "the word pool does not end with a NUL byte");
    for (int32_t i = 0; i < lm->n_words; i++)
        if (lm->word_off[i] >= lm->pool_len)
            return bad(err, es, "word %d starts at %u, past the %zu bytes of the pool", i, lm->word_off[i],
                       lm->pool_len);
    uint64_t used = 0;
    for (uint64_t i = 0; i <= lm->vocab_mask; i++) {
        if (lm->vocab_slots[i] > (uint32_t)lm->n_words)
            return bad(err, es, "vocabulary slot %llu holds id %u of %d words", (unsigned long long)i,
                       lm->vocab_slots[i] - 1, lm->n_words);
        used += lm->vocab_slots[i] != 0;
    }
    if (used != (uint64_t)lm->n_words)
        return bad(err, es, "the vocabulary index holds %llu words, the header says %d", (unsigned long long)used,
                   lm->n_words);
    /* scores are sums of these: a NaN or infinite value would poison every score */
    if (!all_log_probs(lm->uni_prob, (uint64_t)lm->n_words) || !all_finite(lm->uni_backoff, (uint64_t)lm->n_words))
        return bad(err, es, "a unigram log-probability or backoff is not a finite number");
    for (int32_t n = 2; n <= lm->order; n++) {
        const ngram_table *t = &lm->tables[n];
        const int fin = lm->quant_bits == 0
                            ? all_log_probs(t->prob, t->n_slots) && (t->backoff == NULL || all_finite(t->backoff, t->n_slots))
                            : all_log_probs(t->prob_centre, sizeof t->prob_centre / sizeof t->prob_centre[0])
                                  && all_finite(t->backoff_centre, sizeof t->backoff_centre / sizeof t->backoff_centre[0]);
        if (!fin)
            return bad(err, es, "a %d-gram log-probability or backoff is not a finite number", n);
    }
    for (int32_t n = 2; n <= lm->order; n++) {
        const ngram_table *t = &lm->tables[n];
        uint64_t keys = 0;
        for (uint64_t s = 0; s < t->n_slots; s++)
            keys += t->keys[s] != 0;
        if (keys != (uint64_t)t->count)
            return bad(err, es, "the %d-gram table holds %llu n-grams, the header says %lld", n,
                       (unsigned long long)keys, (long long)t->count);
    }
    return CTC_ARPA_OK;
}

int ctc_ngram_binary_view(const void *data, size_t n, ctc_arpa_lm **out, char *err, size_t es)
{
    *out = NULL;
    if (es > 0)
        err[0] = '\0';
    ngram_bin_header h;
    if (!ctc_ngram_binary_is(data, n))
        return bad(err, es, "no magic '%s' at the start", "loom n-gram lm");
    if (n < sizeof h)
        return bad(err, es, "%zu bytes, shorter than the %zu of the header: truncated", n, sizeof h);
    if (((uintptr_t)data & 7) != 0)
        return bad(err, es, "the bytes are not 8-byte aligned (map the file)");
    memcpy(&h, data, sizeof h);
    int st = check_header(&h, n, err, es);
    if (st != CTC_ARPA_OK)
        return st;
    bin_layout l;
    if (!layout(&h, &l, n) || l.size != n)
        return bad(err, es, "the counts in the header need %s bytes, the file has %zu: its sizes lie",
                   layout(&h, &l, UINT64_MAX) ? "another number of" : "more", n);
    const uint64_t sum = ngram_bin_checksum((const char *)data + sizeof h, n - sizeof h);
    if (sum != h.checksum)
        return bad(err, es, "checksum %016llx, the header says %016llx: the file is damaged",
                   (unsigned long long)sum, (unsigned long long)h.checksum);
    ctc_arpa_lm *lm = calloc(1, sizeof *lm);
    if (lm == NULL)
        return CTC_ARPA_ENOMEM;
    /* views of read-only bytes: the model is never written once mapped (quantize refuses it) */
    char *base = (char *)(uintptr_t)data;
    lm->order = h.order;
    lm->n_words = lm->words_cap = h.n_words;
    lm->pool = base + l.pool;
    lm->pool_len = lm->pool_cap = (size_t)h.pool_len;
    lm->word_off = (uint32_t *)(void *)(base + l.word_off);
    lm->vocab_slots = (uint32_t *)(void *)(base + l.vocab);
    lm->vocab_mask = h.vocab_slots - 1;
    lm->uni_prob = (float *)(void *)(base + l.uni_prob);
    lm->uni_backoff = (float *)(void *)(base + l.uni_bo);
    lm->bos = h.bos;
    lm->eos = h.eos;
    lm->unk_seen = h.unk_seen;
    lm->quant_bits = h.quant_bits;
    for (int32_t k = 2; k <= h.order; k++) {
        ngram_table *t = &lm->tables[k];
        t->n_slots = h.n_slots[k];
        t->count = h.counts[k];
        t->keys = (uint64_t *)(void *)(base + l.keys[k]);
        if (h.quant_bits == 0) {
            t->prob = (float *)(void *)(base + l.prob[k]);
            t->backoff = k < h.order ? (float *)(void *)(base + l.backoff[k]) : NULL;
        } else {
            memcpy(t->prob_centre, base + l.centres[k], sizeof t->prob_centre);
            memcpy(t->backoff_centre, base + l.centres[k] + sizeof t->prob_centre, sizeof t->backoff_centre);
            t->qprob = (uint8_t *)(base + l.prob[k]);
            t->qbackoff = k < h.order ? (uint8_t *)(base + l.backoff[k]) : NULL;
        }
    }
    lm->map = data;
    lm->map_size = n;
    st = check_arrays(lm, err, es);
    if (st != CTC_ARPA_OK) {
        free(lm);
        return st;
    }
    *out = lm;
    return CTC_ARPA_OK;
}

void ctc_ngram_binary_adopt(ctc_arpa_lm *lm, void (*unmap)(const void *map, size_t map_size))
{
    lm->unmap = unmap;
}

/* The file is assembled in memory (it is the size of the model) so that
** the checksum is known before the header is written: one fwrite, no seek. */
int ctc_ngram_binary_write(const ctc_arpa_lm *lm, FILE *f)
{
    ngram_bin_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, NGRAM_BIN_MAGIC, 16);
    h.version = NGRAM_BIN_VERSION;
    h.byte_order = NGRAM_BIN_BYTE_ORDER;
    h.header_size = sizeof h;
    h.order = lm->order;
    h.n_words = lm->n_words;
    h.bos = lm->bos;
    h.eos = lm->eos;
    h.quant_bits = lm->quant_bits;
    h.unk_seen = lm->unk_seen;
    h.pool_len = lm->pool_len;
    h.vocab_slots = lm->vocab_mask + 1;
    for (int32_t k = 2; k <= lm->order; k++) {
        h.counts[k] = lm->tables[k].count;
        h.n_slots[k] = lm->tables[k].n_slots;
    }
    bin_layout l;
    if (!layout(&h, &l, SIZE_MAX)) {
        errno = EFBIG;
        return -1;
    }
    h.file_size = l.size;
    char *buf = calloc(1, (size_t)l.size);
    if (buf == NULL) {
        errno = ENOMEM;
        return -1;
    }
    const size_t nw = (size_t)lm->n_words;
    memcpy(buf + l.word_off, lm->word_off, nw * 4);
    memcpy(buf + l.pool, lm->pool, lm->pool_len);
    memcpy(buf + l.vocab, lm->vocab_slots, (size_t)h.vocab_slots * 4);
    memcpy(buf + l.uni_prob, lm->uni_prob, nw * 4);
    memcpy(buf + l.uni_bo, lm->uni_backoff, nw * 4);
    for (int32_t k = 2; k <= lm->order; k++) {
        const ngram_table *t = &lm->tables[k];
        const size_t s = (size_t)t->n_slots;
        memcpy(buf + l.keys[k], t->keys, s * 8);
        if (lm->quant_bits == 0) {
            memcpy(buf + l.prob[k], t->prob, s * 4);
            if (k < lm->order)
                memcpy(buf + l.backoff[k], t->backoff, s * 4);
        } else {
            memcpy(buf + l.centres[k], t->prob_centre, sizeof t->prob_centre);
            memcpy(buf + l.centres[k] + sizeof t->prob_centre, t->backoff_centre, sizeof t->backoff_centre);
            memcpy(buf + l.prob[k], t->qprob, s);
            if (k < lm->order)
                memcpy(buf + l.backoff[k], t->qbackoff, s);
        }
    }
    h.checksum = ngram_bin_checksum(buf + sizeof h, (size_t)l.size - sizeof h);
    memcpy(buf, &h, sizeof h);
    const int ok = fwrite(buf, 1, (size_t)l.size, f) == (size_t)l.size;
    const int e = errno;
    free(buf);
    if (!ok) {
        errno = e != 0 ? e : EIO;
        return -1;
    }
    return 0;
}
