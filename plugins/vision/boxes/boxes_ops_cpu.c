/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_ops_cpu.c - the cpu kernels of the element-wise box ops: box_iou,
** generalized/distance/complete_box_iou ([N, M] matrices, threaded over
** rows), the three IoU losses (threaded over boxes; f16 boxes are upcast
** to f32 first, as torchvision's _upcast_non_float does; mean and sum add
** the per-box losses in double and round once), box_convert, box_area,
** clip_boxes_to_image and remove_small_boxes.
**
** box_iou and generalized_box_iou of f32 xyxy boxes (and of f16 ones where
** the CPU has F16C) take the AVX2 rows
** of pair_avx2.c. The arithmetic is boxes_formulas.inc: float for f32 and f16 boxes (f16
** steps rounded where torch rounds them), double for f64. Empty inputs
** give empty outputs; a 'mean' loss of nothing is 0 (torchvision returns
** 0.0 * sum()).
*/
#include <string.h>

#include "boxes.h"
#include "cpu.h"
#include "boxes_formulas_cpu.h"

typedef struct pair_job {
    bx_pair_kind kind;
    int fmt;
    double eps;
    const void *b1, *b2;    /* [N, 4] and [M, 4] in the compute type */
    int64_t m;
    void *out;              /* [N, M] in the compute type */
} pair_job;

typedef enum elem_op { EL_GIOU_LOSS, EL_DIOU_LOSS, EL_CIOU_LOSS, EL_CONVERT, EL_AREA, EL_CLIP } elem_op;

typedef struct elem_job {
    elem_op op;
    const void *in1, *in2;
    void *out;
    double *partial;        /* per-box losses for mean/sum, else NULL */
    double eps;
    int fmt_in, fmt_out;
    int64_t height, width;
} elem_job;

/* The kernels of one box dtype (boxes_ops_cpu.inc). */
typedef struct bx_ops_fns {
    size_t compute_size;    /* bytes of the compute type, which the upcast outputs have */
    void (*widen)(const void *p, int64_t n, void *out);
    loom_range_fn pair_rows, elem_rows;
    void (*small_flags)(const void *p, int64_t n, double min_size, uint8_t *keep);
    void (*store_total)(void *out, double v);
} bx_ops_fns;

#define PK_SFX f32
#include "boxes_ops_cpu.inc"
#define PK_SFX f64
#include "boxes_ops_cpu.inc"
#define PK_SFX f16
#include "boxes_ops_cpu.inc"

static int64_t grain_for(int64_t work_per_item)
{
    return work_per_item >= 4096 ? 1 : 4096 / (work_per_item > 0 ? work_per_item : 1);
}

/* ------------------------------------------------------------ pairwise */

typedef struct pair_avx2_job {
    int giou, low;
    const float *a, *b;
    int64_t m;
    float *out;
} pair_avx2_job;

static void pair_rows_avx2(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const pair_avx2_job *j = user;
    (void)thread_index;
    bx_pair_rows_f32_avx2(j->giou, j->low, j->a, j->b, j->m, begin, end, j->out);
}

/* box_iou / generalized_box_iou of f32 or f16 xyxy boxes with AVX2: boxes1
** in f32 (f16 widened exactly), boxes2 as structure-of-arrays with their
** areas (bx_pair_rows_f32_avx2). */
static loom_status pair_avx2(loom_call *call, bx_pair_kind kind, int64_t n, int64_t m, loom_tensor *out)
{
    const int low = loom_tensor_dtype_of(call->inputs[0]) == LOOM_DTYPE_F16;
    const void *a_in = loom_data(call->inputs[0]), *b_in = loom_data(call->inputs[1]);
    const int64_t stride = (m + 7) & ~(int64_t)7;
    float *b = pk_host->scratch(call->ctx, ((size_t)stride * 5 + (low ? (size_t)n * 4 : 0)) * sizeof(float));
    if (b == NULL)
        return LOOM_ENOMEM;
    const float *a = a_in;
    if (low) {
        float *wide = b + (size_t)stride * 5;
        for (int64_t i = 0; i < 4 * n; i++)
            wide[i] = pk_ld_f16((const uint16_t *)a_in + i);
        a = wide;
    }
    for (int64_t j = 0; j < m; j++) {
        float q[4];
        for (int k = 0; k < 4; k++) {
            q[k] = low ? pk_ld_f16((const uint16_t *)b_in + 4 * j + k) : ((const float *)b_in)[4 * j + k];
            b[k * stride + j] = q[k];
        }
        b[4 * stride + j] = bx_area_f32(q, 0);
    }
    pair_avx2_job j = { .giou = kind == BX_GIOU, .low = low, .a = a, .b = b, .m = m, .out = loom_data(out) };
    return pk_host->parallel_for(call->ctx, n, grain_for(m), pair_rows_avx2, &j);
}

static loom_status pair_cpu(loom_call *call, bx_pair_kind kind)
{
    const loom_tensor *b1 = call->inputs[0], *b2 = call->inputs[1];
    bx_fmt fmt;
    double eps;
    loom_status st = bx_pair_check(call, kind, &fmt, &eps);
    if (st != LOOM_OK)
        return st;
    loom_dtype dt = loom_tensor_dtype_of(b1), odt = bx_upcast(dt);
    int64_t n = b1->shape[0], m = b2->shape[0], shape[2] = { n, m };
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, odt, 2, shape, &out);
    if (st != LOOM_OK || n == 0 || m == 0)
        return st;
    const int avx2 = dt == LOOM_DTYPE_F32 ? pk_cpu_avx2(0) : dt == LOOM_DTYPE_F16 && pk_cpu_avx2(PK_CPU_F16C);
    if (avx2 && fmt == BX_XYXY && (kind == BX_IOU || kind == BX_GIOU))
        return pair_avx2(call, kind, n, m, out);
    const bx_ops_fns *fns = VISION_PICK(dt, bx_ops_fns);
    const size_t es = fns->compute_size;
    void *a = pk_host->scratch(call->ctx, (size_t)(n + m) * 4 * es);
    if (a == NULL)
        return LOOM_ENOMEM;
    void *b = (char *)a + (size_t)n * 4 * es;
    fns->widen(loom_data(b1), 4 * n, a);
    fns->widen(loom_data(b2), 4 * m, b);
    pair_job j = { .kind = kind, .fmt = (int)fmt, .eps = eps, .b1 = a, .b2 = b, .m = m, .out = loom_data(out) };
    return pk_host->parallel_for(call->ctx, n, grain_for(m * 16), fns->pair_rows, &j);
}

loom_status bx_box_iou_cpu(loom_call *call) { return pair_cpu(call, BX_IOU); }
loom_status bx_generalized_box_iou_cpu(loom_call *call) { return pair_cpu(call, BX_GIOU); }
loom_status bx_distance_box_iou_cpu(loom_call *call) { return pair_cpu(call, BX_DIOU); }
loom_status bx_complete_box_iou_cpu(loom_call *call) { return pair_cpu(call, BX_CIOU); }

/* ----------------------------------------------------------- elementwise */

static loom_status run_elem(loom_call *call, loom_dtype dt, elem_job *j, int64_t n)
{
    return pk_host->parallel_for(call->ctx, n, grain_for(64), VISION_PICK(dt, bx_ops_fns)->elem_rows, j);
}

static loom_status loss_cpu(loom_call *call, elem_op op)
{
    const loom_tensor *b1 = call->inputs[0];
    bx_reduction red;
    double eps;
    loom_status st = bx_loss_check(call, &red, &eps);
    if (st != LOOM_OK)
        return st;
    loom_dtype dt = loom_tensor_dtype_of(b1);
    int64_t n = loom_numel(b1) / 4;
    loom_tensor *out;
    loom_dtype odt = bx_upcast(dt);
    elem_job j = { .op = op, .in1 = loom_data(b1), .in2 = loom_data(call->inputs[1]), .eps = eps };
    if (red == BX_NONE) {
        st = pk_host->alloc_output(call, 0, odt, b1->ndim - 1, b1->shape, &out);
        if (st != LOOM_OK || n == 0)
            return st;
        j.out = loom_data(out);
        return run_elem(call, dt, &j, n);
    }
    st = pk_host->alloc_output(call, 0, odt, 0, NULL, &out);
    if (st != LOOM_OK)
        return st;
    double sum = 0;
    if (n > 0) {
        j.partial = pk_host->scratch(call->ctx, (size_t)n * sizeof(double));
        if (j.partial == NULL)
            return LOOM_ENOMEM;
        st = run_elem(call, dt, &j, n);
        if (st != LOOM_OK)
            return st;
        for (int64_t i = 0; i < n; i++)
            sum += j.partial[i];
        if (red == BX_MEAN)
            sum /= (double)n;
    }
    VISION_PICK(dt, bx_ops_fns)->store_total(loom_data(out), sum);
    return LOOM_OK;
}

loom_status bx_giou_loss_cpu(loom_call *call) { return loss_cpu(call, EL_GIOU_LOSS); }
loom_status bx_diou_loss_cpu(loom_call *call) { return loss_cpu(call, EL_DIOU_LOSS); }
loom_status bx_ciou_loss_cpu(loom_call *call) { return loss_cpu(call, EL_CIOU_LOSS); }

/* box_convert, box_area, clip_boxes_to_image: one elementwise pass. */
static loom_status run_util(loom_call *call, elem_op op, bx_util_prepare prepare)
{
    bx_util_call u;
    loom_status st = prepare(call, &u);
    if (st != LOOM_OK || u.n == 0)
        return st;
    elem_job j = { .op = op, .in1 = u.in, .out = u.out, .fmt_in = (int)u.fmt_in, .fmt_out = (int)u.fmt_out,
                   .height = u.height, .width = u.width };
    return run_elem(call, u.dtype, &j, u.n);
}

loom_status bx_box_convert_cpu(loom_call *call) { return run_util(call, EL_CONVERT, bx_convert_prepare); }
loom_status bx_box_area_cpu(loom_call *call) { return run_util(call, EL_AREA, bx_area_prepare); }
loom_status bx_clip_boxes_cpu(loom_call *call) { return run_util(call, EL_CLIP, bx_clip_prepare); }

loom_status bx_remove_small_boxes_cpu(loom_call *call)
{
    const loom_tensor *b = call->inputs[0];
    double min_size;
    loom_status st = bx_small_check(call, &min_size);
    if (st != LOOM_OK)
        return st;
    loom_dtype dt = loom_tensor_dtype_of(b);
    int64_t n = b->shape[0], kept = 0;
    uint8_t *keep = pk_host->scratch(call->ctx, (size_t)n + 1);
    if (keep == NULL)
        return LOOM_ENOMEM;
    VISION_PICK(dt, bx_ops_fns)->small_flags(loom_data(b), n, min_size, keep);
    for (int64_t i = 0; i < n; i++)
        kept += keep[i];
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &kept, &out);
    if (st != LOOM_OK)
        return st;
    int64_t *o = loom_data(out), k = 0;
    for (int64_t i = 0; i < n; i++)
        if (keep[i])
            o[k++] = i;
    return LOOM_OK;
}
