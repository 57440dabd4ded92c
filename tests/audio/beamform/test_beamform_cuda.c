/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_beamform_cuda.c - the cuda kernels of the beamforming functions
** against torchaudio's goldens (the same files and tolerances as the cpu's
** test_beamform_ops.c), with their inputs on the first CUDA device, and
** the refusals that need the data (a non-Hermitian PSD, a singular noise
** PSD) with the cpu's messages; the PSD, SoudenMVDR and RTFMVDR objects'
** methods on the device against the cpu object test's goldens. Skipped with a message when no CUDA device
** or no audio-cuda pack is there.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "bf_test.h"

static loom_dl_device dev;

static int cuda_device(loom_dl_device *out)
{
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            *out = di.device;
            return 1;
        }
    }
    return 0;
}

#define NEED_DEVICE()                                                                        \
    do {                                                                                     \
        if (!tu_has_backend("audio.psd", "cuda") || !cuda_device(&dev)) {                    \
            print_message("no CUDA device or audio-cuda pack: the cuda kernels were not run\n"); \
            skip();                                                                          \
        }                                                                                    \
    } while (0)

/* op on the device (a method of obj, or obj NULL): inputs copied there
** (NULL stays absent), output back */
static loom_status on_device(const char *op, loom_object *obj, const loom_tensor *const *in, int32_t n,
                             const char *attrs, loom_tensor **out)
{
    loom_tensor *d[8] = { 0 }, *dout = NULL;
    const loom_tensor *din[8];
    for (int32_t i = 0; i < n; i++) {
        if (in[i] != NULL && loom_tensor_copy_to(&d[i], in[i], &dev) != LOOM_OK)
            fail_msg("input %d to the device: %s", i, loom_last_error());
        din[i] = d[i];
    }
    loom_status st = bf_call(op, din, n, attrs, "cuda", obj, &dout);
    *out = NULL;
    if (st == LOOM_OK) {
        if (loom_tensor_copy_to(out, dout, NULL) != LOOM_OK)
            fail_msg("output to the host: %s", loom_last_error());
        loom_tensor_free(dout);
    }
    for (int32_t i = 0; i < n; i++)
        loom_tensor_free(d[i]);
    return st;
}

/* masks and reference weights are real */
static int is_real(const char *stem)
{
    return strstr(stem, "mask") != NULL || strcmp(stem, "ref_u") == 0;
}

static void golden_case(const char *op, const char *const *stems, int32_t n, const char *attrs, const char *want,
                        const char *sfx, int phase)
{
    loom_tensor *in[8] = { 0 }, *got;
    for (int32_t i = 0; i < n; i++)
        in[i] = stems[i] == NULL ? NULL : bf_golden(stems[i], is_real(stems[i]) ? bf_rname(sfx) : sfx);
    if (on_device(op, NULL, (const loom_tensor *const *)in, n, attrs, &got) != LOOM_OK)
        fail_msg("%s on cuda: %s", op, loom_last_error());
    loom_tensor *w = bf_golden(want, sfx);
    char what[128];
    snprintf(what, sizeof what, "cuda %s_%s", want, sfx);
    double rtol = bf_rtol(loom_tensor_dtype_of(w));
    if (phase)
        bf_assert_close_phase(got, w, rtol, what);
    else
        bf_assert_close(got, w, rtol, what);
    loom_tensor_free(got);
    loom_tensor_free(w);
    for (int32_t i = 0; i < n; i++)
        loom_tensor_free(in[i]);
}

static void test_goldens(void **state)
{
    (void)state;
    NEED_DEVICE();
    static const char *const sfx[] = { "c64", "c128" };
    for (int k = 0; k < 2; k++) {
        const char *s = sfx[k];
        golden_case("audio.psd", (const char *[]){ "specgram", "mask" }, 2, NULL, "psd_norm", s, 0);
        golden_case("audio.psd", (const char *[]){ "specgram", "mask" }, 2, "normalize=false", "psd_raw", s, 0);
        golden_case("audio.psd", (const char *[]){ "specgram", NULL }, 2, NULL, "psd_none", s, 0);
        golden_case("audio.mvdr_weights_souden", (const char *[]){ "psd_s", "psd_n", NULL }, 3, "reference_channel=1",
                    "souden_ref1", s, 0);
        golden_case("audio.mvdr_weights_souden", (const char *[]){ "psd_s", "psd_n", NULL }, 3,
                    "reference_channel=1;diagonal_loading=false", "souden_noload", s, 0);
        golden_case("audio.mvdr_weights_souden", (const char *[]){ "psd_s", "psd_n", "ref_u" }, 3, NULL, "souden_u", s,
                    0);
        golden_case("audio.rtf_evd", (const char *[]){ "psd_s" }, 1, NULL, "rtf_evd", s, 1);
        golden_case("audio.rtf_power", (const char *[]){ "psd_s", "psd_n", NULL }, 3, "reference_channel=0",
                    "rtf_power_n3", s, 0);
        golden_case("audio.rtf_power", (const char *[]){ "psd_s", "psd_n", NULL }, 3, "reference_channel=0;n_iter=1",
                    "rtf_power_n1", s, 0);
        golden_case("audio.rtf_power", (const char *[]){ "psd_s", "psd_n", "ref_u" }, 3, "n_iter=2", "rtf_power_u2", s,
                    0);
        golden_case("audio.mvdr_weights_rtf", (const char *[]){ "rtf_power_n3", "psd_n", NULL }, 3,
                    "reference_channel=0", "rtfw_ref", s, 0);
        golden_case("audio.mvdr_weights_rtf", (const char *[]){ "rtf_power_n3", "psd_n", NULL }, 3, NULL, "rtfw_none",
                    s, 0);
        golden_case("audio.mvdr_weights_rtf", (const char *[]){ "rtf_power_n3", "psd_n", "ref_u" }, 3, NULL, "rtfw_u",
                    s, 0);
        golden_case("audio.apply_beamforming", (const char *[]){ "souden_ref1", "specgram" }, 2, NULL, "apply", s, 0);
    }
    golden_case("audio.psd", (const char *[]){ "long_spec", "long_mask" }, 2, NULL, "long_psd", "c64", 0);
}

/* audio.PSD, audio.SoudenMVDR and audio.RTFMVDR on cuda (composed of the
** functions' cuda kernels) against the goldens of the cpu's object test;
** PSD with multi_mask is refused on cuda, naming why. */
static void test_objects(void **state)
{
    (void)state;
    NEED_DEVICE();
    static const char *const sfx[] = { "c64", "c128" };
    for (int k = 0; k < 2; k++) {
        loom_tensor *x = bf_golden("specgram", sfx[k]), *m = bf_golden("mask", bf_rname(sfx[k]));
        loom_tensor *ms = bf_golden("masks", bf_rname(sfx[k]));
        loom_tensor *ps = bf_golden("psd_s", sfx[k]), *pn = bf_golden("psd_n", sfx[k]);
        loom_tensor *rtf = bf_golden("rtf_power_n3", sfx[k]), *got, *want;
        const double rtol = bf_rtol(loom_tensor_dtype_of(x));
        struct { const char *cls, *stem; const loom_tensor *in[4]; int32_t n; const char *attrs; } cases[] = {
            { "audio.PSD", "psdobj", { x, m }, 2, NULL },
            { "audio.SoudenMVDR", "soudenmvdr", { x, ps, pn, NULL }, 4, "reference_channel=2" },
            { "audio.RTFMVDR", "rtfmvdr", { x, rtf, pn, NULL }, 4, "reference_channel=2" },
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            loom_object *o = bf_object(cases[c].cls, NULL);
            if (on_device(cases[c].cls, o, cases[c].in, cases[c].n, cases[c].attrs, &got) != LOOM_OK)
                fail_msg("%s on cuda: %s", cases[c].cls, loom_last_error());
            want = bf_golden(cases[c].stem, sfx[k]);
            char what[96];
            snprintf(what, sizeof what, "cuda %s_%s", cases[c].stem, sfx[k]);
            bf_assert_close(got, want, rtol, what);
            loom_tensor_free(got);
            loom_tensor_free(want);
            loom_object_free(o);
        }
        loom_object *o = bf_object("audio.PSD", "multi_mask=true");
        assert_int_not_equal(on_device("audio.PSD", o, (const loom_tensor *[]){ x, ms }, 2, NULL, &got), LOOM_OK);
        assert_non_null(strstr(loom_last_error(), "multi_mask"));
        loom_object_free(o);
        loom_tensor *all[] = { x, m, ms, ps, pn, rtf };
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            loom_tensor_free(all[i]);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    NEED_DEVICE();
    const int64_t shape[3] = { 2, 3, 3 };
    loom_tensor *zero, *bad, *out;
    assert_int_equal(loom_tensor_new(&zero, LOOM_DTYPE_C64, 3, shape, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_C64, 3, shape, NULL), LOOM_OK);
    ((float *)loom_data(bad))[2 * 1 + 1] = 0.5f;   /* (0,1) imaginary, (1,0) zero: not Hermitian */
    assert_int_equal(on_device("audio.mvdr_weights_souden", NULL, (const loom_tensor *[]){ zero, zero, NULL }, 3,
                               "reference_channel=0;diagonal_loading=false", &out),
                     LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'psd_n' is singular"));
    assert_int_equal(on_device("audio.rtf_evd", NULL, (const loom_tensor *[]){ bad }, 1, NULL, &out), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'psd_s' is not Hermitian"));
    loom_tensor_free(zero);
    loom_tensor_free(bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_objects),
    };
    return cmocka_run_group_tests_name("audio-beamform-cuda", tests, tu_setup, tu_teardown);
}
