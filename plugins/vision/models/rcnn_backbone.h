/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rcnn_backbone.h - what the detection classes (Faster R-CNN, RetinaNet)
** share (rcnn_backbone.c):
**   - the backbone: torchvision's BackboneWithFPN, a body (the ResNet's
**     conv1 .. layer4 under "backbone.body.") whose stage outputs feed a
**     FeaturePyramidNetwork ("backbone.fpn.": inner_blocks / layer_blocks,
**     with bias or, with norm, a BatchNorm2d folded in) and its extra
**     block: LastLevelMaxPool (a 1x1 stride-2 max pool of the last map) or
**     LastLevelP6P7 (p6, p7: 3x3 stride-2 convs with bias, p7 on relu(p6))
**     fed from the last FPN map (P5) or the last body stage (C5);
**   - the loading of those keys and of Conv2dNormActivation convs;
**   - the dispatched calls (host->op_call, so LOOM_VERBOSE=2 names each
**     backend) the forwards make, the named attributes they pass, and
**     the image list the detectors take as input.
** Every batchnorm is folded into its conv at load (eps: the loader's).
*/
#ifndef LOOM_VISION_MODELS_RCNN_BACKBONE_H
#define LOOM_VISION_MODELS_RCNN_BACKBONE_H

#include <string.h>

#include "mobilenet_v3_body.h"
#include "model_common.h"

#define RCNN_BODY_STAGES 4      /* a ResNet body's layer1..layer4 */
#define RCNN_MAX_LEVELS 6       /* FPN maps of up to 4 stages + LastLevelP6P7's two */

/* The body's kind: which network computes the stage outputs. */
typedef enum rcnn_body_kind {
    RCNN_BODY_RESNET,           /* resnet_model: conv1, maxpool, layer1..layer4 */
    RCNN_BODY_MOBILENET_V3,     /* mnv3_body: MobileNetV3-Large features; its two returned stages are the
                                ** last two stage slots (first_stage 2) */
} rcnn_body_kind;

/* The FPN's extra block, after its own maps. */
typedef enum rcnn_extra_block {
    RCNN_EXTRA_MAXPOOL,         /* LastLevelMaxPool: 'pool' = max_pool2d(P_last, 1, 2, 0) */
    RCNN_EXTRA_P6P7_FROM_P5,    /* LastLevelP6P7 with in_channels == out_channels (use_P5) */
    RCNN_EXTRA_P6P7_FROM_C5,    /* LastLevelP6P7 fed from the last body stage */
} rcnn_extra_block;

/* The backbone. The caller sets cls, body_kind, arch, fpn_channels,
** fpn_norm, first_stage and extra before rcnn_backbone_load. */
typedef struct rcnn_backbone {
    const char *cls;                    /* the class, for messages */
    rcnn_body_kind body_kind;
    resnet_arch arch;                   /* RCNN_BODY_RESNET's architecture */
    resnet_model *body;                 /* "backbone.body.": conv1 .. layer4, its fc unused */
    double width_mult;                  /* RCNN_BODY_MOBILENET_V3's architecture */
    int reduced_tail;
    mnv3_body *mnv3;                    /* "backbone.body.": features 0 .. 16 */
    int64_t fpn_channels;               /* the FPN's out_channels */
    int fpn_norm;                       /* 1: FPN convs without bias, BatchNorm2d folded (norm_layer) */
    int first_stage;                    /* the first body stage the FPN takes (returned_layers[0] - 1) */
    rcnn_extra_block extra;
    model_conv inner[RCNN_BODY_STAGES], layer[RCNN_BODY_STAGES];   /* fpn.inner_blocks / layer_blocks */
    model_conv p6, p7;                  /* fpn.extra_blocks.p6 / p7 (LastLevelP6P7) */
    const loom_op *conv2d, *max_pool, *resize, *relu;
    const loom_op *copy;                /* core.cast, for the oneDNN plan's maps; NULL: no plan */
} rcnn_backbone;

/* The body's stage outputs the FPN takes (4 - first_stage). */
static inline int rcnn_backbone_fpn_inputs(const rcnn_backbone *b)
{
    return RCNN_BODY_STAGES - b->first_stage;
}

/* The maps the backbone gives: the FPN's, then the extra block's. */
static inline int rcnn_backbone_levels(const rcnn_backbone *b)
{
    return rcnn_backbone_fpn_inputs(b) + (b->extra == RCNN_EXTRA_MAXPOOL ? 1 : 2);
}

/* Loads the body and the FPN (and p6 / p7), every key checked, and finds
** the ops; b's configuration is set by the caller. */
loom_status rcnn_backbone_load(model_loader *L, rcnn_backbone *b);
/* Frees what the backbone holds (not b). */
void rcnn_backbone_free(rcnn_backbone *b);
/* x[0 .. rcnn_backbone_levels) = the backbone's maps of the batch
** [B, 3, H, W] (new tensors, freed by the caller). Called from a kernel of
** backend "onednn" (the detectors' onednn:backbone-plan kernels), a ResNet
** body runs as one oneDNN plan (rcnn_backbone_onednn.c) when the batch's
** sides are multiples of 32; otherwise each layer is a dispatched op. */
loom_status rcnn_backbone_forward(loom_call *call, const rcnn_backbone *b, const loom_tensor *batch,
                                  loom_tensor **x);
#ifdef LOOM_VISION_HAVE_ONEDNN
/* 1 when the plan can run b on batch (a ResNet body, sides multiples of 32). */
int rcnn_backbone_plan_fits(const rcnn_backbone *b, const loom_tensor *batch);
/* The backbone as one oneDNN plan of the call's object (per batch shape and
** thread budget, kept with the object's plans); under the object's lock. */
loom_status rcnn_backbone_plan_forward(loom_call *call, const rcnn_backbone *b, const loom_tensor *batch,
                                       loom_tensor **x);
#endif

/* ---------------------------------------------------------- loading */

/* A conv with its bias, copied into c (sizes set by the caller). */
loom_status rcnn_load_conv_bias(model_loader *L, const char *prefix, model_conv *c);
/* torchvision's Conv2dNormActivation <prefix>: its conv <prefix>.0 with a
** bias (no norm) or, with bn, without one and BatchNorm2d <prefix>.1 folded. */
loom_status rcnn_load_conv_norm(model_loader *L, const char *prefix, int bn, model_conv *c);
/* The file's tensor `key` (NULL when absent). */
const loom_tensor *rcnn_file_tensor(const model_loader *L, const char *key);
/* The parameters of the loaded file that torchvision does not count in a
** pretrained detector's num_params: the weight and bias of the body's
** FrozenBatchNorm2d (v1, MobileNetV3), which are buffers. Such a batchnorm
** is one without num_batches_tracked in the file; a v2 body keeps
** BatchNorm2d (with it), whose are parameters. */
int64_t rcnn_frozen_bn_params(const model_loader *L);

/* ------------------------------------------------------------ calls */

static inline loom_named_attr rcnn_int_attr(const char *name, int64_t v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = v } } };
    return a;
}

static inline loom_named_attr rcnn_ints_attr(const char *name, const int64_t *v, int64_t n)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INTS, .is_set = 1, .count = n, .u = { .ints = v } } };
    return a;
}

static inline loom_named_attr rcnn_floats_attr(const char *name, const double *v, int64_t n)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_FLOATS, .is_set = 1, .count = n, .u = { .floats = v } } };
    return a;
}

static inline loom_named_attr rcnn_float_attr(const char *name, double v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_FLOAT, .is_set = 1, .count = 1, .u = { .f = v } } };
    return a;
}

static inline loom_named_attr rcnn_string_attr(const char *name, const char *s)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(s),
                                  .u = { .s = s } } };
    return a;
}

/* op(ins) into n_outs new tensors outs (freed by the caller, rcnn_free_all). */
loom_status rcnn_call_op(loom_call *call, const loom_op *op, const loom_tensor *const *ins, int32_t n_ins,
                         loom_tensor **outs, int32_t n_outs, const loom_named_attr *attrs, int32_t n_attrs);
/* Frees the non-NULL t[0 .. n) and sets them NULL. */
void rcnn_free_all(loom_tensor **t, int n);
/* *out = act(conv c of x (+ residual)) through the backbone's vision.conv2d; act "none" or "relu". */
loom_status rcnn_conv(loom_call *call, const rcnn_backbone *b, const model_conv *c, const loom_tensor *x,
                      const loom_tensor *residual, const char *act, loom_tensor **out);
/* *out = max_pool2d(x, k, stride, pad) through vision.max_pool2d. */
loom_status rcnn_max_pool(loom_call *call, const rcnn_backbone *b, const loom_tensor *x, int64_t k, int64_t stride,
                          int64_t pad, loom_tensor **out);
/* Output i of the call: a copy of t. */
loom_status rcnn_copy_out(loom_call *call, int32_t i, const loom_tensor *t);

/* ------------------------------------------------------------ input */

/* The call's input (inputs 0..2: images, images_offsets, original_sizes)
** as vision.rcnn_transform takes it: *flat the images one after the
** other, offsets [B+1], sizes [B, 2] (views over the caller's memory or
** *own, which the caller frees); cls names the class in messages. */
loom_status rcnn_input_list(const char *cls, const loom_call *call, loom_tensor *flat, int64_t *flat_shape,
                            loom_tensor *offsets, int64_t *off_shape, loom_tensor *sizes, int64_t *size_shape,
                            int64_t **own);

/* A detector's outputs 0..3 (boxes [D,4], scores [D], labels [D], offsets
** [B+1]) from det (the same four, boxes on the resized images): each
** image's boxes back to its original size through postprocess_boxes
** (vision.rcnn_postprocess_boxes), resized_sizes and original_sizes [B, 2]. */
loom_status rcnn_write_detections(loom_call *call, const loom_op *postprocess_boxes, loom_tensor *const *det,
                                  const loom_tensor *resized_sizes, const loom_tensor *original_sizes, int64_t B);

#endif /* LOOM_VISION_MODELS_RCNN_BACKBONE_H */
