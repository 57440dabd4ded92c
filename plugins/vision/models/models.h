/* SPDX-License-Identifier: BSD-3-Clause */
/*
** models.h - what the files of the vision `models` module share: the
** torchvision classification models (ResNet, RegNet, EfficientNetV2, ShuffleNetV2,
** MNASNet) as object classes, each with a method
** op of the same name (vision.resnet50 ...): created from a safetensors file
** with torchvision's state_dict keys, run as a sequence of dispatched
** vision.* ops (host->op_call), so LOOM_VERBOSE=2 shows each layer's backend.
*/
#ifndef LOOM_VISION_MODELS_H
#define LOOM_VISION_MODELS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

/* The ResNet family of torchvision/models/resnet.py. */
#define VISION_RESNETS(X)                                                                          \
    X(resnet18) X(resnet34) X(resnet50) X(resnet101) X(resnet152)                                  \
    X(resnext50_32x4d) X(resnext101_32x8d) X(resnext101_64x4d) X(wide_resnet50_2) X(wide_resnet101_2)

#define VISION_N_RESNETS 10

/* The RegNet family of torchvision/models/regnet.py (regnet.h); R is
** passed through to X. */
#define VISION_REGNETS(X, R)                                                                       \
    X(R, regnet_y_400mf) X(R, regnet_y_800mf) X(R, regnet_y_1_6gf) X(R, regnet_y_3_2gf)            \
    X(R, regnet_y_8gf) X(R, regnet_y_16gf) X(R, regnet_y_32gf) X(R, regnet_y_128gf)                \
    X(R, regnet_x_400mf) X(R, regnet_x_800mf) X(R, regnet_x_1_6gf) X(R, regnet_x_3_2gf)            \
    X(R, regnet_x_8gf) X(R, regnet_x_16gf) X(R, regnet_x_32gf)
#define VISION_N_REGNETS 15

/* EfficientNetV2 (torchvision/models/efficientnet.py; efficientnet.h) */
#define VISION_EFFICIENTNETS(X, R) X(R, efficientnet_v2_s) X(R, efficientnet_v2_m) X(R, efficientnet_v2_l)
#define VISION_N_EFFICIENTNETS 3

/* ShuffleNetV2 (torchvision/models/shufflenetv2.py; shufflenet.h) */
#define VISION_SHUFFLENETS(X, R)                                                                   \
    X(R, shufflenet_v2_x0_5) X(R, shufflenet_v2_x1_0) X(R, shufflenet_v2_x1_5) X(R, shufflenet_v2_x2_0)
#define VISION_N_SHUFFLENETS 4

/* MNASNet (torchvision/models/mnasnet.py; mnasnet.h) */
#define VISION_MNASNETS(X, R) X(R, mnasnet0_5) X(R, mnasnet0_75) X(R, mnasnet1_0) X(R, mnasnet1_3)
#define VISION_N_MNASNETS 4

#define VISION_MODEL_SCHEMA_OF_(R, id) R(vision_##id##_schema)
#define VISION_MODELS_OPS(X_)                                                                      \
    X_(vision_resnet18_schema) X_(vision_resnet34_schema) X_(vision_resnet50_schema)               \
    X_(vision_resnet101_schema) X_(vision_resnet152_schema) X_(vision_resnext50_32x4d_schema)      \
    X_(vision_resnext101_32x8d_schema) X_(vision_resnext101_64x4d_schema)                          \
    X_(vision_wide_resnet50_2_schema) X_(vision_wide_resnet101_2_schema)                           \
    VISION_REGNETS(VISION_MODEL_SCHEMA_OF_, X_) VISION_EFFICIENTNETS(VISION_MODEL_SCHEMA_OF_, X_)     \
    VISION_SHUFFLENETS(VISION_MODEL_SCHEMA_OF_, X_) VISION_MNASNETS(VISION_MODEL_SCHEMA_OF_, X_)            \
    X_(vision_weights_meta_schema)
PK_OPS_DECLARE(vision_models_ops, VISION_MODELS_OPS);

/* One architecture of the family: torchvision's ResNet(block, layers,
** groups, width_per_group), whose stem is 64 wide and whose stages are
** 64, 128, 256 and 512 planes; vision.resnet takes those as attributes
** too (stem_width, widths). */
typedef struct resnet_arch {
    const char *name;               /* "vision.resnet50" */
    int bottleneck;                 /* 0: BasicBlock (expansion 1), 1: Bottleneck (expansion 4) */
    int layers[4];
    int groups, width_per_group;
    int64_t widths[4];              /* planes of layer1..4 */
    int64_t stem_width;             /* conv1's output channels */
} resnet_arch;

const resnet_arch *resnet_arch_of(const char *class_name);

/* vision.resnet: the architecture as attributes, method vision.resnet. */
extern const loom_object_class vision_resnet_class;
extern const loom_op_schema vision_resnet_schema;
extern const loom_kernel_desc resnet_generic_kernels[1];

/* A convolution with its batchnorm folded in: weight [cout, cin/groups, k, k]
** and bias [cout], owned by the model. */
typedef struct model_conv {
    float *weight, *bias;
    int64_t cin, cout, k, stride, pad, groups;
} model_conv;

/* Activation buffers of one input shape, planned at its first call (each
** model's forward file names the roles): each as large as the floats its
** role needs, reused while the sizes fit. */
typedef struct model_buffers {
    int64_t n, h, w;                /* the input shape they are for; n = 0: none yet */
    float *buf[8];
    size_t floats[8];
} model_buffers;

/* What every model shares, the first member of each family's model
** struct: its class, the classifier head (borrowed from the mapping), the
** parameters counted, the weight entry, the ops its forward calls, and the
** buffers of one forward at a time (its lock: calls on one object from
** several threads are serialised, those on distinct objects are not). */
typedef struct model_base {
    const char *cls;
    const void *arch;               /* the family's architecture row */
    int64_t features, classes;      /* head: [classes, features] */
    const float *fc_weight, *fc_bias;
    int64_t num_params;
    const struct model_weights_entry *entry;
    const loom_op *conv2d, *se, *max_pool, *shuffle, *avg_pool, *linear;
    pthread_mutex_t lock;
    model_buffers plan;
    int conv_winograd;              /* conv_algorithm=winograd (ResNet classes): the onednn plan's 3x3/1 convs */
} model_base;

typedef struct resnet_block {
    model_conv conv[3];             /* BasicBlock: conv1, conv2; Bottleneck: conv1..conv3 */
    int n_convs;
    int has_down;
    model_conv down;                /* downsample.0 + downsample.1 */
} resnet_block;


typedef struct resnet_model {
    model_base base;                /* base.arch: &arch */
    resnet_arch arch;               /* the class's, or vision.resnet's attributes */
    model_conv stem;
    resnet_block *blocks;
    int n_blocks;
} resnet_model;

/* What the detectors built on a ResNet body use (fasterrcnn.h): the body's
** loader (conv1 .. layer4, the key prefix in the loader; sets base.features),
** its destroy, and vision.resnet's parse of the architecture attributes
** (attrs[1..6]: block, layers, widths, stem_width, groups, width_per_group). */
struct model_loader;
loom_status resnet_load(struct model_loader *L, void *model);
void resnet_destroy(void *state);
loom_status resnet_arch_from_attrs(const loom_object_args *args, void *arch);

/* Each family's classes (vision_<id>_class) and method kernels. */
#define VISION_MODEL_CLASS_DECL_(id) extern const loom_object_class vision_##id##_class;
#define VISION_MODEL_CLASS_DECL2_(R, id) VISION_MODEL_CLASS_DECL_(id)
VISION_RESNETS(VISION_MODEL_CLASS_DECL_)
VISION_REGNETS(VISION_MODEL_CLASS_DECL2_, _)
VISION_EFFICIENTNETS(VISION_MODEL_CLASS_DECL2_, _)
VISION_SHUFFLENETS(VISION_MODEL_CLASS_DECL2_, _)
VISION_MNASNETS(VISION_MODEL_CLASS_DECL2_, _)
extern const loom_kernel_desc resnet_kernels[VISION_N_RESNETS];
extern const loom_kernel_desc regnet_kernels[VISION_N_REGNETS];
extern const loom_kernel_desc effnet_kernels[VISION_N_EFFICIENTNETS];
extern const loom_kernel_desc shufflenet_kernels[VISION_N_SHUFFLENETS];
extern const loom_kernel_desc mnasnet_kernels[VISION_N_MNASNETS];
#ifdef LOOM_VISION_HAVE_ONEDNN
/* the ResNet and EfficientNetV2 classes' forward as one oneDNN plan
** (resnet_onednn.c, efficientnet_onednn.c) */
extern const loom_kernel_desc resnet_onednn_kernels[VISION_N_RESNETS];
extern const loom_kernel_desc effnet_onednn_kernels[VISION_N_EFFICIENTNETS];
#endif

extern const pk_module vision_models_cpu;

#endif /* LOOM_VISION_MODELS_H */
