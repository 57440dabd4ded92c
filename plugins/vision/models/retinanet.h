/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet.h - torchvision's RetinaNet on a ResNet-FPN backbone as object
** classes (retinanet_object.c: the classes and the loader;
** retinanet_forward.c: the methods, a sequence of dispatched ops):
**   vision.retinanet                  the architecture as attributes (the
**                                     body's as vision.resnet takes them,
**                                     the FPN's width (of layer2..4), the
**                                     head kind, the anchors)
**   vision.retinanet_resnet50_fpn     v1: ResNet-50 body, FPN of layer2..4
**                                     (convs with bias), LastLevelP6P7(256,
**                                     256) fed from P5, RetinaNetHead of
**                                     conv + relu
**   vision.retinanet_resnet50_fpn_v2  v2: the same FPN, LastLevelP6P7(2048,
**                                     256) fed from C5, RetinaNetHead of
**                                     conv + GroupNorm(32) + relu
** The backbone is rcnn_backbone.h's; its body's batchnorms are folded at
** create (FrozenBatchNorm2d in v1's pretrained file, BatchNorm2d in v2's:
** the same arithmetic in eval, eps 1e-5). Each class has the method
** vision.<class> (the detections) and vision.<class>_features (the FPN maps
** and the resized sizes: the intermediate results, to be checked).
*/
#ifndef LOOM_VISION_MODELS_RETINANET_H
#define LOOM_VISION_MODELS_RETINANET_H

#include "rcnn_backbone.h"

#define RETINA_HEAD_CONVS 4         /* RetinaNet{Classification,Regression}Head: 4 Conv2dNormActivation */
#define RETINA_MAX_ANCHOR_SIZES 64  /* anchor sizes over every level */
#define RETINA_MAX_RATIOS 8

/* The transform's and postprocess's parameters (the attributes; torchvision's defaults). */
typedef struct retinanet_params {
    int64_t min_size, max_size;
    double image_mean[3], image_std[3];
    double score_thresh, nms_thresh;
    int64_t detections_per_img, topk_candidates;
    int64_t anchor_sizes[RETINA_MAX_ANCHOR_SIZES];  /* level after level, n_sizes / levels per level */
    int n_sizes;
    double aspect_ratios[RETINA_MAX_RATIOS];
    int n_ratios;
} retinanet_params;

/* One head (classification or regression) as vision.retinanet_head takes
** it: the four convs stacked, their biases (v1) or GroupNorm's affine (v2). */
typedef struct retinanet_head {
    float *conv_weight;         /* [4, C, C, 3, 3] */
    float *conv_bias;           /* [4, C]; NULL in v2 */
    float *norm_weight, *norm_bias;     /* [4, C]; NULL in v1 */
    const loom_tensor *out_weight, *out_bias;   /* cls_logits / bbox_reg, borrowed from the file */
    int64_t outputs;            /* K: classes or 4 */
} retinanet_head;

typedef struct retinanet_model {
    const char *cls;
    rcnn_backbone backbone;     /* "backbone.": ResNet body, FPN, LastLevelP6P7 */
    int v2;                     /* GroupNorm heads */
    int64_t anchors_per_location, classes, num_params;
    retinanet_head head[2];     /* classification, regression */
    retinanet_params p;
    const loom_op *head_op, *transform, *anchors, *postprocess, *postprocess_boxes;
    pthread_mutex_t lock;       /* one forward at a time per object */
} retinanet_model;

#define VISION_RETINANETS(X) X(retinanet) X(retinanet_resnet50_fpn) X(retinanet_resnet50_fpn_v2)
#define VISION_RETINANET_MODEL_OPS(X_)                                                             \
    X_(vision_retinanet_schema) X_(vision_retinanet_resnet50_fpn_schema)                            \
    X_(vision_retinanet_resnet50_fpn_v2_schema) X_(vision_retinanet_features_schema)                \
    X_(vision_retinanet_resnet50_fpn_features_schema) X_(vision_retinanet_resnet50_fpn_v2_features_schema)

#define RETINA_DECL_(id)                                                                           \
    extern const loom_object_class vision_##id##_class;                                            \
    extern const loom_op_schema vision_##id##_schema, vision_##id##_features_schema;
VISION_RETINANETS(RETINA_DECL_)
#undef RETINA_DECL_
extern const loom_kernel_desc retinanet_kernels[6];    /* the methods, then the _features methods */
#ifdef LOOM_VISION_HAVE_ONEDNN
extern const loom_kernel_desc retinanet_onednn_kernels[6];     /* the same, the backbone as a oneDNN plan */
#endif

#endif /* LOOM_VISION_MODELS_RETINANET_H */
