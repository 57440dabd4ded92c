/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fasterrcnn_object.c - the Faster R-CNN classes (fasterrcnn.h): create
** reads a safetensors file holding torchvision's FasterRCNN state_dict,
** every key checked by name, dtype and shape, none left over:
**   backbone.body.*, backbone.fpn.*   the backbone (rcnn_backbone.h: the
**                            ResNet body; v2's FPN convs without bias,
**                            BatchNorm2d in .1)
**   rpn.head.conv.<d>.0 (with bias: no norm in either), rpn.head.cls_logits,
**                            rpn.head.bbox_pred
**   roi_heads.box_head.fc6 / fc7 (v1) or roi_heads.box_head.<i>.0 / .1 and
**                            the linear after the Flatten (v2)
**   roi_heads.box_predictor.cls_score / bbox_pred
** The classes (background included) are cls_score's rows, the
** representation size fc6's (or v2's linear's) rows, the v2 head's conv
** count and widths the file's. Every batchnorm is folded (eps 1e-5).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fasterrcnn.h"
#include "model_generic.h"
#include "weights.h"

#define BN_EPS 1e-5

/* ------------------------------------------------------------ attributes */

static const loom_attr_def generic_attrs[] = { FRCNN_GENERIC_ATTRS };

/* vision.fasterrcnn_mobilenet_v3's attributes */
enum { M_WIDTH_MULT = 1, M_REDUCED_TAIL, M_FPN_CHANNELS, M_NUM_CLASSES, M_DETECTOR };
static const loom_attr_def mnv3_generic_attrs[] = {
    MODEL_GENERIC_WEIGHTS_ATTR,
    { .name = "width_mult", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE, .dflt = LOOM_DEFAULT_FLOAT(1.0),
      .doc = "the body's channel multiplier (mobilenet_v3_large's width_mult; channels _make_divisible by 8)" },
    { .name = "reduced_tail", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(0),
      .doc = "halve the last blocks' channels (mobilenet_v3_large's reduced_tail)" },
    { .name = "fpn_channels", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE, .dflt = LOOM_DEFAULT_INT(256),
      .doc = "the FPN's out_channels (torchvision's: 256)" },
    MODEL_NUM_CLASSES_ATTR,
    FRCNN_MNV3_DETECTOR_ATTRS,
};

FRCNN_NAMED_ATTRS_(fasterrcnn_resnet50_fpn, FRCNN_DETECTOR_ATTRS)
FRCNN_NAMED_ATTRS_(fasterrcnn_resnet50_fpn_v2, FRCNN_DETECTOR_ATTRS)
FRCNN_NAMED_ATTRS_(fasterrcnn_mobilenet_v3_large_fpn, FRCNN_MNV3_DETECTOR_ATTRS)
FRCNN_NAMED_ATTRS_(fasterrcnn_mobilenet_v3_large_320_fpn, FRCNN_MNV3_320_DETECTOR_ATTRS)

/* The detector's parameters from attrs[first ..]. */
static loom_status params_from_attrs(const loom_object_args *args, int first, fasterrcnn_params *p)
{
    const loom_attr_value *a = &args->attrs[first];
    static const double mean[3] = { 0.485, 0.456, 0.406 }, std[3] = { 0.229, 0.224, 0.225 };
    p->min_size = a[0].u.i;
    p->max_size = a[1].u.i;
    for (int c = 0; c < 3; c++) {
        p->image_mean[c] = mean[c];
        p->image_std[c] = std[c];
    }
    for (int k = 0; k < 2; k++) {
        const loom_attr_value *v = &a[2 + k];
        if (!v->is_set)
            continue;
        if (v->count != 3)
            return pk_host->fail(LOOM_EINVAL, "%s: attribute '%s' must hold 3 values (RGB), not %lld",
                                 args->class_name, k ? "image_std" : "image_mean", (long long)v->count);
        memcpy(k ? p->image_std : p->image_mean, v->u.floats, 3 * sizeof(double));
    }
    p->rpn_pre_nms_top_n = a[4].u.i;
    p->rpn_post_nms_top_n = a[5].u.i;
    p->rpn_nms_thresh = a[6].u.f;
    p->rpn_score_thresh = a[7].u.f;
    p->box_score_thresh = a[8].u.f;
    p->box_nms_thresh = a[9].u.f;
    p->box_detections_per_img = a[10].u.i;
    return LOOM_OK;
}

/* --------------------------------------------------------------- loading */

static loom_status load_rpn(model_loader *L, fasterrcnn_model *m)
{
    const int64_t f = m->backbone.fpn_channels;
    loom_status st = LOOM_OK;
    m->n_rpn_convs = m->v2 ? 2 : 1;
    for (int d = 0; d < m->n_rpn_convs && st == LOOM_OK; d++) {
        char p[48];
        snprintf(p, sizeof p, "rpn.head.conv.%d", d);
        m->rpn_conv[d] = model_conv_of(f, f, 3, 1, 1);
        st = rcnn_load_conv_norm(L, p, 0, &m->rpn_conv[d]);     /* RPNHead: norm_layer None in v1 and v2 */
    }
    m->rpn_cls = model_conv_of(f, m->n_anchors, 1, 1, 1);
    m->rpn_bbox = model_conv_of(f, 4 * m->n_anchors, 1, 1, 1);
    if (st == LOOM_OK)
        st = rcnn_load_conv_bias(L, "rpn.head.cls_logits", &m->rpn_cls);
    if (st == LOOM_OK)
        st = rcnn_load_conv_bias(L, "rpn.head.bbox_pred", &m->rpn_bbox);
    return st;
}

/* The box head and the predictor; the representation and classes from the file. */
static loom_status load_roi_heads(model_loader *L, fasterrcnn_model *m)
{
    loom_status st = LOOM_OK;
    int64_t in = m->backbone.fpn_channels, rows;
    char p[64];
    if (m->v2) {
        for (int i = 0; i < FRCNN_MAX_HEAD_CONVS && st == LOOM_OK; i++) {
            snprintf(p, sizeof p, "roi_heads.box_head.%d.0.weight", i);
            const loom_tensor *w = rcnn_file_tensor(L, p);
            if (w == NULL || w->ndim != 4)
                break;
            snprintf(p, sizeof p, "roi_heads.box_head.%d", i);
            m->head_conv[i] = model_conv_of(in, w->shape[0], 3, 1, 1);
            st = rcnn_load_conv_norm(L, p, 1, &m->head_conv[i]);
            in = w->shape[0];
            m->n_head_convs = i + 1;
        }
        if (st == LOOM_OK && m->n_head_convs == 0)
            return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key 'roi_heads.box_head.0.0.weight' "
                                 "(FastRCNNConvFCHead's first conv; a v1 file has box_head.fc6)", m->cls);
        snprintf(p, sizeof p, "roi_heads.box_head.%d", m->n_head_convs + 1);    /* after the Flatten */
        m->n_fc = 1;
        if (st == LOOM_OK)
            st = model_load_linear_head(L, p, in * 49, &rows, &m->fc_w[0], &m->fc_b[0]);
    } else {
        m->n_fc = 2;
        st = model_load_linear_head(L, "roi_heads.box_head.fc6", in * 49, &rows, &m->fc_w[0], &m->fc_b[0]);
        if (st == LOOM_OK)
            st = model_load_linear_head(L, "roi_heads.box_head.fc7", rows, &rows, &m->fc_w[1], &m->fc_b[1]);
    }
    if (st != LOOM_OK)
        return st;
    m->representation = rows;
    st = model_load_linear_head(L, "roi_heads.box_predictor.cls_score", rows, &m->classes, &m->cls_w, &m->cls_b);
    const int64_t bw[2] = { 4 * m->classes, rows }, bb[1] = { 4 * m->classes };
    if (st == LOOM_OK)
        st = model_expect(L, "roi_heads.box_predictor.bbox_pred.", "weight", LOOM_DTYPE_F32, 2, bw, &m->bbox_w);
    if (st == LOOM_OK)
        st = model_expect(L, "roi_heads.box_predictor.bbox_pred.", "bias", LOOM_DTYPE_F32, 1, bb, &m->bbox_b);
    return st;
}

void fasterrcnn_release(fasterrcnn_model *m)
{
    rcnn_backbone_free(&m->backbone);
    for (int d = 0; d < 2; d++)
        model_conv_free(&m->rpn_conv[d]);
    model_conv_free(&m->rpn_cls);
    model_conv_free(&m->rpn_bbox);
    for (int i = 0; i < FRCNN_MAX_HEAD_CONVS; i++)
        model_conv_free(&m->head_conv[i]);
    pthread_mutex_destroy(&m->lock);
}

static void fasterrcnn_destroy(void *state)
{
    if (state == NULL)
        return;
    fasterrcnn_release(state);
    free(state);
}

static loom_status find_ops(fasterrcnn_model *m)
{
    struct { const loom_op **op; const char *name; } ops[] = {
        { &m->linear, "vision.linear" }, { &m->relu, "vision.relu" }, { &m->transform, "vision.rcnn_transform" },
        { &m->anchors, "vision.anchor_generator" }, { &m->rpn, "vision.rpn_proposals" },
        { &m->multiscale, "vision.multiscale_roi_align" },
        { &m->detections, "vision.rcnn_postprocess_detections" },
        { &m->postprocess_boxes, "vision.rcnn_postprocess_boxes" },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        loom_status st = model_find_op(m->cls, ops[i].name, ops[i].op);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

/* The anchor sizes: ResNet-FPN's (32,), (64,), ... one per level;
** MobileNetV3's ((32, 64, 128, 256, 512),) * 3, its maps sharing stride 32. */
static void anchor_sizes_of(fasterrcnn_model *m)
{
    static const int64_t sizes[5] = { 32, 64, 128, 256, 512 };
    const int levels = rcnn_backbone_levels(&m->backbone);
    const int per_level = m->backbone.body_kind == RCNN_BODY_MOBILENET_V3 ? 5 : 1;
    m->n_anchor_sizes = 0;
    for (int l = 0; l < levels; l++)
        for (int s = 0; s < per_level; s++)
            m->anchor_sizes[m->n_anchor_sizes++] = sizes[per_level == 1 ? l : s];
    m->n_anchors = per_level * FRCNN_RATIOS;
}

/* The weight entry attrs[0] names (NULL when unset); LOOM_EINVAL (error set) when the class has none of that name. */
static loom_status weights_entry(const loom_object_args *args, const model_weights_entry **entry)
{
    /* an entry the class does not have is refused before the file is read */
    const loom_attr_value *wa = &args->attrs[0];
    *entry = NULL;
    if (wa->is_set && wa->u.s != NULL && wa->u.s[0] != '\0' && (*entry = model_weights_find(args->class_name, wa->u.s))
        == NULL)
        return LOOM_EINVAL;
    return LOOM_OK;
}

/* Sets m (zeroed) up as a Faster R-CNN on backbone bb (configured, not
** loaded), its parameters from attrs[detector_at ..], and loads every
** Faster R-CNN key of L's file into it (the caller checks for keys left
** over). Once it has run, fasterrcnn_release frees m's contents, whatever
** it returned. */
static loom_status load_detector(const loom_object_args *args, model_loader *L, fasterrcnn_model *m,
                                 const rcnn_backbone *bb, int v2, int detector_at)
{
    pthread_mutex_init(&m->lock, NULL);
    m->cls = args->class_name;
    m->backbone = *bb;
    m->backbone.cls = m->cls;
    m->v2 = v2;
    anchor_sizes_of(m);
    loom_status st = params_from_attrs(args, detector_at, &m->p);
    if (st == LOOM_OK)
        st = rcnn_backbone_load(L, &m->backbone);
    if (st == LOOM_OK)
        st = load_rpn(L, m);
    return st != LOOM_OK ? st : load_roi_heads(L, m);
}

/* m's num_params as torchvision counts them: every key L read but the body's FrozenBatchNorm2d. */
static void count_params(fasterrcnn_model *m, const model_loader *L)
{
    m->num_params = L->num_params - rcnn_frozen_bn_params(L);
}

/* After the loading: num_classes (attrs[num_classes_at]) against the file's, the entry's classes and
** num_params (entry NULL: none), and the ops. */
static loom_status finish_detector(const loom_object_args *args, fasterrcnn_model *m, int num_classes_at,
                                   const model_weights_entry *entry)
{
    const loom_attr_value *nc = &args->attrs[num_classes_at];
    if (nc->is_set && nc->u.i != m->classes)
        return pk_host->fail(LOOM_EINVAL, "%s: key 'roi_heads.box_predictor.cls_score.weight' has %lld classes in "
                             "the weights file, attribute num_classes is %lld", m->cls, (long long)m->classes,
                             (long long)nc->u.i);
    loom_status st = entry != NULL ? model_weights_check(entry, m->classes, m->num_params, 1, 1) : LOOM_OK;
    return st != LOOM_OK ? st : find_ops(m);
}

loom_status fasterrcnn_create(const loom_object_args *args, void **state_out, const rcnn_backbone *bb, int v2,
                              int num_classes_at, int detector_at, const fasterrcnn_extension *ext)
{
    *state_out = NULL;
    const char *cls = args->class_name;
    if (args->weights == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s needs a weights file (--weights model.safetensors) holding "
                             "torchvision's %s state_dict", cls, ext->state_dict);
    const model_weights_entry *entry;
    loom_status st = weights_entry(args, &entry);
    if (st != LOOM_OK)
        return st;
    void *state = calloc(1, ext->state_size);
    if (state == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
    fasterrcnn_model *m = state;    /* the state's first member */
    model_loader L;
    memset(&L, 0, sizeof L);
    if ((st = model_loader_init(&L, cls, args->weights, BN_EPS)) != LOOM_OK) {
        free(state);    /* nothing loaded yet (ext->destroy needs load_detector to have run) */
        return st;
    }
    st = load_detector(args, &L, m, bb, v2, detector_at);
    if (st == LOOM_OK && ext->load != NULL)
        st = ext->load(&L, state);
    if (st == LOOM_OK)
        st = model_check_no_unexpected(&L);
    count_params(m, &L);
    model_loader_free(&L);
    if (st == LOOM_OK)
        st = finish_detector(args, m, num_classes_at, entry);
    if (st == LOOM_OK && ext->find_ops != NULL)
        st = ext->find_ops(state);
    if (st != LOOM_OK) {
        ext->destroy(state);
        return st;
    }
    *state_out = state;
    return LOOM_OK;
}

/* The backbone of a class with FRCNN_GENERIC_ATTRS and its head kind. */
static loom_status generic_backbone(const loom_object_args *args, rcnn_backbone *bb, int *v2)
{
    resnet_arch arch;
    loom_status st = resnet_arch_from_attrs(args, &arch);
    if (st != LOOM_OK)
        return st;
    const char *head = args->attrs[FRCNN_G_HEAD].u.s;
    if (head == NULL || (strcmp(head, "v1") != 0 && strcmp(head, "v2") != 0))
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'head' must be 'v1' or 'v2', not '%s'", args->class_name,
                             head != NULL ? head : "");
    *v2 = strcmp(head, "v2") == 0;
    *bb = (rcnn_backbone){ .body_kind = RCNN_BODY_RESNET, .arch = arch,
                           .fpn_channels = args->attrs[FRCNN_G_FPN_CHANNELS].u.i, .fpn_norm = *v2, .first_stage = 0,
                           .extra = RCNN_EXTRA_MAXPOOL };
    return LOOM_OK;
}

loom_status fasterrcnn_generic_create(const loom_object_args *args, void **state_out, const fasterrcnn_extension *ext)
{
    *state_out = NULL;
    rcnn_backbone bb;
    int v2 = 0;
    loom_status st = generic_backbone(args, &bb, &v2);
    return st != LOOM_OK ? st
                         : fasterrcnn_create(args, state_out, &bb, v2, FRCNN_G_NUM_CLASSES, FRCNN_G_DETECTOR, ext);
}

loom_status fasterrcnn_resnet50_create(const loom_object_args *args, void **state_out, int v2,
                                       const fasterrcnn_extension *ext)
{
    /* torchvision's resnet50 body and 256-channel FPN, under the class name for messages */
    rcnn_backbone bb = { .body_kind = RCNN_BODY_RESNET, .arch = *resnet_arch_of("vision.resnet50"),
                         .fpn_channels = 256, .fpn_norm = v2, .first_stage = 0, .extra = RCNN_EXTRA_MAXPOOL };
    bb.arch.name = args->class_name;
    return fasterrcnn_create(args, state_out, &bb, v2, FRCNN_N_NUM_CLASSES, FRCNN_N_DETECTOR, ext);
}

/* The Faster R-CNN classes' state is the fasterrcnn_model alone. */
static const fasterrcnn_extension detector_only = {
    .state_dict = "FasterRCNN", .state_size = sizeof(fasterrcnn_model), .destroy = fasterrcnn_destroy,
};

static loom_status generic_create(const loom_object_args *args, void **state_out)
{
    return fasterrcnn_generic_create(args, state_out, &detector_only);
}

/* _fasterrcnn_mobilenet_v3_large_fpn's backbone: the MobileNetV3-Large body
** (FrozenBatchNorm2d, eps 1e-5), _mobilenet_extractor's FPN on its last two
** stages (convs with bias), LastLevelMaxPool; v1's heads */
static loom_status mnv3_create_of(const loom_object_args *args, void **state_out, double width_mult,
                                  int reduced_tail, int64_t fpn_channels, int num_classes_at, int detector_at)
{
    const rcnn_backbone bb = { .body_kind = RCNN_BODY_MOBILENET_V3, .width_mult = width_mult,
                               .reduced_tail = reduced_tail, .fpn_channels = fpn_channels, .fpn_norm = 0,
                               .first_stage = RCNN_BODY_STAGES - MNV3_RETURNED, .extra = RCNN_EXTRA_MAXPOOL };
    return fasterrcnn_create(args, state_out, &bb, 0, num_classes_at, detector_at, &detector_only);
}

static loom_status mnv3_generic_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    return mnv3_create_of(args, state_out, a[M_WIDTH_MULT].u.f, a[M_REDUCED_TAIL].u.b,
                          a[M_FPN_CHANNELS].u.i, M_NUM_CLASSES, M_DETECTOR);
}

static loom_status mnv3_named_create(const loom_object_args *args, void **state_out)
{
    return mnv3_create_of(args, state_out, 1.0, 0, 256, FRCNN_N_NUM_CLASSES, FRCNN_N_DETECTOR);
}

static loom_status v1_create(const loom_object_args *args, void **state_out)
{
    return fasterrcnn_resnet50_create(args, state_out, 0, &detector_only);
}

static loom_status v2_create(const loom_object_args *args, void **state_out)
{
    return fasterrcnn_resnet50_create(args, state_out, 1, &detector_only);
}

_Static_assert(sizeof generic_attrs / sizeof generic_attrs[0] == FRCNN_G_DETECTOR + N_DETECTOR_ATTRS,
               "vision.fasterrcnn's attribute indices");
_Static_assert(sizeof mnv3_generic_attrs / sizeof mnv3_generic_attrs[0] == M_DETECTOR + N_DETECTOR_ATTRS,
               "vision.fasterrcnn_mobilenet_v3's attribute indices");

MODEL_GENERIC_CLASS(fasterrcnn, generic_attrs, generic_create, fasterrcnn_destroy,
                    "torchvision.models.detection.FasterRCNN on a ResNet-FPN backbone (BackboneWithFPN of a ResNet "
                    "body, LastLevelMaxPool) from a safetensors state_dict, the body's architecture, the FPN's "
                    "width and the head kind as attributes; method vision.fasterrcnn")
MODEL_GENERIC_CLASS(fasterrcnn_resnet50_fpn, fasterrcnn_resnet50_fpn_attrs, v1_create, fasterrcnn_destroy,
                    "torchvision.models.detection.fasterrcnn_resnet50_fpn from a safetensors state_dict (the RPN "
                    "and RoI parameters as attributes); method vision.fasterrcnn_resnet50_fpn")
MODEL_GENERIC_CLASS(fasterrcnn_resnet50_fpn_v2, fasterrcnn_resnet50_fpn_v2_attrs, v2_create, fasterrcnn_destroy,
                    "torchvision.models.detection.fasterrcnn_resnet50_fpn_v2 from a safetensors state_dict (the "
                    "RPN and RoI parameters as attributes); method vision.fasterrcnn_resnet50_fpn_v2")
MODEL_GENERIC_CLASS(fasterrcnn_mobilenet_v3, mnv3_generic_attrs, mnv3_generic_create, fasterrcnn_destroy,
                    "torchvision.models.detection.FasterRCNN on a MobileNetV3-Large FPN backbone "
                    "(_mobilenet_extractor: the FPN on its last two stages, LastLevelMaxPool; 15 anchors per "
                    "location) from a safetensors state_dict, the body's width_mult and reduced_tail and the FPN's "
                    "width as attributes; method vision.fasterrcnn_mobilenet_v3")
MODEL_GENERIC_CLASS(fasterrcnn_mobilenet_v3_large_fpn, fasterrcnn_mobilenet_v3_large_fpn_attrs, mnv3_named_create,
                    fasterrcnn_destroy,
                    "torchvision.models.detection.fasterrcnn_mobilenet_v3_large_fpn from a safetensors state_dict "
                    "(the RPN and RoI parameters as attributes); method vision.fasterrcnn_mobilenet_v3_large_fpn")
MODEL_GENERIC_CLASS(fasterrcnn_mobilenet_v3_large_320_fpn, fasterrcnn_mobilenet_v3_large_320_fpn_attrs,
                    mnv3_named_create, fasterrcnn_destroy,
                    "torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn from a safetensors "
                    "state_dict (min_size 320, max_size 640; the RPN and RoI parameters as attributes); method "
                    "vision.fasterrcnn_mobilenet_v3_large_320_fpn")
