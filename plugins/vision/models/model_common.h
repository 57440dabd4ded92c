/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_common.h - what every model class of the models module shares:
**   - the loader: the keys of a torchvision state_dict checked one by one
**     against the architecture (dtype and shape, a message naming the key
**     and both shapes), every key of the file accounted for (an unexpected
**     one is refused by name), convolutions with their BatchNorm2d folded
**     in at create, and the weight entry named by the `weights` attribute;
**   - the forward's calls of the layer ops (host->op_call) on the model's
**     activation buffers, which are planned once per input shape.
*/
#ifndef LOOM_VISION_MODELS_COMMON_H
#define LOOM_VISION_MODELS_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "models.h"
#include "weights_docs.h"

#define MODEL_MAX_KEYS 4096     /* regnet_y_128gf and efficientnet_v2_l: under 2000 keys */

/* The keys the architecture expects, in the order they are checked. */
typedef struct model_key_spec {
    char name[96];
    loom_dtype dtype;
    int32_t ndim;
    int64_t shape[4];
} model_key_spec;

typedef struct model_loader {
    const char *cls;
    const loom_safetensors *st;
    model_key_spec *keys;       /* MODEL_MAX_KEYS */
    int n_keys;
    int64_t num_params;         /* as torchvision counts parameters: no running_* nor num_batches_tracked */
    double bn_eps;              /* the BatchNorm2d eps of the architecture */
    const char *key_prefix;     /* NULL, or put before every key (a detector's body: "backbone.body.") */
    int frozen_bn;              /* 1: a batchnorm's num_batches_tracked may be absent (FrozenBatchNorm2d) */
} model_loader;

/* A loader of st for class cls; LOOM_ENOMEM when its table cannot be made. */
loom_status model_loader_init(model_loader *L, const char *cls, const loom_safetensors *st, double bn_eps);
void model_loader_free(model_loader *L);

/* 1 when the file has the key. */
int model_file_has(const loom_safetensors *st, const char *name);

/* Expects key <prefix><suffix> of dtype and shape and fetches it into *out
** (out may be NULL); the message names the key and both shapes. */
loom_status model_expect(model_loader *L, const char *prefix, const char *suffix, loom_dtype dtype, int32_t ndim,
                         const int64_t *shape, const loom_tensor **out);

/* conv <cp>.weight [cout, cin/groups, k, k] (no bias) and BatchNorm2d <bp>
** (weight, bias, running_mean, running_var, num_batches_tracked), folded
** into c's owned weight and bias. c's sizes are set by the caller. */
loom_status model_load_conv_bn(model_loader *L, const char *cp, const char *bp, model_conv *c);

/* A 1x1 conv with bias, not folded (a squeeze-excitation's fc1 / fc2):
** <prefix>.weight [cout, cin, 1, 1] and <prefix>.bias [cout], borrowed. */
loom_status model_load_conv_bias(model_loader *L, const char *prefix, int64_t cin, int64_t cout,
                                 const loom_tensor **weight, const loom_tensor **bias);

/* The classifier nn.Linear <prefix>.weight [classes, features] and .bias:
** the classes come from the file (fine-tuned heads load). */
loom_status model_load_linear_head(model_loader *L, const char *prefix, int64_t features, int64_t *classes,
                                   const loom_tensor **weight, const loom_tensor **bias);


/* create of every class: the checks of args (a weights file), a zeroed
** model of `size` bytes starting with a model_base for arch, load(L, m)
** (the family's keys; sets base.features), then the head <head>.weight /
** .bias, the refusal of unexpected keys, the ops and the weight entry;
** destroy(m) on any failure. */
loom_status model_create(const loom_object_args *args, void **state_out, const void *arch, size_t size,
                         double bn_eps, const char *head, loom_status (*load)(model_loader *L, void *model),
                         void (*destroy)(void *model));
/* Frees what model_create's base holds (buffers, lock); not the model. */
void model_base_fini(model_base *b);

/* Refuses the first key of the file the architecture does not have. */
loom_status model_check_no_unexpected(const model_loader *L);

/* The weight entry named by the class's `weights` attribute (its only one,
** attrs[0]), checked against the file's classes and num_params; *entry is
** NULL when none is named. */
loom_status model_entry_of(const loom_object_args *args, int64_t classes, int64_t num_params,
                           const struct model_weights_entry **entry);

/* The op `name` the forward calls, or LOOM_ENOENT naming the class. */
loom_status model_find_op(const char *cls, const char *name, const loom_op **out);

void model_conv_free(model_conv *c);
model_conv model_conv_of(int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t groups);

/* ------------------------------------------------------------- forward */

/* A feature map in a model's buffer: [n, c, h, w]. */
typedef struct model_fmap {
    float *data;
    int64_t shape[4];
} model_fmap;

static inline int64_t model_out_size(int64_t in, int64_t k, int64_t stride, int64_t pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

/* A compact f32 CPU tensor over data with the given shape (kept by caller). */
loom_tensor model_view(const float *data, int32_t ndim, int64_t *shape);

/* out = act(conv c of in + residual) through vision.conv2d (conv2d: its
** op); out->shape is set. act: "none", "relu", "silu". */
loom_status model_conv2d(loom_call *call, const loom_op *conv2d, const model_conv *c, const model_fmap *in,
                         model_fmap *out, const model_fmap *residual, const char *act);

/* A forward written once for both of its runs: with plan == NULL it calls
** the ops; with plan != NULL (a dry run at the first call of an input
** shape) each step only sets its output's shape and records the floats its
** buffer role needs (model_need). */
typedef struct model_walk {
    loom_call *call;
    const loom_op *conv2d;
    size_t *plan;
} model_walk;

/* One conv step of a walk: model_conv2d (residual_after: ..._residual_after)
** or, dry, out's shape and role's size. */
loom_status model_walk_conv(const model_walk *W, const model_conv *c, const model_fmap *in, model_fmap *out,
                            int role, const model_fmap *residual, const char *act, int residual_after);

/* max_pool2d(kernel 3, stride 2, padding 1), the stems' pool (ResNet,
** ShuffleNetV2); out->shape is set. */
loom_status model_max_pool_3s2(loom_call *call, const loom_op *max_pool, const model_fmap *in, model_fmap *out);

/* The classifier: adaptive_avg_pool2d(in, 1) into pooled ([n, features]
** floats), then linear into logits. */
loom_status model_pool_linear(loom_call *call, const loom_op *avg_pool, const loom_op *linear, const model_fmap *in,
                              float *pooled, const float *weight, const float *bias, int64_t classes,
                              loom_tensor *logits);

/* In-place squeeze-excitation of x through vision.squeeze_excitation
** (se: its op; fc weights [S, C, 1, 1] / [C, S, 1, 1] borrowed from the
** mapping); act: "relu" or "silu", the scale sigmoid. */
loom_status model_squeeze_excitation(loom_call *call, const loom_op *se, model_fmap *x, int64_t squeeze,
                                     const float *w1, const float *b1, const float *w2, const float *b2,
                                     const char *act);

/* The checks of a model method's input (f32 [N, 3, H, W], N, H, W in
** [1, 65536]) and its logits output [N, classes]. */
loom_status model_check_input(loom_call *call, int64_t classes, loom_tensor **out);

/* The definition of a model's method op vision.<id> (its input and output
** documented once, model_ops.c). */
extern const loom_arg_def model_method_inputs[1], model_method_outputs[1];
#define MODEL_SCHEMA(id)                                                                           \
    PK_SCHEMA(vision_##id##_schema, "vision." #id, 1,                                              \
              "torchvision.models." #id " forward: logits of an NCHW batch",                       \
              .n_inputs = 1, .inputs = model_method_inputs, .n_outputs = 1,                        \
              .outputs = model_method_outputs, .object_class = "vision." #id);

/* The classes of a family LIST (X(R, id) rows, models.h): vision.<id>,
** made by <prefix>_create and freed by <prefix>_destroy, with the one
** attribute `weights` (a weight entry the file must fit), documented with
** the class's entries and their metadata (weights_docs.h). */
#define MODEL_CLASS_ROW_(prefix, id)                                                               \
    static const loom_attr_def id##_attrs[] = {                                                    \
        { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,                   \
          .doc = VISION_WEIGHTS_DOC_##id },                                                         \
    };                                                                                             \
    const loom_object_class vision_##id##_class = {                                                \
        .struct_size = sizeof(loom_object_class), .name = "vision." #id,                           \
        .doc = "torchvision.models." #id " from a safetensors state_dict; method vision." #id,    \
        PK_ATTRS(id##_attrs), .create = prefix##_create, .destroy = prefix##_destroy,             \
    };
#define MODEL_CLASSES(LIST, prefix) LIST(MODEL_CLASS_ROW_, prefix)

/* attrs[1] of the classes whose onednn kernel is a oneDNN plan of the
** whole network (the ResNet family, resnet_onednn.c): how its 3x3
** stride-1 ungrouped convolutions run. "winograd" asks oneDNN for its
** Winograd kernels (F(2x2, 3x3) or F(4x4, 3x3), oneDNN's pick per shape:
** fewer multiplications, resnet50 10-12% faster on AVX-512), each conv
** falling back to the direct one where oneDNN has none for it (its post-ops,
** an ISA below AVX-512). Winograd weights are 1.8x (F(2x2)) to 4x (F(4x4))
** the plain ones, and the plain weights of those convs stay resident
** besides (other shapes and the cpu kernel reorder from them: oneDNN
** cannot reorder out of a Winograd layout): resnet50's peak RSS goes from
** 170 to 232 MB at batch 1 and from 213 to 358 MB at batch 8, which is why
** it is not the default. The results differ from the direct kernels' by
** rounding (the transforms' sums: logits within 2e-6 of the largest). */
#define MODEL_CONV_ALGORITHM_ATTR                                                                  \
    { .name = "conv_algorithm", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_STRING("direct"),   \
      .doc = "the onednn plan's 3x3 stride-1 convolutions: 'direct' (oneDNN's direct kernels, the "   \
             "weights held once) or 'winograd' (oneDNN's Winograd kernels where it has them: "        \
             "faster, with 2.8x to 5x those convs' weights resident); other backends ignore it" }

/* MODEL_CLASS_ROW_ with the attribute conv_algorithm as attrs[1]. */
#define MODEL_PLAN_CLASS_ROW_(prefix, id)                                                          \
    static const loom_attr_def id##_attrs[] = {                                                    \
        { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,                   \
          .doc = VISION_WEIGHTS_DOC_##id },                                                         \
        MODEL_CONV_ALGORITHM_ATTR,                                                                 \
    };                                                                                             \
    const loom_object_class vision_##id##_class = {                                                \
        .struct_size = sizeof(loom_object_class), .name = "vision." #id,                           \
        .doc = "torchvision.models." #id " from a safetensors state_dict; method vision." #id,    \
        PK_ATTRS(id##_attrs), .create = prefix##_create, .destroy = prefix##_destroy,             \
    };

/* The value of conv_algorithm (attrs[at]): *winograd 1 for "winograd", 0
** for "direct" or unset; LOOM_EINVAL naming the attribute otherwise. */
loom_status model_conv_algorithm(const loom_object_args *args, int at, int *winograd);

/* The method ops of a family LIST (MODEL_SCHEMA each) and their cpu
** kernels, all run by `run`, in the table `kernels` (models.h declares it). */
#define MODEL_SCHEMA_ROW_(R, id) MODEL_SCHEMA(id)
#define MODEL_KERNEL_ROW_(run, id) PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), run),
#define MODEL_METHODS(LIST, run, kernels)                                                          \
    LIST(MODEL_SCHEMA_ROW_, _)                                                                     \
    const loom_kernel_desc kernels[] = { LIST(MODEL_KERNEL_ROW_, run) };

/* A family's forward, written once for its dry run and its real run
** (model_walk); model is the family's struct. */
typedef loom_status (*model_walk_fn)(const model_walk *W, const void *model, const loom_tensor *x,
                                     loom_tensor *logits);

/* The run of every method op: the input checked, the logits allocated,
** then under the model's lock a dry walk sizing n_bufs buffer roles, the
** buffers fitted, and the walk. */
loom_status model_run(loom_call *call, model_base *b, model_walk_fn walk, int n_bufs);

/* The walk's last step: the classifier (model_pool_linear of b's head)
** on in, the pooled features in buffer role `role`; dry, its size. */
loom_status model_walk_head(const model_walk *W, const model_base *b, const model_fmap *in, int role,
                            loom_tensor *logits);

/* A squeeze-excitation step of a walk (model_squeeze_excitation through
** b's op; nothing in a dry run: it works in place). */
loom_status model_walk_se(const model_walk *W, const model_base *b, model_fmap *x, int64_t squeeze,
                          const float *w1, const float *b1, const float *w2, const float *b2, const char *act);

/* Grows the buffers to floats[0..n_bufs) for input [n, ., h, w]. */
loom_status model_buffers_fit(model_buffers *b, int n_bufs, const size_t *floats, int64_t n, int64_t h, int64_t w,
                              const char *cls);
void model_buffers_free(model_buffers *b);

/* need[role] = max(need[role], n * c * h * w). */
static inline void model_need(size_t *need, int role, int64_t n, int64_t c, int64_t h, int64_t w)
{
    size_t v = (size_t)(n * c * h * w);
    if (v > need[role])
        need[role] = v;
}

#endif /* LOOM_VISION_MODELS_COMMON_H */
