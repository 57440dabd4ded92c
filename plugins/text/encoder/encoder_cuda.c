/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_cuda.c - the cuda kernel of text.bert_encoder and the encoder
** module of text-cuda.so. The object (text.so) is the cpu model; its
** weights are uploaded to a device at the first cuda call there, as one
** buffer kept per (object, device) by host->object_backend_state (made
** once under the object's lock, freed with the object).
**
** Unlike the cpu kernel, which packs the tokens it needs, the cuda kernel
** computes the dense [B, L] batch, padding included: attention runs over
** all L keys with the mask (a masked key gets weight 0; a row with no key
** at all attends uniformly, as transformers' -FLT_MAX additive mask), and
** the pooling reads the unmasked rows only (cls: row 0). Padding rows are
** computed and dropped, so every pooled result is the cpu's; pooling none
** returns them as the cpu does.
**
** The ids, mask and token types are copied to the host for the same value
** checks as the cpu's (encoder_checks.c) before anything is launched. The
** products are core.matmul calls on cuda tensors (host->op_call, cuBLAS in
** core-cuda), all compact: the dense layers [N, in] @ W^T [in, out], the
** attention per (sequence, head) as batched [L, d] @ [d, L] and [L, L] @
** [L, d] after a kernel lays q, k^T and v out per head. Everything runs
** asynchronously on the call's stream.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "encoder.h"
#include "encoder_kernels.h"
#include "register.h"

#define W TEXT_ENCODER_CLASS

static loom_status cuda_fail(int e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s: %s (%s)", W, what, cudaGetErrorString((cudaError_t)e),
                         cudaGetErrorName((cudaError_t)e));
}

/* The device copy of the model's tensors, in one buffer. */
typedef struct dev_layer {
    float *wqkv, *bqkv, *wo, *bo, *ln1_g, *ln1_b, *wi, *bi, *wout, *bout, *ln2_g, *ln2_b;
} dev_layer;

typedef struct dev_model {
    int32_t device;
    float *base;
    float *word, *pos, *type, *emb_g, *emb_b;
    dev_layer *layers;
} dev_model;

/* Place n floats at *off (256-byte aligned segments); with base, copy src there. */
static int place(float *base, size_t *off, const float *src, int64_t n, float **dst)
{
    float *p = base != NULL ? base + *off : NULL;
    *off += ((size_t)n + 63) & ~(size_t)63;
    if (dst != NULL)
        *dst = p;
    if (base == NULL)
        return 0;
    return (int)cudaMemcpy(p, src, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
}

/* Lay out (base NULL: only count) or upload every tensor the forward reads. */
static int lay_out(const enc_model *m, dev_model *d, size_t *total)
{
    const int64_t H = m->hidden, I = m->inter;
    size_t off = 0;
    int e = 0;
#define P(src, n, dst)                                                                                  \
    do {                                                                                                \
        int e_ = place(d->base, &off, src, n, dst);                                                     \
        if (e == 0)                                                                                     \
            e = e_;                                                                                     \
    } while (0)
    P(m->word, m->vocab * H, &d->word);
    P(m->pos, m->max_pos * H, &d->pos);
    P(m->type, m->n_types * H, &d->type);
    P(m->emb_g, H, &d->emb_g);
    P(m->emb_b, H, &d->emb_b);
    /* dense=linear objects keep no W^T on the host: it is made per layer
    ** into a staging buffer while uploading (d->base set) */
    float *stage = NULL;
    if (d->base != NULL && m->n_layers > 0 && m->layers[0].wqkv == NULL &&
        (stage = malloc((size_t)(4 * H * H + 2 * H * I) * sizeof(float))) == NULL)
        return (int)cudaErrorMemoryAllocation;
    for (int64_t l = 0; l < m->n_layers; l++) {
        const enc_layer *s = &m->layers[l];
        dev_layer *t = d->layers != NULL ? &d->layers[l] : NULL;
        const float *wqkv = s->wqkv, *wo = s->wo, *wi = s->wi, *wout = s->wout;
        if (stage != NULL) {
            float *sq = stage, *so = sq + 3 * H * H, *si = so + H * H, *sout = si + H * I;
            enc_layer_transposed(s, H, I, sq, so, si, sout);
            wqkv = sq, wo = so, wi = si, wout = sout;
        }
        P(wqkv, H * 3 * H, t ? &t->wqkv : NULL);
        P(s->bqkv, 3 * H, t ? &t->bqkv : NULL);
        P(wo, H * H, t ? &t->wo : NULL);
        P(s->bo, H, t ? &t->bo : NULL);
        P(s->ln1_g, H, t ? &t->ln1_g : NULL);
        P(s->ln1_b, H, t ? &t->ln1_b : NULL);
        P(wi, H * I, t ? &t->wi : NULL);
        P(s->bi, I, t ? &t->bi : NULL);
        P(wout, I * H, t ? &t->wout : NULL);
        P(s->bout, H, t ? &t->bout : NULL);
        P(s->ln2_g, H, t ? &t->ln2_g : NULL);
        P(s->ln2_b, H, t ? &t->ln2_b : NULL);
    }
#undef P
    free(stage);   /* place's copies are synchronous from pageable memory */
    *total = off;
    return e;
}

static void dev_destroy(void *state)
{
    dev_model *d = state;
    if (d == NULL)
        return;
    if (d->base != NULL && cudaSetDevice(d->device) == cudaSuccess)
        cudaFree(d->base);
    free(d->layers);
    free(d);
}

/* object_backend_state's create: runs once per (object, device), under the object's lock. */
static loom_status dev_create(const loom_call *call, void *base_state, void **state_out)
{
    const enc_model *m = base_state;
    *state_out = NULL;
    dev_model *d = calloc(1, sizeof *d);
    if (d == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    d->device = call->ctx->device.device_id;
    size_t total;
    (void)lay_out(m, d, &total);           /* count only */
    int e = (int)cudaSetDevice(d->device);
    if (e == 0 && (d->layers = calloc((size_t)m->n_layers, sizeof *d->layers)) == NULL) {
        dev_destroy(d);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    }
    if (e == 0)
        e = (int)cudaMalloc((void **)&d->base, total * sizeof(float));
    if (e == 0)
        e = lay_out(m, d, &total);
    if (e == 0)
        e = (int)cudaDeviceSynchronize();  /* pageable copies: done before any stream reads them */
    if (e != 0) {
        dev_destroy(d);
        return cuda_fail(e, "uploading the weights");
    }
    *state_out = d;
    return LOOM_OK;
}

typedef struct cfwd {
    loom_call *call;
    const enc_model *m;
    loom_dl_device dev;
    void *stream;
} cfwd;

static loom_tensor dview(const cfwd *f, float *data, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = data, .device = f->dev, .ndim = ndim, .dtype = { LOOM_DL_FLOAT, 32, 1 },
                      .shape = shape, .strides = NULL, .byte_offset = 0 };
    return t;
}

/* out = a @ b through core.matmul on the call's device (cuBLAS). */
static loom_status mm(const cfwd *f, loom_tensor *a, loom_tensor *b, loom_tensor *out)
{
    const loom_tensor *ins[2] = { a, b };
    loom_tensor *outs[1] = { out };
    loom_op_call oc = { .struct_size = sizeof oc, .op = f->m->matmul, .n_inputs = 2, .inputs = ins,
                        .n_outputs = 1, .outputs = outs, .backend = NULL };
    return pk_host->op_call(f->call->ctx, &oc);
}

/* y [N, n_out] = x [N, n_in] @ w [n_in, n_out], all compact. */
static loom_status dense(const cfwd *f, int64_t N, float *x, int64_t n_in, float *w, int64_t n_out, float *y)
{
    int64_t xs[2] = { N, n_in }, ws[2] = { n_in, n_out }, ys[2] = { N, n_out };
    loom_tensor tx = dview(f, x, 2, xs), tw = dview(f, w, 2, ws), ty = dview(f, y, 2, ys);
    return mm(f, &tx, &tw, &ty);
}

/* y [G, r, c] = a [G, r, k] @ b [G, k, c] */
static loom_status batched(const cfwd *f, int64_t G, int64_t r, int64_t k, int64_t c, float *a, float *b, float *y)
{
    int64_t as[3] = { G, r, k }, bs[3] = { G, k, c }, ys[3] = { G, r, c };
    loom_tensor ta = dview(f, a, 3, as), tb = dview(f, b, 3, bs), ty = dview(f, y, 3, ys);
    return mm(f, &ta, &tb, &ty);
}

/* The inputs to the host (after what the stream has queued), for the checks. */
static loom_status host_copy(const cfwd *f, const loom_tensor *t, int64_t n, int64_t **out)
{
    *out = NULL;
    if (t == NULL)
        return LOOM_OK;
    if ((*out = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t))) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of host memory for the ids", W);
    int e = n > 0 ? (int)cudaMemcpyAsync(*out, loom_data(t), (size_t)n * sizeof(int64_t), cudaMemcpyDeviceToHost,
                                         (cudaStream_t)f->stream)
                  : 0;
    return e == 0 ? LOOM_OK : cuda_fail(e, "copying the ids to the host");
}

static float *take(loom_call *call, size_t bytes, loom_status *st)
{
    if (*st != LOOM_OK)
        return NULL;
    float *p = pk_host->scratch(call->ctx, bytes > 0 ? bytes : 1);
    if (p == NULL)
        *st = pk_host->fail(LOOM_ENOMEM, "%s: out of device scratch memory (%zu bytes)", W, bytes);
    return p;
}

static loom_status launched(int e, const char *what)
{
    return e == 0 ? LOOM_OK : cuda_fail(e, what);
}

static loom_status layers_run(const cfwd *f, const dev_model *d, int64_t B, int64_t L, float *x, float *big,
                              float *q, float *kt, float *v, float *scores, float *ho, float *ctx, float *tmp,
                              const int64_t *mask)
{
    const enc_model *m = f->m;
    const int64_t H = m->hidden, I = m->inter, N = B * L, nh = m->heads, hd = m->head_dim;
    const float scale = 1.0f / sqrtf((float)hd);
    loom_status st = LOOM_OK;
    for (int64_t l = 0; l < m->n_layers && st == LOOM_OK; l++) {
        const dev_layer *w = &d->layers[l];
        st = dense(f, N, x, H, w->wqkv, 3 * H, big);
        if (st == LOOM_OK)
            st = launched(enc_cu_split_heads(big, w->bqkv, q, kt, v, B, L, nh, hd, f->stream), "split heads");
        if (st == LOOM_OK)
            st = batched(f, B * nh, L, hd, L, q, kt, scores);
        if (st == LOOM_OK)
            st = launched(enc_cu_softmax(scores, mask, scale, B, nh, L, f->stream), "softmax");
        if (st == LOOM_OK)
            st = batched(f, B * nh, L, L, hd, scores, v, ho);
        if (st == LOOM_OK)
            st = launched(enc_cu_merge_heads(ho, ctx, B, L, nh, hd, f->stream), "merge heads");
        if (st == LOOM_OK)
            st = dense(f, N, ctx, H, w->wo, H, tmp);
        if (st == LOOM_OK)
            st = launched(enc_cu_add_ln(x, tmp, w->bo, w->ln1_g, w->ln1_b, N, H, m->eps, f->stream), "layernorm");
        if (st == LOOM_OK)
            st = dense(f, N, x, H, w->wi, I, big);
        if (st == LOOM_OK)
            st = launched(enc_cu_bias_act(big, w->bi, N, I, (int)m->act, f->stream), "activation");
        if (st == LOOM_OK)
            st = dense(f, N, big, I, w->wout, H, tmp);
        if (st == LOOM_OK)
            st = launched(enc_cu_add_ln(x, tmp, w->bout, w->ln2_g, w->ln2_b, N, H, m->eps, f->stream), "layernorm");
    }
    return st;
}

static loom_status enc_forward_cuda(loom_call *call)
{
    const enc_model *m = call->object;
    if (m == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is a method: it needs a %s object", W, W);
    cfwd f = { .call = call, .m = m, .dev = call->ctx->device, .stream = call->ctx->stream };
    const enc_pooling pooling = enc_pooling_of(call->attrs[PK_ATTR(text_encoder, pooling)].u.s);
    const int normalize = call->attrs[PK_ATTR(text_encoder, normalize)].u.b != 0;
    if (normalize && pooling == ENC_POOL_NONE)
        return pk_host->fail(LOOM_EINVAL, "normalize=true needs a pooling (mean, cls or max): pooling none returns "
                             "every token's hidden state");
    int64_t B, L;
    loom_status st = enc_check_shapes(call, m, &B, &L);
    if (st != LOOM_OK)
        return st;
    int e = (int)cudaSetDevice(f.dev.device_id);
    if (e != 0)
        return cuda_fail(e, "cudaSetDevice");
    const int64_t N = B * L, H = m->hidden;
    int64_t *ids = NULL, *mk = NULL, *ty = NULL;
    st = host_copy(&f, call->inputs[0], N, &ids);
    if (st == LOOM_OK)
        st = host_copy(&f, call->inputs[1], N, &mk);
    if (st == LOOM_OK)
        st = host_copy(&f, call->inputs[2], N, &ty);
    if (st == LOOM_OK && (e = (int)cudaStreamSynchronize((cudaStream_t)f.stream)) != 0)
        st = cuda_fail(e, "cudaStreamSynchronize");
    if (st == LOOM_OK)
        st = enc_check_values(m, N, L, ids, mk, ty);
    free(ids);
    free(mk);
    free(ty);
    if (st != LOOM_OK)
        return st;
    loom_tensor *out;
    const int64_t pooled_shape[2] = { B, H }, full_shape[3] = { B, L, H };
    st = pooling == ENC_POOL_NONE ? pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 3, full_shape, &out)
                                  : pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, pooled_shape, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    float *o = loom_data(out);
    if (L == 0) {                          /* no tokens: mean 0, max -1e9, as the pooling of nothing */
        if (pooling != ENC_POOL_MAX)
            return launched((int)cudaMemsetAsync(o, 0, (size_t)(B * H) * sizeof(float), (cudaStream_t)f.stream),
                            "cudaMemsetAsync");
        float *h = malloc((size_t)(B * H) * sizeof(float));
        if (h == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of host memory", W);
        for (int64_t i = 0; i < B * H; i++)
            h[i] = -1e9f;
        /* pageable source: staged before the call returns */
        e = (int)cudaMemcpyAsync(o, h, (size_t)(B * H) * sizeof(float), cudaMemcpyHostToDevice,
                                 (cudaStream_t)f.stream);
        if (e == 0)
            e = (int)cudaStreamSynchronize((cudaStream_t)f.stream);
        free(h);
        return launched(e, "filling the output");
    }
    const dev_model *d = pk_host->object_backend_state(call, dev_create, dev_destroy);
    if (d == NULL)
        return LOOM_EDEVICE;               /* the error is set */
    const int64_t wide = 3 * H > m->inter ? 3 * H : m->inter;
    const size_t nh_bytes = (size_t)(N * H) * sizeof(float);
    float *x = take(call, nh_bytes, &st), *big = take(call, (size_t)(N * wide) * sizeof(float), &st);
    float *q = take(call, nh_bytes, &st), *kt = take(call, nh_bytes, &st), *v = take(call, nh_bytes, &st);
    float *scores = take(call, (size_t)(B * m->heads * L * L) * sizeof(float), &st);
    float *ho = take(call, nh_bytes, &st), *ctx = take(call, nh_bytes, &st), *tmp = take(call, nh_bytes, &st);
    if (st != LOOM_OK)
        return st;
    const int64_t *dmask = call->inputs[1] != NULL ? loom_data(call->inputs[1]) : NULL;
    const int64_t *dtypes = call->inputs[2] != NULL ? loom_data(call->inputs[2]) : NULL;
    st = launched(enc_cu_embed(x, loom_data(call->inputs[0]), dtypes, d->word, d->pos, d->type, d->emb_g, d->emb_b,
                               N, L, H, m->eps, f.stream), "embeddings");
    if (st == LOOM_OK)
        st = layers_run(&f, d, B, L, x, big, q, kt, v, scores, ho, ctx, tmp, dmask);
    if (st != LOOM_OK)
        return st;
    if (pooling == ENC_POOL_NONE)
        return launched((int)cudaMemcpyAsync(o, x, nh_bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)f.stream),
                        "copying the hidden states");
    return launched(enc_cu_pool(x, dmask, o, B, L, H, pooling == ENC_POOL_CLS ? 1 : pooling == ENC_POOL_MAX ? 2 : 0,
                                normalize, f.stream), "pooling");
}

static const loom_kernel_desc encoder_cuda_kernels[] = {
    PK_KERNEL_CUDA(text_encoder_schema, "cuda:dense-cublas", 0, enc_forward_cuda),
};

const pk_module text_encoder_cuda = PK_MODULE("encoder", text_encoder_ops, encoder_cuda_kernels, NULL);
