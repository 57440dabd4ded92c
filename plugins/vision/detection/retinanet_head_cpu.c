/* SPDX-License-Identifier: BSD-3-Clause */
/*
** retinanet_head_cpu.c - vision.retinanet_head: torchvision's
** RetinaNetClassificationHead or RetinaNetRegressionHead on every FPN level
** given. Per level: four 3x3 convs (padding 1), each followed by relu (v1:
** fused into vision.conv2d) or by vision.group_norm then vision.relu (v2,
** when norm_weight is given); then the output conv to A K channels, written
** [N, A K, H, W] -> [N, H, W, A, K] into rows off + (h W + w) A + a of the
** output, levels one after the other (torchvision's view, permute, reshape
** and cat). Every layer is a dispatched op: their kernels (and ISA) are
** theirs, and LOOM_VERBOSE=2 names them.
*/
#include <string.h>

#include "retinanet.h"

#define OP "vision.retinanet_head"

static loom_tensor view(const float *data, int32_t ndim, int64_t *shape)
{
    loom_tensor t = { .data = (void *)data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = ndim,
                      .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
    return t;
}

/* y [n, cout, h, w] = conv3x3(x [n, cin, h, w]) with padding 1, relu fused when asked. */
static loom_status conv3x3(loom_call *call, const loom_op *conv2d, const float *x, int64_t n, int64_t cin, int64_t h,
                           int64_t w, const float *weight, const float *bias, int64_t cout, int relu, float *y)
{
    int64_t xs[4] = { n, cin, h, w }, ws[4] = { cout, cin, 3, 3 }, bs[1] = { cout }, ys[4] = { n, cout, h, w };
    loom_tensor tx = view(x, 4, xs), tw = view(weight, 4, ws), tb = view(bias, 1, bs), ty = view(y, 4, ys);
    const loom_tensor *ins[4] = { &tx, &tw, bias != NULL ? &tb : NULL, NULL };
    loom_tensor *outs[1] = { &ty };
    static const int64_t one = 1;
    const char *act = relu ? "relu" : "none";
    loom_named_attr attrs[2] = {
        { "padding", { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u = { .ints = &one } } },
        { "activation", { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(act), .u = { .s = act } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = conv2d, .n_inputs = 4, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 2, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

/* x = relu(group_norm(x)) of [n, c, h, w] through the dispatched ops, tmp
** holding the norm's output. */
static loom_status norm_relu(loom_call *call, const loom_op *gn, const loom_op *relu, float *x, int64_t n, int64_t c,
                             int64_t h, int64_t w, const float *gamma, const float *beta, float *tmp)
{
    int64_t xs[4] = { n, c, h, w }, cs[1] = { c }, ys[4] = { n, c, h, w }, rs[4] = { n, c, h, w };
    loom_tensor tx = view(x, 4, xs), tg = view(gamma, 1, cs), tb = view(beta, 1, cs), ty = view(tmp, 4, ys);
    const loom_tensor *ins[3] = { &tx, &tg, beta != NULL ? &tb : NULL };
    loom_tensor *outs[1] = { &ty };
    loom_named_attr attrs[2] = {
        { "num_groups", { .type = LOOM_ATTR_INT, .is_set = 1, .u = { .i = call->attrs[PK_ATTR(retinanet_head, num_groups)].u.i } } },
        { "eps", { .type = LOOM_ATTR_FLOAT, .is_set = 1, .u = { .f = call->attrs[PK_ATTR(retinanet_head, eps)].u.f } } },
    };
    loom_op_call oc = { .struct_size = sizeof oc, .op = gn, .n_inputs = 3, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = 2, .attrs = attrs };
    loom_status st = pk_host->op_call(call->ctx, &oc);
    if (st != LOOM_OK)
        return st;
    loom_tensor tr = view(tmp, 4, ys), to = view(x, 4, rs);
    const loom_tensor *rin[1] = { &tr };
    loom_tensor *rout[1] = { &to };
    loom_op_call rc = { .struct_size = sizeof rc, .op = relu, .n_inputs = 1, .inputs = rin, .n_outputs = 1,
                        .outputs = rout };
    return pk_host->op_call(call->ctx, &rc);
}

static loom_status check_inputs(const loom_call *call, int *levels, int64_t *c, int64_t *anchors, int64_t *rows)
{
    const loom_tensor *cw = call->inputs[RH_CONV_WEIGHT], *ow = call->inputs[RH_OUT_WEIGHT];
    const loom_tensor *f0 = call->inputs[RH_FEATURES];
    const int64_t k = call->attrs[PK_ATTR(retinanet_head, num_outputs)].u.i;
    for (int i = 0; i < call->n_inputs; i++)
        if (call->inputs[i] != NULL && !loom_is_contiguous(call->inputs[i]))
            return pk_host->fail(LOOM_EINVAL, OP ": '%s' is not contiguous: pass a compact row-major tensor",
                                 call->schema->inputs[i].name);
    *c = f0->shape[1];
    if (cw->shape[0] != 4 || cw->shape[1] != *c || cw->shape[2] != *c || cw->shape[3] != 3 || cw->shape[4] != 3)
        return pk_host->fail(LOOM_EINVAL, OP ": conv_weight is [%lld, %lld, %lld, %lld, %lld]; expected [4, %lld, "
                             "%lld, 3, 3] for features of %lld channels", (long long)cw->shape[0],
                             (long long)cw->shape[1], (long long)cw->shape[2], (long long)cw->shape[3],
                             (long long)cw->shape[4], (long long)*c, (long long)*c, (long long)*c);
    for (int i = RH_CONV_BIAS; i <= RH_NORM_BIAS; i++) {
        const loom_tensor *t = call->inputs[i];
        if (t != NULL && (t->shape[0] != 4 || t->shape[1] != *c))
            return pk_host->fail(LOOM_EINVAL, OP ": %s is [%lld, %lld]; expected [4, %lld]",
                                 call->schema->inputs[i].name, (long long)t->shape[0], (long long)t->shape[1],
                                 (long long)*c);
    }
    if (call->inputs[RH_NORM_BIAS] != NULL && call->inputs[RH_NORM_WEIGHT] == NULL)
        return pk_host->fail(LOOM_EINVAL, OP ": norm_bias is given without norm_weight");
    if (ow->shape[1] != *c || ow->shape[2] != 3 || ow->shape[3] != 3 || ow->shape[0] % k != 0 || ow->shape[0] == 0)
        return pk_host->fail(LOOM_EINVAL, OP ": out_weight is [%lld, %lld, %lld, %lld]; expected [A * %lld, %lld, 3, "
                             "3] (num_outputs %lld)", (long long)ow->shape[0], (long long)ow->shape[1],
                             (long long)ow->shape[2], (long long)ow->shape[3], (long long)k, (long long)*c,
                             (long long)k);
    const loom_tensor *ob = call->inputs[RH_OUT_BIAS];
    if (ob != NULL && ob->shape[0] != ow->shape[0])
        return pk_host->fail(LOOM_EINVAL, OP ": out_bias is [%lld]; expected [%lld], out_weight's channels",
                             (long long)ob->shape[0], (long long)ow->shape[0]);
    *anchors = ow->shape[0] / k;
    *levels = 0;
    *rows = 0;
    for (int l = 0; l < RH_MAX_LEVELS; l++) {
        const loom_tensor *f = call->inputs[RH_FEATURES + l];
        if (f == NULL)
            continue;
        if (*levels != l)
            return pk_host->fail(LOOM_EINVAL, OP ": features%d is given after an absent features%d", l, *levels);
        if (f->shape[0] != f0->shape[0] || f->shape[1] != *c)
            return pk_host->fail(LOOM_EINVAL, OP ": features%d is [%lld, %lld, %lld, %lld]; expected N = %lld and "
                                 "C = %lld as features0", l, (long long)f->shape[0], (long long)f->shape[1],
                                 (long long)f->shape[2], (long long)f->shape[3], (long long)f0->shape[0],
                                 (long long)*c);
        *rows += f->shape[2] * f->shape[3] * *anchors;
        (*levels)++;
    }
    return LOOM_OK;
}

loom_status vision_retinanet_head_cpu(loom_call *call)
{
    int levels = 0;
    int64_t c = 0, anchors = 0, rows = 0;
    loom_status st = check_inputs(call, &levels, &c, &anchors, &rows);
    if (st != LOOM_OK)
        return st;
    const int64_t n = call->inputs[RH_FEATURES]->shape[0];
    const int64_t k = call->attrs[PK_ATTR(retinanet_head, num_outputs)].u.i, ak = anchors * k;
    loom_tensor *out;
    const int64_t shape[3] = { n, rows, k };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 3, shape, &out)) != LOOM_OK || loom_numel(out) == 0)
        return st;
    const loom_op *conv2d = pk_host->op_find("vision.conv2d"), *gn = pk_host->op_find("vision.group_norm");
    const loom_op *relu = pk_host->op_find("vision.relu");
    if (conv2d == NULL || gn == NULL || relu == NULL)
        return pk_host->fail(LOOM_ENOENT, OP " needs vision.conv2d, vision.group_norm and vision.relu");
    const float *cw = loom_data(call->inputs[RH_CONV_WEIGHT]), *ow = loom_data(call->inputs[RH_OUT_WEIGHT]);
    const loom_tensor *cb_t = call->inputs[RH_CONV_BIAS], *nw_t = call->inputs[RH_NORM_WEIGHT];
    const loom_tensor *nb_t = call->inputs[RH_NORM_BIAS], *ob_t = call->inputs[RH_OUT_BIAS];
    const float *cb = cb_t != NULL ? loom_data(cb_t) : NULL, *nw = nw_t != NULL ? loom_data(nw_t) : NULL;
    const float *nb = nb_t != NULL ? loom_data(nb_t) : NULL, *ob = ob_t != NULL ? loom_data(ob_t) : NULL;
    int64_t most = 0;
    for (int l = 0; l < levels; l++) {
        const loom_tensor *f = call->inputs[RH_FEATURES + l];
        const int64_t plane = f->shape[2] * f->shape[3];
        most = plane * (c > ak ? c : ak) > most ? plane * (c > ak ? c : ak) : most;
    }
    float *a = pk_host->scratch(call->ctx, (size_t)(n * most) * sizeof(float));
    float *b = pk_host->scratch(call->ctx, (size_t)(n * most) * sizeof(float));
    if (a == NULL || b == NULL)
        return LOOM_ENOMEM;
    float *y = loom_data(out);
    int64_t row0 = 0;
    for (int l = 0; l < levels; l++) {
        const loom_tensor *f = call->inputs[RH_FEATURES + l];
        const int64_t h = f->shape[2], w = f->shape[3], plane = h * w;
        const float *src = loom_data(f);
        for (int i = 0; i < 4; i++) {
            float *dst = src == a ? b : a;
            if ((st = conv3x3(call, conv2d, src, n, c, h, w, cw + (int64_t)i * c * c * 9, cb != NULL ? cb + i * c : NULL,
                              c, nw == NULL, dst)) != LOOM_OK)
                return st;
            if (nw != NULL && (st = norm_relu(call, gn, relu, dst, n, c, h, w, nw + i * c,
                                              nb != NULL ? nb + i * c : NULL, dst == a ? b : a)) != LOOM_OK)
                return st;
            src = dst;
        }
        float *logits = src == a ? b : a;
        if ((st = conv3x3(call, conv2d, src, n, c, h, w, ow, ob, ak, 0, logits)) != LOOM_OK)
            return st;
        for (int64_t img = 0; img < n; img++)
            for (int64_t ch = 0; ch < ak; ch++) {
                const float *p = logits + (img * ak + ch) * plane;
                const int64_t anc = ch / k, kk = ch % k;
                float *o = y + (img * rows + row0) * k;
                for (int64_t q = 0; q < plane; q++)
                    o[(q * anchors + anc) * k + kk] = p[q];
            }
        row0 += plane * anchors;
    }
    return LOOM_OK;
}
