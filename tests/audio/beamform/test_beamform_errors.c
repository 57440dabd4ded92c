/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_beamform_errors.c - what the beamforming ops and objects refuse,
** each with a message naming the argument (torchaudio raises ValueError or
** TypeError for the same inputs unless a case says otherwise), and inputs
** without elements (no frames, no bins, a batch of 0), which give
** torchaudio's shapes and, where a sum runs over nothing, zeros.
**
** Refusals: bad ranks and shapes of every input, non-square PSDs, PSDs of
** two shapes, wrong dtypes (real spectra, a mask of the other precision,
** PSDs of two dtypes), the reference channel given twice, missing or out of
** range, n_iter 0, an unknown MVDR solution, a non-Hermitian PSD (loom's
** own check: torchaudio would solve with it) and a singular noise PSD
** without diagonal loading (torch.linalg.solve raises too).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bf_test.h"
#include "op_cases.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define T OC_T
#define TV OC_TV

static const double ref3[3] = { 0, 1, 0 };

static const oc_case cases[] = {
    /* ---------------------------------------------------------- psd */
    { "audio.psd", "specgram 2-D", { T(C64, 2, 3, 5) }, NULL, { { 0 } }, LOOM_EINVAL, "'specgram'" },
    { "audio.psd", "real specgram", { T(F32, 3, 3, 5, 7) }, NULL, { { 0 } }, LOOM_EINVAL, "specgram" },
    { "audio.psd", "mask of the wrong shape", { T(C64, 3, 3, 5, 7), T(F32, 2, 5, 6) }, NULL, { { 0 } }, LOOM_EINVAL,
      "'mask'" },
    { "audio.psd", "mask with the channel dim", { T(C64, 3, 3, 5, 7), T(F32, 3, 3, 5, 7) }, NULL, { { 0 } },
      LOOM_EINVAL, "'mask'" },
    { "audio.psd", "f64 mask for c64", { T(C64, 3, 3, 5, 7), T(F64, 2, 5, 7) }, NULL, { { 0 } }, LOOM_EINVAL,
      "'mask'" },
    { "audio.psd", "no bins", { T(C64, 3, 3, 0, 7), T(F32, 2, 0, 7) }, NULL, { T(C64, 3, 0, 3, 3) } },
    { "audio.psd", "no frames: zeros", { T(C128, 4, 2, 3, 4, 0), T(F64, 3, 2, 4, 0) }, NULL, { T(C128, 4, 2, 4, 3, 3) },
      .zeros = 1 },
    { "audio.psd", "batch of 0", { T(C64, 4, 0, 3, 4, 5), { 0 } }, NULL, { T(C64, 4, 0, 4, 3, 3) } },
    /* ------------------------------------------------------ souden */
    { "audio.mvdr_weights_souden", "psd_s 2-D", { T(C64, 2, 3, 3), T(C64, 2, 3, 3) }, "reference_channel=0",
      { { 0 } }, LOOM_EINVAL, "'psd_s'" },
    { "audio.mvdr_weights_souden", "psd_s not square", { T(C64, 3, 5, 3, 2), T(C64, 3, 5, 3, 2) },
      "reference_channel=0", { { 0 } }, LOOM_EINVAL, "'psd_s'" },
    { "audio.mvdr_weights_souden", "psd_n of another shape", { T(C64, 3, 5, 3, 3), T(C64, 3, 4, 3, 3) },
      "reference_channel=0", { { 0 } }, LOOM_EINVAL, "'psd_n'" },
    { "audio.mvdr_weights_souden", "psd_n of another dtype", { T(C64, 3, 5, 3, 3), T(C128, 3, 5, 3, 3) },
      "reference_channel=0", { { 0 } }, LOOM_EINVAL, "psd_n" },
    { "audio.mvdr_weights_souden", "real psd_s", { T(F32, 3, 5, 3, 3), T(F32, 3, 5, 3, 3) }, "reference_channel=0",
      { { 0 } }, LOOM_EINVAL, "psd_s" },
    { "audio.mvdr_weights_souden", "no reference", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3) }, NULL, { { 0 } },
      LOOM_EINVAL, "'reference_channel' is required" },
    { "audio.mvdr_weights_souden", "reference out of range", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3) },
      "reference_channel=3", { { 0 } }, LOOM_EINVAL, "'reference_channel' 3" },
    { "audio.mvdr_weights_souden", "reference twice", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3), TV(F32, ref3, 1, 3) },
      "reference_channel=1", { { 0 } }, LOOM_EINVAL, "given twice" },
    { "audio.mvdr_weights_souden", "reference tensor of the wrong length",
      { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3), T(F32, 1, 4) }, NULL, { { 0 } }, LOOM_EINVAL, "'reference_channel'" },
    { "audio.mvdr_weights_souden", "singular psd_n without loading", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3) },
      "reference_channel=0;diagonal_loading=false", { { 0 } }, LOOM_EINVAL, "'psd_n' is singular" },
    { "audio.mvdr_weights_souden", "no bins", { T(C128, 3, 0, 3, 3), T(C128, 3, 0, 3, 3) }, "reference_channel=0",
      { T(C128, 2, 0, 3) } },
    /* --------------------------------------------------- rtf weights */
    { "audio.mvdr_weights_rtf", "rtf of the wrong shape", { T(C64, 2, 5, 4), T(C64, 3, 5, 3, 3) }, NULL, { { 0 } },
      LOOM_EINVAL, "'rtf'" },
    { "audio.mvdr_weights_rtf", "psd_n 2-D", { T(C64, 1, 3), T(C64, 2, 3, 3) }, NULL, { { 0 } }, LOOM_EINVAL,
      "'psd_n'" },
    { "audio.mvdr_weights_rtf", "singular psd_n without loading", { T(C128, 2, 5, 3), T(C128, 3, 5, 3, 3) },
      "diagonal_loading=false", { { 0 } }, LOOM_EINVAL, "'psd_n' is singular" },
    { "audio.mvdr_weights_rtf", "no bins", { T(C64, 2, 0, 3), T(C64, 3, 0, 3, 3) }, NULL, { T(C64, 2, 0, 3) } },
    /* ------------------------------------------------------- rtf_evd */
    { "audio.rtf_evd", "psd_s not square", { T(C64, 3, 5, 3, 4) }, NULL, { { 0 } }, LOOM_EINVAL, "'psd_s'" },
    { "audio.rtf_evd", "real psd_s", { T(F64, 3, 5, 3, 3) }, NULL, { { 0 } }, LOOM_EINVAL, "psd_s" },
    { "audio.rtf_evd", "no bins", { T(C128, 4, 2, 0, 3, 3) }, NULL, { T(C128, 3, 2, 0, 3) } },
    /* ----------------------------------------------------- rtf_power */
    { "audio.rtf_power", "n_iter 0", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3) }, "reference_channel=0;n_iter=0",
      { { 0 } }, LOOM_EINVAL, "n_iter" },
    { "audio.rtf_power", "no reference", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3) }, NULL, { { 0 } }, LOOM_EINVAL,
      "'reference_channel'" },
    { "audio.rtf_power", "singular psd_n without loading", { T(C64, 3, 5, 3, 3), T(C64, 3, 5, 3, 3) },
      "reference_channel=0;diagonal_loading=false", { { 0 } }, LOOM_EINVAL, "'psd_n' is singular" },
    { "audio.rtf_power", "no bins", { T(C64, 3, 0, 2, 2), T(C64, 3, 0, 2, 2) }, "reference_channel=1",
      { T(C64, 2, 0, 2) } },
    /* --------------------------------------------- apply_beamforming */
    { "audio.apply_beamforming", "weights of the wrong shape", { T(C64, 2, 5, 2), T(C64, 3, 3, 5, 7) }, NULL,
      { { 0 } }, LOOM_EINVAL, "'beamform_weights'" },
    { "audio.apply_beamforming", "batch differs", { T(C64, 3, 2, 5, 3), T(C64, 4, 3, 3, 5, 7) }, NULL, { { 0 } },
      LOOM_EINVAL, "'beamform_weights'" },
    { "audio.apply_beamforming", "specgram 2-D", { T(C64, 1, 3), T(C64, 2, 3, 7) }, NULL, { { 0 } }, LOOM_EINVAL,
      "'specgram'" },
    { "audio.apply_beamforming", "dtypes differ", { T(C128, 2, 5, 3), T(C64, 3, 3, 5, 7) }, NULL, { { 0 } },
      LOOM_EINVAL, "specgram" },
    { "audio.apply_beamforming", "no frames", { T(C64, 2, 5, 3), T(C64, 3, 3, 5, 0) }, NULL, { T(C64, 2, 5, 0) } },
    { "audio.apply_beamforming", "no channels: zeros", { T(C128, 2, 5, 0), T(C128, 3, 0, 5, 4) }, NULL,
      { T(C128, 2, 5, 4) }, .zeros = 1 },
    /* ----------------------------------------------------- objects */
    { "audio.PSD", "no frames: zeros", { T(C64, 3, 2, 3, 0), T(F32, 2, 3, 0) }, NULL, { T(C64, 3, 3, 2, 2) },
      .zeros = 1, .object = 1 },
    { "audio.PSD", "mask of the wrong shape", { T(C64, 3, 2, 3, 4), T(F32, 2, 3, 5) }, NULL, { { 0 } }, LOOM_EINVAL,
      "'mask'", .object = 1 },
    { "audio.SoudenMVDR", "no bins", { T(C64, 3, 3, 0, 4), T(C64, 3, 0, 3, 3), T(C64, 3, 0, 3, 3) },
      "reference_channel=0", { T(C64, 2, 0, 4) }, .object = 2 },
    { "audio.SoudenMVDR", "psd_n does not fit specgram", { T(C64, 3, 3, 5, 4), T(C64, 3, 5, 2, 2), T(C64, 3, 5, 2, 2) },
      "reference_channel=0", { { 0 } }, LOOM_EINVAL, "'psd_n'", .object = 2 },
    { "audio.RTFMVDR", "no bins", { T(C64, 3, 3, 0, 4), T(C64, 2, 0, 3), T(C64, 3, 0, 3, 3) }, "reference_channel=0",
      { T(C64, 2, 0, 4) }, .object = 3 },
    { "audio.RTFMVDR", "rtf of the wrong shape", { T(C64, 3, 3, 5, 4), T(C64, 2, 5, 2), T(C64, 3, 5, 3, 3) },
      "reference_channel=0", { { 0 } }, LOOM_EINVAL, "'rtf'", .object = 3 },
    { "audio.MVDR", "no bins", { T(C64, 3, 3, 0, 4), T(F32, 2, 0, 4) }, NULL, { T(C64, 2, 0, 4) }, .object = 4 },
    { "audio.MVDR", "mask_s of the wrong shape", { T(C64, 3, 3, 5, 4), T(F32, 2, 5, 3) }, NULL, { { 0 } },
      LOOM_EINVAL, "'mask_s'", .object = 4 },
    { "audio.MVDR", "ref_channel out of range", { T(C64, 3, 1, 5, 4), T(F32, 2, 5, 4) }, NULL, { { 0 } },
      LOOM_EINVAL, "'ref_channel'", .object = 5 },
};

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    oc_objects[0] = bf_object("audio.PSD", NULL);
    oc_objects[1] = bf_object("audio.SoudenMVDR", NULL);
    oc_objects[2] = bf_object("audio.RTFMVDR", NULL);
    oc_objects[3] = bf_object("audio.MVDR", NULL);
    oc_objects[4] = bf_object("audio.MVDR", "ref_channel=2");
    return 0;
}

static int teardown(void **state)
{
    for (int i = 0; i < 5; i++)
        loom_object_free(oc_objects[i]);
    return tu_teardown(state);
}

/* ------------------------------------------- errors that need values */

/* a (F=2, C=3, C) PSD: identity-like Hermitian matrices, then one entry
** broken at bin 1 when `broken` */
static loom_tensor *psd_values(loom_dtype dt, int broken)
{
    const int64_t shape[3] = { 2, 3, 3 };
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, dt, 3, shape, NULL), LOOM_OK);
    for (int64_t f = 0; f < 2; f++)
        for (int64_t r = 0; r < 3; r++)
            for (int64_t c = 0; c < 3; c++) {
                double re = r == c ? 2.0 : 0.25, im = r < c ? 0.5 : r > c ? -0.5 : 0;
                if (broken && f == 1 && r == 0 && c == 1)
                    im = 0.4;   /* (0,1) no longer the conjugate of (1,0) */
                int64_t i = 2 * ((f * 3 + r) * 3 + c);
                if (dt == LOOM_DTYPE_C128)
                    ((double *)loom_data(t))[i] = re, ((double *)loom_data(t))[i + 1] = im;
                else
                    ((float *)loom_data(t))[i] = (float)re, ((float *)loom_data(t))[i + 1] = (float)im;
            }
    return t;
}

static void expect_refusal(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs,
                           const char *needle)
{
    loom_tensor *out;
    loom_status st = bf_call(op, in, n, attrs, "cpu", NULL, &out);
    if (st != LOOM_EINVAL)
        fail_msg("%s: status %d, expected LOOM_EINVAL (%s)", op, (int)st, loom_last_error());
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: message '%s' lacks '%s'", op, loom_last_error(), needle);
}

static void test_non_hermitian(void **state)
{
    (void)state;
    for (int k = 0; k < 2; k++) {
        loom_dtype dt = k ? LOOM_DTYPE_C128 : LOOM_DTYPE_C64;
        loom_tensor *good = psd_values(dt, 0), *bad = psd_values(dt, 1), *out;
        expect_refusal("audio.mvdr_weights_souden", (const loom_tensor *[]){ good, bad, NULL }, 3, "reference_channel=0",
                       "'psd_n' is not Hermitian");
        expect_refusal("audio.mvdr_weights_souden", (const loom_tensor *[]){ bad, good, NULL }, 3, "reference_channel=0",
                       "'psd_s' is not Hermitian");
        expect_refusal("audio.rtf_evd", (const loom_tensor *[]){ bad }, 1, NULL, "'psd_s' is not Hermitian");
        expect_refusal("audio.rtf_power", (const loom_tensor *[]){ good, bad, NULL }, 3, "reference_channel=0",
                       "'psd_n' is not Hermitian");
        /* the good ones pass: the check is no obstacle to a PSD */
        out = bf_run("audio.mvdr_weights_souden", (const loom_tensor *[]){ good, good, NULL }, 3, "reference_channel=0",
                     "cpu", NULL);
        loom_tensor_free(out);
        loom_tensor_free(good);
        loom_tensor_free(bad);
    }
}

static void test_bad_solution(void **state)
{
    (void)state;
    loom_attrs *a;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "solution", "stv_eigen"), LOOM_OK);
    assert_int_equal(loom_object_create(&o, "audio.MVDR", a, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "solution"));
    loom_attrs_free(a);
}

/* a later online call must have the shapes of the first */
static void test_online_shape_change(void **state)
{
    (void)state;
    loom_object *o = bf_object("audio.MVDR", "online=true");
    const int64_t xs[3] = { 2, 3, 4 }, ms[2] = { 3, 4 }, xs2[3] = { 2, 5, 4 }, ms2[2] = { 5, 4 };
    loom_tensor *x, *m, *x2, *m2, *out;
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_C64, 3, xs, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&m, LOOM_DTYPE_F32, 2, ms, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&x2, LOOM_DTYPE_C64, 3, xs2, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&m2, LOOM_DTYPE_F32, 2, ms2, NULL), LOOM_OK);
    for (int64_t i = 0; i < 2 * loom_numel(x); i++)
        ((float *)loom_data(x))[i] = (float)((i * 7919) % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < loom_numel(m); i++)
        ((float *)loom_data(m))[i] = 0.5f;
    out = bf_run("audio.MVDR", (const loom_tensor *[]){ x, m, NULL }, 3, NULL, NULL, o);
    loom_tensor_free(out);
    assert_int_equal(bf_call("audio.MVDR", (const loom_tensor *[]){ x2, m2, NULL }, 3, NULL, NULL, o, &out),
                     LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "online state"));
    loom_tensor_free(x), loom_tensor_free(m), loom_tensor_free(x2), loom_tensor_free(m2);
    loom_object_free(o);
}

int main(void)
{
    int rc = oc_run_group("audio-beamform-errors", NULL, cases, sizeof cases / sizeof cases[0], setup, teardown);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_non_hermitian),
        cmocka_unit_test(test_bad_solution),
        cmocka_unit_test(test_online_shape_change),
    };
    return rc | cmocka_run_group_tests_name("audio-beamform-values", tests, tu_setup, tu_teardown);
}
