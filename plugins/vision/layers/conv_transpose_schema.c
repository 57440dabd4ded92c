/* SPDX-License-Identifier: BSD-3-Clause */
/*
** conv_transpose_schema.c - the definition of vision.conv_transpose2d and
** the checks its cpu and cuda kernels share (shapes and attributes only; a
** tensor's data is never read here). The refusals are ATen's
** (ConvUtils.h: check_shape_forward and conv_transpose output size).
*/
#include <string.h>

#include "conv_transpose.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

PK_ATTR_TABLE(conv_transpose2d, CONV_TRANSPOSE2D_ATTRS);

static const loom_arg_def ct_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[N, Cin, H, W]" },
    { .name = "weight", .dtypes = LAYERS_DTYPES, .ndim = 4, .doc = "[Cin, Cout / groups, kh, kw]" },
    { .name = "bias", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[Cout] (0)" },
};
static const loom_arg_def ct_outputs[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = 4,
      .doc = "[N, Cout, (H - 1) sh - 2 ph + dh (kh - 1) + oph + 1, (W alike)]" },
};

static void conv_transpose2d_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[CT_INPUT], *w = call->inputs[CT_WEIGHT];
    const int64_t groups = call->attrs[PK_ATTR(conv_transpose2d, groups)].u.i;
    /* every input value meets every weight of its group once */
    *flops = 2.0 * (double)loom_numel(x) * (double)(w->shape[1] * w->shape[2] * w->shape[3]);
    *bytes = 4.0 * ((double)loom_numel(x) + (double)loom_numel(w))
             + 4.0 * (double)loom_numel(x) * (double)(w->shape[1] * groups) / (double)(x->shape[1] ? x->shape[1] : 1);
}

PK_SCHEMA(vision_conv_transpose2d_schema, "vision.conv_transpose2d", 1,
          "F.conv_transpose2d: the transposed (fractionally strided) convolution, grouped and dilated, with "
          "output_padding",
          PK_INPUTS(ct_inputs), PK_OUTPUTS(ct_outputs), PK_ATTRS(conv_transpose2d_attrs),
          .cost = conv_transpose2d_cost);

loom_status conv_transpose2d_check(loom_call *call, conv_transpose_geom *g, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[CT_INPUT], *w = call->inputs[CT_WEIGHT], *b = call->inputs[CT_BIAS];
    char b1[160], b2[160];
    loom_status st;
    memset(g, 0, sizeof *g);
    if ((st = layers_check_f32_contiguous(call)) != LOOM_OK
        || (st = layers_pair_attr(call, PK_ATTR(conv_transpose2d, stride), 1, &g->sh, &g->sw)) != LOOM_OK
        || (st = layers_pair_attr(call, PK_ATTR(conv_transpose2d, padding), 0, &g->ph, &g->pw)) != LOOM_OK
        || (st = layers_pair_attr(call, PK_ATTR(conv_transpose2d, output_padding), 0, &g->oph, &g->opw)) != LOOM_OK
        || (st = layers_pair_attr(call, PK_ATTR(conv_transpose2d, dilation), 1, &g->dh, &g->dw)) != LOOM_OK)
        return st;
    g->groups = call->attrs[PK_ATTR(conv_transpose2d, groups)].u.i;
    g->n = x->shape[0];
    g->cin = x->shape[1];
    g->h = x->shape[2];
    g->w = x->shape[3];
    g->cout = w->shape[1] * g->groups;
    g->kh = w->shape[2];
    g->kw = w->shape[3];
    if (w->shape[1] <= 0 || g->kh <= 0 || g->kw <= 0)
        return pk_host->fail(LOOM_EINVAL, "'weight' %s must be [Cin, Cout/groups > 0, kh > 0, kw > 0]", DESC(w, b1));
    if (w->shape[0] != g->cin)
        return pk_host->fail(LOOM_EINVAL, "'input' %s has %lld channels but 'weight' %s has %lld rows (weight is "
                             "[Cin, Cout / groups, kh, kw])", DESC(x, b1), (long long)g->cin, DESC(w, b2),
                             (long long)w->shape[0]);
    if (g->cin % g->groups != 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s: Cin = %lld is not a multiple of groups = %lld", DESC(x, b1),
                             (long long)g->cin, (long long)g->groups);
    if (b != NULL && b->shape[0] != g->cout)
        return pk_host->fail(LOOM_EINVAL, "'bias' %s must be [%lld], groups * weight.shape[1] of 'weight' %s",
                             DESC(b, b1), (long long)g->cout, DESC(w, b2));
    /* torch: "output padding must be smaller than either stride or dilation" */
    if ((g->oph >= g->sh && g->oph >= g->dh) || (g->opw >= g->sw && g->opw >= g->dw))
        return pk_host->fail(LOOM_EINVAL, "attribute 'output_padding' = (%lld, %lld) must be smaller than either "
                             "stride (%lld, %lld) or dilation (%lld, %lld)", (long long)g->oph, (long long)g->opw,
                             (long long)g->sh, (long long)g->sw, (long long)g->dh, (long long)g->dw);
    if (g->h == 0 || g->w == 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must have non-zero H and W", DESC(x, b1));
    g->ho = (g->h - 1) * g->sh - 2 * g->ph + g->dh * (g->kh - 1) + g->oph + 1;
    g->wo = (g->w - 1) * g->sw - 2 * g->pw + g->dw * (g->kw - 1) + g->opw + 1;
    if (g->ho <= 0 || g->wo <= 0)
        return pk_host->fail(LOOM_EINVAL, "'input' %s with padding (%lld, %lld) gives a non-positive output "
                             "%lldx%lld for 'weight' %s", DESC(x, b1), (long long)g->ph, (long long)g->pw,
                             (long long)g->ho, (long long)g->wo, DESC(w, b2));
    const int64_t shape[4] = { g->n, g->cout, g->ho, g->wo };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, out)) != LOOM_OK)
        return st;
    g->x = loom_data(x);
    g->wt = loom_data(w);
    g->bias = b != NULL ? loom_data(b) : NULL;
    g->y = loom_data(*out);
    return LOOM_OK;
}
