/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_rec_shard_plan.c - feeds: the sharding plan's parser and validator
** (plugins/rec/shard/plan.c, compiled in: it needs only cJSON). An input
** is the plan's JSON text.
** Asserts: no sanitizer report; a refusal leaves no plan and a message
** starting "plan: "; an accepted plan keeps the validator's invariants
** (world_size >= 1, every shard on a rank below it and inside its table,
** the shards of a table covering exactly its rows x columns, ranks[i] the
** rank of shard i, no data-parallel shard), and its canonical JSON parses
** back to the same canonical text and hash.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_rec_shard_plan: %s\n", #c); abort(); } } while (0)

/* rows and columns are below 2^53: their product needs more than 64 bits */
__extension__ typedef __int128 wide;

static void check_invariants(const rec_plan *p)
{
    CHECK(p->world_size >= 1);
    for (int64_t t = 0; t < p->n_tables; t++) {
        const rec_plan_table *tb = &p->tables[t];
        CHECK(tb->name && tb->name[0]);
        CHECK(tb->embedding_dim >= 1 && tb->num_embeddings >= 0);
        if (tb->sharding_type == REC_SHARD_DATA_PARALLEL) {
            CHECK(tb->n_shards == 0);
            continue;
        }
        CHECK(tb->n_shards >= 1 && tb->n_ranks == tb->n_shards);
        wide area = 0;
        for (int64_t s = 0; s < tb->n_shards; s++) {
            const rec_plan_shard *sh = &tb->shards[s];
            CHECK(sh->rank >= 0 && sh->rank < p->world_size && tb->ranks[s] == sh->rank);
            CHECK(sh->row_offset >= 0 && sh->col_offset >= 0 && sh->rows >= 0 && sh->cols >= 0);
            CHECK(sh->row_offset + sh->rows <= tb->num_embeddings);
            CHECK(sh->col_offset + sh->cols <= tb->embedding_dim);
            area += (wide)sh->rows * sh->cols;
        }
        CHECK(area == (wide)tb->num_embeddings * tb->embedding_dim);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rec_plan *p = (rec_plan *)1;
    char err[512];
    if (rec_plan_from_json((const char *)data, size, &p, err, sizeof err) != 0) {
        CHECK(p == NULL);
        CHECK(strncmp(err, "plan: ", 6) == 0);
        return 0;
    }
    CHECK(p != NULL);
    check_invariants(p);
    char *c = rec_plan_canonical(p);
    CHECK(c != NULL);
    rec_plan *q = NULL;
    CHECK(rec_plan_from_json(c, strlen(c), &q, err, sizeof err) == 0);
    char *c2 = rec_plan_canonical(q);
    CHECK(c2 != NULL && strcmp(c, c2) == 0);
    CHECK(rec_plan_hash(p) == rec_plan_hash(q));
    free(c);
    free(c2);
    rec_plan_free(q);
    rec_plan_free(p);
    return 0;
}
