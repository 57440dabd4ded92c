/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_cuda.c - the cuda kernels of the box ops and the box module of
** vision-cuda.so: the argument checks of boxes_checks.c, output
** allocation, and the launches of boxes_kernels.cu on the call's stream.
**
** Data-dependent sizes (nms, batched_nms, remove_small_boxes) wait for a
** count on the stream before allocating the output. batched_nms follows
** the cpu kernel's two paths (coordinate offsets up to 1000 boxes, per
** category above), so both devices give the same indices in the same
** order; the per-category path orders its kept indices on the host with
** the cpu's replica of torch's unstable sort.
*/
#include <stdlib.h>

#include <cuda_runtime.h>

#include "boxes.h"
#include "boxes_kernels.h"
#include "boxes_sort.h"

#define TRICK_MAX_BOXES 1000    /* as nms_cpu.c */
#define CUDA_NMS_MAX_BOXES (65535 * 64)   /* grid.y of the 64-box mask blocks */

static loom_status cuda_fail(cudaError_t e, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static loom_status set_device(const loom_call *call)
{
    cudaError_t e = cudaSetDevice(call->ctx->device.device_id);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "cudaSetDevice");
}

/* ------------------------------------------------------------------ nms */

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static loom_status nms_common(loom_call *call, const int64_t *idxs, int shift)
{
    const loom_tensor *boxes = call->inputs[0], *scores = call->inputs[1];
    const int64_t n = boxes->shape[0];
    loom_tensor *out;
    if (n == 0)
        return pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &out);
    if (n > CUDA_NMS_MAX_BOXES)
        return pk_host->fail(LOOM_EINVAL, "%s: 'boxes' has %lld boxes; the cuda kernel takes at most %d",
                             call->schema->name, (long long)n, CUDA_NMS_MAX_BOXES);
    loom_status st = set_device(call);
    if (st != LOOM_OK)
        return st;
    bx_cuda_nms_args a = { .dtype = (int32_t)loom_tensor_dtype_of(boxes), .shift = shift, .n = n,
                           .boxes = loom_data(boxes), .scores = loom_data(scores), .idxs = idxs,
                           .iou_threshold = call->attrs[PK_ATTR(bx_nms, iou_threshold)].u.f };
    a.scratch = pk_host->scratch(call->ctx, bx_cuda_nms_scratch_bytes(n, a.dtype));
    a.keep = pk_host->scratch(call->ctx, (size_t)n * sizeof(int64_t));
    if (a.scratch == NULL || a.keep == NULL)
        return LOOM_ENOMEM;
    int64_t kept = 0;
    cudaStream_t stream = (cudaStream_t)call->ctx->stream;
    cudaError_t e = (cudaError_t)bx_cuda_nms(&a, &kept, stream);
    if (e != cudaSuccess)
        return cuda_fail(e, "nms kernels");
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &kept, &out);
    if (st != LOOM_OK || kept == 0)
        return st;
    if (idxs == NULL || shift) {
        e = cudaMemcpyAsync(loom_data(out), a.keep, (size_t)kept * sizeof(int64_t), cudaMemcpyDeviceToDevice,
                            stream);
        return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "cudaMemcpyAsync");
    }
    /* per-category path: order the kept indices as torch's unstable sort does */
    const size_t es = pk_host->dtype_size((loom_dtype)a.dtype);
    int64_t *host_keep = malloc((size_t)kept * sizeof(int64_t));
    char *host_scores = malloc((size_t)n * es);
    bx_pair *pairs = malloc((size_t)kept * sizeof(bx_pair));
    if (host_keep == NULL || host_scores == NULL || pairs == NULL) {
        free(host_keep);
        free(host_scores);
        free(pairs);
        return pk_host->fail(LOOM_ENOMEM, "vision.batched_nms: no host memory for %lld indices",
                             (long long)kept);
    }
    e = cudaMemcpyAsync(host_keep, a.keep, (size_t)kept * sizeof(int64_t), cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(host_scores, loom_data(scores), (size_t)n * es, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess) {
        /* the cpu path lists kept indices in increasing order before sorting */
        qsort(host_keep, (size_t)kept, sizeof *host_keep, compare_i64);
        for (int64_t k = 0; k < kept; k++) {
            int64_t i = host_keep[k];
            pairs[k].idx = i;
            pairs[k].v = pk_ld_any((loom_dtype)a.dtype, host_scores, i);
        }
        bx_introsort_desc(pairs, kept);
        for (int64_t k = 0; k < kept; k++)
            host_keep[k] = pairs[k].idx;
        e = cudaMemcpyAsync(loom_data(out), host_keep, (size_t)kept * sizeof(int64_t), cudaMemcpyHostToDevice,
                            stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(stream);      /* host_keep is freed below */
    }
    free(host_keep);
    free(host_scores);
    free(pairs);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "vision.batched_nms copies");
}

static loom_status nms_cuda(loom_call *call)
{
    loom_status st = bx_nms_check(call, 0);
    return st != LOOM_OK ? st : nms_common(call, NULL, 0);
}

static loom_status batched_nms_cuda(loom_call *call)
{
    loom_status st = bx_nms_check(call, 1);
    if (st != LOOM_OK)
        return st;
    return nms_common(call, loom_data(call->inputs[2]), call->inputs[0]->shape[0] <= TRICK_MAX_BOXES);
}

/* ------------------------------------------------------------ pairwise */

static loom_status pair_cuda(loom_call *call, bx_pair_kind kind)
{
    const loom_tensor *b1 = call->inputs[0], *b2 = call->inputs[1];
    bx_fmt fmt;
    double eps;
    loom_tensor *out;
    loom_status st = bx_pair_check(call, kind, &fmt, &eps);
    if (st != LOOM_OK)
        return st;
    loom_dtype dt = loom_tensor_dtype_of(b1);
    int64_t shape[2] = { b1->shape[0], b2->shape[0] };
    st = pk_host->alloc_output(call, 0, bx_upcast(dt), 2, shape, &out);
    if (st != LOOM_OK || shape[0] == 0 || shape[1] == 0)
        return st;
    if ((st = set_device(call)) != LOOM_OK)
        return st;
    cudaError_t e = (cudaError_t)bx_cuda_pair((int32_t)kind, (int32_t)fmt, (int32_t)dt, shape[0], shape[1],
                                              loom_data(b1), loom_data(b2), eps, loom_data(out), call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "pairwise IoU kernel");
}

static loom_status box_iou_cuda(loom_call *call) { return pair_cuda(call, BX_IOU); }
static loom_status giou_cuda(loom_call *call) { return pair_cuda(call, BX_GIOU); }
static loom_status diou_cuda(loom_call *call) { return pair_cuda(call, BX_DIOU); }
static loom_status ciou_cuda(loom_call *call) { return pair_cuda(call, BX_CIOU); }

/* ---------------------------------------------------------- elementwise */

static loom_status launch_elem(const loom_call *call, const bx_cuda_elem_args *a)
{
    loom_status st = set_device(call);
    if (st != LOOM_OK)
        return st;
    cudaError_t e = (cudaError_t)bx_cuda_elem(a, call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "box kernel");
}

static loom_status loss_cuda(loom_call *call, int32_t op)
{
    const loom_tensor *b1 = call->inputs[0];
    bx_reduction red;
    double eps;
    loom_tensor *out;
    loom_status st = bx_loss_check(call, &red, &eps);
    if (st != LOOM_OK)
        return st;
    loom_dtype dt = loom_tensor_dtype_of(b1), odt = bx_upcast(dt);
    bx_cuda_elem_args a = { .op = op, .dtype = (int32_t)dt, .out_dtype = (int32_t)odt, .n = loom_numel(b1) / 4,
                            .in1 = loom_data(b1), .in2 = loom_data(call->inputs[1]), .eps = eps };
    if (red == BX_NONE) {
        st = pk_host->alloc_output(call, 0, odt, b1->ndim - 1, b1->shape, &out);
        if (st != LOOM_OK || a.n == 0)
            return st;
        a.out = loom_data(out);
        return launch_elem(call, &a);
    }
    st = pk_host->alloc_output(call, 0, odt, 0, NULL, &out);
    if (st != LOOM_OK)
        return st;
    a.partial = pk_host->scratch(call->ctx, (size_t)(a.n > 0 ? a.n : 1) * sizeof(double));
    if (a.partial == NULL)
        return LOOM_ENOMEM;
    if (a.n > 0 && (st = launch_elem(call, &a)) != LOOM_OK)
        return st;
    if ((st = set_device(call)) != LOOM_OK)
        return st;
    cudaError_t e = (cudaError_t)bx_cuda_reduce(a.partial, a.n, red == BX_MEAN, (int32_t)odt, loom_data(out),
                                                call->ctx->stream);
    return e == cudaSuccess ? LOOM_OK : cuda_fail(e, "loss reduction kernel");
}

static loom_status giou_loss_cuda(loom_call *call) { return loss_cuda(call, 0); }
static loom_status diou_loss_cuda(loom_call *call) { return loss_cuda(call, 1); }
static loom_status ciou_loss_cuda(loom_call *call) { return loss_cuda(call, 2); }

/* box_convert (op 3), box_area (4), clip_boxes_to_image (5): one elementwise launch. */
static loom_status util_cuda(loom_call *call, int32_t op, bx_util_prepare prepare)
{
    bx_util_call u;
    loom_status st = prepare(call, &u);
    if (st != LOOM_OK || u.n == 0)
        return st;
    bx_cuda_elem_args a = { .op = op, .dtype = (int32_t)u.dtype, .out_dtype = (int32_t)u.out_dtype, .n = u.n,
                            .in1 = u.in, .out = u.out, .fmt_in = (int32_t)u.fmt_in, .fmt_out = (int32_t)u.fmt_out,
                            .height = u.height, .width = u.width };
    return launch_elem(call, &a);
}

static loom_status convert_cuda(loom_call *call) { return util_cuda(call, 3, bx_convert_prepare); }
static loom_status area_cuda(loom_call *call) { return util_cuda(call, 4, bx_area_prepare); }
static loom_status clip_cuda(loom_call *call) { return util_cuda(call, 5, bx_clip_prepare); }

static loom_status small_cuda(loom_call *call)
{
    const loom_tensor *b = call->inputs[0];
    double min_size;
    loom_tensor *out;
    loom_status st = bx_small_check(call, &min_size);
    if (st != LOOM_OK)
        return st;
    const int64_t n = b->shape[0];
    if (n == 0)
        return pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &n, &out);
    if ((st = set_device(call)) != LOOM_OK)
        return st;
    cudaStream_t stream = (cudaStream_t)call->ctx->stream;
    uint8_t *dev_flags = pk_host->scratch(call->ctx, (size_t)n);
    uint8_t *flags = malloc((size_t)n);
    int64_t *idx = malloc((size_t)n * sizeof(int64_t));
    if (dev_flags == NULL || flags == NULL || idx == NULL) {
        free(flags);
        free(idx);
        return pk_host->fail(LOOM_ENOMEM, "vision.remove_small_boxes: out of memory for %lld boxes",
                             (long long)n);
    }
    cudaError_t e = (cudaError_t)bx_cuda_small_flags((int32_t)loom_tensor_dtype_of(b), n, loom_data(b), min_size,
                                                     dev_flags, stream);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(flags, dev_flags, (size_t)n, cudaMemcpyDeviceToHost, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    int64_t kept = 0;
    if (e == cudaSuccess) {
        for (int64_t i = 0; i < n; i++)
            if (flags[i])
                idx[kept++] = i;
        st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &kept, &out);
        if (st == LOOM_OK && kept > 0) {
            e = cudaMemcpyAsync(loom_data(out), idx, (size_t)kept * sizeof(int64_t), cudaMemcpyHostToDevice,
                                stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(stream);  /* idx is freed below */
        }
    }
    free(flags);
    free(idx);
    if (e != cudaSuccess)
        return cuda_fail(e, "vision.remove_small_boxes");
    return st;
}

/* ---------------------------------------------------------------- module */

static const loom_kernel_desc cuda_kernels[] = {
    PK_KERNEL_CUDA(vision_nms_schema, "cuda:bitmask-64", PK_F32_F64, nms_cuda),
    PK_KERNEL_CUDA(vision_batched_nms_schema, "cuda:bitmask-64", PK_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_I64),
                   batched_nms_cuda),
    PK_KERNEL_CUDA(vision_box_iou_schema, "cuda:pairwise", VISION_FLOATS, box_iou_cuda),
    PK_KERNEL_CUDA(vision_generalized_box_iou_schema, "cuda:pairwise", VISION_FLOATS, giou_cuda),
    PK_KERNEL_CUDA(vision_distance_box_iou_schema, "cuda:pairwise", VISION_FLOATS, diou_cuda),
    PK_KERNEL_CUDA(vision_complete_box_iou_schema, "cuda:pairwise", VISION_FLOATS, ciou_cuda),
    PK_KERNEL_CUDA(vision_generalized_box_iou_loss_schema, "cuda:elementwise", VISION_FLOATS, giou_loss_cuda),
    PK_KERNEL_CUDA(vision_distance_box_iou_loss_schema, "cuda:elementwise", VISION_FLOATS, diou_loss_cuda),
    PK_KERNEL_CUDA(vision_complete_box_iou_loss_schema, "cuda:elementwise", VISION_FLOATS, ciou_loss_cuda),
    PK_KERNEL_CUDA(vision_box_convert_schema, "cuda:elementwise", VISION_FLOATS, convert_cuda),
    PK_KERNEL_CUDA(vision_box_area_schema, "cuda:elementwise", VISION_FLOATS, area_cuda),
    PK_KERNEL_CUDA(vision_clip_boxes_to_image_schema, "cuda:elementwise", VISION_FLOATS, clip_cuda),
    PK_KERNEL_CUDA(vision_remove_small_boxes_schema, "cuda:elementwise", VISION_FLOATS, small_cuda),
};

const pk_module vision_boxes_cuda = PK_MODULE("boxes", vision_boxes_ops, cuda_kernels, NULL);
