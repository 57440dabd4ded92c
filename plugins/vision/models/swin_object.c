/* SPDX-License-Identifier: BSD-3-Clause */
/*
** swin_object.c - the Swin object classes: create reads a safetensors file
** holding exactly torchvision's SwinTransformer state_dict (features.0.0
** the patch conv, features.0.2 its norm; stage s's blocks at
** features.<1 + 2s>.<i> with norm1, attn.{relative_position_bias_table,
** relative_position_index, qkv, proj}, norm2, mlp.0, mlp.3; the patch
** merging after stage s at features.<2 + 2s> with norm and reduction; then
** norm and head), each key checked for dtype and shape, and refuses any key
** the architecture lacks. The classes come from head.weight; every tensor
** is borrowed from the mapping (relative_position_index too: the file's
** buffer is what torchvision would use).
**
** Architectures (torchvision's builders, window 7x7, patch 4x4, mlp_ratio
** 4): swin_t (embed 96, depths 2-2-6-2, heads 3-6-12-24), swin_s (96,
** 2-2-18-2, 3-6-12-24), swin_b (128, 2-2-18-2, 4-8-16-32);
** vision.swin_transformer takes them as attributes.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_dict.h"
#include "swin.h"
#include "weights_docs.h"

typedef struct swin_arch {
    const char *name;
    int64_t embed, depths[4], heads[4];
} swin_arch;

static const swin_arch archs[] = {
    { "vision.swin_t", 96, { 2, 2, 6, 2 }, { 3, 6, 12, 24 } },
    { "vision.swin_s", 96, { 2, 2, 18, 2 }, { 3, 6, 12, 24 } },
    { "vision.swin_b", 128, { 2, 2, 18, 2 }, { 4, 8, 16, 32 } },
};

static void swin_destroy(void *state)
{
    swin_model *m = state;
    if (m == NULL)
        return;
    free(m->blocks);
    free(m->packed);
    swin_plan *p = &m->plan;
    free(p->x[0]);
    free(p->x[1]);
    free(p->a);
    free(p->pooled);
    transformer_base_fini(&m->base);
    free(m);
}

static loom_status load_block(sd_loader *L, const swin_model *m, const char *pre, swin_block *b)
{
    const int64_t c = b->dim, hid = 4 * c, rows = (2 * m->window_h - 1) * (2 * m->window_w - 1);
    const int64_t lw = m->window_h * m->window_w;
    const int64_t vc[1] = { c }, tab[2] = { rows, b->heads }, idx[1] = { lw * lw }, qw[2] = { 3 * c, c };
    const int64_t qb[1] = { 3 * c }, pw[2] = { c, c }, f1[2] = { hid, c }, f1b[1] = { hid }, f2[2] = { c, hid };
    loom_status st;
    if ((st = sd_param(L, &b->norm1_w, 1, vc, "%s.norm1.weight", pre)) != LOOM_OK
        || (st = sd_param(L, &b->norm1_b, 1, vc, "%s.norm1.bias", pre)) != LOOM_OK
        || (st = sd_param(L, &b->table, 2, tab, "%s.attn.relative_position_bias_table", pre)) != LOOM_OK
        || (st = sd_buffer(L, &b->index, LOOM_DTYPE_I64, 1, idx, "%s.attn.relative_position_index", pre)) != LOOM_OK
        || (st = sd_param(L, &b->qkv_w, 2, qw, "%s.attn.qkv.weight", pre)) != LOOM_OK
        || (st = sd_param(L, &b->qkv_b, 1, qb, "%s.attn.qkv.bias", pre)) != LOOM_OK
        || (st = sd_param(L, &b->proj_w, 2, pw, "%s.attn.proj.weight", pre)) != LOOM_OK
        || (st = sd_param(L, &b->proj_b, 1, vc, "%s.attn.proj.bias", pre)) != LOOM_OK
        || (st = sd_param(L, &b->norm2_w, 1, vc, "%s.norm2.weight", pre)) != LOOM_OK
        || (st = sd_param(L, &b->norm2_b, 1, vc, "%s.norm2.bias", pre)) != LOOM_OK
        || (st = sd_param(L, &b->fc1_w, 2, f1, "%s.mlp.0.weight", pre)) != LOOM_OK
        || (st = sd_param(L, &b->fc1_b, 1, f1b, "%s.mlp.0.bias", pre)) != LOOM_OK
        || (st = sd_param(L, &b->fc2_w, 2, f2, "%s.mlp.3.weight", pre)) != LOOM_OK)
        return st;
    return sd_param(L, &b->fc2_b, 1, vc, "%s.mlp.3.bias", pre);
}

static loom_status load_keys(sd_loader *L, void *model)
{
    swin_model *m = model;
    const int64_t e = m->embed, cw[4] = { e, 3, m->patch_h, m->patch_w }, ve[1] = { e };
    loom_status st;
    if ((st = sd_param(L, &m->stem_w, 4, cw, "features.0.0.weight")) != LOOM_OK
        || (st = sd_param(L, &m->stem_b, 1, ve, "features.0.0.bias")) != LOOM_OK
        || (st = sd_param(L, &m->stem_norm_w, 1, ve, "features.0.2.weight")) != LOOM_OK
        || (st = sd_param(L, &m->stem_norm_b, 1, ve, "features.0.2.bias")) != LOOM_OK)
        return st;
    m->n_blocks = 0;
    for (int64_t s = 0; s < m->stages; s++)
        m->n_blocks += m->depths[s];
    if ((m->blocks = calloc((size_t)m->n_blocks, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", m->base.cls);
    int64_t bi = 0, dim = e;
    for (int64_t s = 0; s < m->stages; s++, dim *= 2) {
        for (int64_t i = 0; i < m->depths[s]; i++, bi++) {
            swin_block *b = &m->blocks[bi];
            b->dim = dim;
            b->heads = m->heads[s];
            b->shift_h = i % 2 == 0 ? 0 : m->window_h / 2;
            b->shift_w = i % 2 == 0 ? 0 : m->window_w / 2;
            char pre[64];
            snprintf(pre, sizeof pre, "features.%lld.%lld", (long long)(1 + 2 * s), (long long)i);
            if ((st = load_block(L, m, pre, b)) != LOOM_OK)
                return st;
        }
        if (s + 1 < m->stages) {
            const int64_t v4[1] = { 4 * dim }, rw[2] = { 2 * dim, 4 * dim };
            const long long at = (long long)(2 + 2 * s);
            swin_merge *g = &m->merges[s];
            if ((st = sd_param(L, &g->norm_w, 1, v4, "features.%lld.norm.weight", at)) != LOOM_OK
                || (st = sd_param(L, &g->norm_b, 1, v4, "features.%lld.norm.bias", at)) != LOOM_OK
                || (st = sd_param(L, &g->reduction_w, 2, rw, "features.%lld.reduction.weight", at)) != LOOM_OK)
                return st;
        }
    }
    m->features = dim / 2;
    const int64_t vf[1] = { m->features };
    if ((st = sd_param(L, &m->norm_w, 1, vf, "norm.weight")) != LOOM_OK
        || (st = sd_param(L, &m->norm_b, 1, vf, "norm.bias")) != LOOM_OK)
        return st;
    m->base.classes = sd_dim(L, "head.weight", 2, 0, 1);
    const int64_t hw[2] = { m->base.classes, m->features }, hb[1] = { m->base.classes };
    if ((st = sd_param(L, &m->head_w, 2, hw, "head.weight")) != LOOM_OK
        || (st = sd_param(L, &m->head_b, 1, hb, "head.bias")) != LOOM_OK)
        return st;
    return sd_no_unexpected(L);
}

/* The ints attribute `index` of args: 1 value (both) or 2 into a, b; or
** up to SWIN_MAX_STAGES into list (*n of them). */
static loom_status ints_attr(const loom_object_args *args, int index, const char *name, int64_t *list, int64_t max,
                             int64_t *n)
{
    const loom_attr_value *v = &args->attrs[index];
    if (!v->is_set || v->count < 1 || v->count > max)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute '%s' must hold 1 to %lld integers", args->class_name, name,
                             (long long)max);
    for (int64_t i = 0; i < v->count; i++) {
        if (v->u.ints[i] < 1 || v->u.ints[i] > 4096)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute '%s'[%lld] = %lld must be in [1, 4096]",
                                 args->class_name, name, (long long)i, (long long)v->u.ints[i]);
        list[i] = v->u.ints[i];
    }
    *n = v->count;
    return LOOM_OK;
}

static loom_status arch_of(const loom_object_args *args, void *model)
{
    swin_model *m = model;
    m->patch_h = m->patch_w = 4;
    m->window_h = m->window_w = 7;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, args->class_name) == 0) {
            m->embed = archs[i].embed;
            m->stages = 4;
            memcpy(m->depths, archs[i].depths, sizeof archs[i].depths);
            memcpy(m->heads, archs[i].heads, sizeof archs[i].heads);
            return LOOM_OK;
        }
    if (strcmp(args->class_name, "vision.swin_transformer") != 0 || args->n_attrs < 6)
        return pk_host->fail(LOOM_EINVAL, "%s is not a Swin class", args->class_name);
    int64_t pair[2], n, nh;
    loom_status st;
    if ((st = ints_attr(args, 1, "patch_size", pair, 2, &n)) != LOOM_OK)
        return st;
    m->patch_h = pair[0];
    m->patch_w = pair[n - 1];
    const loom_attr_value *e = &args->attrs[2];
    if (!e->is_set || e->u.i < 1 || e->u.i > 65536)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'embed_dim' must be set, in [1, 65536]", args->class_name);
    m->embed = e->u.i;
    if ((st = ints_attr(args, 3, "depths", m->depths, SWIN_MAX_STAGES, &m->stages)) != LOOM_OK
        || (st = ints_attr(args, 4, "num_heads", m->heads, SWIN_MAX_STAGES, &nh)) != LOOM_OK
        || (st = ints_attr(args, 5, "window_size", pair, 2, &n)) != LOOM_OK)
        return st;
    m->window_h = pair[0];
    m->window_w = pair[n - 1];
    if (nh != m->stages)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'num_heads' has %lld values, 'depths' %lld",
                             args->class_name, (long long)nh, (long long)m->stages);
    for (int64_t s = 0; s < m->stages; s++)
        if ((m->embed << s) % m->heads[s] != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: stage %lld's width %lld is not a multiple of num_heads[%lld] = "
                                 "%lld", args->class_name, (long long)s, (long long)(m->embed << s), (long long)s,
                                 (long long)m->heads[s]);
    return LOOM_OK;
}

static loom_status find_ops(void *model)
{
    swin_model *m = model;
    const char *cls = m->base.cls;
    loom_status st;
    if ((st = sd_find_op(cls, "vision.conv2d", &m->conv2d)) == LOOM_OK
        && (st = sd_find_op(cls, "vision.layer_norm", &m->layer_norm)) == LOOM_OK
        && (st = sd_find_op(cls, "vision.swin_window_attention", &m->attention)) == LOOM_OK
        && (st = sd_find_op(cls, "vision.swin_mlp", &m->mlp)) == LOOM_OK
        && (st = sd_find_op(cls, "vision.swin_patch_merging", &m->merging)) == LOOM_OK)
        st = sd_find_op(cls, "vision.linear", &m->linear);
    return st;
}

static const transformer_loader swin_loader = { sizeof(swin_model), arch_of, load_keys, find_ops, swin_destroy };

static loom_status swin_create(const loom_object_args *args, void **state_out)
{
    return transformer_create(args, state_out, &swin_loader);
}

#define SWIN_CLASS(id) TRANSFORMER_CLASS(id, swin_create, swin_destroy)
SWIN_CLASS(swin_t)
SWIN_CLASS(swin_s)
SWIN_CLASS(swin_b)

#define SWIN_ARCH_ATTR(n, t, d)                                                                    \
    { .name = n, .type = LOOM_ATTR_##t, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,          \
      .dflt = LOOM_DEFAULT_NONE, .doc = d }
static const loom_attr_def swin_transformer_attrs[] = {
    TRANSFORMER_WEIGHTS_ATTR("no weight entries: leave unset"),
    SWIN_ARCH_ATTR("patch_size", INTS, "(ph, pw) or one value: the patch conv's kernel and stride"),
    SWIN_ARCH_ATTR("embed_dim", INT, "stage 1's width (doubled by each patch merging)"),
    SWIN_ARCH_ATTR("depths", INTS, "blocks per stage (at most 8 stages)"),
    SWIN_ARCH_ATTR("num_heads", INTS, "attention heads per stage"),
    SWIN_ARCH_ATTR("window_size", INTS, "(wh, ww) or one value"),
};
static const loom_object_class swin_transformer_class = {
    .struct_size = sizeof(loom_object_class), .name = "vision.swin_transformer",
    .doc = "torchvision.models.SwinTransformer(patch_size, embed_dim, depths, num_heads, window_size) (V1 blocks, "
           "mlp_ratio 4) from a safetensors state_dict; method vision.swin_transformer",
    PK_ATTRS(swin_transformer_attrs), .create = swin_create, .destroy = swin_destroy,
};

const loom_object_class *const vision_swin_classes[4] = { &swin_t_class, &swin_s_class, &swin_b_class,
                                                          &swin_transformer_class };
