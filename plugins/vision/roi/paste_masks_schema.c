/* SPDX-License-Identifier: BSD-3-Clause */
/*
** paste_masks_schema.c - the definition of vision.paste_masks and the
** checks its cpu and cuda kernels share (shapes and attributes only; a
** tensor's data is never read here).
*/
#include "paste_masks.h"

#define DESC(t, buf) vision_describe((t), (buf), sizeof(buf))
#define F32 LOOM_DTYPE_BIT(LOOM_DTYPE_F32)

PK_ATTR_TABLE(paste_masks, PASTE_MASKS_ATTRS);

static const loom_arg_def pm_inputs[] = {
    { .name = "masks", .dtypes = F32, .ndim = 4, .doc = "[K, 1, M', M] per-box masks (Mask R-CNN's: 28 x 28 "
                                                        "probabilities)" },
    { .name = "boxes", .dtypes = F32, .ndim = 2, .doc = "[K, 4] xyxy boxes in the image's pixels" },
};
static const loom_arg_def pm_outputs[] = {
    { .name = "output", .dtypes = F32, .ndim = 4, .doc = "[K, 1, H, W] each mask pasted into its box, 0 elsewhere" },
};

PK_SCHEMA(vision_paste_masks_schema, "vision.paste_masks", 1,
          "torchvision roi_heads.paste_masks_in_image: each mask padded, its box expanded to match, the mask "
          "resized bilinearly into the integer box and written into an H x W image (no threshold)",
          PK_INPUTS(pm_inputs), PK_OUTPUTS(pm_outputs), PK_ATTRS(paste_masks_attrs));

PK_OPS_DEFINE(vision_paste_masks_ops, VISION_PASTE_MASKS_OPS);

loom_status paste_masks_check(loom_call *call, paste_masks_geom *g, loom_tensor **out)
{
    const loom_tensor *m = call->inputs[0], *b = call->inputs[1];
    const loom_attr_value *size = &call->attrs[PK_ATTR(paste_masks, image_size)];
    char b1[160], b2[160];
    for (int i = 0; i < 2; i++) {
        const loom_tensor *t = call->inputs[i];
        if (!loom_is_contiguous(t))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s is not contiguous: pass a compact row-major tensor",
                                 call->schema->inputs[i].name, DESC(t, b1));
    }
    if (m->shape[1] != 1 || m->shape[2] < 1 || m->shape[3] < 1)
        return pk_host->fail(LOOM_EINVAL, "'masks' %s must be [K, 1, M', M] with M', M >= 1", DESC(m, b1));
    if (b->shape[1] != 4 || b->shape[0] != m->shape[0])
        return pk_host->fail(LOOM_EINVAL, "'boxes' %s must be [%lld, 4]: one xyxy box per mask of 'masks' %s",
                             DESC(b, b1), (long long)m->shape[0], DESC(m, b2));
    if (size->count != 2)
        return pk_host->fail(LOOM_EINVAL, "attribute 'image_size' must hold 2 values (H, W), not %lld",
                             (long long)size->count);
    if (size->u.ints[0] > (INT64_C(1) << 20) || size->u.ints[1] > (INT64_C(1) << 20))
        return pk_host->fail(LOOM_EINVAL, "attribute 'image_size' = (%lld, %lld): each side must be at most 2^20",
                             (long long)size->u.ints[0], (long long)size->u.ints[1]);
    g->k = m->shape[0];
    g->mh = m->shape[2];
    g->mw = m->shape[3];
    g->pad = call->attrs[PK_ATTR(paste_masks, padding)].u.i;
    if (g->pad > (INT64_C(1) << 20))
        return pk_host->fail(LOOM_EINVAL, "attribute 'padding' = %lld must be at most 2^20", (long long)g->pad);
    g->h = size->u.ints[0];
    g->w = size->u.ints[1];
    /* expand_masks: float(M + 2 padding) / M, a Python float the f32 product rounds to f32 */
    g->scale = (float)((double)(g->mw + 2 * g->pad) / (double)g->mw);
    const int64_t shape[4] = { g->k, 1, g->h, g->w };
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 4, shape, out);
    if (st != LOOM_OK)
        return st;
    g->masks = loom_data(m);
    g->boxes = loom_data(b);
    g->out = loom_data(*out);
    return LOOM_OK;
}
