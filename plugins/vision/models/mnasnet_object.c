/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mnasnet_object.c - the MNASNet classes (mnasnet.h): create reads
** torchvision's state_dict from a safetensors file, checks every key,
** refuses the keys it does not have, folds each BatchNorm2d (eps 1e-5; the
** momentum does not matter at inference) into its conv and borrows the
** classifier from the mapping; the classes come from classifier.1.weight.
**
** Widths: _get_depths(alpha) = _round_to_multiple_of(d * alpha, 8) of
** [32, 16, 24, 40, 80, 96, 192, 320]. Checkpoint layouts (MNASNet's
** _version): 2 is what torchvision's models write, every stem layer scaled
** by alpha; 1 (checkpoints of alpha != 1 made before torchvision 0.6,
** which _load_from_state_dict converts by building the old stem) keeps
** the stem at 32 and 16 channels, the first stack then going 16 ->
** depths[2]. The layout is told by layers.0.weight's channels, as the
** state_dict carries no version in a safetensors file.
**
** Keys: layers.{0,1} (3x3/2), layers.{3,4} (dw 3x3), layers.{6,7} (1x1),
** layers.<8..13>.<j>.layers.{0,1,3,4,6,7} (the stacks), layers.{14,15}
** (1x1 -> 1280), classifier.1.
**
** vision.mnasnet is the same code path with torchvision's MNASNet(alpha)
** as attributes (dropout, the classifier's, is the identity at inference);
** its optional num_classes, when set, must be the file's.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnasnet.h"
#include "model_generic.h"
#include "weights.h"

#define BN_EPS 1e-5
#define HEAD_WIDTH 1280

static const mnasnet_arch archs[] = {
    { "vision.mnasnet0_5", 0.5 },
    { "vision.mnasnet0_75", 0.75 },
    { "vision.mnasnet1_0", 1.0 },
    { "vision.mnasnet1_3", 1.3 },
};

/* the stacks of MNASNet B1: kernel, stride, expansion, repeats (_stack calls) */
static const struct { int kernel, stride, expansion, repeats; } stacks[MNASNET_STACKS] = {
    { 3, 2, 3, 3 }, { 5, 2, 3, 3 }, { 5, 2, 6, 3 }, { 3, 1, 6, 2 }, { 5, 2, 6, 4 }, { 3, 1, 6, 1 },
};
static const int base_depths[8] = { 32, 16, 24, 40, 80, 96, 192, 320 };

const mnasnet_arch *mnasnet_arch_of(const char *class_name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, class_name) == 0)
            return &archs[i];
    return NULL;
}

int64_t mnasnet_round_to_multiple_of(double val, int64_t divisor)
{
    int64_t nv = (int64_t)(val + (double)divisor / 2.0) / divisor * divisor;
    if (nv < divisor)
        nv = divisor;
    return (double)nv >= 0.9 * val ? nv : nv + divisor;
}

static void mnasnet_destroy(void *state)
{
    mnasnet_model *m = state;
    if (m == NULL)
        return;
    model_conv *own[4] = { &m->stem, &m->stem_dw, &m->stem_pw, &m->head };
    for (int i = 0; i < 4; i++)
        model_conv_free(own[i]);
    for (int i = 0; m->blocks != NULL && i < m->n_blocks; i++) {
        model_conv_free(&m->blocks[i].expand);
        model_conv_free(&m->blocks[i].dw);
        model_conv_free(&m->blocks[i].proj);
    }
    free(m->blocks);
    model_base_fini(&m->base);
    free(m);
}

/* conv <prefix><ci> and its bn <prefix><ci + 1> */
static loom_status load_pair(model_loader *L, const char *prefix, int ci, model_conv *c)
{
    char cp[128], bp[128];
    snprintf(cp, sizeof cp, "%s%d", prefix, ci);
    snprintf(bp, sizeof bp, "%s%d", prefix, ci + 1);
    return model_load_conv_bn(L, cp, bp, c);
}

static loom_status load_layers(model_loader *L, mnasnet_model *m)
{
    int64_t d[8];
    for (int i = 0; i < 8; i++)
        d[i] = mnasnet_round_to_multiple_of(base_depths[i] * m->arch.alpha, 8);
    /* the layout: version 1 keeps the stem at 32 / 16 (told by layers.0.weight) */
    const loom_tensor *t;
    m->version = 2;
    if (d[0] != 32 && model_file_has(L->st, "layers.0.weight")
        && pk_host->safetensors_get(L->st, "layers.0.weight", &t) == LOOM_OK && t->ndim == 4 && t->shape[0] == 32) {
        m->version = 1;
        d[0] = 32;
        d[1] = 16;
    }
    m->stem = model_conv_of(3, d[0], 3, 2, 1);
    m->stem_dw = model_conv_of(d[0], d[0], 3, 1, d[0]);
    m->stem_pw = model_conv_of(d[0], d[1], 1, 1, 1);
    loom_status st = load_pair(L, "layers.", 0, &m->stem);
    if (st == LOOM_OK)
        st = load_pair(L, "layers.", 3, &m->stem_dw);
    if (st == LOOM_OK)
        st = load_pair(L, "layers.", 6, &m->stem_pw);
    m->n_blocks = 0;
    for (int s = 0; s < MNASNET_STACKS; s++)
        m->n_blocks += stacks[s].repeats;
    if (st == LOOM_OK && (m->blocks = calloc((size_t)m->n_blocks, sizeof *m->blocks)) == NULL)
        st = pk_host->fail(LOOM_ENOMEM, "%s: out of memory", L->cls);
    int64_t in = d[1];
    for (int s = 0, bi = 0; s < MNASNET_STACKS && st == LOOM_OK; s++) {
        const int64_t out = d[s + 2];
        for (int j = 0; j < stacks[s].repeats && st == LOOM_OK; j++, bi++) {
            mnasnet_block *b = &m->blocks[bi];
            const int64_t bin = j == 0 ? in : out, stride = j == 0 ? stacks[s].stride : 1;
            const int64_t mid = bin * stacks[s].expansion;
            b->use_res = bin == out && stride == 1;
            b->expand = model_conv_of(bin, mid, 1, 1, 1);
            b->dw = model_conv_of(mid, mid, stacks[s].kernel, stride, mid);
            b->proj = model_conv_of(mid, out, 1, 1, 1);
            char prefix[48];
            snprintf(prefix, sizeof prefix, "layers.%d.%d.layers.", 8 + s, j);
            if ((st = load_pair(L, prefix, 0, &b->expand)) == LOOM_OK && (st = load_pair(L, prefix, 3, &b->dw)) == LOOM_OK)
                st = load_pair(L, prefix, 6, &b->proj);
        }
        in = out;
    }
    m->head = model_conv_of(in, HEAD_WIDTH, 1, 1, 1);
    if (st == LOOM_OK)
        st = load_pair(L, "layers.", 14, &m->head);
    m->base.features = HEAD_WIDTH;
    return st;
}

static loom_status mnasnet_load(model_loader *L, void *model)
{
    mnasnet_model *m = model;
    /* the architecture kept in the model: vision.mnasnet's is create's local */
    m->arch = *(const mnasnet_arch *)m->base.arch;
    m->base.arch = &m->arch;
    return load_layers(L, m);
}

static loom_status mnasnet_create(const loom_object_args *args, void **state_out)
{
    return model_create(args, state_out, mnasnet_arch_of(args->class_name), sizeof(mnasnet_model), BN_EPS, "classifier.1", mnasnet_load,
                        mnasnet_destroy);
}

MODEL_CLASSES(VISION_MNASNETS, mnasnet)

/* vision.mnasnet: alpha (attrs[1]; dropout, attrs[2], checked and unused),
** then the named classes' create; num_classes (attrs[3]), when set,
** checked against the classifier. */
static loom_status mnasnet_generic_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const char *cls = args->class_name;
    if (args->n_attrs < 4)
        return pk_host->fail(LOOM_EINVAL, "%s is not an MNASNet class", cls);
    const mnasnet_arch arch = { cls, args->attrs[1].u.f };
    if (!args->attrs[1].is_set || !(arch.alpha > 0 && arch.alpha <= 16))
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'alpha' must be in (0, 16]", cls);
    if (!(args->attrs[2].u.f >= 0 && args->attrs[2].u.f <= 1))
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'dropout' must be in [0, 1]", cls);
    return model_create_generic(args, state_out, &arch, sizeof(mnasnet_model), BN_EPS, "classifier.1",
                                mnasnet_load, mnasnet_destroy, 3);
}

static const loom_attr_def mnasnet_generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    { .name = "alpha", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "the width multiplier, in (0, 16]: depths _round_to_multiple_of(d * alpha, 8)" },
    { .name = "dropout", .type = LOOM_ATTR_FLOAT, .dflt = LOOM_DEFAULT_FLOAT(0.2),
      .doc = "the classifier's dropout, in [0, 1]: the identity at inference" },
    MODEL_NUM_CLASSES_ATTR,
};
MODEL_GENERIC_CLASS(mnasnet, mnasnet_generic_attrs, mnasnet_generic_create, mnasnet_destroy,
                    "torchvision.models.MNASNet(alpha) from a safetensors state_dict (the named vision.mnasnet* "
                    "classes are presets of it); method vision.mnasnet")
