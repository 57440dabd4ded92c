/* SPDX-License-Identifier: BSD-3-Clause */
/*
** encoder_config.c - the hyperparameters of text.bert_encoder that the
** weights do not carry. Each comes from its class attribute when given,
** else from the config.json named by `config`, else from BertConfig's
** default (12 heads, layer_norm_eps 1e-12, hidden_act gelu). The sizes a
** config.json states (hidden_size, num_hidden_layers, intermediate_size,
** vocab_size, max_position_embeddings, type_vocab_size) must agree with
** the weights: a config that belongs to another model is refused, naming
** the field, rather than silently ignored.
*/
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder.h"

#define W TEXT_ENCODER_CLASS
#define CONFIG_MAX_BYTES (4 << 20)   /* a config.json is a few hundred bytes */

static loom_status read_file(const char *path, char **text)
{
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return pk_host->fail(LOOM_ENOENT, "%s: cannot open config '%s'", W, path);
    char *buf = malloc(CONFIG_MAX_BYTES + 1);
    size_t n = buf != NULL ? fread(buf, 1, CONFIG_MAX_BYTES + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (buf == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", W);
    if (err) {
        free(buf);
        return pk_host->fail(LOOM_EIO, "%s: reading config '%s' failed", W, path);
    }
    if (n > CONFIG_MAX_BYTES) {
        free(buf);
        return pk_host->fail(LOOM_EFORMAT, "%s: config '%s' is larger than %d bytes: not a config.json", W, path,
                             CONFIG_MAX_BYTES);
    }
    buf[n] = '\0';
    *text = buf;
    return LOOM_OK;
}

/* The integer field `key` of the config (*have = 0 when absent). */
static loom_status get_int(const cJSON *root, const char *path, const char *key, int64_t *v, int *have)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    *have = 0;
    if (it == NULL || cJSON_IsNull(it))
        return LOOM_OK;
    double d = cJSON_IsNumber(it) ? it->valuedouble : NAN;
    if (!(d >= 1 && d <= 1e15) || d != floor(d))
        return pk_host->fail(LOOM_EFORMAT, "%s: config '%s': \"%s\" must be a positive integer", W, path, key);
    *v = (int64_t)d;
    *have = 1;
    return LOOM_OK;
}

static loom_status check_size(const cJSON *root, const char *path, const char *key, int64_t weights_value,
                              const char *from)
{
    int64_t v;
    int have;
    loom_status st = get_int(root, path, key, &v, &have);
    if (st == LOOM_OK && have && v != weights_value)
        st = pk_host->fail(LOOM_EINVAL, "%s: config '%s' says \"%s\": %lld but the weights have %lld (%s)", W,
                           path, key, (long long)v, (long long)weights_value, from);
    return st;
}

static int act_from_name(const char *s)
{
    if (strcmp(s, "gelu") == 0)
        return ENC_ACT_GELU_ERF;
    if (strcmp(s, "gelu_new") == 0 || strcmp(s, "gelu_pytorch_tanh") == 0)
        return ENC_ACT_GELU_TANH;
    if (strcmp(s, "relu") == 0)
        return ENC_ACT_RELU;
    return -1;
}

static loom_status from_config(const char *path, enc_model *m, int64_t *heads, double *eps, char *act,
                               size_t act_size)
{
    char *text;
    loom_status st = read_file(path, &text);
    if (st != LOOM_OK)
        return st;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return pk_host->fail(LOOM_EFORMAT, "%s: config '%s' is not a JSON object", W, path);
    }
    int have;
    st = get_int(root, path, "num_attention_heads", heads, &have);
    if (st == LOOM_OK && !have)
        *heads = 0;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "layer_norm_eps");
    if (st == LOOM_OK && e != NULL) {
        if (!cJSON_IsNumber(e) || !(e->valuedouble > 0 && e->valuedouble < 1))
            st = pk_host->fail(LOOM_EFORMAT, "%s: config '%s': \"layer_norm_eps\" must be a number in (0, 1)", W,
                               path);
        else
            *eps = e->valuedouble;
    }
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (st == LOOM_OK && a != NULL) {
        if (!cJSON_IsString(a) || strlen(a->valuestring) >= act_size)
            st = pk_host->fail(LOOM_EFORMAT, "%s: config '%s': \"hidden_act\" must be a string", W, path);
        else
            snprintf(act, act_size, "%s", a->valuestring);
    }
    const cJSON *pe = cJSON_GetObjectItemCaseSensitive(root, "position_embedding_type");
    if (st == LOOM_OK && pe != NULL && !(cJSON_IsString(pe) && strcmp(pe->valuestring, "absolute") == 0))
        st = pk_host->fail(LOOM_EINVAL, "%s: config '%s': position_embedding_type %s is not supported (only "
                           "\"absolute\")", W, path, cJSON_IsString(pe) ? pe->valuestring : "(not a string)");
    if (st == LOOM_OK)
        st = check_size(root, path, "hidden_size", m->hidden, "embeddings.word_embeddings.weight");
    if (st == LOOM_OK)
        st = check_size(root, path, "vocab_size", m->vocab, "embeddings.word_embeddings.weight");
    if (st == LOOM_OK)
        st = check_size(root, path, "max_position_embeddings", m->max_pos, "embeddings.position_embeddings.weight");
    if (st == LOOM_OK)
        st = check_size(root, path, "type_vocab_size", m->n_types, "embeddings.token_type_embeddings.weight");
    if (st == LOOM_OK)
        st = check_size(root, path, "num_hidden_layers", m->n_layers, "encoder.layer.<i> tensors");
    if (st == LOOM_OK)
        st = check_size(root, path, "intermediate_size", m->inter, "encoder.layer.0.intermediate.dense.weight");
    cJSON_Delete(root);
    return st;
}

loom_status enc_config_apply(const loom_object_args *args, enc_model *m)
{
    const loom_attr_value *a = args->attrs;
    int64_t heads = 0;
    double eps = 1e-12;
    char act[64] = "gelu";
    const loom_attr_value *cfg = &a[PK_ATTR(text_encoder_class, config)];
    if (cfg->is_set && cfg->u.s[0] != '\0') {
        loom_status st = from_config(cfg->u.s, m, &heads, &eps, act, sizeof act);
        if (st != LOOM_OK)
            return st;
    }
    const loom_attr_value *ah = &a[PK_ATTR(text_encoder_class, num_attention_heads)];
    const loom_attr_value *ae = &a[PK_ATTR(text_encoder_class, layer_norm_eps)];
    const loom_attr_value *aa = &a[PK_ATTR(text_encoder_class, hidden_act)];
    if (ah->is_set)
        heads = ah->u.i;
    if (heads == 0)
        heads = 12;
    if (ae->is_set)
        eps = ae->u.f;
    if (aa->is_set)
        snprintf(act, sizeof act, "%s", aa->u.s);
    if (heads < 1 || m->hidden % heads != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: num_attention_heads %lld does not divide the hidden size %lld", W,
                             (long long)heads, (long long)m->hidden);
    if (!(eps > 0 && eps < 1))
        return pk_host->fail(LOOM_EINVAL, "%s: layer_norm_eps %g is not in (0, 1)", W, eps);
    int k = act_from_name(act);
    if (k < 0)
        return pk_host->fail(LOOM_EINVAL, "%s: hidden_act '%s' is not gelu, gelu_new, gelu_pytorch_tanh or relu",
                             W, act);
    m->heads = heads;
    m->head_dim = m->hidden / heads;
    m->eps = (float)eps;
    m->act = (enc_act)k;
    return LOOM_OK;
}
