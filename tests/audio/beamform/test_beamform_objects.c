/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_beamform_objects.c - torchaudio's multi-channel modules as loom
** objects against torchaudio (tools/gen_audio_beamform_goldens.py):
** audio.PSD (one mask, and multi_mask), audio.SoudenMVDR, audio.RTFMVDR,
** the mask-based audio.MVDR with each solution (complex128 inside: its
** complex64 output is held to 1e-5), with mask_n left out, with multi_mask,
** and the online MVDR over 20 chunks of one stream, each chunk's output
** compared in order (the recursive PSD update of every solution).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bf_test.h"

static const char *const SFX[] = { "c64", "c128" };
static const char *const SOLUTIONS[] = { "ref_channel", "stv_evd", "stv_power" };

static void check(loom_tensor *got, const char *stem, const char *sfx, double rtol)
{
    char what[128];
    snprintf(what, sizeof what, "%s_%s", stem, sfx);
    loom_tensor *want = bf_golden(stem, sfx);
    bf_assert_close(got, want, rtol, what);
    loom_tensor_free(want);
    loom_tensor_free(got);
}

static loom_tensor *one_minus(const loom_tensor *m)
{
    loom_tensor *r;
    assert_int_equal(loom_tensor_new(&r, loom_tensor_dtype_of(m), m->ndim, m->shape, NULL), LOOM_OK);
    for (int64_t i = 0; i < loom_numel(m); i++) {
        if (loom_tensor_dtype_of(m) == LOOM_DTYPE_F32)
            ((float *)loom_data(r))[i] = 1.0f - ((const float *)loom_data(m))[i];
        else
            ((double *)loom_data(r))[i] = 1.0 - ((const double *)loom_data(m))[i];
    }
    return r;
}

static void test_psd_object(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        loom_tensor *x = bf_golden("specgram", SFX[k]), *m = bf_golden("mask", bf_rname(SFX[k]));
        loom_tensor *ms = bf_golden("masks", bf_rname(SFX[k]));
        double rtol = bf_rtol(loom_tensor_dtype_of(x));
        loom_object *o = bf_object("audio.PSD", NULL);
        check(bf_run("audio.PSD", (const loom_tensor *[]){ x, m }, 2, NULL, NULL, o), "psdobj", SFX[k], rtol);
        loom_object_free(o);
        o = bf_object("audio.PSD", "multi_mask=true");
        check(bf_run("audio.PSD", (const loom_tensor *[]){ x, ms }, 2, NULL, NULL, o), "psdobj_multi", SFX[k], rtol);
        loom_object_free(o);
        loom_tensor_free(x);
        loom_tensor_free(m);
        loom_tensor_free(ms);
    }
}

static void test_souden_rtf_objects(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        loom_tensor *x = bf_golden("specgram", SFX[k]), *ps = bf_golden("psd_s", SFX[k]);
        loom_tensor *pn = bf_golden("psd_n", SFX[k]), *rtf = bf_golden("rtf_power_n3", SFX[k]);
        double rtol = bf_rtol(loom_tensor_dtype_of(x));
        loom_object *o = bf_object("audio.SoudenMVDR", NULL);
        check(bf_run("audio.SoudenMVDR", (const loom_tensor *[]){ x, ps, pn, NULL }, 4, "reference_channel=2", NULL, o),
              "soudenmvdr", SFX[k], rtol);
        loom_object_free(o);
        o = bf_object("audio.RTFMVDR", NULL);
        check(bf_run("audio.RTFMVDR", (const loom_tensor *[]){ x, rtf, pn, NULL }, 4, "reference_channel=2", NULL, o),
              "rtfmvdr", SFX[k], rtol);
        loom_object_free(o);
        loom_tensor_free(x);
        loom_tensor_free(ps);
        loom_tensor_free(pn);
        loom_tensor_free(rtf);
    }
}

static void test_mvdr(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        loom_tensor *x = bf_golden("specgram", SFX[k]), *m = bf_golden("mask", bf_rname(SFX[k]));
        loom_tensor *ms = bf_golden("masks", bf_rname(SFX[k]));
        loom_tensor *mn = one_minus(m), *msn = one_minus(ms);
        double rtol = bf_rtol(loom_tensor_dtype_of(x));
        for (int s = 0; s < 3; s++) {
            char attrs[64], stem[64];
            snprintf(attrs, sizeof attrs, "solution=%s", SOLUTIONS[s]);
            snprintf(stem, sizeof stem, "mvdr_%s", SOLUTIONS[s]);
            loom_object *o = bf_object("audio.MVDR", attrs);
            check(bf_run("audio.MVDR", (const loom_tensor *[]){ x, m, mn }, 3, NULL, NULL, o), stem, SFX[k], rtol);
            loom_object_free(o);
        }
        loom_object *o = bf_object("audio.MVDR", NULL);
        check(bf_run("audio.MVDR", (const loom_tensor *[]){ x, m, NULL }, 3, NULL, NULL, o), "mvdr_default_n", SFX[k],
              rtol);
        loom_object_free(o);
        o = bf_object("audio.MVDR", "multi_mask=true;solution=stv_power;ref_channel=1");
        check(bf_run("audio.MVDR", (const loom_tensor *[]){ x, ms, msn }, 3, NULL, NULL, o), "mvdr_multi", SFX[k],
              rtol);
        loom_object_free(o);
        loom_tensor_free(x);
        loom_tensor_free(m);
        loom_tensor_free(ms);
        loom_tensor_free(mn);
        loom_tensor_free(msn);
    }
}

/* chunk i of a stacked (N, ...) tensor, as a view */
static loom_tensor *chunk(const loom_tensor *t, int64_t i)
{
    loom_tensor *v;
    const size_t es = loom_dtype_size(loom_tensor_dtype_of(t));
    const int64_t per = loom_numel(t) / t->shape[0];
    assert_int_equal(loom_tensor_wrap(&v, (char *)loom_data(t) + (size_t)(i * per) * es, loom_tensor_dtype_of(t),
                                      t->ndim - 1, t->shape + 1, NULL, NULL),
                     LOOM_OK);
    return v;
}

static void test_mvdr_online(void **state)
{
    (void)state;
    loom_tensor *xs = bf_golden("online_spec", "c64"), *ms = bf_golden("online_mask", "f32");
    for (int s = 0; s < 3; s++) {
        char attrs[64], stem[64];
        snprintf(attrs, sizeof attrs, "solution=%s;online=true", SOLUTIONS[s]);
        snprintf(stem, sizeof stem, "online_%s", SOLUTIONS[s]);
        loom_tensor *want = bf_golden(stem, "c64");
        loom_object *o = bf_object("audio.MVDR", attrs);
        for (int64_t i = 0; i < xs->shape[0]; i++) {
            loom_tensor *x = chunk(xs, i), *m = chunk(ms, i), *mn = one_minus(m), *w = chunk(want, i);
            loom_tensor *got = bf_run("audio.MVDR", (const loom_tensor *[]){ x, m, mn }, 3, NULL, NULL, o);
            char what[96];
            snprintf(what, sizeof what, "%s chunk %lld", stem, (long long)i);
            bf_assert_close(got, w, 1e-5, what);
            loom_tensor_free(got);
            loom_tensor_free(x);
            loom_tensor_free(m);
            loom_tensor_free(mn);
            loom_tensor_free(w);
        }
        loom_object_free(o);
        loom_tensor_free(want);
    }
    loom_tensor_free(xs);
    loom_tensor_free(ms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psd_object),
        cmocka_unit_test(test_souden_rtf_objects),
        cmocka_unit_test(test_mvdr),
        cmocka_unit_test(test_mvdr_online),
    };
    return cmocka_run_group_tests_name("audio-beamform-objects", tests, tu_setup, tu_teardown);
}
