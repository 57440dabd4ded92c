/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rcnn_backbone.c - the detectors' backbone (rcnn_backbone.h): the keys
**   backbone.body.*                              the body (resnet_load under
**                                                the key prefix;
**                                                num_batches_tracked optional,
**                                                as a FrozenBatchNorm2d has none)
**   backbone.fpn.inner_blocks.<i>.0 / layer_blocks.<i>.0   the FPN convs
**                                                (norm: without bias,
**                                                BatchNorm2d in .1)
**   backbone.fpn.extra_blocks.p6 / p7            LastLevelP6P7's convs
** and the forward: the body's stage outputs, the FPN top-down (1x1 inner
** convs whose residual is the coarser level's vision.resize nearest
** upsampling, 3x3 layer convs), then the extra block; plus the calls and
** the input list the detection forwards share.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rcnn_backbone.h"
#ifdef LOOM_VISION_HAVE_ONEDNN
#include "onednn_net.h"
#endif

/* ---------------------------------------------------------------- calls */

loom_status rcnn_call_op(loom_call *call, const loom_op *op, const loom_tensor *const *ins, int32_t n_ins,
                         loom_tensor **outs, int32_t n_outs, const loom_named_attr *attrs, int32_t n_attrs)
{
    for (int32_t i = 0; i < n_outs; i++)
        outs[i] = NULL;
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = n_ins, .inputs = ins, .n_outputs = n_outs,
                        .outputs = outs, .n_attrs = n_attrs, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

void rcnn_free_all(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++) {
        if (t[i] != NULL)
            pk_host->tensor_free(t[i]);
        t[i] = NULL;
    }
}

loom_status rcnn_conv(loom_call *call, const rcnn_backbone *b, const model_conv *c, const loom_tensor *x,
                      const loom_tensor *residual, const char *act, loom_tensor **out)
{
    int64_t ws[4] = { c->cout, c->cin / c->groups, c->k, c->k }, bs[1] = { c->cout };
    loom_tensor tw = model_view(c->weight, 4, ws), tb = model_view(c->bias, 1, bs);
    const loom_tensor *ins[4] = { x, &tw, &tb, residual };
    const int64_t stride = c->stride, pad = c->pad;
    const loom_named_attr attrs[4] = { rcnn_ints_attr("stride", &stride, 1), rcnn_ints_attr("padding", &pad, 1),
                                       rcnn_int_attr("groups", c->groups), rcnn_string_attr("activation", act) };
    return rcnn_call_op(call, b->conv2d, ins, 4, out, 1, attrs, 4);
}

loom_status rcnn_max_pool(loom_call *call, const rcnn_backbone *b, const loom_tensor *x, int64_t k, int64_t stride,
                          int64_t pad, loom_tensor **out)
{
    const loom_named_attr attrs[3] = { rcnn_ints_attr("kernel_size", &k, 1), rcnn_ints_attr("stride", &stride, 1),
                                       rcnn_ints_attr("padding", &pad, 1) };
    return rcnn_call_op(call, b->max_pool, &x, 1, out, 1, attrs, 3);
}

loom_status rcnn_copy_out(loom_call *call, int32_t i, const loom_tensor *t)
{
    loom_tensor *o;
    loom_status st = pk_host->alloc_output(call, i, loom_tensor_dtype_of(t), t->ndim, t->shape, &o);
    if (st == LOOM_OK && loom_numel(t) > 0)
        memcpy(loom_data(o), loom_data(t), (size_t)loom_numel(t) * (size_t)(t->dtype.bits / 8));
    return st;
}

/* --------------------------------------------------------------- loading */

loom_status rcnn_load_conv_bias(model_loader *L, const char *prefix, model_conv *c)
{
    const int64_t ws[4] = { c->cout, c->cin / c->groups, c->k, c->k }, bs[1] = { c->cout };
    const loom_tensor *w, *b;
    char p[96];
    snprintf(p, sizeof p, "%s.", prefix);
    loom_status st = model_expect(L, p, "weight", LOOM_DTYPE_F32, 4, ws, &w);
    if (st == LOOM_OK)
        st = model_expect(L, p, "bias", LOOM_DTYPE_F32, 1, bs, &b);
    if (st != LOOM_OK)
        return st;
    const size_t nw = (size_t)loom_numel(w);
    c->weight = malloc(nw * sizeof(float));
    c->bias = malloc((size_t)c->cout * sizeof(float));
    if (c->weight == NULL || c->bias == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory loading '%s'", L->cls, prefix);
    memcpy(c->weight, loom_data(w), nw * sizeof(float));
    memcpy(c->bias, loom_data(b), (size_t)c->cout * sizeof(float));
    return LOOM_OK;
}

loom_status rcnn_load_conv_norm(model_loader *L, const char *prefix, int bn, model_conv *c)
{
    char cp[96], bp[96];
    snprintf(cp, sizeof cp, "%s.0", prefix);
    snprintf(bp, sizeof bp, "%s.1", prefix);
    return bn ? model_load_conv_bn(L, cp, bp, c) : rcnn_load_conv_bias(L, cp, c);
}

const loom_tensor *rcnn_file_tensor(const model_loader *L, const char *key)
{
    const loom_tensor *t = NULL;
    if (!model_file_has(L->st, key) || pk_host->safetensors_get(L->st, key, &t) != LOOM_OK)
        return NULL;
    return t;
}

int64_t rcnn_frozen_bn_params(const model_loader *L)
{
    static const char body[] = "backbone.body.", mean[] = ".running_mean";
    int64_t n = 0;
    for (int k = 0; k < L->n_keys; k++) {
        const model_key_spec *s = &L->keys[k];
        const size_t len = strlen(s->name);
        if (strncmp(s->name, body, sizeof body - 1) != 0 || len <= sizeof mean
            || strcmp(s->name + len - (sizeof mean - 1), mean) != 0)
            continue;
        char nbt[sizeof s->name + 16];
        snprintf(nbt, sizeof nbt, "%.*snum_batches_tracked", (int)(len - (sizeof mean - 2)), s->name);
        if (!model_file_has(L->st, nbt))
            n += 2 * s->shape[0];
    }
    return n;
}

/* The output channels of body stage s. */
static int64_t stage_channels(const rcnn_backbone *b, int s)
{
    if (b->body_kind == RCNN_BODY_MOBILENET_V3)
        return b->mnv3->returned_channels[s - (RCNN_BODY_STAGES - MNV3_RETURNED)];
    return b->arch.widths[s] * (b->arch.bottleneck ? 4 : 1);
}

static loom_status load_mobilenet_v3(model_loader *L, rcnn_backbone *b)
{
    if (b->first_stage != RCNN_BODY_STAGES - MNV3_RETURNED)
        return pk_host->fail(LOOM_EINVAL, "%s: a MobileNetV3 body gives the FPN its last %d stages", b->cls,
                             MNV3_RETURNED);
    if ((b->mnv3 = calloc(1, sizeof *b->mnv3)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", b->cls);
    loom_status st = mnv3_body_config(b->cls, b->width_mult, b->reduced_tail, b->mnv3);
    if (st != LOOM_OK)
        return st;
    L->key_prefix = "backbone.body.";
    L->frozen_bn = 1;
    st = mnv3_body_load(L, b->mnv3);
    L->key_prefix = NULL;
    L->frozen_bn = 0;
    return st;
}

static loom_status load_body(model_loader *L, rcnn_backbone *b)
{
    b->body = calloc(1, sizeof *b->body);
    if (b->body == NULL)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", b->cls);
    pthread_mutex_init(&b->body->base.lock, NULL);
    b->body->base.cls = b->cls;
    b->body->base.arch = &b->arch;
    L->key_prefix = "backbone.body.";
    L->frozen_bn = 1;
    loom_status st = resnet_load(L, b->body);
    L->key_prefix = NULL;
    L->frozen_bn = 0;
    return st;
}

loom_status rcnn_backbone_load(model_loader *L, rcnn_backbone *b)
{
    loom_status st = LOOM_OK;
    switch (b->body_kind) {
    case RCNN_BODY_RESNET:
        st = load_body(L, b);
        break;
    case RCNN_BODY_MOBILENET_V3:
        st = load_mobilenet_v3(L, b);
        break;
    default:
        return pk_host->fail(LOOM_EINVAL, "%s: unknown body kind %d", b->cls, (int)b->body_kind);
    }
    const int64_t f = b->fpn_channels;
    for (int i = 0; i < rcnn_backbone_fpn_inputs(b) && st == LOOM_OK; i++) {
        char p[64];
        b->inner[i] = model_conv_of(stage_channels(b, b->first_stage + i), f, 1, 1, 1);
        b->layer[i] = model_conv_of(f, f, 3, 1, 1);
        snprintf(p, sizeof p, "backbone.fpn.inner_blocks.%d", i);
        st = rcnn_load_conv_norm(L, p, b->fpn_norm, &b->inner[i]);
        snprintf(p, sizeof p, "backbone.fpn.layer_blocks.%d", i);
        if (st == LOOM_OK)
            st = rcnn_load_conv_norm(L, p, b->fpn_norm, &b->layer[i]);
    }
    if (st == LOOM_OK && b->extra != RCNN_EXTRA_MAXPOOL) {
        const int64_t in = b->extra == RCNN_EXTRA_P6P7_FROM_P5 ? f : stage_channels(b, RCNN_BODY_STAGES - 1);
        b->p6 = model_conv_of(in, f, 3, 2, 1);
        b->p7 = model_conv_of(f, f, 3, 2, 1);
        st = rcnn_load_conv_bias(L, "backbone.fpn.extra_blocks.p6", &b->p6);
        if (st == LOOM_OK)
            st = rcnn_load_conv_bias(L, "backbone.fpn.extra_blocks.p7", &b->p7);
    }
    struct { const loom_op **op; const char *name; } ops[] = {
        { &b->conv2d, "vision.conv2d" }, { &b->max_pool, "vision.max_pool2d" }, { &b->resize, "vision.resize" },
        { &b->relu, "vision.relu" },
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0] && st == LOOM_OK; i++)
        st = model_find_op(b->cls, ops[i].name, ops[i].op);
    /* optional: without the core pack there is no plan, the layers dispatch */
    b->copy = st == LOOM_OK ? pk_host->op_find("core.cast") : NULL;
    return st;
}

void rcnn_backbone_free(rcnn_backbone *b)
{
    if (b->body != NULL)
        resnet_destroy(b->body);
    b->body = NULL;
    if (b->mnv3 != NULL) {
        mnv3_body_free(b->mnv3);
        free(b->mnv3);
    }
    b->mnv3 = NULL;
    for (int i = 0; i < RCNN_BODY_STAGES; i++) {
        model_conv_free(&b->inner[i]);
        model_conv_free(&b->layer[i]);
    }
    model_conv_free(&b->p6);
    model_conv_free(&b->p7);
}

/* ---------------------------------------------------------- forward */

/* The ResNet body on the batch: c[s] = layer<s+1>'s output. */
static loom_status resnet_body(loom_call *call, const rcnn_backbone *b, const loom_tensor *x, loom_tensor **c)
{
    const resnet_model *r = b->body;
    loom_tensor *stem = NULL, *a = NULL;
    loom_status st = rcnn_conv(call, b, &r->stem, x, NULL, "relu", &stem);
    if (st == LOOM_OK)
        st = rcnn_max_pool(call, b, stem, 3, 2, 1, &a);
    rcnn_free_all(&stem, 1);
    int k = 0;
    for (int s = 0; s < RCNN_BODY_STAGES && st == LOOM_OK; s++) {
        for (int j = 0; j < b->arch.layers[s] && st == LOOM_OK; j++, k++) {
            const resnet_block *blk = &r->blocks[k];
            loom_tensor *t[3] = { NULL, NULL, NULL }, *out = NULL;   /* conv1, conv2 (bottleneck), downsample */
            st = rcnn_conv(call, b, &blk->conv[0], a, NULL, "relu", &t[0]);
            if (st == LOOM_OK && blk->has_down)
                st = rcnn_conv(call, b, &blk->down, a, NULL, "none", &t[2]);
            const loom_tensor *res = blk->has_down ? t[2] : a;
            if (st == LOOM_OK && blk->n_convs == 3) {
                st = rcnn_conv(call, b, &blk->conv[1], t[0], NULL, "relu", &t[1]);
                if (st == LOOM_OK)
                    st = rcnn_conv(call, b, &blk->conv[2], t[1], res, "relu", &out);
            } else if (st == LOOM_OK) {
                st = rcnn_conv(call, b, &blk->conv[1], t[0], res, "relu", &out);
            }
            rcnn_free_all(t, 3);
            if (s == 0 || j > 0 || a != c[s - 1])
                rcnn_free_all(&a, 1);   /* the previous stage's output stays: it is c[s - 1] */
            a = out;
        }
        c[s] = a;
    }
    if (st != LOOM_OK) {
        int kept = 0;
        for (int s = 0; s < RCNN_BODY_STAGES; s++)
            kept |= c[s] == a;
        if (!kept)
            rcnn_free_all(&a, 1);
    }
    return st;
}

/* FeaturePyramidNetwork on c[0 .. n): x[0 .. n), top-down. */
static loom_status fpn(loom_call *call, const rcnn_backbone *b, loom_tensor *const *c, int n, loom_tensor **x)
{
    loom_tensor *last = NULL;
    loom_status st = LOOM_OK;
    for (int i = n - 1; i >= 0 && st == LOOM_OK; i--) {
        loom_tensor *up = NULL, *inner = NULL;
        if (last != NULL) {
            /* inner_lateral + F.interpolate(last_inner, size=feature's, mode="nearest") */
            const int64_t size[2] = { c[i]->shape[2], c[i]->shape[3] };
            const loom_named_attr attrs[2] = { rcnn_ints_attr("size", size, 2),
                                               rcnn_string_attr("interpolation", "nearest") };
            st = rcnn_call_op(call, b->resize, (const loom_tensor *const *)&last, 1, &up, 1, attrs, 2);
        }
        if (st == LOOM_OK)
            st = rcnn_conv(call, b, &b->inner[i], c[i], up, "none", &inner);
        if (st == LOOM_OK)
            st = rcnn_conv(call, b, &b->layer[i], inner, NULL, "none", &x[i]);
        rcnn_free_all(&up, 1);
        rcnn_free_all(&last, 1);
        last = inner;
    }
    rcnn_free_all(&last, 1);
    return st;
}

/* The extra block into x[n ..]: LastLevelMaxPool or LastLevelP6P7
** (p6 of P5 or C5, p7 of relu(p6)). */
static loom_status extra_block(loom_call *call, const rcnn_backbone *b, const loom_tensor *c_last, int n,
                               loom_tensor **x)
{
    if (b->extra == RCNN_EXTRA_MAXPOOL)
        return rcnn_max_pool(call, b, x[n - 1], 1, 2, 0, &x[n]);
    const loom_tensor *src = b->extra == RCNN_EXTRA_P6P7_FROM_P5 ? x[n - 1] : c_last;
    loom_tensor *r = NULL;
    loom_status st = rcnn_conv(call, b, &b->p6, src, NULL, "none", &x[n]);
    if (st == LOOM_OK)
        st = rcnn_call_op(call, b->relu, (const loom_tensor *const *)&x[n], 1, &r, 1, NULL, 0);
    if (st == LOOM_OK)
        st = rcnn_conv(call, b, &b->p7, r, NULL, "none", &x[n + 1]);
    rcnn_free_all(&r, 1);
    return st;
}

loom_status rcnn_backbone_forward(loom_call *call, const rcnn_backbone *b, const loom_tensor *batch,
                                  loom_tensor **x)
{
    loom_tensor *c[RCNN_BODY_STAGES] = { NULL };
    loom_status st;
#ifdef LOOM_VISION_HAVE_ONEDNN
    if (call->kernel != NULL && strcmp(call->kernel->backend, "onednn") == 0 && b->copy != NULL
        && rcnn_backbone_plan_fits(b, batch)) {
        st = rcnn_backbone_plan_forward(call, b, batch, x);
        if (st != LOOM_ENOTSUP)
            return st;
        rcnn_free_all(x, rcnn_backbone_levels(b));     /* a body the plan does not take: the layers dispatch */
    }
    /* the dispatched convs read the plain weights a plan may have released */
    if (b->body_kind == RCNN_BODY_RESNET && (st = onednn_keep_plain_weights(call)) != LOOM_OK)
        return st;
#endif
    switch (b->body_kind) {
    case RCNN_BODY_RESNET:
        st = resnet_body(call, b, batch, c);
        break;
    case RCNN_BODY_MOBILENET_V3:
        st = mnv3_body_forward(call, b->mnv3, batch, c + RCNN_BODY_STAGES - MNV3_RETURNED);
        break;
    default:
        return pk_host->fail(LOOM_EINVAL, "%s: unknown body kind %d", b->cls, (int)b->body_kind);
    }
    const int n = rcnn_backbone_fpn_inputs(b);
    if (st == LOOM_OK)
        st = fpn(call, b, c + b->first_stage, n, x);
    if (st == LOOM_OK)
        st = extra_block(call, b, c[RCNN_BODY_STAGES - 1], n, x);
    rcnn_free_all(c, RCNN_BODY_STAGES);
    return st;
}

/* --------------------------------------------------------------- input */

loom_status rcnn_input_list(const char *cls, const loom_call *call, loom_tensor *flat, int64_t *flat_shape,
                            loom_tensor *offsets, int64_t *off_shape, loom_tensor *sizes, int64_t *size_shape,
                            int64_t **own)
{
    const loom_tensor *images = call->inputs[0], *off = call->inputs[1], *orig = call->inputs[2];
    char b1[160];
    *own = NULL;
    if (images->ndim == 4) {
        if (off != NULL || orig != NULL)
            return pk_host->fail(LOOM_EINVAL, "%s: 'images' is an NCHW batch %s: give neither 'images_offsets' nor "
                                 "'original_sizes' (they are the jagged list's)", cls,
                                 vision_describe(images, b1, sizeof b1));
        const int64_t n = images->shape[0], c = images->shape[1], h = images->shape[2], w = images->shape[3];
        if (n < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: 'images' %s is an empty batch: give at least one image", cls,
                                 vision_describe(images, b1, sizeof b1));
        if (c != 3 || h < 1 || w < 1)
            return pk_host->fail(LOOM_EINVAL, "%s: 'images' %s must be [B, 3, H, W] (RGB), H, W >= 1", cls,
                                 vision_describe(images, b1, sizeof b1));
        if ((*own = malloc((size_t)(3 * n + 1) * sizeof(int64_t))) == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", cls);
        int64_t *o = *own, *sz = *own + n + 1;
        for (int64_t i = 0; i <= n; i++)
            o[i] = i * c * h * w;
        for (int64_t i = 0; i < n; i++) {
            sz[2 * i] = h;
            sz[2 * i + 1] = w;
        }
        flat_shape[0] = n * c * h * w;
        off_shape[0] = n + 1;
        size_shape[0] = n;
        size_shape[1] = 2;
        *flat = model_view(loom_data(images), 1, flat_shape);
        *offsets = (loom_tensor){ .data = o, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                                  .dtype = { LOOM_DL_INT, 64, 1 }, .shape = off_shape };
        *sizes = (loom_tensor){ .data = sz, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                                .dtype = { LOOM_DL_INT, 64, 1 }, .shape = size_shape };
        return LOOM_OK;
    }
    if (images->ndim != 1 || off == NULL || orig == NULL)
        return pk_host->fail(LOOM_EINVAL, "%s: 'images' %s must be an NCHW batch [B, 3, H, W], or the flattened "
                             "[3, H, W] images with 'images_offsets' [B+1] and 'original_sizes' [B, 2]", cls,
                             vision_describe(images, b1, sizeof b1));
    if (off->ndim != 1 || off->shape[0] < 2)
        return pk_host->fail(LOOM_EINVAL, "%s: 'images_offsets' %s lists no image: give at least one", cls,
                             vision_describe(off, b1, sizeof b1));
    *flat = *images;
    *offsets = *off;
    *sizes = *orig;
    return LOOM_OK;
}

loom_status rcnn_write_detections(loom_call *call, const loom_op *postprocess_boxes, loom_tensor *const *det,
                                  const loom_tensor *resized_sizes, const loom_tensor *original_sizes, int64_t B)
{
    loom_tensor *out[4] = { NULL };
    const int64_t d = det[0]->shape[0], bs[2] = { d, 4 }, vs[1] = { d }, os[1] = { B + 1 };
    loom_status st;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, bs, &out[0])) == LOOM_OK
        && (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F32, 1, vs, &out[1])) == LOOM_OK
        && (st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, vs, &out[2])) == LOOM_OK)
        st = pk_host->alloc_output(call, 3, LOOM_DTYPE_I64, 1, os, &out[3]);
    if (st != LOOM_OK)
        return st;
    memcpy(loom_data(out[1]), loom_data(det[1]), (size_t)d * sizeof(float));
    memcpy(loom_data(out[2]), loom_data(det[2]), (size_t)d * sizeof(int64_t));
    memcpy(loom_data(out[3]), loom_data(det[3]), (size_t)(B + 1) * sizeof(int64_t));
    const int64_t *off = loom_data(det[3]), *resized = loom_data(resized_sizes), *orig = loom_data(original_sizes);
    const float *boxes = loom_data(det[0]);
    float *dst = loom_data(out[0]);
    for (int64_t b = 0; b < B && st == LOOM_OK; b++) {
        int64_t shape[2] = { off[b + 1] - off[b], 4 };
        if (shape[0] == 0)
            continue;
        loom_tensor view = model_view(boxes + off[b] * 4, 2, shape), *back = NULL;
        const loom_named_attr attrs[2] = { rcnn_ints_attr("image_size", resized + 2 * b, 2),
                                           rcnn_ints_attr("original_size", orig + 2 * b, 2) };
        const loom_tensor *in[1] = { &view };
        st = rcnn_call_op(call, postprocess_boxes, in, 1, &back, 1, attrs, 2);
        if (st == LOOM_OK)
            memcpy(dst + off[b] * 4, loom_data(back), (size_t)shape[0] * 4 * sizeof(float));
        rcnn_free_all(&back, 1);
    }
    return st;
}
