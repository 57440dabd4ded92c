/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_forward.c - the text.bert_encoder method: Hugging Face's
** BertModel forward (eval mode, absolute positions 0..L-1, the additive
** attention mask) and sentence-transformers' pooling.
**
** Tokens that cannot change the result are never computed. A token
** attends only to unmasked tokens, so masked tokens influence nothing but
** their own rows; the pooling then decides which rows are needed:
**   mean, max  the unmasked tokens (none at all when a row is all padding:
**              the result is then 0, or -1e9 for max, as in torch);
**   cls        token 0 and the unmasked tokens;
**   none       every token (last_hidden_state has a row for padding too).
** The rows kept of all sequences are packed into one [T, H] matrix, so the
** dense layers run as one product each over T rows and attention runs per
** sequence over its n_b rows: no FLOP goes to padding in the pooled modes.
** A sequence whose mask is all 0 keeps every token and attends uniformly
** to all of them, as transformers' -FLT_MAX additive mask makes it do.
**
** Products go through the core (host->op_call). The dense layers are
** core.linear method calls on the objects create made (dense=linear: the
** weights were packed once for the GEMM, so a call packs only its rows), or
** core.matmul calls that go where LOOM_BACKENDS sends them (dense=matmul:
** cpu, onednn; each packs the weights anew). The per-sequence attention
** products go to the cpu backend (loom's GEMM), because their shapes change
** with every sequence length and oneDNN builds a primitive per shape (ms
** each, 64 cached), which would cost more than the products themselves.
** The q/k/v heads are strided views of the [T, 3H] product, so no copy is
** made before attention. LayerNorm, bias +
** activation and the masked softmax are the row kernels of encoder.h,
** threaded over rows with the core's pool.
*/
#include <math.h>
#include <string.h>

#include "encoder.h"

#define W TEXT_ENCODER_CLASS

enum stage { ST_EMBED, ST_BIAS_QKV, ST_LN_ATTN, ST_BIAS_ACT, ST_LN_OUT, ST_SOFTMAX, ST_UNHEAD, ST_POOL };

typedef struct fwd {
    const enc_model *m;
    const enc_rows *rows;
    int64_t B, L, T;
    int64_t *off;                  /* [B+1]: sequence b owns packed rows off[b] .. off[b+1] */
    int32_t *pos;                  /* [T]: position of each packed row in its sequence */
    int64_t *flat;                 /* [T]: b * L + position, into the [B, L] inputs */
    uint8_t *key;                  /* [T]: 1 for an unmasked token (a key others attend to) */
    uint8_t *all_keys;             /* [B]: 1 when every packed row of b is a key (no mask in softmax) */
    const int64_t *ids, *types;
    float *x;                      /* [T, H] hidden states */
    float *big;                    /* [T, max(3H, I)]: q|k|v, later the intermediate activations */
    float *ctx;                    /* [T, H] attention context */
    float *tmp;                    /* [T, H] product before its residual LayerNorm */
    float *scores;                 /* [heads, n, n] of one sequence */
    float *heads_out;              /* [heads, n, d] of one sequence */
    enc_pooling pooling;
    int normalize;
    float *out;
} fwd;

typedef struct rows_job {
    const fwd *f;
    enum stage stage;
    const enc_layer *layer;
    int64_t seq, n;                /* ST_SOFTMAX, ST_UNHEAD: the sequence and its row count */
} rows_job;

static void pool_one(const fwd *f, int64_t b);

static void rows_fn(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const rows_job *j = user;
    const fwd *f = j->f;
    const enc_model *m = f->m;
    const enc_layer *L = j->layer;
    const int64_t H = m->hidden, I = m->inter;
    for (int64_t i = begin; i < end; i++) {
        switch (j->stage) {
        case ST_EMBED: {
            const int64_t t = f->flat[i];
            const int64_t ty = f->types != NULL ? f->types[t] : 0;
            f->rows->layernorm(f->x + i * H, m->word + f->ids[t] * H, m->pos + (int64_t)f->pos[i] * H,
                               m->type + ty * H, m->emb_g, m->emb_b, H, m->eps);
            break;
        }
        case ST_BIAS_QKV:
            f->rows->bias_act(f->big + i * 3 * H, L->bqkv, 3 * H, -1);
            break;
        case ST_LN_ATTN:
            f->rows->layernorm(f->x + i * H, f->x + i * H, f->tmp + i * H, L->bo, L->ln1_g, L->ln1_b, H, m->eps);
            break;
        case ST_BIAS_ACT:
            f->rows->bias_act(f->big + i * I, L->bi, I, (int)m->act);
            break;
        case ST_LN_OUT:
            f->rows->layernorm(f->x + i * H, f->x + i * H, f->tmp + i * H, L->bout, L->ln2_g, L->ln2_b, H, m->eps);
            break;
        case ST_SOFTMAX: {
            const int64_t n = j->n;
            const uint8_t *keep = f->all_keys[j->seq] ? NULL : f->key + f->off[j->seq];
            f->rows->softmax(f->scores + i * n, n, 1.0f / sqrtf((float)m->head_dim), keep);
            break;
        }
        case ST_UNHEAD: {
            const int64_t n = j->n, d = m->head_dim;
            float *dst = f->ctx + (f->off[j->seq] + i) * H;
            for (int64_t h = 0; h < m->heads; h++)
                memcpy(dst + h * d, f->heads_out + (h * n + i) * d, (size_t)d * sizeof(float));
            break;
        }
        case ST_POOL:
            pool_one(f, i);
            break;
        }
    }
}

static loom_status run_rows(loom_call *call, const fwd *f, enum stage stage, const enc_layer *layer, int64_t n_rows,
                            int64_t seq, int64_t n)
{
    if (n_rows == 0)
        return LOOM_OK;
    rows_job j = { f, stage, layer, seq, n };
    const int64_t per_row = stage == ST_SOFTMAX ? n : f->m->hidden;
    int64_t grain = 16384 / (per_row > 0 ? per_row : 1);
    return pk_host->parallel_for(call->ctx, n_rows, grain < 1 ? 1 : grain, rows_fn, &j);
}

/* A tensor over scratch memory (or the model's matrices) for op_call. */
static loom_tensor view(float *data, int32_t ndim, int64_t *shape, int64_t *strides)
{
    loom_tensor t = { .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                      .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape, .strides = strides, .byte_offset = 0 };
    return t;
}

/* out = a @ b through core.matmul, out compact; backend NULL: the policy's. */
static loom_status matmul(loom_call *call, const fwd *f, loom_tensor *a, loom_tensor *b, loom_tensor *out,
                          const char *backend)
{
    const loom_tensor *ins[2] = { a, b };
    loom_tensor *outs[1] = { out };
    loom_op_call oc = { .struct_size = sizeof oc, .op = f->m->matmul, .n_inputs = 2, .inputs = ins,
                        .n_outputs = 1, .outputs = outs, .backend = backend };
    return pk_host->op_call(call->ctx, &oc);
}

/* y [T, n_out] (compact) = x [T, n_in] (compact) @ w [n_in, n_out]: through
** the layer's core.linear object lin (weights packed at create) when there
** is one, else core.matmul on w. */
static loom_status dense(loom_call *call, const fwd *f, const float *x, int64_t n_in, const float *w,
                         loom_object *lin, int64_t n_out, float *y)
{
    int64_t xs[2] = { f->T, n_in }, ws[2] = { n_in, n_out }, ys[2] = { f->T, n_out };
    loom_tensor tx = view((float *)x, 2, xs, NULL), tw = view((float *)w, 2, ws, NULL), ty = view(y, 2, ys, NULL);
    if (lin == NULL)
        return matmul(call, f, &tx, &tw, &ty, NULL);
    const loom_tensor *ins[1] = { &tx };
    loom_tensor *outs[1] = { &ty };
    loom_op_call oc = { .struct_size = sizeof oc, .op = f->m->linear, .n_inputs = 1, .inputs = ins,
                        .n_outputs = 1, .outputs = outs, .object = lin };
    return pk_host->op_call(call->ctx, &oc);
}

/* Self-attention of sequence b over its n packed rows, into f->ctx. */
static loom_status attend(loom_call *call, const fwd *f, int64_t b)
{
    const enc_model *m = f->m;
    const int64_t n = f->off[b + 1] - f->off[b];
    if (n == 0)
        return LOOM_OK;
    const int64_t H = m->hidden, d = m->head_dim, nh = m->heads;
    const int64_t wide = 3 * H;                /* the row stride of q|k|v */
    float *q = f->big + f->off[b] * wide;
    int64_t qs[3] = { nh, n, d }, qst[3] = { d, wide, 1 };
    int64_t ks[3] = { nh, d, n }, kst[3] = { d, 1, wide };
    int64_t ss[3] = { nh, n, n }, os[3] = { nh, n, d };
    loom_tensor tq = view(q, 3, qs, qst), tk = view(q + H, 3, ks, kst), tsc = view(f->scores, 3, ss, NULL);
    loom_status st = matmul(call, f, &tq, &tk, &tsc, "cpu");
    if (st == LOOM_OK)
        st = run_rows(call, f, ST_SOFTMAX, NULL, nh * n, b, n);
    loom_tensor tv = view(q + 2 * H, 3, qs, qst), to = view(f->heads_out, 3, os, NULL);
    if (st == LOOM_OK)
        st = matmul(call, f, &tsc, &tv, &to, "cpu");
    if (st == LOOM_OK)
        st = run_rows(call, f, ST_UNHEAD, NULL, n, b, n);
    return st;
}

static void pool_one(const fwd *f, int64_t b)
{
    const int64_t H = f->m->hidden;
    float *o = f->out + b * H;
    const int64_t r0 = f->off[b], r1 = f->off[b + 1];
    switch (f->pooling) {
    case ENC_POOL_CLS:
        memcpy(o, f->x + r0 * H, (size_t)H * sizeof(float));     /* row r0 is token 0 */
        break;
    case ENC_POOL_MEAN: {
        int64_t cnt = 0;
        for (int64_t k = 0; k < H; k++)
            o[k] = 0.0f;
        for (int64_t r = r0; r < r1; r++)
            if (f->key[r]) {
                cnt++;
                for (int64_t k = 0; k < H; k++)
                    o[k] += f->x[r * H + k];
            }
        /* sentence-transformers: sum / clamp(count, min=1e-9) */
        const float inv = cnt > 0 ? 1.0f / (float)cnt : 0.0f;
        for (int64_t k = 0; k < H; k++)
            o[k] *= inv;
        break;
    }
    case ENC_POOL_MAX:
        /* sentence-transformers sets padding to -1e9 before the max */
        for (int64_t k = 0; k < H; k++)
            o[k] = -1e9f;
        for (int64_t r = r0; r < r1; r++)
            if (f->key[r])
                for (int64_t k = 0; k < H; k++)
                    o[k] = fmaxf(o[k], f->x[r * H + k]);
        break;
    case ENC_POOL_NONE:
        break;
    }
    if (f->normalize) {
        /* torch.nn.functional.normalize: x / max(||x||_2, 1e-12) */
        double ss = 0.0;
        for (int64_t k = 0; k < H; k++)
            ss += (double)o[k] * o[k];
        const double nrm = sqrt(ss);
        const float inv = (float)(1.0 / (nrm > 1e-12 ? nrm : 1e-12));
        for (int64_t k = 0; k < H; k++)
            o[k] *= inv;
    }
}

/* Which rows each sequence keeps (see the top of the file). */
static void plan_rows(fwd *f, const int64_t *mask)
{
    int64_t t = 0;
    for (int64_t b = 0; b < f->B; b++) {
        f->off[b] = t;
        int64_t unmasked = 0;
        for (int64_t p = 0; p < f->L; p++)
            unmasked += mask == NULL || mask[b * f->L + p];
        const int keep_all = f->pooling == ENC_POOL_NONE || (unmasked == 0 && f->pooling == ENC_POOL_CLS);
        int all_keys = 1;
        for (int64_t p = 0; p < f->L; p++) {
            const int k = mask == NULL || mask[b * f->L + p] != 0;
            if (!(keep_all || k || (p == 0 && f->pooling == ENC_POOL_CLS)))
                continue;
            f->pos[t] = (int32_t)p;
            f->flat[t] = b * f->L + p;
            f->key[t] = (uint8_t)k;
            all_keys &= k;
            t++;
        }
        f->all_keys[b] = (uint8_t)all_keys;
    }
    f->off[f->B] = t;
    f->T = t;
}

static void *take(loom_call *call, size_t bytes, loom_status *st)
{
    if (*st != LOOM_OK)
        return NULL;
    void *p = pk_host->scratch(call->ctx, bytes > 0 ? bytes : 1);
    if (p == NULL)
        *st = pk_host->fail(LOOM_ENOMEM, "%s: out of scratch memory (%zu bytes)", W, bytes);
    return p;
}

loom_status enc_forward_run(loom_call *call)
{
    const enc_model *m = call->object;
    if (m == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is a method: it needs a %s object", W, W);
    fwd f = { .m = m, .rows = enc_rows_current() };
    f.pooling = enc_pooling_of(call->attrs[PK_ATTR(text_encoder, pooling)].u.s);
    f.normalize = call->attrs[PK_ATTR(text_encoder, normalize)].u.b != 0;
    if (f.normalize && f.pooling == ENC_POOL_NONE)
        return pk_host->fail(LOOM_EINVAL, "normalize=true needs a pooling (mean, cls or max): pooling none returns "
                             "every token's hidden state");
    loom_status st = enc_check_shapes(call, m, &f.B, &f.L);
    if (st == LOOM_OK)
        st = enc_check_values(m, f.B * f.L, f.L, loom_data(call->inputs[0]),
                              call->inputs[1] != NULL ? loom_data(call->inputs[1]) : NULL,
                              call->inputs[2] != NULL ? loom_data(call->inputs[2]) : NULL);
    if (st != LOOM_OK)
        return st;
    const int64_t H = m->hidden;
    loom_tensor *out;
    const int64_t pooled_shape[2] = { f.B, H }, full_shape[3] = { f.B, f.L, H };
    st = f.pooling == ENC_POOL_NONE ? pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 3, full_shape, &out)
                                    : pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, pooled_shape, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    f.out = loom_data(out);
    if (f.L == 0) {                        /* no tokens: mean 0, max -1e9, as the pooling of nothing */
        for (int64_t i = 0; i < f.B * H; i++)
            f.out[i] = f.pooling == ENC_POOL_MAX ? -1e9f : 0.0f;
        return LOOM_OK;
    }
    f.ids = loom_data(call->inputs[0]);
    f.types = call->inputs[2] != NULL ? loom_data(call->inputs[2]) : NULL;
    const int64_t *mask = call->inputs[1] != NULL ? loom_data(call->inputs[1]) : NULL;
    const int64_t N = f.B * f.L;
    f.off = take(call, (size_t)(f.B + 1) * sizeof *f.off, &st);
    f.pos = take(call, (size_t)N * sizeof *f.pos, &st);
    f.flat = take(call, (size_t)N * sizeof *f.flat, &st);
    f.key = take(call, (size_t)N, &st);
    f.all_keys = take(call, (size_t)f.B, &st);
    if (st != LOOM_OK)
        return st;
    plan_rows(&f, mask);
    int64_t nmax = 0;
    for (int64_t b = 0; b < f.B; b++)
        if (f.off[b + 1] - f.off[b] > nmax)
            nmax = f.off[b + 1] - f.off[b];
    const int64_t wide = 3 * H > m->inter ? 3 * H : m->inter;
    f.x = take(call, (size_t)(f.T * H) * sizeof(float), &st);
    f.big = take(call, (size_t)(f.T * wide) * sizeof(float), &st);
    f.ctx = take(call, (size_t)(f.T * H) * sizeof(float), &st);
    f.tmp = take(call, (size_t)(f.T * H) * sizeof(float), &st);
    f.scores = take(call, (size_t)(m->heads * nmax * nmax) * sizeof(float), &st);
    f.heads_out = take(call, (size_t)(nmax * H) * sizeof(float), &st);
    if (st == LOOM_OK)
        st = run_rows(call, &f, ST_EMBED, NULL, f.T, 0, 0);
    for (int64_t l = 0; l < m->n_layers && st == LOOM_OK; l++) {
        const enc_layer *L = &m->layers[l];
        /* f.big holds q|k|v [T, 3H], then the intermediate rows [T, I] */
        st = dense(call, &f, f.x, H, L->wqkv, L->lin_qkv, 3 * H, f.big);
        if (st == LOOM_OK)
            st = run_rows(call, &f, ST_BIAS_QKV, L, f.T, 0, 0);
        for (int64_t b = 0; b < f.B && st == LOOM_OK; b++)
            st = attend(call, &f, b);
        if (st == LOOM_OK)
            st = dense(call, &f, f.ctx, H, L->wo, L->lin_o, H, f.tmp);
        if (st == LOOM_OK)
            st = run_rows(call, &f, ST_LN_ATTN, L, f.T, 0, 0);
        if (st == LOOM_OK)
            st = dense(call, &f, f.x, H, L->wi, L->lin_i, m->inter, f.big);
        if (st == LOOM_OK)
            st = run_rows(call, &f, ST_BIAS_ACT, L, f.T, 0, 0);
        if (st == LOOM_OK)
            st = dense(call, &f, f.big, m->inter, L->wout, L->lin_out, H, f.tmp);
        if (st == LOOM_OK)
            st = run_rows(call, &f, ST_LN_OUT, L, f.T, 0, 0);
    }
    if (st != LOOM_OK)
        return st;
    if (f.pooling == ENC_POOL_NONE) {
        memcpy(f.out, f.x, (size_t)(f.T * H) * sizeof(float));   /* every token kept, in order: T = B * L */
        return LOOM_OK;
    }
    return run_rows(call, &f, ST_POOL, NULL, f.B, 0, 0);
}
