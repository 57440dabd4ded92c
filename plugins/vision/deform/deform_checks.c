/* SPDX-License-Identifier: BSD-3-Clause */
/*
** deform_checks.c - argument checks of the deform module, shared by the
** cpu and cuda kernels (compiled into both packs).
**
** deform_conv2d follows torchvision's TORCH_CHECKs (deform_conv2d_kernel.cpp)
** and the Python wrapper's inference of groups / offset_groups, but names
** the argument and the expected shape in every message. drop_block and
** stochastic_depth follow the ValueErrors of torchvision.ops.
*/
#include <math.h>
#include <string.h>

#include "deform.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

/* An ints attribute with one value (both dims) or two. */
static loom_status pair_attr(const loom_call *call, int index, const char *name, int64_t min_value,
                           int64_t *a, int64_t *b)
{
    const loom_attr_value *v = &call->attrs[index];
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

static int same_shape4(const loom_tensor *t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return t->shape[0] == a && t->shape[1] == b && t->shape[2] == c && t->shape[3] == d;
}

static loom_status same_dtype_contiguous(const loom_call *call, const char *first_name, loom_dtype dt)
{
    const loom_op_schema *s = call->schema;
    for (int32_t i = 0; i < call->n_inputs; i++) {
        const loom_tensor *t = call->inputs[i];
        char buf[160];
        if (t == NULL)
            continue;
        if (loom_tensor_dtype_of(t) != dt)
            return pk_host->fail(LOOM_EINVAL, "'%s' is %s but '%s' is %s: every tensor must have the dtype of '%s'",
                                 s->inputs[i].name, DESC(t, buf), first_name, pk_host->dtype_name(dt),
                                 first_name);
        if (!loom_is_contiguous(t))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s is not contiguous: pass a compact row-major tensor",
                                 s->inputs[i].name, DESC(t, buf));
    }
    return LOOM_OK;
}

/* torchvision's deform_conv2d kernels hold every size in an int; a tensor
** with no elements could otherwise carry dims whose products overflow. */
static loom_status dims_fit_int(const loom_call *call)
{
    for (int32_t i = 0; i < call->n_inputs; i++) {
        const loom_tensor *t = call->inputs[i];
        char buf[160];
        for (int32_t d = 0; t != NULL && d < t->ndim; d++)
            if (t->shape[d] > INT32_MAX)
                return pk_host->fail(LOOM_EINVAL, "'%s' %s: dim %d is above 2^31 - 1 (torchvision's int)",
                                     call->schema->inputs[i].name, DESC(t, buf), (int)d);
    }
    return LOOM_OK;
}

loom_status deform_conv_check(const loom_call *call, int backward, deform_geom *g)
{
    const loom_tensor *in = call->inputs[backward ? DCB_INPUT : DC_INPUT];
    const loom_tensor *off = call->inputs[backward ? DCB_OFFSET : DC_OFFSET];
    const loom_tensor *wt = call->inputs[backward ? DCB_WEIGHT : DC_WEIGHT];
    const loom_tensor *bias = call->inputs[backward ? DCB_BIAS : DC_BIAS];
    const loom_tensor *mask = call->inputs[backward ? DCB_MASK : DC_MASK];
    const loom_tensor *grad = backward ? call->inputs[DCB_GRAD] : NULL;
    char b1[160], b2[160];
    loom_status st;

    memset(g, 0, sizeof *g);
    g->dtype = loom_tensor_dtype_of(in);
    if ((st = same_dtype_contiguous(call, "input", g->dtype)) != LOOM_OK || (st = dims_fit_int(call)) != LOOM_OK)
        return st;
    if ((st = pair_attr(call, PK_ATTR(deform_conv2d, stride), "stride", 1, &g->sh, &g->sw)) != LOOM_OK
        || (st = pair_attr(call, PK_ATTR(deform_conv2d, padding), "padding", 0, &g->ph, &g->pw)) != LOOM_OK
        || (st = pair_attr(call, PK_ATTR(deform_conv2d, dilation), "dilation", 1, &g->dh, &g->dw)) != LOOM_OK)
        return st;
    g->n = in->shape[0];
    g->cin = in->shape[1];
    g->h = in->shape[2];
    g->w = in->shape[3];
    g->cout = wt->shape[0];
    g->kh = wt->shape[2];
    g->kw = wt->shape[3];
    /* Cout = 0 is valid (torchvision returns [N, 0, Ho, Wo]); kh, kw and
    ** weight.shape[1] are not (torchvision: TORCH_CHECK(weight_h > 0 &&
    ** weight_w > 0), and its wrapper divides by weight.shape[1]) */
    if (g->kh <= 0 || g->kw <= 0 || wt->shape[1] <= 0 || g->cout < 0)
        return pk_host->fail(LOOM_EINVAL, "'weight' %s must be [Cout >= 0, Cin/groups > 0, kh > 0, kw > 0]",
                             DESC(wt, b1));
    if (g->cin % wt->shape[1] != 0)
        return pk_host->fail(LOOM_EINVAL,
                             "'weight' %s: weight.shape[1] = %lld must divide the %lld channels of 'input' %s",
                             DESC(wt, b1), (long long)wt->shape[1], (long long)g->cin, DESC(in, b2));
    g->groups = g->cin / wt->shape[1];
    /* torchvision computes weight.size(0) % groups with groups = 0 here: an
    ** integer division by zero */
    if (g->groups == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s has no channels: groups = Cin / weight.shape[1] = 0 "
                             "(Cin must be a positive multiple of weight.shape[1] = %lld)", DESC(in, b1),
                             (long long)wt->shape[1]);
    if (g->cout % g->groups != 0)
        return pk_host->fail(LOOM_EINVAL, "'weight' %s: Cout = %lld is not a multiple of groups = %lld",
                             DESC(wt, b1), (long long)g->cout, (long long)g->groups);
    int64_t ext_h = g->dh * (g->kh - 1) + 1, ext_w = g->dw * (g->kw - 1) + 1;
    g->ho = (g->h + 2 * g->ph - ext_h) / g->sh + 1;
    g->wo = (g->w + 2 * g->pw - ext_w) / g->sw + 1;
    if (g->h + 2 * g->ph < ext_h || g->w + 2 * g->pw < ext_w || g->ho <= 0 || g->wo <= 0)
        return pk_host->fail(LOOM_EINVAL,
                             "'input' %s is too small for a %lldx%lld kernel with padding (%lld, %lld) and "
                             "dilation (%lld, %lld): the output would be empty",
                             DESC(in, b1), (long long)g->kh, (long long)g->kw, (long long)g->ph,
                             (long long)g->pw, (long long)g->dh, (long long)g->dw);
    int64_t taps = g->kh * g->kw;
    if (off->shape[1] % (2 * taps) != 0 || off->shape[1] == 0)
        return pk_host->fail(LOOM_EINVAL,
                             "'offset' %s: offset.shape[1] must be a positive multiple of 2*kh*kw = %lld; "
                             "expected [%lld, 2*offset_groups*%lld, %lld, %lld]",
                             DESC(off, b1), (long long)(2 * taps), (long long)g->n, (long long)taps,
                             (long long)g->ho, (long long)g->wo);
    g->offset_groups = off->shape[1] / (2 * taps);
    if (g->cin % g->offset_groups != 0)
        return pk_host->fail(LOOM_EINVAL, "'offset' %s gives offset_groups = %lld, which does not divide "
                             "the %lld channels of 'input'", DESC(off, b1), (long long)g->offset_groups,
                             (long long)g->cin);
    if (!same_shape4(off, g->n, 2 * g->offset_groups * taps, g->ho, g->wo))
        return pk_host->fail(LOOM_EINVAL, "'offset' %s: expected [%lld, %lld, %lld, %lld] "
                             "([N, 2*offset_groups*kh*kw, Ho, Wo] for 'input' %s)",
                             DESC(off, b1), (long long)g->n, (long long)(2 * g->offset_groups * taps),
                             (long long)g->ho, (long long)g->wo, DESC(in, b2));
    if (mask != NULL && !same_shape4(mask, g->n, g->offset_groups * taps, g->ho, g->wo))
        return pk_host->fail(LOOM_EINVAL, "'mask' %s: expected [%lld, %lld, %lld, %lld] "
                             "([N, offset_groups*kh*kw, Ho, Wo])", DESC(mask, b1), (long long)g->n,
                             (long long)(g->offset_groups * taps), (long long)g->ho, (long long)g->wo);
    if (bias != NULL && bias->shape[0] != g->cout)
        return pk_host->fail(LOOM_EINVAL, "'bias' %s: expected [%lld] (Cout of 'weight')", DESC(bias, b1),
                             (long long)g->cout);
    if (grad != NULL && !same_shape4(grad, g->n, g->cout, g->ho, g->wo))
        return pk_host->fail(LOOM_EINVAL, "'grad' %s: expected [%lld, %lld, %lld, %lld] ([N, Cout, Ho, Wo])",
                             DESC(grad, b1), (long long)g->n, (long long)g->cout, (long long)g->ho,
                             (long long)g->wo);
    /* the columns (Cin * kh * kw rows of Ho * Wo) of one image, in bytes */
    int64_t cols;
    if (__builtin_mul_overflow(g->cin * taps, g->ho * g->wo, &cols) || cols > INT64_MAX / 8)
        return pk_host->fail(LOOM_EINVAL, "'input' %s with a %lldx%lld kernel: the columns of one image "
                             "(Cin * kh * kw x Ho * Wo = %lld x %lld) are too large", DESC(in, b1),
                             (long long)g->kh, (long long)g->kw, (long long)(g->cin * taps),
                             (long long)(g->ho * g->wo));
    g->use_mask = mask != NULL;
    g->input = loom_data(in);
    g->offset = loom_data(off);
    g->weight = loom_data(wt);
    g->bias = bias != NULL ? loom_data(bias) : NULL;
    g->mask = mask != NULL ? loom_data(mask) : NULL;
    g->grad = grad != NULL ? loom_data(grad) : NULL;
    return LOOM_OK;
}

loom_status deform_conv_alloc(loom_call *call, const deform_geom *g, int backward, loom_tensor **outs)
{
    if (!backward)
        return pk_host->alloc_output(call, 0, g->dtype, 4, (const int64_t[]){ g->n, g->cout, g->ho, g->wo },
                                     &outs[0]);
    const int64_t taps = g->kh * g->kw;
    const int64_t shapes[5][4] = {
        { g->n, g->cin, g->h, g->w },
        { g->cout, g->cin / g->groups, g->kh, g->kw },
        { g->n, 2 * g->offset_groups * taps, g->ho, g->wo },
        { g->n, g->use_mask ? g->offset_groups * taps : 0, g->ho, g->wo },
        { g->cout, 0, 0, 0 },
    };
    for (int32_t i = 0; i < 5; i++) {
        loom_status st = pk_host->alloc_output(call, i, g->dtype, i == 4 ? 1 : 4, shapes[i], &outs[i]);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

void deform_conv_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *in = call->inputs[DC_INPUT], *wt = call->inputs[DC_WEIGHT];
    const loom_tensor *out = call->n_outputs > 0 ? call->outputs[0] : NULL;
    if (out == NULL || in == NULL || wt == NULL || out->ndim != 4 || wt->ndim != 4)
        return;
    double k = (double)(wt->shape[1] * wt->shape[2] * wt->shape[3]);
    double es = (double)pk_host->dtype_size(loom_tensor_dtype_of(in));
    *flops = 2.0 * (double)loom_numel(out) * k;
    *bytes = es * ((double)loom_numel(in) + (double)loom_numel(out) + (double)loom_numel(wt)
                   + (double)loom_numel(call->inputs[DC_OFFSET]) * 1.5);
}

void deform_conv_backward_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *grad = call->inputs[DCB_GRAD], *in = call->inputs[DCB_INPUT];
    const loom_tensor *wt = call->inputs[DCB_WEIGHT], *off = call->inputs[DCB_OFFSET];
    if (grad == NULL || in == NULL || wt == NULL || off == NULL || wt->ndim != 4)
        return;
    double k = (double)(wt->shape[1] * wt->shape[2] * wt->shape[3]);
    double es = (double)pk_host->dtype_size(loom_tensor_dtype_of(in));
    *flops = 4.0 * (double)loom_numel(grad) * k;     /* grad_columns and grad_weight GEMMs */
    *bytes = es * (2.0 * ((double)loom_numel(in) + (double)loom_numel(off)) + (double)loom_numel(grad)
                   + 2.0 * (double)loom_numel(wt));
}

/* ------------------------------------------------------------- dropout */

static loom_status check_p(double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return pk_host->fail(LOOM_EINVAL, "attribute 'p' = %g: the drop probability must be in [0, 1]", p);
    return LOOM_OK;
}

loom_status drop_block_check(const loom_call *call, int dims, drop_block_plan *pl)
{
    const loom_tensor *in = call->inputs[DROP_INPUT], *noise = call->inputs[DROP_NOISE];
    char b1[160], b2[160];
    loom_status st;

    memset(pl, 0, sizeof *pl);
    pl->dtype = loom_tensor_dtype_of(in);
    pl->dims = dims;
    pl->p = call->attrs[PK_ATTR(drop_block, p)].u.f;
    pl->eps = call->attrs[PK_ATTR(drop_block, eps)].u.f;
    pl->seed = (uint64_t)call->attrs[PK_ATTR(drop_block, seed)].u.i;
    if ((st = check_p(pl->p)) != LOOM_OK || (st = same_dtype_contiguous(call, "input", pl->dtype)) != LOOM_OK)
        return st;
    pl->n = in->shape[0];
    pl->c = in->shape[1];
    pl->numel = loom_numel(in);
    pl->input = loom_data(in);
    int64_t bs = call->attrs[PK_ATTR(drop_block, block_size)].u.i, smallest = INT64_MAX;
    for (int d = 0; d < dims; d++) {
        pl->sp[d] = in->shape[2 + d];
        if (pl->sp[d] < smallest)
            smallest = pl->sp[d];
    }
    if (bs < 1)
        return pk_host->fail(LOOM_EINVAL, "attribute 'block_size' = %lld must be >= 1", (long long)bs);
    pl->identity = !call->attrs[PK_ATTR(drop_block, training)].u.b || pl->p == 0.0;
    if (pl->identity)
        return LOOM_OK;
    pl->bs = bs < smallest ? bs : smallest;
    if (pl->bs % 2 == 0)
        return pk_host->fail(LOOM_EINVAL, "block size should be odd: min(block_size = %lld, spatial sizes of "
                             "'input' %s) = %lld is even", (long long)bs, DESC(in, b1), (long long)pl->bs);
    /* torchvision's F.max_pool2d/3d refuse a channel dim of 0 (only the
    ** batch may be empty): a RuntimeError there, a refusal here */
    if (pl->c == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s has no channels: drop_block%dd needs C > 0 (torchvision's "
                             "max_pool%dd refuses an empty channel dim; only the batch may be empty)",
                             DESC(in, b1), dims, dims);
    double area = 1.0, valid = 1.0;
    pl->noise_numel = pl->n * pl->c;
    for (int d = 0; d < dims; d++) {
        pl->nsp[d] = pl->sp[d] - pl->bs + 1;
        area *= (double)pl->sp[d];
        valid *= (double)pl->nsp[d];
        pl->noise_numel *= pl->nsp[d];
    }
    /* torchvision: gamma = p * prod(sizes) / (bs^dims * prod(sizes - bs + 1)) */
    pl->gamma = pl->p * area / (pow((double)pl->bs, (double)dims) * valid);
    if (noise != NULL) {
        int ok = noise->shape[0] == pl->n && noise->shape[1] == pl->c;
        for (int d = 0; d < dims; d++)
            ok = ok && noise->shape[2 + d] == pl->nsp[d];
        if (!ok) {
            if (dims == 2)
                return pk_host->fail(LOOM_EINVAL, "'noise' %s: expected [%lld, %lld, %lld, %lld] "
                                     "([N, C, H-bs+1, W-bs+1] for 'input' %s, bs = %lld)", DESC(noise, b1),
                                     (long long)pl->n, (long long)pl->c, (long long)pl->nsp[0],
                                     (long long)pl->nsp[1], DESC(in, b2), (long long)pl->bs);
            return pk_host->fail(LOOM_EINVAL, "'noise' %s: expected [%lld, %lld, %lld, %lld, %lld] "
                                 "([N, C, D-bs+1, H-bs+1, W-bs+1] for 'input' %s, bs = %lld)", DESC(noise, b1),
                                 (long long)pl->n, (long long)pl->c, (long long)pl->nsp[0],
                                 (long long)pl->nsp[1], (long long)pl->nsp[2], DESC(in, b2), (long long)pl->bs);
        }
        pl->noise = loom_data(noise);
    }
    /* gamma <= p for every bs <= size ((bs-1)(S-bs) >= 0); clamp the rounding */
    if (pl->gamma > 1.0)
        pl->gamma = 1.0;
    return LOOM_OK;
}

loom_status stochastic_depth_check(const loom_call *call, stochastic_depth_plan *pl)
{
    const loom_tensor *in = call->inputs[DROP_INPUT], *noise = call->inputs[DROP_NOISE];
    const char *mode = call->attrs[PK_ATTR(stochastic_depth, mode)].u.s;
    char b1[160], b2[160];
    loom_status st;

    memset(pl, 0, sizeof *pl);
    pl->dtype = loom_tensor_dtype_of(in);
    pl->p = call->attrs[PK_ATTR(stochastic_depth, p)].u.f;
    pl->seed = (uint64_t)call->attrs[PK_ATTR(stochastic_depth, seed)].u.i;
    if ((st = check_p(pl->p)) != LOOM_OK || (st = same_dtype_contiguous(call, "input", pl->dtype)) != LOOM_OK)
        return st;
    int row = strcmp(mode, "row") == 0;
    if (!row && strcmp(mode, "batch") != 0)
        return pk_host->fail(LOOM_EINVAL, "attribute 'mode' must be \"batch\" or \"row\", got \"%s\"", mode);
    if (in->ndim < 1)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must have rank >= 1 ([N, ...])", DESC(in, b1));
    pl->input = loom_data(in);
    pl->rows = row ? in->shape[0] : 1;
    pl->row_len = pl->rows > 0 ? loom_numel(in) / pl->rows : 0;
    pl->identity = !call->attrs[PK_ATTR(stochastic_depth, training)].u.b || pl->p == 0.0;
    if (noise != NULL && !pl->identity) {
        int ok = noise->ndim == in->ndim && noise->shape[0] == pl->rows;
        for (int32_t d = 1; ok && d < noise->ndim; d++)
            ok = noise->shape[d] == 1;
        if (!ok)
            return pk_host->fail(LOOM_EINVAL, "'noise' %s: expected [%lld, 1, ...] of rank %d for mode \"%s\" "
                                 "and 'input' %s", DESC(noise, b1), (long long)pl->rows, (int)in->ndim, mode,
                                 DESC(in, b2));
        pl->noise = loom_data(noise);
    }
    return LOOM_OK;
}
