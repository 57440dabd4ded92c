/* SPDX-License-Identifier: BSD-3-Clause */
/*
** paste_masks_cpu.c - vision.paste_masks on the cpu backend (paste_masks.h
** holds the arithmetic): one task per output row of one mask; the pixels
** outside the mask's box are zeroed, those inside interpolated.
*/
#include <string.h>

#include "paste_masks.h"

typedef struct paste_job {
    const paste_masks_geom *g;
} paste_job;

static void paste_rows(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const paste_masks_geom *g = ((const paste_job *)user)->g;
    for (int64_t r = begin; r < end; r++) {
        const int64_t k = r / g->h, y = r % g->h;
        const paste_box p = paste_box_of(g->boxes + 4 * k, g->scale, g->mh + 2 * g->pad, g->mw + 2 * g->pad);
        const float *mask = g->masks + k * g->mh * g->mw;
        float *row = g->out + r * g->w;
        const int64_t x_begin = p.x0 > 0 ? p.x0 : 0, x_end = p.x0 + p.w < g->w ? p.x0 + p.w : g->w;
        if (y < p.y0 || y >= p.y0 + p.h || x_begin >= x_end) {
            memset(row, 0, (size_t)g->w * sizeof *row);
            continue;
        }
        for (int64_t x = 0; x < g->w; x++)
            row[x] = x < x_begin || x >= x_end ? 0.0f : paste_pixel(mask, g->mh, g->mw, g->pad, &p, y, x);
    }
}

static loom_status paste_masks_run_cpu(loom_call *call)
{
    paste_masks_geom g;
    loom_tensor *out;
    loom_status st = paste_masks_check(call, &g, &out);
    if (st != LOOM_OK || loom_numel(out) == 0)
        return st;
    paste_job job = { &g };
    return pk_host->parallel_for(call->ctx, g.k * g.h, 1 + 4096 / g.w, paste_rows, &job);
}

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(vision_paste_masks_schema, "cpu:rows", LOOM_DTYPE_BIT(LOOM_DTYPE_F32), paste_masks_run_cpu),
};

const pk_module vision_paste_masks_cpu = PK_MODULE("paste_masks", vision_paste_masks_ops, cpu_kernels, NULL);
