/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_checks.c - argument checks of the layers module shared by every
** backend: the geometry of conv2d and of the 2-D pools, computed as torch
** does (ATen's conv_output_size and pooling_output_shape), with messages
** naming the argument and its shape where torch raises.
*/
#include <math.h>
#include <string.h>

#include "gemm/gemm.h"
#include "layers.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))
#define DIM_LIMIT (INT64_C(1) << 31)    /* every size fits an int (as in ATen's kernels) */

loom_status layers_check_f32_contiguous(const loom_call *call)
{
    for (int32_t i = 0; i < call->n_inputs; i++) {
        const loom_tensor *t = call->inputs[i];
        char buf[160];
        if (t == NULL)
            continue;
        if (loom_tensor_dtype_of(t) != LOOM_DTYPE_F32)
            return pk_host->fail(LOOM_EINVAL, "'%s' is %s: the layers take f32", call->schema->inputs[i].name,
                                 DESC(t, buf));
        if (!loom_is_contiguous(t))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s is not contiguous: pass a compact row-major tensor",
                                 call->schema->inputs[i].name, DESC(t, buf));
        for (int32_t d = 0; d < t->ndim; d++)
            if (t->shape[d] >= DIM_LIMIT)
                return pk_host->fail(LOOM_EINVAL, "'%s' %s: dim %d is 2^31 or more", call->schema->inputs[i].name,
                                     DESC(t, buf), (int)d);
    }
    return LOOM_OK;
}

/* An ints attribute with one value (both dims) or two, each in [min, 2^30]. */
static loom_status pair_attr(const loom_call *call, int index, int64_t min_value, int64_t *a, int64_t *b)
{
    const loom_attr_value *v = &call->attrs[index];
    const char *name = call->schema->attrs[index].name;
    if (!v->is_set || (v->count != 1 && v->count != 2))
        return pk_host->fail(LOOM_EINVAL, "attribute '%s' must hold 1 or 2 integers, got %lld", name,
                             (long long)(v->is_set ? v->count : 0));
    *a = v->u.ints[0];
    *b = v->u.ints[v->count - 1];
    if (*a < min_value || *b < min_value || *a > (INT64_C(1) << 30) || *b > (INT64_C(1) << 30))
        return pk_host->fail(LOOM_EINVAL, "attribute '%s' = (%lld, %lld): each value must be in [%lld, 2^30]",
                             name, (long long)*a, (long long)*b, (long long)min_value);
    return LOOM_OK;
}

loom_status layers_pair_attr(const loom_call *call, int index, int64_t min_value, int64_t *a, int64_t *b)
{
    return pair_attr(call, index, min_value, a, b);
}

static layers_pad_mode pad_mode_of(const char *s)
{
    return strcmp(s, "reflect") == 0 ? PAD_REFLECT : strcmp(s, "replicate") == 0 ? PAD_REPLICATE
         : strcmp(s, "circular") == 0 ? PAD_CIRCULAR : PAD_ZEROS;
}

static int act_of(const char *s)
{
    return strcmp(s, "relu") == 0 ? PK_GEMM_ACT_RELU : strcmp(s, "silu") == 0 ? PK_GEMM_ACT_SILU
         : strcmp(s, "gelu") == 0 ? PK_GEMM_ACT_GELU_ERF : PK_GEMM_ACT_NONE;
}

loom_status conv2d_check(loom_call *call, conv2d_geom *g, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[CONV_INPUT], *w = call->inputs[CONV_WEIGHT], *b = call->inputs[CONV_BIAS];
    char b1[160], b2[160];
    loom_status st;
    memset(g, 0, sizeof *g);
    if ((st = layers_check_f32_contiguous(call)) != LOOM_OK
        || (st = pair_attr(call, PK_ATTR(conv2d, stride), 1, &g->sh, &g->sw)) != LOOM_OK
        || (st = pair_attr(call, PK_ATTR(conv2d, padding), 0, &g->ph, &g->pw)) != LOOM_OK
        || (st = pair_attr(call, PK_ATTR(conv2d, dilation), 1, &g->dh, &g->dw)) != LOOM_OK)
        return st;
    g->groups = call->attrs[PK_ATTR(conv2d, groups)].u.i;
    g->pad_mode = pad_mode_of(call->attrs[PK_ATTR(conv2d, padding_mode)].u.s);
    g->act = act_of(call->attrs[PK_ATTR(conv2d, activation)].u.s);
    g->n = x->shape[0];
    g->cin = x->shape[1];
    g->h = x->shape[2];
    g->w = x->shape[3];
    g->cout = w->shape[0];
    g->kh = w->shape[2];
    g->kw = w->shape[3];
    /* torch: "weight should have at least three dimensions" and a kernel of
    ** positive size; Cin = groups * weight.shape[1], Cout % groups == 0 */
    if (g->kh <= 0 || g->kw <= 0 || w->shape[1] <= 0)
        return pk_host->fail(LOOM_EINVAL, "'weight' %s must be [Cout, Cin/groups > 0, kh > 0, kw > 0]", DESC(w, b1));
    if (g->cin != g->groups * w->shape[1])
        return pk_host->fail(LOOM_EINVAL,
                             "'input' %s has %lld channels but 'weight' %s with groups = %lld expects %lld "
                             "(groups * weight.shape[1])", DESC(x, b1), (long long)g->cin, DESC(w, b2),
                             (long long)g->groups, (long long)(g->groups * w->shape[1]));
    if (g->cout % g->groups != 0)
        return pk_host->fail(LOOM_EINVAL, "'weight' %s: Cout = %lld is not a multiple of groups = %lld", DESC(w, b1),
                             (long long)g->cout, (long long)g->groups);
    if (b != NULL && b->shape[0] != g->cout)
        return pk_host->fail(LOOM_EINVAL, "'bias' %s must be [%lld], the Cout of 'weight' %s", DESC(b, b1),
                             (long long)g->cout, DESC(w, b2));
    /* nn.Conv2d pads with F.pad(mode) first: reflect needs padding < size,
    ** circular padding <= size, replicate a non-empty map */
    if (g->pad_mode == PAD_REFLECT && (g->ph >= g->h || g->pw >= g->w))
        return pk_host->fail(LOOM_EINVAL, "'input' %s: reflect padding (%lld, %lld) must be below the map's size",
                             DESC(x, b1), (long long)g->ph, (long long)g->pw);
    if (g->pad_mode == PAD_CIRCULAR && (g->ph > g->h || g->pw > g->w))
        return pk_host->fail(LOOM_EINVAL, "'input' %s: circular padding (%lld, %lld) may not exceed the map's size",
                             DESC(x, b1), (long long)g->ph, (long long)g->pw);
    if (g->pad_mode != PAD_ZEROS && (g->ph > 0 || g->pw > 0) && (g->h == 0 || g->w == 0))
        return pk_host->fail(LOOM_EINVAL, "'input' %s: an empty map cannot be padded with mode '%s'", DESC(x, b1),
                             call->attrs[PK_ATTR(conv2d, padding_mode)].u.s);
    int64_t ext_h = g->dh * (g->kh - 1) + 1, ext_w = g->dw * (g->kw - 1) + 1;
    if (g->h + 2 * g->ph < ext_h || g->w + 2 * g->pw < ext_w)
        return pk_host->fail(LOOM_EINVAL,
                             "'input' %s padded by (%lld, %lld) is smaller than the %lldx%lld kernel of 'weight' %s "
                             "dilated by (%lld, %lld)", DESC(x, b1), (long long)g->ph, (long long)g->pw,
                             (long long)g->kh, (long long)g->kw, DESC(w, b2), (long long)g->dh, (long long)g->dw);
    g->ho = (g->h + 2 * g->ph - ext_h) / g->sh + 1;
    g->wo = (g->w + 2 * g->pw - ext_w) / g->sw + 1;
    int64_t shape[4] = { g->n, g->cout, g->ho, g->wo };
    const loom_tensor *r = call->n_inputs > CONV_RESIDUAL ? call->inputs[CONV_RESIDUAL] : NULL;
    if (r != NULL && (r->shape[0] != shape[0] || r->shape[1] != shape[1] || r->shape[2] != shape[2]
                      || r->shape[3] != shape[3]))
        return pk_host->fail(LOOM_EINVAL, "'residual' %s must have the output's shape [%lld, %lld, %lld, %lld]",
                             DESC(r, b1), (long long)shape[0], (long long)shape[1], (long long)shape[2],
                             (long long)shape[3]);
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, out)) != LOOM_OK)
        return st;
    g->residual = r != NULL ? loom_data(r) : NULL;
    g->residual_after = r != NULL && call->attrs[PK_ATTR(conv2d, residual_after_activation)].u.b;
    g->x = loom_data(x);
    g->wt = loom_data(w);
    g->bias = b != NULL ? loom_data(b) : NULL;
    g->y = loom_data(*out);
    if (g->residual_after && g->residual == g->y)
        return pk_host->fail(LOOM_EINVAL, "'residual' is the output: with residual_after_activation it must be "
                             "another tensor (the activation comes first)");
    return LOOM_OK;
}

void layers_fold_batch_norm(int64_t cout, int64_t k, const float *weight, const float *bias, const float *gamma,
                            const float *beta, const float *mean, const float *var, double eps, float *w_out,
                            float *b_out)
{
    for (int64_t o = 0; o < cout; o++) {
        double s = (double)gamma[o] / sqrt((double)var[o] + eps);
        for (int64_t i = 0; i < k; i++)
            w_out[o * k + i] = (float)((double)weight[o * k + i] * s);
        double b0 = bias != NULL ? (double)bias[o] : 0.0;
        b_out[o] = (float)((b0 - (double)mean[o]) * s + (double)beta[o]);
    }
}

/* ATen's pooling_output_shape. */
static int64_t pool_out(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, int ceil_mode)
{
    int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    int64_t o = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
    if (ceil_mode && (o - 1) * stride >= in + pad)
        o--;
    return o;
}

loom_status pool2d_check(loom_call *call, int is_max, pool2d_geom *g, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0];
    char b1[160];
    loom_status st;
    int ks = is_max ? PK_ATTR(max_pool2d, kernel_size) : PK_ATTR(avg_pool2d, kernel_size);
    int ss = is_max ? PK_ATTR(max_pool2d, stride) : PK_ATTR(avg_pool2d, stride);
    int ps = is_max ? PK_ATTR(max_pool2d, padding) : PK_ATTR(avg_pool2d, padding);
    int cm = is_max ? PK_ATTR(max_pool2d, ceil_mode) : PK_ATTR(avg_pool2d, ceil_mode);
    memset(g, 0, sizeof *g);
    g->dh = g->dw = 1;
    if ((st = layers_check_f32_contiguous(call)) != LOOM_OK
        || (st = pair_attr(call, ks, 1, &g->kh, &g->kw)) != LOOM_OK
        || (st = pair_attr(call, ps, 0, &g->ph, &g->pw)) != LOOM_OK)
        return st;
    if (call->attrs[ss].is_set && call->attrs[ss].count > 0) {
        if ((st = pair_attr(call, ss, 1, &g->sh, &g->sw)) != LOOM_OK)
            return st;
    } else {
        g->sh = g->kh;      /* torch: stride defaults to kernel_size */
        g->sw = g->kw;
    }
    if (is_max && (st = pair_attr(call, PK_ATTR(max_pool2d, dilation), 1, &g->dh, &g->dw)) != LOOM_OK)
        return st;
    int ceil_mode = call->attrs[cm].u.b;
    /* torch: "pad should be at most half of effective kernel size" (max:
    ** of the dilated kernel; avg: of kernel_size) */
    int64_t eh = is_max ? (g->kh - 1) * g->dh + 1 : g->kh, ew = is_max ? (g->kw - 1) * g->dw + 1 : g->kw;
    if (g->ph > eh / 2 || g->pw > ew / 2)
        return pk_host->fail(LOOM_EINVAL, "attribute 'padding' = (%lld, %lld) must be at most half of the "
                             "(effective) kernel size (%lld, %lld)", (long long)g->ph, (long long)g->pw,
                             (long long)eh, (long long)ew);
    /* torch: "Expected ... input with non-zero sizes for non-batch dimensions" */
    if (x->shape[1] == 0 || x->shape[2] == 0 || x->shape[3] == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must have non-zero C, H and W", DESC(x, b1));
    g->planes = x->shape[0] * x->shape[1];
    g->h = x->shape[2];
    g->w = x->shape[3];
    g->ho = pool_out(g->h, g->kh, g->ph, g->sh, g->dh, ceil_mode);
    g->wo = pool_out(g->w, g->kw, g->pw, g->sw, g->dw, ceil_mode);
    if (g->ho <= 0 || g->wo <= 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s is too small for kernel (%lld, %lld): output %lldx%lld",
                             DESC(x, b1), (long long)g->kh, (long long)g->kw, (long long)g->ho, (long long)g->wo);
    if (!is_max) {
        g->count_include_pad = call->attrs[PK_ATTR(avg_pool2d, count_include_pad)].u.b;
        const loom_attr_value *d = &call->attrs[PK_ATTR(avg_pool2d, divisor_override)];
        g->divisor = d->is_set ? d->u.i : 0;
    }
    int64_t shape[4] = { x->shape[0], x->shape[1], g->ho, g->wo };
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, out);
}
