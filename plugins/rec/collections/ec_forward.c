/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ec_forward.c - the method rec.embedding_collection: torchrec's
** EmbeddingCollection.forward on a KJT (collections.h). Each feature of
** each table (table order, then feature order) becomes a JaggedTensor whose
** values are the embeddings of its ids ([L, D], f32) and whose lengths are
** the feature's; with VBE, the feature's own samples (torchrec's to_dict).
** All of them come from one fbgemm.tbe call, pooling none, with one bag per
** feature, written straight into the output rows.
*/
#include <string.h>

#include "collections.h"
#include "../kjt/kjt.h"

loom_status rec_ec_forward(loom_call *call)
{
    rec_scratch_begin();
    const rec_ebc *e = call->object;
    rec_kjt_inputs in = rec_kjt_inputs_of(call);
    rec_kjt kjt;
    loom_status st = rec_kjt_read(call, &in, call->attrs[0].u.s, call->attrs[1].u.i, &kjt);
    if (st != LOOM_OK)
        return st;
    const int64_t F = e->n_features;
    int64_t *fkey = NULL;
    if ((st = rec_collection_features(call, e, &kjt, &fkey)) != LOOM_OK)
        return st;
    int64_t *voff = rec_scratch(call, (size_t)(F + 1) * sizeof(int64_t));
    int64_t *loff = rec_scratch(call, (size_t)(F + 1) * sizeof(int64_t));
    if (!voff || !loff)
        return LOOM_ENOMEM;
    voff[0] = loff[0] = 0;
    for (int64_t f = 0; f < F; f++) {
        voff[f + 1] = voff[f] + kjt.length_per_key[fkey[f]];
        loff[f + 1] = loff[f] + kjt.stride_per_key[fkey[f]];
    }
    const int64_t N = voff[F], L = loff[F], D = F > 0 ? e->embedding_dim[0] : 0;
    int64_t shape[2] = { N, D };
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, REC_EC_OUT_VALUES, LOOM_DTYPE_F32, 2, shape, &out)) != LOOM_OK)
        return st;
    if (N > 0) {
        /* the ids in output order, one bag per feature */
        int64_t *indices = rec_scratch(call, (size_t)N * sizeof(int64_t));
        if (!indices)
            return LOOM_ENOMEM;
        const int v32 = loom_tensor_dtype_of(kjt.values) == LOOM_DTYPE_I32;
        for (int64_t f = 0; f < F; f++) {
            const int64_t k = fkey[f], n = voff[f + 1] - voff[f], src = kjt.offset_per_key[k];
            if (v32)
                for (int64_t i = 0; i < n; i++)
                    indices[voff[f] + i] = ((const int32_t *)loom_data(kjt.values))[src + i];
            else if (n > 0)
                memcpy(indices + voff[f], (const int64_t *)loom_data(kjt.values) + src, (size_t)n * sizeof(int64_t));
        }
        int64_t ishape[1] = { N }, oshape[1] = { F + 1 };
        loom_tensor ti = { .data = indices, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                           .dtype = { LOOM_DL_INT, 64, 1 }, .shape = ishape };
        loom_tensor to = { .data = voff, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                           .dtype = { LOOM_DL_INT, 64, 1 }, .shape = oshape };
        const loom_tensor *ins[2] = { &ti, &to };
        loom_tensor *outs[1] = { out };
        loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 2, .inputs = ins,
                            .n_outputs = 1, .outputs = outs, .object = e->groups[0].tbe };
        if ((st = pk_host->op_call(call->ctx, &oc)) != LOOM_OK)
            return st;
    }
    shape[0] = F + 1;
    if ((st = rec_write_index(call, REC_EC_OUT_VALUES_OFFSETS, LOOM_DTYPE_I64, 1, shape, voff)) != LOOM_OK ||
        (st = rec_write_index(call, REC_EC_OUT_LENGTHS_OFFSETS, LOOM_DTYPE_I64, 1, shape, loff)) != LOOM_OK)
        return st;
    int64_t *lengths = rec_scratch(call, (size_t)(L > 0 ? L : 1) * sizeof(int64_t));
    if (!lengths)
        return LOOM_ENOMEM;
    for (int64_t f = 0; f < F; f++)
        if (loff[f + 1] > loff[f])
            memcpy(lengths + loff[f], kjt.lengths + kjt.lengths_offset_per_key[fkey[f]],
                   (size_t)(loff[f + 1] - loff[f]) * sizeof(int64_t));
    shape[0] = L;
    if ((st = rec_write_index(call, REC_EC_OUT_LENGTHS, kjt.lengths_dtype, 1, shape, lengths)) != LOOM_OK)
        return st;
    return rec_collection_keys(call, e, REC_EC_OUT_KEYS);
}
