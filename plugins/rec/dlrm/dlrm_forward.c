/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dlrm_forward.c - the methods rec.dlrm and rec.dlrm_train_step (dlrm.h).
**
** Both run the forward with every layer's output kept in the call's
** scratch: the dense arch (toolkit GEMM, bias and relu in its epilogue),
** the KJT pooled by the fused collection (host->op_call), the interaction
** (dlrm_interaction.c), the over arch. The training step then takes
** DLRMTrain's loss, BCEWithLogitsLoss(logits.squeeze(-1), labels) averaged
** over the batch (its sum in double, then rounded), and runs the backward: the gradient of the logits sigmoid(z) - y over B, the
** over arch and the dense arch layer by layer with their optimizer steps
** (dlrm_mlp.c), the interaction's backward, and the gradient of the pooled
** features to the collection's backward, which steps the tables.
** Sharded (dlrm.h), the collection is the sharded one and the gradients are
** of the global batch.
*/
#include <math.h>
#include <string.h>

#include "dlrm.h"
#include "../kjt/kjt.h"

#define DLRM_ATTRS(A, op) REC_KJT_KEY_ATTRS(A, op)
PK_ATTR_ENUM(rec_dlrm_method, DLRM_ATTRS);

/* What the forward leaves for the backward. */
typedef struct dlrm_pass {
    int64_t B;
    const float *dense;        /* [B, dense_in] the input */
    float *act[2 * REC_DLRM_MAX_LAYERS];   /* each layer's output */
    float *pooled;             /* [B, F D] (the collection's output, freed by the caller) */
    loom_tensor *pooled_t;
    float *inter;              /* [B, D + F (F + 1) / 2] */
} dlrm_pass;

/* Sharded: the KJT as the sharded collection takes it (values, lengths, weights in its feature order). */
static loom_status sharded_inputs(loom_call *call, const loom_tensor **ins)
{
    const loom_tensor *const *kjt = call->inputs + REC_DLRM_IN_KJT;
    if (!kjt[1] || kjt[2] || kjt[4] || kjt[5] || *call->attrs[PK_ATTR(rec_dlrm_method, keys)].u.s ||
        call->attrs[PK_ATTR(rec_dlrm_method, stride)].u.i != -1)
        return pk_host->fail(LOOM_EINVAL, "%s: a sharded model takes this rank's KJT as 'values' and 'lengths' "
                             "(and 'weights') in the collection's feature order: no 'offsets', VBE inputs, "
                             "'keys' or 'stride'", call->schema->name);
    ins[0] = kjt[0];
    ins[1] = kjt[1];
    ins[2] = kjt[3];
    return LOOM_OK;
}

static loom_status pool(loom_call *call, rec_dlrm *m, dlrm_pass *p)
{
    if (m->sharded) {
        const loom_tensor *ins[3];
        loom_status st = sharded_inputs(call, ins);
        loom_tensor *out = NULL;
        loom_op_call oc = { .struct_size = sizeof oc, .op = m->ebc_forward, .n_inputs = 3, .inputs = ins,
                            .n_outputs = 1, .outputs = &out, .object = m->ebc };
        if (st == LOOM_OK)
            st = pk_host->op_call(call->ctx, &oc);
        if (st != LOOM_OK)
            return st;
        p->pooled_t = out;
        if (out->shape[0] != p->B)
            return pk_host->fail(LOOM_EINVAL, "%s: the KJT holds %lld samples and 'dense' %lld: one batch for both",
                                 call->schema->name, (long long)out->shape[0], (long long)p->B);
        p->pooled = p->B > 0 ? loom_data(out) : NULL;
        return LOOM_OK;
    }
    const loom_named_attr attrs[2] = {
        { "keys", call->attrs[PK_ATTR(rec_dlrm_method, keys)] },
        { "stride", call->attrs[PK_ATTR(rec_dlrm_method, stride)] },
    };
    loom_tensor *out[5] = { NULL };
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->ebc_forward, .n_inputs = 6,
                        .inputs = call->inputs + REC_DLRM_IN_KJT, .n_outputs = 5, .outputs = out, .n_attrs = 2,
                        .attrs = attrs, .object = m->ebc };
    loom_status st = pk_host->op_call(call->ctx, &oc);
    for (int i = 1; i < 5; i++)
        if (out[i])
            pk_host->tensor_free(out[i]);
    if (st != LOOM_OK)
        return st;
    p->pooled_t = out[0];
    if (out[0]->shape[0] != p->B)
        return pk_host->fail(LOOM_EINVAL, "%s: the KJT holds %lld samples and 'dense' %lld: one batch for both",
                             call->schema->name, (long long)out[0]->shape[0], (long long)p->B);
    p->pooled = p->B > 0 ? loom_data(out[0]) : NULL;
    return LOOM_OK;
}

/* The forward into p; logits (when not NULL, [B, out]) receives the last layer's output. */
static loom_status forward(loom_call *call, rec_dlrm *m, dlrm_pass *p, float *logits)
{
    const loom_tensor *dense = call->inputs[REC_DLRM_IN_DENSE];
    char b1[96];
    if (dense->ndim != 2 || dense->shape[1] != m->dense_in || !loom_is_contiguous(dense))
        return pk_host->fail(LOOM_EINVAL, "%s: 'dense' is %s: it must be a contiguous f32 [B, dense_in_features "
                             "= %lld]", call->schema->name, pk_describe(pk_host, dense, b1, sizeof b1),
                             (long long)m->dense_in);
    p->B = dense->shape[0];
    p->dense = p->B > 0 ? loom_data(dense) : NULL;
    loom_status st = pool(call, m, p);
    if (st != LOOM_OK)
        return st;
    const int64_t B = p->B, width = m->dim + m->n_features * (m->n_features + 1) / 2;
    size_t floats = (size_t)(B * width + rec_dlrm_interact_work(B, m->n_features, m->dim));
    for (int64_t i = 0; i < m->n_layers; i++)
        floats += (size_t)(B * m->layers[i].out);
    float *buf = pk_host->scratch(call->ctx, (floats + 16 * (size_t)m->n_layers + 16) * sizeof(float));
    if (!buf)
        return LOOM_ENOMEM;
    for (int64_t i = 0; i < m->n_layers; i++) {
        p->act[i] = buf;
        buf += (B * m->layers[i].out + 15) & ~(int64_t)15;
    }
    p->inter = buf;
    float *work = buf + ((B * width + 15) & ~(int64_t)15);
    if (logits)
        p->act[m->n_layers - 1] = logits;
    const float *x = p->dense;
    for (int64_t i = 0; i < m->n_dense && st == LOOM_OK; i++) {
        st = rec_dlrm_layer_forward(call->ctx, &m->layers[i], x, p->act[i], B);
        x = p->act[i];
    }
    if (st != LOOM_OK)
        return st;
    if ((st = rec_dlrm_interact(call->ctx, x, p->pooled, p->inter, B, m->n_features, m->dim, work)) != LOOM_OK)
        return st;
    x = p->inter;
    for (int64_t i = m->n_dense; i < m->n_layers && st == LOOM_OK; i++) {
        st = rec_dlrm_layer_forward(call->ctx, &m->layers[i], x, p->act[i], B);
        x = p->act[i];
    }
    return st;
}

loom_status rec_dlrm_forward(loom_call *call)
{
    rec_dlrm *m = call->object;
    const loom_tensor *dense = call->inputs[REC_DLRM_IN_DENSE];
    const int64_t shape[2] = { dense->ndim == 2 ? dense->shape[0] : 0, m->layers[m->n_layers - 1].out };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    if (st != LOOM_OK)
        return st;
    dlrm_pass p = { 0 };
    pthread_mutex_lock(&m->lock);
    st = forward(call, m, &p, shape[0] > 0 ? loom_data(out) : NULL);
    pthread_mutex_unlock(&m->lock);
    if (p.pooled_t)
        pk_host->tensor_free(p.pooled_t);
    return st;
}

/* mean BCEWithLogitsLoss of z against y, and its gradient (sigmoid(z) - y) / G in gz (G: the global batch) */
static float bce_with_logits(const float *z, const float *y, float *gz, int64_t B, int64_t G)
{
    double sum = 0.0;
    for (int64_t b = 0; b < B; b++) {
        const double zb = z[b], yb = y[b];
        sum += (zb > 0.0 ? zb : 0.0) - zb * yb + log1p(exp(-fabs(zb)));
        gz[b] = (float)((1.0 / (1.0 + exp(-zb)) - yb) / (double)G);
    }
    return B > 0 ? (float)(sum / (double)B) : NAN;   /* torch's mean of nothing is nan */
}

/* Sharded: the global batch, every rank's B summed (exact in f32 below 2^24 samples). */
static loom_status global_batch(loom_call *call, const rec_dlrm *m, int64_t B, int64_t *G)
{
    float b = (float)B;
    int64_t one = 1;
    loom_tensor tb = rec_view(&b, (loom_dl_dtype){ LOOM_DL_FLOAT, 32, 1 }, 1, &one);
    const loom_tensor *in = &tb;
    loom_tensor *sum = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->allreduce, .n_inputs = 1, .inputs = &in, .n_outputs = 1,
                        .outputs = &sum, .object = m->ebc };
    loom_status st = pk_host->op_call(call->ctx, &oc);
    if (st == LOOM_OK)
        *G = (int64_t)*(const float *)loom_data(sum);
    if (sum)
        pk_host->tensor_free(sum);
    return st;
}

static loom_status backward(loom_call *call, rec_dlrm *m, dlrm_pass *p, const float *labels)
{
    const int64_t B = p->B, F = m->n_features, D = m->dim, width = D + F * (F + 1) / 2;
    int64_t widest = width, work = 0;
    for (int64_t i = 0; i < m->n_layers; i++) {
        const rec_dlrm_layer *l = &m->layers[i];
        widest = l->in > widest ? l->in : widest;
        widest = l->out > widest ? l->out : widest;
        work = rec_dlrm_layer_work(l) > work ? rec_dlrm_layer_work(l) : work;
    }
    const size_t floats = (size_t)(2 * B * widest + work + B * F * D + rec_dlrm_interact_work(B, F, D) + 64);
    float *buf = pk_host->scratch(call->ctx, floats * sizeof(float));
    if (!buf)
        return LOOM_ENOMEM;
    float *ga = buf, *gb = ga + ((B * widest + 15) & ~(int64_t)15), *ge = gb + ((B * widest + 15) & ~(int64_t)15);
    float *w = ge + ((B * F * D + 15) & ~(int64_t)15), *iw = w + ((work + 15) & ~(int64_t)15);
    /* ga: the gradient of the current layer's output; gb: of its input */
    const float *z = p->act[m->n_layers - 1];
    loom_tensor *loss;
    const int64_t one = 1;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 1, &one, &loss);
    int64_t G = B;
    if (st == LOOM_OK && m->sharded)
        st = global_batch(call, m, B, &G);
    if (st != LOOM_OK)
        return st;
    *(float *)loom_data(loss) = bce_with_logits(z, labels, ga, B, G);
    for (int64_t i = m->n_layers - 1; i >= m->n_dense && st == LOOM_OK; i--) {
        const float *x = i == m->n_dense ? p->inter : p->act[i - 1];
        st = rec_dlrm_layer_backward(call->ctx, m, &m->layers[i], x, p->act[i], ga, gb, B, w);
        float *t = ga;
        ga = gb;
        gb = t;
    }
    if (st != LOOM_OK)
        return st;
    /* ga: the gradient of the interaction's output; gb takes the dense arch output's */
    if ((st = rec_dlrm_interact_backward(call->ctx, p->act[m->n_dense - 1], p->pooled, ga, gb, ge, B, F, D, iw))
        != LOOM_OK)
        return st;
    float *t2 = ga;
    ga = gb;
    gb = t2;
    for (int64_t i = m->n_dense - 1; i >= 0 && st == LOOM_OK; i--) {
        const float *x = i == 0 ? p->dense : p->act[i - 1];
        st = rec_dlrm_layer_backward(call->ctx, m, &m->layers[i], x, p->act[i], ga, i > 0 ? gb : NULL, B, w);
        float *t3 = ga;
        ga = gb;
        gb = t3;
    }
    if (st != LOOM_OK)
        return st;
    /* the tables' step: the collection's backward of the pooled features' gradient */
    const loom_named_attr attrs[2] = {
        { "keys", call->attrs[PK_ATTR(rec_dlrm_method, keys)] },
        { "stride", call->attrs[PK_ATTR(rec_dlrm_method, stride)] },
    };
    int64_t gshape[2] = { B, F * D };
    loom_tensor tg = rec_view(B > 0 ? ge : NULL, (loom_dl_dtype){ LOOM_DL_FLOAT, 32, 1 }, 2, gshape);
    if (m->sharded) {
        const loom_tensor *sins[4];
        if ((st = sharded_inputs(call, sins)) != LOOM_OK)
            return st;
        sins[3] = &tg;
        loom_op_call soc = { .struct_size = sizeof soc, .op = m->ebc_backward, .n_inputs = 4, .inputs = sins,
                             .object = m->ebc };
        return pk_host->op_call(call->ctx, &soc);
    }
    const loom_tensor *ins[7];
    for (int i = 0; i < 6; i++)
        ins[i] = call->inputs[REC_DLRM_IN_KJT + i];
    ins[6] = &tg;
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->ebc_backward, .n_inputs = 7, .inputs = ins,
                        .n_attrs = 2, .attrs = attrs, .object = m->ebc };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status rec_dlrm_train_step(loom_call *call)
{
    rec_dlrm *m = call->object;
    const loom_tensor *dense = call->inputs[REC_DLRM_IN_DENSE], *labels = call->inputs[REC_DLRM_IN_LABELS];
    char b1[96];
    if (m->layers[m->n_layers - 1].out != 1)
        return pk_host->fail(LOOM_EINVAL, "%s: the over arch ends in %lld logits: DLRMTrain's loss takes one per "
                             "sample (over_arch_layer_sizes ending in 1)", call->schema->name,
                             (long long)m->layers[m->n_layers - 1].out);
    if (dense->ndim != 2 || labels->ndim != 1 || labels->shape[0] != dense->shape[0] || !loom_is_contiguous(labels))
        return pk_host->fail(LOOM_EINVAL, "%s: 'labels' is %s: it must be a contiguous f32 [B = %lld], one per row "
                             "of 'dense'", call->schema->name, pk_describe(pk_host, labels, b1, sizeof b1),
                             (long long)(dense->ndim == 2 ? dense->shape[0] : -1));
    dlrm_pass p = { 0 };
    pthread_mutex_lock(&m->lock);
    loom_status st = forward(call, m, &p, NULL);
    if (st == LOOM_OK)
        st = backward(call, m, &p, p.B > 0 ? loom_data(labels) : NULL);
    pthread_mutex_unlock(&m->lock);
    if (p.pooled_t)
        pk_host->tensor_free(p.pooled_t);
    return st;
}
