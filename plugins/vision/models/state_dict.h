/* SPDX-License-Identifier: BSD-3-Clause */
/*
** state_dict.h - reading a torchvision state_dict from a safetensors file
** for the transformer classes (ViT, Swin): each key the architecture has is
** expected in turn with its dtype and shape (a message naming the key and
** both shapes when it is missing or differs), the parameters are counted as
** torchvision's num_params counts them, and at the end every key of the
** file must have been expected (else "unexpected key"). The tensors are
** borrowed from the mapping, which the core keeps for the object's life.
** Also what the transformer classes' create share: their ops, looked up by
** name, and the weight entry a file must fit.
*/
#ifndef LOOM_VISION_MODELS_STATE_DICT_H
#define LOOM_VISION_MODELS_STATE_DICT_H

#include <stdint.h>

#include "vision_pack.h"

#define SD_NAME_MAX 96

typedef struct sd_loader {
    const char *cls;                /* "vision.vit_b_16", for the messages */
    const loom_safetensors *st;
    char (*names)[SD_NAME_MAX];     /* the keys expected so far */
    int64_t n, cap;
    int64_t num_params;             /* f32 parameters expected so far (buffers excluded) */
} sd_loader;

loom_status sd_init(sd_loader *L, const char *cls, const loom_safetensors *st);
void sd_free(sd_loader *L);

/* 1 when the file has key `name`. */
int sd_has(const sd_loader *L, const char *name);

/* Expect an f32 parameter (counted in num_params; buffer = 1: a buffer,
** not counted) named by the printf format, of rank ndim and this shape;
** *out borrows it. */
loom_status sd_param(sd_loader *L, const loom_tensor **out, int32_t ndim, const int64_t *shape, const char *fmt,
                     ...) __attribute__((format(printf, 5, 6)));
loom_status sd_buffer(sd_loader *L, const loom_tensor **out, loom_dtype dtype, int32_t ndim, const int64_t *shape,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Dim `dim` of key `name` when it is f32 of rank ndim, so the expectation
** that follows names both shapes when it is not; `fallback` otherwise. */
int64_t sd_dim(const sd_loader *L, const char *name, int32_t ndim, int32_t dim, int64_t fallback);

/* Refuses the first key of the file that was not expected. */
loom_status sd_no_unexpected(const sd_loader *L);

/* The op `name` a class `cls` calls, or a message naming both. */
loom_status sd_find_op(const char *cls, const char *name, const loom_op **out);

/* The weight entry named by the class's first attribute (`weights`), when
** it is set: *out is the entry, and the file's classes and num_params must
** be the entry's (weights.h: model_weights_check); *out stays NULL when the
** attribute is unset. */
struct model_weights_entry;
loom_status sd_weight_entry(const loom_object_args *args, int64_t classes, int64_t num_params,
                            const struct model_weights_entry **out);

#endif
