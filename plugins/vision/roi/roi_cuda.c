/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_cuda.c - the cuda kernels of the RoI ops and the roi module of
** vision-cuda.so: the argument checks of roi_checks.c, output allocation,
** then the launch of roi_cuda_kernels.cu on the call's stream.
**
** The value checks of the cpu kernels run here too, so a bad batch index
** or argmax / channel_mapping entry is refused on both devices with the
** same message: the rois (K x 5 values) and the index map are copied to
** the host on the call's stream, which waits for that copy. Every other
** step is asynchronous.
*/
#include <stdlib.h>

#include <cuda_runtime.h>

#include "roi.h"
#include "roi_cuda_kernels.h"

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* bytes from the device into a new host buffer, on the stream */
static loom_status fetch(const void *src, size_t nbytes, cudaStream_t stream, void **out)
{
    *out = malloc(nbytes > 0 ? nbytes : 1);
    if (*out == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of host memory for %zu bytes", nbytes);
    cudaError_t e = nbytes > 0 ? cudaMemcpyAsync(*out, src, nbytes, cudaMemcpyDeviceToHost, stream) : cudaSuccess;
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        free(*out);
        *out = NULL;
        return cuda_fail(e, "copying rois to the host");
    }
    return LOOM_OK;
}

/* The cpu kernels refuse an adaptive grid above ROI_MAX_GRID; refuse the
** same rois here (computed in double: near the limit the dtype's rounding
** may differ, far below it nothing does). */
static loom_status check_grids(const roi_geom *g, const void *rois)
{
    if ((g->kind != ROI_ALIGN && g->kind != PS_ROI_ALIGN) || g->sampling_ratio > 0)
        return LOOM_OK;
    for (int64_t k = 0; k < g->k; k++) {
        double x1 = pk_ld_any(g->dtype, rois, k * 5 + 1), y1 = pk_ld_any(g->dtype, rois, k * 5 + 2);
        double x2 = pk_ld_any(g->dtype, rois, k * 5 + 3), y2 = pk_ld_any(g->dtype, rois, k * 5 + 4);
        double w = (x2 - x1) * g->spatial_scale, h = (y2 - y1) * g->spatial_scale;
        int64_t grid;
        loom_status st = roi_grid(h / (double)g->ph, g->sampling_ratio, k, &grid);
        if (st == LOOM_OK)
            st = roi_grid(w / (double)g->pw, g->sampling_ratio, k, &grid);
        if (st != LOOM_OK)
            return st;
    }
    return LOOM_OK;
}

static loom_status roi_run_cuda(loom_call *call)
{
    roi_geom g;
    loom_tensor *out, *map;
    loom_status st = roi_check(call, &g);
    if (st == LOOM_OK)
        st = roi_alloc_outputs(call, &g, &out, &map);
    if (st != LOOM_OK)
        return st;
    cudaStream_t stream = (cudaStream_t)call->ctx->stream;
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    const size_t es = pk_host->dtype_size(g.dtype);
    void *rois = NULL, *idx = NULL;
    const loom_tensor *map_in = g.backward && g.kind != ROI_ALIGN ? call->inputs[2] : NULL;
    st = fetch(loom_data(call->inputs[1]), (size_t)g.k * 5 * es, stream, &rois);
    if (st == LOOM_OK)
        st = roi_check_batch_indices(&g, rois);
    if (st == LOOM_OK)
        st = roi_check_scaled(&g, rois);
    if (st == LOOM_OK)
        st = check_grids(&g, rois);
    if (st == LOOM_OK && map_in != NULL)
        st = fetch(loom_data(map_in), (size_t)loom_numel(map_in) * sizeof(int32_t), stream, &idx);
    if (st == LOOM_OK && idx != NULL)
        st = roi_check_index_map(&g, idx);
    free(rois);
    free(idx);
    if (st != LOOM_OK)
        return st;
    if (g.backward) {
        if (loom_numel(out) == 0)
            return LOOM_OK;     /* nothing to clear (and the data may be NULL) */
        e = cudaMemsetAsync(loom_data(out), 0, (size_t)loom_numel(out) * es, stream);
        if (e != cudaSuccess)
            return cuda_fail(e, "cudaMemsetAsync");
        if (g.c == 0 || g.h * g.w == 0)
            return LOOM_OK;
    }
    roi_cuda_args a = {
        .kind = (int32_t)g.kind, .backward = g.backward, .dtype = (int32_t)g.dtype, .aligned = g.aligned,
        .n = g.n, .c = g.c, .h = g.h, .w = g.w, .k = g.k, .ph = g.ph, .pw = g.pw, .c_out = g.c_out,
        .spatial_scale = g.spatial_scale, .sampling_ratio = g.sampling_ratio,
        .input = loom_data(call->inputs[0]), .rois = loom_data(call->inputs[1]),
        .map_in = map_in != NULL ? loom_data(map_in) : NULL,
        .output = loom_data(out), .map_out = map != NULL ? loom_data(map) : NULL,
    };
    e = (cudaError_t)roi_cuda_launch(&a, stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "RoI kernel launch");
}

/* ---------------------------------------------------------------- module */

#define ALL_IN (VISION_FLOATS | LOOM_DTYPE_BIT(LOOM_DTYPE_I32))
#define POOL_IN (PK_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_I32))
#define KERNEL(SCHEMA, ID, DTYPES)                                                                 \
    PK_KERNEL_CUDA(SCHEMA, "cuda:thread-per-element", DTYPES, roi_run_cuda, .user = &roi_ids[ID])

static const loom_kernel_desc cuda_kernels[] = {
    KERNEL(roi_align_schema, 0, VISION_FLOATS),
    KERNEL(roi_pool_schema, 1, PK_F32_F64),
    KERNEL(ps_roi_align_schema, 2, VISION_FLOATS),
    KERNEL(ps_roi_pool_schema, 3, PK_F32_F64),
    KERNEL(roi_align_backward_schema, 4, VISION_FLOATS),
    KERNEL(roi_pool_backward_schema, 5, POOL_IN),
    KERNEL(ps_roi_align_backward_schema, 6, ALL_IN),
    KERNEL(ps_roi_pool_backward_schema, 7, POOL_IN),
};

const pk_module vision_roi_cuda = PK_MODULE("roi", vision_roi_ops, cuda_kernels, NULL);
