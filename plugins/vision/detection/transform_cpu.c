/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transform_cpu.c - vision.rcnn_transform and vision.rcnn_resize:
** torchvision's GeneralizedRCNNTransform in eval mode.
**
** Per image: normalize ((x - mean) / std in float32, as torchvision's
** normalize), then resize (the size of det_resized_size, the pixels by
** vision.resize, dispatched: bilinear without antialias, which is
** interpolate(scale_factor, recompute_scale_factor=True), since the
** recomputed scale is in / out, the same as for an explicit size), then
** batch_images: one zero-filled [B, C, H', W'] with H', W' the largest
** height and width rounded up to size_divisible, each image at the top left.
** Images of different sizes may share a list, as torchvision allows.
*/
#include <math.h>
#include <string.h>

#include "detection.h"

static const double imagenet_mean[3] = { 0.485, 0.456, 0.406 };
static const double imagenet_std[3] = { 0.229, 0.224, 0.225 };

loom_status det_resized_size(const char *op, int64_t index, int64_t h, int64_t w, int64_t min_size,
                             int64_t max_size, int64_t out[2])
{
    if (h <= 0 || w <= 0)
        return pk_host->fail(LOOM_EINVAL, "%s: image %lld is %lld x %lld; an image needs at least one pixel",
                             op, (long long)index, (long long)h, (long long)w);
    /* Python: min(float(min_size) / min(shape), float(max_size) / max(shape)), then
    ** interpolate's floor(float(size) * scale) */
    const double shorter = (double)(h < w ? h : w), longer = (double)(h < w ? w : h);
    const double a = (double)min_size / shorter, b = (double)max_size / longer;
    const double scale = a < b ? a : b;
    out[0] = (int64_t)floor((double)h * scale);
    out[1] = (int64_t)floor((double)w * scale);
    if (out[0] <= 0 || out[1] <= 0)
        return pk_host->fail(LOOM_EINVAL,
                             "%s: image %lld (%lld x %lld) would be resized to %lld x %lld with min_size %lld and "
                             "max_size %lld; raise max_size",
                             op, (long long)index, (long long)h, (long long)w, (long long)out[0], (long long)out[1],
                             (long long)min_size, (long long)max_size);
    return LOOM_OK;
}

/* vision.resize of the compact f32 [c, h, w] at src into [c, size[0], size[1]] at dst. */
static loom_status resize_plane_stack(loom_call *call, const loom_op *resize, const float *src, int64_t c, int64_t h,
                                      int64_t w, const int64_t size[2], float *dst)
{
    int64_t in_shape[3] = { c, h, w }, out_shape[3] = { c, size[0], size[1] };
    loom_tensor in = { .data = (void *)src, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 3,
                       .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = in_shape };
    loom_tensor out = { .data = dst, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 3, .dtype = { LOOM_DL_FLOAT, 32, 1 },
                        .shape = out_shape };
    const loom_tensor *ins[1] = { &in };
    loom_tensor *outs[1] = { &out };
    const loom_named_attr attrs[3] = {
        { "size", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 2, .u = { .ints = size } } },
        { "interpolation", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 8, .u = { .s = "bilinear" } } },
        { "antialias", { .type = LOOM_ATTR_BOOL, .is_set = 1, .count = 1, .u = { .b = 0 } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = resize, .n_inputs = 1, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 3, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

static loom_status find_resize(const loom_op **out)
{
    if ((*out = pk_host->op_find("vision.resize")) == NULL)
        return pk_host->fail(LOOM_ENOTSUP, "vision.resize is not registered; the detection transform needs it");
    return LOOM_OK;
}

loom_status vision_rcnn_resize_cpu(loom_call *call)
{
    const loom_tensor *img = call->inputs[0];
    const int64_t min_size = call->attrs[PK_ATTR(rcnn_size, min_size)].u.i;
    const int64_t max_size = call->attrs[PK_ATTR(rcnn_size, max_size)].u.i;
    int64_t size[2];
    loom_status st = det_resized_size("vision.rcnn_resize", 0, img->shape[1], img->shape[2], min_size, max_size, size);
    if (st != LOOM_OK)
        return st;
    const loom_op *resize;
    loom_tensor *out;
    const int64_t shape[3] = { img->shape[0], size[0], size[1] };
    if ((st = find_resize(&resize)) != LOOM_OK || (st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 3, shape, &out)))
        return st;
    if (img->shape[0] == 0)
        return LOOM_OK;
    return resize_plane_stack(call, resize, loom_data(img), img->shape[0], img->shape[1], img->shape[2], size,
                              loom_data(out));
}

/* One image of the list: where its values start, its channels and size. */
typedef struct transform_image {
    const float *src;
    int64_t c, h, w;
    int64_t size[2];     /* after the resize */
} transform_image;

/* The images of the jagged list, checked: offsets non-decreasing within
** the values, each image c x h x w with c the channels of mean and std. */
static loom_status read_images(const loom_call *call, int64_t n_channels, transform_image *im, int64_t b)
{
    const loom_tensor *values = call->inputs[0];
    const int64_t *off = loom_data(call->inputs[1]), *sizes = loom_data(call->inputs[2]);
    const int64_t n_values = values->shape[0];
    const int64_t min_size = call->attrs[PK_ATTR(rcnn_transform, min_size)].u.i;
    const int64_t max_size = call->attrs[PK_ATTR(rcnn_transform, max_size)].u.i;
    if (off[0] != 0 || off[b] != n_values)
        return pk_host->fail(LOOM_EINVAL,
                             "vision.rcnn_transform: images_offsets run from %lld to %lld; they must run from 0 to "
                             "the %lld values of images",
                             (long long)off[0], (long long)off[b], (long long)n_values);
    for (int64_t i = 0; i < b; i++) {
        const int64_t h = sizes[2 * i], w = sizes[2 * i + 1], n = off[i + 1] - off[i];
        if (off[i + 1] < off[i])
            return pk_host->fail(LOOM_EINVAL, "vision.rcnn_transform: images_offsets decrease at image %lld",
                                 (long long)i);
        loom_status st = det_resized_size("vision.rcnn_transform", i, h, w, min_size, max_size, im[i].size);
        if (st != LOOM_OK)
            return st;
        if (h > INT64_MAX / w || n / (h * w) != n_channels || n % (h * w) != 0)
            return pk_host->fail(LOOM_EINVAL,
                                 "vision.rcnn_transform: image %lld has %lld values; a [%lld, %lld, %lld] image "
                                 "(channels of image_mean and image_std) has %lld",
                                 (long long)i, (long long)n, (long long)n_channels, (long long)h, (long long)w,
                                 h <= INT64_MAX / w / n_channels ? (long long)(n_channels * h * w) : -1LL);
        im[i].src = (const float *)loom_data(values) + off[i];
        im[i].c = n_channels;
        im[i].h = h;
        im[i].w = w;
    }
    return LOOM_OK;
}

/* The mean and std of the call, as torch.as_tensor(..., float32) has them. */
static loom_status read_mean_std(const loom_call *call, float *mean, float *std, int64_t *n_channels)
{
    const loom_attr_value *m = &call->attrs[PK_ATTR(rcnn_transform, image_mean)];
    const loom_attr_value *s = &call->attrs[PK_ATTR(rcnn_transform, image_std)];
    const int64_t nm = m->is_set ? m->count : 3, ns = s->is_set ? s->count : 3;
    if (nm != ns || nm < 1 || nm > 16)
        return pk_host->fail(LOOM_EINVAL,
                             "vision.rcnn_transform: image_mean has %lld values and image_std %lld; give one per "
                             "channel (1 to 16), the same count",
                             (long long)nm, (long long)ns);
    for (int64_t c = 0; c < nm; c++) {
        mean[c] = (float)(m->is_set ? m->u.floats[c] : imagenet_mean[c]);
        std[c] = (float)(s->is_set ? s->u.floats[c] : imagenet_std[c]);
        if (std[c] == 0.0f)
            return pk_host->fail(LOOM_EINVAL, "vision.rcnn_transform: image_std[%lld] is 0 in float32", (long long)c);
    }
    *n_channels = nm;
    return LOOM_OK;
}

static int64_t round_up(int64_t v, int64_t d)
{
    return (v + d - 1) / d * d;
}

loom_status vision_rcnn_transform_cpu(loom_call *call)
{
    const loom_tensor *sizes_t = call->inputs[2];
    const int64_t b = call->inputs[1]->shape[0] - 1;
    if (b < 1)
        return pk_host->fail(LOOM_EINVAL, "vision.rcnn_transform: the image list is empty (images_offsets has %lld "
                             "entries); give at least one image", (long long)call->inputs[1]->shape[0]);
    if (sizes_t->shape[0] != b || sizes_t->shape[1] != 2)
        return pk_host->fail(LOOM_EINVAL, "vision.rcnn_transform: original_sizes is [%lld, %lld]; expected [%lld, 2] "
                             "for the %lld images of images_offsets",
                             (long long)sizes_t->shape[0], (long long)sizes_t->shape[1], (long long)b, (long long)b);
    float mean[16], std[16];
    int64_t c = 0;
    loom_status st = read_mean_std(call, mean, std, &c);
    if (st != LOOM_OK)
        return st;
    transform_image *im = pk_host->scratch(call->ctx, (size_t)b * sizeof *im);
    if (im == NULL)
        return LOOM_ENOMEM;
    if ((st = read_images(call, c, im, b)) != LOOM_OK)
        return st;
    const int64_t div = call->attrs[PK_ATTR(rcnn_transform, size_divisible)].u.i;
    int64_t hmax = 0, wmax = 0, in_max = 0, out_max = 0;
    for (int64_t i = 0; i < b; i++) {
        hmax = im[i].size[0] > hmax ? im[i].size[0] : hmax;
        wmax = im[i].size[1] > wmax ? im[i].size[1] : wmax;
        in_max = im[i].h * im[i].w > in_max ? im[i].h * im[i].w : in_max;
        out_max = im[i].size[0] * im[i].size[1] > out_max ? im[i].size[0] * im[i].size[1] : out_max;
    }
    const int64_t shape[4] = { b, c, round_up(hmax, div), round_up(wmax, div) };
    const int64_t size_shape[2] = { b, 2 };
    loom_tensor *out, *out_sizes;
    const loom_op *resize;
    if ((st = find_resize(&resize)) != LOOM_OK || (st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, &out))
        || (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_I64, 2, size_shape, &out_sizes)))
        return st;
    float *norm = pk_host->scratch(call->ctx, (size_t)(c * in_max) * sizeof(float));
    float *resized = pk_host->scratch(call->ctx, (size_t)(c * out_max) * sizeof(float));
    if (norm == NULL || resized == NULL)
        return LOOM_ENOMEM;
    float *dst = loom_data(out);
    int64_t *dst_sizes = loom_data(out_sizes);
    memset(dst, 0, (size_t)(b * c * shape[2] * shape[3]) * sizeof(float));
    for (int64_t i = 0; i < b; i++) {
        const int64_t plane = im[i].h * im[i].w, oh = im[i].size[0], ow = im[i].size[1];
        for (int64_t k = 0; k < c; k++)
            for (int64_t p = 0; p < plane; p++)
                norm[k * plane + p] = (im[i].src[k * plane + p] - mean[k]) / std[k];
        if ((st = resize_plane_stack(call, resize, norm, c, im[i].h, im[i].w, im[i].size, resized)) != LOOM_OK)
            return st;
        for (int64_t k = 0; k < c; k++)
            for (int64_t y = 0; y < oh; y++)
                memcpy(dst + ((i * c + k) * shape[2] + y) * shape[3], resized + (k * oh + y) * ow,
                       (size_t)ow * sizeof(float));
        dst_sizes[2 * i] = oh;
        dst_sizes[2 * i + 1] = ow;
    }
    return LOOM_OK;
}
