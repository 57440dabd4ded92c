/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_object.c - the text.bert_encoder object class: create reads a
** BertModel checkpoint (safetensors, Hugging Face key names, with or
** without the "bert." prefix of the BertFor* heads), checks every tensor's
** dtype and shape against the sizes the word embeddings and the first
** layer give, and keeps:
**  - the embedding tables and every vector, borrowed from the mapping (the
**    core keeps it for the object's life and aligns each tensor);
**  - with dense=matmul, each layer's matrices as W^T [in, out] copies, the
**    right operand of x @ W^T for core.matmul, with q, k and v side by
**    side in one [H, 3H]; with dense=linear, core.linear objects over the
**    file's matrices instead (q, k and v stacked into one owned [3H, H]),
**    so the host holds each weight once besides the packed panels.
** Tensors a checkpoint may carry besides (embeddings.position_ids, the
** pooler) are accepted and not used.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"

#define W TEXT_ENCODER_CLASS

PK_ATTR_TABLE(text_encoder_class, TEXT_ENCODER_CLASS_ATTRS);

static const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };

/* The model and the memory it owns. */
typedef struct enc_object {
    enc_model m;
    float **owned;
    int64_t n_owned;
} enc_object;

static void enc_destroy(void *state)
{
    enc_object *o = state;
    if (o == NULL)
        return;
    /* the core.linear objects first: they borrow owned rows and the mapping */
    for (int64_t l = 0; o->m.layers != NULL && l < o->m.n_layers; l++) {
        enc_layer *L = &o->m.layers[l];
        loom_object *lin[4] = { L->lin_qkv, L->lin_o, L->lin_i, L->lin_out };
        for (int i = 0; i < 4; i++)
            if (lin[i] != NULL)
                pk_host->object_free(lin[i]);
    }
    for (int64_t i = 0; i < o->n_owned; i++)
        pk_host->free(cpu, o->owned[i]);
    free(o->owned);
    free(o->m.layers);
    free(o);
}

static int has_tensor(const loom_safetensors *st, const char *name)
{
    const int64_t n = pk_host->safetensors_count(st);
    for (int64_t i = 0; i < n; i++)
        if (strcmp(pk_host->safetensors_name(st, i), name) == 0)
            return 1;
    return 0;
}

/* The number of layers: encoder.layer.<i>. names for i = 0 .. n-1, with no
** gap (a checkpoint missing layer 3 of 6 is refused by the tensor lookups
** that follow, naming the first missing key). */
static int64_t count_layers(const loom_safetensors *st, const char *prefix)
{
    char head[64];
    snprintf(head, sizeof head, "%sencoder.layer.", prefix);
    const size_t hl = strlen(head);
    int64_t n = 0;
    for (int64_t i = 0; i < pk_host->safetensors_count(st); i++) {
        const char *name = pk_host->safetensors_name(st, i);
        if (strncmp(name, head, hl) != 0)
            continue;
        const char *p = name + hl;
        int64_t k = 0;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 7)
            k = k * 10 + (*p++ - '0'), digits++;
        if (digits > 0 && *p == '.' && k + 1 > n)
            n = k + 1;
    }
    return n;
}

/* Tensor `prefix + name` of the file: f32, rank and shape as given (a dim
** of -1 takes any size and is returned in got[]). */
static loom_status get_f32(const loom_safetensors *st, const char *prefix, const char *name, int32_t ndim,
                           const int64_t *shape, int64_t *got, const float **out)
{
    char key[256], buf[160], want[96];
    snprintf(key, sizeof key, "%s%s", prefix, name);
    if (!has_tensor(st, key))
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no tensor '%s' (Hugging Face BertModel key "
                             "names)", W, key);
    const loom_tensor *t;
    loom_status s = pk_host->safetensors_get(st, key, &t);
    if (s != LOOM_OK)
        return s;
    int ok = loom_tensor_dtype_of(t) == LOOM_DTYPE_F32 && t->ndim == ndim && loom_is_contiguous(t);
    for (int32_t d = 0; ok && d < ndim; d++)
        ok = shape[d] < 0 ? t->shape[d] > 0 : t->shape[d] == shape[d];
    if (!ok) {
        int at = snprintf(want, sizeof want, "f32[");
        for (int32_t d = 0; d < ndim && at < (int)sizeof want - 16; d++)
            at += shape[d] < 0 ? snprintf(want + at, sizeof want - (size_t)at, "%s*", d ? "," : "")
                               : snprintf(want + at, sizeof want - (size_t)at, "%s%lld", d ? "," : "",
                                          (long long)shape[d]);
        snprintf(want + at, sizeof want - (size_t)at, "]");
        return pk_host->fail(LOOM_EINVAL, "%s: weights tensor '%s' is %s, expected %s", W, key,
                             pk_describe(pk_host, t, buf, sizeof buf), want);
    }
    for (int32_t d = 0; got != NULL && d < ndim; d++)
        got[d] = t->shape[d];
    *out = loom_data(t);
    return LOOM_OK;
}

static float *own(enc_object *o, int64_t n)
{
    float *p = pk_host->alloc(cpu, (size_t)n * sizeof(float), 64);
    if (p == NULL)
        return NULL;
    float **grown = realloc(o->owned, (size_t)(o->n_owned + 1) * sizeof *grown);
    if (grown == NULL) {
        pk_host->free(cpu, p);
        return NULL;
    }
    o->owned = grown;
    o->owned[o->n_owned++] = p;
    return p;
}

static loom_status load_layer(enc_object *o, loom_exec_ctx *ctx, const loom_safetensors *st, const char *prefix,
                              int64_t l)
{
    enc_model *m = &o->m;
    enc_layer *L = &m->layers[l];
    const int64_t H = m->hidden, I = m->inter;
    const int64_t hh[2] = { H, H }, ih[2] = { I, H }, hi[2] = { H, I }, h1[1] = { H }, i1[1] = { I };
    char name[128];
    const float *bq, *bk, *bv;
    loom_status s = LOOM_OK;
#define GET(suffix, nd, shape, dst)                                                                   \
    do {                                                                                              \
        snprintf(name, sizeof name, "encoder.layer.%lld.%s", (long long)l, suffix);                   \
        if (s == LOOM_OK)                                                                             \
            s = get_f32(st, prefix, name, nd, shape, NULL, dst);                                      \
    } while (0)
    GET("attention.self.query.weight", 2, hh, &L->w_q);
    GET("attention.self.query.bias", 1, h1, &bq);
    GET("attention.self.key.weight", 2, hh, &L->w_k);
    GET("attention.self.key.bias", 1, h1, &bk);
    GET("attention.self.value.weight", 2, hh, &L->w_v);
    GET("attention.self.value.bias", 1, h1, &bv);
    GET("attention.output.dense.weight", 2, hh, &L->w_o);
    GET("attention.output.dense.bias", 1, h1, &L->bo);
    GET("attention.output.LayerNorm.weight", 1, h1, &L->ln1_g);
    GET("attention.output.LayerNorm.bias", 1, h1, &L->ln1_b);
    GET("intermediate.dense.weight", 2, ih, &L->w_i);
    GET("intermediate.dense.bias", 1, i1, &L->bi);
    GET("output.dense.weight", 2, hi, &L->w_out);
    GET("output.dense.bias", 1, h1, &L->bout);
    GET("output.LayerNorm.weight", 1, h1, &L->ln2_g);
    GET("output.LayerNorm.bias", 1, h1, &L->ln2_b);
#undef GET
    if (s != LOOM_OK)
        return s;
    if ((L->bqkv = own(o, 3 * H)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for layer %lld", W, (long long)l);
    memcpy(L->bqkv, bq, (size_t)H * sizeof(float));
    memcpy(L->bqkv + H, bk, (size_t)H * sizeof(float));
    memcpy(L->bqkv + 2 * H, bv, (size_t)H * sizeof(float));
    if (m->linear == NULL) {   /* dense=matmul: the W^T operands */
        L->wqkv = own(o, H * 3 * H);
        L->wo = own(o, H * H);
        L->wi = own(o, H * I);
        L->wout = own(o, I * H);
        if (L->wqkv == NULL || L->wo == NULL || L->wi == NULL || L->wout == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for layer %lld", W, (long long)l);
        enc_layer_transposed(L, H, I, L->wqkv, L->wo, L->wi, L->wout);
        return LOOM_OK;
    }
    /* dense=linear: one core.linear object per product, weight [out, in]
    ** (q, k and v stacked into one [3H, H]) */
    if ((L->wqkv_rows = own(o, 3 * H * H)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for layer %lld", W, (long long)l);
    memcpy(L->wqkv_rows, L->w_q, (size_t)(H * H) * sizeof(float));
    memcpy(L->wqkv_rows + H * H, L->w_k, (size_t)(H * H) * sizeof(float));
    memcpy(L->wqkv_rows + 2 * H * H, L->w_v, (size_t)(H * H) * sizeof(float));
    struct { loom_object **out; const float *w; int64_t rows, cols; } lin[4] = {
        { &L->lin_qkv, L->wqkv_rows, 3 * H, H }, { &L->lin_o, L->w_o, H, H },
        { &L->lin_i, L->w_i, I, H }, { &L->lin_out, L->w_out, H, I },
    };
    for (int i = 0; i < 4; i++) {
        int64_t shape[2] = { lin[i].rows, lin[i].cols };
        const loom_tensor t = { .data = (void *)lin[i].w, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                                .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
        const loom_named_tensor weight = { "weight", &t };
        const loom_object_request req = { .struct_size = sizeof req, .class_name = "core.linear",
                                          .n_tensors = 1, .tensors = &weight,
                                          .device = { LOOM_DEVICE_CPU, 0 } };
        if ((*lin[i].out = pk_host->object_create(ctx, &req)) == NULL)
            return LOOM_ENOMEM;   /* the core's message stands */
    }
    return LOOM_OK;
}

/* Largest sizes create accepts: far above any BERT, small enough that no
** product of them (tokens * hidden * 4 bytes...) overflows. */
#define ENC_MAX_DIM (INT64_C(1) << 20)
#define ENC_MAX_LAYERS 1024

static loom_status enc_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const loom_safetensors *st = args->weights;
    if (st == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights model.safetensors) with Hugging "
                             "Face BertModel key names", W);
    const char *prefix = "";
    if (!has_tensor(st, "embeddings.word_embeddings.weight") && has_tensor(st, "bert.embeddings.word_embeddings.weight"))
        prefix = "bert.";
    enc_object *o = calloc(1, sizeof *o);
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    enc_model *m = &o->m;
    const int64_t any2[2] = { -1, -1 };
    int64_t got[2];
    loom_status s = get_f32(st, prefix, "embeddings.word_embeddings.weight", 2, any2, got, &m->word);
    if (s == LOOM_OK) {
        m->vocab = got[0];
        m->hidden = got[1];
        if (m->hidden > ENC_MAX_DIM || m->vocab > (INT64_C(1) << 31))
            s = pk_host->fail(LOOM_EINVAL, "%s: word embeddings [%lld, %lld] are larger than this encoder takes", W,
                              (long long)m->vocab, (long long)m->hidden);
    }
    const int64_t anyh[2] = { -1, m->hidden }, h1[1] = { m->hidden };
    if (s == LOOM_OK)
        s = get_f32(st, prefix, "embeddings.position_embeddings.weight", 2, anyh, got, &m->pos);
    if (s == LOOM_OK) {
        m->max_pos = got[0];
        s = get_f32(st, prefix, "embeddings.token_type_embeddings.weight", 2, anyh, got, &m->type);
    }
    if (s == LOOM_OK) {
        m->n_types = got[0];
        s = get_f32(st, prefix, "embeddings.LayerNorm.weight", 1, h1, NULL, &m->emb_g);
    }
    if (s == LOOM_OK)
        s = get_f32(st, prefix, "embeddings.LayerNorm.bias", 1, h1, NULL, &m->emb_b);
    if (s == LOOM_OK) {
        m->n_layers = count_layers(st, prefix);
        if (m->n_layers < 1 || m->n_layers > ENC_MAX_LAYERS)
            s = pk_host->fail(LOOM_EINVAL, "%s: the weights file has %s encoder layers (%sencoder.layer.<i>.*)", W,
                              m->n_layers < 1 ? "no" : "too many", prefix);
    }
    if (s == LOOM_OK) {
        char key[128];
        const int64_t anyi[2] = { -1, m->hidden };
        const float *unused;
        snprintf(key, sizeof key, "encoder.layer.0.intermediate.dense.weight");
        s = get_f32(st, prefix, key, 2, anyi, got, &unused);
        m->inter = got[0];
        if (s == LOOM_OK && m->inter > ENC_MAX_DIM)
            s = pk_host->fail(LOOM_EINVAL, "%s: intermediate size %lld is larger than this encoder takes", W,
                              (long long)m->inter);
    }
    if (s == LOOM_OK)
        s = enc_config_apply(args, m);
    if (s == LOOM_OK && (m->matmul = pk_host->op_find("core.matmul")) == NULL)
        s = pk_host->fail(LOOM_ENOENT, "%s needs core.matmul (the core pack)", W);
    if (s == LOOM_OK) {
        const char *dense = args->attrs[PK_ATTR(text_encoder_class, dense)].u.s;
        if (strcmp(dense, "linear") == 0) {
            if (!LOOM_HAS_MEMBER(pk_host, loom_host_api, object_free))
                s = pk_host->fail(LOOM_EABI, "%s: dense=linear needs a core of ABI 1.3 (host->object_create); "
                                  "use dense=matmul", W);
            else if ((m->linear = pk_host->op_find("core.linear")) == NULL)
                s = pk_host->fail(LOOM_ENOENT, "%s: dense=linear needs core.linear (the core pack)", W);
        } else if (strcmp(dense, "matmul") != 0) {
            s = pk_host->fail(LOOM_EINVAL, "%s: dense '%s' is not linear or matmul", W, dense);
        }
    }
    if (s == LOOM_OK && (m->layers = calloc((size_t)m->n_layers, sizeof *m->layers)) == NULL)
        s = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    for (int64_t l = 0; s == LOOM_OK && l < m->n_layers; l++)
        s = load_layer(o, args->ctx, st, prefix, l);
    if (s != LOOM_OK) {
        enc_destroy(o);
        return s;
    }
    *state_out = o;
    return LOOM_OK;
}

const loom_object_class text_encoder_class = {
    .struct_size = sizeof(loom_object_class),
    .name = TEXT_ENCODER_CLASS,
    .doc = "BERT encoder (Hugging Face BertModel) from a safetensors checkpoint; method text.bert_encoder",
    PK_ATTRS(text_encoder_class_attrs),
    .create = enc_create,
    .destroy = enc_destroy,
};
