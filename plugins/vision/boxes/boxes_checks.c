/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_checks.c - argument checks of the box ops, shared by the cpu and
** cuda kernels so both refuse the same inputs with the same messages.
** Contract: boxes are contiguous [N, 4] (or [.., 4] where torchvision
** takes any leading dims), paired tensors share one dtype, vectors are
** contiguous [N]; string attributes name a known format or reduction.
** The schema already fixed each input's rank and dtype family. The
** elementwise utilities' *_prepare also allocate the output, which both
** backends shape alike.
*/
#include <string.h>

#include "boxes.h"

loom_status bx_check_boxes(const char *op, const char *arg, const loom_tensor *t, int any_rank)
{
    char buf[160];
    if (t->ndim < 1 || t->shape[t->ndim - 1] != 4 || (!any_rank && t->ndim != 2))
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' must be %s, got %s", op, arg,
                             any_rank ? "[.., 4]" : "[N, 4]", vision_describe(t, buf, sizeof buf));
    if (!loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' %s must be contiguous", op, arg,
                             vision_describe(t, buf, sizeof buf));
    return LOOM_OK;
}

loom_status bx_check_same_dtype(const char *op, const char *arg_a, const loom_tensor *a,
                                const char *arg_b, const loom_tensor *b)
{
    loom_dtype da = loom_tensor_dtype_of(a), db = loom_tensor_dtype_of(b);
    if (da != db)
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' is %s but '%s' is %s: both must have the same dtype",
                             op, arg_b, pk_host->dtype_name(db), arg_a, pk_host->dtype_name(da));
    return LOOM_OK;
}

loom_status bx_check_vector(const char *op, const char *arg, const loom_tensor *t, int64_t n)
{
    char buf[160];
    if (t->ndim != 1 || t->shape[0] != n)
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' must be [%lld] (one per box), got %s", op, arg,
                             (long long)n, vision_describe(t, buf, sizeof buf));
    if (!loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "%s: '%s' %s must be contiguous", op, arg,
                             vision_describe(t, buf, sizeof buf));
    return LOOM_OK;
}

loom_status bx_parse_fmt(const char *op, const char *attr, const char *s, bx_fmt *out)
{
    static const char *const names[] = { "xyxy", "xywh", "cxcywh" };
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (bx_fmt)i;
            return LOOM_OK;
        }
    return pk_host->fail(LOOM_EINVAL, "%s: '%s' must be one of xyxy, xywh, cxcywh; got '%s'", op, attr, s);
}

loom_status bx_parse_reduction(const char *op, const char *s, bx_reduction *out)
{
    static const char *const names[] = { "none", "mean", "sum" };
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (bx_reduction)i;
            return LOOM_OK;
        }
    return pk_host->fail(LOOM_EINVAL, "%s: 'reduction' must be one of none, mean, sum; got '%s'", op, s);
}

loom_status bx_nms_check(const loom_call *call, int batched)
{
    const char *op = call->schema->name;
    const loom_tensor *boxes = call->inputs[0], *scores = call->inputs[1];
    loom_status st = bx_check_boxes(op, "boxes", boxes, 0);
    if (st == LOOM_OK)
        st = bx_check_vector(op, "scores", scores, boxes->shape[0]);
    if (st == LOOM_OK)
        st = bx_check_same_dtype(op, "boxes", boxes, "scores", scores);
    if (st == LOOM_OK && batched)
        st = bx_check_vector(op, "idxs", call->inputs[2], boxes->shape[0]);
    return st;
}

loom_status bx_pair_check(const loom_call *call, bx_pair_kind kind, bx_fmt *fmt, double *eps)
{
    const char *op = call->schema->name;
    loom_status st = bx_check_boxes(op, "boxes1", call->inputs[0], 0);
    if (st == LOOM_OK)
        st = bx_check_boxes(op, "boxes2", call->inputs[1], 0);
    if (st == LOOM_OK)
        st = bx_check_same_dtype(op, "boxes1", call->inputs[0], "boxes2", call->inputs[1]);
    *fmt = BX_XYXY;
    *eps = 0;
    if (st == LOOM_OK && kind == BX_IOU)
        st = bx_parse_fmt(op, "fmt", call->attrs[PK_ATTR(bx_fmt, fmt)].u.s, fmt);
    if (st == LOOM_OK && (kind == BX_DIOU || kind == BX_CIOU))
        *eps = call->attrs[PK_ATTR(bx_eps, eps)].u.f;
    return st;
}

loom_status bx_loss_check(const loom_call *call, bx_reduction *red, double *eps)
{
    const char *op = call->schema->name;
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    char ba[160], bb[160];
    loom_status st = bx_check_boxes(op, "boxes1", a, 1);
    if (st == LOOM_OK)
        st = bx_check_boxes(op, "boxes2", b, 1);
    if (st == LOOM_OK)
        st = bx_check_same_dtype(op, "boxes1", a, "boxes2", b);
    if (st == LOOM_OK) {
        int same = a->ndim == b->ndim;
        for (int32_t d = 0; same && d < a->ndim; d++)
            same = a->shape[d] == b->shape[d];
        if (!same)
            st = pk_host->fail(LOOM_EINVAL, "%s: 'boxes2' must have the shape of 'boxes1' %s, got %s", op,
                               vision_describe(a, ba, sizeof ba), vision_describe(b, bb, sizeof bb));
    }
    if (st == LOOM_OK)
        st = bx_parse_reduction(op, call->attrs[PK_ATTR(bx_loss, reduction)].u.s, red);
    *eps = call->attrs[PK_ATTR(bx_loss, eps)].u.f;
    return st;
}

/* Output 0 of out_dtype over the boxes' first ndim dims; fills the rest of u. */
static loom_status util_output(loom_call *call, bx_util_call *u, loom_dtype out_dtype, int32_t ndim)
{
    const loom_tensor *b = call->inputs[0];
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, out_dtype, ndim, b->shape, &out);
    if (st != LOOM_OK)
        return st;
    u->dtype = loom_tensor_dtype_of(b);
    u->out_dtype = out_dtype;
    u->n = loom_numel(b) / 4;
    u->in = loom_data(b);
    u->out = loom_data(out);
    return LOOM_OK;
}

loom_status bx_convert_prepare(loom_call *call, bx_util_call *u)
{
    const char *op = call->schema->name;
    const loom_tensor *b = call->inputs[0];
    *u = (bx_util_call){ .n = 0 };
    loom_status st = bx_check_boxes(op, "boxes", b, 1);
    if (st == LOOM_OK)
        st = bx_parse_fmt(op, "in_fmt", call->attrs[PK_ATTR(bx_convert, in_fmt)].u.s, &u->fmt_in);
    if (st == LOOM_OK)
        st = bx_parse_fmt(op, "out_fmt", call->attrs[PK_ATTR(bx_convert, out_fmt)].u.s, &u->fmt_out);
    return st != LOOM_OK ? st : util_output(call, u, loom_tensor_dtype_of(b), b->ndim);
}

loom_status bx_area_prepare(loom_call *call, bx_util_call *u)
{
    const char *op = call->schema->name;
    const loom_tensor *b = call->inputs[0];
    *u = (bx_util_call){ .n = 0 };
    loom_status st = bx_check_boxes(op, "boxes", b, 1);
    if (st == LOOM_OK)
        st = bx_parse_fmt(op, "fmt", call->attrs[PK_ATTR(bx_fmt, fmt)].u.s, &u->fmt_in);
    return st != LOOM_OK ? st : util_output(call, u, bx_upcast(loom_tensor_dtype_of(b)), b->ndim - 1);
}

loom_status bx_clip_prepare(loom_call *call, bx_util_call *u)
{
    const char *op = call->schema->name;
    const loom_tensor *b = call->inputs[0];
    const loom_attr_value *size = &call->attrs[PK_ATTR(bx_clip, size)];
    *u = (bx_util_call){ .n = 0 };
    loom_status st = bx_check_boxes(op, "boxes", b, 1);
    if (st != LOOM_OK)
        return st;
    if (size->count != 2)
        return pk_host->fail(LOOM_EINVAL, "%s: 'size' must be [height, width], got %lld values", op,
                             (long long)size->count);
    u->height = size->u.ints[0];
    u->width = size->u.ints[1];
    return util_output(call, u, loom_tensor_dtype_of(b), b->ndim);
}

loom_status bx_small_check(const loom_call *call, double *min_size)
{
    *min_size = call->attrs[PK_ATTR(bx_small, min_size)].u.f;
    return bx_check_boxes(call->schema->name, "boxes", call->inputs[0], 0);
}
