/* SPDX-License-Identifier: BSD-3-Clause */
/*
** metrics_object.c - the rec.metrics object (metrics.h): torchrec's
** RecMetrics (NE, calibration, CTR, MSE, RMSE, accuracy, AUC, throughput)
** for several tasks, lifetime and windowed, with its state checkpointed as
** one f64 tensor.
**
** States are torchrec's, per task, as f64 sums: cross entropy, weight,
** weighted labels, weighted negatives, weighted predictions, weighted
** squared error, weighted hits (accuracy). All metrics share one window of
** batch states, as torchrec's WindowBuffers of one RecMetricModule do: a
** batch is added, the oldest removed (subtracted, as torchrec does) while
** the window holds more than window_size samples and more than one batch,
** at most 1000 batches (MAX_BUFFER_COUNT). AUC keeps the window's last
** window_size samples themselves (torchrec's AUCMetricComputation) and has
** no lifetime value. Throughput is examples per second since the first
** update (lifetime) and since the oldest batch of the window.
**
** An object may be updated from several threads: a mutex orders the calls.
*/
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"

enum { S_CE, S_W, S_YW, S_NW, S_PW, S_ERR, S_ACC, N_SUMS };
enum { M_NE, M_CALIBRATION, M_CTR, M_MSE, M_RMSE, M_ACCURACY, M_AUC, M_THROUGHPUT, N_KINDS };
static const char *const kind_names[N_KINDS] = { "ne", "calibration", "ctr", "mse", "rmse", "accuracy", "auc",
                                                 "throughput" };
#define MAX_BUFFERS 1000
#define STATE_MAGIC 1380270925.0   /* "REcM" */
#define STATE_VERSION 1.0

typedef struct rec_metrics {
    pthread_mutex_t lock;
    int n_metrics;
    int kinds[N_KINDS];
    int64_t T, W;
    double threshold;
    double *life, *win;          /* [T * N_SUMS] */
    double *buf;                 /* [MAX_BUFFERS][T * N_SUMS] ring of batch states */
    int64_t buf_size[MAX_BUFFERS];
    double buf_time[MAX_BUFFERS];
    int64_t head, count, used;   /* oldest buffer, buffers held, samples in them */
    double *ap, *ay, *aw;        /* [T * W] AUC's window samples, a ring per task */
    int64_t a_start, a_n;        /* oldest sample's slot, samples held */
    int64_t total;               /* examples seen */
    double t_first;
} rec_metrics;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void metrics_destroy(void *state)
{
    rec_metrics *m = state;
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m->life);
    free(m->win);
    free(m->buf);
    free(m->ap);
    free(m->ay);
    free(m->aw);
    free(m);
}

static loom_status metrics_create(const loom_object_args *args, void **state_out)
{
    *state_out = NULL;
    const char *list = args->attrs[PK_ATTR(rec_metrics_class, metrics)].u.s;
    rec_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_METRICS_CLASS);
    pthread_mutex_init(&m->lock, NULL);
    m->T = args->attrs[PK_ATTR(rec_metrics_class, n_tasks)].u.i;
    m->W = args->attrs[PK_ATTR(rec_metrics_class, window_size)].u.i;
    m->threshold = args->attrs[PK_ATTR(rec_metrics_class, threshold)].u.f;
    if (m->T > (1 << 16) || m->W > (INT64_C(1) << 28) / m->T) {
        metrics_destroy(m);
        return pk_host->fail(LOOM_EINVAL, "'n_tasks' %lld x 'window_size' %lld: at most 2^28 samples in the window",
                             (long long)m->T, (long long)m->W);
    }
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int k = 0;
        while (k < N_KINDS && !(strlen(kind_names[k]) == n && strncmp(kind_names[k], p, n) == 0))
            k++;
        if (k == N_KINDS || m->n_metrics == N_KINDS) {
            metrics_destroy(m);
            return pk_host->fail(LOOM_EINVAL, "'metrics' \"%s\": \"%.*s\" is not one of ne, calibration, ctr, mse, "
                                 "rmse, accuracy, auc, throughput (or is given twice)", list, (int)n, p);
        }
        m->kinds[m->n_metrics++] = k;
        p = e ? e + 1 : p + n;
    }
    const size_t ts = (size_t)m->T * N_SUMS, tw = (size_t)(m->T * m->W);
    m->life = calloc(ts, sizeof(double));
    m->win = calloc(ts, sizeof(double));
    m->buf = calloc(ts * MAX_BUFFERS, sizeof(double));
    m->ap = malloc(tw * sizeof(double));
    m->ay = malloc(tw * sizeof(double));
    m->aw = malloc(tw * sizeof(double));
    if (!m->life || !m->win || !m->buf || !m->ap || !m->ay || !m->aw) {
        metrics_destroy(m);
        return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", REC_METRICS_CLASS);
    }
    *state_out = m;
    return LOOM_OK;
}

static inline double ld(const loom_tensor *t, int64_t i)
{
    return loom_tensor_dtype_of(t) == LOOM_DTYPE_F64 ? ((const double *)loom_data(t))[i]
                                                      : (double)((const float *)loom_data(t))[i];
}

static void drop_oldest(rec_metrics *m)
{
    const int64_t ts = m->T * N_SUMS;
    const double *b = m->buf + m->head * ts;
    for (int64_t i = 0; i < ts; i++)
        m->win[i] -= b[i];
    m->used -= m->buf_size[m->head];
    m->head = (m->head + 1) % MAX_BUFFERS;
    m->count--;
}

loom_status rec_metrics_update_run(loom_call *call)
{
    rec_metrics *m = call->object;
    int64_t T, N;
    loom_status st = rec_metric_check(call, &T, &N);
    if (st != LOOM_OK)
        return st;
    if (T != m->T)
        return pk_host->fail(LOOM_EINVAL, "'predictions' has %lld tasks, the object %lld (n_tasks)", (long long)T,
                             (long long)m->T);
    const loom_tensor *p = call->inputs[0], *y = call->inputs[1], *w = call->inputs[2];
    pthread_mutex_lock(&m->lock);
    if (m->total == 0)
        m->t_first = now_s();
    if (m->count == MAX_BUFFERS)
        drop_oldest(m);
    const int64_t ts = T * N_SUMS, slot = (m->head + m->count) % MAX_BUFFERS;
    double *b = m->buf + slot * ts;
    for (int64_t t = 0; t < T; t++) {
        double s[N_SUMS] = { 0 };
        for (int64_t i = t * N; i < (t + 1) * N; i++) {
            const double pv = ld(p, i), yv = ld(y, i), wv = w ? ld(w, i) : 1.0;
            const double q = pv < REC_NE_ETA ? REC_NE_ETA : pv > 1 - REC_NE_ETA ? 1 - REC_NE_ETA : pv;
            const double e = yv - pv;
            s[S_CE] += -wv * yv * log2(q) - wv * (1.0 - yv) * log2(1.0 - q);
            s[S_W] += wv;
            s[S_YW] += wv * yv;
            s[S_NW] += wv * (1.0 - yv);
            s[S_PW] += pv * wv;
            s[S_ERR] += wv * e * e;
            s[S_ACC] += wv * ((pv >= m->threshold ? 1.0 : 0.0) == yv);
        }
        for (int k = 0; k < N_SUMS; k++) {
            b[t * N_SUMS + k] = s[k];
            m->life[t * N_SUMS + k] += s[k];
            m->win[t * N_SUMS + k] += s[k];
        }
    }
    m->buf_size[slot] = N;
    m->buf_time[slot] = now_s();
    m->count++;
    m->used += N;
    while (m->used > m->W && m->count > 1)
        drop_oldest(m);
    /* AUC: the last W samples of each task */
    const int64_t first = N > m->W ? N - m->W : 0;
    for (int64_t i = first; i < N; i++) {
        int64_t at;
        if (m->a_n < m->W)
            at = (m->a_start + m->a_n++) % m->W;
        else {
            at = m->a_start;
            m->a_start = (m->a_start + 1) % m->W;
        }
        for (int64_t t = 0; t < T; t++) {
            m->ap[t * m->W + at] = ld(p, t * N + i);
            m->ay[t * m->W + at] = ld(y, t * N + i);
            m->aw[t * m->W + at] = w ? ld(w, t * N + i) : 1.0;
        }
    }
    m->total += N;
    pthread_mutex_unlock(&m->lock);
    return LOOM_OK;
}

typedef struct ranked {
    double p;
    int64_t i;
} ranked;

static int by_p_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->p != y->p)
        return x->p < y->p ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

/* torchrec's _compute_auc_helper over task t's window, oldest sample first */
static double window_auc(const rec_metrics *m, int64_t t, ranked *r)
{
    const int64_t n = m->a_n;
    /* ties in window order: rank by age (k), map back to the slot after the sort */
    for (int64_t k = 0; k < n; k++) {
        r[k].p = m->ap[t * m->W + (m->a_start + k) % m->W];
        r[k].i = k;
    }
    qsort(r, (size_t)n, sizeof *r, by_p_desc);
    double fp = 0, tp = 0, area = 0, pfp = 0, ptp = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t at = (m->a_start + r[k].i) % m->W;
        const double y = m->ay[t * m->W + at], w = m->aw[t * m->W + at];
        fp += w * (1.0 - y);
        tp += w * y;
        if (k > 0)
            area += (fp - pfp) * (tp + ptp) * 0.5;
        pfp = fp;
        ptp = tp;
    }
    return n == 0 || fp * tp == 0 ? 0.5 : area / fp / tp;
}

static double value_of(int kind, const double *s)
{
    switch (kind) {
    case M_NE: {
        const double wns = s[S_W] < REC_NE_ETA ? REC_NE_ETA : s[S_W];
        double mean = s[S_YW] / wns;
        mean = mean < REC_NE_ETA ? REC_NE_ETA : mean > 1 - REC_NE_ETA ? 1 - REC_NE_ETA : mean;
        return s[S_CE] / (-s[S_YW] * log2(mean) - s[S_NW] * log2(1.0 - mean));
    }
    case M_CALIBRATION: return s[S_YW] <= 0.0 ? 0.0 : s[S_PW] / s[S_YW];
    case M_CTR: return s[S_W] == 0.0 ? 0.0 : s[S_YW] / s[S_W];
    case M_MSE: return s[S_W] == 0.0 ? 0.0 : s[S_ERR] / s[S_W];
    case M_RMSE: return s[S_W] == 0.0 ? 0.0 : sqrt(s[S_ERR] / s[S_W]);
    default: return s[S_W] == 0.0 ? 0.0 : s[S_ACC] / s[S_W];     /* accuracy */
    }
}

loom_status rec_metrics_compute_run(loom_call *call)
{
    rec_metrics *m = call->object;
    int64_t shape[2] = { m->n_metrics, m->T };
    loom_tensor *lt, *wt;
    loom_status st;
    if ((st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 2, shape, &lt)) != LOOM_OK ||
        (st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F64, 2, shape, &wt)) != LOOM_OK)
        return st;
    ranked *r = pk_host->scratch(call->ctx, (size_t)(m->W > 0 ? m->W : 1) * sizeof(ranked));
    if (!r)
        return LOOM_ENOMEM;
    double *life = loom_numel(lt) ? loom_data(lt) : NULL, *win = loom_numel(wt) ? loom_data(wt) : NULL;
    pthread_mutex_lock(&m->lock);
    const double now = now_s();
    for (int j = 0; j < m->n_metrics; j++)
        for (int64_t t = 0; t < m->T; t++) {
            const int k = m->kinds[j];
            double lv, wv;
            if (k == M_AUC) {
                lv = NAN;
                wv = window_auc(m, t, r);
            } else if (k == M_THROUGHPUT) {
                const double since = m->total ? now - m->t_first : 0;
                const double wsince = m->count ? now - m->buf_time[m->head] : 0;
                lv = since > 0 ? (double)m->total / since : 0.0;
                wv = wsince > 0 ? (double)m->used / wsince : 0.0;
            } else {
                lv = value_of(k, m->life + t * N_SUMS);
                wv = value_of(k, m->win + t * N_SUMS);
            }
            life[j * m->T + t] = lv;
            win[j * m->T + t] = wv;
        }
    pthread_mutex_unlock(&m->lock);
    return LOOM_OK;
}

/* The checkpoint: magic, version, T, W, N_SUMS, total, life [T*S], count,
** then each window batch oldest first (size, sums [T*S]), then AUC's n and
** its samples oldest first (p, y, w of each task). */
loom_status rec_metrics_state_run(loom_call *call)
{
    rec_metrics *m = call->object;
    pthread_mutex_lock(&m->lock);
    const int64_t ts = m->T * N_SUMS;
    int64_t shape[1] = { 6 + ts + 1 + m->count * (1 + ts) + 1 + 3 * m->T * m->a_n };
    loom_tensor *out;
    loom_status st = pk_host->alloc_output(call, 0, LOOM_DTYPE_F64, 1, shape, &out);
    if (st == LOOM_OK) {
        double *d = loom_data(out);
        *d++ = STATE_MAGIC;
        *d++ = STATE_VERSION;
        *d++ = (double)m->T;
        *d++ = (double)m->W;
        *d++ = N_SUMS;
        *d++ = (double)m->total;
        memcpy(d, m->life, (size_t)ts * sizeof(double));
        d += ts;
        *d++ = (double)m->count;
        for (int64_t c = 0; c < m->count; c++) {
            const int64_t slot = (m->head + c) % MAX_BUFFERS;
            *d++ = (double)m->buf_size[slot];
            memcpy(d, m->buf + slot * ts, (size_t)ts * sizeof(double));
            d += ts;
        }
        *d++ = (double)m->a_n;
        for (int64_t t = 0; t < m->T; t++)
            for (int64_t k = 0; k < m->a_n; k++) {
                const int64_t at = t * m->W + (m->a_start + k) % m->W;
                *d++ = m->ap[at];
                *d++ = m->ay[at];
                *d++ = m->aw[at];
            }
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

static int whole_in(double v, double lo, double hi)
{
    return v >= lo && v <= hi && v == floor(v);
}

loom_status rec_metrics_load_state_run(loom_call *call)
{
    rec_metrics *m = call->object;
    const loom_tensor *s = call->inputs[0];
    const int64_t n = loom_numel(s), ts = m->T * N_SUMS;
    const double *d = n ? loom_data(s) : NULL;
    char b[160];
    if (loom_tensor_dtype_of(s) != LOOM_DTYPE_F64 || !loom_is_contiguous(s))
        return pk_host->fail(LOOM_EINVAL, "'state' %s must be the compact f64 tensor rec.metrics_state returned",
                             pk_describe(pk_host, s, b, sizeof b));
    if (n < 6 + ts + 2 || d[0] != STATE_MAGIC || d[1] != STATE_VERSION)
        return pk_host->fail(LOOM_EINVAL, "'state' (%lld values) is not a rec.metrics checkpoint of this version",
                             (long long)n);
    if (d[2] != (double)m->T || d[3] != (double)m->W || d[4] != N_SUMS)
        return pk_host->fail(LOOM_EINVAL, "'state' is of an object of n_tasks %g, window_size %g; this one has %lld, %lld",
                             d[2], d[3], (long long)m->T, (long long)m->W);
    int64_t at = 6 + ts;
    const double count = d[at];
    if (!whole_in(d[5], 0, 9.0e15) || !whole_in(count, 0, MAX_BUFFERS) ||
        n < at + 1 + (int64_t)count * (1 + ts) + 1)
        return pk_host->fail(LOOM_EINVAL, "'state' is truncated or corrupt (window batches)");
    int64_t p = at + 1 + (int64_t)count * (1 + ts);
    const double an = d[p];
    if (!whole_in(an, 0, (double)m->W) || n != p + 1 + 3 * m->T * (int64_t)an)
        return pk_host->fail(LOOM_EINVAL, "'state' is truncated or corrupt (%lld values, AUC window of %g)",
                             (long long)n, an);
    for (int64_t c = 0; c < (int64_t)count; c++)
        if (!whole_in(d[at + 1 + c * (1 + ts)], 0, 9.0e15))
            return pk_host->fail(LOOM_EINVAL, "'state' is corrupt: window batch %lld has size %g", (long long)c,
                                 d[at + 1 + c * (1 + ts)]);
    pthread_mutex_lock(&m->lock);
    m->total = (int64_t)d[5];
    memcpy(m->life, d + 6, (size_t)ts * sizeof(double));
    memset(m->win, 0, (size_t)ts * sizeof(double));
    m->head = 0;
    m->count = (int64_t)count;
    m->used = 0;
    const double t = now_s();
    m->t_first = t;                   /* throughput restarts with the restored object */
    for (int64_t c = 0; c < m->count; c++) {
        const double *src = d + at + 1 + c * (1 + ts);
        m->buf_size[c] = (int64_t)src[0];
        m->buf_time[c] = t;
        memcpy(m->buf + c * ts, src + 1, (size_t)ts * sizeof(double));
        for (int64_t i = 0; i < ts; i++)
            m->win[i] += src[1 + i];
        m->used += m->buf_size[c];
    }
    m->a_start = 0;
    m->a_n = (int64_t)an;
    const double *a = d + p + 1;
    for (int64_t tk = 0; tk < m->T; tk++)
        for (int64_t k = 0; k < m->a_n; k++) {
            m->ap[tk * m->W + k] = *a++;
            m->ay[tk * m->W + k] = *a++;
            m->aw[tk * m->W + k] = *a++;
        }
    pthread_mutex_unlock(&m->lock);
    return LOOM_OK;
}

PK_ATTR_TABLE(rec_metrics_class, REC_METRICS_CLASS_ATTRS);

const loom_object_class rec_metrics_class = {
    .struct_size = sizeof(loom_object_class),
    .name = REC_METRICS_CLASS,
    .doc = "TorchRec RecMetrics for several tasks, lifetime and windowed, checkpointable; methods rec.metrics_update, "
           "rec.metrics_compute, rec.metrics_state, rec.metrics_load_state",
    PK_ATTRS(rec_metrics_class_attrs),
    .create = metrics_create,
    .destroy = metrics_destroy,
};
