/* SPDX-License-Identifier: BSD-3-Clause */
/*
** maskrcnn_forward.c - the method of the Mask R-CNN classes (maskrcnn.h):
** torchvision's MaskRCNN in eval, the Faster R-CNN's forward up to its
** detections (fasterrcnn_detect), then the mask branch as dispatched ops:
**   vision.multiscale_roi_align  maps 0..3 at 14 x 14, sampling_ratio 2, on
**                                the detections' boxes (resized images)
**   MaskRCNNHeads                vision.conv2d 3x3 + relu (v2: batchnorm folded)
**   MaskRCNNPredictor            vision.conv_transpose2d 2x2 stride 2,
**                                vision.relu, vision.conv2d 1x1 to the classes
**   maskrcnn_inference           each detection's label channel, vision.sigmoid
**   transform.postprocess        the boxes back to the original sizes
**                                (fasterrcnn_write_detections) and
**                                vision.paste_masks of each image's masks
**                                into its original size
**
** Input: as the Faster R-CNN classes' (an NCHW batch, or the jagged list).
** Output: boxes, scores, labels and offsets as theirs; masks, the pasted
** probabilities (no threshold): [D, 1, H, W] when every image has the same
** original size, else image b's [K_b, 1, H_b, W_b] flattened one image
** after the other (K_b from offsets, H_b, W_b its original size); and
** mask_probs [D, 1, 28, 28], the label channel's probabilities before
** pasting (an intermediate result).
*/
#include <stdlib.h>
#include <string.h>

#ifdef LOOM_VISION_HAVE_ONEDNN
#include "onednn_net.h"
#endif
#include "maskrcnn.h"

/* The mask logits of every detection: [D, classes, 28, 28]. */
static loom_status mask_logits(loom_call *call, const maskrcnn_model *m, const fasterrcnn_pass *p,
                               loom_tensor **logits)
{
    const rcnn_backbone *bb = &m->det.backbone;
    loom_tensor *maps = NULL;
    const loom_tensor *ms_in[7] = { p->det[0], p->det[3], p->tr[1], p->x[0], p->x[1], p->x[2], p->x[3] };
    const int64_t pooled = MRCNN_POOLED;
    const loom_named_attr ms_attrs[2] = { rcnn_ints_attr("output_size", &pooled, 1),
                                          rcnn_int_attr("sampling_ratio", 2) };
    loom_status st = rcnn_call_op(call, m->det.multiscale, ms_in, 7, &maps, 1, ms_attrs, 2);
    for (int i = 0; i < m->n_mask_convs && st == LOOM_OK; i++) {
        loom_tensor *y = NULL;
        st = rcnn_conv(call, bb, &m->mask_conv[i], maps, NULL, "relu", &y);
        rcnn_free_all(&maps, 1);
        maps = y;
    }
    loom_tensor *up = NULL, *act = NULL;
    if (st == LOOM_OK) {
        int64_t ws[4] = { m->deconv_in, m->dim_reduced, 2, 2 }, bs[1] = { m->dim_reduced };
        loom_tensor tw = model_view(m->deconv_w, 4, ws), tb = model_view(m->deconv_b, 1, bs);
        const loom_tensor *in[3] = { maps, &tw, &tb };
        const int64_t two = 2;
        const loom_named_attr attrs[1] = { rcnn_ints_attr("stride", &two, 1) };
        st = rcnn_call_op(call, m->conv_transpose, in, 3, &up, 1, attrs, 1);
    }
    if (st == LOOM_OK)
        st = rcnn_call_op(call, m->det.relu, (const loom_tensor *const *)&up, 1, &act, 1, NULL, 0);
    if (st == LOOM_OK)
        st = rcnn_conv(call, bb, &m->logits, act, NULL, "none", logits);
    loom_tensor *f[3] = { maps, up, act };
    rcnn_free_all(f, 3);
    return st;
}

/* maskrcnn_inference: sigmoid of each detection's label channel, [D, 1, M, M]. */
static loom_status label_probs(loom_call *call, const maskrcnn_model *m, const loom_tensor *logits,
                               const loom_tensor *labels, loom_tensor **probs)
{
    const int64_t d = logits->shape[0], classes = logits->shape[1], plane = logits->shape[2] * logits->shape[3];
    int64_t shape[4] = { d, 1, logits->shape[2], logits->shape[3] };
    float *picked = malloc((size_t)(d * plane > 0 ? d * plane : 1) * sizeof(float));
    if (picked == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for %lld masks", m->det.cls, (long long)d);
    const float *src = loom_data(logits);
    const int64_t *label = loom_data(labels);
    for (int64_t i = 0; i < d; i++)
        memcpy(picked + i * plane, src + (i * classes + label[i]) * plane, (size_t)plane * sizeof(float));
    loom_tensor view = model_view(picked, 4, shape);
    const loom_tensor *in[1] = { &view };
    loom_status st = rcnn_call_op(call, m->sigmoid, in, 1, probs, 1, NULL, 0);
    free(picked);
    return st;
}

/* Outputs 4 and 5: each image's masks pasted into its original size, and the probabilities. */
static loom_status write_masks(loom_call *call, const maskrcnn_model *m, const fasterrcnn_pass *p,
                               const loom_tensor *probs)
{
    const int64_t B = p->offsets.shape[0] - 1, M = probs->shape[2], N = probs->shape[3];
    const int64_t *off = loom_data(p->det[3]), *orig = loom_data(&p->sizes);
    loom_tensor *boxes = call->outputs[0];      /* the detections on the original images (written) */
    int same = 1;
    int64_t total = 0;
    for (int64_t b = 0; b < B; b++) {
        same &= orig[2 * b] == orig[0] && orig[2 * b + 1] == orig[1];
        total += (off[b + 1] - off[b]) * orig[2 * b] * orig[2 * b + 1];
    }
    loom_tensor *masks = NULL;
    const int64_t d = off[B], four[4] = { d, 1, orig[0], orig[1] }, flat[1] = { total };
    loom_status st = same ? pk_host->alloc_output(call, 4, LOOM_DTYPE_F32, 4, four, &masks)
                          : pk_host->alloc_output(call, 4, LOOM_DTYPE_F32, 1, flat, &masks);
    if (st == LOOM_OK)
        st = rcnn_copy_out(call, 5, probs);
    float *dst = st == LOOM_OK ? loom_data(masks) : NULL;
    for (int64_t b = 0; b < B && st == LOOM_OK; b++) {
        int64_t k = off[b + 1] - off[b], ms[4] = { k, 1, M, N }, bs[2] = { k, 4 };
        if (k == 0)
            continue;
        loom_tensor mv = model_view((const float *)loom_data(probs) + off[b] * M * N, 4, ms);
        loom_tensor bv = model_view((const float *)loom_data(boxes) + off[b] * 4, 2, bs), *pasted = NULL;
        const loom_tensor *in[2] = { &mv, &bv };
        const loom_named_attr attrs[1] = { rcnn_ints_attr("image_size", orig + 2 * b, 2) };
        st = rcnn_call_op(call, m->paste, in, 2, &pasted, 1, attrs, 1);
        if (st == LOOM_OK) {
            const size_t n = (size_t)loom_numel(pasted);
            memcpy(dst, loom_data(pasted), n * sizeof(float));
            dst += n;
        }
        rcnn_free_all(&pasted, 1);
    }
    return st;
}

static loom_status maskrcnn_run(loom_call *call)
{
    maskrcnn_model *m = call->object;
    pthread_mutex_lock(&m->det.lock);
    fasterrcnn_pass p;
    loom_tensor *logits = NULL, *probs = NULL;
    loom_status st = fasterrcnn_detect(call, &m->det, &p);
    if (st == LOOM_OK)
        st = mask_logits(call, m, &p, &logits);
    if (st == LOOM_OK)
        st = label_probs(call, m, logits, p.det[2], &probs);
    rcnn_free_all(&logits, 1);
    if (st == LOOM_OK)
        st = fasterrcnn_write_detections(call, &m->det, &p);
    if (st == LOOM_OK)
        st = write_masks(call, m, &p, probs);
    rcnn_free_all(&probs, 1);
    fasterrcnn_pass_free(&p);
    pthread_mutex_unlock(&m->det.lock);
    return st;
}

/* ------------------------------------------------------------ schemas */

static const loom_arg_def mrcnn_outputs[] = {
    { .name = "boxes", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[D, 4] xyxy detections on the original images, image after image" },
    { .name = "scores", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 1, .doc = "[D] decreasing per image" },
    { .name = "labels", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1, .doc = "[D] classes 1..classes-1" },
    { .name = "offsets", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64), .ndim = 1,
      .doc = "[B+1] image b's detections are rows offsets[b]..offsets[b+1]" },
    { .name = "masks", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "the probabilities pasted into the original image: [D, 1, H, W] when every image has the same size, "
             "else each image's [K_b, 1, H_b, W_b] flattened one after the other" },
    { .name = "mask_probs", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[D, 1, 28, 28] each detection's label-channel probabilities before pasting" },
};

#define MRCNN_SCHEMA_(id)                                                                          \
    PK_SCHEMA(vision_##id##_schema, "vision." #id, 1,                                              \
              "torchvision.models.detection " #id " forward (eval): detections and masks of a list of images", \
              PK_INPUTS(fasterrcnn_inputs), PK_OUTPUTS(mrcnn_outputs), .object_class = "vision." #id);
VISION_MASKRCNNS(MRCNN_SCHEMA_)

#define MRCNN_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_I64))
#define MRCNN_KERNEL_(id) PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", MRCNN_DTYPES, maskrcnn_run),
const loom_kernel_desc maskrcnn_kernels[3] = { VISION_MASKRCNNS(MRCNN_KERNEL_) };
#ifdef LOOM_VISION_HAVE_ONEDNN
/* The same with the backbone as one oneDNN plan (rcnn_backbone.h). */
#define MRCNN_ONEDNN_KERNEL_(id)                                                                   \
    PK_KERNEL(vision_##id##_schema, "onednn", LOOM_DEVICE_CPU, "onednn:backbone-plan", MRCNN_DTYPES, \
              maskrcnn_run, .supports = onednn_model_supports),
const loom_kernel_desc maskrcnn_onednn_kernels[3] = { VISION_MASKRCNNS(MRCNN_ONEDNN_KERNEL_) };
#endif
