/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_transforms_augment.c - vision.augmix, rand_augment,
** trivial_augment_wide, auto_augment, random_erasing, mixup and cutmix:
**   - fed torchvision's own draws (recorded by
**     tools/gen_vision_transforms_goldens.py around torch's RNG calls), every
**     case of augment/cases.txt matches torchvision.transforms.v2: uint8
**     identical (the ops inside are the module's kernels, identical to
**     torchvision's on uint8; AugMix's mix is the same float32 sums in the
**     same order, truncated), float32 within 1e-5 (the ops' own float32
**     tolerance, tests/vision/transforms);
**   - seeded: the same seed gives the same bytes (with one thread and with
**     the pool), another seed another result;
**   - wrong arguments and too few draws are refused, naming the argument.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

#define DATA "vision/transforms/augment/"

static loom_tensor *golden(const char *name)
{
    char rel[160];
    snprintf(rel, sizeof rel, DATA "%s", name);
    return tu_npy(rel);
}

static int is_mix(const char *op)
{
    return strcmp(op, "vision.mixup") == 0 || strcmp(op, "vision.cutmix") == 0;
}

static void compare(const loom_tensor *got, const loom_tensor *want, const char *name)
{
    if (loom_tensor_dtype_of(want) == LOOM_DTYPE_F32)
        tu_assert_close(got, want, 0.0, 1e-5, name);
    else
        tu_assert_identical(got, want, name);
}

static void every_case_matches_torchvision(void **state)
{
    (void)state;
    const char *path = tu_data_path(DATA "cases.txt");
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        char op[64], name[96], inputs[256], attrs[256];
        if (sscanf(line, "%63s %95s %255s %255s", op, name, inputs, attrs) != 4)
            fail_msg("%s: malformed line '%s'", path, line);
        loom_tensor *in[4] = { NULL }, *outs[2] = { NULL, NULL };
        int n_in = 0;
        for (char *save = NULL, *tok = strtok_r(inputs, "+", &save); tok && n_in < 4; tok = strtok_r(NULL, "+", &save))
            in[n_in++] = golden(tok);
        loom_attrs *a = tu_attrs_text(op, attrs);
        const int n_out = is_mix(op) ? 2 : 1;
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.backend = "cpu";
        if (loom_run(op, (const loom_tensor *const *)in, n_in, a, outs, n_out, &opt) != LOOM_OK)
            fail_msg("%s (%s): %s", name, attrs, loom_last_error());
        loom_tensor *want = golden(name);
        compare(outs[0], want, name);
        loom_tensor_free(want);
        if (n_out == 2) {
            char lab[128];
            snprintf(lab, sizeof lab, "%s_labels", name);
            want = golden(lab);
            tu_assert_close(outs[1], want, 0.0, 1e-6, lab);
            loom_tensor_free(want);
        }
        for (int k = 0; k < n_in; k++)
            loom_tensor_free(in[k]);
        for (int k = 0; k < n_out; k++)
            loom_tensor_free(outs[k]);
        loom_attrs_free(a);
        n++;
    }
    fclose(f);
    assert_true(n >= 70);
}

static loom_tensor *run_seeded(const char *op, const loom_tensor *const *in, int n_in, const char *attrs,
                               int threads)
{
    loom_attrs *a = tu_attrs_text(op, attrs);
    loom_tensor *outs[2] = { NULL, NULL };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    opt.num_threads = threads;
    if (loom_run(op, in, n_in, a, outs, is_mix(op) ? 2 : 1, &opt) != LOOM_OK)
        fail_msg("%s (%s): %s", op, attrs, loom_last_error());
    loom_tensor_free(outs[1]);
    loom_attrs_free(a);
    return outs[0];
}

static int same_bytes(const loom_tensor *a, const loom_tensor *b)
{
    const size_t n = (size_t)loom_numel(a) * (loom_tensor_dtype_of(a) == LOOM_DTYPE_U8 ? 1 : 4);
    return loom_numel(a) == loom_numel(b) && memcmp(loom_data(a), loom_data(b), n) == 0;
}

/* Without draws: a seed is a result, on one thread as on the pool. */
static void a_seed_reproduces_its_result(void **state)
{
    (void)state;
    static const struct { const char *op, *input, *labels, *attrs[2]; } cases[] = {
        { "vision.augmix", "aug_batch_u8", NULL, { "seed=7", "seed=8" } },
        { "vision.augmix", "aug_u8", NULL, { "seed=7;all_ops=false;chain_depth=3", "seed=9;all_ops=false;chain_depth=3" } },
        { "vision.rand_augment", "aug_batch_u8", NULL, { "seed=3;num_ops=4", "seed=4;num_ops=4" } },
        { "vision.trivial_augment_wide", "aug_u8", NULL, { "seed=11", "seed=12" } },
        { "vision.auto_augment", "aug_u8", NULL, { "seed=1", "seed=6" } },
        { "vision.random_erasing", "aug_u8", NULL, { "seed=1;p=1", "seed=2;p=1" } },
        { "vision.random_erasing", "aug_batch_u8", NULL, { "seed=1;p=1;random=true", "seed=2;p=1;random=true" } },
        { "vision.random_erasing", "aug_f32", NULL, { "seed=3;p=1;random=true", "seed=4;p=1;random=true" } },
        { "vision.mixup", "mix_f32", "labels_idx", { "seed=1;num_classes=5", "seed=2;num_classes=5" } },
        { "vision.cutmix", "mix_u8", "labels_idx", { "seed=1;num_classes=5", "seed=5;num_classes=5" } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const loom_tensor *in[2] = { golden(cases[i].input), cases[i].labels ? golden(cases[i].labels) : NULL };
        const int n_in = cases[i].labels ? 2 : 1;
        loom_tensor *a1 = run_seeded(cases[i].op, in, n_in, cases[i].attrs[0], 1);
        loom_tensor *a2 = run_seeded(cases[i].op, in, n_in, cases[i].attrs[0], 0);
        loom_tensor *b = run_seeded(cases[i].op, in, n_in, cases[i].attrs[1], 0);
        if (!same_bytes(a1, a2))
            fail_msg("%s %s: another result on the pool", cases[i].op, cases[i].attrs[0]);
        if (same_bytes(a1, b))
            fail_msg("%s: seeds %s and %s give the same result", cases[i].op, cases[i].attrs[0], cases[i].attrs[1]);
        loom_tensor_free(a1);
        loom_tensor_free(a2);
        loom_tensor_free(b);
        loom_tensor_free((loom_tensor *)in[0]);
        loom_tensor_free((loom_tensor *)in[1]);
    }
}

/* Wrong arguments and draws: refused, naming the argument. */
static void wrong_arguments_name_the_argument(void **state)
{
    (void)state;
    static const struct { const char *op, *input, *labels, *attrs; int draws; const char *word; } bad[] = {
        { "vision.augmix", "aug_u8", NULL, "severity=11", 0, "'severity'" },
        { "vision.augmix", "aug_u8", NULL, "mixture_width=65", 0, "'mixture_width'" },
        { "vision.augmix", "aug_u8", NULL, "fill=1,2", 0, "'fill'" },
        { "vision.augmix", "aug_u8", NULL, "-", 3, "'draws'" },
        { "vision.rand_augment", "aug_u8", NULL, "magnitude=31", 0, "'magnitude'" },
        { "vision.rand_augment", "aug_u8", NULL, "num_magnitude_bins=1;magnitude=0", 0, "'num_magnitude_bins'" },
        { "vision.rand_augment", "aug_u8", NULL, "num_ops=100000", 0, "'num_ops'" },
        { "vision.rand_augment", "labels_prob", NULL, "-", 0, "'image'" },
        { "vision.trivial_augment_wide", "aug_u8", NULL, "-", 1, "'draws'" },
        { "vision.auto_augment", "aug_u8", NULL, "-", 2, "'draws'" },
        { "vision.random_erasing", "aug_u8", NULL, "scale=0.5,0.1", 0, "'scale'" },
        { "vision.random_erasing", "aug_u8", NULL, "scale=0.5,1.5", 0, "'scale'" },
        { "vision.random_erasing", "aug_u8", NULL, "value=1,2", 0, "'value'" },
        { "vision.random_erasing", "aug_u8", NULL, "ratio=1,2,3", 0, "'ratio'" },
        { "vision.random_erasing", "aug_u8", NULL, "value=1;random=true", 0, "'value'" },
        { "vision.random_erasing", "aug_u8", NULL, "p=1;random=true", 3, "'draws'" },
        { "vision.mixup", "mix_f32", "labels_idx", "-", 0, "'num_classes'" },
        { "vision.mixup", "mix_f32", "labels_idx", "num_classes=3", 0, "'labels'" },
        { "vision.mixup", "mix_f32", "labels_prob", "num_classes=4", 0, "'num_classes'" },
        { "vision.cutmix", "aug_batch_u8", "labels_idx", "num_classes=5", 0, "batch size" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const loom_tensor *in[3] = { golden(bad[i].input), NULL, NULL };
        int n_in = 1;
        if (bad[i].labels)
            in[n_in++] = golden(bad[i].labels);
        loom_tensor *draws = NULL;
        if (bad[i].draws) {
            /* torchvision's first draws of a run would be these; too few for the op, or out of range */
            static const double vals[3] = { 0.25, 0.75, 0.5 };
            assert_int_equal(loom_tensor_new(&draws, LOOM_DTYPE_F64, 1, (const int64_t[]){ bad[i].draws }, NULL),
                             LOOM_OK);
            memcpy(loom_data(draws), vals, sizeof(double) * (size_t)bad[i].draws);
            in[n_in++] = draws;
        }
        loom_attrs *a = tu_attrs_text(bad[i].op, bad[i].attrs);
        loom_tensor *outs[2] = { NULL, NULL };
        const loom_status st = loom_run(bad[i].op, in, n_in, a, outs, is_mix(bad[i].op) ? 2 : 1, NULL);
        if (st == LOOM_OK)
            fail_msg("%s %s: accepted", bad[i].op, bad[i].attrs);
        if (!strstr(loom_last_error(), bad[i].word))
            fail_msg("%s %s: '%s' does not name %s", bad[i].op, bad[i].attrs, loom_last_error(), bad[i].word);
        for (int k = 0; k < n_in; k++)
            loom_tensor_free((loom_tensor *)in[k]);
        loom_attrs_free(a);
    }
}

/* Seeded value='random': the erased pixels are standard normal noise (the
** seeded stream is not torch's, so its moments are what is checked: about
** 300 draws, mean within 0.3 (5 standard errors), variance within
** [0.6, 1.5]), and each channel has its own. */
static void seeded_noise_is_standard_normal(void **state)
{
    (void)state;
    loom_tensor *x = golden("aug_f32");
    const loom_tensor *in[1] = { x };
    loom_tensor *y = run_seeded("vision.random_erasing", in, 1, "seed=5;p=1;random=true;scale=0.3,0.33", 0);
    const float *a = loom_data(x), *b = loom_data(y);
    const int64_t plane = x->shape[1] * x->shape[2];
    double sum = 0.0, sq = 0.0;
    int64_t n = 0, same_across_channels = 0;
    for (int64_t k = 0; k < loom_numel(x); k++)
        if (a[k] != b[k]) {
            sum += b[k];
            sq += (double)b[k] * b[k];
            n++;
            if (k < plane && b[k] == b[k + plane])
                same_across_channels++;
        }
    assert_true(n > 200);
    const double mean = sum / (double)n, var = sq / (double)n - mean * mean;
    if (!(mean > -0.3 && mean < 0.3 && var > 0.6 && var < 1.5))
        fail_msg("noise of %lld pixels: mean %g, variance %g", (long long)n, mean, var);
    assert_int_equal(same_across_channels, 0);
    loom_tensor_free(x);
    loom_tensor_free(y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_case_matches_torchvision),
        cmocka_unit_test(a_seed_reproduces_its_result),
        cmocka_unit_test(wrong_arguments_name_the_argument),
        cmocka_unit_test(seeded_noise_is_standard_normal),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
