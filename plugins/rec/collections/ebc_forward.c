/* SPDX-License-Identifier: BSD-3-Clause */
/*
** ebc_forward.c - the method rec.embedding_bag_collection: torchrec's
** EmbeddingBagCollection.forward on a KJT (collections.h).
**
** As torchrec: each feature of each table (table order, then feature
** order) is pooled over its bags, and the results are concatenated on
** dim 1 into the KeyedTensor [B, sum D]. Unlike torchrec, which silently
** ignores them, a KJT key that is no table's feature is refused by name, as
** is a feature the KJT lacks (torchrec: a KeyError). With VBE, torchrec
** pools each feature's deduplicated samples and expands the pooled rows
** through inverse_indices (fbgemm's group_index_select_dim0); here the bags
** are expanded through inverse_indices before pooling, which gives the very
** same rows (each is the same sum over the same ids in the same order) and
** lets one fbgemm.tbe call per group pool the whole batch.
*/
#include <string.h>

#include "collections.h"
#include "half.h"
#include "../kjt/kjt.h"

#define I64_DL { LOOM_DL_INT, 64, 1 }


loom_status rec_collection_batch(const rec_kjt *kjt, int64_t *B)
{
    const int64_t K = kjt->n_keys;
    *B = kjt->stride;
    if (kjt->inverse_indices)
        *B = kjt->inverse_indices->shape[1];
    else if (kjt->variable_stride) {
        for (int64_t k = 0; k < K; k++) {
            if (kjt->stride_per_key[k] != kjt->stride_per_key[0])
                return pk_host->fail(LOOM_EINVAL, "feature '%s' has %lld samples and '%s' %lld: a VBE KJT needs "
                                     "'inverse_indices' to pool to one batch", kjt->keys[0],
                                     (long long)kjt->stride_per_key[0], kjt->keys[k], (long long)kjt->stride_per_key[k]);
            *B = kjt->stride_per_key[0];
        }
    }
    return LOOM_OK;
}

loom_status rec_group_batch_build(loom_call *call, const rec_ebc *e, const rec_ebc_group *g, const rec_kjt *kjt,
                                const int64_t *fkey, int64_t B, rec_group_batch *out)
{
    const loom_tensor *inv = kjt->inverse_indices;
    const void *vals = loom_numel(kjt->values) ? loom_data(kjt->values) : NULL;
    const int v32 = loom_tensor_dtype_of(kjt->values) == LOOM_DTYPE_I32;
    const float *wts = e->is_weighted && loom_numel(kjt->weights) ? loom_data(kjt->weights) : NULL;
    const int64_t Fg = g->n_features;
    int64_t *offsets = rec_scratch(call, (size_t)(Fg * B + 1) * sizeof(int64_t));
    if (!offsets)
        return LOOM_ENOMEM;
    offsets[0] = 0;
    for (int64_t j = 0; j < Fg; j++) {
        const int64_t k = fkey[g->features[j]], base = kjt->lengths_offset_per_key[k];
        for (int64_t b = 0; b < B; b++) {
            int64_t r = base + (inv ? rec_get_index(inv, k * B + b) : b);
            offsets[j * B + b + 1] = offsets[j * B + b] + kjt->lengths[r];
        }
    }
    const int64_t N = offsets[Fg * B];
    int64_t *indices = rec_scratch(call, (size_t)(N > 0 ? N : 1) * sizeof(int64_t));
    float *psw = wts ? rec_scratch(call, (size_t)(N > 0 ? N : 1) * sizeof(float)) : NULL;
    if (!indices || (wts && !psw))
        return LOOM_ENOMEM;
    for (int64_t j = 0; j < Fg; j++) {
        const int64_t k = fkey[g->features[j]], base = kjt->lengths_offset_per_key[k];
        for (int64_t b = 0; b < B; b++) {
            int64_t r = base + (inv ? rec_get_index(inv, k * B + b) : b);
            int64_t src = kjt->offsets[r], dst = offsets[j * B + b], n = kjt->lengths[r];
            if (v32)
                for (int64_t i = 0; i < n; i++)
                    indices[dst + i] = ((const int32_t *)vals)[src + i];
            else if (n > 0)
                memcpy(indices + dst, (const int64_t *)vals + src, (size_t)n * sizeof(int64_t));
            if (psw && n > 0)
                memcpy(psw + dst, wts + src, (size_t)n * sizeof(float));
        }
    }
    *out = (rec_group_batch){ .indices = indices, .offsets = offsets, .psw = psw, .n_indices = N };
    return LOOM_OK;
}

loom_status rec_collection_read(loom_call *call, const rec_ebc *e, rec_kjt *kjt, int64_t **fkey, int64_t *B)
{
    rec_kjt_inputs in = rec_kjt_inputs_of(call);
    loom_status st = rec_kjt_read(call, &in, call->attrs[0].u.s, call->attrs[1].u.i, kjt);
    if (st != LOOM_OK)
        return st;
    if ((st = rec_collection_features(call, e, kjt, fkey)) != LOOM_OK)
        return st;
    if (e->is_weighted && !kjt->weights)
        return pk_host->fail(LOOM_EINVAL, "the collection is_weighted: the KJT needs 'weights'");
    /* the full batch: inverse_indices' width, else one stride for all keys */
    return rec_collection_batch(kjt, B);
}

int rec_collection_direct(const rec_ebc *e, const rec_kjt *kjt, const int64_t *fkey, int64_t B)
{
    const int64_t K = kjt->n_keys;
    int direct = e->n_groups == 1 && !kjt->inverse_indices && !kjt->variable_stride && B > 0 &&
                 e->groups[0].n_features == K && loom_tensor_dtype_of(kjt->values) == LOOM_DTYPE_I64;
    for (int64_t j = 0; direct && j < K; j++)
        direct = fkey[e->groups[0].features[j]] == j && e->groups[0].features[j] == j;
    return direct;
}

loom_status rec_ebc_forward(loom_call *call)
{
    rec_scratch_begin();
    const rec_ebc *e = call->object;
    rec_kjt kjt;
    int64_t *fkey = NULL, B = 0;
    loom_status st = rec_collection_read(call, e, &kjt, &fkey, &B);
    if (st != LOOM_OK)
        return st;
    const int64_t F = e->n_features, K = kjt.n_keys;
    const int64_t D = e->feature_offset[F];
    int64_t shape[2] = { B, D };
    loom_tensor *out;
    if ((st = pk_host->alloc_output(call, REC_EBC_OUT_VALUES, LOOM_DTYPE_F32, 2, shape, &out)) != LOOM_OK)
        return st;
    float *y = loom_numel(out) ? loom_data(out) : NULL;

    /* The common case: one group of f32 bags whose features are the KJT's keys in order, one stride: the
    ** KJT's values and offsets are already fbgemm.tbe's indices and offsets, and its output is the
    ** KeyedTensor. Nothing is copied. */
    const int direct = rec_collection_direct(e, &kjt, fkey, B) && !e->groups[0].out_fp16;
    if (direct) {
        const int64_t N = loom_numel(kjt.values);
        int64_t ishape[1] = { N }, oshape[1] = { K * B + 1 };
        loom_tensor ti = rec_view(N ? loom_data(kjt.values) : NULL, (loom_dl_dtype)I64_DL, 1, ishape);
        loom_tensor to = rec_view(kjt.offsets, (loom_dl_dtype)I64_DL, 1, oshape);
        const loom_tensor *ins[3] = { &ti, &to, e->is_weighted ? kjt.weights : NULL };
        loom_tensor *outs[1] = { out };
        loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 3, .inputs = ins,
                            .n_outputs = 1, .outputs = outs, .object = e->groups[0].tbe };
        if ((st = pk_host->op_call(call->ctx, &oc)) != LOOM_OK)
            return st;
    }

    for (int64_t gi = 0; gi < e->n_groups && B > 0 && !direct; gi++) {
        const rec_ebc_group *g = &e->groups[gi];
        const int64_t Fg = g->n_features;
        rec_group_batch gb;
        if ((st = rec_group_batch_build(call, e, g, &kjt, fkey, B, &gb)) != LOOM_OK)
            return st;
        const int64_t N = gb.n_indices;
        int64_t *indices = gb.indices, *offsets = gb.offsets;
        float *psw = gb.psw;
        const size_t osize = g->out_fp16 ? 2 : 4;
        void *gy = rec_scratch(call, (size_t)(B * (g->total_d > 0 ? g->total_d : 1)) * osize);
        if (!gy)
            return LOOM_ENOMEM;
        int64_t ishape[1] = { N }, oshape[1] = { Fg * B + 1 }, yshape[2] = { B, g->total_d };
        loom_tensor ti = rec_view(indices, (loom_dl_dtype)I64_DL, 1, ishape);
        loom_tensor to = rec_view(offsets, (loom_dl_dtype)I64_DL, 1, oshape);
        loom_tensor tw = rec_view(psw, (loom_dl_dtype){ LOOM_DL_FLOAT, 32, 1 }, 1, ishape);
        loom_tensor ty = rec_view(gy, (loom_dl_dtype){ LOOM_DL_FLOAT, (uint8_t)(osize * 8), 1 }, 2, yshape);
        const loom_tensor *ins[3] = { &ti, &to, psw ? &tw : NULL };
        loom_tensor *outs[1] = { &ty };
        loom_op_call oc = { .struct_size = sizeof oc, .op = e->tbe_op, .n_inputs = 3, .inputs = ins,
                            .n_outputs = 1, .outputs = outs, .object = g->tbe };
        if ((st = pk_host->op_call(call->ctx, &oc)) != LOOM_OK)
            return st;
        /* the group's columns into the KeyedTensor, feature by feature */
        int64_t col = 0;
        for (int64_t j = 0; j < Fg; j++) {
            const int64_t f = g->features[j], d = e->feature_offset[f + 1] - e->feature_offset[f];
            for (int64_t b = 0; b < B; b++) {
                float *dst = y + b * D + e->feature_offset[f];
                if (g->out_fp16) {
                    const uint16_t *src = (const uint16_t *)gy + b * g->total_d + col;
                    for (int64_t c = 0; c < d; c++)
                        dst[c] = pk_f16_to_f32(src[c]);
                } else {
                    memcpy(dst, (const float *)gy + b * g->total_d + col, (size_t)d * sizeof(float));
                }
            }
            col += d;
        }
    }

    if ((st = rec_collection_keys(call, e, REC_EBC_OUT_KEYS)) != LOOM_OK)
        return st;
    int64_t *lpk = rec_scratch(call, (size_t)(F > 0 ? F : 1) * sizeof(int64_t));
    if (!lpk)
        return LOOM_ENOMEM;
    for (int64_t f = 0; f < F; f++)
        lpk[f] = e->feature_offset[f + 1] - e->feature_offset[f];
    shape[0] = F;
    if ((st = rec_write_index(call, REC_EBC_OUT_LENGTH_PER_KEY, LOOM_DTYPE_I64, 1, shape, lpk)) != LOOM_OK)
        return st;
    shape[0] = F + 1;
    return rec_write_index(call, REC_EBC_OUT_OFFSET_PER_KEY, LOOM_DTYPE_I64, 1, shape, e->feature_offset);
}
