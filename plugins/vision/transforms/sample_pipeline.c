/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sample_pipeline.c - the JSON pipeline of vision.transform_sample, parsed
** with cJSON into checked steps. Arguments and defaults are torchvision's
** (transforms/v2/_geometry.py, _color.py, _misc.py, _type_conversion.py);
** an unknown transform or argument, or a bad value, fails naming the
** transform's index, its name and the argument.
*/
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sample.h"

typedef struct parse_ctx {
    int index;
    const char *name;
} parse_ctx;

#define FAIL(c, ...) sample_fail(c, __VA_ARGS__)

static loom_status sample_fail(const parse_ctx *c, const char *fmt, ...) LOOM_PRINTF(2, 3);
static loom_status sample_fail(const parse_ctx *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pk_host->fail(LOOM_EINVAL, "'pipeline'[%d] (%s): %s", c->index, c->name, msg);
}

/* A number, or a list of 1..max numbers. */
static loom_status numbers(const parse_ctx *c, const cJSON *v, const char *arg, int min, int max, double *out,
                           int *n)
{
    if (cJSON_IsNumber(v)) {
        if (min > 1)
            return FAIL(c, "'%s' must be a list of %d to %d numbers", arg, min, max);
        out[0] = v->valuedouble;
        *n = 1;
        return LOOM_OK;
    }
    const int k = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
    if (k < min || k > max)
        return FAIL(c, "'%s' must be a number or a list of %d to %d numbers", arg, min, max);
    for (int i = 0; i < k; i++) {
        const cJSON *e = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble))
            return FAIL(c, "'%s'[%d] is not a finite number", arg, i);
        out[i] = e->valuedouble;
    }
    *n = k;
    return LOOM_OK;
}

static loom_status integers(const parse_ctx *c, const cJSON *v, const char *arg, int min, int max, int64_t lo,
                            int64_t *out, int *n)
{
    double d[4] = { 0, 0, 0, 0 };
    loom_status st = numbers(c, v, arg, min, max, d, n);
    if (st != LOOM_OK)
        return st;
    for (int i = 0; i < *n; i++) {
        if (d[i] != floor(d[i]) || d[i] < (double)lo || d[i] > 1e9)
            return FAIL(c, "'%s' must hold integers >= %lld (up to 1e9), not %g", arg, (long long)lo, d[i]);
        out[i] = (int64_t)d[i];
    }
    return LOOM_OK;
}

static loom_status boolean(const parse_ctx *c, const cJSON *v, const char *arg, int *out)
{
    if (!cJSON_IsBool(v))
        return FAIL(c, "'%s' must be true or false", arg);
    *out = cJSON_IsTrue(v);
    return LOOM_OK;
}

static loom_status choice(const parse_ctx *c, const cJSON *v, const char *arg, const char *const *choices,
                          char *out, size_t size)
{
    if (cJSON_IsString(v))
        for (int i = 0; choices[i]; i++)
            if (strcmp(v->valuestring, choices[i]) == 0) {
                snprintf(out, size, "%s", choices[i]);
                return LOOM_OK;
            }
    return FAIL(c, "'%s' must be one of %s%s%s%s", arg, choices[0], choices[1] ? ", " : "",
                choices[1] ? choices[1] : "", choices[1] && choices[2] ? ", ..." : "");
}

/* ColorJitter's _check_input: x -> [center - x, center + x] (the low end
** clipped at 0 unless hue), or [lo, hi] within the bound. */
static loom_status jitter_range(const parse_ctx *c, const cJSON *v, const char *arg, int hue, double out[2])
{
    double d[2] = { 0, 0 };
    int n;
    loom_status st = numbers(c, v, arg, 1, 2, d, &n);
    if (st != LOOM_OK)
        return st;
    const double center = hue ? 0.0 : 1.0, lo = hue ? -0.5 : 0.0, hi = hue ? 0.5 : INFINITY;
    if (n == 1) {
        if (d[0] < 0)
            return FAIL(c, "if '%s' is a single number, it must be non negative", arg);
        out[0] = center - d[0];
        out[1] = center + d[0];
        if (!hue && out[0] < 0)
            out[0] = 0;
    } else {
        out[0] = d[0];
        out[1] = d[1];
    }
    if (!(lo <= out[0] && out[0] <= out[1] && out[1] <= hi))
        return FAIL(c, "'%s' values should be between (%g, %g), not (%g, %g)", arg, lo, hi, out[0], out[1]);
    return LOOM_OK;
}

/* _setup_angle: x -> [-x, x] (x >= 0), or a list of 2 (or max_n) values */
static loom_status angle_range(const parse_ctx *c, const cJSON *v, const char *arg, int max_n, double *out, int *n)
{
    loom_status st = numbers(c, v, arg, 1, max_n, out, n);
    if (st != LOOM_OK)
        return st;
    if (*n == 1) {
        if (out[0] < 0)
            return FAIL(c, "if '%s' is a single number, it must be positive", arg);
        out[1] = out[0];
        out[0] = -out[0];
        *n = 2;
    } else if (*n != 2 && *n != 4) {
        return FAIL(c, "'%s' must be a number or a list of 2%s values", arg, max_n == 4 ? " or 4" : "");
    }
    return LOOM_OK;
}

static const char *const interpolations[] = { "bilinear", "nearest", "nearest-exact", "bicubic", NULL };
static const char *const pad_modes[] = { "constant", "edge", "reflect", "symmetric", NULL };

/* An optional 'fill' (absent or null: the step's default) */
static loom_status opt_fill(const parse_ctx *c, const cJSON *args, sample_step *s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "fill");
    return v && !cJSON_IsNull(v) ? numbers(c, v, "fill", 1, 4, s->fill, &s->n_fill) : LOOM_OK;
}

/* An optional probability 'p' (absent: *p kept) */
static loom_status opt_prob(const parse_ctx *c, const cJSON *args, double *p)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, "p");
    int k;
    loom_status st = v ? numbers(c, v, "p", 1, 1, p, &k) : LOOM_OK;
    if (st == LOOM_OK && (*p < 0 || *p > 1))
        return FAIL(c, "'p' should be a probability in [0, 1]");
    return st;
}

/* An optional string argument among choices (absent: out kept) */
static loom_status opt_choice(const parse_ctx *c, const cJSON *args, const char *arg, const char *const *choices,
                              char *out, size_t size)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(args, arg);
    return v ? choice(c, v, arg, choices, out, size) : LOOM_OK;
}

/* padding as torchvision's _parse_pad_padding: [all], [lr, tb], [l, t, r, b] */
static loom_status padding_of(const parse_ctx *c, const cJSON *v, int64_t out[4])
{
    int64_t p[4] = { 0, 0, 0, 0 };
    int n;
    loom_status st = integers(c, v, "padding", 1, 4, 0, p, &n);
    if (st != LOOM_OK)
        return st;
    if (n == 3)
        return FAIL(c, "'padding' must have 1, 2 or 4 values, not 3");
    /* [all], [left/right, top/bottom], [left, top, right, bottom] */
    out[0] = p[0];
    out[1] = n == 1 ? p[0] : p[1];
    out[2] = n == 4 ? p[2] : p[0];
    out[3] = n == 4 ? p[3] : n == 2 ? p[1] : p[0];
    return LOOM_OK;
}

/* size as _setup_size: [s] -> (s, s), [h, w] */
static loom_status crop_size(const parse_ctx *c, const cJSON *v, int64_t out[2])
{
    int n;
    loom_status st = integers(c, v, "size", 1, 2, 1, out, &n);
    if (st == LOOM_OK && n == 1)
        out[1] = out[0];
    return st;
}

/* Every key of args must be one of names (NULL-terminated). */
static loom_status known_args(const parse_ctx *c, const cJSON *args, const char *const *names)
{
    for (const cJSON *a = args->child; a; a = a->next) {
        int ok = 0;
        for (int i = 0; names[i] && !ok; i++)
            ok = strcmp(a->string, names[i]) == 0;
        if (!ok)
            return FAIL(c, "unknown argument '%s'", a->string);
    }
    return LOOM_OK;
}

static loom_status parse_step(const parse_ctx *c, const cJSON *args, sample_step *s)
{
    const char *n = c->name;
    const cJSON *v;
    loom_status st = LOOM_OK;
    int k;
    memset(s, 0, sizeof *s);
    snprintf(s->interpolation, sizeof s->interpolation, "bilinear");
    snprintf(s->padding_mode, sizeof s->padding_mode, "constant");
    s->antialias = 1;
#define ARGS(...)                                                                                  \
    do {                                                                                           \
        static const char *const names_[] = { __VA_ARGS__, NULL };                                 \
        if ((st = known_args(c, args, names_)) != LOOM_OK)                                         \
            return st;                                                                             \
    } while (0)
#define GET(key) ((v = cJSON_GetObjectItemCaseSensitive(args, key)) != NULL)
    if (strcmp(n, "RandomHorizontalFlip") == 0 || strcmp(n, "RandomVerticalFlip") == 0) {
        ARGS("p");
        s->kind = n[6] == 'H' ? SAMPLE_HFLIP : SAMPLE_VFLIP;
        s->p = 0.5;
        if ((st = opt_prob(c, args, &s->p)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "Resize") == 0) {
        ARGS("size", "interpolation", "max_size", "antialias");
        s->kind = SAMPLE_RESIZE;
        if (GET("size") && !cJSON_IsNull(v) && (st = integers(c, v, "size", 1, 2, 1, s->size, &s->n_size)) != LOOM_OK)
            return st;
        if (GET("max_size") && !cJSON_IsNull(v) && (st = integers(c, v, "max_size", 1, 1, 1, &s->max_size, &k)) != LOOM_OK)
            return st;
        if (s->n_size == 0 && s->max_size == 0)
            return FAIL(c, "'size' can be null only if 'max_size' is given");
        if ((st = opt_choice(c, args, "interpolation", interpolations, s->interpolation, sizeof s->interpolation)) !=
            LOOM_OK)
            return st;
        if (GET("antialias") && (st = boolean(c, v, "antialias", &s->antialias)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "CenterCrop") == 0) {
        ARGS("size");
        s->kind = SAMPLE_CENTER_CROP;
        if (!GET("size"))
            return FAIL(c, "'size' is required");
        return crop_size(c, v, s->size);
    }
    if (strcmp(n, "RandomCrop") == 0) {
        ARGS("size", "padding", "pad_if_needed", "fill", "padding_mode");
        s->kind = SAMPLE_RANDOM_CROP;
        if (!GET("size"))
            return FAIL(c, "'size' is required");
        if ((st = crop_size(c, v, s->size)) != LOOM_OK)
            return st;
        if (GET("padding") && !cJSON_IsNull(v)) {
            if ((st = padding_of(c, v, s->padding)) != LOOM_OK)
                return st;
            s->has_padding = 1;
        }
        if (GET("pad_if_needed") && (st = boolean(c, v, "pad_if_needed", &s->pad_if_needed)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        if ((st = opt_choice(c, args, "padding_mode", pad_modes, s->padding_mode, sizeof s->padding_mode)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "RandomResizedCrop") == 0) {
        ARGS("size", "scale", "ratio", "interpolation", "antialias");
        s->kind = SAMPLE_RANDOM_RESIZED_CROP;
        s->scale[0] = 0.08;
        s->scale[1] = 1.0;
        s->ratio[0] = 3.0 / 4.0;
        s->ratio[1] = 4.0 / 3.0;
        if (!GET("size"))
            return FAIL(c, "'size' is required");
        if ((st = crop_size(c, v, s->size)) != LOOM_OK)
            return st;
        if (GET("scale") && ((st = numbers(c, v, "scale", 2, 2, s->scale, &k)) != LOOM_OK || s->scale[0] < 0))
            return st != LOOM_OK ? st : FAIL(c, "'scale' must be non-negative");
        if (GET("ratio") &&
            ((st = numbers(c, v, "ratio", 2, 2, s->ratio, &k)) != LOOM_OK || !(s->ratio[0] > 0 && s->ratio[1] > 0)))
            return st != LOOM_OK ? st : FAIL(c, "'ratio' must be positive");
        if ((st = opt_choice(c, args, "interpolation", interpolations, s->interpolation, sizeof s->interpolation)) !=
            LOOM_OK)
            return st;
        if (GET("antialias") && (st = boolean(c, v, "antialias", &s->antialias)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "Pad") == 0) {
        ARGS("padding", "fill", "padding_mode");
        s->kind = SAMPLE_PAD;
        s->has_padding = 1;
        if (!GET("padding"))
            return FAIL(c, "'padding' is required");
        if ((st = padding_of(c, v, s->padding)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        if ((st = opt_choice(c, args, "padding_mode", pad_modes, s->padding_mode, sizeof s->padding_mode)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "ColorJitter") == 0) {
        static const char *const keys[4] = { "brightness", "contrast", "saturation", "hue" };
        ARGS("brightness", "contrast", "saturation", "hue");
        s->kind = SAMPLE_COLOR_JITTER;
        for (int i = 0; i < 4; i++)
            if (GET(keys[i]) && !cJSON_IsNull(v)) {
                if ((st = jitter_range(c, v, keys[i], i == 3, s->jitter[i])) != LOOM_OK)
                    return st;
                /* torchvision drops a range that is the identity ([1, 1] or [0, 0] for hue) */
                s->has_jitter[i] = !(s->jitter[i][0] == s->jitter[i][1] && s->jitter[i][0] == (i == 3 ? 0.0 : 1.0));
            }
        return LOOM_OK;
    }
    if (strcmp(n, "Normalize") == 0) {
        ARGS("mean", "std");
        s->kind = SAMPLE_NORMALIZE;
        if (!GET("mean") || (st = numbers(c, v, "mean", 1, 4, s->mean, &s->n_mean)) != LOOM_OK)
            return st != LOOM_OK ? st : FAIL(c, "'mean' is required");
        if (!GET("std") || (st = numbers(c, v, "std", 1, 4, s->std, &s->n_std)) != LOOM_OK)
            return st != LOOM_OK ? st : FAIL(c, "'std' is required");
        return LOOM_OK;
    }
    if (strcmp(n, "ToDtype") == 0) {
        static const char *const dtypes[] = { "float32", "uint8", NULL };
        ARGS("dtype", "scale");
        s->kind = SAMPLE_TO_DTYPE;
        if (!GET("dtype"))
            return FAIL(c, "'dtype' is required");
        if ((st = choice(c, v, "dtype", dtypes, s->dtype, sizeof s->dtype)) != LOOM_OK)
            return st;
        if (GET("scale") && (st = boolean(c, v, "scale", &s->scale_values)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "ClampBoundingBoxes") == 0) {
        ARGS("clamping_mode");
        s->kind = SAMPLE_CLAMP_BOXES;
        return LOOM_OK;
    }
    if (strcmp(n, "SanitizeBoundingBoxes") == 0) {
        ARGS("min_size", "min_area");
        s->kind = SAMPLE_SANITIZE_BOXES;
        s->min_size = s->min_area = 1.0;
        if (GET("min_size") && (st = numbers(c, v, "min_size", 1, 1, &s->min_size, &k)) != LOOM_OK)
            return st;
        if (GET("min_area") && (st = numbers(c, v, "min_area", 1, 1, &s->min_area, &k)) != LOOM_OK)
            return st;
        if (s->min_size < 1 || s->min_area < 1)
            return FAIL(c, "'min_size' and 'min_area' should be >= 1");
        return LOOM_OK;
    }
    if (strcmp(n, "RandomRotation") == 0 || strcmp(n, "RandomAffine") == 0) {
        const int affine = n[6] == 'A';
        if (affine)
            ARGS("degrees", "translate", "scale", "shear", "interpolation", "fill", "center");
        else
            ARGS("degrees", "interpolation", "expand", "center", "fill");
        s->kind = affine ? SAMPLE_RANDOM_AFFINE : SAMPLE_RANDOM_ROTATION;
        snprintf(s->interpolation, sizeof s->interpolation, "nearest");
        s->n_fill = 1;   /* fill=0: given, so the grid's fill path runs, as torchvision's */
        if (!GET("degrees"))
            return FAIL(c, "'degrees' is required");
        if ((st = angle_range(c, v, "degrees", 2, s->degrees, &k)) != LOOM_OK)
            return st;
        if (affine && GET("translate") && !cJSON_IsNull(v)) {
            if ((st = numbers(c, v, "translate", 2, 2, s->translate, &k)) != LOOM_OK)
                return st;
            if (s->translate[0] < 0 || s->translate[0] > 1 || s->translate[1] < 0 || s->translate[1] > 1)
                return FAIL(c, "'translate' values should be between 0 and 1");
            s->has_translate = 1;
        }
        if (affine && GET("scale") && !cJSON_IsNull(v)) {
            if ((st = numbers(c, v, "scale", 2, 2, s->scale, &k)) != LOOM_OK)
                return st;
            if (!(s->scale[0] > 0 && s->scale[1] > 0))
                return FAIL(c, "'scale' values should be positive");
            s->has_scale = 1;
        }
        if (affine && GET("shear") && !cJSON_IsNull(v) && (st = angle_range(c, v, "shear", 4, s->shear, &s->n_shear)) != LOOM_OK)
            return st;
        if (!affine && GET("expand") && (st = boolean(c, v, "expand", &s->expand)) != LOOM_OK)
            return st;
        static const char *const grid_modes[] = { "nearest", "bilinear", NULL };
        if ((st = opt_choice(c, args, "interpolation", grid_modes, s->interpolation, sizeof s->interpolation)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        if (GET("center") && !cJSON_IsNull(v)) {
            if ((st = numbers(c, v, "center", 2, 2, s->center, &k)) != LOOM_OK)
                return st;
            s->has_center = 1;
        }
        return LOOM_OK;
    }
    if (strcmp(n, "RandomPerspective") == 0) {
        ARGS("distortion_scale", "p", "interpolation", "fill");
        static const char *const grid_modes[] = { "bilinear", "nearest", NULL };
        s->kind = SAMPLE_RANDOM_PERSPECTIVE;
        s->distortion_scale = 0.5;
        s->p = 0.5;
        s->n_fill = 1;
        if (GET("distortion_scale") && ((st = numbers(c, v, "distortion_scale", 1, 1, &s->distortion_scale, &k)) != LOOM_OK ||
                                        s->distortion_scale < 0 || s->distortion_scale > 1))
            return st != LOOM_OK ? st : FAIL(c, "'distortion_scale' value should be between 0 and 1");
        if ((st = opt_prob(c, args, &s->p)) != LOOM_OK)
            return st;
        if ((st = opt_choice(c, args, "interpolation", grid_modes, s->interpolation, sizeof s->interpolation)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "RandomZoomOut") == 0) {
        ARGS("fill", "side_range", "p");
        s->kind = SAMPLE_RANDOM_ZOOM_OUT;
        s->side_range[0] = 1.0;
        s->side_range[1] = 4.0;
        s->p = 0.5;
        s->n_fill = 1;
        if (GET("side_range") && (st = numbers(c, v, "side_range", 2, 2, s->side_range, &k)) != LOOM_OK)
            return st;
        if (s->side_range[0] < 1.0 || s->side_range[0] > s->side_range[1])
            return FAIL(c, "'side_range' (%g, %g) is invalid: 1 <= min <= max", s->side_range[0], s->side_range[1]);
        if ((st = opt_prob(c, args, &s->p)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "RandomIoUCrop") == 0) {
        ARGS("min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio", "sampler_options", "trials");
        static const double options[7] = { 0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0 };
        s->kind = SAMPLE_RANDOM_IOU_CROP;
        s->iou_scale[0] = 0.3;
        s->iou_scale[1] = 1.0;
        s->iou_aspect[0] = 0.5;
        s->iou_aspect[1] = 2.0;
        memcpy(s->options, options, sizeof options);
        s->n_options = 7;
        s->trials = 40;
        static const char *const keys[4] = { "min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio" };
        double *dst[4] = { &s->iou_scale[0], &s->iou_scale[1], &s->iou_aspect[0], &s->iou_aspect[1] };
        for (int i = 0; i < 4; i++)
            if (GET(keys[i]) && (st = numbers(c, v, keys[i], 1, 1, dst[i], &k)) != LOOM_OK)
                return st;
        /* a crop is a part of the image: its side over the image's lies in [0, 1] */
        if (!(s->iou_scale[0] >= 0 && s->iou_scale[0] <= s->iou_scale[1] && s->iou_scale[1] <= 1))
            return FAIL(c, "'min_scale' %g and 'max_scale' %g must satisfy 0 <= min <= max <= 1", s->iou_scale[0],
                        s->iou_scale[1]);
        if (GET("sampler_options")) {
            const int m = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : -1;
            if (m < 1 || m > 16)
                return FAIL(c, "'sampler_options' must be a list of 1 to 16 numbers");
            if ((st = numbers(c, v, "sampler_options", 1, 16, s->options, &s->n_options)) != LOOM_OK)
                return st;
        }
        if (GET("trials") && (st = integers(c, v, "trials", 1, 1, 1, &s->trials, &k)) != LOOM_OK)
            return st;
        if (s->trials > 1000)
            return FAIL(c, "'trials' = %lld: at most 1000", (long long)s->trials);
        return LOOM_OK;
    }
    if (strcmp(n, "ElasticTransform") == 0) {
        static const char *const grid_modes[] = { "bilinear", "nearest", NULL };
        ARGS("alpha", "sigma", "interpolation", "fill");
        s->kind = SAMPLE_ELASTIC;
        s->alpha[0] = s->alpha[1] = 50.0;
        s->sigma[0] = s->sigma[1] = 5.0;
        s->n_fill = 1;
        if (GET("alpha") && (st = numbers(c, v, "alpha", 1, 2, s->alpha, &k)) != LOOM_OK)
            return st;
        if (k == 1)
            s->alpha[1] = s->alpha[0];
        if (GET("sigma") && (st = numbers(c, v, "sigma", 1, 2, s->sigma, &k)) != LOOM_OK)
            return st;
        if (k == 1)
            s->sigma[1] = s->sigma[0];
        if (s->sigma[0] < 0 || s->sigma[1] < 0 || s->sigma[0] > 100 || s->sigma[1] > 100)
            return FAIL(c, "'sigma' values must be in [0, 100]");
        if ((st = opt_choice(c, args, "interpolation", grid_modes, s->interpolation, sizeof s->interpolation)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "AutoAugment") == 0 || strcmp(n, "RandAugment") == 0 || strcmp(n, "TrivialAugmentWide") == 0 ||
        strcmp(n, "AugMix") == 0) {
        static const char *const grid_modes[] = { "nearest", "bilinear", NULL };
        static const char *const policies[] = { "imagenet", NULL };
        aug_policy *q = &s->policy;
        s->kind = SAMPLE_POLICY;
        snprintf(s->interpolation, sizeof s->interpolation, "nearest");
        if (n[0] == 'A' && n[1] == 'u' && n[2] == 't') {
            ARGS("policy", "interpolation", "fill");
            q->kind = AUG_POLICY_AUTO;
            char pol[16];
            if (GET("policy") && (st = choice(c, v, "policy", policies, pol, sizeof pol)) != LOOM_OK)
                return st;
        } else if (n[0] == 'R') {
            ARGS("num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill");
            q->kind = AUG_POLICY_RAND;
            q->num_ops = 2;
            q->magnitude = 9;
            q->num_magnitude_bins = 31;
            if ((GET("num_ops") && (st = integers(c, v, "num_ops", 1, 1, 0, &q->num_ops, &k)) != LOOM_OK) ||
                (GET("magnitude") && (st = integers(c, v, "magnitude", 1, 1, 0, &q->magnitude, &k)) != LOOM_OK))
                return st;
        } else if (n[0] == 'T') {
            ARGS("num_magnitude_bins", "interpolation", "fill");
            q->kind = AUG_POLICY_TRIVIAL_WIDE;
            q->num_magnitude_bins = 31;
        } else {
            ARGS("severity", "mixture_width", "chain_depth", "alpha", "all_ops", "interpolation", "fill");
            q->kind = AUG_POLICY_AUGMIX;
            q->severity = q->mixture_width = 3;
            q->chain_depth = -1;
            q->alpha = 1.0;
            q->all_ops = 1;
            snprintf(s->interpolation, sizeof s->interpolation, "bilinear");
            double d[1];
            int64_t depth[1];
            if ((GET("severity") && (st = integers(c, v, "severity", 1, 1, 1, &q->severity, &k)) != LOOM_OK) ||
                (GET("mixture_width") && (st = integers(c, v, "mixture_width", 1, 1, 1, &q->mixture_width, &k)) != LOOM_OK) ||
                (GET("all_ops") && (st = boolean(c, v, "all_ops", &q->all_ops)) != LOOM_OK))
                return st;
            if (GET("chain_depth")) {
                if ((st = numbers(c, v, "chain_depth", 1, 1, d, &k)) != LOOM_OK)
                    return st;
                if (d[0] != floor(d[0]) || d[0] > 1000 || d[0] < -1000)
                    return FAIL(c, "'chain_depth' must be an integer (<= 0: drawn from 1..3)");
                depth[0] = (int64_t)d[0];
                q->chain_depth = depth[0];
            }
            if (GET("alpha") && ((st = numbers(c, v, "alpha", 1, 1, &q->alpha, &k)) != LOOM_OK || !(q->alpha > 0)))
                return st != LOOM_OK ? st : FAIL(c, "'alpha' must be positive");
        }
        if (GET("num_magnitude_bins") &&
            (st = integers(c, v, "num_magnitude_bins", 1, 1, 2, &q->num_magnitude_bins, &k)) != LOOM_OK)
            return st;
        if ((st = opt_choice(c, args, "interpolation", grid_modes, s->interpolation, sizeof s->interpolation)) != LOOM_OK)
            return st;
        if ((st = opt_fill(c, args, s)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
    if (strcmp(n, "RandomErasing") == 0) {
        ARGS("p", "scale", "ratio", "value", "inplace");
        s->kind = SAMPLE_RANDOM_ERASING;
        s->p = 0.5;
        s->scale[0] = 0.02, s->scale[1] = 0.33;
        s->ratio[0] = 0.3, s->ratio[1] = 3.3;
        int inplace;
        if ((st = opt_prob(c, args, &s->p)) != LOOM_OK ||
            (GET("scale") && (st = numbers(c, v, "scale", 2, 2, s->scale, &k)) != LOOM_OK) ||
            (GET("ratio") && (st = numbers(c, v, "ratio", 2, 2, s->ratio, &k)) != LOOM_OK) ||
            (GET("inplace") && (st = boolean(c, v, "inplace", &inplace)) != LOOM_OK))
            return st;
        if (!(0 <= s->scale[0] && s->scale[0] <= s->scale[1] && s->scale[1] <= 1))
            return FAIL(c, "'scale' (%g, %g) must be (min, max) between 0 and 1", s->scale[0], s->scale[1]);
        if (!(0 < s->ratio[0] && s->ratio[0] <= s->ratio[1]))
            return FAIL(c, "'ratio' (%g, %g) must be a positive (min, max)", s->ratio[0], s->ratio[1]);
        if (GET("value")) {
            if (cJSON_IsString(v)) {
                if (strcmp(v->valuestring, "random") != 0)
                    return FAIL(c, "if 'value' is a string, it should be 'random'");
                s->random_value = 1;
            } else if ((st = numbers(c, v, "value", 1, 4, s->value, &s->n_value)) != LOOM_OK) {
                return st;
            } else if (!isfinite(s->value[0])) {
                return FAIL(c, "'value' must be finite");
            }
        }
        return LOOM_OK;
    }
    if (strcmp(n, "MixUp") == 0 || strcmp(n, "CutMix") == 0) {
        ARGS("alpha", "num_classes");
        s->kind = n[0] == 'M' ? SAMPLE_MIXUP : SAMPLE_CUTMIX;
        s->mix_alpha = 1.0;
        if (GET("alpha") && ((st = numbers(c, v, "alpha", 1, 1, &s->mix_alpha, &k)) != LOOM_OK ||
                             !(s->mix_alpha > 0 && s->mix_alpha < 1e6)))
            return st != LOOM_OK ? st : FAIL(c, "'alpha' must be positive (and below 1e6)");
        if (GET("num_classes") && !cJSON_IsNull(v) &&
            (st = integers(c, v, "num_classes", 1, 1, 1, &s->num_classes, &k)) != LOOM_OK)
            return st;
        return LOOM_OK;
    }
#undef GET
#undef ARGS
    return FAIL(c, "not a transform vision.transform_sample knows (RandomHorizontalFlip, RandomVerticalFlip, "
                   "Resize, CenterCrop, RandomCrop, RandomResizedCrop, Pad, RandomRotation, RandomAffine, "
                   "RandomPerspective, RandomZoomOut, ColorJitter, Normalize, ToDtype, ClampBoundingBoxes, "
                   "SanitizeBoundingBoxes, ElasticTransform, RandomIoUCrop, AutoAugment, RandAugment, TrivialAugmentWide, AugMix, "
                   "RandomErasing, MixUp, CutMix)");
}

loom_status sample_pipeline_parse(const char *json, sample_pipeline *out)
{
    out->steps = NULL;
    out->n = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(json, &end, 1);
    if (!root)
        return pk_host->fail(LOOM_EINVAL, "'pipeline' is not JSON (at offset %lld: '%.20s')",
                             (long long)(end ? end - json : 0), end ? end : "");
    loom_status st = LOOM_OK;
    if (!cJSON_IsArray(root)) {
        st = pk_host->fail(LOOM_EINVAL, "'pipeline' must be a JSON list of transforms");
        goto done;
    }
    const int n = cJSON_GetArraySize(root);
    if (n > 256) {
        st = pk_host->fail(LOOM_EINVAL, "'pipeline' has %d transforms: at most 256", n);
        goto done;
    }
    out->steps = calloc((size_t)(n > 0 ? n : 1), sizeof *out->steps);
    if (!out->steps) {
        st = LOOM_ENOMEM;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(root, i);
        if (!cJSON_IsObject(e) || cJSON_GetArraySize(e) != 1 || !cJSON_IsObject(e->child)) {
            st = pk_host->fail(LOOM_EINVAL, "'pipeline'[%d] must be {\"Transform\": {arguments}}", i);
            goto done;
        }
        const parse_ctx c = { i, e->child->string };
        if ((st = parse_step(&c, e->child, &out->steps[i])) != LOOM_OK)
            goto done;
        out->n = i + 1;
    }
done:
    cJSON_Delete(root);
    if (st != LOOM_OK)
        sample_pipeline_free(out);
    return st;
}

void sample_pipeline_free(sample_pipeline *p)
{
    free(p->steps);
    p->steps = NULL;
    p->n = 0;
}
