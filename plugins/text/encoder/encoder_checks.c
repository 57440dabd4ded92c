/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_checks.c - what every kernel of text.bert_encoder shares (text.so
** and text-cuda.so): the pooling attribute, the checks of the inputs
** against the model (the values on host copies of the ids), and the cost.
*/
#include <string.h>

#include "encoder.h"

enc_pooling enc_pooling_of(const char *s)
{
    return strcmp(s, "cls") == 0 ? ENC_POOL_CLS : strcmp(s, "max") == 0 ? ENC_POOL_MAX
         : strcmp(s, "none") == 0 ? ENC_POOL_NONE : ENC_POOL_MEAN;
}

loom_status enc_check_shapes(const loom_call *call, const enc_model *m, int64_t *B, int64_t *Lout)
{
    const loom_tensor *ids = call->inputs[0];
    char b1[96], b2[96];
    *B = ids->shape[0];
    *Lout = ids->shape[1];
    for (int k = 1; k < 3; k++) {
        const loom_tensor *t = call->inputs[k];
        if (t != NULL && (t->shape[0] != ids->shape[0] || t->shape[1] != ids->shape[1]))
            return pk_host->fail(LOOM_EINVAL, "'%s' is %s but 'input_ids' is %s", call->schema->inputs[k].name,
                                 pk_describe(pk_host, t, b1, sizeof b1), pk_describe(pk_host, ids, b2, sizeof b2));
    }
    if (*Lout > m->max_pos)
        return pk_host->fail(LOOM_EINVAL, "'input_ids' %s: sequence length %lld is longer than the model's "
                             "max_position_embeddings %lld", pk_describe(pk_host, ids, b1, sizeof b1),
                             (long long)*Lout, (long long)m->max_pos);
    return LOOM_OK;
}

loom_status enc_check_values(const enc_model *m, int64_t n, int64_t Lout, const int64_t *id, const int64_t *mk,
                             const int64_t *ty)
{
    for (int64_t i = 0; i < n; i++)
        if (id[i] < 0 || id[i] >= m->vocab)
            return pk_host->fail(LOOM_EINVAL, "'input_ids'[%lld][%lld] = %lld is not a token id in [0, %lld) "
                                 "(vocab_size)", (long long)(i / Lout), (long long)(i % Lout), (long long)id[i],
                                 (long long)m->vocab);
    if (mk != NULL) {
        for (int64_t i = 0; i < n; i++)
            if (mk[i] != 0 && mk[i] != 1)
                return pk_host->fail(LOOM_EINVAL, "'attention_mask'[%lld][%lld] = %lld: the mask holds 0 "
                                     "(padding) or 1 (token)", (long long)(i / Lout), (long long)(i % Lout),
                                     (long long)mk[i]);
    }
    if (ty != NULL) {
        for (int64_t i = 0; i < n; i++)
            if (ty[i] < 0 || ty[i] >= m->n_types)
                return pk_host->fail(LOOM_EINVAL, "'token_type_ids'[%lld][%lld] = %lld is not in [0, %lld) "
                                     "(type_vocab_size)", (long long)(i / Lout), (long long)(i % Lout),
                                     (long long)ty[i], (long long)m->n_types);
    }
    return LOOM_OK;
}


void enc_forward_cost(const loom_call *call, double *flops, double *bytes)
{
    const enc_model *m = call->object;
    const loom_tensor *ids = call->n_inputs > 0 ? call->inputs[0] : NULL;
    if (m == NULL || ids == NULL || ids->ndim != 2)
        return;
    /* every token counted (an upper bound when padding is skipped) */
    const double T = (double)ids->shape[0] * (double)ids->shape[1], L = (double)ids->shape[1];
    const double H = (double)m->hidden, I = (double)m->inter;
    *flops = (double)m->n_layers * T * (2.0 * (4.0 * H * H + 2.0 * H * I) + 4.0 * L * H);
    *bytes = 4.0 * (double)m->n_layers * (4.0 * H * H + 2.0 * H * I) + 4.0 * T * H;
}
