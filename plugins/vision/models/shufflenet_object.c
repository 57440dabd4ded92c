/* SPDX-License-Identifier: BSD-3-Clause */
/*
** shufflenet_object.c - the ShuffleNetV2 classes (shufflenet.h): create
** reads torchvision's state_dict from a safetensors file, checks every key,
** refuses the keys it does not have, folds each BatchNorm2d (eps 1e-5)
** into the conv before it and borrows fc from the mapping; the classes come
** from fc.weight.
**
** Keys: conv1.{0,1}; stage<2..4>.<j>.branch1.{0,1,2,3} (first block of a
** stage: dw conv, bn, 1x1 conv, bn) and .branch2.{0,1,3,4,5,6} (1x1, bn,
** dw, bn, 1x1, bn; 2 and 7 are the ReLUs); conv5.{0,1}; fc.
**
** vision.shufflenet_v2 is the same code path with torchvision's
** ShuffleNetV2(stages_repeats, stages_out_channels) as attributes; its
** optional num_classes, when set, must be the file's.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_generic.h"
#include "shufflenet.h"
#include "weights.h"

#define BN_EPS 1e-5

static const shufflenet_arch archs[] = {
    { "vision.shufflenet_v2_x0_5", { 4, 8, 4 }, { 24, 48, 96, 192, 1024 } },
    { "vision.shufflenet_v2_x1_0", { 4, 8, 4 }, { 24, 116, 232, 464, 1024 } },
    { "vision.shufflenet_v2_x1_5", { 4, 8, 4 }, { 24, 176, 352, 704, 1024 } },
    { "vision.shufflenet_v2_x2_0", { 4, 8, 4 }, { 24, 244, 488, 976, 2048 } },
};

const shufflenet_arch *shufflenet_arch_of(const char *class_name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, class_name) == 0)
            return &archs[i];
    return NULL;
}

static void shufflenet_destroy(void *state)
{
    shufflenet_model *m = state;
    if (m == NULL)
        return;
    model_conv_free(&m->conv1);
    model_conv_free(&m->conv5);
    for (int i = 0; m->blocks != NULL && i < m->n_blocks; i++) {
        shufflenet_block *b = &m->blocks[i];
        model_conv *all[5] = { &b->b1_dw, &b->b1_pw, &b->b2_pw1, &b->b2_dw, &b->b2_pw2 };
        for (int j = 0; j < 5; j++)
            model_conv_free(all[j]);
    }
    free(m->blocks);
    model_base_fini(&m->base);
    free(m);
}

/* conv <prefix>.<ci> and its bn <prefix>.<ci + 1> */
static loom_status load_pair(model_loader *L, const char *prefix, int ci, model_conv *c)
{
    char cp[128], bp[128];
    snprintf(cp, sizeof cp, "%s.%d", prefix, ci);
    snprintf(bp, sizeof bp, "%s.%d", prefix, ci + 1);
    return model_load_conv_bn(L, cp, bp, c);
}

static loom_status load_block(model_loader *L, shufflenet_block *b, const char *prefix, int64_t inp, int64_t oup,
                              int stride)
{
    const int64_t bf = oup / 2;
    char p[64];
    loom_status st = LOOM_OK;
    b->stride = stride;
    if (stride > 1) {
        snprintf(p, sizeof p, "%s.branch1", prefix);
        b->b1_dw = model_conv_of(inp, inp, 3, stride, inp);
        b->b1_pw = model_conv_of(inp, bf, 1, 1, 1);
        if ((st = load_pair(L, p, 0, &b->b1_dw)) == LOOM_OK)
            st = load_pair(L, p, 2, &b->b1_pw);
    }
    snprintf(p, sizeof p, "%s.branch2", prefix);
    b->b2_pw1 = model_conv_of(stride > 1 ? inp : bf, bf, 1, 1, 1);
    b->b2_dw = model_conv_of(bf, bf, 3, stride, bf);
    b->b2_pw2 = model_conv_of(bf, bf, 1, 1, 1);
    if (st == LOOM_OK)
        st = load_pair(L, p, 0, &b->b2_pw1);
    if (st == LOOM_OK)
        st = load_pair(L, p, 3, &b->b2_dw);
    if (st == LOOM_OK)
        st = load_pair(L, p, 5, &b->b2_pw2);
    return st;
}

static loom_status load_trunk(model_loader *L, shufflenet_model *m)
{
    const shufflenet_arch *a = ((const shufflenet_arch *)m->base.arch);
    m->n_blocks = a->repeats[0] + a->repeats[1] + a->repeats[2];
    if ((m->blocks = calloc((size_t)m->n_blocks, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", L->cls);
    m->conv1 = model_conv_of(3, a->channels[0], 3, 2, 1);
    loom_status st = load_pair(L, "conv1", 0, &m->conv1);
    int64_t in = a->channels[0];
    for (int s = 0, bi = 0; s < 3 && st == LOOM_OK; s++) {
        for (int j = 0; j < a->repeats[s] && st == LOOM_OK; j++, bi++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "stage%d.%d", s + 2, j);
            st = load_block(L, &m->blocks[bi], prefix, j == 0 ? in : a->channels[s + 1], a->channels[s + 1],
                            j == 0 ? 2 : 1);
        }
        in = a->channels[s + 1];
    }
    m->conv5 = model_conv_of(in, a->channels[4], 1, 1, 1);
    if (st == LOOM_OK)
        st = load_pair(L, "conv5", 0, &m->conv5);
    m->base.features = a->channels[4];
    return st;
}

static loom_status shufflenet_load(model_loader *L, void *model)
{
    shufflenet_model *m = model;
    /* the architecture kept in the model: vision.shufflenet_v2's is create's local */
    m->arch = *(const shufflenet_arch *)m->base.arch;
    m->base.arch = &m->arch;
    return load_trunk(L, m);
}

static loom_status shufflenet_create(const loom_object_args *args, void **state_out)
{
    return model_create(args, state_out, shufflenet_arch_of(args->class_name), sizeof(shufflenet_model), BN_EPS, "fc", shufflenet_load,
                        shufflenet_destroy);
}

MODEL_CLASSES(VISION_SHUFFLENETS, shufflenet)

/* vision.shufflenet_v2's architecture from its attributes (weights,
** stages_repeats, stages_out_channels, num_classes); LOOM_EINVAL naming the
** attribute. A stage's blocks split their channels in two halves, so the
** stages' widths are even (torchvision's InvertedResidual asserts it). */
static loom_status arch_from_attrs(const loom_object_args *args, void *out)
{
    shufflenet_arch *a = out;
    const char *cls = args->class_name;
    memset(a, 0, sizeof *a);
    a->name = cls;
    if (args->n_attrs < 3)
        return pk_host->fail(LOOM_EINVAL, "%s is not a ShuffleNetV2 class", cls);
    const loom_attr_value *r = &args->attrs[1], *c = &args->attrs[2];
    if (!r->is_set || r->count != 3)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages_repeats' must hold 3 ints, not %lld", cls,
                             (long long)r->count);
    if (!c->is_set || c->count != 5)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages_out_channels' must hold 5 ints, not %lld", cls,
                             (long long)c->count);
    for (int i = 0; i < 3; i++) {
        if (r->u.ints[i] < 1 || r->u.ints[i] > 256)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages_repeats' [%d] is %lld, not in [1, 256]", cls,
                                 i, (long long)r->u.ints[i]);
        a->repeats[i] = (int)r->u.ints[i];
    }
    for (int i = 0; i < 5; i++) {
        if (c->u.ints[i] < 1 || c->u.ints[i] > 65536)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages_out_channels' [%d] is %lld, not in [1, 65536]",
                                 cls, i, (long long)c->u.ints[i]);
        if (i >= 1 && i <= 3 && c->u.ints[i] % 2 != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages_out_channels' [%d] is %lld: a stage's width "
                                 "must be even (its blocks split it in two halves)", cls, i, (long long)c->u.ints[i]);
        a->channels[i] = (int)c->u.ints[i];
    }
    return LOOM_OK;
}

/* vision.shufflenet_v2: the architecture from the attributes, then the
** named classes' create; num_classes (attrs[3]), when set, checked. */
static loom_status shufflenet_generic_create(const loom_object_args *args, void **state_out)
{
    shufflenet_arch arch;
    return model_create_from_attrs(args, state_out, arch_from_attrs, &arch, sizeof(shufflenet_model), BN_EPS, "fc",
                                   shufflenet_load, shufflenet_destroy, 3);
}

static const loom_attr_def shufflenet_generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    { .name = "stages_repeats", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "blocks of stages 2, 3 and 4 (3 ints)" },
    { .name = "stages_out_channels", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED,
      .dflt = LOOM_DEFAULT_NONE, .doc = "widths of conv1, stages 2 to 4 (even) and conv5 (5 ints)" },
    MODEL_NUM_CLASSES_ATTR,
};
MODEL_GENERIC_CLASS(shufflenet_v2, shufflenet_generic_attrs, shufflenet_generic_create, shufflenet_destroy,
                    "torchvision.models.ShuffleNetV2(stages_repeats, stages_out_channels) from a safetensors "
                    "state_dict (the named vision.shufflenet_v2_* classes are presets of it); method "
                    "vision.shufflenet_v2")
