/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_paste_masks.c - vision.paste_masks against torchvision's
** roi_heads.paste_masks_in_image (goldens of
** tools/gen_vision_paste_masks_goldens.py; the cases' attributes are those
** of its CASES table): boxes inside, partly outside, tiny and inverted, an
** empty list; and the refusals of bad arguments. With the argument `cuda`
** (suite gpu) it runs the goldens on the cuda kernel, the inputs copied to
** the first CUDA device, and skips with a message where there is none.
**
** Tolerance: |got - want| <= 4 (P + 1) FLT_EPSILON per pixel, P = M + 2
** padding the padded mask's side (the values are in [0, 1]). Why: both
** sides run the same f32 steps (the integer box, ATen's source index
** scale (i + 0.5) - 0.5 and weights, the lerps), but ATen's kernels differ
** by size (the channels-last loop, weights multiplied first, when h + w <=
** 128; the generic one, two lerps, above) and its AVX2 build contracts the
** source index into an fma: the index, below P, then moves by an ulp
** (<= P FLT_EPSILON), and so does each weight, on each axis; a pixel moves
** by that times a neighbour difference <= 1, twice, plus the roundings of
** the blend. The cases measure up to 7.2e-7 for P = 30. The
** integer boxes cannot differ (separate tensor ops in torchvision, each
** rounded alone), so the supports are checked exactly: a pixel zero on one
** side is zero on the other.
*/
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_dl_device cuda_dev;
static const loom_dl_device host = { LOOM_DEVICE_CPU, 0 };

/* tools/gen_vision_paste_masks_goldens.py's CASES */
static const struct { const char *name, *attrs; } cases[] = {
    { "mask28", "image_size=36,48;padding=1" },
    { "mask7", "image_size=36,48;padding=1" },
    { "pad2", "image_size=36,48;padding=2" },
    { "empty", "image_size=36,48;padding=1" },
};

static loom_tensor *golden(const char *name, const char *part)
{
    char path[160];
    snprintf(path, sizeof path, "vision/paste_masks/%s_%s", name, part);
    return tu_npy(path);
}

static loom_status run_on(const char *backend, int on_cuda, const loom_tensor *const *in, const loom_attrs *a,
                          loom_tensor **out_host)
{
    if (!on_cuda)
        return tu_call("vision.paste_masks", in, 2, a, backend, out_host);
    loom_tensor *d[2] = { NULL, NULL }, *out = NULL;
    for (int32_t i = 0; i < 2; i++)
        assert_int_equal(loom_tensor_copy_to(&d[i], in[i], &cuda_dev), LOOM_OK);
    loom_status st = tu_call("vision.paste_masks", (const loom_tensor *const *)d, 2, a, "cuda", &out);
    for (int32_t i = 0; i < 2; i++)
        loom_tensor_free(d[i]);
    *out_host = NULL;
    if (st == LOOM_OK) {
        assert_int_equal(loom_tensor_copy_to(out_host, out, &host), LOOM_OK);
        loom_tensor_free(out);
    }
    return st;
}

static void run_cases_on(const char *backend, int on_cuda)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        loom_tensor *masks = golden(cases[k].name, "masks"), *boxes = golden(cases[k].name, "boxes");
        loom_tensor *want = golden(cases[k].name, "output"), *got = NULL;
        loom_attrs *a = tu_attrs_text("vision.paste_masks", cases[k].attrs);
        const loom_tensor *in[2] = { masks, boxes };
        char what[96];
        snprintf(what, sizeof what, "paste_masks %s on %s", cases[k].name, backend);
        if (run_on(backend, on_cuda, in, a, &got) != LOOM_OK)
            fail_msg("%s: %s", what, loom_last_error());
        tu_assert_same_shape(got, want, what);
        /* P of the case: the padded mask's side */
        const double pad = strtod(strstr(cases[k].attrs, "padding=") + 8, NULL);
        const double tol = 4.0 * ((double)masks->shape[3] + 2.0 * pad + 1.0) * FLT_EPSILON;
        double worst = 0.0;
        for (int64_t i = 0; i < loom_numel(want); i++) {
            const double g = tu_get(got, i), w = tu_get(want, i), e = fabs(g - w);
            if ((g == 0.0) != (w == 0.0))
                fail_msg("%s: pixel %lld is %.9g, want %.9g (outside the other's box)", what, (long long)i, g, w);
            if (!(e <= tol))
                fail_msg("%s: pixel %lld is %.9g, want %.9g (|diff| %.3g)", what, (long long)i, g, w, e);
            worst = e > worst ? e : worst;
        }
        print_message("%s: max |diff| %.3g\n", what, worst);
        loom_tensor *all[] = { masks, boxes, want, got };
        for (size_t i = 0; i < 4; i++)
            loom_tensor_free(all[i]);
        loom_attrs_free(a);
    }
}

static void paste_masks_matches_torchvision(void **state)
{
    (void)state;
    run_cases_on("cpu", 0);
}

static void paste_masks_cuda_matches_torchvision(void **state)
{
    (void)state;
    if (!tu_cuda_device(&cuda_dev) || !tu_has_backend("vision.paste_masks", "cuda")) {
        print_message("no CUDA device (or no cuda kernel of vision.paste_masks): the cuda kernel is not run\n");
        skip();
    }
    run_cases_on("cuda", 1);
}

/* ------------------------------------------------------------- refusals */

static void expect_refusal(const loom_tensor *m, const loom_tensor *b, const char *text, const char *needle)
{
    loom_attrs *a = tu_attrs_text("vision.paste_masks", text);
    const loom_tensor *in[2] = { m, b };
    loom_tensor *got = NULL;
    if (tu_call("vision.paste_masks", in, 2, a, NULL, &got) == LOOM_OK)
        fail_msg("paste_masks (%s) was accepted; want an error naming %s", text, needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("paste_masks (%s): message \"%s\" does not name %s", text, loom_last_error(), needle);
    loom_attrs_free(a);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    int64_t ms[4] = { 2, 1, 5, 5 }, m2s[4] = { 2, 2, 5, 5 }, m0s[4] = { 2, 1, 0, 5 }, bs[2] = { 2, 4 };
    int64_t b3s[2] = { 3, 4 }, b5s[2] = { 2, 5 }, m3s[3] = { 2, 5, 5 };
    loom_tensor *m = tu_random_f32(4, ms, 1), *m2 = tu_random_f32(4, m2s, 2), *m0 = tu_random_f32(4, m0s, 3);
    loom_tensor *b = tu_random_f32(2, bs, 4), *b3 = tu_random_f32(2, b3s, 5), *b5 = tu_random_f32(2, b5s, 6);
    loom_tensor *m3 = tu_random_f32(3, m3s, 7), *m64 = tu_cast(m, LOOM_DTYPE_F64);
    expect_refusal(m2, b, "image_size=8,8", "'masks'");        /* two channels */
    expect_refusal(m0, b, "image_size=8,8", "'masks'");        /* no rows */
    expect_refusal(m3, b, "image_size=8,8", "masks");          /* rank 3 */
    expect_refusal(m, b3, "image_size=8,8", "'boxes'");        /* 3 boxes for 2 masks */
    expect_refusal(m, b5, "image_size=8,8", "'boxes'");
    expect_refusal(m64, b, "image_size=8,8", "masks");
    expect_refusal(m, b, "image_size=8,8,8", "image_size");
    expect_refusal(m, b, "image_size=0,8", "image_size");
    loom_tensor *none = NULL;
    assert_int_not_equal(tu_call("vision.paste_masks", (const loom_tensor *[]){ m, b }, 2, NULL, NULL, &none),
                         LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "image_size"));
    loom_tensor *all[] = { m, m2, m0, b, b3, b5, m3, m64 };
    for (size_t i = 0; i < 8; i++)
        loom_tensor_free(all[i]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest cpu_tests[] = {
        cmocka_unit_test(paste_masks_matches_torchvision),
        cmocka_unit_test(bad_arguments_are_refused),
    };
    const struct CMUnitTest cuda_tests[] = {
        cmocka_unit_test(paste_masks_cuda_matches_torchvision),
    };
    if (argc > 1 && strcmp(argv[1], "cuda") == 0)
        return cmocka_run_group_tests(cuda_tests, tu_setup, tu_teardown);
    return cmocka_run_group_tests(cpu_tests, tu_setup, tu_teardown);
}
