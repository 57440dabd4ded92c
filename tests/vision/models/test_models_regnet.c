/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_regnet.c - the RegNet classes against torchvision
** (tools/gen_vision_models_goldens.py): regnet_y_400mf (squeeze-excitation)
** and regnet_x_400mf, the smallest of each kind, in full, with random
** weights and non-trivial batchnorm statistics, on a seeded [2, 3, 64, 64]
** batch; the plan reused; files that do not fit (each names the key and
** both shapes). The weights are made at goldens time into
** build-models/vision/<name>/ and skipped when absent (model_goldens.h);
** the stage tables of every class are checked without weights by
** test_models_regnet_params.c.
**
** Tolerance: max |got - want| <= 1e-4 * max |logit| (the bound;
** f32 on both sides, the batchnorm folding and the summation orders of the
** GEMMs differ by a few ulps per layer, over ~60 layers). Run with the
** default backends and, as vision-models-regnet-cpu, with vision.conv2d
** kept on cpu.
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

static void regnets_match_torchvision(void **state)
{
    (void)state;
    int ran = check_class("regnet_y_400mf", "model.safetensors", "input.npy", "logits.npy");
    ran += check_class("regnet_x_400mf", "model.safetensors", "input.npy", "logits.npy");
    if (ran == 0)
        skip();
}

/* one class's file given to another: the first key that differs, named
** with both shapes */
static void wrong_files_name_the_key(void **state)
{
    (void)state;
    char y[512], x[512], r[512];
    expect_refused("vision.regnet_y_400mf", NULL, "needs a weights file");
    if (!model_file(y, sizeof y, "regnet_y_400mf", "model.safetensors")
        || !model_file(x, sizeof x, "regnet_x_400mf", "model.safetensors")) {
        printf("# SKIP the RegNet files are absent\n");
        skip();
    }
    /* X 400mf's stem is the same; its first block is wider (32 -> 32 with group width 16) */
    expect_refused("vision.regnet_x_400mf", y, "key 'trunk_output.block1.block1-0.proj.0.weight' is "
                        "f32[48,32,1,1] in the weights file, expected f32[32,32,1,1]");
    /* Y has a squeeze-excitation the X file lacks */
    expect_refused("vision.regnet_y_400mf", x, "'trunk_output.block1.block1-0.proj.0.weight' is f32[32,32,1,1]");
    /* an 800mf is deeper and wider */
    expect_refused("vision.regnet_y_800mf", y, "'trunk_output.block1.block1-0.proj.0.weight' is f32[48,32,1,1] "
                        "in the weights file, expected f32[64,32,1,1]");
    if (model_file(r, sizeof r, "resnet18", "model.safetensors"))
        expect_refused("vision.regnet_x_400mf", r, "no key 'stem.0.weight'");
}

static void new_shape_replans(void **state)
{
    (void)state;
    if (!check_replans("regnet_y_400mf", 37, 45))
        skip();
}

/* torchvision's entries by name: the file (1000 classes, torchvision's
** parameter count) fits each entry of its class; another class's entry
** names are refused, listing the class's own */
static void weight_entries_are_checked(void **state)
{
    (void)state;
    int ran = check_weight_entry("regnet_y_400mf", "vision.regnet_y_400mf", "IMAGENET1K_V2", NULL);
    if (ran == 0)
        skip();
    check_weight_entry("regnet_y_400mf", "vision.regnet_y_400mf", "DEFAULT", NULL);
    check_weight_entry("regnet_y_400mf", "vision.regnet_y_400mf", "IMAGENET1K_SWAG_E2E_V1",
                       "no weight entry 'IMAGENET1K_SWAG_E2E_V1': its entries are IMAGENET1K_V1, IMAGENET1K_V2 and "
                       "DEFAULT");
    check_weight_entry("regnet_x_400mf", "vision.regnet_x_400mf", "IMAGENET1K_V1", NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(regnets_match_torchvision),
        cmocka_unit_test(wrong_files_name_the_key),
        cmocka_unit_test(new_shape_replans),
        cmocka_unit_test(weight_entries_are_checked),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
