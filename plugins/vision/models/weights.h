/* SPDX-License-Identifier: BSD-3-Clause */
/*
** weights.h - torchvision's multi-weight API for the models module: each
** class's weight entries (IMAGENET1K_V1, IMAGENET1K_V2, ...; DEFAULT is an
** alias of one), each with its preprocessing preset (ImageClassification:
** resize, crop, interpolation, mean, std) and metadata. The table is
** generated (weights_table.c, tools/gen_vision_weights_table.py); the
** weights themselves do not ship: a file is matched to an entry by name
** (--attr weights=IMAGENET1K_V2) and refused when it does not fit.
** The detectors' entries (COCO_V1 of Faster R-CNN, RetinaNet, Mask R-CNN)
** have the preset ObjectDetection (no resize or crop: the model's own
** transform does them), COCO-val2017 box_map (and mask_map) and the 91 COCO
** names. An entry may name a class this build lacks: lookups are by name.
*/
#ifndef LOOM_VISION_MODELS_WEIGHTS_H
#define LOOM_VISION_MODELS_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include "vision_pack.h"

typedef struct model_weights_entry {
    const char *cls;                /* "vision.resnet50" */
    const char *name;               /* "IMAGENET1K_V2" */
    int is_default;                 /* the entry DEFAULT aliases */
    const char *url;
    int64_t resize_size, crop_size;
    const char *interpolation;      /* "bilinear", "bicubic", ... */
    double mean[3], std[3];
    int64_t num_params, num_classes;
    int64_t min_h, min_w;
    double acc1, acc5;              /* ImageNet-1K */
    const char *recipe;
    const char *license;            /* NULL where torchvision states none */
    const char *preset;             /* "ImageClassification" or "ObjectDetection" (resize, crop, mean, std unset) */
    const char *dataset;            /* the metrics': "ImageNet-1K" (acc1, acc5) or "COCO-val2017" (box_map, mask_map) */
    double box_map, mask_map;       /* COCO-val2017; -1 where torchvision gives none */
    const char *const *categories;  /* num_classes names: model_imagenet_categories or model_coco_categories */
} model_weights_entry;

typedef struct model_weights_doc {
    const char *cls;
    const char *doc;
} model_weights_doc;

extern const model_weights_entry model_weights_entries[];
extern const size_t model_weights_n_entries;
extern const model_weights_doc model_weights_docs[];
extern const size_t model_weights_n_docs;
extern const char *const model_imagenet_categories[1000];
extern const char *const model_coco_categories[91];     /* _COCO_CATEGORIES: "__background__", "person", ... */

/* The entry `name` (or DEFAULT's) of class cls; NULL with the names of
** cls's entries in fail's message when there is none. */
const model_weights_entry *model_weights_find(const char *cls, const char *name);

/* The one-line listing of cls's entries, for its `weights` attribute doc. */
const char *model_weights_doc_of(const char *cls);

/* Refuses (naming the entry and both values) a loaded file whose classes or
** num_params differ from the entry's. */
loom_status model_weights_check(const model_weights_entry *e, int64_t classes, int64_t num_params,
                                int64_t min_h, int64_t min_w);

/* vision.weights_meta's kernel (weights_meta.c): an entry as JSON. */
loom_status vision_weights_meta_run(loom_call *call);

#endif
