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

#include "models.h"
#include "layers/layers.h"
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
#define MAX_KEYS 1024           /* resnet152: 778 keys */

/* The keys the architecture expects, in the order they are checked. */
typedef struct key_spec {
    char name[64];
    loom_dtype dtype;
    int32_t ndim;
    int64_t shape[4];
} key_spec;

typedef struct loader {
    const char *cls;
    const loom_safetensors *st;
    key_spec *keys;
    int n_keys;
    int64_t num_params;
} loader;

static void describe_spec(const key_spec *k, char *buf, size_t size)
{
    int at = snprintf(buf, size, "%s[", k->dtype == LOOM_DTYPE_I64 ? "i64" : "f32");
    for (int32_t d = 0; d < k->ndim && at < (int)size - 24; d++)
        at += snprintf(buf + at, size - (size_t)at, "%s%lld", d ? "," : "", (long long)k->shape[d]);
    snprintf(buf + at, size - (size_t)at, "]");
}

static int file_has(const loom_safetensors *st, const char *name)
{
    for (int64_t i = 0; i < pk_host->safetensors_count(st); i++)
        if (strcmp(pk_host->safetensors_name(st, i), name) == 0)
            return 1;
    return 0;
}

/* Expect key <prefix><suffix> of dtype and shape; fetch it into *out. */
static loom_status expect(loader *L, const char *prefix, const char *suffix, loom_dtype dtype, int32_t ndim,
                          const int64_t *shape, const loom_tensor **out)
{
    if (L->n_keys >= MAX_KEYS)
        return pk_host->fail(LOOM_EINVAL, "%s: more than %d keys expected", L->cls, MAX_KEYS);
    key_spec *k = &L->keys[L->n_keys++];
    snprintf(k->name, sizeof k->name, "%s%s", prefix, suffix);
    k->dtype = dtype;
    k->ndim = ndim;
    for (int32_t d = 0; d < ndim; d++)
        k->shape[d] = shape[d];
    char want[96], got[160];
    describe_spec(k, want, sizeof want);
    if (!file_has(L->st, k->name))
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key '%s' (expected %s, torchvision's "
                             "state_dict names)", L->cls, k->name, want);
    const loom_tensor *t;
    loom_status s = pk_host->safetensors_get(L->st, k->name, &t);
    if (s != LOOM_OK)
        return s;
    int ok = loom_tensor_dtype_of(t) == dtype && t->ndim == ndim;
    for (int32_t d = 0; ok && d < ndim; d++)
        ok = t->shape[d] == shape[d];
    if (!ok)
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is %s in the weights file, expected %s", L->cls, k->name,
                             pk_describe(pk_host, t, got, sizeof got), want);
    if (dtype == LOOM_DTYPE_F32 && !loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' is not contiguous", L->cls, k->name);
    if (strstr(suffix, "running_") == NULL && dtype == LOOM_DTYPE_F32)
        L->num_params += loom_numel(t);
    if (out != NULL)
        *out = t;
    return LOOM_OK;
}

/* conv <cp>.weight [cout, cin/groups, k, k] (no bias) and BatchNorm2d <bp>,
** folded into c (owned memory). */
static loom_status load_conv_bn(loader *L, const char *cp, const char *bp, model_conv *c)
{
    const int64_t wshape[4] = { c->cout, c->cin / c->groups, c->k, c->k }, cs[1] = { c->cout };
    const loom_tensor *w, *g, *b, *m, *v;
    char wp[64];
    snprintf(wp, sizeof wp, "%s.", cp);
    char bnp[64];
    snprintf(bnp, sizeof bnp, "%s.", bp);
    loom_status s = expect(L, wp, "weight", LOOM_DTYPE_F32, 4, wshape, &w);
    if (s == LOOM_OK)
        s = expect(L, bnp, "weight", LOOM_DTYPE_F32, 1, cs, &g);
    if (s == LOOM_OK)
        s = expect(L, bnp, "bias", LOOM_DTYPE_F32, 1, cs, &b);
    if (s == LOOM_OK)
        s = expect(L, bnp, "running_mean", LOOM_DTYPE_F32, 1, cs, &m);
    if (s == LOOM_OK)
        s = expect(L, bnp, "running_var", LOOM_DTYPE_F32, 1, cs, &v);
    if (s == LOOM_OK)
        s = expect(L, bnp, "num_batches_tracked", LOOM_DTYPE_I64, 0, NULL, NULL);
    if (s != LOOM_OK)
        return s;
    int64_t k = wshape[1] * c->k * c->k;
    c->weight = malloc((size_t)(c->cout * k) * sizeof(float));
    c->bias = malloc((size_t)c->cout * sizeof(float));
    if (c->weight == NULL || c->bias == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory folding '%s'", L->cls, cp);
    layers_fold_batch_norm(c->cout, k, loom_data(w), NULL, loom_data(g), loom_data(b), loom_data(m), loom_data(v),
                           BN_EPS, c->weight, c->bias);
    return LOOM_OK;
}

static void conv_free(model_conv *c)
{
    free(c->weight);
    free(c->bias);
}

static void resnet_destroy(void *state)
{
    resnet_model *m = state;
    if (m == NULL)
        return;
    conv_free(&m->stem);
    for (int i = 0; m->blocks != NULL && i < m->n_blocks; i++) {
        for (int j = 0; j < 3; j++)
            conv_free(&m->blocks[i].conv[j]);
        conv_free(&m->blocks[i].down);
    }
    free(m->blocks);
    for (int i = 0; i < 5; i++)
        free(m->plan.buf[i]);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static model_conv conv_of(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t groups)
{
    model_conv c = { NULL, NULL, cin, cout, k, stride, k / 2, groups };
    return c;
}

static loom_status load_blocks(loader *L, resnet_model *m)
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
                b->conv[0] = conv_of(inplanes, width, 1, 1, 1);
                b->conv[1] = conv_of(width, width, 3, stride, a->groups);
                b->conv[2] = conv_of(width, planes * exp, 1, 1, 1);
            } else {
                b->n_convs = 2;
                b->conv[0] = conv_of(inplanes, planes, 3, stride, 1);
                b->conv[1] = conv_of(planes, planes, 3, 1, 1);
            }
            for (int c = 0; c < b->n_convs && st == LOOM_OK; c++) {
                snprintf(cp, sizeof cp, "layer%d.%d.conv%d", s + 1, j, c + 1);
                snprintf(bp, sizeof bp, "layer%d.%d.bn%d", s + 1, j, c + 1);
                st = load_conv_bn(L, cp, bp, &b->conv[c]);
            }
            if (st == LOOM_OK && j == 0 && (stride != 1 || inplanes != planes * exp)) {
                b->has_down = 1;
                b->down = conv_of(inplanes, planes * exp, 1, stride, 1);
                b->down.pad = 0;
                snprintf(cp, sizeof cp, "layer%d.%d.downsample.0", s + 1, j);
                snprintf(bp, sizeof bp, "layer%d.%d.downsample.1", s + 1, j);
                st = load_conv_bn(L, cp, bp, &b->down);
            }
            inplanes = planes * exp;
        }
    }
    m->features = inplanes;
    return st;
}

static loom_status find_op(resnet_model *m, const char *cls, const char *name, const loom_op **out)
{
    (void)m;
    if ((*out = pk_host->op_find(name)) == NULL)
        return pk_host->fail(LOOM_ENOENT, "%s needs op %s", cls, name);
    return LOOM_OK;
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
    key_spec *keys = calloc(MAX_KEYS, sizeof *keys);
    if (m == NULL || keys == NULL) {
        free(m);
        free(keys);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    }
    pthread_mutex_init(&m->lock, NULL);
    m->arch = arch;
    loader L = { cls, args->weights, keys, 0, 0 };
    m->stem = conv_of(3, 64, 7, 2, 1);
    loom_status st = load_conv_bn(&L, "conv1", "bn1", &m->stem);
    if (st == LOOM_OK)
        st = load_blocks(&L, m);
    /* fc: the classes come from the file */
    if (st == LOOM_OK && !file_has(args->weights, "fc.weight"))
        st = pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key 'fc.weight' (expected f32[classes,%lld])",
                           cls, (long long)m->features);
    const loom_tensor *fw = NULL, *fb = NULL;
    if (st == LOOM_OK && (st = pk_host->safetensors_get(args->weights, "fc.weight", &fw)) == LOOM_OK) {
        m->classes = fw->ndim == 2 ? fw->shape[0] : 0;
        if (m->classes < 1)
            m->classes = 1;     /* expect() then names both shapes */
        const int64_t ws[2] = { m->classes, m->features }, bs[1] = { m->classes };
        st = expect(&L, "fc.", "weight", LOOM_DTYPE_F32, 2, ws, &fw);
        if (st == LOOM_OK)
            st = expect(&L, "fc.", "bias", LOOM_DTYPE_F32, 1, bs, &fb);
    }
    /* every key of the file must be one the architecture has */
    for (int64_t i = 0; st == LOOM_OK && i < pk_host->safetensors_count(args->weights); i++) {
        const char *name = pk_host->safetensors_name(args->weights, i);
        int known = 0;
        for (int k = 0; k < L.n_keys && !known; k++)
            known = strcmp(keys[k].name, name) == 0;
        if (!known) {
            const loom_tensor *t;
            char got[160] = "?";
            if (pk_host->safetensors_get(args->weights, name, &t) == LOOM_OK)
                pk_describe(pk_host, t, got, sizeof got);
            st = pk_host->fail(LOOM_EINVAL, "%s: unexpected key '%s' (%s) in the weights file: %s has no such "
                               "tensor", cls, name, got, cls);
        }
    }
    if (st == LOOM_OK) {
        m->fc_weight = loom_data(fw);
        m->fc_bias = loom_data(fb);
        m->num_params = L.num_params;
        if ((st = find_op(m, cls, "vision.conv2d", &m->conv2d)) == LOOM_OK
            && (st = find_op(m, cls, "vision.max_pool2d", &m->max_pool)) == LOOM_OK
            && (st = find_op(m, cls, "vision.adaptive_avg_pool2d", &m->avg_pool)) == LOOM_OK)
            st = find_op(m, cls, "vision.linear", &m->linear);
    }
    free(keys);
    /* a weight entry, when named: the file must fit it */
    const loom_attr_value *wa = args->n_attrs > 0 ? &args->attrs[0] : NULL;
    if (st == LOOM_OK && wa != NULL && wa->is_set && wa->u.s != NULL && wa->u.s[0] != '\0') {
        if ((m->entry = model_weights_find(cls, wa->u.s)) == NULL)
            st = LOOM_EINVAL;
        else
            st = model_weights_check(m->entry, m->classes, m->num_params, 1, 1);
    }
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
    static const loom_object_class id##_class = {                                                  \
        .struct_size = sizeof(loom_object_class), .name = "vision." #id,                           \
        .doc = "torchvision.models." #id " from a safetensors state_dict; method vision." #id,    \
        PK_ATTRS(id##_attrs), .create = resnet_create, .destroy = resnet_destroy,                 \
    };
VISION_RESNETS(RESNET_CLASS)
#define RESNET_CLASS_REF(id) &id##_class,
const loom_object_class *const vision_models_classes[10] = { VISION_RESNETS(RESNET_CLASS_REF) };
