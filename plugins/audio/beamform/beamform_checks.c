/* SPDX-License-Identifier: BSD-3-Clause */
/*
** beamform_checks.c - the checks of the beamforming ops, shared by every
** backend: ranks, shapes, dtypes, the reference channel, and Hermitian PSDs.
** torchaudio raises ValueError (shapes) or TypeError (dtypes) for what is
** refused here, except two refusals it lacks: a PSD that is not Hermitian
** (torchaudio solves with it anyway, and eigh reads one triangle only) and
** a real mask whose precision differs from the spectrum's (torch would
** promote the PSD to the wider dtype; loom keeps one dtype per call).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "beamform.h"

static int same_dims(const loom_tensor *a, int32_t na, const int64_t *b)
{
    for (int32_t i = 0; i < na; i++)
        if (a->shape[i] != b[i])
            return 0;
    return 1;
}

static loom_status need_contiguous(const loom_tensor *t, const char *name)
{
    char b[160];
    if (loom_numel(t) > 0 && !loom_is_contiguous(t))
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous (compact row-major)", name,
                             bf_describe(t, b, sizeof b));
    return LOOM_OK;
}

static void set_lead(bf_geom *g, const loom_tensor *t, int32_t lead_ndim)
{
    g->lead_ndim = lead_ndim;
    g->batch = 1;
    for (int32_t i = 0; i < lead_ndim; i++) {
        g->lead[i] = t->shape[i];
        g->batch *= t->shape[i];
    }
}

static loom_status need_complex(const loom_tensor *t, const char *name)
{
    char b[160];
    loom_dtype d = loom_tensor_dtype_of(t);
    if (d != LOOM_DTYPE_C64 && d != LOOM_DTYPE_C128)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be complex64 or complex128", name,
                             bf_describe(t, b, sizeof b));
    return LOOM_OK;
}

static loom_status check_channels(int64_t c, const char *name, const loom_tensor *t)
{
    char b[160];
    if (c > BF_MAX_CHANNELS)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s has %lld channels; at most %d are supported", name,
                             bf_describe(t, b, sizeof b), (long long)c, BF_MAX_CHANNELS);
    return LOOM_OK;
}

loom_status bf_check_specgram(const loom_tensor *x, const char *name, bf_geom *g)
{
    char b[160];
    loom_status st;
    if ((st = need_complex(x, name)) != LOOM_OK)
        return st;
    if (x->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be at least 3-D (..., channel, freq, time)", name,
                             bf_describe(x, b, sizeof b));
    if ((st = need_contiguous(x, name)) != LOOM_OK)
        return st;
    g->dtype = loom_tensor_dtype_of(x);
    set_lead(g, x, x->ndim - 3);
    g->C = x->shape[x->ndim - 3];
    g->F = x->shape[x->ndim - 2];
    g->T = x->shape[x->ndim - 1];
    return check_channels(g->C, name, x);
}

static loom_dtype real_of(loom_dtype complex_dtype)
{
    return complex_dtype == LOOM_DTYPE_C128 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32;
}

loom_status bf_check_mask(const loom_tensor *m, const char *name, const bf_geom *g, int multi_mask)
{
    char b[160], bx[64];
    loom_dtype want = real_of(g->dtype);
    if (loom_tensor_dtype_of(m) != want)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be %s, the real dtype of the %s spectrum", name,
                             bf_describe(m, b, sizeof b), pk_host->dtype_name(want), pk_host->dtype_name(g->dtype));
    int32_t tail = multi_mask ? 3 : 2;
    int ok = m->ndim == g->lead_ndim + tail && same_dims(m, g->lead_ndim, g->lead)
          && m->shape[m->ndim - 2] == g->F && m->shape[m->ndim - 1] == g->T
          && (!multi_mask || m->shape[m->ndim - 3] == g->C);
    if (!ok) {
        if (!multi_mask)
            snprintf(bx, sizeof bx, "(..., F=%lld, T=%lld)", (long long)g->F, (long long)g->T);
        else
            snprintf(bx, sizeof bx, "(..., C=%lld, F=%lld, T=%lld)", (long long)g->C, (long long)g->F,
                     (long long)g->T);
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the shape %s: specgram's batch shape, %s", name,
                             bf_describe(m, b, sizeof b), bx,
                             multi_mask ? "channels, bins and frames" : "bins and frames (no channel dim)");
    }
    return need_contiguous(m, name);
}

loom_status bf_check_psd(const loom_tensor *p, const char *name, bf_geom *g, int first)
{
    char b[160];
    loom_status st;
    if ((st = need_complex(p, name)) != LOOM_OK)
        return st;
    if (p->ndim < 3)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must be at least 3-D (..., freq, channel, channel)", name,
                             bf_describe(p, b, sizeof b));
    if (p->shape[p->ndim - 1] != p->shape[p->ndim - 2])
        return pk_host->fail(LOOM_EINVAL, "'%s' %s: the last two dimensions must be equal (channel, channel)", name,
                             bf_describe(p, b, sizeof b));
    if ((st = need_contiguous(p, name)) != LOOM_OK)
        return st;
    if (first) {
        g->dtype = loom_tensor_dtype_of(p);
        set_lead(g, p, p->ndim - 3);
        g->F = p->shape[p->ndim - 3];
        g->C = p->shape[p->ndim - 1];
        g->T = 0;
        return check_channels(g->C, name, p);
    }
    if (loom_tensor_dtype_of(p) != g->dtype)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the dtype %s", name, bf_describe(p, b, sizeof b),
                             pk_host->dtype_name(g->dtype));
    if (p->ndim != g->lead_ndim + 3 || !same_dims(p, g->lead_ndim, g->lead) || p->shape[p->ndim - 3] != g->F
        || p->shape[p->ndim - 1] != g->C)
        return pk_host->fail(LOOM_EINVAL, "'%s' %s must have the shape (..., F=%lld, C=%lld, C) of the other inputs",
                             name, bf_describe(p, b, sizeof b), (long long)g->F, (long long)g->C);
    return LOOM_OK;
}

loom_status bf_check_ref(const loom_call *call, int32_t attr, const loom_tensor *in, const bf_geom *g,
                         int required, bf_ref *ref)
{
    char b[160];
    const loom_attr_value *a = &call->attrs[attr];
    memset(ref, 0, sizeof *ref);
    ref->index = -1;
    if (a->is_set && in != NULL)
        return pk_host->fail(LOOM_EINVAL, "'reference_channel' is given twice: as the int attribute and as the "
                             "tensor input; give one");
    if (a->is_set) {
        if (a->u.i < 0 || a->u.i >= g->C)
            return pk_host->fail(LOOM_EINVAL, "'reference_channel' %lld is out of range for %lld channels",
                                 (long long)a->u.i, (long long)g->C);
        ref->present = 1;
        ref->index = a->u.i;
        return LOOM_OK;
    }
    if (in == NULL) {
        if (required)
            return pk_host->fail(LOOM_EINVAL, "'reference_channel' is required: the int attribute or the "
                                 "(..., C) tensor input");
        return LOOM_OK;
    }
    /* torchaudio broadcasts (..., C) against the batch; loom takes (C) for every
    ** problem, or exactly the batch shape followed by C */
    int whole = in->ndim == g->lead_ndim + 1 && same_dims(in, g->lead_ndim, g->lead);
    if (in->ndim < 1 || in->shape[in->ndim - 1] != g->C || (in->ndim != 1 && !whole))
        return pk_host->fail(LOOM_EINVAL, "'reference_channel' %s must be (C=%lld) or the batch shape followed by C",
                             bf_describe(in, b, sizeof b), (long long)g->C);
    loom_status st = need_contiguous(in, "reference_channel");
    if (st != LOOM_OK)
        return st;
    ref->present = 1;
    ref->u = in;
    ref->u_batch = in->ndim == 1 ? 1 : g->batch;
    return LOOM_OK;
}

/* |A - A^H| <= tol * max|A| element-wise: the PSDs psd() makes are exactly
** Hermitian, and the tolerance (a few hundred ulps of the precision)
** admits PSDs summed in any order while refusing a matrix that is not one.
** Computed in the element type (|x - y| rounds by half an ulp of itself,
** far below the tolerance), without branches on the data (fabs is a mask,
** the max a maxss that keeps fmax's NaN rule: a NaN never becomes it). */
#define HERMITIAN_CHECK(T, ABS, TOL)                                                                         \
    {                                                                                                     \
        const T *a = (const T *)loom_data(p) + (size_t)2 * m * C * C;                                     \
        T amax = 0, dmax = 0;                                                                             \
        for (int64_t i = 0; i < 2 * C * C; i++) {                                                         \
            const T v = ABS(a[i]);                                                                        \
            amax = v > amax ? v : amax;                                                                   \
        }                                                                                                 \
        for (int64_t r = 0; r < C; r++)                                                                   \
            for (int64_t c = r; c < C; c++) {                                                             \
                const T *x = a + 2 * (r * C + c), *y = a + 2 * (c * C + r);                               \
                const T dr = ABS(x[0] - y[0]), di = ABS(x[1] + y[1]);                                     \
                dmax = dr > dmax ? dr : dmax;                                                             \
                dmax = di > dmax ? di : dmax;                                                             \
            }                                                                                             \
        if (!(dmax <= (T)(TOL) * amax) && !(amax == 0 && dmax == 0))                                      \
            bad = 1;                                                                                      \
    }

loom_status bf_check_hermitian(const loom_tensor *p, const char *name, const bf_geom *g)
{
    const int64_t n = g->batch * g->F, C = g->C;
    for (int64_t m = 0; m < n; m++) {
        int bad = 0;
        if (g->dtype == LOOM_DTYPE_C128)
            HERMITIAN_CHECK(double, fabs, 1e-10)
        else
            HERMITIAN_CHECK(float, fabsf, 1e-4)
        if (bad)
            return pk_host->fail(LOOM_EINVAL, "'%s' is not Hermitian: matrix %lld (batch %lld, freq %lld) differs "
                                 "from its conjugate transpose (a PSD is Hermitian)", name, (long long)m,
                                 (long long)(m / g->F), (long long)(m % g->F));
    }
    return LOOM_OK;
}

/* ------------------------------------------------------------ the ops */

static loom_status alloc_tail(loom_call *call, const bf_geom *g, int32_t n_tail, const int64_t *tail,
                              loom_tensor **out)
{
    int64_t shape[LOOM_MAX_NDIM];
    int32_t nd = g->lead_ndim + n_tail;
    if (nd > LOOM_MAX_NDIM)
        return pk_host->fail(LOOM_EINVAL, "the output would have %d dimensions (LOOM_MAX_NDIM is %d)", nd,
                             LOOM_MAX_NDIM);
    memcpy(shape, g->lead, sizeof(int64_t) * (size_t)g->lead_ndim);
    memcpy(shape + g->lead_ndim, tail, sizeof(int64_t) * (size_t)n_tail);
    return pk_host->alloc_output(call, 0, g->dtype, nd, shape, out);
}

loom_status bf_psd_check(loom_call *call, bf_geom *g, loom_tensor **out)
{
    loom_status st = bf_check_specgram(call->inputs[BF_PSD_SPECGRAM], "specgram", g);
    if (st == LOOM_OK && call->inputs[BF_PSD_MASK] != NULL)
        st = bf_check_mask(call->inputs[BF_PSD_MASK], "mask", g, 0);
    if (st != LOOM_OK)
        return st;
    const int64_t tail[3] = { g->F, g->C, g->C };
    return alloc_tail(call, g, 3, tail, out);
}

static loom_status check_two_psds(loom_call *call, bf_geom *g)
{
    loom_status st = bf_check_psd(call->inputs[0], "psd_s", g, 1);
    if (st == LOOM_OK)
        st = bf_check_psd(call->inputs[1], "psd_n", g, 0);
    if (st == LOOM_OK)
        st = bf_check_hermitian(call->inputs[0], "psd_s", g);
    if (st == LOOM_OK)
        st = bf_check_hermitian(call->inputs[1], "psd_n", g);
    return st;
}

loom_status bf_souden_check(loom_call *call, bf_geom *g, bf_ref *ref, loom_tensor **out)
{
    loom_status st = check_two_psds(call, g);
    if (st == LOOM_OK)
        st = bf_check_ref(call, PK_ATTR(bf_weights, reference_channel), call->inputs[BF_SOUDEN_REF], g, 1, ref);
    if (st != LOOM_OK)
        return st;
    const int64_t tail[2] = { g->F, g->C };
    return alloc_tail(call, g, 2, tail, out);
}

loom_status bf_rtf_weights_check(loom_call *call, bf_geom *g, bf_ref *ref, loom_tensor **out)
{
    char b[160];
    const loom_tensor *rtf = call->inputs[BF_RTFW_RTF];
    loom_status st = need_complex(rtf, "rtf");
    if (st == LOOM_OK)
        st = bf_check_psd(call->inputs[BF_RTFW_PSD_N], "psd_n", g, 1);
    if (st != LOOM_OK)
        return st;
    if (rtf->ndim != g->lead_ndim + 2 || !same_dims(rtf, g->lead_ndim, g->lead)
        || rtf->shape[rtf->ndim - 2] != g->F || rtf->shape[rtf->ndim - 1] != g->C)
        return pk_host->fail(LOOM_EINVAL, "'rtf' %s must have the shape of psd_n without its last dim (..., F=%lld, "
                             "C=%lld)", bf_describe(rtf, b, sizeof b), (long long)g->F, (long long)g->C);
    if ((st = need_contiguous(rtf, "rtf")) != LOOM_OK
        || (st = bf_check_hermitian(call->inputs[BF_RTFW_PSD_N], "psd_n", g)) != LOOM_OK
        || (st = bf_check_ref(call, PK_ATTR(bf_weights, reference_channel), call->inputs[BF_RTFW_REF], g, 0, ref))
               != LOOM_OK)
        return st;
    const int64_t tail[2] = { g->F, g->C };
    return alloc_tail(call, g, 2, tail, out);
}

loom_status bf_rtf_evd_check(loom_call *call, bf_geom *g, loom_tensor **out)
{
    loom_status st = bf_check_psd(call->inputs[0], "psd_s", g, 1);
    if (st == LOOM_OK)
        st = bf_check_hermitian(call->inputs[0], "psd_s", g);
    if (st != LOOM_OK)
        return st;
    const int64_t tail[2] = { g->F, g->C };
    return alloc_tail(call, g, 2, tail, out);
}

loom_status bf_rtf_power_check(loom_call *call, bf_geom *g, bf_ref *ref, loom_tensor **out)
{
    loom_status st = check_two_psds(call, g);
    if (st == LOOM_OK)
        st = bf_check_ref(call, PK_ATTR(bf_rtf_power, reference_channel), call->inputs[BF_POWER_REF], g, 1, ref);
    if (st != LOOM_OK)
        return st;
    const int64_t tail[2] = { g->F, g->C };
    return alloc_tail(call, g, 2, tail, out);
}

loom_status bf_apply_check(loom_call *call, bf_geom *g, loom_tensor **out)
{
    char b[160], bw[160];
    const loom_tensor *w = call->inputs[BF_APPLY_WEIGHTS];
    loom_status st = bf_check_specgram(call->inputs[BF_APPLY_SPECGRAM], "specgram", g);
    if (st == LOOM_OK)
        st = need_complex(w, "beamform_weights");
    if (st != LOOM_OK)
        return st;
    if (w->ndim != g->lead_ndim + 2 || !same_dims(w, g->lead_ndim, g->lead) || w->shape[w->ndim - 2] != g->F
        || w->shape[w->ndim - 1] != g->C)
        return pk_host->fail(LOOM_EINVAL, "'beamform_weights' %s must be (..., F=%lld, C=%lld) for 'specgram' %s",
                             bf_describe(w, bw, sizeof bw), (long long)g->F, (long long)g->C,
                             bf_describe(call->inputs[BF_APPLY_SPECGRAM], b, sizeof b));
    if ((st = need_contiguous(w, "beamform_weights")) != LOOM_OK)
        return st;
    const int64_t tail[2] = { g->F, g->T };
    return alloc_tail(call, g, 2, tail, out);
}
