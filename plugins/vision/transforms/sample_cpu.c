/* SPDX-License-Identifier: BSD-3-Clause */
/*
** sample_cpu.c - vision.transform_sample: each transform of the pipeline
** makes its draws as torchvision's make_params does (in its order: the
** flips' rand(1) >= p, RandomCrop's top then left, RandomResizedCrop's
** tries, ColorJitter's randperm(4) then its factors) and applies the module's
** own ops through op_call to the image, the boxes (with the canvas they lie
** on and their format) and the masks, so that they move together; the
** labels follow SanitizeBoundingBoxes. Colour and dtype transforms,
** RandomErasing and the augmentation policies touch the image alone, as in
** torchvision; MixUp and CutMix take a batch with its class labels and
** return them one-hot mixed (mix(), below).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample.h"

enum { T_IMAGE, T_BOXES, T_MASKS, T_LABELS, T_N };

typedef struct sample_run {
    loom_call *call;
    aug_draws d;
    const char *format;
    loom_tensor *t[T_N];   /* current image, boxes, masks, labels (NULL: absent) */
    int own[T_N];          /* 1: made by an op_call here (freed with tensor_free); 2: views[k] over bufs[k] */
    loom_tensor views[T_N];
    int64_t view_shapes[T_N][LOOM_MAX_NDIM];
    void *bufs[T_N];
    int64_t h, w;          /* the canvas */
    int index;             /* the step running, for messages */
} sample_run;

static void drop_tensor(sample_run *r, int k)
{
    if (r->own[k] == 1 && r->t[k])
        pk_host->tensor_free(r->t[k]);
    if (r->own[k] == 2)
        pk_host->free(r->views[k].device, r->bufs[k]);
    r->t[k] = NULL;
    r->own[k] = 0;
}

static void set_tensor(sample_run *r, int k, loom_tensor *t)
{
    drop_tensor(r, k);
    r->t[k] = t;
    r->own[k] = 1;
}

/* A new tensor made here: filled from the current ones through view, then
** made current by buffer_commit (or freed by buffer_discard). */
typedef struct sample_buffer {
    void *data;
    int64_t shape[LOOM_MAX_NDIM];
    loom_tensor view;
} sample_buffer;

static loom_status buffer_new(sample_run *r, loom_dtype dtype, int32_t ndim, const int64_t *shape, sample_buffer *b)
{
    memcpy(b->shape, shape, sizeof(int64_t) * (size_t)ndim);
    b->view = aug_view(NULL, dtype, ndim, b->shape);
    b->data = pk_host->alloc(r->t[T_IMAGE]->device, aug_nbytes(&b->view) + 1, 64);
    if (!b->data)
        return LOOM_ENOMEM;
    b->view = aug_view(b->data, dtype, ndim, b->shape);
    return LOOM_OK;
}

static void buffer_discard(sample_run *r, sample_buffer *b)
{
    pk_host->free(r->t[T_IMAGE]->device, b->data);
    b->data = NULL;
}

static void buffer_commit(sample_run *r, int k, const sample_buffer *b)
{
    drop_tensor(r, k);
    memcpy(r->view_shapes[k], b->shape, sizeof b->shape);
    r->views[k] = aug_view(b->data, loom_tensor_dtype_of(&b->view), b->view.ndim, r->view_shapes[k]);
    r->bufs[k] = b->data;
    r->t[k] = &r->views[k];
    r->own[k] = 2;
}

static void canvas_from_image(sample_run *r)
{
    const loom_tensor *x = r->t[T_IMAGE];
    r->h = x->shape[x->ndim - 2];
    r->w = x->shape[x->ndim - 1];
}

/* op on one input (and a second, or NULL) into n_out new tensors */
static loom_status call_op(sample_run *r, const char *name, const loom_tensor *a, const loom_tensor *b,
                           loom_tensor **outs, int32_t n_out, const loom_named_attr *attrs, int32_t n_attrs)
{
    const loom_op *op = pk_host->op_find(name);
    if (!op)
        return LOOM_ENOENT;
    const loom_tensor *ins[2] = { a, b };
    for (int32_t i = 0; i < n_out; i++)
        outs[i] = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = b ? 2 : 1, .inputs = ins, .n_outputs = n_out,
                        .outputs = outs, .n_attrs = n_attrs, .attrs = attrs, .backend = "cpu" };
    loom_status st = pk_host->op_call(r->call->ctx, &oc);
    if (st != LOOM_OK)
        for (int32_t i = 0; i < n_out; i++)
            if (outs[i]) {
                pk_host->tensor_free(outs[i]);
                outs[i] = NULL;
            }
    return st;
}

/* The image and the masks through op (same attributes), replaced. */
static loom_status image_and_masks(sample_run *r, const char *op, const loom_named_attr *attrs, int32_t n,
                                   const char *mask_op, const loom_named_attr *mask_attrs, int32_t mask_n)
{
    loom_tensor *o;
    loom_status st = call_op(r, op, r->t[T_IMAGE], NULL, &o, 1, attrs, n);
    if (st != LOOM_OK)
        return st;
    set_tensor(r, T_IMAGE, o);
    if (r->t[T_MASKS]) {
        if ((st = call_op(r, mask_op ? mask_op : op, r->t[T_MASKS], NULL, &o, 1, mask_attrs ? mask_attrs : attrs,
                          mask_attrs ? mask_n : n)) != LOOM_OK)
            return st;
        set_tensor(r, T_MASKS, o);
    }
    canvas_from_image(r);
    return LOOM_OK;
}

/* The boxes through a *_bounding_boxes op; canvas_out: it returns the new
** canvas too (which must agree with the image's). */
static loom_status boxes_op(sample_run *r, const char *op, loom_named_attr *attrs, int32_t n, int canvas_out)
{
    if (!r->t[T_BOXES])
        return LOOM_OK;
    loom_tensor *o[2];
    loom_status st = call_op(r, op, r->t[T_BOXES], NULL, o, canvas_out ? 2 : 1, attrs, n);
    if (st != LOOM_OK)
        return st;
    if (canvas_out)
        pk_host->tensor_free(o[1]);
    set_tensor(r, T_BOXES, o[0]);
    return LOOM_OK;
}

static loom_status flip(sample_run *r, const sample_step *s, int horizontal)
{
    float u;
    loom_status st = aug_rand(&r->d, &u);
    if (st != LOOM_OK || u >= (float)s->p)
        return st;
    const int64_t canvas[2] = { r->h, r->w };
    loom_named_attr ba[2] = { aug_attr_string("format", r->format), aug_attr_ints("canvas_size", canvas, 2) };
    if ((st = boxes_op(r, horizontal ? "vision.horizontal_flip_bounding_boxes" : "vision.vertical_flip_bounding_boxes",
                       ba, 2, 0)) != LOOM_OK)
        return st;
    return image_and_masks(r, horizontal ? "vision.horizontal_flip" : "vision.vertical_flip", NULL, 0, NULL, NULL, 0);
}

static loom_status resize(sample_run *r, const sample_step *s)
{
    const int64_t canvas[2] = { r->h, r->w };
    loom_named_attr a[4], m[2], b[4];
    int32_t n = 0, nm = 0, nb = 0;
    b[nb++] = aug_attr_ints("canvas_size", canvas, 2);
    b[nb++] = aug_attr_string("format", r->format);
    if (s->n_size) {
        a[n++] = m[nm++] = b[nb++] = aug_attr_ints("size", s->size, s->n_size);
    }
    if (s->max_size) {
        a[n++] = m[nm++] = b[nb++] = aug_attr_int("max_size", s->max_size);
    }
    a[n++] = aug_attr_string("interpolation", s->interpolation);
    a[n++] = aug_attr_bool("antialias", s->antialias);
    loom_status st = boxes_op(r, "vision.resize_bounding_boxes", b, nb, 1);
    if (st != LOOM_OK)
        return st;
    return image_and_masks(r, "vision.resize", a, n, "vision.resize_mask", m, nm);
}

static loom_status center_crop(sample_run *r, const sample_step *s)
{
    const int64_t canvas[2] = { r->h, r->w };
    loom_named_attr a[1] = { aug_attr_ints("output_size", s->size, 2) };
    loom_named_attr b[3] = { aug_attr_string("format", r->format), aug_attr_ints("canvas_size", canvas, 2), a[0] };
    loom_status st = boxes_op(r, "vision.center_crop_bounding_boxes", b, 3, 1);
    if (st != LOOM_OK)
        return st;
    return image_and_masks(r, "vision.center_crop", a, 1, NULL, NULL, 0);
}

/* vision.pad on image and masks (the same fill), pad_bounding_boxes */
static loom_status pad(sample_run *r, const sample_step *s, const int64_t padding[4])
{
    const int64_t canvas[2] = { r->h, r->w };
    loom_named_attr a[3], b[4];
    int32_t n = 0;
    a[n++] = aug_attr_ints("padding", padding, 4);
    a[n++] = aug_attr_string("padding_mode", s->padding_mode);
    if (s->n_fill)
        a[n++] = aug_attr_floats("fill", s->fill, s->n_fill);
    b[0] = aug_attr_string("format", r->format);
    b[1] = aug_attr_ints("canvas_size", canvas, 2);
    b[2] = a[0];
    b[3] = a[1];
    loom_status st = boxes_op(r, "vision.pad_bounding_boxes", b, 4, 1);
    if (st != LOOM_OK)
        return st;
    return image_and_masks(r, "vision.pad", a, n, NULL, NULL, 0);
}

/* vision.crop of (top, left, height, width) on all three */
static loom_status crop(sample_run *r, int64_t top, int64_t left, int64_t height, int64_t width)
{
    loom_named_attr a[4] = { aug_attr_int("top", top), aug_attr_int("left", left), aug_attr_int("height", height),
                             aug_attr_int("width", width) };
    loom_named_attr b[5] = { aug_attr_string("format", r->format), a[0], a[1], a[2], a[3] };
    loom_status st = boxes_op(r, "vision.crop_bounding_boxes", b, 5, 1);
    if (st != LOOM_OK)
        return st;
    return image_and_masks(r, "vision.crop", a, 4, NULL, NULL, 0);
}

static loom_status random_crop(sample_run *r, const sample_step *s)
{
    int64_t p[4] = { 0, 0, 0, 0 };   /* left, top, right, bottom */
    if (s->has_padding)
        memcpy(p, s->padding, sizeof p);
    int64_t ph = r->h + p[1] + p[3], pw = r->w + p[0] + p[2];
    const int64_t ch = s->size[0], cw = s->size[1];
    if (s->pad_if_needed) {
        if (ph < ch) {
            const int64_t diff = ch - ph;
            p[1] += diff;
            p[3] += diff;
            ph += 2 * diff;
        }
        if (pw < cw) {
            const int64_t diff = cw - pw;
            p[0] += diff;
            p[2] += diff;
            pw += 2 * diff;
        }
    }
    if (ph < ch || pw < cw)
        return pk_host->fail(LOOM_EINVAL, "'pipeline'[%d] (RandomCrop): the crop size (%lld, %lld) is larger than the "
                                          "%sinput image size (%lld, %lld)",
                             r->index, (long long)ch, (long long)cw, s->has_padding ? "padded " : "", (long long)ph,
                             (long long)pw);
    int64_t top = 0, left = 0;
    loom_status st;
    if (ph > ch && (st = aug_randint(&r->d, 0, ph - ch + 1, &top)) != LOOM_OK)
        return st;
    if (pw > cw && (st = aug_randint(&r->d, 0, pw - cw + 1, &left)) != LOOM_OK)
        return st;
    if ((p[0] | p[1] | p[2] | p[3]) && (st = pad(r, s, p)) != LOOM_OK)
        return st;
    if (ph > ch || pw > cw)
        return crop(r, top, left, ch, cw);
    return LOOM_OK;
}

static loom_status random_resized_crop(sample_run *r, const sample_step *s)
{
    const double area = (double)(r->h * r->w);
    const float log_lo = logf((float)s->ratio[0]), log_hi = logf((float)s->ratio[1]);
    int64_t top = 0, left = 0, ch = 0, cw = 0, found = 0;
    loom_status st;
    for (int attempt = 0; attempt < 10 && !found; attempt++) {
        float fa, fr;
        if ((st = aug_uniform(&r->d, s->scale[0], s->scale[1], &fa)) != LOOM_OK ||
            (st = aug_uniform(&r->d, log_lo, log_hi, &fr)) != LOOM_OK)
            return st;
        const double target = area * (double)fa, aspect = (double)expf(fr);
        /* compared as doubles first: a huge scale or ratio (or their
        ** inf) is no crop, and never a cast out of int64's range */
        const double wd = nearbyint(sqrt(target * aspect)), hd = nearbyint(sqrt(target / aspect));
        if (wd >= 1 && wd <= (double)r->w && hd >= 1 && hd <= (double)r->h) {
            cw = (int64_t)wd;
            ch = (int64_t)hd;
            if ((st = aug_randint(&r->d, 0, r->h - ch + 1, &top)) != LOOM_OK ||
                (st = aug_randint(&r->d, 0, r->w - cw + 1, &left)) != LOOM_OK)
                return st;
            found = 1;
        }
    }
    if (!found) {   /* torchvision's fallback: a central crop */
        const double in_ratio = (double)r->w / (double)r->h;
        const double rmin = fmin(s->ratio[0], s->ratio[1]), rmax = fmax(s->ratio[0], s->ratio[1]);
        cw = r->w;
        ch = r->h;
        if (in_ratio < rmin)
            ch = (int64_t)nearbyint((double)cw / rmin);
        else if (in_ratio > rmax)
            cw = (int64_t)nearbyint((double)ch * rmax);
        top = (r->h - ch) / 2;
        left = (r->w - cw) / 2;
    }
    loom_named_attr a[7] = { aug_attr_int("top", top), aug_attr_int("left", left), aug_attr_int("height", ch),
                             aug_attr_int("width", cw), aug_attr_ints("size", s->size, 2),
                             aug_attr_string("interpolation", s->interpolation), aug_attr_bool("antialias", s->antialias) };
    loom_named_attr m[6] = { a[0], a[1], a[2], a[3], a[4], aug_attr_string("interpolation", "nearest") };
    loom_named_attr b[6] = { aug_attr_string("format", r->format), a[0], a[1], a[2], a[3], a[4] };
    if ((st = boxes_op(r, "vision.resized_crop_bounding_boxes", b, 6, 1)) != LOOM_OK)
        return st;
    return image_and_masks(r, "vision.resized_crop", a, 7, "vision.resized_crop", m, 6);
}

static loom_status color_jitter(sample_run *r, const sample_step *s)
{
    static const char *const ops[4] = { "vision.adjust_brightness", "vision.adjust_contrast",
                                        "vision.adjust_saturation", "vision.adjust_hue" };
    static const char *const names[4] = { "brightness_factor", "contrast_factor", "saturation_factor", "hue_factor" };
    int64_t perm[4];
    float f[4] = { 0 };
    loom_status st = aug_randperm(&r->d, 4, perm);
    for (int i = 0; i < 4 && st == LOOM_OK; i++)
        if (s->has_jitter[i])
            st = aug_uniform(&r->d, s->jitter[i][0], s->jitter[i][1], &f[i]);
    for (int k = 0; k < 4 && st == LOOM_OK; k++) {
        const int64_t i = perm[k];
        if (!s->has_jitter[i])
            continue;
        loom_named_attr a[1] = { aug_attr_float(names[i], (double)f[i]) };
        loom_tensor *o;
        if ((st = call_op(r, ops[i], r->t[T_IMAGE], NULL, &o, 1, a, 1)) == LOOM_OK)
            set_tensor(r, T_IMAGE, o);
    }
    return st;
}

static loom_status image_only(sample_run *r, const char *op, const loom_named_attr *a, int32_t n)
{
    loom_tensor *o;
    loom_status st = call_op(r, op, r->t[T_IMAGE], NULL, &o, 1, a, n);
    if (st == LOOM_OK)
        set_tensor(r, T_IMAGE, o);
    return st;
}

/* SanitizeBoundingBoxes: boxes and labels kept together; masks with one
** per box ([N, ...]) too, as torchvision indexes every Mask by `valid`. */
static loom_status sanitize(sample_run *r, const sample_step *s)
{
    if (!r->t[T_BOXES])
        return LOOM_OK;
    const int64_t canvas[2] = { r->h, r->w };
    loom_named_attr a[4] = { aug_attr_string("format", r->format), aug_attr_ints("canvas_size", canvas, 2),
                             aug_attr_float("min_size", s->min_size), aug_attr_float("min_area", s->min_area) };
    loom_tensor *o[3];
    loom_status st = call_op(r, "vision.sanitize_bounding_boxes", r->t[T_BOXES], r->t[T_LABELS], o, 3, a, 4);
    if (st != LOOM_OK)
        return st;
    const int64_t n = r->t[T_BOXES]->shape[0];
    set_tensor(r, T_BOXES, o[0]);
    if (r->t[T_LABELS])
        set_tensor(r, T_LABELS, o[1]);
    else
        pk_host->tensor_free(o[1]);
    const loom_tensor *m = r->t[T_MASKS];
    if (m && m->ndim >= 1 && m->shape[0] == n) {
        const uint8_t *valid = loom_data(o[2]);
        int64_t kept = 0;
        for (int64_t i = 0; i < n; i++)
            kept += valid[i] != 0;
        const size_t row = n > 0 ? aug_nbytes(m) / (size_t)n : 0;
        uint8_t *data = pk_host->alloc(m->device, row * (size_t)kept + 1, 64);
        if (!data) {
            pk_host->tensor_free(o[2]);
            return LOOM_ENOMEM;
        }
        for (int64_t i = 0, k = 0; i < n; i++)
            if (valid[i])
                memcpy(data + row * (size_t)k++, (const uint8_t *)loom_data(m) + row * (size_t)i, row);
        const loom_dtype dt = loom_tensor_dtype_of(m);
        const int32_t ndim = m->ndim;
        int64_t *shape = r->view_shapes[T_MASKS];
        int64_t tmp[LOOM_MAX_NDIM];
        memcpy(tmp, m->shape, sizeof(int64_t) * (size_t)ndim);
        tmp[0] = kept;
        drop_tensor(r, T_MASKS);
        memcpy(shape, tmp, sizeof(int64_t) * (size_t)ndim);
        r->views[T_MASKS] = aug_view(data, dt, ndim, shape);
        r->bufs[T_MASKS] = data;
        r->t[T_MASKS] = &r->views[T_MASKS];
        r->own[T_MASKS] = 2;
    }
    pk_host->tensor_free(o[2]);
    return st;
}

/* A grid move of the image (image_op: with the step's interpolation and
** fill), the masks (mask_op: the fill) and the boxes (boxes_op: format,
** canvas; canvas_out: it returns the new canvas), all with the shared
** attributes and the step's center. */
static loom_status grid_move(sample_run *r, const sample_step *s, const loom_named_attr *shared, int32_t n_shared,
                             const char *image_op, const char *mask_op, const char *boxes, int canvas_out)
{
    const int64_t canvas[2] = { r->h, r->w };
    loom_named_attr a[8], m[8], b[8];
    int32_t n = 0, nm = 0, nb = 0;
    for (int32_t i = 0; i < n_shared; i++)
        a[n++] = m[nm++] = b[nb++] = shared[i];
    if (s->has_center)
        a[n++] = m[nm++] = b[nb++] = aug_attr_floats("center", s->center, 2);
    a[n++] = aug_attr_string("interpolation", s->interpolation);
    a[n++] = m[nm++] = aug_attr_floats("fill", s->fill, s->n_fill);
    b[nb++] = aug_attr_string("format", r->format);
    b[nb++] = aug_attr_ints("canvas_size", canvas, 2);
    loom_status st = boxes_op(r, boxes, b, nb, canvas_out);
    if (st != LOOM_OK)
        return st;
    return image_and_masks(r, image_op, a, n, mask_op, m, nm);
}

/* RandomRotation: angle ~ U(degrees); rotate, rotate_mask, rotate_bounding_boxes */
static loom_status random_rotation(sample_run *r, const sample_step *s)
{
    float angle;
    loom_status st = aug_uniform(&r->d, s->degrees[0], s->degrees[1], &angle);
    if (st != LOOM_OK)
        return st;
    const loom_named_attr shared[2] = { aug_attr_float("angle", (double)angle), aug_attr_bool("expand", s->expand) };
    return grid_move(r, s, shared, 2, "vision.rotate", "vision.rotate_mask", "vision.rotate_bounding_boxes", 1);
}

/* RandomAffine: angle, then translate (tx, ty rounded), scale, shear x
** (and y) drawn in torchvision's order */
static loom_status random_affine(sample_run *r, const sample_step *s)
{
    float angle, u;
    double tr[2] = { 0.0, 0.0 }, scale = 1.0, shear[2] = { 0.0, 0.0 };
    loom_status st = aug_uniform(&r->d, s->degrees[0], s->degrees[1], &angle);
    if (st == LOOM_OK && s->has_translate) {
        const double max_dx = s->translate[0] * (double)r->w, max_dy = s->translate[1] * (double)r->h;
        if ((st = aug_uniform(&r->d, -max_dx, max_dx, &u)) == LOOM_OK) {
            tr[0] = nearbyint((double)u);
            if ((st = aug_uniform(&r->d, -max_dy, max_dy, &u)) == LOOM_OK)
                tr[1] = nearbyint((double)u);
        }
    }
    if (st == LOOM_OK && s->has_scale && (st = aug_uniform(&r->d, s->scale[0], s->scale[1], &u)) == LOOM_OK)
        scale = (double)u;
    if (st == LOOM_OK && s->n_shear >= 2 && (st = aug_uniform(&r->d, s->shear[0], s->shear[1], &u)) == LOOM_OK) {
        shear[0] = (double)u;
        if (s->n_shear == 4 && (st = aug_uniform(&r->d, s->shear[2], s->shear[3], &u)) == LOOM_OK)
            shear[1] = (double)u;
    }
    if (st != LOOM_OK)
        return st;
    const loom_named_attr shared[4] = { aug_attr_float("angle", (double)angle), aug_attr_floats("translate", tr, 2),
                                        aug_attr_float("scale", scale), aug_attr_floats("shear", shear, 2) };
    return grid_move(r, s, shared, 4, "vision.affine", "vision.affine_mask", "vision.affine_bounding_boxes", 0);
}

/* RandomPerspective: rand(1) >= p keeps the sample; else the four corners
** drawn x then y, top-left, top-right, bottom-right, bottom-left */
static loom_status random_perspective(sample_run *r, const sample_step *s)
{
    float u;
    loom_status st = aug_rand(&r->d, &u);
    if (st != LOOM_OK || u >= (float)s->p)
        return st;
    const int64_t h = r->h, w = r->w;
    const int64_t bh = (int64_t)(s->distortion_scale * (double)(h / 2)) + 1;
    const int64_t bw = (int64_t)(s->distortion_scale * (double)(w / 2)) + 1;
    const int64_t lo[8] = { 0, 0, w - bw, 0, w - bw, h - bh, 0, h - bh };
    const int64_t hi[8] = { bw, bh, w, bh, w, h, bw, h };
    int64_t end[8];
    for (int i = 0; i < 8; i++)
        if ((st = aug_randint(&r->d, lo[i], hi[i], &end[i])) != LOOM_OK)
            return st;
    const int64_t start[8] = { 0, 0, w - 1, 0, w - 1, h - 1, 0, h - 1 };
    const int64_t canvas[2] = { h, w };
    loom_named_attr a[4] = { aug_attr_ints("startpoints", start, 8), aug_attr_ints("endpoints", end, 8),
                             aug_attr_floats("fill", s->fill, s->n_fill),
                             aug_attr_string("interpolation", s->interpolation) };
    loom_named_attr b[4] = { a[0], a[1], aug_attr_string("format", r->format), aug_attr_ints("canvas_size", canvas, 2) };
    if ((st = boxes_op(r, "vision.perspective_bounding_boxes", b, 4, 0)) != LOOM_OK)
        return st;
    return image_and_masks(r, "vision.perspective", a, 4, "vision.perspective_mask", a, 3);
}

/* RandomZoomOut: rand(1) >= p keeps the sample; else the canvas side ratio
** and the image's place in it (float32 as torchvision's tensor arithmetic),
** then a constant pad */
static loom_status random_zoom_out(sample_run *r, const sample_step *s)
{
    float u, rx, ry;
    loom_status st = aug_rand(&r->d, &u);
    if (st != LOOM_OK || u >= (float)s->p)
        return st;
    if ((st = aug_rand(&r->d, &u)) != LOOM_OK || (st = aug_rand(&r->d, &rx)) != LOOM_OK ||
        (st = aug_rand(&r->d, &ry)) != LOOM_OK)
        return st;
    const float ratio = (float)s->side_range[0] + u * (float)(s->side_range[1] - s->side_range[0]);
    if (!((double)r->w * (double)ratio < (double)INT32_MAX && (double)r->h * (double)ratio < (double)INT32_MAX))
        return pk_host->fail(LOOM_EINVAL, "RandomZoomOut: a canvas of %g times the image (side_range up to %g) is "
                             "too large", (double)ratio, s->side_range[1]);
    const int64_t cw = (int64_t)((float)r->w * ratio), ch = (int64_t)((float)r->h * ratio);
    const int64_t left = (int64_t)((float)(cw - r->w) * rx), top = (int64_t)((float)(ch - r->h) * ry);
    const int64_t padding[4] = { left, top, cw - (left + r->w), ch - (top + r->h) };
    return pad(r, s, padding);
}

/* The augmentations: image only (torchvision refuses boxes and masks), the
** policy drawing from the pipeline's draws, into a buffer of the run. */
static loom_status policy(sample_run *r, const sample_step *s, const char *name)
{
    if (r->t[T_BOXES] || r->t[T_MASKS])
        return pk_host->fail(LOOM_EINVAL, "'pipeline'[%d] (%s): boxes and masks are not supported by the "
                                          "augmentations (as in torchvision)",
                             r->index, name);
    aug_policy q = s->policy;
    q.interpolation = s->interpolation;
    q.fill = s->n_fill ? s->fill : NULL;
    q.n_fill = s->n_fill;
    const loom_tensor *x = r->t[T_IMAGE];
    sample_buffer out;
    loom_status st = buffer_new(r, loom_tensor_dtype_of(x), x->ndim, x->shape, &out);
    if (st == LOOM_OK && (st = aug_policy_apply(r->call->ctx, &q, &r->d, x, &out.view)) != LOOM_OK)
        buffer_discard(r, &out);
    if (st == LOOM_OK)
        buffer_commit(r, T_IMAGE, &out);
    return st;
}

/* RandomErasing: the image alone (torchvision passes boxes and masks
** through, warning), from the pipeline's draws. */
static loom_status random_erasing(sample_run *r, const sample_step *s)
{
    char where[64];
    snprintf(where, sizeof where, "'pipeline'[%d] (RandomErasing): ", r->index);
    const aug_erasing a = { .p = s->p, .scale = { s->scale[0], s->scale[1] }, .ratio = { s->ratio[0], s->ratio[1] },
                            .value = s->n_value ? s->value : NULL, .n_value = s->n_value,
                            .random = s->random_value, .where = where };
    const loom_tensor *x = r->t[T_IMAGE];
    sample_buffer out;
    loom_status st = buffer_new(r, loom_tensor_dtype_of(x), x->ndim, x->shape, &out);
    if (st == LOOM_OK && (st = aug_random_erasing(r->call->ctx, &a, &r->d, x, &out.view)) != LOOM_OK)
        buffer_discard(r, &out);
    if (st == LOOM_OK)
        buffer_commit(r, T_IMAGE, &out);
    return st;
}

/* MixUp and CutMix, as in a Compose over {"image": batch, "labels": [N]}:
** the image is a batch [N, C, H, W] (MixUp: float32, since torchvision
** mixes in the image's dtype in place), 'labels' its [N] int64 classes
** (num_classes given) or, after an earlier mix, [N, K] float32; boxes and
** masks are refused, as torchvision refuses them. The labels come out as
** [N, K] float32, one-hot mixed with the image before in the batch. */
static loom_status mix(sample_run *r, const sample_step *s)
{
    const int cutmix = s->kind == SAMPLE_CUTMIX;
    char where[48];
    snprintf(where, sizeof where, "'pipeline'[%d] (%s): ", r->index, cutmix ? "CutMix" : "MixUp");
    if (r->t[T_BOXES] || r->t[T_MASKS])
        return pk_host->fail(LOOM_EINVAL, "%sdoes not support bounding boxes and masks (as in torchvision)", where);
    const loom_tensor *x = r->t[T_IMAGE], *lab = r->t[T_LABELS];
    if (!lab)
        return pk_host->fail(LOOM_EINVAL, "%s'labels' are needed: the [N] int64 classes of the batch", where);
    if (!cutmix && loom_tensor_dtype_of(x) != LOOM_DTYPE_F32)
        return pk_host->fail(LOOM_EINVAL, "%s'image' must be float32 (torchvision mixes in the image's dtype): "
                                          "ToDtype first", where);
    int64_t k;
    loom_status st = aug_mix_check(where, x, lab, s->num_classes > 0, s->num_classes, &k);
    if (st != LOOM_OK)
        return st;
    sample_buffer img, labels;
    if ((st = buffer_new(r, loom_tensor_dtype_of(x), x->ndim, x->shape, &img)) != LOOM_OK)
        return st;
    if ((st = buffer_new(r, LOOM_DTYPE_F32, 2, (const int64_t[]){ lab->shape[0], k }, &labels)) != LOOM_OK) {
        buffer_discard(r, &img);
        return st;
    }
    if ((st = aug_mix(r->call->ctx, where, cutmix, s->mix_alpha, &r->d, x, lab, k, &img.view,
                      loom_data(&labels.view))) != LOOM_OK) {
        buffer_discard(r, &img);
        buffer_discard(r, &labels);
        return st;
    }
    buffer_commit(r, T_IMAGE, &img);
    buffer_commit(r, T_LABELS, &labels);
    return LOOM_OK;
}

/* ElasticTransform: per axis H x W uniforms (torch.rand) * 2 - 1, blurred
** by vision.gaussian_blur (kernel int(8 sigma + 1), odd), times alpha over
** W (x) or H (y); the displacement moves image, masks and boxes. */
static loom_status elastic(sample_run *r, const sample_step *s)
{
    const int64_t h = r->h, w = r->w, n = h * w;
    float *disp = pk_host->alloc(r->t[T_IMAGE]->device, (size_t)(3 * n) * sizeof(float), 64);
    if (!disp)
        return LOOM_ENOMEM;
    float *noise = disp + 2 * n;
    loom_status st = LOOM_OK;
    int64_t plane_shape[4] = { 1, 1, h, w }, disp_shape[4] = { 1, h, w, 2 };
    for (int a = 0; a < 2 && st == LOOM_OK; a++) {
        for (int64_t i = 0; i < n && st == LOOM_OK; i++) {
            float u;
            st = aug_rand(&r->d, &u);
            noise[i] = u * 2.0f - 1.0f;
        }
        if (st != LOOM_OK)
            break;
        loom_tensor nv = aug_view(noise, LOOM_DTYPE_F32, 4, plane_shape), *blurred = NULL;
        const float *v = noise;
        if (s->sigma[a] > 0.0) {
            int64_t k = (int64_t)(8.0 * s->sigma[a] + 1.0);
            k += k % 2 == 0;
            const int64_t ks[2] = { k, k };
            loom_named_attr ba[2] = { aug_attr_ints("kernel_size", ks, 2), aug_attr_floats("sigma", s->sigma, 2) };
            if ((st = call_op(r, "vision.gaussian_blur", &nv, NULL, &blurred, 1, ba, 2)) != LOOM_OK)
                break;
            v = loom_data(blurred);
        }
        const float alpha = (float)s->alpha[a], size = (float)(a == 0 ? w : h);
        for (int64_t i = 0; i < n; i++)
            disp[2 * i + a] = v[i] * alpha / size;
        if (blurred)
            pk_host->tensor_free(blurred);
    }
    if (st == LOOM_OK) {
        loom_tensor dv = aug_view(disp, LOOM_DTYPE_F32, 4, disp_shape);
        const int64_t canvas[2] = { h, w };
        loom_named_attr a[2] = { aug_attr_floats("fill", s->fill, s->n_fill),
                                 aug_attr_string("interpolation", s->interpolation) };
        loom_named_attr b[2] = { aug_attr_string("format", r->format), aug_attr_ints("canvas_size", canvas, 2) };
        loom_tensor *o;
        if (r->t[T_BOXES] && (st = call_op(r, "vision.elastic_bounding_boxes", r->t[T_BOXES], &dv, &o, 1, b, 2)) == LOOM_OK)
            set_tensor(r, T_BOXES, o);
        if (st == LOOM_OK && r->t[T_MASKS] &&
            (st = call_op(r, "vision.elastic_mask", r->t[T_MASKS], &dv, &o, 1, a, 1)) == LOOM_OK)
            set_tensor(r, T_MASKS, o);
        if (st == LOOM_OK && (st = call_op(r, "vision.elastic", r->t[T_IMAGE], &dv, &o, 1, a, 2)) == LOOM_OK)
            set_tensor(r, T_IMAGE, o);
    }
    pk_host->free(r->t[T_IMAGE]->device, disp);
    return st;
}

/* RandomIoUCrop: an option, then trials of a crop whose size and corner
** come from torch.rand(2) pairs (float32 as torchvision's tensors), until
** one holds the centre of some box overlapping it by the option's IoU; the
** boxes whose centres fall outside are zeroed after the crop. */
static loom_status random_iou_crop(sample_run *r, const sample_step *s)
{
    const loom_tensor *bt = r->t[T_BOXES];
    if (!bt)
        return pk_host->fail(LOOM_EINVAL, "'pipeline'[%d] (RandomIoUCrop): needs 'boxes'", r->index);
    const int64_t n = bt->shape[0], ow = r->w, oh = r->h;
    const int fmt = transforms_box_format(r->format);
    uint8_t *within = pk_host->scratch(r->call->ctx, (size_t)n + 1);
    if (!within)
        return LOOM_ENOMEM;
    loom_status st;
    for (int round = 0; round < 1000; round++) {
        int64_t idx;
        if ((st = aug_randint(&r->d, 0, s->n_options, &idx)) != LOOM_OK)
            return st;
        const double min_iou = s->options[idx];
        if (min_iou >= 1.0)
            return LOOM_OK;
        for (int64_t t = 0; t < s->trials; t++) {
            float u0, u1;
            if ((st = aug_rand(&r->d, &u0)) != LOOM_OK || (st = aug_rand(&r->d, &u1)) != LOOM_OK)
                return st;
            const float span = (float)(s->iou_scale[1] - s->iou_scale[0]), lo = (float)s->iou_scale[0];
            const int64_t nw = (int64_t)((float)ow * (lo + span * u0)), nh = (int64_t)((float)oh * (lo + span * u1));
            if (nh == 0 || !(s->iou_aspect[0] <= (double)nw / (double)nh && (double)nw / (double)nh <= s->iou_aspect[1]))
                continue;
            if ((st = aug_rand(&r->d, &u0)) != LOOM_OK || (st = aug_rand(&r->d, &u1)) != LOOM_OK)
                return st;
            const int64_t left = (int64_t)((float)(ow - nw) * u0), top = (int64_t)((float)(oh - nh) * u1);
            const int64_t right = left + nw, bottom = top + nh;
            if (left == right || top == bottom)
                continue;
            const float cb[4] = { (float)left, (float)top, (float)right, (float)bottom };
            const float crop_area = (cb[2] - cb[0]) * (cb[3] - cb[1]);
            int any = 0;
            float best = -1.0f;
            for (int64_t i = 0; i < n; i++) {
                float q[4];
                memcpy(q, (const float *)loom_data(bt) + 4 * i, sizeof q);
                transforms_box_convert(q, fmt, 0);
                const float cx = 0.5f * (q[0] + q[2]), cy = 0.5f * (q[1] + q[3]);
                within[i] = cb[0] < cx && cx < cb[2] && cb[1] < cy && cy < cb[3];
                if (!within[i])
                    continue;
                any = 1;
                const float area = (q[2] - q[0]) * (q[3] - q[1]);
                const float iw = fminf(q[2], cb[2]) - fmaxf(q[0], cb[0]);
                const float ih = fminf(q[3], cb[3]) - fmaxf(q[1], cb[1]);
                const float inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
                const float iou = inter / (area + crop_area - inter);
                best = iou > best ? iou : best;
            }
            if (!any || best < (float)min_iou)
                continue;
            if ((st = crop(r, top, left, nh, nw)) != LOOM_OK)
                return st;
            float *b = loom_data(r->t[T_BOXES]);
            for (int64_t i = 0; i < n; i++)
                if (!within[i])
                    memset(b + 4 * i, 0, 4 * sizeof(float));
            return LOOM_OK;
        }
    }
    return pk_host->fail(LOOM_EINVAL, "'pipeline'[%d] (RandomIoUCrop): no crop found in 1000 rounds of options",
                         r->index);
}

static loom_status run_step(sample_run *r, const sample_step *s)
{
    const int64_t canvas[2] = { r->h, r->w };
    switch (s->kind) {
    case SAMPLE_HFLIP:
        return flip(r, s, 1);
    case SAMPLE_VFLIP:
        return flip(r, s, 0);
    case SAMPLE_RESIZE:
        return resize(r, s);
    case SAMPLE_CENTER_CROP:
        return center_crop(r, s);
    case SAMPLE_RANDOM_CROP:
        return random_crop(r, s);
    case SAMPLE_RANDOM_RESIZED_CROP:
        return random_resized_crop(r, s);
    case SAMPLE_PAD:
        return pad(r, s, s->padding);
    case SAMPLE_COLOR_JITTER:
        return color_jitter(r, s);
    case SAMPLE_NORMALIZE: {
        loom_named_attr a[2] = { aug_attr_floats("mean", s->mean, s->n_mean), aug_attr_floats("std", s->std, s->n_std) };
        return image_only(r, "vision.normalize", a, 2);
    }
    case SAMPLE_TO_DTYPE: {
        loom_named_attr a[2] = { aug_attr_string("dtype", s->dtype), aug_attr_bool("scale", s->scale_values) };
        return image_only(r, "vision.to_dtype", a, 2);
    }
    case SAMPLE_CLAMP_BOXES: {
        loom_named_attr a[2] = { aug_attr_string("format", r->format), aug_attr_ints("canvas_size", canvas, 2) };
        return boxes_op(r, "vision.clamp_bounding_boxes", a, 2, 0);
    }
    case SAMPLE_SANITIZE_BOXES:
        return sanitize(r, s);
    case SAMPLE_RANDOM_ROTATION:
        return random_rotation(r, s);
    case SAMPLE_RANDOM_AFFINE:
        return random_affine(r, s);
    case SAMPLE_RANDOM_PERSPECTIVE:
        return random_perspective(r, s);
    case SAMPLE_RANDOM_ZOOM_OUT:
        return random_zoom_out(r, s);
    case SAMPLE_ELASTIC:
        return elastic(r, s);
    case SAMPLE_RANDOM_IOU_CROP:
        return random_iou_crop(r, s);
    case SAMPLE_RANDOM_ERASING:
        return random_erasing(r, s);
    case SAMPLE_MIXUP:
    case SAMPLE_CUTMIX:
        return mix(r, s);
    case SAMPLE_POLICY: {
        static const char *const names[] = { "RandAugment", "TrivialAugmentWide", "AutoAugment", "AugMix" };
        return policy(r, s, names[s->policy.kind]);
    }
    }
    return LOOM_EINVAL;
}

/* The result k into output k: the tensor, or an empty one of its kind. */
static loom_status emit(sample_run *r, int k, loom_dtype empty_dtype, int32_t empty_ndim, const int64_t *empty_shape)
{
    const loom_tensor *t = r->t[k];
    loom_tensor *out;
    loom_status st = t ? pk_host->alloc_output(r->call, k, loom_tensor_dtype_of(t), t->ndim, t->shape, &out)
                       : pk_host->alloc_output(r->call, k, empty_dtype, empty_ndim, empty_shape, &out);
    if (st == LOOM_OK && t && loom_numel(t) > 0)
        memcpy(loom_data(out), loom_data(t), aug_nbytes(t));
    return st;
}

loom_status vision_transform_sample_cpu(loom_call *call)
{
    const loom_tensor *x = call->inputs[0], *boxes = call->inputs[1], *masks = call->inputs[2];
    const loom_tensor *labels = call->inputs[3];
    char b1[160], b2[160];
    if (x->ndim < 3 || x->shape[x->ndim - 2] == 0 || x->shape[x->ndim - 1] == 0)
        return pk_host->fail(LOOM_EINVAL, "'image' %s must be [..., C, H, W] with pixels", vision_describe(x, b1, sizeof b1));
    if (boxes && (boxes->ndim != 2 || boxes->shape[1] != 4))
        return pk_host->fail(LOOM_EINVAL, "'boxes' %s must be [N, 4]", vision_describe(boxes, b1, sizeof b1));
    if (masks && (masks->ndim < 2 || masks->shape[masks->ndim - 2] != x->shape[x->ndim - 2] ||
                  masks->shape[masks->ndim - 1] != x->shape[x->ndim - 1]))
        return pk_host->fail(LOOM_EINVAL, "'masks' %s must be [..., H, W] of 'image' %s",
                             vision_describe(masks, b1, sizeof b1), vision_describe(x, b2, sizeof b2));
    sample_pipeline p;
    loom_status st = sample_pipeline_parse(call->attrs[PK_ATTR(transform_sample, pipeline)].u.s, &p);
    if (st != LOOM_OK)
        return st;
    int batch_labels = 0;   /* MixUp / CutMix: the labels are the images' */
    for (int i = 0; i < p.n; i++)
        batch_labels |= p.steps[i].kind == SAMPLE_MIXUP || p.steps[i].kind == SAMPLE_CUTMIX;
    if (labels && !batch_labels && (!boxes || labels->ndim < 1 || labels->shape[0] != boxes->shape[0])) {
        sample_pipeline_free(&p);
        return pk_host->fail(LOOM_EINVAL, "'labels' %s must have one row per box of 'boxes' (or, with MixUp or "
                                          "CutMix, one class per image)",
                             vision_describe(labels, b1, sizeof b1));
    }
    sample_run r;
    memset(&r, 0, sizeof r);
    r.call = call;
    r.format = call->attrs[PK_ATTR(transform_sample, format)].u.s;
    aug_draws_init(&r.d, call->inputs[4], call->attrs[PK_ATTR(transform_sample, seed)].u.i);
    r.t[T_IMAGE] = (loom_tensor *)x;
    r.t[T_BOXES] = (loom_tensor *)boxes;
    r.t[T_MASKS] = (loom_tensor *)masks;
    r.t[T_LABELS] = (loom_tensor *)labels;
    canvas_from_image(&r);
    for (int i = 0; i < p.n && st == LOOM_OK; i++) {
        r.index = i;
        st = run_step(&r, &p.steps[i]);
    }
    sample_pipeline_free(&p);
    if (st == LOOM_OK)
        st = emit(&r, T_IMAGE, LOOM_DTYPE_U8, 0, NULL);
    if (st == LOOM_OK)
        st = emit(&r, T_BOXES, LOOM_DTYPE_F32, 2, (const int64_t[]){ 0, 4 });
    if (st == LOOM_OK)
        st = emit(&r, T_MASKS, LOOM_DTYPE_U8, 3, (const int64_t[]){ 0, r.h, r.w });
    if (st == LOOM_OK)
        st = emit(&r, T_LABELS, LOOM_DTYPE_I64, 1, (const int64_t[]){ 0 });
    for (int k = 0; k < T_N; k++)
        drop_tensor(&r, k);
    return st;
}
