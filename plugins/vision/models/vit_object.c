/* SPDX-License-Identifier: BSD-3-Clause */
/*
** vit_object.c - the ViT object classes: create reads a safetensors file
** holding exactly torchvision's VisionTransformer state_dict (class_token,
** conv_proj, encoder.pos_embedding, encoder.layers.encoder_layer_N.*,
** encoder.ln, heads.head and, when representation_size was set,
** heads.pre_logits), each key checked for dtype and shape, and refuses any
** key the architecture lacks. The number of classes is heads.head.weight's
** first dim and the trained grid is the pos embedding's, so fine-tuned heads
** and files trained at other sizes (SWAG's 384 and 518) load; every tensor
** is borrowed from the mapping.
**
** Architectures (torchvision's builders): vit_b_16 (patch 16, 12 layers,
** 12 heads, hidden 768, mlp 3072), vit_b_32 (32, the same encoder),
** vit_l_16 (16, 24, 16, 1024, 4096), vit_h_14 (14, 32, 16, 1280, 5120);
** vision.vision_transformer takes the five numbers as attributes.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "state_dict.h"
#include "vit.h"
#include "weights_docs.h"

typedef struct vit_arch {
    const char *name;
    int64_t patch, layers, heads, hidden, mlp;
} vit_arch;

static const vit_arch archs[] = {
    { "vision.vit_b_16", 16, 12, 12, 768, 3072 },
    { "vision.vit_b_32", 32, 12, 12, 768, 3072 },
    { "vision.vit_l_16", 16, 24, 16, 1024, 4096 },
    { "vision.vit_h_14", 14, 32, 16, 1280, 5120 },
};

static void vit_destroy(void *state)
{
    vit_model *m = state;
    if (m == NULL)
        return;
    free(m->blocks);
    free(m->packed);
    vit_plan *p = &m->plan;
    free(p->patches);
    free(p->tokens);
    free(p->pos);
    free(p->head_in);
    free(p->head_mid);
    transformer_base_fini(&m->base);
    free(m);
}

static const char *const block_keys[VIT_BLOCK_TENSORS] = {
    "ln_1.weight", "ln_1.bias", "self_attention.in_proj_weight", "self_attention.in_proj_bias",
    "self_attention.out_proj.weight", "self_attention.out_proj.bias", "ln_2.weight", "ln_2.bias",
    "mlp.0.weight", "mlp.0.bias", "mlp.3.weight", "mlp.3.bias",
};

static loom_status load_keys(sd_loader *L, void *model)
{
    vit_model *m = model;
    const int64_t d = m->hidden, p = m->patch;
    const int64_t tok[3] = { 1, 1, d }, cw[4] = { d, 3, p, p }, vd[1] = { d };
    loom_status st;
    if ((st = sd_param(L, &m->class_token, 3, tok, "class_token")) != LOOM_OK
        || (st = sd_param(L, &m->conv_w, 4, cw, "conv_proj.weight")) != LOOM_OK
        || (st = sd_param(L, &m->conv_b, 1, vd, "conv_proj.bias")) != LOOM_OK)
        return st;
    /* the trained grid: seq_length = grid0^2 + 1, a perfect square as
    ** interpolate_embeddings requires */
    int64_t seq0 = sd_dim(L, "encoder.pos_embedding", 3, 1, 2), g0 = (int64_t)llround(sqrt((double)(seq0 - 1)));
    if (g0 < 1 || g0 * g0 != seq0 - 1)
        return pk_host->fail(LOOM_EINVAL, "%s: key 'encoder.pos_embedding' has %lld positions: one class token plus "
                             "a square grid expected (seq_length = (image_size // patch_size)^2 + 1)", m->base.cls,
                             (long long)seq0);
    m->grid0 = g0;
    const int64_t pos[3] = { 1, seq0, d };
    if ((st = sd_param(L, &m->pos_embedding, 3, pos, "encoder.pos_embedding")) != LOOM_OK)
        return st;
    if ((m->blocks = calloc((size_t)m->layers, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", m->base.cls);
    const int64_t shapes[VIT_BLOCK_TENSORS][2] = {
        { d, 0 }, { d, 0 }, { 3 * d, d }, { 3 * d, 0 }, { d, d }, { d, 0 },
        { d, 0 }, { d, 0 }, { m->mlp, d }, { m->mlp, 0 }, { d, m->mlp }, { d, 0 },
    };
    for (int64_t i = 0; i < m->layers; i++)
        for (int k = 0; k < VIT_BLOCK_TENSORS; k++)
            if ((st = sd_param(L, &m->blocks[i][k], shapes[k][1] ? 2 : 1, shapes[k],
                               "encoder.layers.encoder_layer_%lld.%s", (long long)i, block_keys[k])) != LOOM_OK)
                return st;
    if ((st = sd_param(L, &m->ln_w, 1, vd, "encoder.ln.weight")) != LOOM_OK
        || (st = sd_param(L, &m->ln_b, 1, vd, "encoder.ln.bias")) != LOOM_OK)
        return st;
    int64_t head_in = d;
    if (sd_has(L, "heads.pre_logits.weight")) {
        m->rep = sd_dim(L, "heads.pre_logits.weight", 2, 0, 1);
        const int64_t pw[2] = { m->rep, d }, pb[1] = { m->rep };
        if ((st = sd_param(L, &m->pre_w, 2, pw, "heads.pre_logits.weight")) != LOOM_OK
            || (st = sd_param(L, &m->pre_b, 1, pb, "heads.pre_logits.bias")) != LOOM_OK)
            return st;
        head_in = m->rep;
    }
    m->base.classes = sd_dim(L, "heads.head.weight", 2, 0, 1);
    const int64_t hw[2] = { m->base.classes, head_in }, hb[1] = { m->base.classes };
    if ((st = sd_param(L, &m->head_w, 2, hw, "heads.head.weight")) != LOOM_OK
        || (st = sd_param(L, &m->head_b, 1, hb, "heads.head.bias")) != LOOM_OK)
        return st;
    return sd_no_unexpected(L);
}

/* The architecture: a named class's, or vision_transformer's attributes
** (patch_size, num_layers, num_heads, hidden_dim, mlp_dim after weights). */
static loom_status arch_of(const loom_object_args *args, void *model)
{
    vit_model *m = model;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, args->class_name) == 0) {
            m->patch = archs[i].patch;
            m->layers = archs[i].layers;
            m->heads = archs[i].heads;
            m->hidden = archs[i].hidden;
            m->mlp = archs[i].mlp;
            return LOOM_OK;
        }
    if (strcmp(args->class_name, "vision.vision_transformer") != 0 || args->n_attrs < 6)
        return pk_host->fail(LOOM_EINVAL, "%s is not a ViT class", args->class_name);
    int64_t *dst[5] = { &m->patch, &m->layers, &m->heads, &m->hidden, &m->mlp };
    static const char *const names[5] = { "patch_size", "num_layers", "num_heads", "hidden_dim", "mlp_dim" };
    for (int i = 0; i < 5; i++) {
        const loom_attr_value *v = &args->attrs[1 + i];
        if (!v->is_set || v->u.i < 1 || v->u.i > 65536)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute '%s' must be set, in [1, 65536]", args->class_name,
                                 names[i]);
        *dst[i] = v->u.i;
    }
    if (m->hidden % m->heads != 0)
        return pk_host->fail(LOOM_EINVAL, "%s: hidden_dim %lld is not a multiple of num_heads %lld",
                             args->class_name, (long long)m->hidden, (long long)m->heads);
    return LOOM_OK;
}

static loom_status find_ops(void *model)
{
    vit_model *m = model;
    const char *cls = m->base.cls;
    loom_status st;
    if ((st = sd_find_op(cls, "vision.conv2d", &m->conv2d)) == LOOM_OK
        && (st = sd_find_op(cls, "vision.vit_encoder_block", &m->block)) == LOOM_OK
        && (st = sd_find_op(cls, "vision.layer_norm", &m->layer_norm)) == LOOM_OK)
        st = sd_find_op(cls, "vision.linear", &m->linear);
    return st;
}

static const transformer_loader vit_loader = { sizeof(vit_model), arch_of, load_keys, find_ops, vit_destroy };

static loom_status vit_create(const loom_object_args *args, void **state_out)
{
    return transformer_create(args, state_out, &vit_loader);
}

#define VIT_CLASS(id) TRANSFORMER_CLASS(id, vit_create, vit_destroy)
VIT_CLASS(vit_b_16)
VIT_CLASS(vit_b_32)
VIT_CLASS(vit_l_16)
VIT_CLASS(vit_h_14)

#define VIT_ARCH_ATTR(n, d)                                                                        \
    { .name = n, .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE,          \
      .dflt = LOOM_DEFAULT_NONE, .doc = d }
static const loom_attr_def vision_transformer_attrs[] = {
    TRANSFORMER_WEIGHTS_ATTR("no weight entries: leave unset"),
    VIT_ARCH_ATTR("patch_size", "conv_proj's kernel and stride"),
    VIT_ARCH_ATTR("num_layers", "encoder blocks"),
    VIT_ARCH_ATTR("num_heads", "attention heads (hidden_dim is a multiple)"),
    VIT_ARCH_ATTR("hidden_dim", "the token width"),
    VIT_ARCH_ATTR("mlp_dim", "the MLP's hidden width"),
};
static const loom_object_class vision_transformer_class = {
    .struct_size = sizeof(loom_object_class), .name = "vision.vision_transformer",
    .doc = "torchvision.models.VisionTransformer(patch_size, num_layers, num_heads, hidden_dim, mlp_dim) from a "
           "safetensors state_dict; method vision.vision_transformer",
    PK_ATTRS(vision_transformer_attrs), .create = vit_create, .destroy = vit_destroy,
};

const loom_object_class *const vision_vit_classes[5] = { &vit_b_16_class, &vit_b_32_class, &vit_l_16_class,
                                                         &vit_h_14_class, &vision_transformer_class };
