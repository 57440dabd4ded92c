/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_ops.c - the forward helpers every model class uses
** (model_common.h): views of the model's buffers as tensors, the calls of
** vision.conv2d (folded batchnorm as bias, residual and activation fused)
** and of the classifier (adaptive_avg_pool2d to 1x1, then linear), and the
** activation buffers planned per input shape.
*/
#include <stdlib.h>
#include <string.h>

#include "model_common.h"

loom_tensor model_view(const float *data, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = (void *)data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                      .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
    return t;
}

static loom_named_attr ints_attr(const char *name, const int64_t *v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u = { .ints = v } } };
    return a;
}

static loom_status conv2d_call(loom_call *call, const loom_op *conv2d, const model_conv *c, const model_fmap *in,
                               model_fmap *out, const model_fmap *residual, const char *act, int residual_after)
{
    out->shape[0] = in->shape[0];
    out->shape[1] = c->cout;
    out->shape[2] = model_out_size(in->shape[2], c->k, c->stride, c->pad);
    out->shape[3] = model_out_size(in->shape[3], c->k, c->stride, c->pad);
    int64_t wshape[4] = { c->cout, c->cin / c->groups, c->k, c->k }, bshape[1] = { c->cout };
    int64_t xs[4], ys[4], rs[4];
    memcpy(xs, in->shape, sizeof xs);
    memcpy(ys, out->shape, sizeof ys);
    memcpy(rs, out->shape, sizeof rs);
    loom_tensor tx = model_view(in->data, 4, xs), tw = model_view(c->weight, 4, wshape);
    loom_tensor tb = model_view(c->bias, 1, bshape), ty = model_view(out->data, 4, ys);
    loom_tensor tr = model_view(residual != NULL ? residual->data : NULL, 4, rs);
    const loom_tensor *ins[4] = { &tx, &tw, &tb, residual != NULL ? &tr : NULL };
    loom_tensor *outs[1] = { &ty };
    const int64_t stride = c->stride, pad = c->pad;
    loom_named_attr attrs[5] = {
        ints_attr("stride", &stride), ints_attr("padding", &pad),
        { "groups", { .type = LOOM_ATTR_INT, .is_set = 1, .u = { .i = c->groups } } },
        { "activation", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(act), .u = { .s = act } } },
        { "residual_after_activation", { .type = LOOM_ATTR_BOOL, .is_set = 1, .u = { .b = residual_after } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = conv2d, .n_inputs = 4, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = residual_after ? 5 : 4, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status model_conv2d(loom_call *call, const loom_op *conv2d, const model_conv *c, const model_fmap *in,
                         model_fmap *out, const model_fmap *residual, const char *act)
{
    return conv2d_call(call, conv2d, c, in, out, residual, act, 0);
}

loom_status model_walk_conv(const model_walk *W, const model_conv *c, const model_fmap *in, model_fmap *out,
                            int role, const model_fmap *residual, const char *act, int residual_after)
{
    if (W->plan == NULL)
        return conv2d_call(W->call, W->conv2d, c, in, out, residual, act, residual_after);
    out->shape[0] = in->shape[0];
    out->shape[1] = c->cout;
    out->shape[2] = model_out_size(in->shape[2], c->k, c->stride, c->pad);
    out->shape[3] = model_out_size(in->shape[3], c->k, c->stride, c->pad);
    model_need(W->plan, role, out->shape[0], out->shape[1], out->shape[2], out->shape[3]);
    return LOOM_OK;
}

loom_status model_max_pool_3s2(loom_call *call, const loom_op *max_pool, const model_fmap *in, model_fmap *out)
{
    out->shape[0] = in->shape[0];
    out->shape[1] = in->shape[1];
    out->shape[2] = model_out_size(in->shape[2], 3, 2, 1);
    out->shape[3] = model_out_size(in->shape[3], 3, 2, 1);
    int64_t is[4], os[4];
    memcpy(is, in->shape, sizeof is);
    memcpy(os, out->shape, sizeof os);
    loom_tensor ti = model_view(in->data, 4, is), to = model_view(out->data, 4, os);
    const loom_tensor *ins[1] = { &ti };
    loom_tensor *outs[1] = { &to };
    const int64_t three = 3, two = 2, one = 1;
    loom_named_attr attrs[3] = { ints_attr("kernel_size", &three), ints_attr("stride", &two),
                                 ints_attr("padding", &one) };
    loom_op_call oc = { .struct_size = sizeof oc, .op = max_pool, .n_inputs = 1, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 3, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status model_pool_linear(loom_call *call, const loom_op *avg_pool, const loom_op *linear, const model_fmap *in,
                              float *pooled, const float *weight, const float *bias, int64_t classes,
                              loom_tensor *logits)
{
    int64_t as[4], ps[4] = { in->shape[0], in->shape[1], 1, 1 };
    memcpy(as, in->shape, sizeof as);
    loom_tensor ta = model_view(in->data, 4, as), tp = model_view(pooled, 4, ps);
    const loom_tensor *pin[1] = { &ta };
    loom_tensor *pout[1] = { &tp };
    const int64_t one = 1;
    loom_named_attr pattr[1] = { ints_attr("output_size", &one) };
    loom_op_call po = { .struct_size = sizeof po, .op = avg_pool, .n_inputs = 1, .inputs = pin, .n_outputs = 1,
                        .outputs = pout, .n_attrs = 1, .attrs = pattr };
    loom_status st = pk_host->op_call(call->ctx, &po);
    if (st != LOOM_OK)
        return st;
    int64_t fs[2] = { in->shape[0], in->shape[1] }, ws[2] = { classes, in->shape[1] }, bs[1] = { classes };
    loom_tensor tf = model_view(pooled, 2, fs), tw = model_view(weight, 2, ws), tb = model_view(bias, 1, bs);
    const loom_tensor *lin[3] = { &tf, &tw, &tb };
    loom_tensor *lout[1] = { logits };
    loom_op_call lo = { .struct_size = sizeof lo, .op = linear, .n_inputs = 3, .inputs = lin, .n_outputs = 1,
                        .outputs = lout };
    return pk_host->op_call(call->ctx, &lo);
}

loom_status model_walk_head(const model_walk *W, const model_base *b, const model_fmap *in, int role,
                            loom_tensor *logits)
{
    if (W->plan != NULL) {
        model_need(W->plan, role, in->shape[0], in->shape[1], 1, 1);
        return LOOM_OK;
    }
    return model_pool_linear(W->call, b->avg_pool, b->linear, in, b->plan.buf[role], b->fc_weight, b->fc_bias,
                             b->classes, logits);
}

loom_status model_walk_se(const model_walk *W, const model_base *b, model_fmap *x, int64_t squeeze,
                          const float *w1, const float *b1, const float *w2, const float *b2, const char *act)
{
    if (W->plan != NULL)
        return LOOM_OK;
    return model_squeeze_excitation(W->call, b->se, x, squeeze, w1, b1, w2, b2, act);
}

loom_status model_run(loom_call *call, model_base *b, model_walk_fn walk, int n_bufs)
{
    const loom_tensor *x = call->inputs[0];
    loom_tensor *out;
    loom_status st = model_check_input(call, b->classes, &out);
    if (st != LOOM_OK)
        return st;
    pthread_mutex_lock(&b->lock);
    size_t need[8] = { 0 };
    const model_walk dry = { call, b->conv2d, need }, real = { call, b->conv2d, NULL };
    st = walk(&dry, b, x, NULL);
    if (st == LOOM_OK)
        st = model_buffers_fit(&b->plan, n_bufs, need, x->shape[0], x->shape[2], x->shape[3], b->cls);
    if (st == LOOM_OK)
        st = walk(&real, b, x, out);
    pthread_mutex_unlock(&b->lock);
    return st;
}

loom_status model_buffers_fit(model_buffers *b, int n_bufs, const size_t *floats, int64_t n, int64_t h, int64_t w,
                              const char *cls)
{
    if (b->n == n && b->h == h && b->w == w)
        return LOOM_OK;
    for (int i = 0; i < n_bufs; i++) {
        if (floats[i] <= b->floats[i] && b->buf[i] != NULL)
            continue;
        free(b->buf[i]);
        b->buf[i] = aligned_alloc(64, ((floats[i] * sizeof(float) + 63) / 64) * 64 + 64);
        b->floats[i] = b->buf[i] != NULL ? floats[i] : 0;
        if (b->buf[i] == NULL) {
            b->n = 0;
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory for the activations of input [%lld, 3, %lld, %lld]",
                                 cls, (long long)n, (long long)h, (long long)w);
        }
    }
    b->n = n;
    b->h = h;
    b->w = w;
    return LOOM_OK;
}

void model_buffers_free(model_buffers *b)
{
    for (int i = 0; i < 8; i++) {
        free(b->buf[i]);
        b->buf[i] = NULL;
    }
}

loom_status model_squeeze_excitation(loom_call *call, const loom_op *se, model_fmap *x, int64_t squeeze,
                                     const float *w1, const float *b1, const float *w2, const float *b2,
                                     const char *act)
{
    const int64_t c = x->shape[1];
    int64_t xs[4], w1s[4] = { squeeze, c, 1, 1 }, b1s[1] = { squeeze }, w2s[4] = { c, squeeze, 1, 1 }, b2s[1] = { c };
    memcpy(xs, x->shape, sizeof xs);
    loom_tensor tx = model_view(x->data, 4, xs), tw1 = model_view(w1, 4, w1s), tb1 = model_view(b1, 1, b1s);
    loom_tensor tw2 = model_view(w2, 4, w2s), tb2 = model_view(b2, 1, b2s);
    const loom_tensor *ins[5] = { &tx, &tw1, &tb1, &tw2, &tb2 };
    loom_tensor *outs[1] = { &tx };
    loom_named_attr attrs[1] = {
        { "activation", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(act), .u = { .s = act } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = se, .n_inputs = 5, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 1, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

loom_status model_check_input(loom_call *call, int64_t classes, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0];
    char b1[160];
    if (loom_tensor_dtype_of(x) != LOOM_DTYPE_F32 || x->shape[1] != 3)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be f32 [N, 3, H, W] (RGB)", vision_describe(x, b1, sizeof b1));
    if (x->shape[2] < 1 || x->shape[3] < 1 || x->shape[2] > 65536 || x->shape[3] > 65536 || x->shape[0] > 65536)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: N, H and W must be in [1, 65536]",
                             vision_describe(x, b1, sizeof b1));
    int64_t shape[2] = { x->shape[0], classes };
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, out);
}

const loom_arg_def model_method_inputs[1] = {
    { .name = "input", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 4,
      .doc = "[N, 3, H, W] f32, normalised as the weights' preset says (ImageNet mean and std)" },
};
const loom_arg_def model_method_outputs[1] = {
    { .name = "output", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = 2,
      .doc = "[N, classes] logits (classes: fc.weight's rows)" },
};
