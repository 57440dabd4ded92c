/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_objects.c - torchaudio's multi-channel modules as object
** classes of audio.so: audio.PSD, audio.SoudenMVDR, audio.RTFMVDR and the
** mask-based audio.MVDR, each with its method of the same name.
**
** audio.MVDR follows torchaudio.transforms.MVDR exactly:
**  - complex64 input is computed in complex128 and the result cast back;
**  - mask_n defaults to 1 - mask_s; multi_mask masks are averaged over C;
**  - the PSDs come from PSD(multi_mask) (normalised, eps 1e-15), with the
**    mask normalised in the mask's own precision, as torch does;
**  - the reference is the one-hot vector of ref_channel, which gives the
**    very values of the reference column (x * 1 + 0 sums are exact);
**  - online mode keeps psd_s, psd_n and the time-summed masks of the calls
**    so far and updates psd <- psd_old * S_old / (S_old + S) + psd / (S_old
**    + S), psd being already normalised by its own mask sum: torchaudio's
**    double normalisation, reproduced as written. The sums and the two
**    factors are rounded to the mask's precision, as torch computes them.
** An online object serialises its calls (a mutex): each call reads and
** writes the state.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "beamform_cpu.h"

/* ------------------------------------------------------------ classes */

PK_ATTR_TABLE(bf_psd_class, BF_PSD_CLASS_ATTRS);
PK_ATTR_TABLE(bf_mvdr_class, BF_MVDR_CLASS_ATTRS);

typedef struct bf_mvdr_state {
    int64_t ref_channel;
    int solution, multi_mask, diag_loading, online;
    double diag_eps;
    pthread_mutex_t lock;
    /* online: the state of the calls so far (has_state = 0 before the first) */
    int has_state;
    loom_dtype mask_dtype;
    int64_t batch, F, C;
    double *psd_s, *psd_n;        /* c128 [batch][F][C][C] */
    double *sum_s, *sum_n;        /* [batch][F], values of the mask's precision */
} bf_mvdr_state;

static int stateless_token;

static loom_status psd_create(const loom_object_args *args, void **out)
{
    bf_psd_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return pk_host->fail(LOOM_ENOMEM, "audio.PSD: out of memory");
    s->multi_mask = args->attrs[PK_ATTR(bf_psd_class, multi_mask)].u.b;
    s->normalize = args->attrs[PK_ATTR(bf_psd_class, normalize)].u.b;
    s->eps = args->attrs[PK_ATTR(bf_psd_class, eps)].u.f;
    *out = s;
    return LOOM_OK;
}

static void plain_destroy(void *s)
{
    if (s != &stateless_token)
        free(s);
}

static loom_status stateless_create(const loom_object_args *args, void **out)
{
    (void)args;
    *out = &stateless_token;
    return LOOM_OK;
}

static void mvdr_free_state(bf_mvdr_state *s)
{
    free(s->psd_s);
    free(s->psd_n);
    free(s->sum_s);
    free(s->sum_n);
    s->psd_s = s->psd_n = s->sum_s = s->sum_n = NULL;
    s->has_state = 0;
}

static const char *const solution_names[] = { "ref_channel", "stv_evd", "stv_power", NULL };

static loom_status mvdr_create(const loom_object_args *args, void **out)
{
    const char *sol = args->attrs[PK_ATTR(bf_mvdr_class, solution)].u.s;
    int solution = -1;
    for (int i = 0; solution_names[i] != NULL; i++)
        if (strcmp(sol, solution_names[i]) == 0)
            solution = i;
    if (solution < 0)   /* the class's choices refuse it first; kept for older cores */
        return pk_host->fail(LOOM_EINVAL, "'solution' must be ref_channel, stv_evd or stv_power, not '%s'", sol);
    bf_mvdr_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return pk_host->fail(LOOM_ENOMEM, "audio.MVDR: out of memory");
    s->ref_channel = args->attrs[PK_ATTR(bf_mvdr_class, ref_channel)].u.i;
    s->solution = solution;
    s->multi_mask = args->attrs[PK_ATTR(bf_mvdr_class, multi_mask)].u.b;
    s->diag_loading = args->attrs[PK_ATTR(bf_mvdr_class, diag_loading)].u.b;
    s->diag_eps = args->attrs[PK_ATTR(bf_mvdr_class, diag_eps)].u.f;
    s->online = args->attrs[PK_ATTR(bf_mvdr_class, online)].u.b;
    pthread_mutex_init(&s->lock, NULL);
    *out = s;
    return LOOM_OK;
}

static void mvdr_destroy(void *p)
{
    bf_mvdr_state *s = p;
    mvdr_free_state(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

const loom_object_class bf_psd_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "audio.PSD",
    .doc = "torchaudio.transforms.PSD(multi_mask, normalize, eps=1e-15)",
    .n_attrs = PK_COUNT(bf_psd_class_attrs),
    .attrs = bf_psd_class_attrs,
    .create = psd_create,
    .destroy = plain_destroy,
};

const loom_object_class bf_souden_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "audio.SoudenMVDR",
    .doc = "torchaudio.transforms.SoudenMVDR: MVDR weights from the PSDs, applied to the spectrum",
    .create = stateless_create,
    .destroy = plain_destroy,
};

const loom_object_class bf_rtf_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "audio.RTFMVDR",
    .doc = "torchaudio.transforms.RTFMVDR: MVDR weights from the RTF and the noise PSD, applied to the spectrum",
    .create = stateless_create,
    .destroy = plain_destroy,
};

static const loom_attr_choices mvdr_choices[] = {
    { .attr = PK_ATTR(bf_mvdr_class, solution), .values = solution_names },
};

const loom_object_class bf_mvdr_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "audio.MVDR",
    .doc = "torchaudio.transforms.MVDR: mask-based MVDR (ref_channel, stv_evd, stv_power), offline or online",
    .n_attrs = PK_COUNT(bf_mvdr_class_attrs),
    .attrs = bf_mvdr_class_attrs,
    .create = mvdr_create,
    .destroy = mvdr_destroy,
    .n_choices = PK_COUNT(mvdr_choices),
    .choices = mvdr_choices,
};

/* ------------------------------------------------------------ helpers */

static loom_status scratch_of(loom_exec_ctx *ctx, size_t bytes, void **out)
{
    *out = pk_host->scratch(ctx, bytes ? bytes : 1);
    return *out != NULL ? LOOM_OK : LOOM_ENOMEM;
}

/* m (..., C, F, T) averaged over C into out (..., F, T), in m's precision */
static void mean_over_channels(const bf_geom *g, loom_dtype dt, const void *m, double *out)
{
    const int64_t FT = g->F * g->T;
    for (int64_t b = 0; b < g->batch; b++)
        for (int64_t i = 0; i < FT; i++) {
            double s = 0;
            for (int64_t c = 0; c < g->C; c++) {
                size_t k = (size_t)((b * g->C + c) * FT + i);
                s += dt == LOOM_DTYPE_F64 ? ((const double *)m)[k] : (double)((const float *)m)[k];
            }
            out[b * FT + i] = dt == LOOM_DTYPE_F64 ? s / (double)g->C : (double)((float)s / (float)g->C);
        }
}

static void widen(loom_dtype dt, const void *m, int64_t n, double *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = dt == LOOM_DTYPE_F64 ? ((const double *)m)[i] : (double)((const float *)m)[i];
}

/* ------------------------------------------------------------- audio.PSD */

loom_status bf_psd_method_run(loom_call *call)
{
    const bf_psd_state *s = call->object;
    const loom_tensor *x = call->inputs[0], *m = call->inputs[1];
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_check_specgram(x, "specgram", &g);
    if (st == LOOM_OK && m != NULL)
        st = bf_check_mask(m, "mask", &g, s->multi_mask);
    if (st != LOOM_OK)
        return st;
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, g.lead, sizeof(int64_t) * (size_t)g.lead_ndim);
    shape[g.lead_ndim] = g.F, shape[g.lead_ndim + 1] = g.C, shape[g.lead_ndim + 2] = g.C;
    if ((st = pk_host->alloc_output(call, 0, g.dtype, g.lead_ndim + 3, shape, &out)) != LOOM_OK
        || loom_numel(out) == 0)
        return st;
    if (g.T == 0) {
        memset(loom_data(out), 0, (size_t)loom_numel(out) * pk_host->dtype_size(g.dtype));
        return LOOM_OK;
    }
    const void *mask = m != NULL ? loom_data(m) : NULL;
    if (m != NULL && s->multi_mask) {
        /* the channel mean, in the mask's precision */
        const int64_t n = g.batch * g.F * g.T;
        const loom_dtype mdt = loom_tensor_dtype_of(m);
        double *avg;
        void *buf;
        if ((st = scratch_of(call->ctx, (size_t)n * (sizeof(double) + sizeof(float)), &buf)) != LOOM_OK)
            return st;
        avg = buf;
        mean_over_channels(&g, mdt, mask, avg);
        if (mdt == LOOM_DTYPE_F32) {
            float *f = (float *)(avg + n);
            for (int64_t i = 0; i < n; i++)
                f[i] = (float)avg[i];
            mask = f;
        } else {
            mask = avg;
        }
    }
    return bf_psd_cpu(call->ctx, &g, loom_data(x), mask, s->normalize, s->eps, loom_data(out));
}

/* ---------------------------------------------- SoudenMVDR and RTFMVDR */

/* weights (..., F, C) in scratch, then apply_beamforming into the output */
static loom_status weights_then_apply(loom_call *call, int rtf_based)
{
    const loom_tensor *x = call->inputs[0], *v = call->inputs[1], *pn = call->inputs[2];
    bf_geom g, gp;
    bf_ref ref;
    loom_tensor *out;
    char b[160];
    loom_status st = bf_check_specgram(x, "specgram", &g);
    if (st != LOOM_OK)
        return st;
    if (rtf_based) {
        if ((st = bf_check_psd(pn, "psd_n", &gp, 1)) != LOOM_OK)
            return st;
        if (v->ndim != gp.lead_ndim + 2 || v->shape[v->ndim - 1] != gp.C || v->shape[v->ndim - 2] != gp.F
            || loom_tensor_dtype_of(v) != gp.dtype || !loom_is_contiguous(v))
            return pk_host->fail(LOOM_EINVAL, "'rtf' %s must be a compact (..., F=%lld, C=%lld) tensor of dtype %s",
                                 bf_describe(v, b, sizeof b), (long long)gp.F, (long long)gp.C,
                                 pk_host->dtype_name(gp.dtype));
        for (int32_t i = 0; i < gp.lead_ndim; i++)
            if (v->shape[i] != gp.lead[i])
                return pk_host->fail(LOOM_EINVAL, "'rtf' %s: its batch shape differs from psd_n's",
                                     bf_describe(v, b, sizeof b));
    } else {
        if ((st = bf_check_psd(v, "psd_s", &gp, 1)) != LOOM_OK || (st = bf_check_psd(pn, "psd_n", &gp, 0)) != LOOM_OK
            || (st = bf_check_hermitian(v, "psd_s", &gp)) != LOOM_OK)
            return st;
    }
    if ((st = bf_check_hermitian(pn, "psd_n", &gp)) != LOOM_OK)
        return st;
    int same = gp.lead_ndim == g.lead_ndim && gp.F == g.F && gp.C == g.C && gp.dtype == g.dtype;
    for (int32_t i = 0; same && i < g.lead_ndim; i++)
        same = gp.lead[i] == g.lead[i];
    if (!same)
        return pk_host->fail(LOOM_EINVAL, "'psd_n' %s does not fit 'specgram' %s: (..., F, C, C) of its (..., C, F, T)",
                             bf_describe(pn, b, sizeof b), bf_describe(x, b + 80, 80));
    if ((st = bf_check_ref(call, PK_ATTR(bf_weights, reference_channel), call->inputs[3], &g, 1, &ref)) != LOOM_OK)
        return st;
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, g.lead, sizeof(int64_t) * (size_t)g.lead_ndim);
    shape[g.lead_ndim] = g.F, shape[g.lead_ndim + 1] = g.T;
    if ((st = pk_host->alloc_output(call, 0, g.dtype, g.lead_ndim + 2, shape, &out)) != LOOM_OK
        || loom_numel(out) == 0)
        return st;
    if (g.C == 0) {
        memset(loom_data(out), 0, (size_t)loom_numel(out) * pk_host->dtype_size(g.dtype));
        return LOOM_OK;
    }
    void *w;
    if ((st = scratch_of(call->ctx, (size_t)(g.batch * g.F * g.C) * pk_host->dtype_size(g.dtype), &w)) != LOOM_OK)
        return st;
    bf_refv r = bf_refv_of(&ref);
    bf_loading load = { call->attrs[PK_ATTR(bf_weights, diagonal_loading)].u.b,
                        call->attrs[PK_ATTR(bf_weights, diag_eps)].u.f };
    const double eps = call->attrs[PK_ATTR(bf_weights, eps)].u.f;
    st = rtf_based ? bf_rtf_weights_cpu(call->ctx, &g, loom_data(v), loom_data(pn), &r, load, eps, w)
                   : bf_souden_cpu(call->ctx, &g, loom_data(v), loom_data(pn), &r, load, eps, w);
    if (st != LOOM_OK)
        return st;
    return bf_apply_cpu(call->ctx, &g, w, loom_data(x), loom_data(out));
}

loom_status bf_souden_method_run(loom_call *call) { return weights_then_apply(call, 0); }
loom_status bf_rtf_method_run(loom_call *call) { return weights_then_apply(call, 1); }

/* ------------------------------------------------------------ audio.MVDR */

/* A mask (after the channel mean) normalised by its sum over time plus
** 1e-15 in its own precision, widened to double; and that sum. */
static void normalise_mask(loom_dtype dt, const double *m, int64_t bins, int64_t T, double *out, double *sums)
{
    for (int64_t k = 0; k < bins; k++) {
        const double *r = m + k * T;
        double s = 0;
        for (int64_t t = 0; t < T; t++)
            s += r[t];
        if (dt == LOOM_DTYPE_F32) {
            const float sf = (float)s, den = sf + (float)1e-15;
            for (int64_t t = 0; t < T; t++)
                out[k * T + t] = (double)((float)r[t] / den);
            sums[k] = (double)sf;
        } else {
            for (int64_t t = 0; t < T; t++)
                out[k * T + t] = r[t] / (s + 1e-15);
            sums[k] = s;
        }
    }
}

/* state <- state * S_old / (S_old + S) + cur * (1 / (S_old + S)), S_old <- S_old + S */
static void online_update(bf_mvdr_state *s, double *psd_state, double *sum_state, double *cur, const double *sums)
{
    const int64_t bins = s->batch * s->F, CC = s->C * s->C;
    for (int64_t k = 0; k < bins; k++) {
        double num, den, tot;
        if (s->mask_dtype == LOOM_DTYPE_F32) {
            const float so = (float)sum_state[k], sc = (float)sums[k], t = so + sc;
            num = (double)(so / t);
            den = (double)(1.0f / t);
            tot = (double)t;
        } else {
            tot = sum_state[k] + sums[k];
            num = sum_state[k] / tot;
            den = 1.0 / tot;
        }
        double *p = psd_state + 2 * k * CC, *c = cur + 2 * k * CC;
        for (int64_t i = 0; i < 2 * CC; i++) {
            p[i] = p[i] * num + c[i] * den;
            c[i] = p[i];
        }
        sum_state[k] = tot;
    }
}

static loom_status mvdr_locked(loom_call *call, bf_mvdr_state *s)
{
    const loom_tensor *x = call->inputs[0], *ms = call->inputs[1], *mn = call->inputs[2];
    bf_geom g;
    loom_tensor *out;
    loom_status st = bf_check_specgram(x, "specgram", &g);
    if (st != LOOM_OK)
        return st;
    const loom_dtype mdt = loom_tensor_dtype_of(ms);
    bf_geom gm = g;
    gm.dtype = mdt == LOOM_DTYPE_F64 ? LOOM_DTYPE_C128 : LOOM_DTYPE_C64;   /* any mask precision: torch's */
    if ((st = bf_check_mask(ms, "mask_s", &gm, s->multi_mask)) != LOOM_OK
        || (mn != NULL && (st = bf_check_mask(mn, "mask_n", &gm, s->multi_mask)) != LOOM_OK))
        return st;
    if (s->ref_channel >= g.C)
        return pk_host->fail(LOOM_EINVAL, "'ref_channel' %lld is out of range for 'specgram' with %lld channels",
                             (long long)s->ref_channel, (long long)g.C);
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, g.lead, sizeof(int64_t) * (size_t)g.lead_ndim);
    shape[g.lead_ndim] = g.F, shape[g.lead_ndim + 1] = g.T;
    if ((st = pk_host->alloc_output(call, 0, g.dtype, g.lead_ndim + 2, shape, &out)) != LOOM_OK)
        return st;
    if (s->online && s->has_state && (s->batch != g.batch || s->F != g.F || s->C != g.C || s->mask_dtype != mdt))
        return pk_host->fail(LOOM_EINVAL, "'specgram' (batch %lld, F %lld, C %lld, %s masks) differs from the online "
                             "state of the earlier calls (batch %lld, F %lld, C %lld, %s masks)", (long long)g.batch,
                             (long long)g.F, (long long)g.C, pk_host->dtype_name(mdt), (long long)s->batch,
                             (long long)s->F, (long long)s->C, pk_host->dtype_name(s->mask_dtype));
    if (loom_numel(out) == 0)
        return LOOM_OK;
    if (g.C == 0) {   /* a sum over no channels */
        memset(loom_data(out), 0, (size_t)loom_numel(out) * pk_host->dtype_size(g.dtype));
        return LOOM_OK;
    }
    const int64_t bins = g.batch * g.F, FT = g.F * g.T, n = g.batch * FT, CC = g.C * g.C;
    const int64_t nx = g.batch * g.C * FT;
    /* scratch: x in c128, two masks, two normalised masks, two PSDs, sums, weights, enhanced */
    size_t bytes = (size_t)(2 * nx + 4 * n + 4 * bins * CC + 2 * bins + 2 * bins * g.C + 2 * n) * sizeof(double);
    double *buf;
    if ((st = scratch_of(call->ctx, bytes, (void **)&buf)) != LOOM_OK)
        return st;
    double *xd = buf, *m_s = xd + 2 * nx, *m_n = m_s + n, *nm_s = m_n + n, *nm_n = nm_s + n;
    double *psd_s = nm_n + n, *psd_n = psd_s + 2 * bins * CC, *sum_s = psd_n + 2 * bins * CC, *sum_n = sum_s + bins;
    double *w = sum_n + bins, *enh = w + 2 * bins * g.C;
    const void *xin = loom_data(x);
    if (g.dtype == LOOM_DTYPE_C64)
        for (int64_t i = 0; i < 2 * nx; i++)
            xd[i] = (double)((const float *)xin)[i];
    else
        memcpy(xd, xin, (size_t)(2 * nx) * sizeof(double));
    /* the masks: channel mean (multi_mask), mask_n = 1 - mask_s by default,
    ** in the mask's precision */
    const int64_t mnel = loom_numel(ms);
    if (s->multi_mask) {
        mean_over_channels(&g, mdt, loom_data(ms), m_s);
    } else {
        widen(mdt, loom_data(ms), mnel, m_s);
    }
    if (mn != NULL) {
        if (s->multi_mask)
            mean_over_channels(&g, mdt, loom_data(mn), m_n);
        else
            widen(mdt, loom_data(mn), mnel, m_n);
    } else if (s->multi_mask) {
        /* torch: 1 - mask_s element-wise, then the mean over C */
        double *tmp;
        if ((st = scratch_of(call->ctx, (size_t)mnel * sizeof(double), (void **)&tmp)) != LOOM_OK)
            return st;
        widen(mdt, loom_data(ms), mnel, tmp);
        for (int64_t i = 0; i < mnel; i++)
            tmp[i] = mdt == LOOM_DTYPE_F32 ? (double)(1.0f - (float)tmp[i]) : 1.0 - tmp[i];
        for (int64_t i = 0; i < n; i++) {
            double acc = 0;
            for (int64_t c = 0; c < g.C; c++)
                acc += tmp[(i / FT * g.C + c) * FT + i % FT];
            m_n[i] = mdt == LOOM_DTYPE_F32 ? (double)((float)acc / (float)g.C) : acc / (double)g.C;
        }
    } else {
        for (int64_t i = 0; i < n; i++)
            m_n[i] = mdt == LOOM_DTYPE_F32 ? (double)(1.0f - (float)m_s[i]) : 1.0 - m_s[i];
    }
    normalise_mask(mdt, m_s, bins, g.T, nm_s, sum_s);
    normalise_mask(mdt, m_n, bins, g.T, nm_n, sum_n);
    bf_geom gd = g;
    gd.dtype = LOOM_DTYPE_C128;
    if ((st = bf_psd_cpu(call->ctx, &gd, xd, nm_s, 0, 0, psd_s)) != LOOM_OK
        || (st = bf_psd_cpu(call->ctx, &gd, xd, nm_n, 0, 0, psd_n)) != LOOM_OK)
        return st;
    if (s->online) {
        if (!s->has_state) {
            const size_t pb = (size_t)(2 * bins * CC) * sizeof(double), sb = (size_t)bins * sizeof(double);
            s->psd_s = malloc(pb), s->psd_n = malloc(pb), s->sum_s = malloc(sb), s->sum_n = malloc(sb);
            if (s->psd_s == NULL || s->psd_n == NULL || s->sum_s == NULL || s->sum_n == NULL) {
                mvdr_free_state(s);
                return pk_host->fail(LOOM_ENOMEM, "audio.MVDR: out of memory for the online state");
            }
            memcpy(s->psd_s, psd_s, pb), memcpy(s->psd_n, psd_n, pb);
            memcpy(s->sum_s, sum_s, sb), memcpy(s->sum_n, sum_n, sb);
            s->batch = g.batch, s->F = g.F, s->C = g.C, s->mask_dtype = mdt, s->has_state = 1;
        } else {
            online_update(s, s->psd_s, s->sum_s, psd_s, sum_s);
            online_update(s, s->psd_n, s->sum_n, psd_n, sum_n);
        }
    }
    bf_refv ref = { .present = 1, .index = s->ref_channel };
    bf_loading load = { s->diag_loading, s->diag_eps };
    switch (s->solution) {
    case BF_SOLUTION_REF_CHANNEL:
        st = bf_souden_cpu(call->ctx, &gd, psd_s, psd_n, &ref, load, 1e-8, w);
        break;
    default: {
        double *stv;
        if ((st = scratch_of(call->ctx, (size_t)(2 * bins * g.C) * sizeof(double), (void **)&stv)) != LOOM_OK)
            return st;
        st = s->solution == BF_SOLUTION_STV_EVD ? bf_rtf_evd_cpu(call->ctx, &gd, psd_s, stv)
                                                : bf_rtf_power_cpu(call->ctx, &gd, psd_s, psd_n, &ref, 3, load, stv);
        if (st == LOOM_OK)
            st = bf_rtf_weights_cpu(call->ctx, &gd, stv, psd_n, &ref, load, 1e-8, w);
    }
    }
    if (st != LOOM_OK)
        return st;
    if (g.dtype == LOOM_DTYPE_C128)
        return bf_apply_cpu(call->ctx, &gd, w, xd, loom_data(out));
    if ((st = bf_apply_cpu(call->ctx, &gd, w, xd, enh)) != LOOM_OK)
        return st;
    float *o = loom_data(out);
    for (int64_t i = 0; i < 2 * n; i++)
        o[i] = (float)enh[i];
    return LOOM_OK;
}

loom_status bf_mvdr_method_run(loom_call *call)
{
    bf_mvdr_state *s = call->object;
    pthread_mutex_lock(&s->lock);
    loom_status st = mvdr_locked(call, s);
    pthread_mutex_unlock(&s->lock);
    return st;
}
