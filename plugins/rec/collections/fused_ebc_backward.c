/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fused_ebc_backward.c - the training methods of
** rec.fused_embedding_bag_collection (fused_ebc_object.c):
**
** rec.fused_embedding_bag_collection_backward(KJT, grad): grad is the
** gradient of the forward's KeyedTensor values [B, sum D]. Each group's
** columns of it go with the group's batch (rebuilt from the KJT exactly as
** the forward built it, VBE rows expanded through inverse_indices, so the
** expanded rows' gradients are summed into their ids as torchrec's
** index_select backward sums them) to fbgemm.tbe_backward on the group's
** object: one optimizer step of every table, as the backward of torchrec's
** fused module takes it.
**
** rec.fused_embedding_bag_collection_save(path): the tables under
** torchrec's state_dict keys (embedding_bags.<table>.weight), the optimizer
** state under its fused optimizer's keys (<table>.weight.momentum_1 / _2)
** and the step count `iter`, one safetensors file that create reads back.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collections.h"
#include "st_write.h"
#include "../kjt/kjt.h"

#define I64_DL { LOOM_DL_INT, 64, 1 }
#define F32_DL { LOOM_DL_FLOAT, 32, 1 }

enum { FUSED_IN_GRAD = 6 };

loom_status rec_fused_ebc_backward(loom_call *call)
{
    rec_scratch_begin();
    const rec_ebc *e = call->object;
    rec_kjt kjt;
    int64_t *fkey = NULL, B = 0;
    loom_status st = rec_collection_read(call, e, &kjt, &fkey, &B);
    if (st != LOOM_OK)
        return st;
    const int64_t D = e->feature_offset[e->n_features];
    const loom_tensor *grad = call->inputs[FUSED_IN_GRAD];
    char b1[96];
    if (loom_tensor_dtype_of(grad) != LOOM_DTYPE_F32 || grad->ndim != 2 || grad->shape[0] != B
        || grad->shape[1] != D || !loom_is_contiguous(grad))
        return pk_host->fail(LOOM_EINVAL, "'grad' is %s: it must be the gradient of the forward's KeyedTensor "
                             "values, a contiguous f32 [B = %lld, sum D = %lld]",
                             pk_describe(pk_host, grad, b1, sizeof b1), (long long)B, (long long)D);
    const float *gy = B * D > 0 ? loom_data(grad) : NULL;
    /* As the forward: one group whose features are the KJT's keys in order, one stride, i64 ids: the KJT's
    ** values and offsets are the TBE's indices and offsets and grad is its output's gradient as it is. */
    const int direct = rec_collection_direct(e, &kjt, fkey, B);
    /* every group takes a step, also on an empty batch: fbgemm counts it (iter) */
    for (int64_t gi = 0; gi < e->n_groups; gi++) {
        const rec_ebc_group *g = &e->groups[gi];
        rec_group_batch gb;
        float *gg;
        if (direct) {
            gb = (rec_group_batch){ .indices = loom_numel(kjt.values) ? loom_data(kjt.values) : NULL,
                                    .offsets = kjt.offsets, .n_indices = loom_numel(kjt.values),
                                    .psw = e->is_weighted && loom_numel(kjt.weights) ? loom_data(kjt.weights) : NULL };
            gg = (float *)gy;
        } else {
            if ((st = rec_group_batch_build(call, e, g, &kjt, fkey, B, &gb)) != LOOM_OK)
                return st;
            /* the group's columns of the KeyedTensor, in the TBE output's order */
            gg = rec_scratch(call, (size_t)(B * g->total_d > 0 ? B * g->total_d : 1) * sizeof(float));
            if (!gg)
                return LOOM_ENOMEM;
            int64_t col = 0;
            for (int64_t j = 0; j < g->n_features; j++) {
                const int64_t f = g->features[j], d = e->feature_offset[f + 1] - e->feature_offset[f];
                for (int64_t b = 0; b < B; b++)
                    memcpy(gg + b * g->total_d + col, gy + b * D + e->feature_offset[f], (size_t)d * sizeof(float));
                col += d;
            }
        }
        int64_t gshape[2] = { B, g->total_d }, ishape[1] = { gb.n_indices }, oshape[1] = { g->n_features * B + 1 };
        loom_tensor tg = rec_view(gg, (loom_dl_dtype)F32_DL, 2, gshape);
        loom_tensor ti = rec_view(gb.indices, (loom_dl_dtype)I64_DL, 1, ishape);
        loom_tensor to = rec_view(gb.offsets, (loom_dl_dtype)I64_DL, 1, oshape);
        loom_tensor tw = rec_view(gb.psw, (loom_dl_dtype)F32_DL, 1, ishape);
        const loom_tensor *ins[4] = { &tg, &ti, &to, gb.psw ? &tw : NULL };
        loom_op_call oc = { .struct_size = sizeof oc, .op = e->backward_op, .n_inputs = 4, .inputs = ins,
                            .object = g->tbe };
        if ((st = pk_host->op_call(call->ctx, &oc)) != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

/* fbgemm.tbe_state(name, table) of a group's object: a new tensor. */
static loom_status tbe_state(loom_call *call, const rec_ebc *e, loom_object *tbe, const char *name, int64_t table,
                           loom_tensor **out)
{
    const loom_named_attr attrs[2] = {
        { "name", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(name), .u.s = name } },
        { "table", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u.i = table } },
    };
    *out = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = e->state_op, .n_outputs = 1, .outputs = out, .n_attrs = 2,
                        .attrs = attrs, .object = tbe };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status rec_fused_ebc_save(loom_call *call)
{
    const rec_ebc *e = call->object;
    const char *op = "rec.fused_embedding_bag_collection_save";
    const int64_t per = 1 + e->fused_momenta, n = e->n_tables * per + 1;
    loom_tensor **ts = calloc((size_t)n, sizeof *ts);
    pk_st_entry *en = calloc((size_t)n, sizeof *en);
    char (*names)[320] = calloc((size_t)n, sizeof *names);
    loom_status st = ts && en && names ? LOOM_OK : pk_host->fail(LOOM_ENOMEM, "%s: out of memory", op);
    int64_t m = 0;
    for (int64_t gi = 0; st == LOOM_OK && gi < e->n_groups; gi++) {
        const rec_ebc_group *g = &e->groups[gi];
        for (int64_t i = 0; st == LOOM_OK && i < g->n_tables; i++) {
            const char *tn = e->table_names[g->tables[i]];
            for (int k = 0; st == LOOM_OK && k <= e->fused_momenta; k++) {
                if (k == 0)
                    snprintf(names[m], sizeof names[m], "embedding_bags.%s.weight", tn);
                else
                    snprintf(names[m], sizeof names[m], "%s.weight.momentum_%d", tn, k);
                st = tbe_state(call, e, g->tbe, k == 0 ? "weight" : k == 1 ? "momentum1" : "momentum2", i, &ts[m]);
                m++;
            }
        }
    }
    if (st == LOOM_OK && e->n_groups > 0) {
        snprintf(names[m], sizeof names[m], "iter");
        st = tbe_state(call, e, e->groups[0].tbe, "iter", 0, &ts[m]);
        m++;
    }
    for (int64_t i = 0; st == LOOM_OK && i < m; i++) {
        en[i] = (pk_st_entry){ .name = names[i], .dtype = loom_tensor_dtype_of(ts[i]), .ndim = ts[i]->ndim,
                               .data = loom_data(ts[i]) };
        for (int32_t d = 0; d < ts[i]->ndim && d < 4; d++)
            en[i].shape[d] = ts[i]->shape[d];
    }
    if (st == LOOM_OK)
        st = pk_safetensors_write(pk_host, call->attrs[0].u.s, en, m, op);
    for (int64_t i = 0; ts && i < n; i++)
        if (ts[i])
            pk_host->tensor_free(ts[i]);
    free(ts);
    free(en);
    free(names);
    return st;
}
