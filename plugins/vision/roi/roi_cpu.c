/*
** roi_cpu.c - the cpu kernels of the RoI ops: checks, output allocation,
** the value checks torchvision leaves out (batch indices, argmax and
** channel_mapping entries), zeroing of the gradients, then the dtype's
** instance of roi_cpu_tmpl.h.
*/
#include <string.h>

#include "roi_cpu.h"
#include "register.h"

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
        memset(j.output, 0, (size_t)loom_numel(out) * vision_host->dtype_size(g->dtype));
        if (g->k == 0 || g->c == 0 || g->h * g->w == 0)
            return LOOM_OK;
    } else if (loom_numel(out) == 0) {
        return LOOM_OK;
    }
    switch (g->dtype) {
    case LOOM_DTYPE_F32: return roi_cpu_f32(&j);
    case LOOM_DTYPE_F64: return roi_cpu_f64(&j);
    case LOOM_DTYPE_F16: return roi_cpu_f16(&j);
    default: return vision_host->fail(LOOM_EINVAL, "'input' dtype %s is not supported",
                                      vision_host->dtype_name(g->dtype));
    }
}

#define KERNEL(var, schema_, id_, dtypes_, impl_)                                              \
    static const loom_kernel_desc var = {                                                            \
        .struct_size = sizeof(loom_kernel_desc), .schema = &schema_, .backend = "cpu",         \
        .device_type = LOOM_DEVICE_CPU, .impl = impl_, .dtypes = dtypes_, .run = roi_run_cpu,  \
        .user = &roi_ids[id_],                                                                 \
    }

#define ALL_IN (VISION_FLOATS | LOOM_DTYPE_BIT(LOOM_DTYPE_I32))
#define POOL_IN (VISION_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_I32))

KERNEL(k_align, roi_align_schema, 0, VISION_FLOATS, "cpu:separable-nhwc");
KERNEL(k_pool, roi_pool_schema, 1, VISION_F32_F64, "cpu:nhwc-max");
KERNEL(k_ps_align, ps_roi_align_schema, 2, VISION_FLOATS, "cpu:separable");
KERNEL(k_ps_pool, ps_roi_pool_schema, 3, VISION_F32_F64, "cpu:threaded-rois");
KERNEL(k_align_b, roi_align_backward_schema, 4, VISION_FLOATS, "cpu:channel-partitioned");
KERNEL(k_pool_b, roi_pool_backward_schema, 5, POOL_IN, "cpu:channel-partitioned");
KERNEL(k_ps_align_b, ps_roi_align_backward_schema, 6, ALL_IN, "cpu:channel-partitioned");
KERNEL(k_ps_pool_b, ps_roi_pool_backward_schema, 7, POOL_IN, "cpu:channel-partitioned");

loom_status vision_roi_register_cpu(const loom_host_api *host, loom_registrar *reg)
{
    roi_cpu_isa_init();
    /* the implementation name says whether LOOM_CPU_MAX_ISA left the AVX2
    ** loops: set on copies (the core copies what it registers) */
    loom_kernel_desc align = k_align, pool = k_pool;
    align.impl = roi_have_avx2() ? "cpu:separable-nhwc-avx2" : "cpu:separable-nhwc";
    pool.impl = roi_have_avx2() ? "cpu:nhwc-max-avx2" : "cpu:nhwc-max";
    const loom_kernel_desc *ks[] = { &align, &pool, &k_ps_align, &k_ps_pool,
                                     &k_align_b, &k_pool_b, &k_ps_align_b, &k_ps_pool_b };
    return pk_register_kernel_ptrs(host, reg, ks, PK_COUNT(ks));
}
