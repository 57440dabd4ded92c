/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_audio_beamform.c - case generators of the audio pack's
** beamforming ops and objects (torchaudio's multi-channel functions).
**
** Spectra are uniform in [-1, 1) + i[-1, 1), masks in [0, 1); the PSDs the
** weights ops take are made by audio.psd on the cpu from such spectra (with
** more frames than channels, so they are well conditioned). Shapes: no
** batch, a batch of 2, channels 1 to 6, frames that are and are not
** multiples of the vector width.
**
** Tolerances: a backend sums the frames in another order and solves with
** another LU (cuBLAS's batched getrf/getrs against LAPACK's gesv): every
** complex component agrees within rtol times the largest modulus of the
** cpu's output, 1e-4 in complex64 (hundreds of roundings of 2^-24 through
** a solve of condition number below 100) and 1e-9 in complex128. The
** eigenvectors of rtf_evd are compared up to a unit phase per bin (each
** eigensolver picks its own).
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conformance.h"

#define COMPLEX (LOOM_DTYPE_BIT(LOOM_DTYPE_C64) | LOOM_DTYPE_BIT(LOOM_DTYPE_C128))

typedef struct bf_shape {
    int32_t nb;       /* 0: no batch dim, else a batch of 2 */
    int64_t C, F, T;
} bf_shape;

static const bf_shape shapes[] = {
    { 0, 3, 5, 7 },
    { 1, 4, 9, 37 },
    { 1, 6, 3, 64 },
    { 0, 1, 4, 5 },
};
#define N_SHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static loom_dtype real_of(loom_dtype dt) { return dt == LOOM_DTYPE_C128 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32; }

static double comp(const loom_tensor *t, int64_t i)
{
    return loom_tensor_dtype_of(t) == LOOM_DTYPE_C128 ? ((const double *)loom_data(t))[i]
                                                      : ((const float *)loom_data(t))[i];
}

/* a complex tensor of the case's dtype, components uniform in [-1, 1) */
static loom_tensor *cuniform(cf_case *c, int32_t ndim, const int64_t *shape, uint64_t stream)
{
    loom_tensor *t = cf_zeros(c, c->dtype, ndim, shape);
    for (int64_t i = 0; i < 2 * loom_numel(t); i++) {
        double v = 2 * cf_draw(c, stream, (uint64_t)i) - 1;
        if (c->dtype == LOOM_DTYPE_C128)
            ((double *)loom_data(t))[i] = v;
        else
            ((float *)loom_data(t))[i] = (float)v;
    }
    return t;
}

/* shape = [batch] + tail */
static int32_t with_batch(const bf_shape *s, int32_t n, const int64_t *tail, int64_t *shape)
{
    int32_t k = 0;
    if (s->nb)
        shape[k++] = 2;
    for (int32_t i = 0; i < n; i++)
        shape[k++] = tail[i];
    return k;
}

static int close_norm(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
                      size_t size)
{
    (void)out;
    const double rtol = c->dtype == LOOM_DTYPE_C128 ? 1e-9 : 1e-4;
    if (loom_numel(got) != loom_numel(ref) || loom_tensor_dtype_of(got) != loom_tensor_dtype_of(ref)) {
        snprintf(err, size, "dtype or size differs");
        return 0;
    }
    double scale = 0;
    for (int64_t i = 0; i < 2 * loom_numel(ref); i += 2)
        scale = fmax(scale, hypot(comp(ref, i), comp(ref, i + 1)));
    for (int64_t i = 0; i < 2 * loom_numel(ref); i++) {
        double d = fabs(comp(got, i) - comp(ref, i));
        if (!(d <= rtol * scale)) {
            snprintf(err, size, "component %lld: %.17g vs the cpu's %.17g (allowed %.3g)", (long long)i, comp(got, i),
                     comp(ref, i), rtol * scale);
            return 0;
        }
    }
    return 1;
}

static int close_phase(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
                       size_t size)
{
    (void)out;
    const double rtol = c->dtype == LOOM_DTYPE_C128 ? 1e-9 : 1e-4;
    const int64_t C = ref->shape[ref->ndim - 1], nv = C ? loom_numel(ref) / C : 0;
    for (int64_t v = 0; v < nv; v++) {
        double pr = 0, pi = 0;
        for (int64_t k = 0; k < C; k++) {
            int64_t i = 2 * (v * C + k);
            pr += comp(ref, i) * comp(got, i) + comp(ref, i + 1) * comp(got, i + 1);
            pi += comp(ref, i + 1) * comp(got, i) - comp(ref, i) * comp(got, i + 1);
        }
        double mod = hypot(pr, pi);
        pr = mod > 0 ? pr / mod : 1, pi = mod > 0 ? pi / mod : 0;
        for (int64_t k = 0; k < C; k++) {
            int64_t i = 2 * (v * C + k);
            double rr = comp(got, i) * pr - comp(got, i + 1) * pi, ri = comp(got, i) * pi + comp(got, i + 1) * pr;
            if (!(fmax(fabs(rr - comp(ref, i)), fabs(ri - comp(ref, i + 1))) <= rtol)) {
                snprintf(err, size, "eigenvector %lld element %lld differs after the phase", (long long)v,
                         (long long)k);
                return 0;
            }
        }
    }
    return 1;
}

static void custom(cf_case *c, cf_check_fn fn)
{
    c->n_out = 1;
    c->tol[0] = (cf_tol){ CF_CUSTOM, 0, 0 };
    c->check = fn;
}

/* spectrum (..., C, F, T) and a mask (..., F, T) */
static void spectrum(cf_case *c, const bf_shape *s, loom_tensor **x, loom_tensor **m, uint64_t stream)
{
    int64_t shape[5];
    const int64_t xt[3] = { s->C, s->F, s->T }, mt[2] = { s->F, s->T };
    int32_t nd = with_batch(s, 3, xt, shape);
    *x = cuniform(c, nd, shape, stream);
    nd = with_batch(s, 2, mt, shape);
    *m = cf_uniform(c, real_of(c->dtype), nd, shape, stream + 1, 0, 1);
}

/* psd_s, psd_n of a spectrum (frames >= channels + 2, so both are invertible) */
static void psds(cf_case *c, const bf_shape *s0, loom_tensor **x, loom_tensor **ps, loom_tensor **pn)
{
    bf_shape s = *s0;
    if (s.T < s.C + 2)
        s.T = s.C + 2;
    loom_tensor *m, *o[1];
    spectrum(c, &s, x, &m, 10);
    cf_cpu_run(c, "audio.psd", (const loom_tensor *[]){ *x, m }, 2, NULL, o, 1);
    *ps = o[0];
    cf_cpu_run(c, "audio.psd", (const loom_tensor *[]){ *x, NULL }, 2, NULL, o, 1);
    *pn = o[0];
}

static int shape_of(cf_case *c, const bf_shape **s)
{
    if (c->index >= N_SHAPES)
        return 0;
    *s = &shapes[c->index];
    return 1;
}

static int gen_psd(cf_case *c)
{
    const bf_shape *s;
    if (!shape_of(c, &s))
        return 0;
    loom_tensor *x, *m;
    spectrum(c, s, &x, &m, 1);
    c->in[0] = x, c->in[1] = c->index == 3 ? NULL : m, c->n_in = 2;
    cf_what(c, "C %lld F %lld T %lld%s", (long long)s->C, (long long)s->F, (long long)s->T,
            c->index == 3 ? ", no mask" : "");
    if (c->index == 2)
        cf_attrs(c, "normalize=false");
    custom(c, close_norm);
    return 1;
}

static int gen_souden(cf_case *c)
{
    const bf_shape *s;
    if (!shape_of(c, &s))
        return 0;
    loom_tensor *x, *ps, *pn;
    psds(c, s, &x, &ps, &pn);
    c->in[0] = ps, c->in[1] = pn, c->in[2] = NULL, c->n_in = 3;
    cf_attrs(c, "reference_channel=%lld%s", (long long)(s->C - 1), c->index == 1 ? ";diagonal_loading=false" : "");
    cf_what(c, "C %lld F %lld, reference %lld", (long long)s->C, (long long)s->F, (long long)(s->C - 1));
    custom(c, close_norm);
    return 1;
}

static int gen_rtf_power(cf_case *c)
{
    const bf_shape *s;
    if (!shape_of(c, &s))
        return 0;
    loom_tensor *x, *ps, *pn;
    psds(c, s, &x, &ps, &pn);
    c->in[0] = ps, c->in[1] = pn, c->in[2] = NULL, c->n_in = 3;
    cf_attrs(c, "reference_channel=0;n_iter=%d", 1 + c->index);
    cf_what(c, "C %lld F %lld, n_iter %d", (long long)s->C, (long long)s->F, 1 + c->index);
    custom(c, close_norm);
    return 1;
}

static int gen_rtf_weights(cf_case *c)
{
    const bf_shape *s;
    if (!shape_of(c, &s))
        return 0;
    loom_tensor *x, *ps, *pn;
    psds(c, s, &x, &ps, &pn);
    int64_t shape[4];
    const int64_t vt[2] = { s->F, s->C };
    int32_t nd = with_batch(s, 2, vt, shape);
    c->in[0] = cuniform(c, nd, shape, 20), c->in[1] = pn, c->in[2] = NULL, c->n_in = 3;
    if (c->index % 2 == 0)
        cf_attrs(c, "reference_channel=0");
    cf_what(c, "C %lld F %lld%s", (long long)s->C, (long long)s->F, c->index % 2 == 0 ? ", reference 0" : "");
    custom(c, close_norm);
    return 1;
}

static int gen_rtf_evd(cf_case *c)
{
    const bf_shape *s;
    if (!shape_of(c, &s))
        return 0;
    loom_tensor *x, *ps, *pn;
    psds(c, s, &x, &ps, &pn);
    c->in[0] = ps, c->n_in = 1;
    cf_what(c, "C %lld F %lld", (long long)s->C, (long long)s->F);
    custom(c, close_phase);
    return 1;
}

static int gen_apply(cf_case *c)
{
    const bf_shape *s;
    if (!shape_of(c, &s))
        return 0;
    loom_tensor *x, *m;
    spectrum(c, s, &x, &m, 1);
    int64_t shape[4];
    const int64_t wt[2] = { s->F, s->C };
    int32_t nd = with_batch(s, 2, wt, shape);
    c->in[0] = cuniform(c, nd, shape, 30), c->in[1] = x, c->n_in = 2;
    cf_what(c, "C %lld F %lld T %lld", (long long)s->C, (long long)s->F, (long long)s->T);
    custom(c, close_norm);
    return 1;
}

static void object(cf_case *c, const char *cls, const char *attrs)
{
    loom_attrs *a = NULL;
    if (loom_attrs_new(&a) != LOOM_OK)
        cf_die("%s: attrs_new", c->op);
    if (attrs != NULL) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", attrs);
        for (char *sv = NULL, *kv = strtok_r(buf, ";", &sv); kv != NULL; kv = strtok_r(NULL, ";", &sv)) {
            char *eq = strchr(kv, '=');
            *eq = 0;
            if (loom_attrs_parse(a, cls, kv, eq + 1) != LOOM_OK)
                cf_die("%s: %s", c->op, loom_last_error());
        }
    }
    if (loom_object_create(&c->object, cls, a, NULL) != LOOM_OK)
        cf_die("%s: creating a %s: %s", c->op, cls, loom_last_error());
    loom_attrs_free(a);
}

static int gen_psd_object(cf_case *c)
{
    const bf_shape *s;
    if (c->index > 1 || !shape_of(c, &s))
        return 0;
    loom_tensor *x, *m;
    spectrum(c, s, &x, &m, 1);
    object(c, "audio.PSD", NULL);
    c->in[0] = x, c->in[1] = m, c->n_in = 2;
    cf_what(c, "C %lld F %lld T %lld", (long long)s->C, (long long)s->F, (long long)s->T);
    custom(c, close_norm);
    return 1;
}

static int gen_weights_object(cf_case *c, int rtf_based)
{
    const bf_shape *s;
    if (c->index > 1 || !shape_of(c, &s))
        return 0;
    loom_tensor *x, *ps, *pn;
    psds(c, s, &x, &ps, &pn);
    object(c, rtf_based ? "audio.RTFMVDR" : "audio.SoudenMVDR", NULL);
    loom_tensor *v = ps;
    if (rtf_based) {
        int64_t shape[4];
        const int64_t vt[2] = { s->F, s->C };
        int32_t nd = with_batch(s, 2, vt, shape);
        v = cuniform(c, nd, shape, 20);
    }
    c->in[0] = x, c->in[1] = v, c->in[2] = pn, c->in[3] = NULL, c->n_in = 4;
    cf_attrs(c, "reference_channel=0");
    cf_what(c, "C %lld F %lld", (long long)s->C, (long long)s->F);
    custom(c, close_norm);
    return 1;
}

static int gen_souden_object(cf_case *c) { return gen_weights_object(c, 0); }
static int gen_rtf_object(cf_case *c) { return gen_weights_object(c, 1); }

static int gen_mvdr(cf_case *c)
{
    static const char *const sol[] = { "ref_channel", "stv_evd", "stv_power" };
    if (c->index > 2)
        return 0;
    const bf_shape *s = &shapes[1];
    loom_tensor *x, *m;
    spectrum(c, s, &x, &m, 1);
    char attrs[64];
    snprintf(attrs, sizeof attrs, "solution=%s", sol[c->index]);
    object(c, "audio.MVDR", attrs);
    c->in[0] = x, c->in[1] = m, c->in[2] = NULL, c->n_in = 3;
    cf_what(c, "%s, C %lld F %lld T %lld", sol[c->index], (long long)s->C, (long long)s->F, (long long)s->T);
    custom(c, close_norm);
    return 1;
}

const cf_gen cf_audio_beamform_gens[] = {
    { "audio.psd", COMPLEX, N_SHAPES, gen_psd, NULL },
    { "audio.mvdr_weights_souden", COMPLEX, N_SHAPES, gen_souden, NULL },
    { "audio.mvdr_weights_rtf", COMPLEX, N_SHAPES, gen_rtf_weights, NULL },
    { "audio.rtf_evd", COMPLEX, N_SHAPES, gen_rtf_evd, NULL },
    { "audio.rtf_power", COMPLEX, 3, gen_rtf_power, NULL },
    { "audio.apply_beamforming", COMPLEX, N_SHAPES, gen_apply, NULL },
    { "audio.PSD", COMPLEX, 2, gen_psd_object, NULL },
    { "audio.SoudenMVDR", COMPLEX, 2, gen_souden_object, NULL },
    { "audio.RTFMVDR", COMPLEX, 2, gen_rtf_object, NULL },
    { "audio.MVDR", COMPLEX, 3, gen_mvdr, NULL },
};
const size_t cf_audio_beamform_n_gens = sizeof cf_audio_beamform_gens / sizeof cf_audio_beamform_gens[0];
