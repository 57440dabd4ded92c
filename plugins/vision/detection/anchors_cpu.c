/* SPDX-License-Identifier: BSD-3-Clause */
/*
** anchors_cpu.c - vision.anchor_generator: torchvision's AnchorGenerator
** for one batch (every image of a batch has the same anchors).
**
** Cell anchors of a level (generate_anchors, in float32): h = sqrt(ratio),
** w = 1 / h, then for each ratio (outer) and size (inner) the box
** (-w s, -h s, w s, h s) / 2 rounded half to even (torch.round). A level's
** stride is the batched image size integer-divided by its grid size; its
** anchors are every location (row-major) shifted by (x stride, y stride),
** each with every cell anchor: float32(shift) + cell, as torch adds the
** int64 shifts to the float32 cells. Exact: the same float32 operations.
*/
#include <math.h>

#include "detection.h"

#define MAX_CELL 256   /* sizes x ratios of one level */

loom_status vision_anchor_generator_cpu(loom_call *call)
{
    const loom_tensor *grid_t = call->inputs[0];
    const loom_attr_value *sizes = &call->attrs[PK_ATTR(anchor, sizes)];
    const loom_attr_value *ratios = &call->attrs[PK_ATTR(anchor, aspect_ratios)];
    const loom_attr_value *image = &call->attrs[PK_ATTR(anchor, image_size)];
    const int64_t levels = grid_t->shape[0];
    if (grid_t->shape[1] != 2 || levels < 1)
        return pk_host->fail(LOOM_EINVAL, "vision.anchor_generator: grid_sizes is [%lld, %lld]; expected [L, 2] "
                             "with at least one level", (long long)levels, (long long)grid_t->shape[1]);
    if (image->count != 2)
        return pk_host->fail(LOOM_EINVAL, "vision.anchor_generator: image_size has %lld values; expected (H, W)",
                             (long long)image->count);
    if (sizes->count % levels != 0)
        return pk_host->fail(LOOM_EINVAL,
                             "vision.anchor_generator: %lld sizes for %lld levels; give the same count per level",
                             (long long)sizes->count, (long long)levels);
    const int64_t per_level = sizes->count / levels, n_ratios = ratios->count, cell = per_level * n_ratios;
    if (cell > MAX_CELL)
        return pk_host->fail(LOOM_EINVAL, "vision.anchor_generator: %lld sizes x %lld ratios per level; at most %d",
                             (long long)per_level, (long long)n_ratios, MAX_CELL);
    const int64_t *grid = loom_data(grid_t);
    int64_t total = 0;
    for (int64_t l = 0; l < levels; l++) {
        const int64_t gh = grid[2 * l], gw = grid[2 * l + 1];
        if (gh <= 0 || gw <= 0 || gh > image->u.ints[0] || gw > image->u.ints[1])
            return pk_host->fail(LOOM_EINVAL,
                                 "vision.anchor_generator: level %lld's grid is %lld x %lld; it must be at least 1 x 1 "
                                 "and at most the image_size %lld x %lld",
                                 (long long)l, (long long)gh, (long long)gw, (long long)image->u.ints[0],
                                 (long long)image->u.ints[1]);
        if (gh * gw > (INT64_MAX / 4 - total) / cell)
            return pk_host->fail(LOOM_EINVAL, "vision.anchor_generator: too many anchors");
        total += gh * gw * cell;
    }
    loom_tensor *out;
    const int64_t shape[2] = { total, 4 };
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F32, 2, shape, &out);
    if (st != LOOM_OK)
        return st;
    float *dst = loom_data(out);
    for (int64_t l = 0; l < levels; l++) {
        float base[MAX_CELL][4];
        for (int64_t r = 0; r < n_ratios; r++) {
            const float hr = sqrtf((float)ratios->u.floats[r]), wr = 1.0f / hr;
            for (int64_t s = 0; s < per_level; s++) {
                const float scale = (float)sizes->u.ints[l * per_level + s];
                const float ws = wr * scale, hs = hr * scale;
                float *a = base[r * per_level + s];
                a[0] = nearbyintf(-ws / 2.0f);
                a[1] = nearbyintf(-hs / 2.0f);
                a[2] = nearbyintf(ws / 2.0f);
                a[3] = nearbyintf(hs / 2.0f);
            }
        }
        const int64_t gh = grid[2 * l], gw = grid[2 * l + 1];
        const int64_t sy = image->u.ints[0] / gh, sx = image->u.ints[1] / gw;
        for (int64_t y = 0; y < gh; y++)
            for (int64_t x = 0; x < gw; x++) {
                const float fx = (float)(x * sx), fy = (float)(y * sy);
                for (int64_t k = 0; k < cell; k++, dst += 4) {
                    dst[0] = fx + base[k][0];
                    dst[1] = fy + base[k][1];
                    dst[2] = fx + base[k][2];
                    dst[3] = fy + base[k][3];
                }
            }
    }
    return LOOM_OK;
}
