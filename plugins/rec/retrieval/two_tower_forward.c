/* SPDX-License-Identifier: BSD-3-Clause */
/*
** two_tower_forward.c - the methods of rec.two_tower (two_tower.h): a
** tower's KJT pooled by its rec.embedding_bag_collection (host->op_call),
** then its MLP layer by layer through core.linear (the core's GEMM), relu
** in place after each layer (after the last too with activation_on_last);
** and rec.two_tower_score, the row-wise dot product of the two embeddings.
*/
#include <string.h>

#include "two_tower.h"
#include "../kjt/kjt.h"

#define TT_ATTRS(A, op) REC_KJT_KEY_ATTRS(A, op)
PK_ATTR_ENUM(rec_two_tower_embed, TT_ATTRS);

static void relu(loom_tensor *t)
{
    float *y = loom_data(t);
    const int64_t n = loom_numel(t);
    for (int64_t i = 0; i < n; i++)
        y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

static loom_status embed(loom_call *call, int which)
{
    const rec_two_tower *m = call->object;
    if (m == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is a method: it needs a %s object", call->schema->name,
                             REC_TWO_TOWER_CLASS);
    const rec_tower *tw = &m->towers[which];
    const loom_named_attr attrs[2] = {
        { "keys", call->attrs[PK_ATTR(rec_two_tower_embed, keys)] },
        { "stride", call->attrs[PK_ATTR(rec_two_tower_embed, stride)] },
    };
    loom_tensor *pooled[5] = { NULL };
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->ebc_op, .n_inputs = call->n_inputs,
                        .inputs = call->inputs, .n_outputs = 5, .outputs = pooled, .n_attrs = 2, .attrs = attrs,
                        .object = tw->ebc };
    loom_status st = pk_host->op_call(call->ctx, &oc);
    for (int i = 1; i < 5; i++)
        if (pooled[i])
            pk_host->tensor_free(pooled[i]);
    if (st != LOOM_OK)
        return st;
    loom_tensor *x = pooled[0];
    const int64_t B = x->shape[0];
    for (int64_t l = 0; l < tw->n_layers && st == LOOM_OK; l++) {
        const int last = l == tw->n_layers - 1;
        loom_tensor *y = NULL;
        if (last) {
            const int64_t shape[2] = { B, tw->out_size };
            if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &y)) != LOOM_OK)
                break;
        }
        const loom_tensor *ins[1] = { x };
        loom_tensor *outs[1] = { y };
        loom_op_call lc = { .struct_size = sizeof lc, .op = m->linear_op, .n_inputs = 1, .inputs = ins,
                            .n_outputs = 1, .outputs = outs, .object = tw->layers[l] };
        st = pk_host->op_call(call->ctx, &lc);
        pk_host->tensor_free(x);
        x = NULL;
        if (st == LOOM_OK && (!last || m->relu_last))
            relu(outs[0]);
        if (!last)
            x = outs[0];
    }
    if (x)
        pk_host->tensor_free(x);
    return st;
}

loom_status rec_two_tower_query_embed(loom_call *call)
{
    return embed(call, REC_TOWER_QUERY);
}

loom_status rec_two_tower_candidate_embed(loom_call *call)
{
    return embed(call, REC_TOWER_CANDIDATE);
}

loom_status rec_two_tower_score(loom_call *call)
{
    const loom_tensor *q = call->inputs[0], *c = call->inputs[1];
    char bq[96], bc[96];
    if (q->shape[0] != c->shape[0] || q->shape[1] != c->shape[1])
        return pk_host->fail(LOOM_EINVAL, "'query' is %s and 'candidate' %s: they must have one shape [B, D]",
                             pk_describe(pk_host, q, bq, sizeof bq), pk_describe(pk_host, c, bc, sizeof bc));
    const int64_t B = q->shape[0], D = q->shape[1];
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, &B, &out);
    if (st != LOOM_OK || B == 0)
        return st;
    float *y = loom_data(out);
    const float *qd = loom_data(q), *cd = loom_data(c);
    for (int64_t b = 0; b < B; b++) {
        float s = 0.0f;
        for (int64_t d = 0; d < D; d++)
            s += qd[b * D + d] * cd[b * D + d];
        y[b] = s;
    }
    return LOOM_OK;
}
