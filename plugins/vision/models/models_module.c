/* SPDX-License-Identifier: BSD-3-Clause */
/*
** models_module.c - the models module of vision.so: the method ops of every
** family (models.h), their classes and their cpu kernels, registered
** together.
*/
#include "efficientnet.h"
#include "fasterrcnn.h"
#include "maskrcnn.h"
#include "mnasnet.h"
#include "models.h"
#include "regnet.h"
#include "retinanet.h"
#include "shufflenet.h"
#include "weights.h"

PK_OPS_DEFINE(vision_models_ops, VISION_MODELS_OPS);

/* the module's ops: the named classes' methods, then those of the classes
** that take the architecture as attributes */
#define VISION_MODELS_GENERIC_OPS(X_)                                                              \
    X_(vision_resnet_schema) X_(vision_regnet_schema) X_(vision_efficientnet_v2_schema)             \
    X_(vision_shufflenet_v2_schema) X_(vision_mnasnet_schema) VISION_FASTERRCNN_OPS(X_)             \
    VISION_RETINANET_MODEL_OPS(X_)                                                                 \
    X_(vision_maskrcnn_schema) X_(vision_maskrcnn_resnet50_fpn_schema) X_(vision_maskrcnn_resnet50_fpn_v2_schema)
static const loom_op_schema *const models_module_ops[] = {
    VISION_MODELS_OPS(PK_OP_REF_ROW_) VISION_MODELS_GENERIC_OPS(PK_OP_REF_ROW_)
};

#define CLASS_REF_(id) &vision_##id##_class,
#define CLASS_REF2_(R, id) CLASS_REF_(id)
static const loom_object_class *const models_classes[] = {
    VISION_RESNETS(CLASS_REF_) VISION_REGNETS(CLASS_REF2_, _) VISION_EFFICIENTNETS(CLASS_REF2_, _)
    VISION_SHUFFLENETS(CLASS_REF2_, _) VISION_MNASNETS(CLASS_REF2_, _)
    &vision_resnet_class, &vision_regnet_class, &vision_efficientnet_v2_class, &vision_shufflenet_v2_class,
    &vision_mnasnet_class, &vision_fasterrcnn_class, &vision_fasterrcnn_resnet50_fpn_class,
    &vision_fasterrcnn_resnet50_fpn_v2_class, &vision_retinanet_class, &vision_retinanet_resnet50_fpn_class,
    &vision_retinanet_resnet50_fpn_v2_class,
    &vision_fasterrcnn_mobilenet_v3_class, &vision_fasterrcnn_mobilenet_v3_large_fpn_class,
    &vision_fasterrcnn_mobilenet_v3_large_320_fpn_class,
    &vision_maskrcnn_class, &vision_maskrcnn_resnet50_fpn_class, &vision_maskrcnn_resnet50_fpn_v2_class,
};

/* vision.weights_meta (weights_meta.c): a table lookup, on the cpu */
static const loom_kernel_desc weights_meta_kernels[] = {
    PK_KERNEL_CPU(vision_weights_meta_schema, "cpu:table", 0, vision_weights_meta_run),
};

static loom_status models_register_kernels(const loom_host_api *host, loom_registrar *reg)
{
    loom_status st = pk_register_kernels(host, reg, resnet_kernels, PK_COUNT(resnet_kernels));
#ifdef LOOM_VISION_HAVE_ONEDNN
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, resnet_onednn_kernels, PK_COUNT(resnet_onednn_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, effnet_onednn_kernels, PK_COUNT(effnet_onednn_kernels));
#endif
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, resnet_generic_kernels, PK_COUNT(resnet_generic_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, weights_meta_kernels, PK_COUNT(weights_meta_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, regnet_kernels, PK_COUNT(regnet_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, regnet_generic_kernels, PK_COUNT(regnet_generic_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, effnet_kernels, PK_COUNT(effnet_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, effnet_generic_kernels, PK_COUNT(effnet_generic_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, shufflenet_kernels, PK_COUNT(shufflenet_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, shufflenet_generic_kernels, PK_COUNT(shufflenet_generic_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, mnasnet_kernels, PK_COUNT(mnasnet_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, mnasnet_generic_kernels, PK_COUNT(mnasnet_generic_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, fasterrcnn_kernels, PK_COUNT(fasterrcnn_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, maskrcnn_kernels, PK_COUNT(maskrcnn_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, retinanet_kernels, PK_COUNT(retinanet_kernels));
#ifdef LOOM_VISION_HAVE_ONEDNN
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, retinanet_onednn_kernels, PK_COUNT(retinanet_onednn_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, fasterrcnn_onednn_kernels, PK_COUNT(fasterrcnn_onednn_kernels));
    if (st == LOOM_OK)
        st = pk_register_kernels(host, reg, maskrcnn_onednn_kernels, PK_COUNT(maskrcnn_onednn_kernels));
#endif
    return st;
}

const pk_module vision_models_cpu = { .name = "models", .ops = models_module_ops,
                                      .n_ops = PK_COUNT(models_module_ops), .classes = models_classes,
                                      .n_classes = PK_COUNT(models_classes),
                                      .register_more = models_register_kernels };
