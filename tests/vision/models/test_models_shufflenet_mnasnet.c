/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_shufflenet_mnasnet.c - the ShuffleNetV2 and MNASNet classes
** against torchvision (tools/gen_vision_models_goldens.py): the smallest of
** each, shufflenet_v2_x0_5 and mnasnet0_5, in full, with random weights and
** non-trivial batchnorm statistics, on a seeded [2, 3, 64, 64] batch;
** mnasnet0_5 also from a checkpoint in MNASNet's version-1 layout (the stem
** at 32 / 16 channels); the plan reused and re-made; files that do not fit
** (each names the key and both shapes). The weights are made at goldens
** time into build-models/vision/ and skipped when absent (model_goldens.h).
** The larger widths are the same code with other channel counts; their
** _round_to_multiple_of is checked through the keys they expect.
**
** Tolerance: max |got - want| <= 1e-4 * max |logit| (the bound).
** Run with the default backends and with vision.conv2d on cpu.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "model_goldens.h"

static void smallest_of_each_match_torchvision(void **state)
{
    (void)state;
    int ran = check_class("shufflenet_v2_x0_5", "model.safetensors", "input.npy", "logits.npy");
    ran += check_class("mnasnet0_5", "model.safetensors", "input.npy", "logits.npy");
    ran += check_class("mnasnet0_5", "v1.safetensors", "input.npy", "logits_v1.npy");
    if (ran == 0)
        skip();
}

/* a file of another width: the first key whose shape differs, both named
** (the widths are torchvision's: x1_0's stage2 is 116 wide, so a branch
** 58; mnasnet0_75's _round_to_multiple_of(32 * 0.75, 8) = 24) */
static void wrong_files_name_the_key(void **state)
{
    (void)state;
    char s[512], mn[512];
    expect_refused("vision.shufflenet_v2_x1_0", NULL, "needs a weights file");
    expect_refused("vision.mnasnet1_0", NULL, "needs a weights file");
    if (!model_file(s, sizeof s, "shufflenet_v2_x0_5", "model.safetensors")
        || !model_file(mn, sizeof mn, "mnasnet0_5", "model.safetensors")) {
        printf("# SKIP the ShuffleNetV2 / MNASNet files are absent\n");
        skip();
    }
    expect_refused("vision.shufflenet_v2_x1_0", s, "key 'stage2.0.branch1.2.weight' is f32[24,24,1,1] in the "
                        "weights file, expected f32[58,24,1,1]");
    expect_refused("vision.shufflenet_v2_x2_0", s, "'stage2.0.branch1.2.weight' is f32[24,24,1,1] in the "
                        "weights file, expected f32[122,24,1,1]");
    expect_refused("vision.mnasnet0_75", mn, "key 'layers.0.weight' is f32[16,3,3,3] in the weights file, "
                        "expected f32[24,3,3,3]");
    expect_refused("vision.mnasnet1_3", mn, "expected f32[40,3,3,3]");    /* round(41.6) to 8 */
    expect_refused("vision.mnasnet0_5", s, "no key 'layers.0.weight'");
    expect_refused("vision.shufflenet_v2_x0_5", mn, "no key 'conv1.0.weight'");
}

static void new_shape_replans(void **state)
{
    (void)state;
    int ran = check_replans("shufflenet_v2_x0_5", 45, 39);
    ran += check_replans("mnasnet0_5", 45, 39);
    if (ran == 0)
        skip();
}

/* the entries by name; mnasnet0_5's version-1 file is the same model with
** other stem widths, so its parameter count is not the entry's */
static void weight_entries_are_checked(void **state)
{
    (void)state;
    if (!check_weight_entry("shufflenet_v2_x0_5", "vision.shufflenet_v2_x0_5", "IMAGENET1K_V1", NULL))
        skip();
    check_weight_entry("mnasnet0_5", "vision.mnasnet0_5", "DEFAULT", NULL);
    check_weight_entry("mnasnet0_5", "vision.mnasnet0_5", "IMAGENET1K_V2", "no weight entry 'IMAGENET1K_V2'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(smallest_of_each_match_torchvision),
        cmocka_unit_test(wrong_files_name_the_key),
        cmocka_unit_test(new_shape_replans),
        cmocka_unit_test(weight_entries_are_checked),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
