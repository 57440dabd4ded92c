/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cpu.c - the cpu kernels of the RoI ops: checks, output allocation,
** the value checks torchvision leaves out (batch indices, argmax and
** channel_mapping entries), zeroing of the gradients, then the dtype's
** instance of roi_cpu_tmpl.h; and the roi module of vision.so.
*/
#include <string.h>

#include "roi_cpu.h"

loom_status roi_run_cpu(loom_call *call)
{
    roi_job j = { .ctx = call->ctx };
    loom_tensor *out, *map;
    loom_status st = roi_check(call, &j.g);
    if (st == LOOM_OK)
        st = roi_alloc_outputs(call, &j.g, &out, &map);
    if (st != LOOM_OK)
        return st;
    const roi_geom *g = &j.g;
    j.input = loom_data(call->inputs[0]);
    j.rois = loom_data(call->inputs[1]);
    j.output = loom_data(out);
    j.map_out = map != NULL ? loom_data(map) : NULL;
    if (g->backward && g->kind != ROI_ALIGN)
        j.map_in = loom_data(call->inputs[2]);
    if ((st = roi_check_batch_indices(g, j.rois)) != LOOM_OK || (st = roi_check_scaled(g, j.rois)) != LOOM_OK)
        return st;
    if (j.map_in != NULL && (st = roi_check_index_map(g, j.map_in)) != LOOM_OK)
        return st;
    if (g->backward) {
        if (loom_numel(out) == 0)
            return LOOM_OK;     /* nothing to clear (and the data may be NULL) */
        memset(j.output, 0, (size_t)loom_numel(out) * pk_host->dtype_size(g->dtype));
        if (g->k == 0 || g->c == 0 || g->h * g->w == 0)
            return LOOM_OK;
    } else if (loom_numel(out) == 0) {
        return LOOM_OK;
    }
    switch (g->dtype) {
    case LOOM_DTYPE_F32: return roi_cpu_f32(&j);
    case LOOM_DTYPE_F64: return roi_cpu_f64(&j);
    case LOOM_DTYPE_F16: return roi_cpu_f16(&j);
    default: return pk_host->fail(LOOM_EINVAL, "'input' dtype %s is not supported",
                                  pk_host->dtype_name(g->dtype));
    }
}

/* ---------------------------------------------------------------- module */

#define ALL_IN (VISION_FLOATS | LOOM_DTYPE_BIT(LOOM_DTYPE_I32))
#define POOL_IN (PK_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_I32))

static const loom_kernel_desc cpu_kernels[] = {
    PK_KERNEL_CPU(ps_roi_align_schema, "cpu:separable", VISION_FLOATS, roi_run_cpu, .user = &roi_ids[2]),
    PK_KERNEL_CPU(ps_roi_pool_schema, "cpu:threaded-rois", PK_F32_F64, roi_run_cpu, .user = &roi_ids[3]),
    PK_KERNEL_CPU(roi_align_backward_schema, "cpu:channel-partitioned", VISION_FLOATS, roi_run_cpu,
                  .user = &roi_ids[4]),
    PK_KERNEL_CPU(roi_pool_backward_schema, "cpu:channel-partitioned", POOL_IN, roi_run_cpu, .user = &roi_ids[5]),
    PK_KERNEL_CPU(ps_roi_align_backward_schema, "cpu:channel-partitioned", ALL_IN, roi_run_cpu,
                  .user = &roi_ids[6]),
    PK_KERNEL_CPU(ps_roi_pool_backward_schema, "cpu:channel-partitioned", POOL_IN, roi_run_cpu,
                  .user = &roi_ids[7]),
};

/* roi_align and roi_pool: the implementation name says whether
** LOOM_CPU_MAX_ISA left the AVX2 loops, so they are registered once the
** CPU features are known (the core copies a descriptor when it registers
** it). */
static loom_status roi_register_isa(const loom_host_api *host, loom_registrar *reg)
{
    roi_cpu_isa_init();
    const loom_kernel_desc ks[] = {
        PK_KERNEL_CPU(roi_align_schema, roi_have_avx2() ? "cpu:separable-rowcache-avx2" : "cpu:separable-rowcache",
                      VISION_FLOATS, roi_run_cpu, .user = &roi_ids[0]),
        PK_KERNEL_CPU(roi_pool_schema, roi_have_avx2() ? "cpu:nhwc-max-avx2" : "cpu:nhwc-max", PK_F32_F64,
                      roi_run_cpu, .user = &roi_ids[1]),
    };
    return pk_register_kernels(host, reg, ks, PK_COUNT(ks));
}

const pk_module vision_roi_cpu = PK_MODULE("roi", vision_roi_ops, cpu_kernels, roi_register_isa);
