/* SPDX-License-Identifier: BSD-3-Clause */
/*
** weights_meta.c - vision.weights_meta: one weight entry of a model class
** (weights.h) as JSON text, the way torchvision's `Weights.meta` and
** `Weights.transforms()` describe it, so that a host application (`loom
** classify`) can run the entry's preset and name its categories through the
** public API alone:
**
**   {"model": "vision.resnet50", "name": "IMAGENET1K_V2", "default": true, "url": ...,
**    "transforms": {"resize_size": 232, "crop_size": 224, "interpolation": "bilinear",
**                   "mean": [...], "std": [...], "antialias": true},
**    "num_params": ..., "min_size": [h, w], "metrics": {"ImageNet-1K": {"acc@1": ..., "acc@5": ...}},
**    "recipe": ..., "license": null, "categories": ["tench", ...]}
**
** A detector's entry (preset ObjectDetection) has instead
**   "transforms": {"preset": "ObjectDetection"},
**   "metrics": {"COCO-val2017": {"box_map": ..., "mask_map": ...}} (mask_map: Mask R-CNN's)
** and the 91 COCO names ("__background__", "person", ..., "N/A" in the gaps).
**
** `model` is a class name ("vision.resnet50" or "resnet50"); `weights` an
** entry name or DEFAULT. A class without entries, or an unknown entry, is
** refused naming what there is. Numbers are printed with 17 significant
** digits, so the mean and std read back as the table's doubles.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "weights.h"

#define WEIGHTS_META_ATTRS(A, op)                                                                  \
    A(op, model, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED,                                    \
      "the model class: vision.resnet50 (or resnet50), vision.fasterrcnn_resnet50_fpn_v2, ...", )                                          \
    A(op, weights, STRING, LOOM_DEFAULT_STRING("DEFAULT"), 0,                                      \
      "the entry: IMAGENET1K_V1, IMAGENET1K_V2, COCO_V1, ... or DEFAULT", )
PK_ATTR_ENUM(weights_meta, WEIGHTS_META_ATTRS);
PK_ATTR_TABLE(weights_meta, WEIGHTS_META_ATTRS);

/* A growing text buffer; `failed` once memory ran out (then every append is a no-op). */
typedef struct text {
    char *s;
    size_t n, cap;
    int failed;
} text;

static void put(text *t, const char *fmt, ...) LOOM_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap * 2 + (size_t)k + 1;
        char *s = realloc(t->s, cap);
        if (s == NULL) {
            t->failed = 1;
            return;
        }
        t->s = s;
        t->cap = cap;
    }
}

/* A JSON string (null for NULL): quotes, backslashes and control bytes escaped. */
static void put_str(text *t, const char *s)
{
    if (s == NULL) {
        put(t, "null");
        return;
    }
    put(t, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            put(t, "\\%c", *p);
        else if (*p < 0x20)
            put(t, "\\u%04x", *p);
        else
            put(t, "%c", *p);
    }
    put(t, "\"");
}

static void put_doubles(text *t, const double *v, int n)
{
    put(t, "[");
    for (int i = 0; i < n; i++)
        put(t, "%s%.17g", i ? ", " : "", v[i]);
    put(t, "]");
}

static void put_entry(text *t, const model_weights_entry *e)
{
    put(t, "{\"model\": ");
    put_str(t, e->cls);
    put(t, ", \"name\": ");
    put_str(t, e->name);
    put(t, ", \"default\": %s, \"url\": ", e->is_default ? "true" : "false");
    put_str(t, e->url);
    const int detection = strcmp(e->preset, "ObjectDetection") == 0;
    if (detection) {
        put(t, ", \"transforms\": {\"preset\": \"ObjectDetection\"}");
    } else {
        put(t, ", \"transforms\": {\"resize_size\": %lld, \"crop_size\": %lld, \"interpolation\": ",
            (long long)e->resize_size, (long long)e->crop_size);
        put_str(t, e->interpolation);
        put(t, ", \"mean\": ");
        put_doubles(t, e->mean, 3);
        put(t, ", \"std\": ");
        put_doubles(t, e->std, 3);
        put(t, ", \"antialias\": true}");
    }
    put(t, ", \"num_params\": %lld, \"min_size\": [%lld, %lld], ", (long long)e->num_params, (long long)e->min_h,
        (long long)e->min_w);
    if (detection) {
        put(t, "\"metrics\": {\"COCO-val2017\": {\"box_map\": %.17g", e->box_map);
        if (e->mask_map >= 0.0)
            put(t, ", \"mask_map\": %.17g", e->mask_map);
        put(t, "}}, \"recipe\": ");
    } else {
        put(t, "\"metrics\": {\"ImageNet-1K\": {\"acc@1\": %.17g, \"acc@5\": %.17g}}, \"recipe\": ", e->acc1,
            e->acc5);
    }
    put_str(t, e->recipe);
    put(t, ", \"license\": ");
    put_str(t, e->license);
    put(t, ", \"num_classes\": %lld, \"categories\": [", (long long)e->num_classes);
    for (int64_t i = 0; i < e->num_classes; i++) {
        put(t, "%s", i ? ", " : "");
        put_str(t, e->categories[i]);
    }
    put(t, "]}");
}

loom_status vision_weights_meta_run(loom_call *call)
{
    const char *model = call->attrs[PK_ATTR(weights_meta, model)].u.s;
    const char *name = call->attrs[PK_ATTR(weights_meta, weights)].u.s;
    char cls[128];
    snprintf(cls, sizeof cls, "%s%s", strncmp(model, "vision.", 7) == 0 ? "" : "vision.", model);
    int has_entries = 0;
    for (size_t i = 0; i < model_weights_n_entries && !has_entries; i++)
        has_entries = strcmp(model_weights_entries[i].cls, cls) == 0;
    if (!has_entries)
        return pk_host->fail(LOOM_EINVAL, "'model' %s has no weight entries (the vision classes with entries are "
                             "the classification models, such as vision.resnet50, and the detectors, such as "
                             "vision.fasterrcnn_resnet50_fpn_v2)", model);
    const model_weights_entry *e = model_weights_find(cls, name);
    if (e == NULL)
        return LOOM_EINVAL;
    text t = { NULL, 0, 0, 0 };
    put_entry(&t, e);
    if (t.failed) {
        free(t.s);
        return pk_host->fail(LOOM_ENOMEM, "vision.weights_meta: out of memory");
    }
    const int64_t shape[1] = { (int64_t)t.n };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_U8, 1, shape, &out);
    if (st == LOOM_OK)
        memcpy(loom_data(out), t.s, t.n);
    free(t.s);
    return st;
}

static const loom_arg_def weights_meta_outputs[] = {
    { .name = "meta", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_U8), .ndim = 1,
      .doc = "the entry as JSON text (u8 UTF-8): transforms (the preset), categories, metrics, num_params, url" },
};

PK_SCHEMA(vision_weights_meta_schema, "vision.weights_meta", 1,
          "torchvision's Weights.meta and transforms() of one weight entry, as JSON",
          .n_inputs = 0, .inputs = NULL, PK_OUTPUTS(weights_meta_outputs), PK_ATTRS(weights_meta_attrs));
