/* SPDX-License-Identifier: BSD-3-Clause */
/*
** efficientnet_object.c - the EfficientNetV2 classes (efficientnet.h):
** create reads torchvision's state_dict from a safetensors file, checks
** every key against the architecture, refuses the keys it does not have,
** folds each BatchNorm2d (eps 1e-3: torchvision's efficientnet_v2_*
** builders) into its conv and borrows the squeeze-excitations' 1x1 convs
** and the classifier from the mapping. The classes come from
** classifier.1.weight.
**
** Keys: features.0.{0,1} (stem); features.<s>.<j>.block.<i>.{0,1} for
** stage s = 1.. and block j, i counting the block's layers in order
** (FusedMBConv: expand, proj; MBConv: expand, dw, the SE's fc1 / fc2 at
** block.<i>.fc1, proj); features.<stages + 1>.{0,1} (the 1x1 head);
** classifier.1 (the Linear after the Dropout).
**
** vision.efficientnet_v2 is the same code path with torchvision's
** EfficientNet(inverted_residual_setting, last_channel) of V2 (BatchNorm2d
** eps 1e-3) as attributes: a list of FusedMBConvConfig / MBConvConfig
** rows; its optional num_classes, when set, must be the file's.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "efficientnet.h"
#include "model_generic.h"
#include "weights.h"

#define BN_EPS 1e-3

/* _efficientnet_conf: FusedMBConvConfig / MBConvConfig(expand_ratio, kernel, stride, in, out, layers) */
static const effnet_arch archs[] = {
    { "vision.efficientnet_v2_s", 6,
      { { 1, 1, 3, 1, 24, 24, 2 }, { 1, 4, 3, 2, 24, 48, 4 }, { 1, 4, 3, 2, 48, 64, 4 },
        { 0, 4, 3, 2, 64, 128, 6 }, { 0, 6, 3, 1, 128, 160, 9 }, { 0, 6, 3, 2, 160, 256, 15 } }, 1280 },
    { "vision.efficientnet_v2_m", 7,
      { { 1, 1, 3, 1, 24, 24, 3 }, { 1, 4, 3, 2, 24, 48, 5 }, { 1, 4, 3, 2, 48, 80, 5 },
        { 0, 4, 3, 2, 80, 160, 7 }, { 0, 6, 3, 1, 160, 176, 14 }, { 0, 6, 3, 2, 176, 304, 18 },
        { 0, 6, 3, 1, 304, 512, 5 } }, 1280 },
    { "vision.efficientnet_v2_l", 7,
      { { 1, 1, 3, 1, 32, 32, 4 }, { 1, 4, 3, 2, 32, 64, 7 }, { 1, 4, 3, 2, 64, 96, 7 },
        { 0, 4, 3, 2, 96, 192, 10 }, { 0, 6, 3, 1, 192, 224, 19 }, { 0, 6, 3, 2, 224, 384, 25 },
        { 0, 6, 3, 1, 384, 640, 7 } }, 1280 },
};

const effnet_arch *effnet_arch_of(const char *class_name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, class_name) == 0)
            return &archs[i];
    return NULL;
}

/* torchvision's _make_divisible(v, 8) (adjust_channels with width_mult 1) */
static int64_t divisible8(double v)
{
    int64_t nv = (int64_t)(v + 4.0) / 8 * 8;
    if (nv < 8)
        nv = 8;
    if ((double)nv < 0.9 * v)
        nv += 8;
    return nv;
}

static void effnet_destroy(void *state)
{
    effnet_model *m = state;
    if (m == NULL)
        return;
    model_conv_free(&m->stem);
    model_conv_free(&m->head);
    for (int i = 0; m->blocks != NULL && i < m->n_blocks; i++) {
        model_conv_free(&m->blocks[i].expand);
        model_conv_free(&m->blocks[i].dw);
        model_conv_free(&m->blocks[i].proj);
    }
    free(m->blocks);
    model_base_fini(&m->base);
    free(m);
}

/* the conv + bn of layer `index` of the block at prefix */
static loom_status load_layer(model_loader *L, const char *prefix, int index, model_conv *c)
{
    char cp[128], bp[128];
    snprintf(cp, sizeof cp, "%s.block.%d.0", prefix, index);
    snprintf(bp, sizeof bp, "%s.block.%d.1", prefix, index);
    return model_load_conv_bn(L, cp, bp, c);
}

static loom_status load_block(model_loader *L, effnet_block *b, const char *prefix, const effnet_stage *s,
                              int64_t in, int64_t stride)
{
    const int64_t out = s->out, expanded = divisible8((double)in * s->expand_ratio);
    b->fused = s->fused;
    b->has_expand = expanded != in;
    b->use_res = stride == 1 && in == out;
    int i = 0;
    loom_status st = LOOM_OK;
    if (s->fused) {
        if (b->has_expand) {
            b->expand = model_conv_of(in, expanded, s->kernel, stride, 1);
            b->proj = model_conv_of(expanded, out, 1, 1, 1);
            if ((st = load_layer(L, prefix, i++, &b->expand)) == LOOM_OK)
                st = load_layer(L, prefix, i++, &b->proj);
        } else {
            b->proj = model_conv_of(in, out, s->kernel, stride, 1);
            st = load_layer(L, prefix, i++, &b->proj);
        }
        return st;
    }
    if (b->has_expand) {
        b->expand = model_conv_of(in, expanded, 1, 1, 1);
        st = load_layer(L, prefix, i++, &b->expand);
    }
    b->dw = model_conv_of(expanded, expanded, s->kernel, stride, expanded);
    if (st == LOOM_OK)
        st = load_layer(L, prefix, i++, &b->dw);
    b->se_channels = in / 4 > 1 ? in / 4 : 1;
    if (st == LOOM_OK) {
        char p[128];
        const loom_tensor *w1, *b1, *w2, *b2;
        snprintf(p, sizeof p, "%s.block.%d.fc1", prefix, i);
        st = model_load_conv_bias(L, p, expanded, b->se_channels, &w1, &b1);
        snprintf(p, sizeof p, "%s.block.%d.fc2", prefix, i++);
        if (st == LOOM_OK && (st = model_load_conv_bias(L, p, b->se_channels, expanded, &w2, &b2)) == LOOM_OK) {
            b->se_w1 = loom_data(w1);
            b->se_b1 = loom_data(b1);
            b->se_w2 = loom_data(w2);
            b->se_b2 = loom_data(b2);
        }
    }
    b->proj = model_conv_of(expanded, out, 1, 1, 1);
    if (st == LOOM_OK)
        st = load_layer(L, prefix, i++, &b->proj);
    return st;
}

static loom_status load_features(model_loader *L, effnet_model *m)
{
    const effnet_arch *a = &m->arch;
    int n = 0;
    for (int s = 0; s < a->n_stages; s++)
        n += a->stages[s].layers;
    if ((m->blocks = calloc((size_t)n, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", L->cls);
    m->n_blocks = n;
    m->stem = model_conv_of(3, a->stages[0].in, 3, 2, 1);
    loom_status st = model_load_conv_bn(L, "features.0.0", "features.0.1", &m->stem);
    for (int s = 0, bi = 0; s < a->n_stages && st == LOOM_OK; s++) {
        const effnet_stage *S = &a->stages[s];
        for (int j = 0; j < S->layers && st == LOOM_OK; j++, bi++) {
            char prefix[64];
            snprintf(prefix, sizeof prefix, "features.%d.%d", s + 1, j);
            st = load_block(L, &m->blocks[bi], prefix, S, j == 0 ? S->in : S->out, j == 0 ? S->stride : 1);
        }
    }
    const int64_t last_in = a->stages[a->n_stages - 1].out;
    m->head = model_conv_of(last_in, a->last_channel, 1, 1, 1);
    if (st == LOOM_OK) {
        char cp[32], bp[32];
        snprintf(cp, sizeof cp, "features.%d.0", a->n_stages + 1);
        snprintf(bp, sizeof bp, "features.%d.1", a->n_stages + 1);
        st = model_load_conv_bn(L, cp, bp, &m->head);
    }
    m->base.features = a->last_channel;
    return st;
}

static loom_status effnet_load(model_loader *L, void *model)
{
    effnet_model *m = model;
    /* the architecture kept in the model: vision.efficientnet_v2's is create's local */
    m->arch = *(const effnet_arch *)m->base.arch;
    m->base.arch = &m->arch;
    return load_features(L, m);
}

static loom_status effnet_create(const loom_object_args *args, void **state_out)
{
    return model_create(args, state_out, effnet_arch_of(args->class_name), sizeof(effnet_model), BN_EPS, "classifier.1", effnet_load,
                        effnet_destroy);
}

MODEL_CLASSES(VISION_EFFICIENTNETS, effnet)

/* vision.efficientnet_v2's attributes, in order (attrs[0] is weights) */
enum { ATTR_STAGES = 1, ATTR_LAST_CHANNEL, ATTR_NUM_CLASSES, N_GENERIC_ATTRS };
#define STAGE_INTS 7            /* fused, expand_ratio, kernel, stride, in, out, layers */

/* a field of stages row r, in [lo, hi], or a message naming it */
static loom_status stage_field(const char *cls, const int64_t *row, int r, int f, int64_t lo, int64_t hi, int *out)
{
    static const char *const names[STAGE_INTS] = { "fused", "expand_ratio", "kernel", "stride", "in", "out",
                                                   "layers" };
    if (row[f] < lo || row[f] > hi)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages' row %d: %s is %lld, not in [%lld, %lld]", cls, r,
                             names[f], (long long)row[f], (long long)lo, (long long)hi);
    *out = (int)row[f];
    return LOOM_OK;
}

/* The architecture of vision.efficientnet_v2 from its attributes. The
** channels are adjusted as torchvision's _MBConvConfig.adjust_channels
** does (_make_divisible(c, 8), width_mult 1); a stage's input must be the
** previous stage's output (torchvision builds a model that would fail at
** its first forward otherwise). */
static loom_status arch_from_attrs(const loom_object_args *args, void *out)
{
    effnet_arch *a = out;
    const char *cls = args->class_name;
    memset(a, 0, sizeof *a);
    a->name = cls;
    if (args->n_attrs < N_GENERIC_ATTRS)
        return pk_host->fail(LOOM_EINVAL, "%s is not an EfficientNetV2 class", cls);
    const loom_attr_value *sv = &args->attrs[ATTR_STAGES], *lc = &args->attrs[ATTR_LAST_CHANNEL];
    if (!sv->is_set || sv->count < STAGE_INTS || sv->count % STAGE_INTS != 0
        || sv->count > STAGE_INTS * EFFNET_MAX_STAGES)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages' must hold 1 to %d rows of %d ints (fused, "
                             "expand_ratio, kernel, stride, in, out, layers), not %lld ints", cls, EFFNET_MAX_STAGES,
                             STAGE_INTS, (long long)sv->count);
    a->n_stages = (int)(sv->count / STAGE_INTS);
    loom_status st = LOOM_OK;
    for (int r = 0; r < a->n_stages && st == LOOM_OK; r++) {
        const int64_t *row = sv->u.ints + (size_t)r * STAGE_INTS;
        effnet_stage *s = &a->stages[r];
        if ((st = stage_field(cls, row, r, 0, 0, 1, &s->fused)) == LOOM_OK
            && (st = stage_field(cls, row, r, 1, 1, 16, &s->expand_ratio)) == LOOM_OK
            && (st = stage_field(cls, row, r, 2, 1, 15, &s->kernel)) == LOOM_OK
            && (st = stage_field(cls, row, r, 3, 1, 2, &s->stride)) == LOOM_OK
            && (st = stage_field(cls, row, r, 4, 1, 65536, &s->in)) == LOOM_OK
            && (st = stage_field(cls, row, r, 5, 1, 65536, &s->out)) == LOOM_OK)
            st = stage_field(cls, row, r, 6, 1, 256, &s->layers);
        if (st == LOOM_OK && s->kernel % 2 == 0)
            st = pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages' row %d: kernel %d is even (the padding is "
                               "(kernel - 1) / 2 on each side)", cls, r, s->kernel);
        if (st != LOOM_OK)
            break;
        s->in = (int)divisible8(s->in);
        s->out = (int)divisible8(s->out);
        if (r > 0 && s->in != a->stages[r - 1].out)
            st = pk_host->fail(LOOM_EINVAL, "%s: attribute 'stages' row %d: in is %d, row %d's out %d", cls, r, s->in,
                               r - 1, a->stages[r - 1].out);
    }
    if (st != LOOM_OK)
        return st;
    /* torchvision's default last_channel: 4 x the last stage's output */
    const int64_t last = lc->is_set ? lc->u.i : 4 * (int64_t)a->stages[a->n_stages - 1].out;
    if (last < 1 || last > 65536)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'last_channel' is %lld, not in [1, 65536]", cls,
                             (long long)last);
    a->last_channel = (int)last;
    return LOOM_OK;
}

/* vision.efficientnet_v2: the architecture from the attributes, then the
** named classes' create; num_classes, when set, checked against the
** classifier. */
static loom_status effnet_generic_create(const loom_object_args *args, void **state_out)
{
    effnet_arch arch;
    return model_create_from_attrs(args, state_out, arch_from_attrs, &arch, sizeof(effnet_model), BN_EPS,
                                   "classifier.1", effnet_load, effnet_destroy, ATTR_NUM_CLASSES);
}

/* the order of the ATTR_* indices */
static const loom_attr_def effnet_generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    { .name = "stages", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "inverted_residual_setting: 1 to 8 rows of 7 ints, fused (1: FusedMBConvConfig, 0: MBConvConfig), "
             "expand_ratio, kernel, stride, in, out, layers" },
    { .name = "last_channel", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_NONE,
      .doc = "the head conv's output channels (unset: 4 x the last stage's out, as torchvision)" },
    MODEL_NUM_CLASSES_ATTR,
};
MODEL_GENERIC_CLASS(efficientnet_v2, effnet_generic_attrs, effnet_generic_create, effnet_destroy,
                    "torchvision.models.EfficientNet(inverted_residual_setting, last_channel) of V2 (BatchNorm2d "
                    "eps 1e-3) from a safetensors state_dict (the named vision.efficientnet_v2_* classes are "
                    "presets of it); method vision.efficientnet_v2")
