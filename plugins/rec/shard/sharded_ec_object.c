/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sharded_ec_object.c - create of rec.sharded_embedding_collection,
** torchrec's ShardedEmbeddingCollection (torchrec/distributed/embedding.py)
** over OpenMPI (shard.h).
**
** The object is the sharded bag collection's state (rec_sebc), made by the
** same collective create (rec_shard_create: communicator, table configs,
** weights, plan, layout, the verdict and plan-hash exchange, the local
** fbgemm.tbe objects) with sequence set: the tables are read under
** EmbeddingCollection's keys (embeddings.<table>.weight), every table has
** one D, and the plan may only use the sharding types torchrec's
** EmbeddingCollectionSharder supports (table_wise, row_wise, column_wise,
** data_parallel; sharding/{tw,rw,cw,dp}_sequence_sharding.py): a
** table_row_wise table is refused by name. These checks run before the
** verdicts are exchanged, so a refusal on one rank fails every rank.
**
** The local TBEs pool by sum: the forward and backward look each id up as
** a bag of its own (sharded_ec_dist.c), which is the unpooled row, and
** lets fbgemm.tbe_backward's fused optimizer train the sequence tables
** (fbgemm's CPU TBE has no backward for pooling none).
*/
#include <stdlib.h>
#include <string.h>

#include "shard.h"

#define FAIL(...) return pk_host->fail(LOOM_EINVAL, __VA_ARGS__)

/* The forward's keys: every feature's name, feature@table for a name that
** several tables share (as rec.embedding_collection names them). */
static loom_status make_keys(rec_sebc *e, const char *feature_names)
{
    const int64_t F = e->n_features;
    char **names = calloc((size_t)(F > 0 ? F : 1), sizeof *names);
    e->keys_offsets = calloc((size_t)F + 1, sizeof *e->keys_offsets);
    loom_status st = names && e->keys_offsets ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory",
                                                                         e->c.name);
    /* "f0|f1,f2": tables by ',', their features by '|'; an empty list is the table's own name */
    const char *p = feature_names;
    for (int64_t t = 0, f = 0; st == LOOM_OK && t < e->n_tables; t++) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) {
            names[f++] = strdup(e->table_names[t]);
        } else {
            const char *q = p;
            while (q <= p + len) {
                const char *bar = memchr(q, '|', (size_t)(p + len - q));
                const size_t n = bar ? (size_t)(bar - q) : (size_t)(p + len - q);
                names[f++] = strndup(q, n);
                q += n + 1;
            }
        }
        p = end ? end + 1 : p + len;
    }
    for (int64_t f = 0; st == LOOM_OK && f < F; f++)
        if (names[f] == NULL)
            st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int64_t f = 0; st == LOOM_OK && f < F; f++) {
        int shared = 0;
        for (int64_t h = 0; h < F; h++)
            shared |= h != f && strcmp(names[h], names[f]) == 0;
        e->keys_offsets[f + 1] = e->keys_offsets[f] + (int64_t)strlen(names[f]) +
                                 (shared ? 1 + (int64_t)strlen(e->table_names[e->feature_table[f]]) : 0);
    }
    if (st == LOOM_OK && (e->keys = malloc((size_t)e->keys_offsets[F] + 1)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", e->c.name);
    for (int64_t f = 0; st == LOOM_OK && f < F; f++) {
        char *k = e->keys + e->keys_offsets[f];
        const size_t n = strlen(names[f]);
        memcpy(k, names[f], n);
        if (e->keys_offsets[f + 1] - e->keys_offsets[f] > (int64_t)n) {
            k[n] = '@';
            memcpy(k + n + 1, e->table_names[e->feature_table[f]], strlen(e->table_names[e->feature_table[f]]));
        }
    }
    for (int64_t f = 0; names && f < F; f++)
        free(names[f]);
    free(names);
    return st;
}

loom_status rec_sec_check(rec_sebc *e, const loom_object_args *args)
{
    for (int64_t t = 1; t < e->n_tables; t++)
        if (e->embedding_dim[t] != e->embedding_dim[0])
            FAIL("%s: table '%s' has embedding_dim %lld, table '%s' %lld: an EmbeddingCollection's tables share "
                 "one D", e->c.name, e->table_names[t], (long long)e->embedding_dim[t], e->table_names[0],
                 (long long)e->embedding_dim[0]);
    for (int64_t t = 0; t < e->n_tables; t++) {
        const rec_sharding_type s = e->plan->tables[t].sharding_type;
        if (s != REC_SHARD_TABLE_WISE && s != REC_SHARD_ROW_WISE && s != REC_SHARD_COLUMN_WISE &&
            s != REC_SHARD_DATA_PARALLEL)
            FAIL("%s: plan: table '%s' (%lld): field 'sharding_type' %s: torchrec's EmbeddingCollection shards "
                 "table_wise, row_wise, column_wise or data_parallel", e->c.name, e->table_names[t],
                 (long long)t, rec_sharding_type_names[s]);
    }
    return make_keys(e, args->attrs[PK_ATTR(rec_sebc_class, feature_names)].u.s);
}

#define SEC_ARG(name) args->attrs[PK_ATTR(rec_sec_class, name)]

static loom_status sec_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    /* the shared create reads the bag collection's attribute layout: the
    ** same attributes at its indices, sum pooling (each id its own bag) and
    ** no per-sample weights (EmbeddingCollection has none) */
    loom_attr_value av[rec_sebc_class__n_attrs];
    memset(av, 0, sizeof av);
    av[PK_ATTR(rec_sebc_class, tables)] = SEC_ARG(tables);
    av[PK_ATTR(rec_sebc_class, num_embeddings)] = SEC_ARG(num_embeddings);
    av[PK_ATTR(rec_sebc_class, embedding_dim)] = SEC_ARG(embedding_dim);
    av[PK_ATTR(rec_sebc_class, feature_names)] = SEC_ARG(feature_names);
    av[PK_ATTR(rec_sebc_class, pooling)] = (loom_attr_value){ .type = LOOM_ATTR_STRING, .is_set = 1, .count = 3,
                                                              .u.s = "sum" };
    av[PK_ATTR(rec_sebc_class, is_weighted)] = (loom_attr_value){ .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1,
                                                                  .u.b = 0 };
    av[PK_ATTR(rec_sebc_class, plan)] = SEC_ARG(plan);
    av[PK_ATTR(rec_sebc_class, optimizer)] = SEC_ARG(optimizer);
    av[PK_ATTR(rec_sebc_class, lr)] = SEC_ARG(lr);
    av[PK_ATTR(rec_sebc_class, eps)] = SEC_ARG(eps);
    av[PK_ATTR(rec_sebc_class, timeout_s)] = SEC_ARG(timeout_s);
    loom_object_args a = *args;
    a.n_attrs = rec_sebc_class__n_attrs;
    a.attrs = av;
    return rec_shard_create(&a, 1, state_out);
}

PK_ATTR_TABLE(rec_sec_class, REC_SEC_CLASS_ATTRS);

const loom_object_class rec_sec_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_SEC_CLASS,
    .doc = "TorchRec's sharded EmbeddingCollection (sequence embeddings) over OpenMPI: tables of one D split by a "
           "plan (table_wise, row_wise, column_wise, data_parallel) across the ranks of MPI_COMM_WORLD, each id's "
           "row looked up on its shard's fbgemm.tbe and trained with the fused optimizer; methods "
           "rec.sharded_embedding_collection, rec.sharded_embedding_collection_backward, "
           "rec.sharded_embedding_collection_weight",
    PK_ATTRS(rec_sec_class_attrs),
    .create = sec_create,
    .destroy = rec_sebc_destroy,
};
