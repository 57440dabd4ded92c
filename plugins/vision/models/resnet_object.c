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
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_common.h"
#include "weights.h"
#include "weights_docs.h"

static const resnet_arch archs[] = {
    { "vision.resnet18", 0, { 2, 2, 2, 2 }, 1, 64 },
    { "vision.resnet34", 0, { 3, 4, 6, 3 }, 1, 64 },
    { "vision.resnet50", 1, { 3, 4, 6, 3 }, 1, 64 },
    { "vision.resnet101", 1, { 3, 4, 23, 3 }, 1, 64 },
    { "vision.resnet152", 1, { 3, 8, 36, 3 }, 1, 64 },
    { "vision.resnext50_32x4d", 1, { 3, 4, 6, 3 }, 32, 4 },
    { "vision.resnext101_32x8d", 1, { 3, 4, 23, 3 }, 32, 8 },
    { "vision.resnext101_64x4d", 1, { 3, 4, 23, 3 }, 64, 4 },
    { "vision.wide_resnet50_2", 1, { 3, 4, 6, 3 }, 1, 128 },
    { "vision.wide_resnet101_2", 1, { 3, 4, 23, 3 }, 1, 128 },
};

const resnet_arch *resnet_arch_of(const char *class_name)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
        if (strcmp(archs[i].name, class_name) == 0)
            return &archs[i];
    return NULL;
}

#define BN_EPS 1e-5             /* nn.BatchNorm2d's default, which torchvision's ResNet keeps */

static void resnet_destroy(void *state)
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
    const resnet_arch *a = m->base.arch;
    const int exp = a->bottleneck ? 4 : 1;
    int64_t inplanes = 64;
    int n = 0;
    for (int s = 0; s < 4; s++)
        n += a->layers[s];
    if ((m->blocks = calloc((size_t)n, sizeof *m->blocks)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", L->cls);
    m->n_blocks = n;
    int bi = 0;
    loom_status st = LOOM_OK;
    for (int s = 0; s < 4 && st == LOOM_OK; s++) {
        const int64_t planes = 64 << s, stride0 = s == 0 ? 1 : 2;
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
static loom_status resnet_load(model_loader *L, void *model)
{
    resnet_model *m = model;
    m->stem = model_conv_of(3, 64, 7, 2, 1);
    loom_status st = model_load_conv_bn(L, "conv1", "bn1", &m->stem);
    return st != LOOM_OK ? st : load_blocks(L, m);
}

static loom_status resnet_create(const loom_object_args *args, void **state_out)
{
    return model_create(args, state_out, resnet_arch_of(args->class_name), sizeof(resnet_model), BN_EPS, "fc",
                        resnet_load, resnet_destroy);
}

#define RESNET_CLASS_(id) MODEL_CLASS_ROW_(resnet, id)
VISION_RESNETS(RESNET_CLASS_)
