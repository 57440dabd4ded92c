/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_schemas.c - the definitions of the RoI ops of the vision pack,
** compiled into vision.so and vision-cuda.so alike so both packs define
** identical schemas.
**
** Names follow torchvision: the forward ops take the arguments of
** torchvision.ops.<op> (input, boxes, output_size, ...), and boxes must be
** the [K, 5] tensor form (batch_index, x1, y1, x2, y2); the backward ops
** take the arguments of the registered torchvision::_<op>_backward, in
** that order. Outputs mirror the registered ops: roi_pool also returns
** argmax and the position-sensitive ops channel_mapping (i32, as
** torchvision's), which the backward ops consume.
**
** dtypes follow torchvision's CPU kernels: roi_align and ps_roi_align (and
** their backwards) take f32, f64 and f16; roi_pool and ps_roi_pool f32 and
** f64 only.
*/
#include <string.h>

#include "roi.h"

#define I32 LOOM_DTYPE_BIT(LOOM_DTYPE_I32)

/* ------------------------------------------------------------- arguments */

static const loom_arg_def align_in[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, C, H, W]" },
    { .name = "boxes", .dtypes = VISION_FLOATS, .ndim = 2,
      .doc = "[K, 5] (batch_index, x1, y1, x2, y2), same dtype as input" },
};
static const loom_arg_def pool_in[] = {
    { .name = "input", .dtypes = PK_F32_F64, .ndim = 4, .doc = "[N, C, H, W]" },
    { .name = "boxes", .dtypes = PK_F32_F64, .ndim = 2,
      .doc = "[K, 5] (batch_index, x1, y1, x2, y2), same dtype as input" },
};
static const loom_arg_def align_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[K, C, PH, PW]" },
};
static const loom_arg_def pool_out[] = {
    { .name = "output", .dtypes = PK_F32_F64, .ndim = 4, .doc = "[K, C, PH, PW]" },
    { .name = "argmax", .dtypes = I32, .ndim = 4,
      .doc = "[K, C, PH, PW] pixel index h * W + w of each maximum in its plane, -1 for an empty bin" },
};
static const loom_arg_def ps_align_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW]" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW] input channel read" },
};
static const loom_arg_def ps_pool_out[] = {
    { .name = "output", .dtypes = PK_F32_F64, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW]" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW] input channel read" },
};

static const loom_arg_def align_bwd_in[] = {
    { .name = "grad", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[K, channels, PH, PW] gradient of output" },
    { .name = "rois", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
};
static const loom_arg_def pool_bwd_in[] = {
    { .name = "grad", .dtypes = PK_F32_F64, .ndim = 4, .doc = "[K, channels, PH, PW] gradient of output" },
    { .name = "rois", .dtypes = PK_F32_F64, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
    { .name = "argmax", .dtypes = I32, .ndim = 4, .doc = "[K, channels, PH, PW] from vision.roi_pool" },
};
static const loom_arg_def ps_align_bwd_in[] = {
    { .name = "grad", .dtypes = VISION_FLOATS, .ndim = 4,
      .doc = "[K, channels / (PH * PW), PH, PW] gradient of output" },
    { .name = "rois", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "from vision.ps_roi_align" },
};
static const loom_arg_def ps_pool_bwd_in[] = {
    { .name = "grad", .dtypes = PK_F32_F64, .ndim = 4,
      .doc = "[K, channels / (PH * PW), PH, PW] gradient of output" },
    { .name = "rois", .dtypes = PK_F32_F64, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "from vision.ps_roi_pool" },
};
static const loom_arg_def grad_input_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4,
      .doc = "[batch_size, channels, height, width] gradient of input" },
};

/* ------------------------------------------------------------ attributes */

PK_ATTR_TABLE(roi_align, ROI_ALIGN_ATTRS);
PK_ATTR_TABLE(roi_pool, ROI_POOL_ATTRS);
PK_ATTR_TABLE(ps_roi_align, PS_ROI_ALIGN_ATTRS);
PK_ATTR_TABLE(roi_align_backward, ROI_ALIGN_BACKWARD_ATTRS);
PK_ATTR_TABLE(roi_pool_backward, ROI_POOL_BACKWARD_ATTRS);
PK_ATTR_TABLE(ps_roi_align_backward, PS_ROI_ALIGN_BACKWARD_ATTRS);

/* ------------------------------------------------------------------ cost */

/* Bytes: the outputs plus what the bins read (about one value per output
** element and sample); flops: bilinear roi_align reads 4 values per sample
** with 2 flops each, at the usual 4 samples per bin. */
static void roi_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *out = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (out == NULL)
        return;
    double n = (double)loom_numel(out), es = (double)pk_host->dtype_size(loom_tensor_dtype_of(out));
    *flops = 32.0 * n;
    *bytes = 2.0 * n * es;
}

/* ---------------------------------------------------------------- schemas */

#define ROI_SCHEMA(VAR, NAME, DOC, IN, OUT, ATTRS)                                                 \
    PK_SCHEMA(VAR, NAME, 1, DOC, PK_INPUTS(IN), PK_OUTPUTS(OUT), PK_ATTRS(ATTRS), .cost = roi_cost)

ROI_SCHEMA(roi_align_schema, "vision.roi_align",
           "torchvision.ops.roi_align: average of bilinear samples per bin (Mask R-CNN)",
           align_in, align_out, roi_align_attrs);
ROI_SCHEMA(roi_pool_schema, "vision.roi_pool",
           "torchvision.ops.roi_pool: max per bin (Fast R-CNN), with the argmax the backward needs",
           pool_in, pool_out, roi_pool_attrs);
ROI_SCHEMA(ps_roi_align_schema, "vision.ps_roi_align",
           "torchvision.ops.ps_roi_align: position-sensitive roi_align (R-FCN), aligned sampling",
           align_in, ps_align_out, ps_roi_align_attrs);
ROI_SCHEMA(ps_roi_pool_schema, "vision.ps_roi_pool",
           "torchvision.ops.ps_roi_pool: position-sensitive average per bin (R-FCN)",
           pool_in, ps_pool_out, roi_pool_attrs);
ROI_SCHEMA(roi_align_backward_schema, "vision.roi_align_backward",
           "torchvision::_roi_align_backward: gradient of roi_align with respect to its input",
           align_bwd_in, grad_input_out, roi_align_backward_attrs);
ROI_SCHEMA(roi_pool_backward_schema, "vision.roi_pool_backward",
           "torchvision::_roi_pool_backward: gradient of roi_pool, routed through argmax",
           pool_bwd_in, grad_input_out, roi_pool_backward_attrs);
ROI_SCHEMA(ps_roi_align_backward_schema, "vision.ps_roi_align_backward",
           "torchvision::_ps_roi_align_backward: gradient of ps_roi_align with respect to its input",
           ps_align_bwd_in, grad_input_out, ps_roi_align_backward_attrs);
ROI_SCHEMA(ps_roi_pool_backward_schema, "vision.ps_roi_pool_backward",
           "torchvision::_ps_roi_pool_backward: gradient of ps_roi_pool with respect to its input",
           ps_pool_bwd_in, grad_input_out, roi_pool_backward_attrs);

PK_OPS_DEFINE(vision_roi_ops, VISION_ROI_OPS);

const roi_id roi_ids[8] = {
    { ROI_ALIGN, 0 }, { ROI_POOL, 0 }, { PS_ROI_ALIGN, 0 }, { PS_ROI_POOL, 0 },
    { ROI_ALIGN, 1 }, { ROI_POOL, 1 }, { PS_ROI_ALIGN, 1 }, { PS_ROI_POOL, 1 },
};

void roi_kind_of(const loom_call *call, roi_kind *kind, int *backward)
{
    const loom_op_schema *schema = call->schema;
    if (LOOM_HAS_MEMBER(call, loom_call, kernel) && call->kernel != NULL && call->kernel->user != NULL) {
        const roi_id *id = call->kernel->user;
        *kind = id->kind;
        *backward = id->backward;
        return;
    }
    /* call->schema is the definition registered first, which may come from
    ** the other vision pack: compare names */
    for (size_t i = 0; i < PK_COUNT(vision_roi_ops); i++)
        if (schema == vision_roi_ops[i] || strcmp(schema->name, vision_roi_ops[i]->name) == 0) {
            *kind = (roi_kind)(i % 4);
            *backward = i >= 4;
            return;
        }
    *kind = ROI_ALIGN;
    *backward = 0;
}
