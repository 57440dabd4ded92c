/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ctc_prefix_kernels.cu - audio.cuda_ctc_decoder on the device
** (ctc_prefix_kernels.h, the algorithm in ctc_prefix.h): one block of 256
** threads per utterance runs every step in one launch, the phases of a
** step between barriers:
**   A  every beam x token candidate's (pb, pnb), one thread each;
**   B  the merges, one thread per beam t scanning the beams a in order;
**   C  the candidates' keys and the beam best of them: a radix select of
**      the k-th largest key (four 8-bit passes over a shared histogram),
**      the larger keys and the first equal ones in index order (a block
**      scan), ranked by (key, index) as the cpu kernel ranks them;
**   D  the new beam: each warp copies prefixes, one thread per beam sets
**      its state (double-buffered in shared memory).
** lse uses __expf and __logf, as torchaudio's kernels do. Beam state lives
** in shared memory (beam <= 128); the candidates, keys and prefixes in the
** scratch, per utterance.
*/
#include <float.h>
#include <stdint.h>

#include "ctc_cu_launch.cuh"
#include "ctc_prefix_kernels.h"

#define THREADS 256
#define WARPS (THREADS / 32)
#define MAX_BEAM 128
#define NONE (-FLT_MAX)
#define EMPTY_HASH 0x243f6a8885a308d3ull

__device__ static inline float lse(float a, float b)
{
    const float m = a > b ? a : b;
    const float d = (a - b) > 0 ? (b - a) : (a - b);
    return m + __logf(1.0f + __expf(d));
}

__device__ static inline uint64_t extend_hash(uint64_t h, int32_t c)
{
    h ^= ((uint64_t)(uint32_t)c + 1) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 29);
}

/* Order-preserving bits of a float: a larger float has larger bits. */
__device__ static inline uint32_t order_bits(float f)
{
    const uint32_t u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

typedef struct block_state {
    float pb[MAX_BEAM], pnb[MAX_BEAM], score[MAX_BEAM];
    int32_t len[2][MAX_BEAM], last[2][MAX_BEAM];
    uint64_t hash[2][MAX_BEAM], parent[2][MAX_BEAM];
    int32_t top[MAX_BEAM];                 /* the step's best candidates, best first */
    int32_t pick[MAX_BEAM];                /* the selected, unordered */
    uint32_t hist[256];
    int32_t warp_sums[WARPS];
    int32_t n_pick, n_equal_seen, n_sel;
    uint32_t prefix, want;
} block_state;

/* Exclusive prefix sum of v over the block (in thread order); *total the
** sum. Every thread must call it. */
__device__ static int32_t block_scan(block_state *s, int32_t v, int32_t *total)
{
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int32_t x = v;
    for (int o = 1; o < 32; o <<= 1) {
        const int32_t y = __shfl_up_sync(0xffffffffu, x, o);
        if (lane >= o)
            x += y;
    }
    if (lane == 31)
        s->warp_sums[w] = x;
    __syncthreads();
    if (w == 0) {
        int32_t t = lane < WARPS ? s->warp_sums[lane] : 0;
        for (int o = 1; o < WARPS; o <<= 1) {
            const int32_t y = __shfl_up_sync(0xffffffffu, t, o);
            if (lane >= o)
                t += y;
        }
        if (lane < WARPS)
            s->warp_sums[lane] = t;
    }
    __syncthreads();
    const int32_t before = (w > 0 ? s->warp_sums[w - 1] : 0) + x - v;
    *total = s->warp_sums[WARPS - 1];
    __syncthreads();
    return before;
}

/* i ranks before j: a larger key, or an equal key and a lower index. */
__device__ static inline bool better(const float *keys, int32_t i, int32_t j)
{
    return keys[i] > keys[j] || (keys[i] == keys[j] && i < j);
}

/* s->top[0..k) = the k best of keys[0..n) (k <= n), best first. */
__device__ static void block_top_k(block_state *s, const float *keys, int32_t n, int32_t k)
{
    /* the k-th largest key's bits, 8 at a time from the top */
    if (threadIdx.x == 0) {
        s->prefix = 0;
        s->want = (uint32_t)k;
    }
    uint32_t mask = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int d = threadIdx.x; d < 256; d += THREADS)
            s->hist[d] = 0;
        __syncthreads();
        const uint32_t prefix = s->prefix;
        for (int32_t i = threadIdx.x; i < n; i += THREADS) {
            const uint32_t u = order_bits(keys[i]);
            if ((u & mask) == prefix)
                atomicAdd(&s->hist[(u >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            uint32_t above = 0;
            for (int d = 255; d >= 0; d--) {
                if (above + s->hist[d] >= s->want) {
                    s->prefix |= (uint32_t)d << shift;
                    s->want -= above;
                    break;
                }
                above += s->hist[d];
            }
        }
        mask |= 255u << shift;
        __syncthreads();
    }
    /* every larger key, and the first `want` equal ones by index */
    const uint32_t kth = s->prefix;
    const int32_t want = (int32_t)s->want;
    if (threadIdx.x == 0) {
        s->n_pick = 0;
        s->n_equal_seen = 0;
    }
    __syncthreads();
    for (int32_t base = 0; base < n; base += THREADS) {
        const int32_t i = base + (int32_t)threadIdx.x;
        const uint32_t u = i < n ? order_bits(keys[i]) : 0u;
        const int32_t eq = i < n && u == kth, seen = s->n_equal_seen;
        int32_t total;
        const int32_t rank = block_scan(s, eq, &total) + seen;
        if (i < n && (u > kth || (eq && rank < want)))
            s->pick[atomicAdd(&s->n_pick, 1)] = i;
        __syncthreads();
        if (threadIdx.x == 0)
            s->n_equal_seen = seen + total;
        __syncthreads();
    }
    /* rank the k picked by (key, index) */
    for (int32_t a = threadIdx.x; a < k; a += THREADS) {
        const int32_t me = s->pick[a];
        int32_t r = 0;
        for (int32_t b = 0; b < k; b++)
            r += better(keys, s->pick[b], me);
        s->top[r] = me;
    }
    __syncthreads();
}

__global__ void __launch_bounds__(THREADS)
    prefix_search_kernel(const float *lp, const int64_t *lengths, int64_t T, int64_t V64, int32_t beam,
                         int32_t nbest, float threshold, char *scratch, size_t per_utt, int32_t *staged,
                         int32_t *n_tokens, float *score_out)
{
    __shared__ block_state s;
    const int64_t b = blockIdx.x;
    const int32_t V = (int32_t)V64, nc = beam * V, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const float *x = lp + b * T * V64;
    const int64_t length = lengths != NULL ? lengths[b] : T;
    float *table = (float *)(void *)(scratch + (size_t)b * per_utt);
    float *tablen = table + nc, *keys = tablen + nc;
    int32_t *list[2] = { (int32_t *)(void *)(keys + nc), (int32_t *)(void *)(keys + nc) + (size_t)beam * T };
    int32_t *sel = list[1] + (size_t)beam * T;
    /* the frames kept, in order */
    if (tid == 0)
        s.n_sel = 0;
    __syncthreads();
    for (int64_t base = 0; base < length; base += THREADS) {
        const int64_t t = base + tid;
        const int32_t keep = t < length && x[t * V64] < threshold;
        int32_t total;
        const int32_t at = block_scan(&s, keep, &total) + s.n_sel;
        if (keep)
            sel[at] = (int32_t)t;
        __syncthreads();
        if (tid == 0)
            s.n_sel += total;
        __syncthreads();
    }
    const int32_t n = s.n_sel;
    if (n == 0) {
        for (int32_t k = tid; k < nbest; k += THREADS) {
            n_tokens[b * nbest + k] = 0;
            score_out[b * nbest + k] = 0.0f;
        }
        return;
    }
    /* step 0 */
    const float *row = x + (int64_t)sel[0] * V64;
    block_top_k(&s, row, V, beam);
    const bool add0 = n > 1 && sel[1] - sel[0] > 1;
    for (int32_t k = tid; k < beam; k += THREADS) {
        const int32_t c = s.top[k];
        const float key = row[c];
        s.score[k] = key;
        s.last[0][k] = c;
        if (c == 0) {
            s.pb[k] = key;
            s.pnb[k] = NONE;
            s.len[0][k] = 0;
            s.hash[0][k] = EMPTY_HASH;
        } else {
            s.pb[k] = add0 ? key : NONE;
            s.pnb[k] = add0 ? NONE : key;
            s.len[0][k] = 1;
            list[0][(size_t)k * T] = c;
            s.hash[0][k] = extend_hash(EMPTY_HASH, c);
            s.parent[0][k] = EMPTY_HASH;
        }
    }
    __syncthreads();
    for (int32_t i = 1; i < n; i++) {
        const int prev = (i - 1) & 1, cur = i & 1;
        const float *p = x + (int64_t)sel[i] * V64;
        const bool add_blank = i + 1 < n && sel[i + 1] - sel[i] > 1;
        /* A: candidates */
        for (int32_t e = tid; e < nc; e += THREADS) {
            const int32_t j = e / V, c = e - j * V, last = s.last[prev][j];
            const float pb = s.pb[j], pnb = s.pnb[j];
            if (c == 0) {
                table[e] = p[0] + lse(pb, pnb);
                tablen[e] = last != 0 ? p[last] + pnb : NONE;
            } else {
                table[e] = NONE;
                tablen[e] = c == last ? p[c] + pb : p[c] + lse(pb, pnb);
            }
        }
        __syncthreads();
        /* B: beam t == beam a + last(t): a's extension merged into t's stay */
        for (int32_t t = tid; t < beam; t += THREADS) {
            const int32_t lt = s.len[prev][t];
            if (lt == 0)
                continue;
            for (int32_t a = 0; a < beam; a++) {
                if (s.len[prev][a] != lt - 1 || s.hash[prev][a] != s.parent[prev][t])
                    continue;
                const int32_t *pa = list[prev] + (size_t)a * T, *pt = list[prev] + (size_t)t * T;
                int32_t q = 0;
                while (q < lt - 1 && pa[q] == pt[q])
                    q++;
                if (q != lt - 1)
                    continue;
                const int32_t in = a * V + s.last[prev][t], out = t * V;
                table[out] = lse(table[out], table[in]);
                tablen[out] = lse(tablen[out], tablen[in]);
                table[in] = NONE;
                tablen[in] = NONE;
            }
        }
        __syncthreads();
        /* C: the beam best */
        for (int32_t e = tid; e < nc; e += THREADS)
            keys[e] = lse(table[e], tablen[e]);
        __syncthreads();
        block_top_k(&s, keys, nc, beam);
        /* D: the new beam, its prefixes copied a warp per row */
        for (int32_t k = warp; k < beam; k += WARPS) {
            const int32_t id = s.top[k], j = id / V, plen = s.len[prev][j];
            const int32_t *src = list[prev] + (size_t)j * T;
            int32_t *dst = list[cur] + (size_t)k * T;
            for (int32_t q = lane; q < plen; q += 32)
                dst[q] = src[q];
        }
        for (int32_t k = tid; k < beam; k += THREADS) {
            const int32_t id = s.top[k], j = id / V, c = id - j * V, plen = s.len[prev][j];
            if (c == 0) {
                s.len[cur][k] = plen;
                s.last[cur][k] = s.last[prev][j];
                s.hash[cur][k] = s.hash[prev][j];
                s.parent[cur][k] = s.parent[prev][j];
            } else {
                list[cur][(size_t)k * T + plen] = c;
                s.len[cur][k] = plen + 1;
                s.last[cur][k] = c;
                s.hash[cur][k] = extend_hash(s.hash[prev][j], c);
                s.parent[cur][k] = s.hash[prev][j];
            }
            const float xb = table[id], yn = tablen[id], sc = lse(xb, yn);
            s.score[k] = sc;
            s.pb[k] = add_blank ? sc : xb;
            s.pnb[k] = add_blank ? NONE : yn;
        }
        __syncthreads();
    }
    /* the result: the first nbest of the last step's beam */
    const int fin = (n - 1) & 1;
    for (int32_t k = warp; k < nbest; k += WARPS) {
        const int32_t len = s.len[fin][k];
        const int32_t *src = list[fin] + (size_t)k * T;
        int32_t *dst = staged + ((size_t)b * nbest + k) * T;
        for (int32_t q = lane; q < len; q += 32)
            dst[q] = src[q];
        if (lane == 0) {
            n_tokens[b * nbest + k] = len;
            score_out[b * nbest + k] = s.score[k];
        }
    }
}

__global__ void gather_kernel(const int32_t *staged, const int32_t *n_tokens, const int64_t *offsets, int64_t H,
                              int64_t T, int64_t *tokens)
{
    const int64_t h = blockIdx.x;
    if (h >= H)
        return;
    const int64_t o = offsets[h];
    for (int64_t q = threadIdx.x; q < n_tokens[h]; q += blockDim.x)
        tokens[o + q] = staged[h * T + q];
}

/* Per utterance, rounded to 256 bytes: table, tablen, keys, two prefix lists, the frames kept. */
static size_t per_utterance(int64_t T, int64_t V, int32_t beam)
{
    const size_t bytes = 3 * (size_t)beam * (size_t)V * sizeof(float) + (2 * (size_t)beam + 1) * (size_t)T * sizeof(int32_t);
    return (bytes + 255) / 256 * 256;
}

extern "C" size_t ctc_prefix_cu_scratch_bytes(int64_t B, int64_t T, int64_t V, int32_t beam)
{
    return (size_t)B * per_utterance(T, V, beam);
}

extern "C" int ctc_prefix_cu_search(const float *lp, const int64_t *lengths, int64_t B, int64_t T, int64_t V,
                                    int32_t beam, int32_t nbest, float threshold, void *scratch, int32_t *staged,
                                    int32_t *n_tokens, float *score, void *stream, char *err, size_t err_size)
{
    if (B > 0x7fffffff) {
        snprintf(err, err_size, "prefix search: %lld utterances, more than a grid holds", (long long)B);
        return -1;
    }
    prefix_search_kernel<<<(unsigned)B, THREADS, 0, (cudaStream_t)stream>>>(
        lp, lengths, T, V, beam, nbest, threshold, (char *)scratch, per_utterance(T, V, beam), staged, n_tokens, score);
    return ctc_cu_launched("prefix search", err, err_size);
}

extern "C" int ctc_prefix_cu_gather(const int32_t *staged, const int32_t *n_tokens, const int64_t *offsets, int64_t H,
                                    int64_t T, int64_t *tokens, void *stream, char *err, size_t err_size)
{
    if (H > 0x7fffffff) {
        snprintf(err, err_size, "prefix gather: %lld hypotheses, more than a grid holds", (long long)H);
        return -1;
    }
    gather_kernel<<<(unsigned)H, 128, 0, (cudaStream_t)stream>>>(staged, n_tokens, offsets, H, T, tokens);
    return ctc_cu_launched("prefix gather", err, err_size);
}
