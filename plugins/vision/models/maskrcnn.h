/* SPDX-License-Identifier: BSD-3-Clause */
/*
** maskrcnn.h - torchvision's MaskRCNN on a ResNet-FPN backbone as object
** classes (maskrcnn_object.c: the classes and the loader;
** maskrcnn_forward.c: the method), a Faster R-CNN (fasterrcnn.h, its
** loader and its forward up to the detections) with the mask branch:
**   vision.maskrcnn                  the architecture as attributes (as
**                                    vision.fasterrcnn's)
**   vision.maskrcnn_resnet50_fpn     v1: Faster R-CNN v1, MaskRCNNHeads of
**                                    3x3 convs with bias + relu
**   vision.maskrcnn_resnet50_fpn_v2  v2: Faster R-CNN v2, MaskRCNNHeads of
**                                    3x3 convs + BatchNorm2d + relu
** The mask branch (roi_heads.mask_*): MultiScaleRoIAlign of the FPN maps
** '0'..'3' at 14 x 14 (sampling_ratio 2) on the detections' boxes,
** MaskRCNNHeads (the convs' count and widths the file's, dilation 1 as
** torchvision's builders), MaskRCNNPredictor (conv5_mask: a 2x2 stride-2
** ConvTranspose2d + relu; mask_fcn_logits: a 1x1 conv to the classes), the
** sigmoid of each detection's label channel and paste_masks_in_image into
** the original image. The v2 head's batchnorms are folded into their
** convs (eps 1e-5).
*/
#ifndef LOOM_VISION_MODELS_MASKRCNN_H
#define LOOM_VISION_MODELS_MASKRCNN_H

#include "fasterrcnn.h"

#define MRCNN_MAX_MASK_CONVS 8      /* MaskRCNNHeads: torchvision's have 4 */
#define MRCNN_POOLED 14             /* mask_roi_pool's output_size */

typedef struct maskrcnn_model {
    fasterrcnn_model det;           /* the detector (first: its lock guards the whole forward) */
    model_conv mask_conv[MRCNN_MAX_MASK_CONVS];     /* roi_heads.mask_head.<i> (3x3, stride 1, padding 1) */
    int n_mask_convs;
    int64_t dim_reduced;            /* conv5_mask's output channels */
    float *deconv_w, *deconv_b;     /* roi_heads.mask_predictor.conv5_mask [in, dim_reduced, 2, 2], [dim] */
    int64_t deconv_in;
    model_conv logits;              /* roi_heads.mask_predictor.mask_fcn_logits (1x1, classes) */
    const loom_op *conv_transpose, *sigmoid, *paste;
} maskrcnn_model;

#define VISION_MASKRCNNS(X) X(maskrcnn) X(maskrcnn_resnet50_fpn) X(maskrcnn_resnet50_fpn_v2)

#define MRCNN_DECL_(id)                                                                            \
    extern const loom_object_class vision_##id##_class;                                            \
    extern const loom_op_schema vision_##id##_schema;
VISION_MASKRCNNS(MRCNN_DECL_)
#undef MRCNN_DECL_
extern const loom_kernel_desc maskrcnn_kernels[3];
#ifdef LOOM_VISION_HAVE_ONEDNN
extern const loom_kernel_desc maskrcnn_onednn_kernels[3];
#endif

#endif /* LOOM_VISION_MODELS_MASKRCNN_H */
