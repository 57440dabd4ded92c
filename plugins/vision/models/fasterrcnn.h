/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fasterrcnn.h - torchvision's FasterRCNN on a ResNet-FPN backbone as object
** classes (fasterrcnn_object.c: the classes and the loader;
** fasterrcnn_forward.c: the method, a sequence of dispatched ops):
**   vision.fasterrcnn                 the architecture as attributes (the
**                                     body's as vision.resnet takes them,
**                                     the FPN's width, the head kind)
**   vision.fasterrcnn_resnet50_fpn    v1: ResNet-50 body, FPN convs with
**                                     bias, RPNHead with one 3x3 conv,
**                                     TwoMLPHead
**   vision.fasterrcnn_resnet50_fpn_v2 v2: FPN convs with BatchNorm2d,
**                                     RPNHead with two 3x3 convs,
**                                     FastRCNNConvFCHead (4 conv + BN, 1 fc)
**   vision.fasterrcnn_mobilenet_v3    MobileNetV3-Large body (width_mult,
**                                     reduced_tail), the FPN's width, as
**                                     attributes; FPN on its last two
**                                     stages (with bias), RPNHead of one
**                                     conv, 15 anchors per location (sizes
**                                     32..512 x 3 ratios on each map),
**                                     TwoMLPHead; rpn_score_thresh 0.05
**   vision.fasterrcnn_mobilenet_v3_large_fpn       torchvision's (min_size 800)
**   vision.fasterrcnn_mobilenet_v3_large_320_fpn   min_size 320, max_size
**                                     640, rpn top-n 150 before and after nms
** The backbone (body, FPN, LastLevelMaxPool) is rcnn_backbone.h's.
** Every batchnorm (body, FPN, heads) is folded into its conv at create:
** the body's are FrozenBatchNorm2d in a pretrained file (no
** num_batches_tracked) and BatchNorm2d in eval otherwise, the same
** arithmetic (eps 1e-5 both).
** The attributes, the create and the forward up to the detections are
** exposed below for the detectors built on this one (Mask R-CNN: maskrcnn.h).
*/
#ifndef LOOM_VISION_MODELS_FASTERRCNN_H
#define LOOM_VISION_MODELS_FASTERRCNN_H

#include "model_generic.h"
#include "rcnn_backbone.h"
#include "weights.h"

#define FRCNN_LEVELS 5          /* at most: FPN maps '0'..'3' and LastLevelMaxPool's 'pool' */
#define FRCNN_RATIOS 3          /* AnchorGenerator's aspect ratios 0.5, 1, 2 on every level */
#define FRCNN_MAX_SIZES 15      /* anchor sizes of all levels: MobileNetV3's 5 on each of its 3 */
#define FRCNN_MAX_HEAD_CONVS 8  /* FastRCNNConvFCHead: torchvision's has 4 */

/* The RPN and RoI heads' parameters (the attributes; torchvision's defaults). */
typedef struct fasterrcnn_params {
    int64_t min_size, max_size;
    double image_mean[3], image_std[3];
    int64_t rpn_pre_nms_top_n, rpn_post_nms_top_n;
    double rpn_nms_thresh, rpn_score_thresh;
    double box_score_thresh, box_nms_thresh;
    int64_t box_detections_per_img;
} fasterrcnn_params;

typedef struct fasterrcnn_model {
    const char *cls;
    rcnn_backbone backbone;             /* "backbone.": the ResNet body, the FPN, LastLevelMaxPool */
    int v2;
    int64_t representation, classes, num_params;
    model_conv rpn_conv[2];             /* rpn.head.conv: v1 one, v2 two */
    int n_rpn_convs;
    model_conv rpn_cls, rpn_bbox;       /* rpn.head.cls_logits / bbox_pred (1x1) */
    model_conv head_conv[FRCNN_MAX_HEAD_CONVS];     /* v2's roi_heads.box_head.<i> */
    int n_head_convs;
    const loom_tensor *fc_w[2], *fc_b[2];   /* v1: fc6, fc7; v2: box_head.<n_head_convs + 1> */
    int n_fc;
    const loom_tensor *cls_w, *cls_b, *bbox_w, *bbox_b;     /* roi_heads.box_predictor */
    fasterrcnn_params p;
    int64_t anchor_sizes[FRCNN_MAX_SIZES];  /* every level's sizes, level after level */
    int64_t n_anchor_sizes, n_anchors;      /* n_anchors: per location, sizes of a level x ratios */
    const loom_op *linear, *relu, *transform, *anchors, *rpn, *multiscale,
        *detections, *postprocess_boxes;
    pthread_mutex_t lock;               /* one forward at a time per object (the body's buffers) */
} fasterrcnn_model;

#define VISION_FASTERRCNNS(X) X(fasterrcnn) X(fasterrcnn_resnet50_fpn) X(fasterrcnn_resnet50_fpn_v2)
#define VISION_FASTERRCNN_MOBILENETS(X)                                                            \
    X(fasterrcnn_mobilenet_v3) X(fasterrcnn_mobilenet_v3_large_fpn) X(fasterrcnn_mobilenet_v3_large_320_fpn)
#define VISION_FASTERRCNN_OPS(X_)                                                                  \
    X_(vision_fasterrcnn_schema) X_(vision_fasterrcnn_resnet50_fpn_schema)                          \
    X_(vision_fasterrcnn_resnet50_fpn_v2_schema) X_(vision_fasterrcnn_rpn_schema)                   \
    X_(vision_fasterrcnn_resnet50_fpn_rpn_schema) X_(vision_fasterrcnn_resnet50_fpn_v2_rpn_schema)          \
    X_(vision_fasterrcnn_mobilenet_v3_schema) X_(vision_fasterrcnn_mobilenet_v3_large_fpn_schema)            \
    X_(vision_fasterrcnn_mobilenet_v3_large_320_fpn_schema) X_(vision_fasterrcnn_mobilenet_v3_rpn_schema)    \
    X_(vision_fasterrcnn_mobilenet_v3_large_fpn_rpn_schema)                                                 \
    X_(vision_fasterrcnn_mobilenet_v3_large_320_fpn_rpn_schema)

#define FRCNN_DECL_(id)                                                                            \
    extern const loom_object_class vision_##id##_class;                                            \
    extern const loom_op_schema vision_##id##_schema, vision_##id##_rpn_schema;
VISION_FASTERRCNNS(FRCNN_DECL_)
VISION_FASTERRCNN_MOBILENETS(FRCNN_DECL_)
#undef FRCNN_DECL_
/* the ResNet classes' methods, their _rpn methods, then the MobileNetV3 classes' */
extern const loom_kernel_desc fasterrcnn_kernels[12];
#ifdef LOOM_VISION_HAVE_ONEDNN
extern const loom_kernel_desc fasterrcnn_onednn_kernels[6];    /* the ResNet ones, the backbone as a plan */
#endif

/* ------------------------------------------ what Mask R-CNN builds on */

/* The classes' attributes (their create reads them by these indices):
** vision.fasterrcnn's (and vision.maskrcnn's) FRCNN_GENERIC_ATTRS; a named
** class's table FRCNN_NAMED_ATTRS_(id, FRCNN_DETECTOR_ATTRS). */
/* The RPN and RoI heads' attributes, torchvision's FasterRCNN arguments and
** defaults (its *_test values: the classes run inference only). */
#define FRCNN_INT_(n, d, text) { .name = n, .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE, \
                                 .dflt = LOOM_DEFAULT_INT(d), .doc = text }
#define FRCNN_FLOAT_(n, d, text) { .name = n, .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE, \
                                   .dflt = LOOM_DEFAULT_FLOAT(d), .doc = text }
#define FRCNN_DETECTOR_ATTRS_OF(min_size, max_size, top_n, rpn_score)                             \
    FRCNN_INT_("min_size", min_size, "the transform's short edge target"),                        \
    FRCNN_INT_("max_size", max_size, "the transform's long edge bound"),                          \
    { .name = "image_mean", .type = LOOM_ATTR_FLOATS, .flags = LOOM_ATTR_FINITE, .dflt = LOOM_DEFAULT_NONE, \
      .doc = "3 values; absent: ImageNet's 0.485, 0.456, 0.406" },                                 \
    { .name = "image_std", .type = LOOM_ATTR_FLOATS, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE,   \
      .dflt = LOOM_DEFAULT_NONE, .doc = "3 values; absent: ImageNet's 0.229, 0.224, 0.225" },          \
    FRCNN_INT_("rpn_pre_nms_top_n_test", top_n, "anchors kept per level before the RPN's nms"),    \
    FRCNN_INT_("rpn_post_nms_top_n_test", top_n, "proposals kept per image after the RPN's nms"),  \
    FRCNN_FLOAT_("rpn_nms_thresh", 0.7, "IoU threshold of the RPN's nms"),                         \
    FRCNN_FLOAT_("rpn_score_thresh", rpn_score, "proposals below this sigmoid(objectness) are dropped"), \
    FRCNN_FLOAT_("box_score_thresh", 0.05, "detections must score above this"),                    \
    FRCNN_FLOAT_("box_nms_thresh", 0.5, "IoU threshold of the per-class nms"),                     \
    FRCNN_INT_("box_detections_per_img", 100, "detections kept per image")
#define N_DETECTOR_ATTRS 11
/* FasterRCNN's defaults; fasterrcnn_mobilenet_v3_large_fpn's (rpn_score_thresh 0.05) and
** fasterrcnn_mobilenet_v3_large_320_fpn's (min_size 320, max_size 640, rpn top-n 150 too) */
#define FRCNN_DETECTOR_ATTRS FRCNN_DETECTOR_ATTRS_OF(800, 1333, 1000, 0.0)
#define FRCNN_MNV3_DETECTOR_ATTRS FRCNN_DETECTOR_ATTRS_OF(800, 1333, 1000, 0.05)
#define FRCNN_MNV3_320_DETECTOR_ATTRS FRCNN_DETECTOR_ATTRS_OF(320, 640, 150, 0.05)

/* vision.fasterrcnn's attributes: attrs[1..6] are vision.resnet's (parsed
** by resnet_arch_from_attrs), in its order */
enum { FRCNN_G_NUM_CLASSES = 7, FRCNN_G_FPN_CHANNELS, FRCNN_G_HEAD, FRCNN_G_DETECTOR };
#define FRCNN_GENERIC_ATTRS                                                                        \
    MODEL_GENERIC_WEIGHTS_ATTR,                                                                    \
    { .name = "block", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("bottleneck"),        \
      .doc = "the body's block: basic or bottleneck (as vision.resnet)" },                         \
    { .name = "layers", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED, .dflt = LOOM_DEFAULT_NONE, \
      .doc = "blocks of layer1..4 (ResNet-50's: 3, 4, 6, 3)" },                                    \
    { .name = "widths", .type = LOOM_ATTR_INTS, .dflt = LOOM_DEFAULT_NONE,                         \
      .doc = "planes of layer1..4 (unset: 64, 128, 256, 512)" },                                   \
    { .name = "stem_width", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(64), .doc = "conv1's output channels" }, \
    { .name = "groups", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(1), .doc = "the bottleneck's groups" }, \
    { .name = "width_per_group", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(64),              \
      .doc = "the bottleneck's width_per_group" },                                                 \
    MODEL_NUM_CLASSES_ATTR,                                                                        \
    { .name = "fpn_channels", .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_POSITIVE, .dflt = LOOM_DEFAULT_INT(256), \
      .doc = "the FPN's out_channels (torchvision's: 256)" },                                      \
    { .name = "head", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("v1"),                 \
      .doc = "v1 (FPN convs with bias, RPNHead of one conv, TwoMLPHead) or v2 (BatchNorm2d in the FPN, RPNHead of " \
             "two convs, FastRCNNConvFCHead)" },                                                   \
    FRCNN_DETECTOR_ATTRS,

/* the named classes: weights (the class's torchvision entries), num_classes, then the detector's */
enum { FRCNN_N_NUM_CLASSES = 1, FRCNN_N_DETECTOR };
#define FRCNN_NAMED_ATTRS_(id, detector)                                                           \
    static const loom_attr_def id##_attrs[] = {                                                    \
        { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,                   \
          .doc = VISION_WEIGHTS_DOC_##id },                                                         \
        MODEL_NUM_CLASSES_ATTR,                                                                    \
        detector,                                                                                  \
    };                                                                                             \
    _Static_assert(sizeof id##_attrs / sizeof id##_attrs[0] == FRCNN_N_DETECTOR + N_DETECTOR_ATTRS, \
                   "vision." #id "'s attribute indices");

/* What a class built on the Faster R-CNN (Mask R-CNN) adds to its create
** (fasterrcnn_create); the Faster R-CNN classes' own adds nothing. */
typedef struct fasterrcnn_extension {
    const char *state_dict;     /* torchvision's module whose state_dict the file holds ("MaskRCNN"), for messages */
    size_t state_size;          /* the object's state: a struct whose first member is its fasterrcnn_model */
    /* its own keys of L's file, after the detector's, before the check for keys left over (NULL: none) */
    loom_status (*load)(model_loader *L, void *state);
    /* its own ops, once the detector is complete (NULL: none) */
    loom_status (*find_ops)(void *state);
    /* frees the state and all it holds; called on a failure once the detector's loading has begun */
    void (*destroy)(void *state);
} fasterrcnn_extension;

/* create of a class on the Faster R-CNN: a zeroed state of ext's size,
** the detector on backbone bb (configured, not loaded; head v1 or v2) and
** its parameters from attrs[detector_at ..], then ext's keys, every key of
** the weights file checked by name, dtype and shape and none left over;
** num_classes (attrs[num_classes_at]) and the weight entry (attrs[0], the
** named classes') checked against the file, then the ops found. On success
** *state_out holds the state; on a failure it is NULL, the error set and
** nothing left allocated. */
loom_status fasterrcnn_create(const loom_object_args *args, void **state_out, const rcnn_backbone *bb, int v2,
                              int num_classes_at, int detector_at, const fasterrcnn_extension *ext);
/* fasterrcnn_create of a class with FRCNN_GENERIC_ATTRS: the ResNet body, the FPN's width and the head kind
** from them (an unknown head refused by name). */
loom_status fasterrcnn_generic_create(const loom_object_args *args, void **state_out, const fasterrcnn_extension *ext);
/* fasterrcnn_create of a named class (FRCNN_NAMED_ATTRS_) on torchvision's ResNet-50 FPN, head v1 or v2 (v2 1). */
loom_status fasterrcnn_resnet50_create(const loom_object_args *args, void **state_out, int v2,
                                       const fasterrcnn_extension *ext);
/* Frees what m holds (not m). */
void fasterrcnn_release(fasterrcnn_model *m);

/* One forward up to the detections (fasterrcnn_detect): the input list
** (views over the call's inputs or own), the transformed batch and
** image_sizes, the FPN maps and the detections on the resized images
** (boxes, scores, labels, offsets). fasterrcnn_pass_free frees it. */
typedef struct fasterrcnn_pass {
    loom_tensor flat, offsets, sizes;
    int64_t flat_shape[1], off_shape[1], size_shape[2], *own;
    loom_tensor *tr[2];
    loom_tensor *x[FRCNN_LEVELS];
    loom_tensor *det[4];
} fasterrcnn_pass;
loom_status fasterrcnn_detect(loom_call *call, const fasterrcnn_model *m, fasterrcnn_pass *p);
/* Outputs 0..3 of the call from p: boxes back on the original images, scores, labels, offsets. */
loom_status fasterrcnn_write_detections(loom_call *call, const fasterrcnn_model *m, const fasterrcnn_pass *p);
void fasterrcnn_pass_free(fasterrcnn_pass *p);
/* The methods' inputs: images, images_offsets, original_sizes. */
extern const loom_arg_def fasterrcnn_inputs[3];


#endif /* LOOM_VISION_MODELS_FASTERRCNN_H */
