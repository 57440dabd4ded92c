/*
** boxes_schemas.c - the definitions of the box ops of the vision pack:
** nms, batched_nms, the pairwise IoU family, the IoU losses and the box
** utilities of torchvision.ops. Compiled into vision.so and vision-cuda.so
** alike so both packs define identical schemas. Input, output and
** attribute names are torchvision's argument names.
**
** dtypes follow torchvision's CPU support: nms and batched_nms run on
** f32/f64 only (torchvision's nms kernel refuses half); the pure-torch ops
** also take f16. The IoU family, the losses and box_area return f32 for
** f16 boxes (torchvision's _upcast / _upcast_non_float); box_convert and
** clip_boxes_to_image keep the input dtype.
*/
#include "boxes.h"

#define I64 LOOM_DTYPE_BIT(LOOM_DTYPE_I64)
#define COUNT(a) ((uint32_t)(sizeof a / sizeof a[0]))

/* ------------------------------------------------------------- arguments */

static const loom_arg_def nms_in[] = {
    { .name = "boxes", .dtypes = VISION_F32_F64, .ndim = 2, .doc = "[N, 4] (x1, y1, x2, y2)" },
    { .name = "scores", .dtypes = VISION_F32_F64, .ndim = 1, .doc = "[N], same dtype as boxes" },
};
static const loom_arg_def batched_nms_in[] = {
    { .name = "boxes", .dtypes = VISION_F32_F64, .ndim = 2, .doc = "[N, 4] (x1, y1, x2, y2)" },
    { .name = "scores", .dtypes = VISION_F32_F64, .ndim = 1, .doc = "[N], same dtype as boxes" },
    { .name = "idxs", .dtypes = I64, .ndim = 1, .doc = "[N] category of each box" },
};
static const loom_arg_def pair_in[] = {
    { .name = "boxes1", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[N, 4]" },
    { .name = "boxes2", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[M, 4], same dtype as boxes1" },
};
static const loom_arg_def loss_in[] = {
    { .name = "boxes1", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "[.., 4] (x1, y1, x2, y2)" },
    { .name = "boxes2", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "same shape and dtype as boxes1" },
};
static const loom_arg_def boxes_in[] = {
    { .name = "boxes", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "[.., 4]" },
};
static const loom_arg_def small_in[] = {
    { .name = "boxes", .dtypes = VISION_FLOATS, .ndim = 2, .doc = "[N, 4] (x1, y1, x2, y2)" },
};

static const loom_arg_def index_out[] = {
    { .name = "output", .dtypes = I64, .ndim = 1, .doc = "[K] indices of the kept boxes" },
};
static const loom_arg_def matrix_out[] = {
    { .name = "output", .dtypes = VISION_F32_F64, .ndim = 2, .doc = "[N, M] (f32 for f16 boxes)" },
};
static const loom_arg_def loss_out[] = {
    { .name = "output", .dtypes = VISION_F32_F64, .ndim = -1,
      .doc = "[..] for 'none', else a scalar (f32 for f16 boxes)" },
};
static const loom_arg_def boxes_out[] = {
    { .name = "output", .dtypes = VISION_FLOATS, .ndim = -1, .doc = "same shape and dtype as boxes" },
};
static const loom_arg_def area_out[] = {
    { .name = "output", .dtypes = VISION_F32_F64, .ndim = -1, .doc = "[..] (f32 for f16 boxes)" },
};

/* ------------------------------------------------------------ attributes */

/* Value constraints (checked by the core): thresholds and sizes finite
** (a NaN or inf threshold silently keeps or drops everything), eps finite
** and >= 0, image sizes >= 0. */

static const loom_attr_def nms_attrs[] = {
    { .name = "iou_threshold", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,
      .dflt = LOOM_DEFAULT_NONE, .doc = "discard boxes with IoU > iou_threshold" },
};
static const loom_attr_def iou_attrs[] = {
    { .name = "fmt", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("xyxy"),
      .doc = "box format: xyxy, xywh or cxcywh" },
};
static const loom_attr_def eps_attrs[] = {
    { .name = "eps", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_FLOAT(1e-7), .doc = "added to the enclosing box's squared diagonal" },
};
static const loom_attr_def loss_attrs[] = {
    { .name = "reduction", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("none"),
      .doc = "none, mean or sum" },
    { .name = "eps", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_FLOAT(1e-7), .doc = "small number to prevent division by zero" },
};
static const loom_attr_def convert_attrs[] = {
    { .name = "in_fmt", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_REQUIRED,
      .dflt = LOOM_DEFAULT_NONE, .doc = "xyxy, xywh or cxcywh" },
    { .name = "out_fmt", .type = LOOM_ATTR_STRING, .flags = LOOM_ATTR_REQUIRED,
      .dflt = LOOM_DEFAULT_NONE, .doc = "xyxy, xywh or cxcywh" },
};
static const loom_attr_def clip_attrs[] = {
    { .name = "size", .type = LOOM_ATTR_INTS, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_NONNEG,
      .dflt = LOOM_DEFAULT_NONE, .doc = "[height, width] of the image" },
};
static const loom_attr_def small_attrs[] = {
    { .name = "min_size", .type = LOOM_ATTR_FLOAT, .flags = LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE,
      .dflt = LOOM_DEFAULT_NONE, .doc = "keep boxes whose width and height are >= min_size" },
};

/* ------------------------------------------------------------------ cost */

/* bytes of boxes and scores read; the IoU tests depend on the scene, so
** no flop count is declared */
static void nms_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *b = call->inputs[0];
    (void)flops;
    if (b == NULL || b->ndim < 1)
        return;
    double n = (double)b->shape[0], es = (double)vision_host->dtype_size(loom_tensor_dtype_of(b));
    *bytes = 5.0 * n * es;
}

static void pair_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    if (a == NULL || b == NULL || a->ndim < 1 || b->ndim < 1)
        return;
    double n = (double)a->shape[0], m = (double)b->shape[0];
    double es = (double)vision_host->dtype_size(loom_tensor_dtype_of(a));
    *flops = 16.0 * n * m;
    *bytes = 4.0 * (n + m) * es + n * m * (es < 4.0 ? 4.0 : es);
}

/* ---------------------------------------------------------------- schemas */

#define S(var, NAME, DOC, IN, OUT, ATTRS, N_ATTRS, COST)                            \
    const loom_op_schema var = {                                                    \
        .struct_size = sizeof(loom_op_schema), .name = NAME, .version = 1,          \
        .doc = DOC, .n_inputs = COUNT(IN), .inputs = IN, .n_outputs = 1,            \
        .outputs = OUT, .n_attrs = N_ATTRS, .attrs = ATTRS, .cost = COST }

S(vision_nms_schema, "vision.nms",
  "torchvision.ops.nms: indices of the boxes kept by greedy IoU suppression, by decreasing score",
  nms_in, index_out, nms_attrs, COUNT(nms_attrs), nms_cost);
S(vision_batched_nms_schema, "vision.batched_nms",
  "torchvision.ops.batched_nms: nms within each category of idxs, indices by decreasing score",
  batched_nms_in, index_out, nms_attrs, COUNT(nms_attrs), nms_cost);
S(vision_box_iou_schema, "vision.box_iou",
  "torchvision.ops.box_iou: pairwise IoU [N, M]", pair_in, matrix_out, iou_attrs, COUNT(iou_attrs), pair_cost);
S(vision_generalized_box_iou_schema, "vision.generalized_box_iou",
  "torchvision.ops.generalized_box_iou: pairwise GIoU [N, M] of xyxy boxes",
  pair_in, matrix_out, NULL, 0, pair_cost);
S(vision_distance_box_iou_schema, "vision.distance_box_iou",
  "torchvision.ops.distance_box_iou: pairwise DIoU [N, M] of xyxy boxes",
  pair_in, matrix_out, eps_attrs, COUNT(eps_attrs), pair_cost);
S(vision_complete_box_iou_schema, "vision.complete_box_iou",
  "torchvision.ops.complete_box_iou: pairwise CIoU [N, M] of xyxy boxes",
  pair_in, matrix_out, eps_attrs, COUNT(eps_attrs), pair_cost);
S(vision_generalized_box_iou_loss_schema, "vision.generalized_box_iou_loss",
  "torchvision.ops.generalized_box_iou_loss: 1 - GIoU of paired boxes, reduced",
  loss_in, loss_out, loss_attrs, COUNT(loss_attrs), NULL);
S(vision_distance_box_iou_loss_schema, "vision.distance_box_iou_loss",
  "torchvision.ops.distance_box_iou_loss: 1 - DIoU of paired boxes, reduced",
  loss_in, loss_out, loss_attrs, COUNT(loss_attrs), NULL);
S(vision_complete_box_iou_loss_schema, "vision.complete_box_iou_loss",
  "torchvision.ops.complete_box_iou_loss: 1 - CIoU of paired boxes, reduced",
  loss_in, loss_out, loss_attrs, COUNT(loss_attrs), NULL);
S(vision_box_convert_schema, "vision.box_convert",
  "torchvision.ops.box_convert between xyxy, xywh and cxcywh", boxes_in, boxes_out, convert_attrs, COUNT(convert_attrs), NULL);
S(vision_box_area_schema, "vision.box_area",
  "torchvision.ops.box_area of [.., 4] boxes", boxes_in, area_out, iou_attrs, COUNT(iou_attrs), NULL);
S(vision_clip_boxes_to_image_schema, "vision.clip_boxes_to_image",
  "torchvision.ops.clip_boxes_to_image: clamp x to [0, width] and y to [0, height]",
  boxes_in, boxes_out, clip_attrs, COUNT(clip_attrs), NULL);
S(vision_remove_small_boxes_schema, "vision.remove_small_boxes",
  "torchvision.ops.remove_small_boxes: indices of boxes with both sides >= min_size",
  small_in, index_out, small_attrs, COUNT(small_attrs), NULL);

const loom_op_schema *const vision_boxes_ops[] = {
    &vision_nms_schema,
    &vision_batched_nms_schema,
    &vision_box_iou_schema,
    &vision_generalized_box_iou_schema,
    &vision_distance_box_iou_schema,
    &vision_complete_box_iou_schema,
    &vision_generalized_box_iou_loss_schema,
    &vision_distance_box_iou_loss_schema,
    &vision_complete_box_iou_loss_schema,
    &vision_box_convert_schema,
    &vision_box_area_schema,
    &vision_clip_boxes_to_image_schema,
    &vision_remove_small_boxes_schema,
};
const size_t vision_boxes_n_ops = sizeof vision_boxes_ops / sizeof vision_boxes_ops[0];
