/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_generic.h - what the convnet classes that take the architecture as
** attributes (vision.resnet, vision.regnet, vision.efficientnet_v2,
** vision.shufflenet_v2, vision.mnasnet) share: their first attribute
** `weights` (no entries), their optional `num_classes`, which, when set,
** must be the file's (the head's rows), and their class definition.
*/
#ifndef LOOM_VISION_MODELS_GENERIC_H
#define LOOM_VISION_MODELS_GENERIC_H

#include "model_common.h"

/* attrs[0] of each generic class: model_create reads it as the entry name */
#define MODEL_GENERIC_WEIGHTS_ATTR                                                                 \
    { .name = "weights", .type = LOOM_ATTR_STRING, .dflt = LOOM_DEFAULT_NONE,                       \
      .doc = "no weight entries: leave unset" }

#define MODEL_NUM_CLASSES_ATTR                                                                     \
    { .name = "num_classes", .type = LOOM_ATTR_INT, .dflt = LOOM_DEFAULT_NONE,                      \
      .doc = "unset: the classifier's rows in the file; set: they must be this many" }

/* LOOM_EINVAL naming the head's key (<head>.weight) when attrs[at]
** (num_classes) is set and differs from the model's classes. */
static inline loom_status model_check_num_classes(const loom_object_args *args, int at, const model_base *b,
                                                  const char *head)
{
    if (args->n_attrs <= at || !args->attrs[at].is_set || args->attrs[at].u.i == b->classes)
        return LOOM_OK;
    return pk_host->fail(LOOM_EINVAL, "%s: key '%s.weight' has %lld classes in the weights file, attribute "
                         "num_classes is %lld", args->class_name, head, (long long)b->classes,
                         (long long)args->attrs[at].u.i);
}

/* model_create of a generic class's architecture arch, then its
** num_classes (attrs[num_classes_at]) checked against the head; destroy
** and *state_out NULL on any failure. */
static inline loom_status model_create_generic(const loom_object_args *args, void **state_out, const void *arch,
                                               size_t size, double bn_eps, const char *head,
                                               loom_status (*load)(model_loader *L, void *model),
                                               void (*destroy)(void *model), int num_classes_at)
{
    loom_status st = model_create(args, state_out, arch, size, bn_eps, head, load, destroy);
    if (st == LOOM_OK && (st = model_check_num_classes(args, num_classes_at, *state_out, head)) != LOOM_OK) {
        destroy(*state_out);
        *state_out = NULL;
    }
    return st;
}

/* The create of a generic class: parse(args, arch) sets the architecture
** (arch: the family's type, create's local) from the attributes, each
** checked, then model_create_generic of it; *state_out NULL on any failure. */
static inline loom_status model_create_from_attrs(const loom_object_args *args, void **state_out,
                                                  loom_status (*parse)(const loom_object_args *args, void *arch),
                                                  void *arch, size_t size, double bn_eps, const char *head,
                                                  loom_status (*load)(model_loader *L, void *model),
                                                  void (*destroy)(void *model), int num_classes_at)
{
    *state_out = NULL;
    loom_status st = parse(args, arch);
    return st != LOOM_OK ? st : model_create_generic(args, state_out, arch, size, bn_eps, head, load, destroy,
                                                     num_classes_at);
}

/* The generic class vision.<id>: attributes attrs, made by create_fn and
** freed by destroy_fn, documented by doc_. */
#define MODEL_GENERIC_CLASS(id, attrs, create_fn, destroy_fn, doc_)                                \
    const loom_object_class vision_##id##_class = {                                                \
        .struct_size = sizeof(loom_object_class), .name = "vision." #id, .doc = doc_,              \
        PK_ATTRS(attrs), .create = create_fn, .destroy = destroy_fn,                               \
    };

#endif /* LOOM_VISION_MODELS_GENERIC_H */
