/* SPDX-License-Identifier: BSD-3-Clause */
/*
** regnet_object.c - the RegNet classes (regnet.h): create reads a
** safetensors file holding exactly torchvision's state_dict, checks each key
** against the architecture's stage table (regnet_params.c), refuses keys it
** does not have, folds every BatchNorm2d (eps 1e-5, torchvision's _regnet)
** into its conv, and borrows the squeeze-excitation's 1x1 convs and fc from
** the mapping. The classes come from fc.weight.
**
** Keys (torchvision/models/regnet.py): stem.0 / stem.1; per stage s and
** block j, trunk_output.block<s>.block<s>-<j>. proj.0 / proj.1 (first block
** of a stage), f.a.*, f.b.* (groups = width / group width), f.se.fc1 /
** fc2 (Y models: round(se_ratio * the block's input width) channels),
** f.c.*; fc.
**
** vision.regnet is the same code path with the architecture as attributes
** (torchvision's RegNet(BlockParams.from_init_params(depth, w_0, w_a, w_m,
** group_width, bottleneck_multiplier, se_ratio), stem_width)); its
** optional num_classes, when set, must be the file's.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_generic.h"
#include "regnet.h"
#include "weights.h"

#define BN_EPS 1e-5             /* _regnet's norm_layer: BatchNorm2d(eps=1e-05, momentum=0.1) */

static void regnet_destroy(void *state)
{
    regnet_model *m = state;
    if (m == NULL)
        return;
    model_conv_free(&m->stem);
    for (int i = 0; m->blocks != NULL && i < m->n_blocks; i++) {
        regnet_block *b = &m->blocks[i];
        model_conv_free(&b->proj);
        model_conv_free(&b->a);
        model_conv_free(&b->b);
        model_conv_free(&b->c);
    }
    free(m->blocks);
    model_base_fini(&m->base);
    free(m);
}

static loom_status load_block(model_loader *L, const regnet_model *m, regnet_block *b, const char *prefix,
                              int64_t w_in, int64_t w_out, int64_t w_b, int64_t stride, int64_t group_width)
{
    char cp[128], bp[128];
    loom_status st = LOOM_OK;
    if (w_in != w_out || stride != 1) {
        b->has_proj = 1;
        b->proj = model_conv_of(w_in, w_out, 1, stride, 1);
        snprintf(cp, sizeof cp, "%s.proj.0", prefix);
        snprintf(bp, sizeof bp, "%s.proj.1", prefix);
        st = model_load_conv_bn(L, cp, bp, &b->proj);
    }
    b->a = model_conv_of(w_in, w_b, 1, 1, 1);
    b->b = model_conv_of(w_b, w_b, 3, stride, w_b / group_width);
    b->c = model_conv_of(w_b, w_out, 1, 1, 1);
    static const char *const names[3] = { "a", "b", "c" };
    model_conv *convs[3] = { &b->a, &b->b, &b->c };
    for (int i = 0; i < 3 && st == LOOM_OK; i++) {
        if (i == 2 && m->arch.se_ratio > 0) {
            /* Python's round(se_ratio * width_in): half to even */
            b->se_channels = (int64_t)nearbyint(m->arch.se_ratio * (double)w_in);
            const loom_tensor *w1, *b1, *w2, *b2;
            snprintf(cp, sizeof cp, "%s.f.se.fc1", prefix);
            st = model_load_conv_bias(L, cp, w_b, b->se_channels, &w1, &b1);
            snprintf(cp, sizeof cp, "%s.f.se.fc2", prefix);
            if (st == LOOM_OK && (st = model_load_conv_bias(L, cp, b->se_channels, w_b, &w2, &b2)) == LOOM_OK) {
                b->se_w1 = loom_data(w1);
                b->se_b1 = loom_data(b1);
                b->se_w2 = loom_data(w2);
                b->se_b2 = loom_data(b2);
            }
            if (st != LOOM_OK)
                break;
        }
        snprintf(cp, sizeof cp, "%s.f.%s.0", prefix, names[i]);
        snprintf(bp, sizeof bp, "%s.f.%s.1", prefix, names[i]);
        st = model_load_conv_bn(L, cp, bp, convs[i]);
    }
    return st;
}

static loom_status load_trunk(model_loader *L, regnet_model *m)
{
    const regnet_stages *S = &m->stages;
    int n = 0;
    for (int s = 0; s < S->n; s++)
        n += (int)S->depth[s];
    if ((m->blocks = calloc((size_t)n, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", L->cls);
    m->n_blocks = n;
    int64_t width = m->arch.stem_width;
    loom_status st = LOOM_OK;
    for (int s = 0, bi = 0; s < S->n && st == LOOM_OK; s++) {
        for (int j = 0; j < S->depth[s] && st == LOOM_OK; j++, bi++) {
            char prefix[96];
            snprintf(prefix, sizeof prefix, "trunk_output.block%d.block%d-%d", s + 1, s + 1, j);
            st = load_block(L, m, &m->blocks[bi], prefix, j == 0 ? width : S->width[s], S->width[s], S->bottleneck[s], j == 0 ? 2 : 1,
                            S->group_width[s]);
        }
        width = S->width[s];
    }
    m->base.features = width;
    return st;
}

/* the stage table, the stem and the trunk (model_create's load) */
static loom_status regnet_load(model_loader *L, void *model)
{
    regnet_model *m = model;
    /* the architecture kept in the model: vision.regnet's is create's local */
    m->arch = *(const regnet_arch *)m->base.arch;
    m->base.arch = &m->arch;
    loom_status st = regnet_stages_of(&m->arch, &m->stages);
    m->stem = model_conv_of(3, m->arch.stem_width, 3, 2, 1);
    if (st == LOOM_OK)
        st = model_load_conv_bn(L, "stem.0", "stem.1", &m->stem);
    return st != LOOM_OK ? st : load_trunk(L, m);
}

static loom_status regnet_create(const loom_object_args *args, void **state_out)
{
    return model_create(args, state_out, regnet_arch_of(args->class_name), sizeof(regnet_model), BN_EPS, "fc", regnet_load,
                        regnet_destroy);
}

MODEL_CLASSES(VISION_REGNETS, regnet)

/* vision.regnet: the architecture from the attributes, then the named
** classes' create; num_classes (attrs[9]), when set, checked against fc. */
static loom_status regnet_generic_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    regnet_arch arch;
    loom_status st = regnet_arch_from_attrs(args, &arch);
    if (st == LOOM_OK)
        st = model_create_generic(args, state_out, &arch, sizeof(regnet_model), BN_EPS, "fc", regnet_load,
                                  regnet_destroy, 9);
    return st;
}

#define REGNET_INT_ATTR(n, f, d, text)                                                              \
    { .name = n, .type = LOOM_ATTR_INT, .flags = f, .dflt = d, .doc = text }
#define REGNET_FLOAT_ATTR(n, f, d, text)                                                            \
    { .name = n, .type = LOOM_ATTR_FLOAT, .flags = f, .dflt = d, .doc = text }
/* the order regnet_arch_from_attrs reads them in */
static const loom_attr_def regnet_generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    REGNET_INT_ATTR("depth", LOOM_ATTR_REQUIRED, LOOM_DEFAULT_NONE, "blocks in all, in [1, 256]"),
    REGNET_INT_ATTR("w_0", LOOM_ATTR_REQUIRED, LOOM_DEFAULT_NONE, "the initial width, a multiple of 8"),
    REGNET_FLOAT_ATTR("w_a", LOOM_ATTR_REQUIRED, LOOM_DEFAULT_NONE, "the width slope, >= 0"),
    REGNET_FLOAT_ATTR("w_m", LOOM_ATTR_REQUIRED, LOOM_DEFAULT_NONE, "the width step in log space, > 1"),
    REGNET_INT_ATTR("group_width", LOOM_ATTR_REQUIRED, LOOM_DEFAULT_NONE, "channels per group of the 3x3 convs"),
    REGNET_FLOAT_ATTR("bottleneck_multiplier", 0, LOOM_DEFAULT_FLOAT(1.0), "bottleneck width / block width"),
    REGNET_FLOAT_ATTR("se_ratio", 0, LOOM_DEFAULT_FLOAT(0.0),
                      "squeeze channels / a block's input width (0: no squeeze-excitation, the X models)"),
    REGNET_INT_ATTR("stem_width", 0, LOOM_DEFAULT_INT(32), "the stem's output channels"),
    MODEL_NUM_CLASSES_ATTR,
};
MODEL_GENERIC_CLASS(regnet, regnet_generic_attrs, regnet_generic_create, regnet_destroy,
                    "torchvision.models.RegNet(BlockParams.from_init_params(depth, w_0, w_a, w_m, group_width, "
                    "bottleneck_multiplier, se_ratio), stem_width) from a safetensors state_dict (the named "
                    "vision.regnet_* classes are presets of it); method vision.regnet")
