/* SPDX-License-Identifier: BSD-3-Clause */
/*
** collection_keys.c - what both collections' forwards do with names: find
** each table feature among the KJT's keys, and write the embedding names.
*/
#include <string.h>

#include "collections.h"
#include "../kjt/kjt.h"

/* Unlike torchrec, which ignores them, a KJT key that is no table's
** feature is refused by name, as is a feature the KJT lacks (torchrec: a
** KeyError in to_dict()'s result). */
loom_status rec_collection_features(loom_call *call, const rec_ebc *e, const rec_kjt *kjt, int64_t **fkey_out)
{
    const int64_t F = e->n_features, K = kjt->n_keys;
    int64_t *fkey = rec_scratch(call, (size_t)(F > 0 ? F : 1) * sizeof(int64_t));
    unsigned char *used = rec_scratch(call, (size_t)(K > 0 ? K : 1));
    if (!fkey || !used)
        return LOOM_ENOMEM;
    memset(used, 0, (size_t)(K > 0 ? K : 1));
    for (int64_t f = 0; f < F; f++) {
        fkey[f] = -1;
        for (int64_t k = 0; k < K && fkey[f] < 0; k++)
            if (strcmp(kjt->keys[k], e->feature_names[f]) == 0)
                fkey[f] = k;
        if (fkey[f] < 0)
            return pk_host->fail(LOOM_EINVAL, "feature '%s' of table '%s' is not among the KJT's 'keys'",
                                 e->feature_names[f], e->table_names[e->feature_table[f]]);
        used[fkey[f]] = 1;
    }
    for (int64_t k = 0; k < K; k++)
        if (!used[k])
            return pk_host->fail(LOOM_EINVAL, "key '%s' of the KJT is not a feature of any table of the collection",
                                 kjt->keys[k]);
    *fkey_out = fkey;
    return LOOM_OK;
}

/* Outputs first (u8 names) and first + 1 (i64 [F+1]): the embedding names,
** feature@table for a feature several tables share (get_embedding_names_by_table). */
loom_status rec_collection_keys(loom_call *call, const rec_ebc *e, int32_t first)
{
    const int64_t F = e->n_features;
    int64_t *ko = rec_scratch(call, (size_t)(F + 1) * sizeof(int64_t));
    if (!ko)
        return LOOM_ENOMEM;
    ko[0] = 0;
    for (int64_t f = 0; f < F; f++) {
        int shared = 0;
        for (int64_t h = 0; h < F; h++)
            shared |= h != f && strcmp(e->feature_names[h], e->feature_names[f]) == 0;
        ko[f + 1] = ko[f] + (int64_t)strlen(e->feature_names[f]) +
                    (shared ? 1 + (int64_t)strlen(e->table_names[e->feature_table[f]]) : 0);
    }
    int64_t shape[1] = { ko[F] };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, first, LOOM_DTYPE_U8, 1, shape, &out);
    if (st != LOOM_OK)
        return st;
    for (int64_t f = 0; f < F; f++) {
        char *p = (char *)loom_data(out) + ko[f];
        size_t n = strlen(e->feature_names[f]);
        memcpy(p, e->feature_names[f], n);
        if (ko[f + 1] - ko[f] > (int64_t)n) {
            p[n] = '@';
            memcpy(p + n + 1, e->table_names[e->feature_table[f]], (size_t)(ko[f + 1] - ko[f]) - n - 1);
        }
    }
    shape[0] = F + 1;
    return rec_write_index(call, first + 1, LOOM_DTYPE_I64, 1, shape, ko);
}
