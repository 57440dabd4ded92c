/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet_object.c - the RetinaNet classes (retinanet.h): create reads a
** safetensors file holding torchvision's RetinaNet state_dict, every key
** checked by name, dtype and shape, none left over:
**   backbone.body.*, backbone.fpn.*   the backbone (rcnn_backbone.h: the
**                            ResNet body, inner_blocks / layer_blocks of
**                            layer2..4 with bias, extra_blocks.p6 / p7; every
**                            RetinaNet builder of torchvision returns layers
**                            2, 3, 4)
**   head.classification_head.conv.<i>.0 (v1: with bias; v2: without, and
**                            GroupNorm .1), head.classification_head.cls_logits
**   head.regression_head.conv.<i>.0 (likewise), head.regression_head.bbox_reg
** The classes are cls_logits' rows over the anchors per location (sizes
** per level x aspect ratios). LastLevelP6P7 is fed from P5 when p6's input
** channels are the FPN's (torchvision's use_P5), else from C5: the named
** classes' files must be theirs (v1: 256, v2: 2048 inputs).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_generic.h"
#include "retinanet.h"
#include "weights.h"

#define BN_EPS 1e-5

/* ------------------------------------------------------------ attributes */

#define RETINA_INT_(n, d, text) { .name = n, .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE, \
                                  .dflt = LOOM_DEFAULT_INT(d), .doc = text }
#define RETINA_FLOAT_(n, d, text) { .name = n, .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE, \
                                    .dflt = LOOM_DEFAULT_FLOAT(d), .doc = text }
/* torchvision's RetinaNet arguments and defaults (_default_anchorgen's anchors) */
#define RETINA_DETECTOR_ATTRS                                                                      \
    RETINA_INT_("min_size", 800, "the transform's short edge target"),                            \
    RETINA_INT_("max_size", 1333, "the transform's long edge bound"),                             \
    { .name = "image_mean", .type = LOOM_ATTR_FLOATS, .flags = LOOM_ATTR_FINITE, .dflt = LOOM_DEFAULT_NONE, \
      .doc = "3 values; absent: ImageNet's 0.485, 0.456, 0.406" },                                 \
    { .name = "image_std", .type = LOOM_ATTR_FLOATS, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,   \
      .dflt = LOOM_DEFAULT_NONE, .doc = "3 values; absent: ImageNet's 0.229, 0.224, 0.225" },          \
    RETINA_FLOAT_("score_thresh", 0.05, "(anchor, class) scores must be above this"),             \
    RETINA_FLOAT_("nms_thresh", 0.5, "IoU threshold of the per-class nms"),                        \
    RETINA_INT_("detections_per_img", 300, "detections kept per image"),                           \
    RETINA_INT_("topk_candidates", 1000, "the best this many scores of each level go on to the nms"), \
    { .name = "anchor_sizes", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_POSITIVE, .dflt = LOOM_DEFAULT_NONE, \
      .doc = "the same count per level, level after level; absent: (x, x 2^1/3, x 2^2/3) for x in 32..512" }, \
    { .name = "aspect_ratios", .type = LOOM_ATTR_FLOATS, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, \
      .dflt = LOOM_DEFAULT_NONE, .doc = "of every level; absent: 0.5, 1, 2" }
#define N_DETECTOR_ATTRS 10

/* vision.retinanet's attributes: attrs[1..6] are vision.resnet's (parsed
** by resnet_arch_from_attrs), in its order */
enum { G_NUM_CLASSES = 7, G_FPN_CHANNELS, G_HEAD, G_DETECTOR };
static const loom_attr_def generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    { .name = "block", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("bottleneck"),
      .doc = "the body's block: basic or bottleneck (as vision.resnet)" },
    { .name = "layers", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE,
      .doc = "blocks of layer1..4 (ResNet-50's: 3, 4, 6, 3)" },
    { .name = "widths", .type = LOOM_ATTR_INTS, .dflt = LOOM_DEFAULT_NONE,
      .doc = "planes of layer1..4 (unset: 64, 128, 256, 512)" },
    { .name = "stem_width", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(64), .doc = "conv1's output channels" },
    { .name = "groups", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(1), .doc = "the bottleneck's groups" },
    { .name = "width_per_group", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(64),
      .doc = "the bottleneck's width_per_group" },
    { .name = "num_classes", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_NONE,
      .doc = "unset: cls_logits' rows over the anchors per location; set: they must be this many" },
    { .name = "fpn_channels", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE, .dflt = LOOM_DEFAULT_INT(256),
      .doc = "the FPN's out_channels (torchvision's: 256)" },
    { .name = "head", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("v1"),
      .doc = "v1 (head convs with bias + relu) or v2 (head convs + GroupNorm(32) + relu)" },
    RETINA_DETECTOR_ATTRS,
};

/* the named classes: weights (the class's torchvision entries), num_classes, then the detector's */
enum { N_NUM_CLASSES = 1, N_DETECTOR };
#define RETINA_NAMED_ATTRS_(id)                                                                    \
    static const loom_attr_def id##_attrs[] = {                                                    \
        { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,                   \
          .doc = VISION_WEIGHTS_DOC_##id },                                                         \
        { .name = "num_classes", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_NONE,                  \
          .doc = "unset: cls_logits' rows over the anchors per location; set: they must be this many" }, \
        RETINA_DETECTOR_ATTRS,                                                                     \
    };                                                                                             \
    _Static_assert(sizeof id##_attrs / sizeof id##_attrs[0] == N_DETECTOR + N_DETECTOR_ATTRS,     \
                   "vision." #id "'s attribute indices");
RETINA_NAMED_ATTRS_(retinanet_resnet50_fpn)
RETINA_NAMED_ATTRS_(retinanet_resnet50_fpn_v2)
#undef RETINA_NAMED_ATTRS_

/* The detector's parameters from attrs[first ..]; levels: the backbone's maps. */
static loom_status params_from_attrs(const loom_object_args *args, int first, int levels, retinanet_params *p)
{
    const loom_attr_value *a = &args->attrs[first];
    const char *cls = args->class_name;
    static const double mean[3] = { 0.485, 0.456, 0.406 }, std[3] = { 0.229, 0.224, 0.225 };
    p->min_size = a[0].u.i;
    p->max_size = a[1].u.i;
    memcpy(p->image_mean, mean, sizeof mean);
    memcpy(p->image_std, std, sizeof std);
    for (int k = 0; k < 2; k++) {
        const loom_attr_value *v = &a[2 + k];
        if (!v->is_set)
            continue;
        if (v->count != 3)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute '%s' must hold 3 values (RGB), not %lld", cls,
                                 k ? "image_std" : "image_mean", (long long)v->count);
        memcpy(k ? p->image_std : p->image_mean, v->u.floats, 3 * sizeof(double));
    }
    p->score_thresh = a[4].u.f;
    p->nms_thresh = a[5].u.f;
    p->detections_per_img = a[6].u.i;
    p->topk_candidates = a[7].u.i;
    const loom_attr_value *sizes = &a[8], *ratios = &a[9];
    if (sizes->is_set) {
        if (sizes->count < levels || sizes->count % levels != 0 || sizes->count > RETINA_MAX_ANCHOR_SIZES)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'anchor_sizes' holds %lld values: give the same count "
                                 "for each of the %d levels (at most %d in all)", cls, (long long)sizes->count,
                                 levels, RETINA_MAX_ANCHOR_SIZES);
        p->n_sizes = (int)sizes->count;
        memcpy(p->anchor_sizes, sizes->u.ints, (size_t)p->n_sizes * sizeof(int64_t));
    } else {
        if (3 * levels > RETINA_MAX_ANCHOR_SIZES)
            return pk_host->fail(LOOM_EINVAL, "%s: %d levels: give attribute 'anchor_sizes'", cls, levels);
        /* _default_anchorgen: (x, int(x 2^(1/3)), int(x 2^(2/3))) for x = 32, 64, ... */
        static const double scale[3] = { 1.0, 1.2599210498948732, 1.5874010519681994 };
        p->n_sizes = 3 * levels;
        for (int l = 0; l < levels; l++)
            for (int s = 0; s < 3; s++)
                p->anchor_sizes[3 * l + s] = (int64_t)((double)(32 << l) * scale[s]);
    }
    if (ratios->is_set) {
        if (ratios->count < 1 || ratios->count > RETINA_MAX_RATIOS)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute 'aspect_ratios' holds %lld values: give 1 to %d", cls,
                                 (long long)ratios->count, RETINA_MAX_RATIOS);
        p->n_ratios = (int)ratios->count;
        memcpy(p->aspect_ratios, ratios->u.floats, (size_t)p->n_ratios * sizeof(double));
    } else {
        p->n_ratios = 3;
        p->aspect_ratios[0] = 0.5;
        p->aspect_ratios[1] = 1.0;
        p->aspect_ratios[2] = 2.0;
    }
    return LOOM_OK;
}

/* --------------------------------------------------------------- loading */

/* head.<name>.conv.<i> (stacked into h) and head.<name>.<out> (rows: A K). */
static loom_status load_head(model_loader *L, retinanet_model *m, const char *name, const char *out,
                             retinanet_head *h)
{
    const int64_t C = m->backbone.fpn_channels, per = C * C * 9;
    h->conv_weight = malloc((size_t)(RETINA_HEAD_CONVS * per) * sizeof(float));
    float **vec[3] = { m->v2 ? NULL : &h->conv_bias, m->v2 ? &h->norm_weight : NULL, m->v2 ? &h->norm_bias : NULL };
    for (int k = 0; k < 3; k++)
        if (vec[k] != NULL)
            *vec[k] = malloc((size_t)(RETINA_HEAD_CONVS * C) * sizeof(float));
    if (h->conv_weight == NULL || (m->v2 ? h->norm_weight == NULL || h->norm_bias == NULL : h->conv_bias == NULL))
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory loading head.%s", m->cls, name);
    loom_status st = LOOM_OK;
    const int64_t ws[4] = { C, C, 3, 3 }, vs[1] = { C };
    for (int i = 0; i < RETINA_HEAD_CONVS && st == LOOM_OK; i++) {
        char p[96];
        const loom_tensor *w = NULL, *b = NULL, *gw = NULL, *gb = NULL;
        snprintf(p, sizeof p, "head.%s.conv.%d.0.", name, i);
        st = model_expect(L, p, "weight", LOOM_DTYPE_F32, 4, ws, &w);
        if (st == LOOM_OK && !m->v2)
            st = model_expect(L, p, "bias", LOOM_DTYPE_F32, 1, vs, &b);
        snprintf(p, sizeof p, "head.%s.conv.%d.1.", name, i);     /* GroupNorm: weight and bias only */
        if (st == LOOM_OK && m->v2)
            st = model_expect(L, p, "weight", LOOM_DTYPE_F32, 1, vs, &gw);
        if (st == LOOM_OK && m->v2)
            st = model_expect(L, p, "bias", LOOM_DTYPE_F32, 1, vs, &gb);
        if (st != LOOM_OK)
            break;
        memcpy(h->conv_weight + i * per, loom_data(w), (size_t)per * sizeof(float));
        if (m->v2) {
            memcpy(h->norm_weight + i * C, loom_data(gw), (size_t)C * sizeof(float));
            memcpy(h->norm_bias + i * C, loom_data(gb), (size_t)C * sizeof(float));
        } else {
            memcpy(h->conv_bias + i * C, loom_data(b), (size_t)C * sizeof(float));
        }
    }
    if (st != LOOM_OK)
        return st;
    /* the output conv: its rows give K (the classes) for the classification head */
    char key[96], p[96];
    snprintf(key, sizeof key, "head.%s.%s.weight", name, out);
    snprintf(p, sizeof p, "head.%s.%s.", name, out);
    const int64_t A = m->anchors_per_location;
    if (h->outputs == 0) {
        const loom_tensor *w = rcnn_file_tensor(L, key);
        if (w == NULL)
            return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key '%s' (expected f32[%lld x classes, "
                                 "%lld, 3, 3]: a RetinaNet state_dict)", m->cls, key, (long long)A, (long long)C);
        if (w->ndim != 4 || w->shape[0] < A || w->shape[0] % A != 0)
            return pk_host->fail(LOOM_EINVAL, "%s: key '%s' has %lld rows: a multiple of the %lld anchors per "
                                 "location expected", m->cls, key, w->ndim >= 1 ? (long long)w->shape[0] : 0LL,
                                 (long long)A);
        h->outputs = w->shape[0] / A;
    }
    const int64_t os[4] = { A * h->outputs, C, 3, 3 }, bs[1] = { A * h->outputs };
    st = model_expect(L, p, "weight", LOOM_DTYPE_F32, 4, os, &h->out_weight);
    return st != LOOM_OK ? st : model_expect(L, p, "bias", LOOM_DTYPE_F32, 1, bs, &h->out_bias);
}

static void head_free(retinanet_head *h)
{
    free(h->conv_weight);
    free(h->conv_bias);
    free(h->norm_weight);
    free(h->norm_bias);
}

static void retinanet_destroy(void *state)
{
    retinanet_model *m = state;
    if (m == NULL)
        return;
    rcnn_backbone_free(&m->backbone);
    head_free(&m->head[0]);
    head_free(&m->head[1]);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static loom_status find_ops(retinanet_model *m)
{
    struct { const loom_op **op; const char *name; } ops[] = {
        { &m->head_op, "vision.retinanet_head" }, { &m->transform, "vision.rcnn_transform" },
        { &m->anchors, "vision.anchor_generator" }, { &m->postprocess, "vision.retinanet_postprocess" },
        { &m->postprocess_boxes, "vision.rcnn_postprocess_boxes" },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        loom_status st = model_find_op(m->cls, ops[i].name, ops[i].op);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

/* What create_of is given: the architecture, and where the attributes are. */
typedef struct retina_config {
    const resnet_arch *arch;
    int v2, first_stage;
    int64_t fpn_channels;
    int fixed_extra;                /* the named classes: extra is theirs, not the file's */
    rcnn_extra_block extra;
    int num_classes_at, detector_at;
} retina_config;

static loom_status create_of(const loom_object_args *args, void **state_out, const retina_config *cfg)
{
    *state_out = NULL;
    const char *cls = args->class_name;
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights model.safetensors) holding "
                             "torchvision's RetinaNet state_dict", cls);
    /* an entry the class does not have is refused before the file is read (the generic class has none) */
    const loom_attr_value *wa = &args->attrs[0];
    const model_weights_entry *entry = NULL;
    if (wa->is_set && wa->u.s != NULL && wa->u.s[0] != '\0' && (entry = model_weights_find(cls, wa->u.s)) == NULL)
        return LOOM_EINVAL;
    retinanet_model *m = calloc(1, sizeof *m);
    if (m == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    pthread_mutex_init(&m->lock, NULL);
    m->cls = cls;
    m->v2 = cfg->v2;
    m->backbone = (rcnn_backbone){ .cls = cls, .body_kind = RCNN_BODY_RESNET, .arch = *cfg->arch,
                                   .fpn_channels = cfg->fpn_channels, .fpn_norm = 0,
                                   .first_stage = cfg->first_stage, .extra = cfg->extra };
    m->head[1].outputs = 4;
    model_loader L;
    memset(&L, 0, sizeof L);
    loom_status st = params_from_attrs(args, cfg->detector_at, rcnn_backbone_levels(&m->backbone), &m->p);
    m->anchors_per_location = (int64_t)(m->p.n_sizes / rcnn_backbone_levels(&m->backbone)) * m->p.n_ratios;
    if (st == LOOM_OK)
        st = model_loader_init(&L, cls, args->weights, BN_EPS);
    if (st == LOOM_OK && !cfg->fixed_extra) {
        /* torchvision's LastLevelP6P7: use_P5 = in_channels == out_channels */
        const loom_tensor *p6 = rcnn_file_tensor(&L, "backbone.fpn.extra_blocks.p6.weight");
        m->backbone.extra = p6 != NULL && p6->ndim == 4 && p6->shape[1] != cfg->fpn_channels
                            ? RCNN_EXTRA_P6P7_FROM_C5 : RCNN_EXTRA_P6P7_FROM_P5;
    }
    if (st == LOOM_OK)
        st = rcnn_backbone_load(&L, &m->backbone);
    if (st == LOOM_OK)
        st = load_head(&L, m, "classification_head", "cls_logits", &m->head[0]);
    if (st == LOOM_OK)
        st = load_head(&L, m, "regression_head", "bbox_reg", &m->head[1]);
    if (st == LOOM_OK)
        st = model_check_no_unexpected(&L);
    m->num_params = L.num_params - rcnn_frozen_bn_params(&L);
    m->classes = m->head[0].outputs;
    model_loader_free(&L);
    const loom_attr_value *nc = &args->attrs[cfg->num_classes_at];
    if (st == LOOM_OK && nc->is_set && nc->u.i != m->classes)
        st = pk_host->fail(LOOM_EINVAL, "%s: key 'head.classification_head.cls_logits.weight' has %lld classes in "
                           "the weights file, attribute num_classes is %lld", cls, (long long)m->classes,
                           (long long)nc->u.i);
    if (st == LOOM_OK && entry != NULL)
        st = model_weights_check(entry, m->classes, m->num_params, 1, 1);
    if (st == LOOM_OK)
        st = find_ops(m);
    if (st != LOOM_OK) {
        retinanet_destroy(m);
        return st;
    }
    *state_out = m;
    return LOOM_OK;
}

static loom_status generic_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const char *cls = args->class_name;
    resnet_arch arch;
    loom_status st = resnet_arch_from_attrs(args, &arch);
    if (st != LOOM_OK)
        return st;
    const char *head = args->attrs[G_HEAD].u.s;
    if (head == NULL || (strcmp(head, "v1") != 0 && strcmp(head, "v2") != 0))
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'head' must be 'v1' or 'v2', not '%s'", cls,
                             head != NULL ? head : "");
    const retina_config cfg = { .arch = &arch, .v2 = strcmp(head, "v2") == 0, .first_stage = 1,
                                .fpn_channels = args->attrs[G_FPN_CHANNELS].u.i, .fixed_extra = 0,
                                .extra = RCNN_EXTRA_P6P7_FROM_P5,   /* or C5: the file tells (create_of) */
                                .num_classes_at = G_NUM_CLASSES, .detector_at = G_DETECTOR };
    return create_of(args, state_out, &cfg);
}

/* torchvision's retinanet_resnet50_fpn(_v2): the resnet50 body */
static loom_status named_create(const loom_object_args *args, void **state_out, int v2)
{
    resnet_arch arch = *resnet_arch_of("vision.resnet50");
    arch.name = args->class_name;
    const retina_config cfg = { .arch = &arch, .v2 = v2, .first_stage = 1, .fpn_channels = 256, .fixed_extra = 1,
                                .extra = v2 ? RCNN_EXTRA_P6P7_FROM_C5 : RCNN_EXTRA_P6P7_FROM_P5,
                                .num_classes_at = N_NUM_CLASSES, .detector_at = N_DETECTOR };
    return create_of(args, state_out, &cfg);
}

static loom_status v1_create(const loom_object_args *args, void **state_out)
{
    return named_create(args, state_out, 0);
}

static loom_status v2_create(const loom_object_args *args, void **state_out)
{
    return named_create(args, state_out, 1);
}

_Static_assert(sizeof generic_attrs / sizeof generic_attrs[0] == G_DETECTOR + N_DETECTOR_ATTRS,
               "vision.retinanet's attribute indices");

MODEL_GENERIC_CLASS(retinanet, generic_attrs, generic_create, retinanet_destroy,
                    "torchvision.models.detection.RetinaNet on a ResNet-FPN backbone (BackboneWithFPN of a ResNet "
                    "body, LastLevelP6P7) from a safetensors state_dict, the body's architecture, the FPN's width, "
                    "the head kind and the anchors as attributes; method vision.retinanet")
MODEL_GENERIC_CLASS(retinanet_resnet50_fpn, retinanet_resnet50_fpn_attrs, v1_create, retinanet_destroy,
                    "torchvision.models.detection.retinanet_resnet50_fpn from a safetensors state_dict (the "
                    "transform and postprocess parameters as attributes); method vision.retinanet_resnet50_fpn")
MODEL_GENERIC_CLASS(retinanet_resnet50_fpn_v2, retinanet_resnet50_fpn_v2_attrs, v2_create, retinanet_destroy,
                    "torchvision.models.detection.retinanet_resnet50_fpn_v2 from a safetensors state_dict (the "
                    "transform and postprocess parameters as attributes); method vision.retinanet_resnet50_fpn_v2")
