/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transformer_model.h - what the transformer classes (ViT: vit.h, Swin:
** swin.h) share:
**   - transformer_base, the first member of each family's model: its class,
**     classes (the head's rows), num_params, weight entry and lock;
**   - create (transformer_create): a weights file required, the model
**     allocated, the family's architecture (its class's or its attributes),
**     its keys read one by one (state_dict.h), its ops looked up by name,
**     then the weight entry named by the `weights` attribute, which the
**     file must fit; the model destroyed on any failure;
**   - the method's run (transformer_run): the input checked (contiguous f32
**     [N, 3, H, W], then the family's sizes), logits [N, classes]
**     allocated, then under the lock the family's plan for the input's
**     shape and its forward;
**   - a block's linear weights packed once per model for the GEMM
**     (transformer_pack_block), their file pages released;
**   - the definitions of the classes and of the method ops (macros).
*/
#ifndef LOOM_VISION_MODELS_TRANSFORMER_MODEL_H
#define LOOM_VISION_MODELS_TRANSFORMER_MODEL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "state_dict.h"
#include "vision_pack.h"

typedef struct transformer_base {
    const char *cls;
    int64_t classes, num_params;
    const struct model_weights_entry *entry;
    pthread_mutex_t lock;           /* one forward at a time per model: the plan's buffers */
} transformer_base;

/* What a family's create is made of; each model is `size` bytes, zeroed,
** starting with its transformer_base. */
typedef struct transformer_loader {
    size_t size;
    loom_status (*arch)(const loom_object_args *args, void *model);     /* the architecture, checked */
    loom_status (*load)(sd_loader *L, void *model);                     /* the keys (sets base.classes) */
    loom_status (*find_ops)(void *model);                               /* the ops the forward calls */
    void (*destroy)(void *model);                                       /* frees what any step made */
} transformer_loader;

/* create of every transformer class: *state_out is the model, or NULL on
** any failure. */
loom_status transformer_create(const loom_object_args *args, void **state_out, const transformer_loader *f);

/* Frees what transformer_create's base holds (the lock); not the model. */
void transformer_base_fini(transformer_base *b);

/* The run of every method op: the call's object is a model starting with a
** transformer_base. check_sizes refuses an input the family cannot take
** (its message names the input), plan sizes the buffers for x's shape,
** forward writes the logits. */
loom_status transformer_run(loom_call *call, loom_status (*check_sizes)(const void *model, const loom_tensor *x),
                            loom_status (*plan)(void *model, const loom_tensor *x),
                            loom_status (*forward)(loom_call *call, void *model, const loom_tensor *x,
                                                   loom_tensor *logits));

/* A block's four linear weights w (in_proj or qkv, out_proj or proj,
** mlp.0, mlp.3; f32, borrowed from the mapping) packed into dst as
** vit_block_pack does for D d and mlp_dim mlp. Then the file's pages of
** those weights leave the resident set: the cpu block ops read the packed
** copy alone (the pages are read again from the file if a repack or
** another backend needs them). */
void transformer_pack_block(void *dst, const loom_tensor *const w[4], int64_t d, int64_t mlp);

/* A class's first attribute: the weight entry the file must fit. */
#define TRANSFORMER_WEIGHTS_ATTR(DOC_)                                                             \
    { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE, .doc = (DOC_) }

/* The class vision.<id> (static id##_class), made by create_fn and freed
** by destroy_fn, with the one attribute `weights` (its entries:
** weights_docs.h). */
#define TRANSFORMER_CLASS(id, create_fn, destroy_fn)                                              \
    static const loom_attr_def id##_attrs[] = { TRANSFORMER_WEIGHTS_ATTR(VISION_WEIGHTS_DOC_##id) }; \
    static const loom_object_class id##_class = {                                                  \
        .struct_size = sizeof(loom_object_class), .name = "vision." #id,                           \
        .doc = "torchvision.models." #id " from a safetensors state_dict; method vision." #id,    \
        PK_ATTRS(id##_attrs), .create = create_fn, .destroy = destroy_fn,                         \
    };

/* The method op vision.<id> of the class of that name: `what` forward,
** the family's input and output definitions. */
#define TRANSFORMER_SCHEMA(id, what, inputs, outputs)                                              \
    PK_SCHEMA(vision_##id##_schema, "vision." #id, 1, what " forward: logits of an NCHW batch",    \
              PK_INPUTS(inputs), PK_OUTPUTS(outputs), .object_class = "vision." #id);

/* The family's module `var` named `name`: its ops (the OPS list, defined
** here as ops_var), its classes, and one cpu kernel per op, all run by
** `run` (kernel_row: the family's row macro, PK_KERNEL_CPU of run). */
#define TRANSFORMER_MODULE(var, name_, OPS, ops_var, classes_var, kernel_row)                      \
    PK_OPS_DEFINE(ops_var, OPS);                                                                   \
    static const loom_kernel_desc var##_kernels[] = { OPS(kernel_row) };                           \
    const pk_module var = { .name = name_, .ops = ops_var, .n_ops = PK_COUNT(ops_var),             \
                            .classes = classes_var, .n_classes = PK_COUNT(classes_var),            \
                            .kernels = var##_kernels, .n_kernels = PK_COUNT(var##_kernels) };

#endif /* LOOM_VISION_MODELS_TRANSFORMER_MODEL_H */
