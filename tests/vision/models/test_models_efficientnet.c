/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_efficientnet.c - the EfficientNetV2 classes against
** torchvision (tools/gen_vision_models_goldens.py): efficientnet_v2_s in
** full (FusedMBConv with and without expansion, MBConv with its
** squeeze-excitation, the silu head), random weights and non-trivial
** batchnorm statistics, a seeded [2, 3, 64, 64] batch; the plan reused and
** re-made; files that do not fit (each names the key and both shapes).
** The weights (86 MB) are made at goldens time into build-models/vision/
** and skipped when absent (model_goldens.h). _m and _l are the same code
** with longer stage tables; their files are refused by the _s class at the
** first key that differs.
**
** Tolerance: max |got - want| <= 1e-4 * max |logit| (the bound;
** f32 on both sides, ~170 layers each moving the result by a few ulps).
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

static void efficientnet_v2_s_matches_torchvision(void **state)
{
    (void)state;
    if (!check_class("efficientnet_v2_s", "model.safetensors", "input.npy", "logits.npy"))
        skip();
}

static void wrong_files_name_the_key(void **state)
{
    (void)state;
    char s[512], r[512];
    expect_refused("vision.efficientnet_v2_m", NULL, "needs a weights file");
    if (!model_file(s, sizeof s, "efficientnet_v2_s", "model.safetensors")) {
        printf("# SKIP efficientnet_v2_s's file is absent\n");
        skip();
    }
    /* _m has a third block in stage 1 */
    expect_refused("vision.efficientnet_v2_m", s, "no key 'features.1.2.block.0.0.weight'");
    /* _l's stem is 32 wide */
    expect_refused("vision.efficientnet_v2_l", s, "key 'features.0.0.weight' is f32[24,3,3,3] in the weights "
                        "file, expected f32[32,3,3,3]");
    if (model_file(r, sizeof r, "regnet_y_400mf", "model.safetensors"))
        expect_refused("vision.efficientnet_v2_s", r, "no key 'features.0.0.weight'");
}

static void new_shape_replans(void **state)
{
    (void)state;
    if (!check_replans("efficientnet_v2_s", 41, 35))
        skip();
}

/* the entries of torchvision's multi-weight API, by name */
static void weight_entries_are_checked(void **state)
{
    (void)state;
    if (!check_weight_entry("efficientnet_v2_s", "vision.efficientnet_v2_s", "IMAGENET1K_V1", NULL))
        skip();
    check_weight_entry("efficientnet_v2_s", "vision.efficientnet_v2_s", "DEFAULT", NULL);
    check_weight_entry("efficientnet_v2_s", "vision.efficientnet_v2_s", "IMAGENET1K_V2",
                       "no weight entry 'IMAGENET1K_V2'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(efficientnet_v2_s_matches_torchvision),
        cmocka_unit_test(wrong_files_name_the_key),
        cmocka_unit_test(new_shape_replans),
        cmocka_unit_test(weight_entries_are_checked),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
