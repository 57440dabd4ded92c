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
#define COUNT(a) ((uint32_t)(sizeof a / sizeof a[0]))

/* ------------------------------------------------------------- arguments */

static const loom_arg_def align_in[] = {
    { .name = "input", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[N, C, H, W]" },
    { .name = "boxes", .dtypes = VISION_FLOATS, .ndim = 2,
      .doc = "[K, 5] (batch_index, x1, y1, x2, y2), same dtype as input" },
};
static const loom_arg_def pool_in[] = {
    { .name = "input", .dtypes = VISION_F32_F64, .ndim = 4, .doc = "[N, C, H, W]" },
    { .name = "boxes", .dtypes = VISION_F32_F64, .ndim = 2,
      .doc = "[K, 5] (batch_index, x1, y1, x2, y2), same dtype as input" },
};
static const loom_arg_def align_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[K, C, PH, PW]" },
};
static const loom_arg_def pool_out[] = {
    { .name = "output", .dtypes = VISION_F32_F64, .ndim = 4, .doc = "[K, C, PH, PW]" },
    { .name = "argmax", .dtypes = I32, .ndim = 4,
      .doc = "[K, C, PH, PW] pixel index h * W + w of each maximum in its plane, -1 for an empty bin" },
};
static const loom_arg_def ps_align_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW]" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW] input channel read" },
};
static const loom_arg_def ps_pool_out[] = {
    { .name = "output", .dtypes = VISION_F32_F64, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW]" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "[K, C / (PH * PW), PH, PW] input channel read" },
};

static const loom_arg_def align_bwd_in[] = {
    { .name = "grad", .dtypes = VISION_FLOATS, .ndim = 4, .doc = "[K, channels, PH, PW] gradient of output" },
    { .name = "rois", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
};
static const loom_arg_def pool_bwd_in[] = {
    { .name = "grad", .dtypes = VISION_F32_F64, .ndim = 4, .doc = "[K, channels, PH, PW] gradient of output" },
    { .name = "rois", .dtypes = VISION_F32_F64, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
    { .name = "argmax", .dtypes = I32, .ndim = 4, .doc = "[K, channels, PH, PW] from vision.roi_pool" },
};
static const loom_arg_def ps_align_bwd_in[] = {
    { .name = "grad", .dtypes = VISION_FLOATS, .ndim = 4,
      .doc = "[K, channels / (PH * PW), PH, PW] gradient of output" },
    { .name = "rois", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "from vision.ps_roi_align" },
};
static const loom_arg_def ps_pool_bwd_in[] = {
    { .name = "grad", .dtypes = VISION_F32_F64, .ndim = 4,
      .doc = "[K, channels / (PH * PW), PH, PW] gradient of output" },
    { .name = "rois", .dtypes = VISION_F32_F64, .ndim = 2, .doc = "[K, 5], same dtype as grad" },
    { .name = "channel_mapping", .dtypes = I32, .ndim = 4, .doc = "from vision.ps_roi_pool" },
};
static const loom_arg_def grad_input_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = 4,
      .doc = "[batch_size, channels, height, width] gradient of input" },
};

/* ------------------------------------------------------------ attributes */

/* Value constraints (checked by the core): bins and sizes are counts, the
** scale maps box coordinates to the map and must be finite and > 0 (the
** kernels also refuse rois whose scaled coordinates overflow). No flag on
** sampling_ratio: torchvision reads <= 0 as adaptive. */
#define OUTPUT_SIZE { .name = "output_size", .type = LOOM_ATTR_INTS, \
    .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_POSITIVE, \
    .dflt = LOOM_DEFAULT_NONE, .doc = "[PH, PW], or [S] for S x S" }
#define SPATIAL_SCALE(doc_) { .name = "spatial_scale", .type = LOOM_ATTR_FLOAT, \
    .flags = LOOM_ATTR_FINITE | LOOM_ATTR_POSITIVE, .dflt = LOOM_DEFAULT_FLOAT(1.0), .doc = doc_ }
#define SAMPLING_RATIO { .name = "sampling_ratio", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_INT(-1), \
    .doc = "samples per bin side; <= 0: adaptive, ceil(roi_size / output_size)" }
#define ALIGNED { .name = "aligned", .type = LOOM_ATTR_BOOL, .dflt = LOOM_DEFAULT_BOOL(0), \
    .doc = "shift the box by -0.5 pixel (pixel-centre alignment)" }
#define REQ_INT(n, flags_, doc_) { .name = n, .type = LOOM_ATTR_INT, .flags = LOOM_ATTR_REQUIRED | (flags_), \
    .dflt = LOOM_DEFAULT_NONE, .doc = doc_ }
#define POS LOOM_ATTR_POSITIVE
#define NNEG LOOM_ATTR_NONNEG
#define SCALE_DOC "box coordinates times spatial_scale are feature-map coordinates"

static const loom_attr_def align_attrs[] = { OUTPUT_SIZE, SPATIAL_SCALE(SCALE_DOC), SAMPLING_RATIO, ALIGNED };
static const loom_attr_def pool_attrs[] = { OUTPUT_SIZE, SPATIAL_SCALE(SCALE_DOC) };
static const loom_attr_def ps_align_attrs[] = { OUTPUT_SIZE, SPATIAL_SCALE(SCALE_DOC), SAMPLING_RATIO };

static const loom_attr_def align_bwd_attrs[] = {
    SPATIAL_SCALE(SCALE_DOC),
    REQ_INT("pooled_height", POS, "PH"), REQ_INT("pooled_width", POS, "PW"),
    REQ_INT("batch_size", NNEG, "N of the input"), REQ_INT("channels", NNEG, "C of the input"),
    REQ_INT("height", NNEG, "H of the input"), REQ_INT("width", NNEG, "W of the input"),
    SAMPLING_RATIO, ALIGNED,
};
static const loom_attr_def pool_bwd_attrs[] = {
    SPATIAL_SCALE(SCALE_DOC),
    REQ_INT("pooled_height", POS, "PH"), REQ_INT("pooled_width", POS, "PW"),
    REQ_INT("batch_size", NNEG, "N of the input"), REQ_INT("channels", NNEG, "C of the input"),
    REQ_INT("height", NNEG, "H of the input"), REQ_INT("width", NNEG, "W of the input"),
};
static const loom_attr_def ps_align_bwd_attrs[] = {
    SPATIAL_SCALE(SCALE_DOC),
    REQ_INT("pooled_height", POS, "PH"), REQ_INT("pooled_width", POS, "PW"),
    SAMPLING_RATIO,
    REQ_INT("batch_size", NNEG, "N of the input"), REQ_INT("channels", NNEG, "C of the input"),
    REQ_INT("height", NNEG, "H of the input"), REQ_INT("width", NNEG, "W of the input"),
};

/* ------------------------------------------------------------------ cost */

/* Bytes: the outputs plus what the bins read (about one value per output
** element and sample); flops: bilinear roi_align reads 4 values per sample
** with 2 flops each, at the usual 4 samples per bin. */
static void roi_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *out = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (out == NULL)
        return;
    double n = (double)loom_numel(out), es = (double)vision_host->dtype_size(loom_tensor_dtype_of(out));
    *flops = 32.0 * n;
    *bytes = 2.0 * n * es;
}

/* ---------------------------------------------------------------- schemas */

#define SCHEMA(var, name_, doc_, in_, out_, at_)                                       \
    const loom_op_schema var = {                                                         \
        .struct_size = sizeof(loom_op_schema), .name = name_, .version = 1, .doc = doc_, \
        .n_inputs = COUNT(in_), .inputs = in_, .n_outputs = COUNT(out_), .outputs = out_, \
        .n_attrs = COUNT(at_), .attrs = at_, .cost = roi_cost,                             \
    }

SCHEMA(roi_align_schema, "vision.roi_align",
       "torchvision.ops.roi_align: average of bilinear samples per bin (Mask R-CNN)",
       align_in, align_out, align_attrs);
SCHEMA(roi_pool_schema, "vision.roi_pool",
       "torchvision.ops.roi_pool: max per bin (Fast R-CNN), with the argmax the backward needs",
       pool_in, pool_out, pool_attrs);
SCHEMA(ps_roi_align_schema, "vision.ps_roi_align",
       "torchvision.ops.ps_roi_align: position-sensitive roi_align (R-FCN), aligned sampling",
       align_in, ps_align_out, ps_align_attrs);
SCHEMA(ps_roi_pool_schema, "vision.ps_roi_pool",
       "torchvision.ops.ps_roi_pool: position-sensitive average per bin (R-FCN)",
       pool_in, ps_pool_out, pool_attrs);
SCHEMA(roi_align_backward_schema, "vision.roi_align_backward",
       "torchvision::_roi_align_backward: gradient of roi_align with respect to its input",
       align_bwd_in, grad_input_out, align_bwd_attrs);
SCHEMA(roi_pool_backward_schema, "vision.roi_pool_backward",
       "torchvision::_roi_pool_backward: gradient of roi_pool, routed through argmax",
       pool_bwd_in, grad_input_out, pool_bwd_attrs);
SCHEMA(ps_roi_align_backward_schema, "vision.ps_roi_align_backward",
       "torchvision::_ps_roi_align_backward: gradient of ps_roi_align with respect to its input",
       ps_align_bwd_in, grad_input_out, ps_align_bwd_attrs);
SCHEMA(ps_roi_pool_backward_schema, "vision.ps_roi_pool_backward",
       "torchvision::_ps_roi_pool_backward: gradient of ps_roi_pool with respect to its input",
       ps_pool_bwd_in, grad_input_out, pool_bwd_attrs);

const loom_op_schema *const vision_roi_ops[] = {
    &roi_align_schema, &roi_pool_schema, &ps_roi_align_schema, &ps_roi_pool_schema,
    &roi_align_backward_schema, &roi_pool_backward_schema,
    &ps_roi_align_backward_schema, &ps_roi_pool_backward_schema,
};
const size_t vision_roi_n_ops = sizeof vision_roi_ops / sizeof vision_roi_ops[0];

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
    for (size_t i = 0; i < vision_roi_n_ops; i++)
        if (schema == vision_roi_ops[i] || strcmp(schema->name, vision_roi_ops[i]->name) == 0) {
            *kind = (roi_kind)(i % 4);
            *backward = i >= 4;
            return;
        }
    *kind = ROI_ALIGN;
    *backward = 0;
}
