/* SPDX-License-Identifier: BSD-3-Clause */
/*
** maskrcnn_object.c - the Mask R-CNN classes (maskrcnn.h): create reads a
** safetensors file holding torchvision's MaskRCNN state_dict, every key
** checked by name, dtype and shape, none left over: the Faster R-CNN's
** (fasterrcnn_create), then the mask branch's:
**   roi_heads.mask_head.<i>.0 (v1: with bias; v2: without, BatchNorm2d in
**                            .1, folded), the count and widths the file's;
**                            v1 also under the names of torchvision before
**                            0.8, mask_head.mask_fcn<i+1>.weight / bias,
**                            which MaskRCNNHeads._load_from_state_dict maps
**   roi_heads.mask_predictor.conv5_mask (ConvTranspose2d [in, dim, 2, 2]
**                            with bias), .mask_fcn_logits (1x1, the
**                            box predictor's classes)
*/
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "maskrcnn.h"
#include "model_generic.h"

/* ------------------------------------------------------------ attributes */

static const loom_attr_def generic_attrs[] = { FRCNN_GENERIC_ATTRS };
FRCNN_NAMED_ATTRS_(maskrcnn_resnet50_fpn, FRCNN_DETECTOR_ATTRS)
FRCNN_NAMED_ATTRS_(maskrcnn_resnet50_fpn_v2, FRCNN_DETECTOR_ATTRS)
_Static_assert(sizeof generic_attrs / sizeof generic_attrs[0] == FRCNN_G_DETECTOR + N_DETECTOR_ATTRS,
               "vision.maskrcnn's attribute indices");

/* --------------------------------------------------------------- loading */

/* MaskRCNNHeads: conv i under its key or, v1 only, its pre-0.8 name. */
static loom_status load_mask_head(model_loader *L, maskrcnn_model *m)
{
    const char *cls = m->det.cls;
    const int v2 = m->det.v2;
    int64_t in = m->det.backbone.fpn_channels;
    loom_status st = LOOM_OK;
    for (int i = 0; i < MRCNN_MAX_MASK_CONVS && st == LOOM_OK; i++) {
        char key[96], prefix[64];
        snprintf(key, sizeof key, "roi_heads.mask_head.%d.0.weight", i);
        snprintf(prefix, sizeof prefix, "roi_heads.mask_head.%d", i);
        const loom_tensor *w = rcnn_file_tensor(L, key);
        int legacy = 0;
        if (w == NULL && !v2) {
            snprintf(key, sizeof key, "roi_heads.mask_head.mask_fcn%d.weight", i + 1);
            snprintf(prefix, sizeof prefix, "roi_heads.mask_head.mask_fcn%d", i + 1);
            w = rcnn_file_tensor(L, key);
            legacy = 1;
        }
        if (w == NULL)
            break;
        if (w->ndim != 4)
            return pk_host->fail(LOOM_EINVAL, "%s: key '%s' has %d dims, a conv weight has 4", cls, key,
                                 (int)w->ndim);
        m->mask_conv[i] = model_conv_of(in, w->shape[0], 3, 1, 1);
        st = legacy ? rcnn_load_conv_bias(L, prefix, &m->mask_conv[i])
                    : rcnn_load_conv_norm(L, prefix, v2, &m->mask_conv[i]);
        in = w->shape[0];
        m->n_mask_convs = i + 1;
    }
    if (st == LOOM_OK && m->n_mask_convs == 0)
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key 'roi_heads.mask_head.0.0.weight' "
                             "(MaskRCNNHeads' first conv): is it a Faster R-CNN file?", cls);
    m->deconv_in = in;
    return st;
}

/* MaskRCNNPredictor: conv5_mask (the transposed conv) and mask_fcn_logits. */
static loom_status load_mask_predictor(model_loader *L, maskrcnn_model *m)
{
    const char *cls = m->det.cls;
    const char *key = "roi_heads.mask_predictor.conv5_mask.weight";
    const loom_tensor *w = rcnn_file_tensor(L, key);
    if (w == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: the weights file has no key '%s' (MaskRCNNPredictor's "
                             "ConvTranspose2d)", cls, key);
    if (w->ndim != 4 || w->shape[1] < 1)
        return pk_host->fail(LOOM_EINVAL, "%s: key '%s' must be [%lld, dim_reduced, 2, 2], it has %d dims", cls, key,
                             (long long)m->deconv_in, (int)w->ndim);
    m->dim_reduced = w->shape[1];
    const int64_t ws[4] = { m->deconv_in, m->dim_reduced, 2, 2 }, bs[1] = { m->dim_reduced };
    const loom_tensor *tw, *tb;
    loom_status st = model_expect(L, "roi_heads.mask_predictor.conv5_mask.", "weight", LOOM_DTYPE_F32, 4, ws, &tw);
    if (st == LOOM_OK)
        st = model_expect(L, "roi_heads.mask_predictor.conv5_mask.", "bias", LOOM_DTYPE_F32, 1, bs, &tb);
    if (st != LOOM_OK)
        return st;
    m->deconv_w = (float *)loom_data(tw);
    m->deconv_b = (float *)loom_data(tb);
    m->logits = model_conv_of(m->dim_reduced, m->det.classes, 1, 1, 1);
    return rcnn_load_conv_bias(L, "roi_heads.mask_predictor.mask_fcn_logits", &m->logits);
}

static void maskrcnn_destroy(void *state)
{
    maskrcnn_model *m = state;
    if (m == NULL)
        return;
    for (int i = 0; i < MRCNN_MAX_MASK_CONVS; i++)
        model_conv_free(&m->mask_conv[i]);
    model_conv_free(&m->logits);
    fasterrcnn_release(&m->det);
    free(m);
}

/* The mask branch's keys (fasterrcnn_extension.load): MaskRCNNHeads, then MaskRCNNPredictor. */
static loom_status load_mask_branch(model_loader *L, void *state)
{
    loom_status st = load_mask_head(L, state);
    return st != LOOM_OK ? st : load_mask_predictor(L, state);
}

/* The mask branch's ops (fasterrcnn_extension.find_ops). */
static loom_status find_mask_ops(void *state)
{
    maskrcnn_model *m = state;
    struct { const loom_op **op; const char *name; } ops[] = {
        { &m->conv_transpose, "vision.conv_transpose2d" }, { &m->sigmoid, "vision.sigmoid" },
        { &m->paste, "vision.paste_masks" },
    };
    loom_status st = LOOM_OK;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && st == LOOM_OK; i++)
        st = model_find_op(m->det.cls, ops[i].name, ops[i].op);
    return st;
}

_Static_assert(offsetof(maskrcnn_model, det) == 0, "fasterrcnn_create: the detector is the state's first member");

/* The Faster R-CNN with the mask branch. */
static const fasterrcnn_extension mask_branch = {
    .state_dict = "MaskRCNN", .state_size = sizeof(maskrcnn_model), .load = load_mask_branch,
    .find_ops = find_mask_ops, .destroy = maskrcnn_destroy,
};

static loom_status generic_create(const loom_object_args *args, void **state_out)
{
    return fasterrcnn_generic_create(args, state_out, &mask_branch);
}

static loom_status v1_create(const loom_object_args *args, void **state_out)
{
    return fasterrcnn_resnet50_create(args, state_out, 0, &mask_branch);
}

static loom_status v2_create(const loom_object_args *args, void **state_out)
{
    return fasterrcnn_resnet50_create(args, state_out, 1, &mask_branch);
}

MODEL_GENERIC_CLASS(maskrcnn, generic_attrs, generic_create, maskrcnn_destroy,
                    "torchvision.models.detection.MaskRCNN on a ResNet-FPN backbone from a safetensors state_dict, "
                    "the body's architecture, the FPN's width and the head kind (v1, v2: the mask head's "
                    "BatchNorm2d too) as attributes; method vision.maskrcnn")
MODEL_GENERIC_CLASS(maskrcnn_resnet50_fpn, maskrcnn_resnet50_fpn_attrs, v1_create, maskrcnn_destroy,
                    "torchvision.models.detection.maskrcnn_resnet50_fpn from a safetensors state_dict (also with "
                    "the mask head's pre-0.8 key names mask_fcn1..4); method vision.maskrcnn_resnet50_fpn")
MODEL_GENERIC_CLASS(maskrcnn_resnet50_fpn_v2, maskrcnn_resnet50_fpn_v2_attrs, v2_create, maskrcnn_destroy,
                    "torchvision.models.detection.maskrcnn_resnet50_fpn_v2 from a safetensors state_dict; method "
                    "vision.maskrcnn_resnet50_fpn_v2")
