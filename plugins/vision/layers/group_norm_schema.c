/* SPDX-License-Identifier: BSD-3-Clause */
/*
** group_norm_schema.c - the definition of vision.group_norm and the checks its
** cpu and cuda kernels share (the same refusals in the same words on every
** device; shapes and attributes only, a tensor's data is never read here).
*/
#include "group_norm.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))

PK_ATTR_TABLE(group_norm, GROUP_NORM_ATTRS);

static const loom_arg_def gn_inputs[] = {
    { .name = "input", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "[N, C, *], rank >= 2" },
    { .name = "weight", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] (gamma; 1)" },
    { .name = "bias", .dtypes = LAYERS_DTYPES, .flags = LOOM_ARG_OPTIONAL, .ndim = 1, .doc = "[C] (beta; 0)" },
};
static const loom_arg_def gn_outputs[] = {
    { .name = "output", .dtypes = LAYERS_DTYPES, .ndim = -1, .doc = "the shape of input" },
};

PK_SCHEMA(vision_group_norm_schema, "vision.group_norm", 1,
          "F.group_norm(num_groups, weight, bias, eps) at inference: each of the G channel groups normalised by "
          "its mean and biased variance, then * weight + bias per channel",
          PK_INPUTS(gn_inputs), PK_OUTPUTS(gn_outputs), PK_ATTRS(group_norm_attrs));

loom_status group_norm_check(loom_call *call, group_norm_geom *g, loom_tensor **out)
{
    const loom_tensor *x = call->inputs[GN_INPUT];
    char b1[160], b2[160];
    loom_status st = layers_check_f32_contiguous(call);
    if (st != LOOM_OK)
        return st;
    if (x->ndim < 2)
        return pk_host->fail(LOOM_EINVAL, "'input' %s must be [N, C, *] with rank >= 2", DESC(x, b1));
    g->n = x->shape[0];
    g->c = x->shape[1];
    g->g = call->attrs[PK_ATTR(group_norm, num_groups)].u.i;
    if (g->c % g->g != 0)
        return pk_host->fail(LOOM_EINVAL, "attribute 'num_groups' = %lld must divide the channels of 'input' %s",
                             (long long)g->g, DESC(x, b1));
    for (int i = GN_WEIGHT; i <= GN_BIAS; i++) {
        const loom_tensor *t = call->inputs[i];
        if (t != NULL && t->shape[0] != g->c)
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [%lld], the channels of 'input' %s",
                                 call->schema->inputs[i].name, DESC(t, b1), (long long)g->c, DESC(x, b2));
    }
    g->inner = 1;
    for (int32_t d = 2; d < x->ndim; d++)
        g->inner *= x->shape[d];
    g->groups = g->n * g->g;
    g->channels_per_group = g->c / g->g;
    g->len = g->channels_per_group * g->inner;
    g->eps = call->attrs[PK_ATTR(group_norm, eps)].u.f;
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, x->ndim, x->shape, out);
}
