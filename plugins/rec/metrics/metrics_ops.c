/* SPDX-License-Identifier: BSD-3-Clause */
/*
** metrics_ops.c - the cpu kernels of the one-shot metric ops (metrics.h):
** the batch's states in f64 (fixed chunks over the core's pool, summed in
** chunk order), then torchrec's compute_* formula per task.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

enum { K_NE, K_CALIBRATION, K_CTR, K_MSE };
#define CHUNK 65536
#define N_STATES 4

typedef struct sums_job {
    int kind;
    int64_t n, n_chunks;
    const void *p, *y, *w;
    int p64, y64, w64;
    double *partials;           /* [tasks * n_chunks * N_STATES] */
} sums_job;

static inline double ld(const void *a, int is64, int64_t i)
{
    return is64 ? ((const double *)a)[i] : (double)((const float *)a)[i];
}

static void sums_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const sums_job *j = user;
    for (int64_t item = begin; item < end; item++) {
        const int64_t t = item / j->n_chunks, c = item % j->n_chunks;
        const int64_t a = t * j->n + c * CHUNK, b = t * j->n + (c + 1) * CHUNK < (t + 1) * j->n ? t * j->n + (c + 1) * CHUNK
                                                                                                 : (t + 1) * j->n;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int64_t i = a; i < b; i++) {
            const double p = ld(j->p, j->p64, i), y = ld(j->y, j->y64, i), w = j->w ? ld(j->w, j->w64, i) : 1.0;
            switch (j->kind) {
            case K_NE: {
                const double q = p < REC_NE_ETA ? REC_NE_ETA : p > 1 - REC_NE_ETA ? 1 - REC_NE_ETA : p;
                s0 += -w * y * log2(q) - w * (1.0 - y) * log2(1.0 - q);
                s1 += w;
                s2 += w * y;
                s3 += w * (1.0 - y);
                break;
            }
            case K_CALIBRATION:
                s0 += p * w;
                s1 += y * w;
                break;
            case K_CTR:
                s0 += y * w;
                s1 += w;
                break;
            default: {
                const double e = y - p;
                s0 += w * e * e;
                s1 += w;
                break;
            }
            }
        }
        double *o = j->partials + item * N_STATES;
        o[0] = s0;
        o[1] = s1;
        o[2] = s2;
        o[3] = s3;
    }
}

/* predictions, labels, weights: one shape, [N] or [T, N]; compact */
loom_status rec_metric_check(const loom_call *call, int64_t *T, int64_t *N)
{
    const loom_tensor *p = call->inputs[REC_METRIC_IN_PREDICTIONS], *y = call->inputs[REC_METRIC_IN_LABELS],
                      *w = call->inputs[REC_METRIC_IN_WEIGHTS];
    char b1[160], b2[160];
    if (p->ndim != 1 && p->ndim != 2)
        return pk_host->fail(LOOM_EINVAL, "'predictions' %s must be [N] or [tasks, N]",
                             pk_describe(pk_host, p, b1, sizeof b1));
    const loom_tensor *others[2] = { y, w };
    const char *names[2] = { "labels", "weights" };
    for (int k = 0; k < 2; k++) {
        const loom_tensor *o = others[k];
        if (!o)
            continue;
        int same = o->ndim == p->ndim;
        for (int d = 0; same && d < p->ndim; d++)
            same = o->shape[d] == p->shape[d];
        if (!same)
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the shape of 'predictions' %s", names[k],
                                 pk_describe(pk_host, o, b1, sizeof b1), pk_describe(pk_host, p, b2, sizeof b2));
    }
    const loom_tensor *all[3] = { p, y, w };
    const char *all_names[3] = { "predictions", "labels", "weights" };
    for (int k = 0; k < 3; k++)
        if (all[k] && loom_numel(all[k]) > 0 && !loom_is_contiguous(all[k]))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous", all_names[k],
                                 pk_describe(pk_host, all[k], b1, sizeof b1));
    *T = p->ndim == 2 ? p->shape[0] : 1;
    *N = p->shape[p->ndim - 1];
    return LOOM_OK;
}

static loom_status run_sums(loom_call *call, int kind)
{
    int64_t T, N;
    loom_status st = rec_metric_check(call, &T, &N);
    if (st != LOOM_OK)
        return st;
    loom_tensor *out;
    int64_t shape[1] = { T };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 1, shape, &out)) != LOOM_OK || T == 0)
        return st;
    const loom_tensor *p = call->inputs[0], *y = call->inputs[1], *w = call->inputs[2];
    sums_job j = { .kind = kind, .n = N, .n_chunks = N > 0 ? (N + CHUNK - 1) / CHUNK : 0,
                   .p = N ? loom_data(p) : NULL, .y = N ? loom_data(y) : NULL, .w = w && N ? loom_data(w) : NULL,
                   .p64 = loom_tensor_dtype_of(p) == LOOM_DTYPE_F64, .y64 = loom_tensor_dtype_of(y) == LOOM_DTYPE_F64,
                   .w64 = w && loom_tensor_dtype_of(w) == LOOM_DTYPE_F64 };
    j.partials = pk_host->scratch(call->ctx, (size_t)(T * (j.n_chunks > 0 ? j.n_chunks : 1) * N_STATES) * sizeof(double));
    if (!j.partials)
        return LOOM_ENOMEM;
    if (j.n_chunks > 0 && (st = pk_host->parallel_for(call->ctx, T * j.n_chunks, 1, sums_range, &j)) != LOOM_OK)
        return st;
    double *o = loom_data(out);
    for (int64_t t = 0; t < T; t++) {
        double s[N_STATES] = { 0, 0, 0, 0 };
        for (int64_t c = 0; c < j.n_chunks; c++)
            for (int k = 0; k < N_STATES; k++)
                s[k] += j.partials[(t * j.n_chunks + c) * N_STATES + k];
        switch (kind) {
        case K_NE: {      /* compute_ne: ce_sum / the entropy of the clamped mean label */
            const double wns = s[1] < REC_NE_ETA ? REC_NE_ETA : s[1];
            double mean = s[2] / wns;
            mean = mean < REC_NE_ETA ? REC_NE_ETA : mean > 1 - REC_NE_ETA ? 1 - REC_NE_ETA : mean;
            o[t] = s[0] / (-s[2] * log2(mean) - s[3] * log2(1.0 - mean));
            break;
        }
        case K_CALIBRATION:
            o[t] = s[1] <= 0.0 ? 0.0 : s[0] / s[1];
            break;
        default:          /* ctr, mse: num / weights, 0 without weight */
            o[t] = s[1] == 0.0 ? 0.0 : s[0] / s[1];
            break;
        }
    }
    return LOOM_OK;
}

static loom_status run_ne(loom_call *call) { return run_sums(call, K_NE); }
static loom_status run_calibration(loom_call *call) { return run_sums(call, K_CALIBRATION); }
static loom_status run_ctr(loom_call *call) { return run_sums(call, K_CTR); }
static loom_status run_mse(loom_call *call) { return run_sums(call, K_MSE); }

/* ------------------------------------------------------------ auc */

typedef struct ranked {
    double p;
    int64_t i;
} ranked;

/* descending prediction; ties by position (torch's argsort leaves them unspecified) */
static int by_prediction_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

typedef struct auc_job {
    int64_t n;
    const void *p, *y, *w;
    int p64, y64, w64;
    ranked *order;              /* [T * n] (f64 predictions) */
    uint64_t *keys, *tmp;       /* [T * n] each (f32 predictions) */
    double *out;
} auc_job;

/* f32 predictions: (descending order key << 32 | position), sorted by an LSD
** radix sort on the key (3 passes of 11 bits): stable, so ties keep their
** positions' order, as the comparison sort of f64 predictions does. */
static void radix_order(const float *p, int64_t n, uint64_t *a, uint64_t *tmp)
{
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &p[i], sizeof u);
        u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);     /* ascending unsigned order of the floats */
        a[i] = ((uint64_t)~u << 32) | (uint64_t)i;          /* descending */
    }
    for (int pass = 0; pass < 3; pass++) {
        const int shift = 32 + 11 * pass;
        int64_t count[2048] = { 0 };
        for (int64_t i = 0; i < n; i++)
            count[(a[i] >> shift) & 2047]++;
        int64_t sum = 0;
        for (int b = 0; b < 2048; b++) {
            int64_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++)
            tmp[count[(a[i] >> shift) & 2047]++] = a[i];
        uint64_t *t = a;
        a = tmp;
        tmp = t;
    }
    /* three passes: the sorted keys are in tmp's buffer; move them home */
    memcpy(tmp, a, (size_t)n * sizeof *a);
}

/* _compute_auc_helper of torchrec, one task per item */
static void auc_range(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    (void)thread_index;
    const auc_job *j = user;
    for (int64_t t = begin; t < end; t++) {
        const int64_t base = t * j->n;
        ranked *r = NULL;
        uint64_t *keys = NULL;
        if (j->p64) {
            r = j->order + base;
            for (int64_t i = 0; i < j->n; i++) {
                r[i].p = ld(j->p, 1, base + i);
                r[i].i = i;
            }
            qsort(r, (size_t)j->n, sizeof *r, by_prediction_desc);
        } else {
            keys = j->keys + base;
            radix_order((const float *)j->p + base, j->n, keys, j->tmp + base);
        }
        double fp = 0, tp = 0, area = 0, prev_fp = 0, prev_tp = 0;
        for (int64_t k = 0; k < j->n; k++) {
            const int64_t i = base + (r ? r[k].i : (int64_t)(keys[k] & 0xFFFFFFFFu));
            const double y = ld(j->y, j->y64, i), w = j->w ? ld(j->w, j->w64, i) : 1.0;
            fp += w * (1.0 - y);
            tp += w * y;
            if (k > 0)          /* torch.trapz(cum_tp, cum_fp): from the first point, not from 0 */
                area += (fp - prev_fp) * (tp + prev_tp) * 0.5;
            prev_fp = fp;
            prev_tp = tp;
        }
        j->out[t] = j->n == 0 || fp * tp == 0 ? 0.5 : area / fp / tp;
    }
}

static loom_status run_auc(loom_call *call)
{
    int64_t T, N;
    loom_status st = rec_metric_check(call, &T, &N);
    if (st != LOOM_OK)
        return st;
    loom_tensor *out;
    int64_t shape[1] = { T };
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 1, shape, &out)) != LOOM_OK || T == 0)
        return st;
    const loom_tensor *p = call->inputs[0], *y = call->inputs[1], *w = call->inputs[2];
    auc_job j = { .n = N, .p = N ? loom_data(p) : NULL, .y = N ? loom_data(y) : NULL, .w = w && N ? loom_data(w) : NULL,
                  .p64 = loom_tensor_dtype_of(p) == LOOM_DTYPE_F64, .y64 = loom_tensor_dtype_of(y) == LOOM_DTYPE_F64,
                  .w64 = w && loom_tensor_dtype_of(w) == LOOM_DTYPE_F64, .out = loom_data(out) };
    if (N > INT64_C(0xFFFFFFFF))
        return pk_host->fail(LOOM_EINVAL, "'predictions' has %lld per task: at most 2^32 - 1", (long long)N);
    if (j.p64)
        j.order = pk_host->scratch(call->ctx, (size_t)(T * (N > 0 ? N : 1)) * sizeof(ranked));
    else {
        j.keys = pk_host->scratch(call->ctx, (size_t)(T * (N > 0 ? N : 1)) * sizeof(uint64_t));
        j.tmp = j.keys ? pk_host->scratch(call->ctx, (size_t)(T * (N > 0 ? N : 1)) * sizeof(uint64_t)) : NULL;
    }
    if (j.p64 ? !j.order : !j.tmp)
        return LOOM_ENOMEM;
    return pk_host->parallel_for(call->ctx, T, 1, auc_range, &j);
}

static const loom_kernel_desc rec_metric_cpu_kernels[] = {
    PK_KERNEL_CPU(rec_ne_schema, "cpu:f64-states", REC_METRIC_DTYPES, run_ne),
    PK_KERNEL_CPU(rec_auc_schema, "cpu:radix-sort", REC_METRIC_DTYPES, run_auc),
    PK_KERNEL_CPU(rec_calibration_schema, "cpu:f64-states", REC_METRIC_DTYPES, run_calibration),
    PK_KERNEL_CPU(rec_ctr_schema, "cpu:f64-states", REC_METRIC_DTYPES, run_ctr),
    PK_KERNEL_CPU(rec_mse_schema, "cpu:f64-states", REC_METRIC_DTYPES, run_mse),

    PK_KERNEL_CPU(rec_metrics_update_schema, "cpu:f64-states", REC_METRIC_DTYPES, rec_metrics_update_run),
    PK_KERNEL_CPU(rec_metrics_compute_schema, "cpu:f64-states", 0, rec_metrics_compute_run),
    PK_KERNEL_CPU(rec_metrics_state_schema, "cpu:f64-states", 0, rec_metrics_state_run),
    PK_KERNEL_CPU(rec_metrics_load_state_schema, "cpu:f64-states", REC_METRIC_DTYPES, rec_metrics_load_state_run),
};

static const loom_object_class *const metrics_classes[] = { &rec_metrics_class };

const pk_module rec_metrics_cpu = {
    .name = "metrics", .ops = rec_metric_ops, .n_ops = PK_COUNT(rec_metric_ops),
    .classes = metrics_classes, .n_classes = PK_COUNT(metrics_classes),
    .kernels = rec_metric_cpu_kernels, .n_kernels = PK_COUNT(rec_metric_cpu_kernels),
};
