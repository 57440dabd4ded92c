/* SPDX-License-Identifier: BSD-3-Clause */
/*
** resnet_forward.c - the method ops of the ResNet classes (vision.resnet50
** ...: input [N, 3, H, W] f32 -> logits [N, classes]) and the models
** module. The forward is a sequence of dispatched ops (host->op_call):
** vision.conv2d with the folded batchnorm as its bias, relu and the block's
** residual fused, vision.max_pool2d, vision.adaptive_avg_pool2d and
** vision.linear (fc), so LOOM_VERBOSE=2 names each layer's backend.
**
** Activation buffers are planned once per input shape (the first call with
** a shape sizes them, later calls of that shape reuse them) in five roles:
**   A  a block's input and output: the last conv writes the block's output
**      over its input, which conv1 and the downsample have consumed by then
**      (an identity residual is read in place: the element it adds is the
**      element it writes)
**   B  conv1's output, C  a bottleneck's conv2 output,
**   D  the stem's output (before the max pool) and the downsample's,
**   P  the pooled features [N, features].
** Each is as large as the largest tensor of its role. One forward runs at a
** time per model (its lock): calls on one object from several threads are
** serialised, those on distinct objects are not.
*/
#include <stdlib.h>
#include <string.h>

#include "models.h"
#include "weights.h"

enum { BUF_A, BUF_B, BUF_C, BUF_D, BUF_P };

static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

/* The floats each role needs for input [n, 3, h, w]. */
static void plan_sizes(const resnet_model *m, int64_t n, int64_t h, int64_t w, size_t *floats)
{
    memset(floats, 0, 5 * sizeof *floats);
#define NEED(role, c, hh, ww)                                                                      \
    do {                                                                                           \
        size_t need_ = (size_t)(n * (c) * (hh) * (ww));                                             \
        if (need_ > floats[role])                                                                  \
            floats[role] = need_;                                                                  \
    } while (0)
    h = out_size(h, 7, 2, 3);
    w = out_size(w, 7, 2, 3);
    NEED(BUF_D, 64, h, w);
    h = out_size(h, 3, 2, 1);
    w = out_size(w, 3, 2, 1);
    NEED(BUF_A, 64, h, w);
    for (int b = 0; b < m->n_blocks; b++) {
        const resnet_block *B = &m->blocks[b];
        const model_conv *c0 = &B->conv[0], *c1 = &B->conv[1];
        int64_t h1 = out_size(h, c0->k, c0->stride, c0->pad), w1 = out_size(w, c0->k, c0->stride, c0->pad);
        NEED(BUF_B, c0->cout, h1, w1);
        int64_t h2 = out_size(h1, c1->k, c1->stride, c1->pad), w2 = out_size(w1, c1->k, c1->stride, c1->pad);
        if (B->n_convs == 3) {
            NEED(BUF_C, c1->cout, h2, w2);
            NEED(BUF_A, B->conv[2].cout, h2, w2);
        } else {
            NEED(BUF_A, c1->cout, h2, w2);
        }
        if (B->has_down)
            NEED(BUF_D, B->down.cout, h2, w2);
        h = h2;
        w = w2;
    }
    NEED(BUF_P, m->features, 1, 1);
#undef NEED
}

static loom_status plan_for(resnet_model *m, int64_t n, int64_t h, int64_t w)
{
    resnet_plan *p = &m->plan;
    if (p->n == n && p->h == h && p->w == w)
        return LOOM_OK;
    size_t floats[5];
    plan_sizes(m, n, h, w, floats);
    for (int i = 0; i < 5; i++) {
        if (floats[i] <= p->floats[i] && p->buf[i] != NULL)
            continue;
        free(p->buf[i]);
        p->buf[i] = aligned_alloc(64, ((floats[i] * sizeof(float) + 63) / 64) * 64 + 64);
        p->floats[i] = p->buf[i] != NULL ? floats[i] : 0;
        if (p->buf[i] == NULL) {
            p->n = 0;
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the activations of input [%lld, 3, %lld, %lld]",
                                 m->arch->name, (long long)n, (long long)h, (long long)w);
        }
    }
    p->n = n;
    p->h = h;
    p->w = w;
    return LOOM_OK;
}

/* A compact f32 CPU tensor over data with the given shape (kept by caller). */
static loom_tensor view(const float *data, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = (void *)data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                      .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
    return t;
}

typedef struct fmap {
    float *data;
    int64_t shape[4];
} fmap;

static loom_named_attr ints_attr(const char *name, const int64_t *v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u = { .ints = v } } };
    return a;
}

/* out = conv c of in (+ residual), relu when relu; out->shape is set. */
static loom_status run_conv(loom_call *call, const resnet_model *m, const model_conv *c, const fmap *in, fmap *out,
                            const fmap *residual, int relu)
{
    out->shape[0] = in->shape[0];
    out->shape[1] = c->cout;
    out->shape[2] = out_size(in->shape[2], c->k, c->stride, c->pad);
    out->shape[3] = out_size(in->shape[3], c->k, c->stride, c->pad);
    int64_t wshape[4] = { c->cout, c->cin / c->groups, c->k, c->k }, bshape[1] = { c->cout };
    int64_t xs[4], ys[4], rs[4];
    memcpy(xs, in->shape, sizeof xs);
    memcpy(ys, out->shape, sizeof ys);
    memcpy(rs, out->shape, sizeof rs);
    loom_tensor tx = view(in->data, 4, xs), tw = view(c->weight, 4, wshape), tb = view(c->bias, 1, bshape);
    loom_tensor ty = view(out->data, 4, ys), tr = view(residual != NULL ? residual->data : NULL, 4, rs);
    const loom_tensor *ins[4] = { &tx, &tw, &tb, residual != NULL ? &tr : NULL };
    loom_tensor *outs[1] = { &ty };
    const int64_t stride = c->stride, pad = c->pad;
    loom_named_attr attrs[4] = {
        ints_attr("stride", &stride), ints_attr("padding", &pad),
        { "groups", { .type = LOOM_ATTR_INT, .is_set = 1, .u = { .i = c->groups } } },
        { "activation", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = 4,
                          .u = { .s = relu ? "relu" : "none" } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = m->conv2d, .n_inputs = 4, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 4, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

static loom_status forward(loom_call *call, resnet_model *m, const loom_tensor *x, loom_tensor *logits)
{
    resnet_plan *p = &m->plan;
    fmap in = { loom_data(x), { x->shape[0], x->shape[1], x->shape[2], x->shape[3] } };
    fmap A = { p->buf[BUF_A], { 0 } }, B = { p->buf[BUF_B], { 0 } }, C = { p->buf[BUF_C], { 0 } };
    fmap D = { p->buf[BUF_D], { 0 } };
    loom_status st = run_conv(call, m, &m->stem, &in, &D, NULL, 1);
    if (st != LOOM_OK)
        return st;
    /* maxpool 3/2 pad 1: D -> A */
    {
        A.shape[0] = D.shape[0];
        A.shape[1] = D.shape[1];
        A.shape[2] = out_size(D.shape[2], 3, 2, 1);
        A.shape[3] = out_size(D.shape[3], 3, 2, 1);
        int64_t ds[4], as[4];
        memcpy(ds, D.shape, sizeof ds);
        memcpy(as, A.shape, sizeof as);
        loom_tensor td = view(D.data, 4, ds), ta = view(A.data, 4, as);
        const loom_tensor *ins[1] = { &td };
        loom_tensor *outs[1] = { &ta };
        const int64_t three = 3, two = 2, one = 1;
        loom_named_attr attrs[3] = { ints_attr("kernel_size", &three), ints_attr("stride", &two),
                                     ints_attr("padding", &one) };
        loom_op_call oc = { .struct_size = sizeof oc, .op = m->max_pool, .n_inputs = 1, .inputs = ins,
                            .n_outputs = 1, .outputs = outs, .n_attrs = 3, .attrs = attrs };
        if ((st = pk_host->op_call(call->ctx, &oc)) != LOOM_OK)
            return st;
    }
    for (int b = 0; b < m->n_blocks && st == LOOM_OK; b++) {
        const resnet_block *blk = &m->blocks[b];
        fmap res = A;
        if (blk->has_down) {
            if ((st = run_conv(call, m, &blk->down, &A, &D, NULL, 0)) != LOOM_OK)
                return st;
            res = D;
        }
        if ((st = run_conv(call, m, &blk->conv[0], &A, &B, NULL, 1)) != LOOM_OK)
            return st;
        if (blk->n_convs == 3) {
            if ((st = run_conv(call, m, &blk->conv[1], &B, &C, NULL, 1)) != LOOM_OK)
                return st;
            st = run_conv(call, m, &blk->conv[2], &C, &A, &res, 1);
        } else {
            st = run_conv(call, m, &blk->conv[1], &B, &A, &res, 1);
        }
    }
    if (st != LOOM_OK)
        return st;
    /* avgpool to 1x1, then fc */
    int64_t as[4], ps[4] = { A.shape[0], A.shape[1], 1, 1 };
    memcpy(as, A.shape, sizeof as);
    loom_tensor ta = view(A.data, 4, as), tp = view(p->buf[BUF_P], 4, ps);
    const loom_tensor *pin[1] = { &ta };
    loom_tensor *pout[1] = { &tp };
    const int64_t one = 1;
    loom_named_attr pattr[1] = { ints_attr("output_size", &one) };
    loom_op_call po = { .struct_size = sizeof po, .op = m->avg_pool, .n_inputs = 1, .inputs = pin, .n_outputs = 1,
                        .outputs = pout, .n_attrs = 1, .attrs = pattr };
    if ((st = pk_host->op_call(call->ctx, &po)) != LOOM_OK)
        return st;
    int64_t fs[2] = { A.shape[0], m->features }, ws[2] = { m->classes, m->features }, bs[1] = { m->classes };
    loom_tensor tf = view(p->buf[BUF_P], 2, fs), tw = view(m->fc_weight, 2, ws), tb = view(m->fc_bias, 1, bs);
    const loom_tensor *lin[3] = { &tf, &tw, &tb };
    loom_tensor *lout[1] = { logits };
    loom_op_call lo = { .struct_size = sizeof lo, .op = m->linear, .n_inputs = 3, .inputs = lin, .n_outputs = 1,
                        .outputs = lout };
    return pk_host->op_call(call->ctx, &lo);
}

static loom_status resnet_run(loom_call *call)
{
    resnet_model *m = call->object;
    const loom_tensor *x = call->inputs[0];
    char b1[160];
    if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || x->shape[1] != 3)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be f32 [N, 3, H, W] (RGB)", vision_describe(x, b1, sizeof b1));
    if (x->shape[2] < 1 || x->shape[3] < 1 || x->shape[2] > 65536 || x->shape[3] > 65536 || x->shape[0] > 65536)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: N, H and W must be in [1, 65536]",
                             vision_describe(x, b1, sizeof b1));
    int64_t shape[2] = { x->shape[0], m->classes };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&m->lock);
    st = plan_for(m, x->shape[0], x->shape[2], x->shape[3]);
    if (st == LOOM_OK)
        st = forward(call, m, x, out);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ---------------------------------------------------------------- schemas */

static const loom_arg_def model_inputs[] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[N, 3, H, W] f32, normalised as the weights' preset says (ImageNet mean and std)" },
};
static const loom_arg_def model_outputs[] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[N, classes] logits (classes: fc.weight's rows)" },
};

#define RESNET_SCHEMA(id)                                                                          \
    PK_SCHEMA(vision_##id##_schema, "vision." #id, 1,                                              \
              "torchvision.models." #id " forward: logits of an NCHW batch", PK_INPUTS(model_inputs), \
              PK_OUTPUTS(model_outputs), .object_class = "vision." #id);
VISION_RESNETS(RESNET_SCHEMA)

PK_OPS_DEFINE(vision_models_ops, VISION_MODELS_OPS);

#define RESNET_KERNEL(id) PK_KERNEL_CPU(vision_##id##_schema, "cpu:ops", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), resnet_run),
static const loom_kernel_desc models_cpu_kernels[] = {
    VISION_RESNETS(RESNET_KERNEL)
    PK_KERNEL_CPU(vision_weights_meta_schema, "cpu:table", 0, vision_weights_meta_run),
};

const pk_module vision_models_cpu = { .name = "models", .ops = vision_models_ops,
                                      .n_ops = PK_COUNT(vision_models_ops), .classes = vision_models_classes,
                                      .n_classes = PK_COUNT(vision_models_classes),
                                      .kernels = models_cpu_kernels, .n_kernels = PK_COUNT(models_cpu_kernels) };
