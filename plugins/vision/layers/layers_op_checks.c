/* SPDX-License-Identifier: BSD-3-Clause */
/*
** layers_op_checks.c - the argument checks of batch_norm, linear,
** softmax, layer_norm, adaptive_avg_pool2d, squeeze_excitation and
** channel_shuffle, made by their cpu and cuda kernels alike: the same
** refusals in the same words on every device. Shapes and attributes only
** (a tensor's data may be on a device and is never read here); each
** allocates the output on success. (conv2d's and the 2-D pools' geometry:
** layers_checks.c.)
*/
#include <string.h>

#include "blocks.h"
#include "layers.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

loom_status layers_check_batch_norm(loom_call *call, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[BN_INPUT];
    char b1[160], b2[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    if (x->ndim < 2)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be [N, C, ...] with rank >= 2", DESC(x, b1));
    for (int i = BN_MEAN; i <= BN_BIAS; i++) {
        const loom_tensor *t = call->inputs[i];
        if (t != NULL && t->shape[0] != x->shape[1])
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%lld], the channels of 'input' %s",
                                 call->schema->inputs[i].name, DESC(t, b1), (long long)x->shape[1], DESC(x, b2));
    }
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, out);
}

loom_status layers_check_linear(loom_call *call, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0], *w = call->inputs[1], *b = call->inputs[2];
    char b1[160], b2[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    if (x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
        return pk_host->fail(LOOM_EINVAL, "'input' %s must end in in_features = %lld, weight.shape[1] of 'weight' %s",
                             DESC(x, b1), (long long)w->shape[1], DESC(w, b2));
    if (b != NULL && b->shape[0] != w->shape[0])
        return pk_host->fail(LOOM_EINVAL, "'bias' %s must be [%lld], the out_features of 'weight' %s", DESC(b, b1),
                             (long long)w->shape[0], DESC(w, b2));
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof shape[0]);
    shape[x->ndim - 1] = w->shape[0];
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, shape, out);
}

loom_status layers_check_softmax(loom_call *call, int64_t *len, int64_t *inner, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0];
    char b1[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    int64_t nd = x->ndim > 0 ? x->ndim : 1, dim = call->attrs[PK_ATTR(softmax, dim)].u.i;
    if (dim < -nd || dim >= nd)
        return pk_host->fail(LOOM_EINVAL, "attribute 'dim' = %lld is out of range for 'input' %s", (long long)dim,
                             DESC(x, b1));
    dim = dim < 0 ? dim + nd : dim;
    *len = x->ndim > 0 ? x->shape[dim] : 1;
    *inner = 1;
    for (int32_t d = (int32_t)dim + 1; d < x->ndim; d++)
        *inner *= x->shape[d];
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, out);
}

loom_status layers_check_layer_norm(loom_call *call, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0], *w = call->inputs[1], *b = call->inputs[2];
    char b1[160], b2[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    int ok = w->ndim >= 1 && w->ndim <= x->ndim;
    for (int32_t d = 0; ok && d < w->ndim; d++)
        ok = w->shape[d] == x->shape[x->ndim - w->ndim + d];
    if (!ok)
        return pk_host->fail(LOOM_EINVAL, "'weight' %s (normalized_shape) must be the trailing dims of 'input' %s",
                             DESC(w, b1), DESC(x, b2));
    if (b != NULL && (b->ndim != w->ndim || loom_numel(b) != loom_numel(w)))
        return pk_host->fail(LOOM_EINVAL, "'bias' %s must have the shape of 'weight' %s", DESC(b, b1), DESC(w, b2));
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, out);
}

loom_status layers_check_adaptive(loom_call *call, pool2d_geom *g, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0];
    const loom_attr_value *v = &call->attrs[PK_ATTR(adaptive_pool, output_size)];
    char b1[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    if (v->count != 1 && v->count != 2)
        return pk_host->fail(LOOM_EINVAL, "attribute 'output_size' must hold 1 or 2 integers, got %lld",
                             (long long)v->count);
    if (x->shape[1] == 0 || x->shape[2] == 0 || x->shape[3] == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must have non-zero C, H and W", DESC(x, b1));
    memset(g, 0, sizeof *g);
    g->planes = x->shape[0] * x->shape[1];
    g->h = x->shape[2];
    g->w = x->shape[3];
    g->ho = v->u.ints[0];
    g->wo = v->u.ints[v->count - 1];
    if (g->ho > (INT64_C(1) << 30) || g->wo > (INT64_C(1) << 30))
        return pk_host->fail(LOOM_EINVAL, "attribute 'output_size' = (%lld, %lld) is above 2^30", (long long)g->ho,
                             (long long)g->wo);
    int64_t shape[4] = { x->shape[0], x->shape[1], g->ho, g->wo };
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, out);
}

/* A 1x1 conv weight: [rows, cols, 1, 1] or [rows, cols]. */
static loom_status check_fc(const loom_call *call, int index, int64_t rows, int64_t cols, int rows_known)
{
    const loom_tensor *w = call->inputs[index];
    char b1[160];
    int ok = (w->ndim == 2 || (w->ndim == 4 && w->shape[2] == 1 && w->shape[3] == 1)) && w->shape[1] == cols
          && (!rows_known || w->shape[0] == rows);
    if (ok)
        return LOOM_OK;
    const char *r = rows_known ? "C" : "S";
    return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%s, %lld, 1, 1] or [%s, %lld] (a 1x1 conv's weight)",
                         call->schema->inputs[index].name, DESC(w, b1), r, (long long)cols, r, (long long)cols);
}

loom_status layers_check_squeeze_excitation(loom_call *call, int64_t *squeeze, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[SE_INPUT];
    const loom_tensor *b1t = call->inputs[SE_FC1_BIAS], *b2t = call->inputs[SE_FC2_BIAS];
    char b1[160], b2[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    const int64_t n = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3];
    if ((st = check_fc(call, SE_FC1_WEIGHT, 0, c, 0)) != LOOM_OK)
        return st;
    const int64_t s = call->inputs[SE_FC1_WEIGHT]->shape[0];
    if ((st = check_fc(call, SE_FC2_WEIGHT, c, s, 1)) != LOOM_OK)
        return st;
    if (b1t->shape[0] != s)
        return pk_host->fail(LOOM_EINVAL, "'fc1_bias' %s must be [%lld], the rows of 'fc1_weight' %s", DESC(b1t, b1),
                             (long long)s, DESC(call->inputs[SE_FC1_WEIGHT], b2));
    if (b2t->shape[0] != c)
        return pk_host->fail(LOOM_EINVAL, "'fc2_bias' %s must be [%lld], the channels of 'input' %s", DESC(b2t, b1),
                             (long long)c, DESC(x, b2));
    if (hw == 0 && n > 0 && c > 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: the average pool needs non-zero H and W", DESC(x, b1));
    *squeeze = s;
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, x->shape, out);
}

loom_status layers_check_shuffle(loom_call *call, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[0], *other = call->n_inputs > 1 ? call->inputs[1] : NULL;
    char b1[160], b2[160];
    const int64_t groups = call->attrs[PK_ATTR(channel_shuffle, groups)].u.i;
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: channel_shuffle expects input to have at least 3 dimensions",
                             DESC(x, b1));
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof shape[0]);
    if (other != NULL) {
        int ok = loom_tensor_dtype_of(other) == loom_tensor_dtype_of(x) && other->ndim == x->ndim;
        for (int32_t d = 0; ok && d < x->ndim; d++)
            ok = d == 1 || other->shape[d] == x->shape[d];
        if (!ok)
            return pk_host->fail(LOOM_EINVAL, "'other' %s must be 'input' %s but for dim 1 (they are concatenated "
                                 "along it)", DESC(other, b1), DESC(x, b2));
        shape[1] += other->shape[1];
    }
    if (shape[1] % groups != 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: number of channels must be divisible by groups. Got %lld "
                             "channels and %lld groups", DESC(x, b1), (long long)shape[1], (long long)groups);
    loom_status st = pk_host->alloc_output(call, 0, loom_tensor_dtype_of(x), x->ndim, shape, out);
    if (st != LOOM_OK || loom_numel(*out) == 0)
        return st;
    if (loom_data(*out) == loom_data(x) || (other != NULL && loom_data(*out) == loom_data(other)))
        return pk_host->fail(LOOM_EINVAL, "'output' is an input: channel_shuffle does not work in place");
    return LOOM_OK;
}
