/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ec_dist.c - the row side of rec.sharded_embedding_collection
** (shard.h): the per-id lookups of the local TBE and the all-to-all that
** brings each id's row back to the rank whose sample holds it (torchrec's
** SequenceEmbeddingsAllToAll), and its transpose for the gradients.
**
** After the KJT all-to-all (shard_kjt_all_to_all, the bag collection's),
** a rank holds, for each of its pairs j (feature, shard), the ids of every
** rank's samples that the shard owns, in order: pair-major, then source
** rank, then sample, then position. Each id becomes a bag of its own
** (sec_single_offsets), so the local TBE's sum-pooled output row i of pair
** j is exactly the row of the pair's i-th id (a sum of one f32 row is the
** row), and its fbgemm.tbe_backward steps each row on the sum of its ids'
** gradients: the unpooled lookup and its training, with fbgemm's fused
** optimizer. The TBE takes the same number of bags for every feature, so
** the pairs are padded with empty bags to the most ids of one pair (B'
** rows of the local output [B', LD]; empty bags give zeros, and no
** gradient).
**
** The exchange: rank r sends rank q, pair by pair in r's pair order, the
** cols columns of the rows of q's ids; rank q places them back, walking its
** own ids of each of r's pairs in input order (the ids of a row-wise pair
** are those in its row range, so each id's row comes from its one owner;
** a column-wise table's ids come from every column shard, each filling its
** columns, so the slices are concatenated). Every rank derives both sides'
** counts from the plan, its own input and its received batch: no counts
** are exchanged.
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

void sec_exchange_free(sec_exchange *x)
{
    free(x->own_cnt);
    free(x->offsets);
    *x = (sec_exchange){ 0 };
}

loom_status sec_single_offsets(const shard_batch *b, int64_t n_pairs, int64_t bags, int64_t *rows, int64_t **offsets)
{
    int64_t most = 0;
    for (int64_t j = 0; j < n_pairs; j++) {
        const int64_t n = b->offsets[(j + 1) * bags] - b->offsets[j * bags];
        most = n > most ? n : most;
    }
    int64_t *o = malloc((size_t)(n_pairs * most + 1) * sizeof *o);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_SEC_CLASS);
    for (int64_t j = 0; j < n_pairs; j++) {
        const int64_t i0 = b->offsets[j * bags], n = b->offsets[(j + 1) * bags] - i0;
        for (int64_t i = 0; i < most; i++)
            o[j * most + i] = i0 + (i < n ? i : n);
    }
    o[n_pairs * most] = n_pairs > 0 ? b->offsets[n_pairs * bags] : 0;
    *rows = most;
    *offsets = o;
    return LOOM_OK;
}

/* The ids of feature f in this rank's input that the pair's shard owns. */
static int64_t owned(const shard_input *in, const shard_pair *p)
{
    const int64_t lo = p->row_offset, hi = p->row_offset + p->rows;
    int64_t n = 0;
    for (int64_t i = in->value_start[p->feature * in->B]; i < in->value_start[(p->feature + 1) * in->B]; i++)
        n += in->values[i] >= lo && in->values[i] < hi;
    return n;
}

loom_status sec_exchange_plan(const rec_sebc *e, const shard_input *in, const shard_batch *b, sec_exchange *x)
{
    const int W = e->c.size, me = e->c.rank;
    const int64_t B = in->B, P = e->pair_start[me + 1] - e->pair_start[me];
    const shard_pair *mine = e->pairs + e->pair_start[me];
    *x = (sec_exchange){ .B = B };
    if ((x->own_cnt = calloc((size_t)W * 4, sizeof *x->own_cnt)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    x->own_dis = x->own_cnt + W;
    x->shd_cnt = x->own_cnt + 2 * W;
    x->shd_dis = x->own_cnt + 3 * W;
    loom_status st = LOOM_OK;
    for (int r = 0; st == LOOM_OK && r < W; r++) {
        int64_t n = 0;
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++)
            n += owned(in, &e->pairs[k]) * e->pairs[k].cols;
        if ((st = shard_count(e->c.name, n, "embedding rows", &x->own_cnt[r])) == LOOM_OK)
            st = shard_count(e->c.name, x->own_total, "embedding rows", &x->own_dis[r]);
        x->own_total += n;
    }
    for (int q = 0; st == LOOM_OK && q < W; q++) {
        int64_t n = 0;
        for (int64_t j = 0; j < P; j++) {
            const int64_t base = j * W * B;
            n += (b->offsets[base + (q + 1) * B] - b->offsets[base + q * B]) * mine[j].cols;
        }
        if ((st = shard_count(e->c.name, n, "embedding rows", &x->shd_cnt[q])) == LOOM_OK)
            st = shard_count(e->c.name, x->shd_total, "embedding rows", &x->shd_dis[q]);
        x->shd_total += n;
    }
    if (st == LOOM_OK && (x->own_total > 2147483647 || x->shd_total > 2147483647))
        st = pk_host->fail(LOOM_EINVAL, "%s: the embedding all-to-all exceeds int displacements", e->c.name);
    if (st == LOOM_OK)
        st = sec_single_offsets(b, P, W * B, &x->rows, &x->offsets);
    if (st != LOOM_OK)
        sec_exchange_free(x);
    return st;
}

void sec_pack_own(const rec_sebc *e, const shard_input *in, const sec_exchange *x, float *rows, float *buf,
                  int to_buf)
{
    const int W = e->c.size;
    const int64_t D = e->embedding_dim[0], B = in->B;
    for (int r = 0; r < W; r++) {
        float *at = buf + x->own_dis[r];
        for (int64_t k = e->pair_start[r]; k < e->pair_start[r + 1]; k++) {
            const shard_pair *p = &e->pairs[k];
            const int64_t lo = p->row_offset, hi = p->row_offset + p->rows;
            const size_t bytes = (size_t)p->cols * sizeof *buf;
            for (int64_t i = in->value_start[p->feature * B]; i < in->value_start[(p->feature + 1) * B]; i++) {
                if (in->values[i] < lo || in->values[i] >= hi)
                    continue;
                float *row = rows + i * D + p->col_offset;
                if (to_buf)
                    memcpy(at, row, bytes);
                else
                    memcpy(row, at, bytes);
                at += p->cols;
            }
        }
    }
}

void sec_pack_shard(const rec_sebc *e, const shard_batch *b, const sec_exchange *x, float *rows, float *buf,
                    int to_buf)
{
    const int W = e->c.size, me = e->c.rank;
    const int64_t P = e->pair_start[me + 1] - e->pair_start[me], LD = e->local_d[me], B = x->B;
    const shard_pair *mine = e->pairs + e->pair_start[me];
    for (int q = 0; q < W; q++) {
        float *at = buf + x->shd_dis[q];
        for (int64_t j = 0; j < P; j++) {
            /* pair j's bags of rank q's samples are j * W * B + q * B ..; their ids are its rows i0 .. i1 */
            const int64_t base = j * W * B;
            const int64_t i0 = b->offsets[base + q * B] - b->offsets[base];
            const int64_t i1 = b->offsets[base + (q + 1) * B] - b->offsets[base];
            const size_t bytes = (size_t)mine[j].cols * sizeof *buf;
            for (int64_t i = i0; i < i1; i++) {
                float *row = rows + i * LD + mine[j].local_col;
                if (to_buf)
                    memcpy(at, row, bytes);
                else
                    memcpy(row, at, bytes);
                at += mine[j].cols;
            }
        }
    }
}
