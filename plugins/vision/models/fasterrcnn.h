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
*/
#ifndef LOOM_VISION_MODELS_FASTERRCNN_H
#define LOOM_VISION_MODELS_FASTERRCNN_H

#include "rcnn_backbone.h"

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


#endif /* LOOM_VISION_MODELS_FASTERRCNN_H */
