/* SPDX-License-Identifier: BSD-3-Clause */
/*
** nms_cpu.c - vision.nms and vision.batched_nms on the CPU, with
** torchvision's results exactly:
**  - nms visits boxes by decreasing score, ties by increasing index (the
**    order torchvision's kernel gets from its sort), NaN scores first;
**    the greedy pass is nms_greedy.c.
**  - batched_nms follows torchvision's two paths, whose results can differ
**    in the last bit: up to 1000 boxes (4000 coordinates) it shifts each
**    box by idx * (max coordinate + 1) in the box dtype and runs one nms;
**    above that it runs nms per category and orders the union of kept
**    indices as torch's unstable descending sort does (boxes_sort.c). The
**    categories run in parallel on the core's threads.
*/
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "boxes_sort.h"
#include "nms_greedy.h"

#define TRICK_MAX_BOXES 1000    /* torchvision: boxes.numel() > 4000 takes the per-class loop */

static loom_status empty_output(loom_call *call)
{
    loom_tensor *out;
    int64_t zero = 0;
    return pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &zero, &out);
}

/* order[k] = index of the k-th box to visit: decreasing score, ties by index. */
static loom_status visiting_order(loom_exec_ctx *ctx, const void *scores, loom_dtype dt, int64_t n,
                                  int64_t *order)
{
    uint64_t *keys = pk_host->scratch(ctx, (size_t)n * 2 * sizeof(uint64_t));
    int64_t *tmp = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    if (keys == NULL || tmp == NULL)
        return LOOM_ENOMEM;
    for (int64_t i = 0; i < n; i++) {
        keys[i] = bx_desc_key(pk_ld_any(dt, scores, i));
        order[i] = i;
    }
    bx_radix_sort(keys, order, n, keys + n, tmp);
    return LOOM_OK;
}

/* nms of `rows` ([n, 4] of dt) by `scores` into output 0. */
static loom_status nms_rows(loom_call *call, const void *rows, const void *scores, loom_dtype dt, int64_t n,
                            double thr)
{
    loom_exec_ctx *ctx = call->ctx;
    const size_t es = pk_host->dtype_size(dt);
    bx_soa s;
    int64_t *order = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    int64_t *keep = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    /* the suppression mask starts on a cache line, so that the threads'
    ** whole-line ranges of it (nms_greedy.c) share no line with other data */
    uint8_t *bits = pk_host->scratch(ctx, (size_t)n / 8 + 1 + 63);
    void *soa_buf = pk_host->scratch(ctx, bx_soa_layout(&s, dt, n, NULL));
    if (order == NULL || keep == NULL || bits == NULL || soa_buf == NULL)
        return LOOM_ENOMEM;
    bits += (64 - (uintptr_t)bits % 64) % 64;
    loom_status st = visiting_order(ctx, scores, dt, n, order);
    if (st != LOOM_OK)
        return st;
    bx_soa_layout(&s, dt, n, soa_buf);
    for (int64_t k = 0; k < n; k++)
        bx_soa_set_raw(&s, k, (const char *)rows + (size_t)order[k] * 4 * es);
    int64_t kept = bx_nms_greedy(&s, 0, n, thr, bits, keep, ctx);
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &kept, &out);
    if (st != LOOM_OK)
        return st;
    int64_t *o = loom_data(out);
    for (int64_t k = 0; k < kept; k++)
        o[k] = order[keep[k]];
    return LOOM_OK;
}

loom_status bx_nms_cpu(loom_call *call)
{
    const loom_tensor *boxes = call->inputs[0], *scores = call->inputs[1];
    loom_status st = bx_nms_check(call, 0);
    if (st != LOOM_OK)
        return st;
    if (boxes->shape[0] == 0)
        return empty_output(call);
    return nms_rows(call, loom_data(boxes), loom_data(scores), loom_tensor_dtype_of(boxes), boxes->shape[0],
                    call->attrs[PK_ATTR(bx_nms, iou_threshold)].u.f);
}

/* ------------------------------------------------------------ batched */

/* boxes + idxs * (boxes.max() + 1), every step rounded to the box dtype T
** like torch's tensor ops; max propagates NaN like torch.max. */
#define DEFINE_SHIFT(T, SUF)                                                                  \
    static void shift_##SUF(const T *b, const int64_t *idxs, int64_t n, T *out)               \
    {                                                                                         \
        T mx = b[0];                                                                          \
        for (int64_t i = 0; i < 4 * n && !isnan(mx); i++)                                     \
            mx = isnan(b[i]) || b[i] > mx ? b[i] : mx;                                        \
        const T step = mx + (T)1;                                                             \
        for (int64_t i = 0; i < n; i++) {                                                     \
            const T off = (T)idxs[i] * step;                                                  \
            for (int k = 0; k < 4; k++)                                                       \
                out[4 * i + k] = b[4 * i + k] + off;                                          \
        }                                                                                     \
    }
DEFINE_SHIFT(float, f32)
DEFINE_SHIFT(double, f64)

static loom_status batched_trick(loom_call *call, loom_dtype dt, int64_t n, double thr)
{
    const loom_tensor *boxes = call->inputs[0], *scores = call->inputs[1], *idxs = call->inputs[2];
    void *shifted = pk_host->scratch(call->ctx, (size_t)n * 4 * pk_host->dtype_size(dt));
    if (shifted == NULL)
        return LOOM_ENOMEM;
    if (dt == LOOM_DTYPE_F64)
        shift_f64(loom_data(boxes), loom_data(idxs), n, shifted);
    else
        shift_f32(loom_data(boxes), loom_data(idxs), n, shifted);
    return nms_rows(call, shifted, loom_data(scores), dt, n, thr);
}

typedef struct class_job {
    const bx_soa *s;
    const int64_t *seg;     /* segment p covers positions [seg[p], seg[p + 1]) */
    int64_t *n_kept;        /* per segment */
    int64_t *keep;          /* kept positions of segment p from keep[seg[p]] */
    uint8_t *bits;          /* scratch of segment p from bits[seg[p]] */
    double thr;
} class_job;

static void run_classes(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const class_job *j = user;
    (void)thread_index;
    for (int64_t p = begin; p < end; p++) {
        int64_t a = j->seg[p], len = j->seg[p + 1] - a;
        j->n_kept[p] = bx_nms_greedy(j->s, a, len, j->thr, j->bits + a, j->keep + a, NULL);
    }
}

static loom_status batched_per_class(loom_call *call, loom_dtype dt, int64_t n, double thr)
{
    loom_exec_ctx *ctx = call->ctx;
    const loom_tensor *boxes = call->inputs[0], *scores = call->inputs[1];
    const int64_t *idxs = loom_data(call->inputs[2]);
    const size_t es = pk_host->dtype_size(dt);
    const char *rows = loom_data(boxes);
    const void *sc = loom_data(scores);
    bx_soa s;
    int64_t *order = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    int64_t *grouped = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    int64_t *tmp = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    uint64_t *keys = pk_host->scratch(ctx, (size_t)n * 2 * sizeof(uint64_t));
    int64_t *seg = pk_host->scratch(ctx, (size_t)(n + 1) * sizeof(int64_t));
    int64_t *n_kept = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    int64_t *keep = pk_host->scratch(ctx, (size_t)n * sizeof(int64_t));
    uint8_t *bits = pk_host->scratch(ctx, (size_t)n + 8);
    uint8_t *kept_flag = pk_host->scratch(ctx, (size_t)n);
    bx_pair *pairs = pk_host->scratch(ctx, (size_t)n * sizeof(bx_pair));
    void *soa_buf = pk_host->scratch(ctx, bx_soa_layout(&s, dt, n, NULL));
    if (order == NULL || grouped == NULL || tmp == NULL || keys == NULL || seg == NULL || n_kept == NULL
        || keep == NULL || bits == NULL || kept_flag == NULL || pairs == NULL || soa_buf == NULL)
        return LOOM_ENOMEM;
    loom_status st = visiting_order(ctx, sc, dt, n, order);
    if (st != LOOM_OK)
        return st;
    /* stable by category: each category's boxes stay in visiting order */
    for (int64_t k = 0; k < n; k++) {
        keys[k] = (uint64_t)idxs[order[k]] ^ (UINT64_C(1) << 63);
        grouped[k] = order[k];
    }
    bx_radix_sort(keys, grouped, n, keys + n, tmp);
    int64_t n_seg = 0;
    for (int64_t k = 0; k < n; k++)
        if (k == 0 || keys[k] != keys[k - 1])
            seg[n_seg++] = k;
    seg[n_seg] = n;
    bx_soa_layout(&s, dt, n, soa_buf);
    for (int64_t k = 0; k < n; k++)
        bx_soa_set_raw(&s, k, rows + (size_t)grouped[k] * 4 * es);
    class_job j = { .s = &s, .seg = seg, .n_kept = n_kept, .keep = keep, .bits = bits, .thr = thr };
    if (pk_host->parallel_for(ctx, n_seg, 1, run_classes, &j) != LOOM_OK)
        run_classes(&j, 0, n_seg, 0);
    memset(kept_flag, 0, (size_t)n);
    for (int64_t p = 0; p < n_seg; p++)
        for (int64_t k = 0; k < n_kept[p]; k++)
            kept_flag[grouped[seg[p] + keep[seg[p] + k]]] = 1;
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++)
        if (kept_flag[i]) {
            pairs[total].v = pk_ld_any(dt, sc, i);
            pairs[total++].idx = i;
        }
    bx_introsort_desc(pairs, total);
    loom_tensor *out;
    st = pk_host->alloc_output(call, 0, LOOM_DTYPE_I64, 1, &total, &out);
    if (st != LOOM_OK)
        return st;
    int64_t *o = loom_data(out);
    for (int64_t k = 0; k < total; k++)
        o[k] = pairs[k].idx;
    return LOOM_OK;
}

loom_status bx_batched_nms_cpu(loom_call *call)
{
    const loom_tensor *boxes = call->inputs[0];
    loom_status st = bx_nms_check(call, 1);
    if (st != LOOM_OK)
        return st;
    int64_t n = boxes->shape[0];
    loom_dtype dt = loom_tensor_dtype_of(boxes);
    double thr = call->attrs[PK_ATTR(bx_nms, iou_threshold)].u.f;
    if (n == 0)
        return empty_output(call);
    return n <= TRICK_MAX_BOXES ? batched_trick(call, dt, n, thr) : batched_per_class(call, dt, n, thr);
}
