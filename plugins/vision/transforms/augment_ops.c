/* SPDX-License-Identifier: BSD-3-Clause */
/*
** augment_ops.c - the augmentation spaces of torchvision.transforms.v2
** (_auto_augment.py: the ops in dict order, their magnitude tables in
** float32 as torch.linspace and torch.arange build them) and
** _apply_image_or_video_transform: each op is a call of this module's own
** kernel (vision.affine, vision.equalize, ...) through host->op_call, with
** torchvision's arguments.
*/
#include <math.h>
#include <string.h>

#include "augment.h"

static const aug_op rand_ops[] = { AUG_IDENTITY,   AUG_SHEAR_X,    AUG_SHEAR_Y,   AUG_TRANSLATE_X, AUG_TRANSLATE_Y,
                                   AUG_ROTATE,     AUG_BRIGHTNESS, AUG_COLOR,     AUG_CONTRAST,    AUG_SHARPNESS,
                                   AUG_POSTERIZE,  AUG_SOLARIZE,   AUG_AUTOCONTRAST, AUG_EQUALIZE };
static const aug_op augmix_ops[] = { AUG_SHEAR_X,  AUG_SHEAR_Y,   AUG_TRANSLATE_X, AUG_TRANSLATE_Y, AUG_ROTATE,
                                     AUG_POSTERIZE, AUG_SOLARIZE, AUG_AUTOCONTRAST, AUG_EQUALIZE,   AUG_BRIGHTNESS,
                                     AUG_COLOR,     AUG_CONTRAST, AUG_SHARPNESS };

const aug_space aug_space_rand = { rand_ops, 14, AUG_SPACE_AUTO };
const aug_space aug_space_wide = { rand_ops, 14, AUG_SPACE_WIDE };
const aug_space aug_space_augmix = { augmix_ops, 13, AUG_SPACE_AUGMIX };
const aug_space aug_space_augmix_partial = { augmix_ops, 9, AUG_SPACE_AUGMIX_PARTIAL };

int aug_has_magnitude(aug_op op)
{
    return !(op == AUG_IDENTITY || op == AUG_AUTOCONTRAST || op == AUG_EQUALIZE || op == AUG_INVERT);
}

int aug_signed(const aug_space *space, aug_op op)
{
    (void)space;
    return aug_has_magnitude(op) && op != AUG_POSTERIZE && op != AUG_SOLARIZE;
}

/* torch.linspace(start, end, n)[i] in float32 */
static double linspace_at(double start, double end, int64_t n, int64_t i)
{
    float buf[1024];
    transforms_linspace((float)start, (float)end, n, buf);
    return (double)buf[i];
}

/* (top - torch.arange(n) / ((n - 1) / div)).round().int()[i] */
static double posterize_at(double top, double div, int64_t n, int64_t i)
{
    const float q = (float)i / (float)(((double)n - 1.0) / div);
    return (double)(int)rintf((float)top - q);
}

double aug_magnitude(const aug_space *space, aug_op op, int64_t n, int64_t bin, int64_t h, int64_t w)
{
    const int wide = space->kind == AUG_SPACE_WIDE;
    const int augmix = space->kind == AUG_SPACE_AUGMIX || space->kind == AUG_SPACE_AUGMIX_PARTIAL;
    switch (op) {
    case AUG_SHEAR_X:
    case AUG_SHEAR_Y:
        return linspace_at(0.0, wide ? 0.99 : 0.3, n, bin);
    case AUG_TRANSLATE_X:
        return linspace_at(0.0, wide ? 32.0 : augmix ? (double)w / 3.0 : 150.0 / 331.0 * (double)w, n, bin);
    case AUG_TRANSLATE_Y:
        return linspace_at(0.0, wide ? 32.0 : augmix ? (double)h / 3.0 : 150.0 / 331.0 * (double)h, n, bin);
    case AUG_ROTATE:
        return linspace_at(0.0, wide ? 135.0 : 30.0, n, bin);
    case AUG_BRIGHTNESS:
    case AUG_COLOR:
    case AUG_CONTRAST:
    case AUG_SHARPNESS:
        return linspace_at(0.0, wide ? 0.99 : 0.9, n, bin);
    case AUG_POSTERIZE:
        return posterize_at(augmix ? 4.0 : 8.0, wide ? 6.0 : 4.0, n, bin);
    case AUG_SOLARIZE:
        return linspace_at(1.0, 0.0, n, bin);
    default:
        return 0.0;
    }
}

loom_status aug_kernels_find(aug_kernels *k)
{
    static const char *const names[] = { "vision.affine",          "vision.rotate",        "vision.adjust_brightness",
                                         "vision.adjust_saturation", "vision.adjust_contrast", "vision.adjust_sharpness",
                                         "vision.posterize",       "vision.solarize",      "vision.autocontrast",
                                         "vision.equalize",        "vision.invert" };
    const loom_op **slots[] = { &k->affine,    &k->rotate,   &k->brightness,   &k->saturation,
                                &k->contrast,  &k->sharpness, &k->posterize,   &k->solarize,
                                &k->autocontrast, &k->equalize, &k->invert };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((*slots[i] = pk_host->op_find(names[i])) == NULL)
            return LOOM_ENOENT;
    return LOOM_OK;
}

loom_tensor aug_view(void *data, loom_dtype dtype, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim, .dtype = pk_host->dtype_to_dl(dtype),
                      .shape = shape, .strides = NULL, .byte_offset = 0 };
    return t;
}

static loom_status call_op(loom_exec_ctx *ctx, const loom_op *op, const loom_tensor *src, loom_tensor *dst,
                           const loom_named_attr *attrs, int32_t n_attrs)
{
    loom_tensor *outs[1] = { dst };
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = 1, .inputs = &src, .n_outputs = 1,
                        .outputs = outs, .n_attrs = n_attrs, .attrs = attrs, .backend = "cpu" };
    return pk_host->op_call(ctx, &oc);
}

loom_status aug_apply(loom_exec_ctx *ctx, const aug_kernels *k, aug_op op, double magnitude, const aug_apply_args *a,
                      const loom_tensor *src, loom_tensor *dst)
{
    static const double zero2[2] = { 0.0, 0.0 };
    loom_named_attr at[8];
    int32_t n = 0;
    switch (op) {
    case AUG_IDENTITY:
        memcpy(loom_data(dst), loom_data(src), aug_nbytes(src));
        return LOOM_OK;
    case AUG_SHEAR_X:
    case AUG_SHEAR_Y:
    case AUG_TRANSLATE_X:
    case AUG_TRANSLATE_Y: {
        /* shear: degrees(atan(m)) about the top-left corner; translate: int(m) pixels */
        const int shear = op == AUG_SHEAR_X || op == AUG_SHEAR_Y;
        const double deg = atan(magnitude) * (180.0 / M_PI);
        const double sh[2] = { op == AUG_SHEAR_X ? deg : 0.0, op == AUG_SHEAR_Y ? deg : 0.0 };
        const double tr[2] = { op == AUG_TRANSLATE_X ? trunc(magnitude) : 0.0,
                               op == AUG_TRANSLATE_Y ? trunc(magnitude) : 0.0 };
        at[n++] = aug_attr_float("angle", 0.0);
        at[n++] = aug_attr_floats("translate", shear ? zero2 : tr, 2);
        at[n++] = aug_attr_float("scale", 1.0);
        at[n++] = aug_attr_floats("shear", shear ? sh : zero2, 2);
        at[n++] = aug_attr_string("interpolation", a->interpolation);
        if (shear)
            at[n++] = aug_attr_floats("center", zero2, 2);
        if (a->n_fill > 0)
            at[n++] = aug_attr_floats("fill", a->fill, a->n_fill);
        return call_op(ctx, k->affine, src, dst, at, n);
    }
    case AUG_ROTATE:
        at[n++] = aug_attr_float("angle", magnitude);
        at[n++] = aug_attr_string("interpolation", a->interpolation);
        if (a->n_fill > 0)
            at[n++] = aug_attr_floats("fill", a->fill, a->n_fill);
        return call_op(ctx, k->rotate, src, dst, at, n);
    case AUG_BRIGHTNESS:
        at[n++] = aug_attr_float("brightness_factor", 1.0 + magnitude);
        return call_op(ctx, k->brightness, src, dst, at, n);
    case AUG_COLOR:
        at[n++] = aug_attr_float("saturation_factor", 1.0 + magnitude);
        return call_op(ctx, k->saturation, src, dst, at, n);
    case AUG_CONTRAST:
        at[n++] = aug_attr_float("contrast_factor", 1.0 + magnitude);
        return call_op(ctx, k->contrast, src, dst, at, n);
    case AUG_SHARPNESS:
        at[n++] = aug_attr_float("sharpness_factor", 1.0 + magnitude);
        return call_op(ctx, k->sharpness, src, dst, at, n);
    case AUG_POSTERIZE:
        at[n++] = aug_attr_int("bits", (int64_t)magnitude);
        return call_op(ctx, k->posterize, src, dst, at, n);
    case AUG_SOLARIZE: {
        const double bound = loom_tensor_dtype_of(src) == LOOM_DTYPE_U8 ? 255.0 : 1.0;
        at[n++] = aug_attr_float("threshold", bound * magnitude);
        return call_op(ctx, k->solarize, src, dst, at, n);
    }
    case AUG_AUTOCONTRAST:
        return call_op(ctx, k->autocontrast, src, dst, at, 0);
    case AUG_EQUALIZE:
        return call_op(ctx, k->equalize, src, dst, at, 0);
    case AUG_INVERT:
        return call_op(ctx, k->invert, src, dst, at, 0);
    }
    return LOOM_EINVAL;
}
