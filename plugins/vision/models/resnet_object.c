/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resnet_object.c - the ResNet family's object classes (vision.resnet18 ...
** wide_resnet101_2): create reads a safetensors file holding exactly
** torchvision's state_dict (every key, num_batches_tracked included),
** checks each key's dtype and shape against the architecture, refuses any
** key the architecture does not have, and folds every BatchNorm2d into the
** convolution before it (layers_fold_batch_norm, eps 1e-5 as torchvision's
** nn.BatchNorm2d). The number of classes is fc.weight's first dim, so
** fine-tuned heads load. fc's weight and bias are borrowed from the mapping
** (the core keeps it for the object's life); the folded convs are owned.
**
** Architectures (torchvision/models/resnet.py): conv1 7x7/2 + bn1 + relu +
** maxpool 3/2, then layer1..4 of BasicBlock (3x3, 3x3) or Bottleneck (1x1,
** 3x3 with the stride and the groups, 1x1 to 4x planes; width = planes *
** width_per_group / 64 * groups), a downsample (1x1 conv + bn) on the first
** block of a stage whose stride or width changes, then avgpool and fc.
**
** vision.resnet is the same code path with the architecture as attributes:
** the block, the layers, groups and width_per_group of torchvision's
** ResNet, plus the stem's and the stages' widths, which torchvision fixes
** (64; 64, 128, 256, 512) and a model built from its blocks with other
** widths keeps under the same key names; its optional num_classes, when
** set, must be the file's.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_common.h"
#include "model_generic.h"
#include "weights.h"
#include "weights_docs.h"

/* torchvision's ResNet: a 64-wide stem, stages of 64, 128, 256, 512 planes */
#define TV_WIDTHS { 64, 128, 256, 512 }, 64
static const resnet_arch archs[] = {
    { "vision.resnet18", 0, { 2, 2, 2, 2 }, 1, 64, TV_WIDTHS },
    { "vision.resnet34", 0, { 3, 4, 6, 3 }, 1, 64, TV_WIDTHS },
    { "vision.resnet50", 1, { 3, 4, 6, 3 }, 1, 64, TV_WIDTHS },
    { "vision.resnet101", 1, { 3, 4, 23, 3 }, 1, 64, TV_WIDTHS },
    { "vision.resnet152", 1, { 3, 8, 36, 3 }, 1, 64, TV_WIDTHS },
    { "vision.resnext50_32x4d", 1, { 3, 4, 6, 3 }, 32, 4, TV_WIDTHS },
    { "vision.resnext101_32x8d", 1, { 3, 4, 23, 3 }, 32, 8, TV_WIDTHS },
    { "vision.resnext101_64x4d", 1, { 3, 4, 23, 3 }, 64, 4, TV_WIDTHS },
    { "vision.wide_resnet50_2", 1, { 3, 4, 6, 3 }, 1, 128, TV_WIDTHS },
    { "vision.wide_resnet101_2", 1, { 3, 4, 23, 3 }, 1, 128, TV_WIDTHS },
};
#undef TV_WIDTHS

const resnet_arch *resnet_arch_of(const char *class_name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, class_name) == 0)
            return &archs[i];
    return NULL;
}

#define BN_EPS 1e-5             /* nn.BatchNorm2d's default, which torchvision's ResNet keeps */

void resnet_destroy(void *state)
{
    resnet_model *m = state;
    if (m == NULL)
        return;
    model_conv_free(&m->stem);
    for (int i = 0; m->blocks != NULL && i < m->n_blocks; i++) {
        for (int j = 0; j < 3; j++)
            model_conv_free(&m->blocks[i].conv[j]);
        model_conv_free(&m->blocks[i].down);
    }
    free(m->blocks);
    model_base_fini(&m->base);
    free(m);
}

static loom_status load_blocks(model_loader *L, resnet_model *m)
{
    const resnet_arch *a = &m->arch;
    const int exp = a->bottleneck ? 4 : 1;
    int64_t inplanes = a->stem_width;
    int n = 0;
    for (int s = 0; s < 4; s++)
        n += a->layers[s];
    if ((m->blocks = calloc((size_t)n, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", L->cls);
    m->n_blocks = n;
    int bi = 0;
    loom_status st = LOOM_OK;
    for (int s = 0; s < 4 && st == LOOM_OK; s++) {
        const int64_t planes = a->widths[s], stride0 = s == 0 ? 1 : 2;
        for (int j = 0; j < a->layers[s] && st == LOOM_OK; j++, bi++) {
            resnet_block *b = &m->blocks[bi];
            const int64_t stride = j == 0 ? stride0 : 1;
            char cp[48], bp[48];
            if (a->bottleneck) {
                const int64_t width = planes * a->width_per_group / 64 * a->groups;
                b->n_convs = 3;
                b->conv[0] = model_conv_of(inplanes, width, 1, 1, 1);
                b->conv[1] = model_conv_of(width, width, 3, stride, a->groups);
                b->conv[2] = model_conv_of(width, planes * exp, 1, 1, 1);
            } else {
                b->n_convs = 2;
                b->conv[0] = model_conv_of(inplanes, planes, 3, stride, 1);
                b->conv[1] = model_conv_of(planes, planes, 3, 1, 1);
            }
            for (int c = 0; c < b->n_convs && st == LOOM_OK; c++) {
                snprintf(cp, sizeof cp, "layer%d.%d.conv%d", s + 1, j, c + 1);
                snprintf(bp, sizeof bp, "layer%d.%d.bn%d", s + 1, j, c + 1);
                st = model_load_conv_bn(L, cp, bp, &b->conv[c]);
            }
            if (st == LOOM_OK && j == 0 && (stride != 1 || inplanes != planes * exp)) {
                b->has_down = 1;
                b->down = model_conv_of(inplanes, planes * exp, 1, stride, 1);
                b->down.pad = 0;
                snprintf(cp, sizeof cp, "layer%d.%d.downsample.0", s + 1, j);
                snprintf(bp, sizeof bp, "layer%d.%d.downsample.1", s + 1, j);
                st = model_load_conv_bn(L, cp, bp, &b->down);
            }
            inplanes = planes * exp;
        }
    }
    m->base.features = inplanes;
    return st;
}

/* conv1 + bn1 and the stages (model_create's load) */
loom_status resnet_load(model_loader *L, void *model)
{
    resnet_model *m = model;
    /* the architecture kept in the model: vision.resnet's is create's local */
    m->arch = *(const resnet_arch *)m->base.arch;
    m->base.arch = &m->arch;
    m->stem = model_conv_of(3, m->arch.stem_width, 7, 2, 1);
    loom_status st = model_load_conv_bn(L, "conv1", "bn1", &m->stem);
    return st != LOOM_OK ? st : load_blocks(L, m);
}

static loom_status resnet_create(const loom_object_args *args, void **state_out)
{
    int winograd = 0;
    loom_status st = model_conv_algorithm(args, 1, &winograd);
    if (st == LOOM_OK)
        st = model_create(args, state_out, resnet_arch_of(args->class_name), sizeof(resnet_model), BN_EPS, "fc",
                          resnet_load, resnet_destroy);
    if (st == LOOM_OK)
        ((model_base *)*state_out)->conv_winograd = winograd;
    return st;
}

#define RESNET_CLASS_(id) MODEL_PLAN_CLASS_ROW_(resnet, id)
VISION_RESNETS(RESNET_CLASS_)

/* vision.resnet's attributes, in order (attrs[0] is weights) */
enum { ATTR_BLOCK = 1, ATTR_LAYERS, ATTR_WIDTHS, ATTR_STEM_WIDTH, ATTR_GROUPS, ATTR_WIDTH_PER_GROUP,
       ATTR_NUM_CLASSES, N_GENERIC_ATTRS };

/* The architecture of vision.resnet from its attributes, each checked,
** the message naming the attribute. BasicBlock takes neither groups nor
** width_per_group (torchvision's BasicBlock refuses them too). */
loom_status resnet_arch_from_attrs(const loom_object_args *args, void *out)
{
    resnet_arch *a = out;
    const char *cls = args->class_name;
    memset(a, 0, sizeof *a);
    a->name = cls;
    if (args->n_attrs < N_GENERIC_ATTRS)
        return pk_host->fail(LOOM_EINVAL, "%s is not a ResNet class", cls);
    const loom_attr_value *blk = &args->attrs[ATTR_BLOCK], *lay = &args->attrs[ATTR_LAYERS];
    const loom_attr_value *wid = &args->attrs[ATTR_WIDTHS];
    if (!blk->is_set || blk->u.s == NULL
        || (strcmp(blk->u.s, "basic") != 0 && strcmp(blk->u.s, "bottleneck") != 0))
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'block' must be 'basic' or 'bottleneck', not '%s'", cls,
                             blk->is_set && blk->u.s != NULL ? blk->u.s : "");
    a->bottleneck = strcmp(blk->u.s, "bottleneck") == 0;
    if (!lay->is_set || lay->count != 4)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'layers' must hold 4 ints, not %lld", cls,
                             (long long)lay->count);
    if (wid->is_set && wid->count != 4)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'widths' must hold 4 ints, not %lld", cls,
                             (long long)wid->count);
    for (int s = 0; s < 4; s++) {
        if (lay->u.ints[s] < 1 || lay->u.ints[s] > 256)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'layers' [%d] is %lld, not in [1, 256]", cls, s,
                                 (long long)lay->u.ints[s]);
        a->layers[s] = (int)lay->u.ints[s];
        a->widths[s] = wid->is_set ? wid->u.ints[s] : (int64_t)64 << s;
        if (a->widths[s] < 1 || a->widths[s] > 65536)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'widths' [%d] is %lld, not in [1, 65536]", cls, s,
                                 (long long)a->widths[s]);
    }
    const int64_t stem = args->attrs[ATTR_STEM_WIDTH].u.i, groups = args->attrs[ATTR_GROUPS].u.i;
    const int64_t wpg = args->attrs[ATTR_WIDTH_PER_GROUP].u.i;
    if (stem < 1 || stem > 65536)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'stem_width' is %lld, not in [1, 65536]", cls,
                             (long long)stem);
    if (groups < 1 || groups > 65536)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'groups' is %lld, not in [1, 65536]", cls,
                             (long long)groups);
    if (wpg < 1 || wpg > 65536)
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'width_per_group' is %lld, not in [1, 65536]", cls,
                             (long long)wpg);
    if (!a->bottleneck && (groups != 1 || wpg != 64))
        return pk_host->fail(LOOM_EINVAL, "%s: block 'basic' takes groups 1 and width_per_group 64 only, not %lld "
                             "and %lld (torchvision's BasicBlock)", cls, (long long)groups, (long long)wpg);
    for (int s = 0; s < 4 && a->bottleneck; s++)
        if (a->widths[s] * wpg / 64 < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: stage %d's bottleneck width int(%lld * %lld / 64) * %lld is 0", cls,
                                 s + 1, (long long)a->widths[s], (long long)wpg, (long long)groups);
    a->stem_width = stem;
    a->groups = (int)groups;
    a->width_per_group = (int)wpg;
    return LOOM_OK;
}

/* vision.resnet: the architecture from the attributes, then the named
** classes' create; num_classes, when set, checked against fc. */
static loom_status resnet_generic_create(const loom_object_args *args, void **state_out)
{
    resnet_arch arch;
    return model_create_from_attrs(args, state_out, resnet_arch_from_attrs, &arch, sizeof(resnet_model), BN_EPS, "fc",
                                   resnet_load, resnet_destroy, ATTR_NUM_CLASSES);
}

#define RESNET_INT_ATTR(n, f, d, text) { .name = n, .type = LOOM_ATTR_INT, .flags = f, .dflt = d, .doc = text }
/* the order of the ATTR_* indices */
static const loom_attr_def resnet_generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    { .name = "block", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "basic (BasicBlock, two 3x3 convs) or bottleneck (Bottleneck: 1x1, 3x3 grouped, 1x1 to 4x planes)" },
    { .name = "layers", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "blocks of layer1..4 (4 ints, each in [1, 256])" },
    { .name = "widths", .type = LOOM_ATTR_INTS, .dflt = LOOM_DEFAULT_NONE,
      .doc = "planes of layer1..4 (4 ints; unset: torchvision's 64, 128, 256, 512)" },
    RESNET_INT_ATTR("stem_width", 0, LOOM_DEFAULT_INT(64), "conv1's output channels (torchvision's: 64)"),
    RESNET_INT_ATTR("groups", 0, LOOM_DEFAULT_INT(1), "groups of the bottleneck's 3x3 conv"),
    RESNET_INT_ATTR("width_per_group", 0, LOOM_DEFAULT_INT(64),
                    "the bottleneck's width is int(planes * width_per_group / 64) * groups"),
    MODEL_NUM_CLASSES_ATTR,
};
#undef RESNET_INT_ATTR
MODEL_GENERIC_CLASS(resnet, resnet_generic_attrs, resnet_generic_create, resnet_destroy,
                    "torchvision.models.ResNet(block, layers, groups, width_per_group) from a safetensors "
                    "state_dict, with the stem's and the stages' widths as attributes too (the named "
                    "vision.resnet*, resnext* and wide_resnet* classes are presets of it); method vision.resnet")
