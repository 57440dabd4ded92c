/* SPDX-License-Identifier: BSD-3-Clause */
/*
** mobilenet_v3_body.c - torchvision's MobileNetV3-Large features as a
** detector's body (mobilenet_v3_body.h): the block table, the loading of
** its keys, and its forward as dispatched ops (host->op_call, so
** LOOM_VERBOSE=2 names each step's backend):
**   vision.conv2d               every conv, its batchnorm folded in; the
**                               relu fused, the residual added in the
**                               projection (torch: block(x) + x, the
**                               projection has no activation)
**   vision.hardswish            after the convs of hardswish blocks, the
**                               stem and the last conv, in place
**   vision.squeeze_excitation   relu then hardsigmoid, in place
** Intermediate tensors are made by the ops and freed once read; the
** returned stages' outputs go to the caller.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mobilenet_v3_body.h"

/* _mobilenet_v3_conf("mobilenet_v3_large")'s rows before scaling: in,
** kernel, expanded, out, use_se, use_hs ("HS"), stride; the last three are
** halved (their 160 / 960) with reduced_tail. */
static const struct {
    int64_t in, kernel, expanded, out;
    int use_se, use_hs, stride, tail_in, tail_exp, tail_out;
} LARGE[MNV3_BLOCKS] = {
    { 16, 3, 16, 16, 0, 0, 1, 0, 0, 0 },     { 16, 3, 64, 24, 0, 0, 2, 0, 0, 0 },
    { 24, 3, 72, 24, 0, 0, 1, 0, 0, 0 },     { 24, 5, 72, 40, 1, 0, 2, 0, 0, 0 },
    { 40, 5, 120, 40, 1, 0, 1, 0, 0, 0 },    { 40, 5, 120, 40, 1, 0, 1, 0, 0, 0 },
    { 40, 3, 240, 80, 0, 1, 2, 0, 0, 0 },    { 80, 3, 200, 80, 0, 1, 1, 0, 0, 0 },
    { 80, 3, 184, 80, 0, 1, 1, 0, 0, 0 },    { 80, 3, 184, 80, 0, 1, 1, 0, 0, 0 },
    { 80, 3, 480, 112, 1, 1, 1, 0, 0, 0 },   { 112, 3, 672, 112, 1, 1, 1, 0, 0, 0 },
    { 112, 5, 672, 160, 1, 1, 2, 0, 0, 1 },  { 160, 5, 960, 160, 1, 1, 1, 1, 1, 1 },
    { 160, 5, 960, 160, 1, 1, 1, 1, 1, 1 },
};

/* torchvision's _make_divisible(v, 8): the nearest multiple of 8, at least
** 8, and not under 90% of v. */
static int64_t make_divisible(double v)
{
    int64_t n = (int64_t)(v + 4.0) / 8 * 8;
    if (n < 8)
        n = 8;
    if ((double)n < 0.9 * v)
        n += 8;
    return n;
}

static int64_t scaled(int64_t c, int halve, const mnv3_body *b)
{
    return make_divisible((double)(halve && b->reduced_tail ? c / 2 : c) * b->width_mult);
}

loom_status mnv3_body_config(const char *cls, double width_mult, int reduced_tail, mnv3_body *b)
{
    if (!(width_mult > 0.0 && width_mult <= 16.0))
        return pk_host->fail(LOOM_EINVAL, "%s: attribute 'width_mult' is %g; it must be in (0, 16]", cls, width_mult);
    memset(b, 0, sizeof *b);
    b->width_mult = width_mult;
    b->reduced_tail = reduced_tail;
    int stage_index[MNV3_MODULES], n_stages = 0;
    stage_index[n_stages++] = 0;
    for (int i = 0; i < MNV3_BLOCKS; i++) {
        mnv3_block_conf *c = &b->blocks[i].conf;
        c->in = scaled(LARGE[i].in, LARGE[i].tail_in, b);
        c->kernel = LARGE[i].kernel;
        c->expanded = scaled(LARGE[i].expanded, LARGE[i].tail_exp, b);
        c->out = scaled(LARGE[i].out, LARGE[i].tail_out, b);
        c->use_se = LARGE[i].use_se;
        c->use_hs = LARGE[i].use_hs;
        c->stride = LARGE[i].stride;
        if (c->stride > 1)
            stage_index[n_stages++] = i + 1;    /* _is_cn: the strided blocks start the stages C1 .. C4 */
    }
    stage_index[n_stages++] = MNV3_MODULES - 1;
    /* _mobilenet_extractor's default returned_layers: [num_stages - 2, num_stages - 1] */
    b->returned[0] = stage_index[n_stages - 2];
    b->returned[1] = stage_index[n_stages - 1];
    b->returned_channels[0] = b->blocks[b->returned[0] - 1].conf.out;
    b->returned_channels[1] = 6 * b->blocks[MNV3_BLOCKS - 1].conf.out;
    return LOOM_OK;
}

/* Conv2dNormActivation <prefix>.0 / .1 into c (sizes set here). */
static loom_status load_cna(model_loader *L, const char *prefix, int64_t cin, int64_t cout, int64_t k,
                            int64_t stride, int64_t groups, model_conv *c)
{
    char cp[96], bp[96];
    *c = model_conv_of(cin, cout, k, stride, groups);
    snprintf(cp, sizeof cp, "%s.0", prefix);
    snprintf(bp, sizeof bp, "%s.1", prefix);
    return model_load_conv_bn(L, cp, bp, c);
}

static loom_status load_block(model_loader *L, int module, mnv3_block *blk)
{
    const mnv3_block_conf *c = &blk->conf;
    char p[96];
    int j = 0;
    loom_status st = LOOM_OK;
    blk->has_expand = c->expanded != c->in;
    blk->use_res = c->stride == 1 && c->in == c->out;
    if (blk->has_expand) {
        snprintf(p, sizeof p, "%d.block.%d", module, j++);
        st = load_cna(L, p, c->in, c->expanded, 1, 1, 1, &blk->expand);
    }
    snprintf(p, sizeof p, "%d.block.%d", module, j++);
    if (st == LOOM_OK)
        st = load_cna(L, p, c->expanded, c->expanded, c->kernel, c->stride, c->expanded, &blk->dw);
    if (st == LOOM_OK && c->use_se) {
        blk->se_channels = make_divisible((double)(c->expanded / 4));
        char f1[112], f2[112];
        snprintf(f1, sizeof f1, "%d.block.%d.fc1", module, j);
        snprintf(f2, sizeof f2, "%d.block.%d.fc2", module, j++);
        st = model_load_conv_bias(L, f1, c->expanded, blk->se_channels, &blk->se_w1, &blk->se_b1);
        if (st == LOOM_OK)
            st = model_load_conv_bias(L, f2, blk->se_channels, c->expanded, &blk->se_w2, &blk->se_b2);
    }
    snprintf(p, sizeof p, "%d.block.%d", module, j);
    if (st == LOOM_OK)
        st = load_cna(L, p, c->expanded, c->out, 1, 1, 1, &blk->project);
    return st;
}

loom_status mnv3_body_load(model_loader *L, mnv3_body *b)
{
    loom_status st = load_cna(L, "0", 3, b->blocks[0].conf.in, 3, 2, 1, &b->stem);
    for (int i = 0; i < MNV3_BLOCKS && st == LOOM_OK; i++)
        st = load_block(L, i + 1, &b->blocks[i]);
    char p[16];
    snprintf(p, sizeof p, "%d", MNV3_MODULES - 1);
    const int64_t last_in = b->blocks[MNV3_BLOCKS - 1].conf.out;
    if (st == LOOM_OK)
        st = load_cna(L, p, last_in, 6 * last_in, 1, 1, 1, &b->last);
    if (st == LOOM_OK)
        st = model_find_op(L->cls, "vision.conv2d", &b->conv2d);
    if (st == LOOM_OK)
        st = model_find_op(L->cls, "vision.hardswish", &b->hardswish);
    if (st == LOOM_OK)
        st = model_find_op(L->cls, "vision.squeeze_excitation", &b->se);
    return st;
}

void mnv3_body_free(mnv3_body *b)
{
    model_conv_free(&b->stem);
    model_conv_free(&b->last);
    for (int i = 0; i < MNV3_BLOCKS; i++) {
        model_conv_free(&b->blocks[i].expand);
        model_conv_free(&b->blocks[i].dw);
        model_conv_free(&b->blocks[i].project);
    }
}

/* ------------------------------------------------------------- forward */

static loom_named_attr ints_attr(const char *name, const int64_t *v)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_INTS, .is_set = 1, .count = 1, .u = { .ints = v } } };
    return a;
}

static loom_named_attr string_attr(const char *name, const char *s)
{
    loom_named_attr a = { name, { .type = LOOM_ATTR_STRING, .is_set = 1, .count = (int64_t)strlen(s),
                                  .u = { .s = s } } };
    return a;
}

/* op(ins) into *outs: a new tensor when *outs is NULL, else *outs itself
** (in place: hardswish and squeeze_excitation write over their input,
** which rcnn_call_op, always allocating, does not do). */
static loom_status call_op(loom_call *call, const loom_op *op, const loom_tensor *const *ins, int32_t n_ins,
                           loom_tensor **outs, const loom_named_attr *attrs, int32_t n_attrs)
{
    loom_op_call oc = { .struct_size = sizeof oc, .op = op, .n_inputs = n_ins, .inputs = ins, .n_outputs = 1,
                        .outputs = outs, .n_attrs = n_attrs, .attrs = attrs };
    return pk_host->op_call(call->ctx, &oc);
}

static void drop(loom_tensor **t)
{
    if (*t != NULL)
        pk_host->tensor_free(*t);
    *t = NULL;
}

/* *out = conv c of x (+ residual), then relu (fused) or hardswish (in place) or nothing. */
static loom_status conv(loom_call *call, const mnv3_body *b, const model_conv *c, const loom_tensor *x,
                        const loom_tensor *residual, const char *act, loom_tensor **out)
{
    int64_t ws[4] = { c->cout, c->cin / c->groups, c->k, c->k }, bs[1] = { c->cout };
    loom_tensor tw = model_view(c->weight, 4, ws), tb = model_view(c->bias, 1, bs);
    const loom_tensor *ins[4] = { x, &tw, &tb, residual };
    const int64_t stride = c->stride, pad = c->pad, groups = c->groups;
    const int hs = strcmp(act, "hardswish") == 0;
    const loom_named_attr attrs[4] = {
        ints_attr("stride", &stride), ints_attr("padding", &pad),
        { "groups", { .type = LOOM_ATTR_INT, .is_set = 1, .count = 1, .u = { .i = groups } } },
        string_attr("activation", hs ? "none" : act),
    };
    *out = NULL;
    loom_status st = call_op(call, b->conv2d, ins, 4, out, attrs, 4);
    if (st == LOOM_OK && hs) {
        const loom_tensor *in[1] = { *out };
        st = call_op(call, b->hardswish, in, 1, out, NULL, 0);
    }
    if (st != LOOM_OK)
        drop(out);
    return st;
}

/* One inverted residual block on x into *out. */
static loom_status block(loom_call *call, const mnv3_body *b, const mnv3_block *blk, const loom_tensor *x,
                         loom_tensor **out)
{
    const char *act = blk->conf.use_hs ? "hardswish" : "relu";
    loom_tensor *e = NULL, *d = NULL;
    loom_status st = LOOM_OK;
    if (blk->has_expand)
        st = conv(call, b, &blk->expand, x, NULL, act, &e);
    if (st == LOOM_OK)
        st = conv(call, b, &blk->dw, e != NULL ? e : x, NULL, act, &d);
    drop(&e);
    if (st == LOOM_OK && blk->conf.use_se) {
        const loom_tensor *ins[5] = { d, blk->se_w1, blk->se_b1, blk->se_w2, blk->se_b2 };
        const loom_named_attr attrs[2] = { string_attr("activation", "relu"),
                                           string_attr("scale_activation", "hardsigmoid") };
        st = call_op(call, b->se, ins, 5, &d, attrs, 2);     /* in place */
    }
    if (st == LOOM_OK)
        st = conv(call, b, &blk->project, d, blk->use_res ? x : NULL, "none", out);
    drop(&d);
    return st;
}

loom_status mnv3_body_forward(loom_call *call, const mnv3_body *b, const loom_tensor *x, loom_tensor **c)
{
    for (int k = 0; k < MNV3_RETURNED; k++)
        c[k] = NULL;
    loom_tensor *cur = NULL;
    loom_status st = conv(call, b, &b->stem, x, NULL, "hardswish", &cur);
    int kept = 0;       /* cur is a returned output */
    for (int m = 1; m < MNV3_MODULES && st == LOOM_OK; m++) {
        loom_tensor *next = NULL;
        if (m < MNV3_MODULES - 1)
            st = block(call, b, &b->blocks[m - 1], cur, &next);
        else
            st = conv(call, b, &b->last, cur, NULL, "hardswish", &next);
        if (!kept)
            drop(&cur);
        cur = next;
        kept = 0;
        for (int k = 0; k < MNV3_RETURNED && st == LOOM_OK; k++)
            if (b->returned[k] == m) {
                c[k] = cur;
                kept = 1;
            }
    }
    if (!kept)
        drop(&cur);
    if (st != LOOM_OK)
        for (int k = 0; k < MNV3_RETURNED; k++)
            drop(&c[k]);
    return st;
}
