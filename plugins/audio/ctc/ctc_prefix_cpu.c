/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_prefix_cpu.c - the cpu kernel of audio.cuda_ctc_decoder (ctc_prefix.h):
** torchaudio's cuda_ctc_decoder step by step on the host, the reference the
** cuda kernel is checked against. Utterances are spread over the core's
** pool; each chunk owns its scratch (nothing shared but the inputs).
**
** The merge looks for the beams t that are beam a and one token by a hash of
** each prefix and of the prefix without its last token, confirmed on the
** tokens, instead of comparing every pair's tokens as the device does.
*/
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ctc_prefix.h"

#define NONE (-FLT_MAX)

/* torchaudio's _logsumexp, in float. */
static inline float lse(float a, float b)
{
    const float m = a > b ? a : b;
    const float d = (a - b) > 0 ? (b - a) : (a - b);
    return m + logf(1.0f + expf(d));
}

static uint64_t extend_hash(uint64_t h, int32_t c)
{
    h ^= ((uint64_t)(uint32_t)c + 1) * UINT64_C(0x9e3779b97f4a7c15);
    h ^= h >> 31;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    return h ^ (h >> 29);
}

#define EMPTY_HASH UINT64_C(0x243f6a8885a308d3)

/* One search's buffers; the prefix state is double-buffered (steps alternate). */
typedef struct prefix_scratch {
    int32_t beam, V, T;
    int32_t *sel;                  /* [T] the frames kept */
    float *pb, *pnb, *score;       /* [beam] */
    int32_t *last;                 /* [beam] last token (0: empty prefix) */
    int32_t *len[2], *list[2];     /* [beam], [beam * T] */
    uint64_t *hash[2], *parent[2]; /* [beam]: the prefix's hash, and without its last token */
    float *table, *tablen, *keys;  /* [beam * V] candidates ending in a blank / a token */
    int32_t *heap;                 /* [beam] */
    void *block;
} prefix_scratch;

static int scratch_init(prefix_scratch *s, int32_t beam, int32_t V, int32_t T)
{
    const size_t b = (size_t)beam, bv = b * (size_t)V, bt = b * (size_t)(T > 0 ? T : 1);
    const size_t bytes = (size_t)T * 4 + b * 4 * 4 + 2 * (b * 4 + bt * 4 + 2 * b * 8) + 3 * bv * 4 + b * 4 + 64;
    char *p = malloc(bytes);
    if (p == NULL)
        return -1;
    s->block = p;
    s->beam = beam;
    s->V = V;
    s->T = T;
#define TAKE(field, type, n) (s->field = (type *)(void *)p, p += (n) * sizeof(type))
    for (int k = 0; k < 2; k++) {
        TAKE(hash[k], uint64_t, b);
        TAKE(parent[k], uint64_t, b);
    }
    TAKE(sel, int32_t, (size_t)T);
    TAKE(pb, float, b);
    TAKE(pnb, float, b);
    TAKE(score, float, b);
    TAKE(last, int32_t, b);
    for (int k = 0; k < 2; k++) {
        TAKE(len[k], int32_t, b);
        TAKE(list[k], int32_t, bt);
    }
    TAKE(table, float, bv);
    TAKE(tablen, float, bv);
    TAKE(keys, float, bv);
    TAKE(heap, int32_t, b);
#undef TAKE
    return 0;
}

/* i ranks before j: a larger key, or an equal key and a lower index. */
static inline int better(const float *keys, int32_t i, int32_t j)
{
    return keys[i] > keys[j] || (keys[i] == keys[j] && i < j);
}

static void sift_down(const float *keys, int32_t *h, int32_t n, int32_t at)
{
    for (;;) {
        int32_t w = at;
        const int32_t l = 2 * at + 1, r = l + 1;
        if (l < n && better(keys, h[w], h[l]))
            w = l;
        if (r < n && better(keys, h[w], h[r]))
            w = r;
        if (w == at)
            return;
        const int32_t t = h[at];
        h[at] = h[w];
        h[w] = t;
        at = w;
    }
}

/* The k best of keys[0..n) (k <= n) into out, best first. */
static void top_k(const float *keys, int32_t n, int32_t k, int32_t *out)
{
    /* a heap whose root is the worst kept: a candidate better than it replaces it */
    for (int32_t i = 0; i < k; i++)
        out[i] = i;
    for (int32_t i = k / 2 - 1; i >= 0; i--)
        sift_down(keys, out, k, i);
    for (int32_t i = k; i < n; i++)
        if (better(keys, i, out[0])) {
            out[0] = i;
            sift_down(keys, out, k, 0);
        }
    /* pop the worst to the end: the array ends best first */
    for (int32_t m = k - 1; m > 0; m--) {
        const int32_t t = out[0];
        out[0] = out[m];
        out[m] = t;
        sift_down(keys, out, m, 0);
    }
}

/* Decode one utterance lp [T, V] of `length` frames; returns the steps
** taken (0: no frame kept) and leaves the beam in buffer (steps - 1) % 2. */
static int32_t search(prefix_scratch *s, const float *lp, int64_t length, float threshold)
{
    const int32_t V = s->V, beam = s->beam;
    int32_t n = 0;
    for (int64_t t = 0; t < length; t++)
        if (lp[t * V] < threshold)
            s->sel[n++] = (int32_t)t;
    if (n == 0)
        return 0;
    /* step 0: the best tokens of the first frame */
    const float *row = lp + (int64_t)s->sel[0] * V;
    const int add0 = n > 1 && s->sel[1] - s->sel[0] > 1;
    top_k(row, V, beam, s->heap);
    for (int32_t k = 0; k < beam; k++) {
        const int32_t c = s->heap[k];
        const float key = row[c];
        s->score[k] = key;
        if (c == 0) {
            s->pb[k] = key;
            s->pnb[k] = NONE;
            s->len[0][k] = 0;
            s->last[k] = 0;
            s->hash[0][k] = EMPTY_HASH;
        } else {
            s->pb[k] = add0 ? key : NONE;
            s->pnb[k] = add0 ? NONE : key;
            s->len[0][k] = 1;
            s->list[0][(size_t)k * (size_t)s->T] = c;
            s->last[k] = c;
            s->hash[0][k] = extend_hash(EMPTY_HASH, c);
            s->parent[0][k] = EMPTY_HASH;
        }
    }
    for (int32_t i = 1; i < n; i++) {
        const int prev = (i - 1) & 1, cur = i & 1;
        const float *p = lp + (int64_t)s->sel[i] * V;
        const int add_blank = i + 1 < n && s->sel[i + 1] - s->sel[i] > 1;
        /* every beam extended by every token, and staying */
        for (int32_t j = 0; j < beam; j++) {
            float *tb = s->table + (size_t)j * (size_t)V, *tn = s->tablen + (size_t)j * (size_t)V;
            const float pb = s->pb[j], pnb = s->pnb[j], both = lse(pb, pnb);
            const int32_t last = s->last[j];
            for (int32_t c = 1; c < V; c++) {
                tb[c] = NONE;
                tn[c] = p[c] + both;
            }
            if (last != 0) {
                tn[last] = p[last] + pb;       /* a repeat needs a blank between */
                tn[0] = p[last] + pnb;         /* the repeat collapsed: the prefix stays */
            } else {
                tn[0] = NONE;
            }
            tb[0] = p[0] + both;
        }
        /* beam t == beam a + last(t): a's extension is t, merged into t's stay */
        for (int32_t t = 0; t < beam; t++) {
            const int32_t lt = s->len[prev][t];
            if (lt == 0)
                continue;
            for (int32_t a = 0; a < beam; a++) {
                if (s->len[prev][a] != lt - 1 || s->hash[prev][a] != s->parent[prev][t])
                    continue;
                if (memcmp(s->list[prev] + (size_t)a * (size_t)s->T, s->list[prev] + (size_t)t * (size_t)s->T,
                           (size_t)(lt - 1) * sizeof(int32_t)) != 0)
                    continue;
                const size_t in = (size_t)a * (size_t)V + (size_t)s->last[t], out = (size_t)t * (size_t)V;
                s->table[out] = lse(s->table[out], s->table[in]);
                s->tablen[out] = lse(s->tablen[out], s->tablen[in]);
                s->table[in] = NONE;
                s->tablen[in] = NONE;
            }
        }
        const int32_t nc = beam * V;
        for (int32_t k = 0; k < nc; k++)
            s->keys[k] = lse(s->table[k], s->tablen[k]);
        top_k(s->keys, nc, beam, s->heap);
        /* the new beam, reading the previous one's lists and last tokens */
        for (int32_t k = 0; k < beam; k++) {
            const int32_t id = s->heap[k], j = id / V, c = id - j * V;
            const int32_t plen = s->len[prev][j];
            int32_t *dst = s->list[cur] + (size_t)k * (size_t)s->T;
            memcpy(dst, s->list[prev] + (size_t)j * (size_t)s->T, (size_t)plen * sizeof(int32_t));
            if (c == 0) {
                s->len[cur][k] = plen;
                s->hash[cur][k] = s->hash[prev][j];
                s->parent[cur][k] = s->parent[prev][j];
                s->heap[k] = plen > 0 ? dst[plen - 1] : 0;       /* the last token, read below */
            } else {
                dst[plen] = c;
                s->len[cur][k] = plen + 1;
                s->hash[cur][k] = extend_hash(s->hash[prev][j], c);
                s->parent[cur][k] = s->hash[prev][j];
                s->heap[k] = c;
            }
            const float x = s->table[id], y = s->tablen[id], sc = lse(x, y);
            s->score[k] = sc;
            s->pb[k] = add_blank ? sc : x;
            s->pnb[k] = add_blank ? NONE : y;
        }
        memcpy(s->last, s->heap, (size_t)beam * sizeof(int32_t));
    }
    return n;
}

typedef struct prefix_job {
    const float *lp;
    const int64_t *lengths;
    int64_t T, V;
    ctc_prefix_params prm;
    int32_t *tokens;               /* [B * nbest * T]: hypothesis h's at h * T */
    int32_t *n_tokens;             /* [B * nbest] */
    float *score;                  /* [B * nbest] */
    int failed;                    /* a chunk ran out of memory */
} prefix_job;

static void decode_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    prefix_job *j = user;
    prefix_scratch s;
    if (scratch_init(&s, j->prm.beam, (int32_t)j->V, (int32_t)j->T) != 0) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    const int32_t nbest = j->prm.nbest;
    for (int64_t b = begin; b < end; b++) {
        const int64_t len = j->lengths != NULL ? j->lengths[b] : j->T;
        const int32_t steps = search(&s, j->lp + b * j->T * j->V, len, j->prm.threshold);
        const int buf = (steps - 1) & 1;
        for (int32_t k = 0; k < nbest; k++) {
            const int64_t h = b * nbest + k;
            const int32_t n = steps > 0 ? s.len[buf][k] : 0;
            j->n_tokens[h] = n;
            j->score[h] = steps > 0 ? s.score[k] : 0.0f;
            if (n > 0)
                memcpy(j->tokens + h * j->T, s.list[buf] + (size_t)k * (size_t)s.T, (size_t)n * sizeof(int32_t));
        }
    }
    free(s.block);
}

static loom_status prefix_run_cpu(loom_call *call)
{
    const loom_tensor *e = call->inputs[0], *len = call->inputs[1];
    const int64_t *lengths = len != NULL ? loom_data(len) : NULL;
    ctc_prefix_params prm;
    loom_status st = ctc_prefix_check(call, lengths, &prm);
    if (st != LOOM_OK)
        return st;
    const int64_t B = e->shape[0], T = e->shape[1], V = e->shape[2], H = B * prm.nbest;
    prefix_job job = { loom_data(e), lengths, T, V, prm, NULL, NULL, NULL, 0 };
    if (H > 0 && V > 0) {
        job.tokens = pk_host->scratch(call->ctx, (size_t)(H * (T > 0 ? T : 1)) * sizeof(int32_t));
        job.n_tokens = pk_host->scratch(call->ctx, (size_t)H * sizeof(int32_t));
        job.score = pk_host->scratch(call->ctx, (size_t)H * sizeof(float));
        if (job.tokens == NULL || job.n_tokens == NULL || job.score == NULL)
            return LOOM_ENOMEM;
        st = pk_host->parallel_for(call->ctx, B, 1, decode_range, &job);
        if (st != LOOM_OK)
            return st;
        if (job.failed)
            return pk_host->fail(LOOM_ENOMEM, "audio.cuda_ctc_decoder: out of memory for the search of %lld x %lld "
                                 "candidates", (long long)prm.beam, (long long)V);
    }
    int64_t total = 0;
    for (int64_t h = 0; h < H && V > 0; h++)
        total += job.n_tokens[h];
    loom_tensor *tokens, *offsets, *score;
    const int64_t n_off = H + 1, sshape[2] = { B, prm.nbest };
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &total, &tokens);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 1, &n_off, &offsets);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 2, LOOM_DTYPE_F32, 2, sshape, &score);
    if (st != LOOM_OK)
        return st;
    int64_t *tok = loom_data(tokens), *off = loom_data(offsets), k = 0;
    float *sc = loom_data(score);
    off[0] = 0;
    for (int64_t h = 0; h < H; h++) {
        const int32_t n = V > 0 ? job.n_tokens[h] : 0;
        for (int32_t i = 0; i < n; i++)
            tok[k++] = job.tokens[h * T + i];
        off[h + 1] = k;
        sc[h] = V > 0 ? job.score[h] : 0.0f;
    }
    return LOOM_OK;
}

static const loom_kernel_desc prefix_cpu_kernels[] = {
    PK_KERNEL_CPU(ctc_prefix_schema, "cpu:prefix-beam", 0, prefix_run_cpu),
};

const pk_module audio_ctc_prefix_cpu = PK_MODULE("ctc_prefix", audio_ctc_prefix_ops, prefix_cpu_kernels, NULL);
