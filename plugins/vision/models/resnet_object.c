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
    model_buffers_free(&m->plan);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static loom_status load_blocks(model_loader *L, resnet_model *m)
{
    const resnet_arch *a = m->arch;
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
    m->features = inplanes;
    return st;
}

static loom_status resnet_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const char *cls = args->class_name;
    const resnet_arch *arch = resnet_arch_of(cls);
    if (arch == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s is not a ResNet class", cls);
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights model.safetensors) holding "
                             "torchvision's state_dict", cls);
    resnet_model *m = calloc(1, sizeof *m);
    if (m == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    pthread_mutex_init(&m->lock, NULL);
    m->arch = arch;
    model_loader L;
    loom_status st = model_loader_init(&L, cls, args->weights, BN_EPS);
    m->stem = model_conv_of(3, 64, 7, 2, 1);
    if (st == LOOM_OK)
        st = model_load_conv_bn(&L, "conv1", "bn1", &m->stem);
    if (st == LOOM_OK)
        st = load_blocks(&L, m);
    /* fc: the classes come from the file */
    const loom_tensor *fw = NULL, *fb = NULL;
    if (st == LOOM_OK)
        st = model_load_linear_head(&L, "fc", m->features, &m->classes, &fw, &fb);
    if (st == LOOM_OK)
        st = model_check_no_unexpected(&L);
    if (st == LOOM_OK) {
        m->fc_weight = loom_data(fw);
        m->fc_bias = loom_data(fb);
        m->num_params = L.num_params;
        if ((st = model_find_op(cls, "vision.conv2d", &m->conv2d)) == LOOM_OK
            && (st = model_find_op(cls, "vision.max_pool2d", &m->max_pool)) == LOOM_OK
            && (st = model_find_op(cls, "vision.adaptive_avg_pool2d", &m->avg_pool)) == LOOM_OK)
            st = model_find_op(cls, "vision.linear", &m->linear);
    }
    model_loader_free(&L);
    /* a weight entry, when named: the file must fit it */
    if (st == LOOM_OK)
        st = model_entry_of(args, m->classes, m->num_params, &m->entry);
    if (st != LOOM_OK) {
        resnet_destroy(m);
        return st;
    }
    *state_out = m;
    return LOOM_OK;
}

/* Each class's one attribute: `weights`, the entry (weights.h), documented
** with the class's entries and their metadata (weights_docs.h). */
#define RESNET_CLASS(id)                                                                           \
    static const loom_attr_def id##_attrs[] = {                                                    \
        { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,                   \
          .doc = VISION_WEIGHTS_DOC_##id },                                                         \
    };                                                                                             \
    const loom_object_class vision_##id##_class = {                                                \
        .struct_size = sizeof(loom_object_class), .name = "vision." #id,                           \
        .doc = "torchvision.models." #id " from a safetensors state_dict; method vision." #id,    \
        PK_ATTRS(id##_attrs), .create = resnet_create, .destroy = resnet_destroy,                 \
    };
VISION_RESNETS(RESNET_CLASS)
