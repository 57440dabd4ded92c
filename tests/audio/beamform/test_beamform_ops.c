/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_beamform_ops.c - the beamforming functions against torchaudio
** (tools/gen_audio_beamform_goldens.py) in complex64 and complex128:
** psd with and without a (normalised) mask, Souden weights with an index,
** without loading and with reference weights, rtf_evd up to a unit phase
** per bin, rtf_power with 1, 2 and 3 iterations, RTF weights with an
** index, none and weights, apply_beamforming; and psd on 530 frames (a
** block boundary of the cpu loop) with 5 channels (an odd pair count);
** rtf_power and its weights with 16 and 17 channels.
** Run with LOOM_CPU_MAX_ISA=scalar too (the portable loops).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bf_test.h"

static const char *const SFX[] = { "c64", "c128" };

typedef struct inputs {
    loom_tensor *x, *mask, *ps, *pn, *u;
    double rtol;
} inputs;

static inputs load(const char *sfx)
{
    inputs in = {
        .x = bf_golden("specgram", sfx), .mask = bf_golden("mask", bf_rname(sfx)),
        .ps = bf_golden("psd_s", sfx), .pn = bf_golden("psd_n", sfx), .u = bf_golden("ref_u", bf_rname(sfx)),
    };
    in.rtol = bf_rtol(loom_tensor_dtype_of(in.x));
    return in;
}

static void drop(inputs *in)
{
    loom_tensor_free(in->x);
    loom_tensor_free(in->mask);
    loom_tensor_free(in->ps);
    loom_tensor_free(in->pn);
    loom_tensor_free(in->u);
}

static void check(loom_tensor *got, const char *stem, const char *sfx, double rtol)
{
    char what[128];
    snprintf(what, sizeof what, "%s_%s", stem, sfx);
    loom_tensor *want = bf_golden(stem, sfx);
    bf_assert_close(got, want, rtol, what);
    loom_tensor_free(want);
    loom_tensor_free(got);
}

static void test_psd(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        check(bf_run("audio.psd", (const loom_tensor *[]){ in.x, in.mask }, 2, NULL, "cpu", NULL), "psd_norm",
              SFX[k], in.rtol);
        check(bf_run("audio.psd", (const loom_tensor *[]){ in.x, in.mask }, 2, "normalize=false", "cpu", NULL),
              "psd_raw", SFX[k], in.rtol);
        check(bf_run("audio.psd", (const loom_tensor *[]){ in.x, NULL }, 2, NULL, "cpu", NULL), "psd_none", SFX[k],
              in.rtol);
        /* the PSD inputs of the other goldens are psd() outputs too */
        loom_tensor *m1;
        assert_int_equal(loom_tensor_new(&m1, loom_tensor_dtype_of(in.mask), in.mask->ndim, in.mask->shape, NULL),
                         LOOM_OK);
        for (int64_t i = 0; i < loom_numel(m1); i++) {
            if (k == 0)
                ((float *)loom_data(m1))[i] = 1.0f - ((const float *)loom_data(in.mask))[i];
            else
                ((double *)loom_data(m1))[i] = 1.0 - ((const double *)loom_data(in.mask))[i];
        }
        check(bf_run("audio.psd", (const loom_tensor *[]){ in.x, m1 }, 2, NULL, "cpu", NULL), "psd_n", SFX[k],
              in.rtol);
        loom_tensor_free(m1);
        drop(&in);
    }
    loom_tensor *lx = bf_golden("long_spec", "c64"), *lm = bf_golden("long_mask", "f32");
    check(bf_run("audio.psd", (const loom_tensor *[]){ lx, lm }, 2, NULL, "cpu", NULL), "long_psd", "c64", 1e-5);
    loom_tensor_free(lx);
    loom_tensor_free(lm);
}

static void test_souden(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        const loom_tensor *two[] = { in.ps, in.pn, NULL };
        check(bf_run("audio.mvdr_weights_souden", two, 3, "reference_channel=1", "cpu", NULL), "souden_ref1", SFX[k],
              in.rtol);
        check(bf_run("audio.mvdr_weights_souden", two, 3, "reference_channel=1;diagonal_loading=false", "cpu", NULL),
              "souden_noload", SFX[k], in.rtol);
        check(bf_run("audio.mvdr_weights_souden", (const loom_tensor *[]){ in.ps, in.pn, in.u }, 3, NULL, "cpu", NULL),
              "souden_u", SFX[k], in.rtol);
        drop(&in);
    }
}

static void test_rtf_evd(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        loom_tensor *got = bf_run("audio.rtf_evd", (const loom_tensor *[]){ in.ps }, 1, NULL, "cpu", NULL);
        loom_tensor *want = bf_golden("rtf_evd", SFX[k]);
        bf_assert_close_phase(got, want, in.rtol, "rtf_evd");
        loom_tensor_free(got);
        loom_tensor_free(want);
        drop(&in);
    }
}

static void test_rtf_power(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        const loom_tensor *two[] = { in.ps, in.pn, NULL };
        check(bf_run("audio.rtf_power", two, 3, "reference_channel=0", "cpu", NULL), "rtf_power_n3", SFX[k], in.rtol);
        check(bf_run("audio.rtf_power", two, 3, "reference_channel=0;n_iter=1", "cpu", NULL), "rtf_power_n1", SFX[k],
              in.rtol);
        check(bf_run("audio.rtf_power", (const loom_tensor *[]){ in.ps, in.pn, in.u }, 3, "n_iter=2", "cpu", NULL),
              "rtf_power_u2", SFX[k], in.rtol);
        drop(&in);
    }
}

static void test_rtf_weights(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        loom_tensor *rtf = bf_golden("rtf_power_n3", SFX[k]);
        const loom_tensor *two[] = { rtf, in.pn, NULL };
        check(bf_run("audio.mvdr_weights_rtf", two, 3, "reference_channel=0", "cpu", NULL), "rtfw_ref", SFX[k],
              in.rtol);
        check(bf_run("audio.mvdr_weights_rtf", two, 3, NULL, "cpu", NULL), "rtfw_none", SFX[k], in.rtol);
        check(bf_run("audio.mvdr_weights_rtf", (const loom_tensor *[]){ rtf, in.pn, in.u }, 3, NULL, "cpu", NULL),
              "rtfw_u", SFX[k], in.rtol);
        loom_tensor_free(rtf);
        drop(&in);
    }
}

/* 16 channels, the widest matrices of the lane-batched solves, and 17,
** the narrowest that LAPACK solves (beamform_lub.h): both paths agree with
** torchaudio to the same tolerance */
static void test_rtf_wide(void **state)
{
    (void)state;
    for (int nch = 16; nch <= 17; nch++)
        for (int k = 0; k < 2; k++) {
            char stem[64];
            snprintf(stem, sizeof stem, "wide%d_psd_s", nch);
            loom_tensor *ps = bf_golden(stem, SFX[k]);
            snprintf(stem, sizeof stem, "wide%d_psd_n", nch);
            loom_tensor *pn = bf_golden(stem, SFX[k]);
            snprintf(stem, sizeof stem, "wide%d_rtf_power", nch);
            loom_tensor *rtf = bf_golden(stem, SFX[k]);
            double rtol = bf_rtol(loom_tensor_dtype_of(ps));
            check(bf_run("audio.rtf_power", (const loom_tensor *[]){ ps, pn, NULL }, 3, "reference_channel=3", "cpu",
                         NULL),
                  stem, SFX[k], rtol);
            snprintf(stem, sizeof stem, "wide%d_rtfw", nch);
            check(bf_run("audio.mvdr_weights_rtf", (const loom_tensor *[]){ rtf, pn, NULL }, 3, "reference_channel=3",
                         "cpu", NULL),
                  stem, SFX[k], rtol);
            loom_tensor_free(ps);
            loom_tensor_free(pn);
            loom_tensor_free(rtf);
        }
}

static void test_apply(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        loom_tensor *w = bf_golden("souden_ref1", SFX[k]);
        check(bf_run("audio.apply_beamforming", (const loom_tensor *[]){ w, in.x }, 2, NULL, "cpu", NULL), "apply",
              SFX[k], in.rtol);
        loom_tensor_free(w);
        drop(&in);
    }
}

/* the weights' phase follows the eigenvectors' unless a reference fixes
** it: rtf_evd's output through mvdr_weights_rtf with a reference agrees
** with torchaudio's exactly (to rounding), whatever phase each solver chose */
static void test_rtf_evd_weights(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        inputs in = load(SFX[k]);
        loom_tensor *ours = bf_run("audio.rtf_evd", (const loom_tensor *[]){ in.ps }, 1, NULL, "cpu", NULL);
        loom_tensor *theirs = bf_golden("rtf_evd", SFX[k]);
        loom_tensor *a = bf_run("audio.mvdr_weights_rtf", (const loom_tensor *[]){ ours, in.pn, NULL }, 3,
                                "reference_channel=1", "cpu", NULL);
        loom_tensor *b = bf_run("audio.mvdr_weights_rtf", (const loom_tensor *[]){ theirs, in.pn, NULL }, 3,
                                "reference_channel=1", "cpu", NULL);
        bf_assert_close(a, b, in.rtol, "referenced weights of rtf_evd");
        loom_tensor_free(a);
        loom_tensor_free(b);
        loom_tensor_free(ours);
        loom_tensor_free(theirs);
        drop(&in);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psd),        cmocka_unit_test(test_souden),     cmocka_unit_test(test_rtf_evd),
        cmocka_unit_test(test_rtf_power),  cmocka_unit_test(test_rtf_weights), cmocka_unit_test(test_apply),
        cmocka_unit_test(test_rtf_evd_weights), cmocka_unit_test(test_rtf_wide),
    };
    return cmocka_run_group_tests_name("audio-beamform-ops", tests, tu_setup, tu_teardown);
}
