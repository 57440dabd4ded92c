/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_tiny.c - the convnet classes that take the architecture as
** attributes (vision.resnet, vision.regnet, vision.efficientnet_v2,
** vision.shufflenet_v2, vision.mnasnet; the named classes of each family
** run the same create and forward) against torchvision, on tiny
** configurations committed in tests/data/vision/models/tiny_<family>/
** (tools/gen_vision_models_goldens.py write_convnets_tiny: random weights,
** non-trivial batchnorm statistics, a seeded [2, 3, 32, 32] batch), so the
** families' forwards run in CI without the full-size weights:
**  - tiny_resnet_basic: torchvision's ResNet(BasicBlock, [2, 1, 1, 1]) with
**    a stem of 8 and stages of 8, 16, 24, 32 planes, built from its own
**    blocks (its keys), 10 classes: an identity residual, a downsample at
**    each stride;
**  - tiny_resnet_bottleneck: the same with Bottleneck, planes 8, 8, 16, 16,
**    groups 2, width_per_group 16 (grouped 3x3 convs), a stride-1
**    downsample in layer1;
**  - tiny_effnet: EfficientNet of V2 (eps 1e-3) over FusedMBConvConfig(1, 3,
**    1, 8, 8, 2), FusedMBConvConfig(4, 3, 2, 8, 16, 2), MBConvConfig(4, 3, 2,
**    16, 24, 2), last_channel 32: each kind of block with and without its
**    residual;
**  - tiny_regnet: RegNet(BlockParams.from_init_params(depth 4, w_0 8,
**    w_a 8, w_m 2, group_width 8, se_ratio 0.25), stem_width 8, 10
**    classes): stages 8, 16, 32 of depths 1, 1, 2, squeeze-excitation;
**  - tiny_shufflenet: ShuffleNetV2([2, 1, 1], [8, 16, 32, 64, 128], 10
**    classes): a stride-1 block in stage 2;
**  - tiny_mnasnet: MNASNet(alpha 0.025, 10 classes): every depth 8;
**  - the plan of the shape reused (the same bits);
**  - attributes out of range, each refused naming the attribute; attributes
**    the file does not fit, refused naming the key.
**
** Tolerance: max |got - want| <= 1e-4 * max |logit| (the bound;
** f32 on both sides, the batchnorm folding and the GEMMs' summation orders
** differ by a few ulps per layer; measured: 1.5e-7 to 5.2e-7 of max |logit|
** on cpu and onednn). Run with the default backends
** (vision.conv2d on onednn when it is built) and, as
** vision-models-tiny-cpu, with vision.conv2d kept on cpu.
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

/* One attribute of a tiny configuration: an int, a float, count ints or a
** string. */
enum { TINY_INT, TINY_FLOAT, TINY_INTS, TINY_STRING };
typedef struct tiny_attr {
    const char *name;
    int kind;
    double v;
    int64_t ints[24];
    int count;
    const char *s;
} tiny_attr;

#define TINY_MAX_ATTRS 12

/* A tiny configuration: the class, its folder in tests/data/vision/models
** and the attributes torchvision's constructor was given. */
typedef struct tiny_config {
    const char *cls, *dir;
    tiny_attr attrs[TINY_MAX_ATTRS];
} tiny_config;

static const tiny_config tiny_regnet = {
    "vision.regnet", "tiny_regnet",
    { { "depth", TINY_INT, 4, { 0 }, 0, NULL }, { "w_0", TINY_INT, 8, { 0 }, 0, NULL },
      { "w_a", TINY_FLOAT, 8.0, { 0 }, 0, NULL },
      { "w_m", TINY_FLOAT, 2.0, { 0 }, 0, NULL }, { "group_width", TINY_INT, 8, { 0 }, 0, NULL },
      { "se_ratio", TINY_FLOAT, 0.25, { 0 }, 0, NULL }, { "stem_width", TINY_INT, 8, { 0 }, 0, NULL } },
};

static const tiny_config tiny_shufflenet = {
    "vision.shufflenet_v2", "tiny_shufflenet",
    { { "stages_repeats", TINY_INTS, 0, { 2, 1, 1 }, 3, NULL },
      { "stages_out_channels", TINY_INTS, 0, { 8, 16, 32, 64, 128 }, 5, NULL } },
};

static const tiny_config tiny_mnasnet = {
    "vision.mnasnet", "tiny_mnasnet", { { "alpha", TINY_FLOAT, 0.025, { 0 }, 0, NULL } },
};

static const tiny_config tiny_resnet_basic = {
    "vision.resnet", "tiny_resnet_basic",
    { { "block", TINY_STRING, 0, { 0 }, 0, "basic" }, { "layers", TINY_INTS, 0, { 2, 1, 1, 1 }, 4, NULL },
      { "widths", TINY_INTS, 0, { 8, 16, 24, 32 }, 4, NULL }, { "stem_width", TINY_INT, 8, { 0 }, 0, NULL } },
};

static const tiny_config tiny_resnet_bottleneck = {
    "vision.resnet", "tiny_resnet_bottleneck",
    { { "block", TINY_STRING, 0, { 0 }, 0, "bottleneck" }, { "layers", TINY_INTS, 0, { 2, 1, 1, 1 }, 4, NULL },
      { "widths", TINY_INTS, 0, { 8, 8, 16, 16 }, 4, NULL }, { "stem_width", TINY_INT, 8, { 0 }, 0, NULL },
      { "groups", TINY_INT, 2, { 0 }, 0, NULL }, { "width_per_group", TINY_INT, 16, { 0 }, 0, NULL } },
};

/* rows of fused, expand_ratio, kernel, stride, in, out, layers */
#define TINY_EFFNET_STAGES { 1, 1, 3, 1, 8, 8, 2, 1, 4, 3, 2, 8, 16, 2, 0, 4, 3, 2, 16, 24, 2 }
static const tiny_config tiny_effnet = {
    "vision.efficientnet_v2", "tiny_effnet",
    { { "stages", TINY_INTS, 0, TINY_EFFNET_STAGES, 21, NULL }, { "last_channel", TINY_INT, 32, { 0 }, 0, NULL } },
};

static const char *tiny_path(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s/%s", tu_data_path("vision/models"), dir, file);
    return buf;
}

static void tiny_set(loom_attrs *a, const tiny_attr *t)
{
    loom_status st = t->kind == TINY_FLOAT  ? loom_attrs_set_float(a, t->name, t->v)
                   : t->kind == TINY_INT    ? loom_attrs_set_int(a, t->name, (int64_t)t->v)
                   : t->kind == TINY_STRING ? loom_attrs_set_string(a, t->name, t->s)
                                            : loom_attrs_set_ints(a, t->name, t->ints, t->count);
    assert_int_equal(st, LOOM_OK);
}

/* c's attributes with the one of over's name replaced by over (or added;
** over NULL: none). */
static loom_attrs *tiny_attrs(const tiny_config *c, const tiny_attr *over)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    int replaced = 0;
    for (int i = 0; i < TINY_MAX_ATTRS && c->attrs[i].name != NULL; i++) {
        const tiny_attr *t = &c->attrs[i];
        if (over != NULL && strcmp(t->name, over->name) == 0) {
            t = over;
            replaced = 1;
        }
        tiny_set(a, t);
    }
    if (over != NULL && !replaced)
        tiny_set(a, over);
    return a;
}

/* The class of c on its file, its logits against torchvision's, twice. */
static void check_tiny(const tiny_config *c)
{
    char w[512], x[512], y[512];
    tiny_path(w, sizeof w, c->dir, "model.safetensors");
    loom_attrs *a = tiny_attrs(c, NULL);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, c->cls, a, w) != LOOM_OK)
        fail_msg("%s: %s", c->cls, loom_last_error());
    loom_tensor *in = npy_file(tiny_path(x, sizeof x, c->dir, "input.npy"));
    loom_tensor *want = npy_file(tiny_path(y, sizeof y, c->dir, "logits.npy"));
    loom_tensor *got = forward(obj, c->cls, in);
    assert_logits_close(got, want, c->dir);
    /* the plan of this shape, reused: the same logits bit for bit */
    loom_tensor *again = forward(obj, c->cls, in);
    tu_assert_identical(again, got, c->dir);
    loom_tensor_free(again);
    loom_tensor_free(got);
    loom_tensor_free(in);
    loom_tensor_free(want);
    loom_object_free(obj);
    loom_attrs_free(a);
}

/* c with attribute over on its own file is refused with a message holding
** needle. */
static void expect_over_refused(const tiny_config *c, const tiny_attr *over, const char *needle)
{
    char w[512];
    tiny_path(w, sizeof w, c->dir, "model.safetensors");
    loom_attrs *a = tiny_attrs(c, over);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, c->cls, a, w) == LOOM_OK) {
        loom_object_free(obj);
        fail_msg("%s with another %s was accepted", c->cls, over->name);
    }
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s with another %s: message \"%s\" does not say %s", c->cls, over->name, loom_last_error(),
                 needle);
    loom_attrs_free(a);
}

/* the same with a scalar: name = v (a float when is_float) */
static void expect_attr_refused(const tiny_config *c, const char *name, int is_float, double v, const char *needle)
{
    const tiny_attr over = { name, is_float ? TINY_FLOAT : TINY_INT, v, { 0 }, 0, NULL };
    expect_over_refused(c, &over, needle);
}

/* c with attribute over on its own file: accepted */
static void expect_over_accepted(const tiny_config *c, const tiny_attr *over)
{
    char w[512];
    loom_attrs *a = tiny_attrs(c, over);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, c->cls, a, tiny_path(w, sizeof w, c->dir, "model.safetensors")) != LOOM_OK)
        fail_msg("%s with another %s: %s", c->cls, over->name, loom_last_error());
    loom_object_free(obj);
    loom_attrs_free(a);
}

/* c with num_classes set to its file's: accepted */
static void expect_num_classes_accepted(const tiny_config *c, int64_t classes)
{
    const tiny_attr over = { "num_classes", TINY_INT, (double)classes, { 0 }, 0, NULL };
    expect_over_accepted(c, &over);
}

static void tiny_regnet_matches_torchvision(void **state)
{
    (void)state;
    check_tiny(&tiny_regnet);
}

static void regnet_bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_regnet;
    expect_attr_refused(c, "depth", 0, -1, "attribute 'depth' must be in [1, 256]");
    expect_attr_refused(c, "w_0", 0, 12, "attribute 'w_0' must be a multiple of 8");
    expect_attr_refused(c, "w_a", 1, -1.0, "attribute 'w_a'");
    expect_attr_refused(c, "w_m", 1, 1.0, "attribute 'w_m'");
    expect_attr_refused(c, "group_width", 0, 0, "attribute 'group_width'");
    expect_attr_refused(c, "bottleneck_multiplier", 1, 0.0, "attribute 'bottleneck_multiplier'");
    expect_attr_refused(c, "se_ratio", 1, 1.5, "attribute 'se_ratio'");
    expect_attr_refused(c, "stem_width", 0, 0, "attribute 'stem_width'");
    /* bottleneck_multiplier 1.3: stage 2 is 18 wide, its bottleneck round(18 * 1.3) = 23, which does not split into
    ** 23 // 8 = 2 groups (torchvision's Conv2d refuses it too) */
    expect_attr_refused(c, "bottleneck_multiplier", 1, 1.3, "stage 2's bottleneck width 23 is not divisible by its "
                                                            "2 groups (group_width 8)");
}

/* attributes the tiny file does not fit: the first key that differs */
static void regnet_file_not_fitting_names_the_key(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_regnet;
    /* a wider stem: stem.0 is [8, 3, 3, 3] in the file */
    expect_attr_refused(c, "stem_width", 0, 16, "key 'stem.0.weight' is f32[8,3,3,3] in the weights file, "
                                                "expected f32[16,3,3,3]");
    /* w_0 16: the first stage is 16 wide */
    expect_attr_refused(c, "w_0", 0, 16, "'trunk_output.block1.block1-0.proj.0.weight' is f32[8,8,1,1] in the "
                                         "weights file, expected f32[16,8,1,1]");
    /* bottleneck_multiplier 2: f.a is twice as wide */
    expect_attr_refused(c, "bottleneck_multiplier", 1, 2.0, "key 'trunk_output.block1.block1-0.f.a.0.weight' is "
                                                            "f32[8,8,1,1] in the weights file, expected f32[16,8,1,1]");
    /* one block fewer: the file's last block is unexpected */
    expect_attr_refused(c, "depth", 0, 3, "trunk_output.block3.block3-1");
    /* no squeeze-excitation: the file's f.se keys are unexpected */
    expect_attr_refused(c, "se_ratio", 1, 0.0, "f.se.");
    /* the classes are the file's */
    expect_attr_refused(c, "num_classes", 0, 12, "key 'fc.weight' has 10 classes in the weights file, attribute "
                                                 "num_classes is 12");
    expect_num_classes_accepted(c, 10);
}

static void tiny_shufflenet_matches_torchvision(void **state)
{
    (void)state;
    check_tiny(&tiny_shufflenet);
}

static void shufflenet_bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_shufflenet;
    const tiny_attr four = { "stages_out_channels", TINY_INTS, 0, { 8, 16, 32, 64 }, 4, NULL };
    expect_over_refused(c, &four, "attribute 'stages_out_channels' must hold 5 ints, not 4");
    const tiny_attr two = { "stages_repeats", TINY_INTS, 0, { 2, 1 }, 2, NULL };
    expect_over_refused(c, &two, "attribute 'stages_repeats' must hold 3 ints, not 2");
    const tiny_attr zero = { "stages_repeats", TINY_INTS, 0, { 2, 0, 1 }, 3, NULL };
    expect_over_refused(c, &zero, "attribute 'stages_repeats' [1] is 0");
    const tiny_attr odd = { "stages_out_channels", TINY_INTS, 0, { 8, 16, 33, 64, 128 }, 5, NULL };
    expect_over_refused(c, &odd, "attribute 'stages_out_channels' [2] is 33: a stage's width must be even");
    const tiny_attr neg = { "stages_out_channels", TINY_INTS, 0, { -8, 16, 32, 64, 128 }, 5, NULL };
    expect_over_refused(c, &neg, "attribute 'stages_out_channels' [0] is -8");
}

static void shufflenet_file_not_fitting_names_the_key(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_shufflenet;
    const tiny_attr wider = { "stages_out_channels", TINY_INTS, 0, { 8, 24, 32, 64, 128 }, 5, NULL };
    expect_over_refused(c, &wider, "key 'stage2.0.branch1.2.weight' is f32[8,8,1,1] in the weights file, "
                                   "expected f32[12,8,1,1]");
    const tiny_attr shallower = { "stages_repeats", TINY_INTS, 0, { 1, 1, 1 }, 3, NULL };
    expect_over_refused(c, &shallower, "stage2.1.");
    expect_attr_refused(c, "num_classes", 0, 1000, "key 'fc.weight' has 10 classes in the weights file");
    expect_num_classes_accepted(c, 10);
}

static void tiny_mnasnet_matches_torchvision(void **state)
{
    (void)state;
    check_tiny(&tiny_mnasnet);
}

static void mnasnet_bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_mnasnet;
    expect_attr_refused(c, "alpha", 1, 0.0, "attribute 'alpha' must be in (0, 16]");
    expect_attr_refused(c, "alpha", 1, -0.5, "attribute 'alpha'");
    expect_attr_refused(c, "dropout", 1, 1.5, "attribute 'dropout' must be in [0, 1]");
    /* dropout is the identity at inference: any in range is accepted */
    const tiny_attr dropout = { "dropout", TINY_FLOAT, 0.5, { 0 }, 0, NULL };
    expect_over_accepted(c, &dropout);
}

static void mnasnet_file_not_fitting_names_the_key(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_mnasnet;
    /* alpha 0.5: the stem is 16 wide */
    expect_attr_refused(c, "alpha", 1, 0.5, "key 'layers.0.weight' is f32[8,3,3,3] in the weights file, "
                                            "expected f32[16,3,3,3]");
    expect_attr_refused(c, "num_classes", 0, 1000, "key 'classifier.1.weight' has 10 classes in the weights file");
    expect_num_classes_accepted(c, 10);
}

static void tiny_resnet_basic_matches_torchvision(void **state)
{
    (void)state;
    check_tiny(&tiny_resnet_basic);
}

static void tiny_resnet_bottleneck_matches_torchvision(void **state)
{
    (void)state;
    check_tiny(&tiny_resnet_bottleneck);
}

static void resnet_bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_resnet_basic;
    const tiny_attr wide = { "block", TINY_STRING, 0, { 0 }, 0, "wide" };
    expect_over_refused(c, &wide, "attribute 'block' must be 'basic' or 'bottleneck', not 'wide'");
    const tiny_attr three = { "layers", TINY_INTS, 0, { 2, 1, 1 }, 3, NULL };
    expect_over_refused(c, &three, "attribute 'layers' must hold 4 ints, not 3");
    const tiny_attr zero = { "layers", TINY_INTS, 0, { 2, 0, 1, 1 }, 4, NULL };
    expect_over_refused(c, &zero, "attribute 'layers' [1] is 0, not in [1, 256]");
    const tiny_attr five = { "widths", TINY_INTS, 0, { 8, 16, 24, 32, 40 }, 5, NULL };
    expect_over_refused(c, &five, "attribute 'widths' must hold 4 ints, not 5");
    const tiny_attr neg = { "widths", TINY_INTS, 0, { 8, -16, 24, 32 }, 4, NULL };
    expect_over_refused(c, &neg, "attribute 'widths' [1] is -16");
    expect_attr_refused(c, "stem_width", 0, 0, "attribute 'stem_width' is 0");
    expect_attr_refused(c, "groups", 0, 2, "block 'basic' takes groups 1 and width_per_group 64 only");
    expect_attr_refused(c, "width_per_group", 0, 32, "block 'basic' takes groups 1 and width_per_group 64 only");
    expect_attr_refused(&tiny_resnet_bottleneck, "width_per_group", 0, 4, "stage 1's bottleneck width");
}

/* attributes the tiny files do not fit: the first key that differs */
static void resnet_file_not_fitting_names_the_key(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_resnet_basic;
    expect_attr_refused(c, "stem_width", 0, 16, "key 'conv1.weight' is f32[8,3,7,7] in the weights file, "
                                                "expected f32[16,3,7,7]");
    /* the default widths, torchvision's */
    const tiny_attr unset = { "widths", TINY_INTS, 0, { 64, 128, 256, 512 }, 4, NULL };
    expect_over_refused(c, &unset, "key 'layer1.0.conv1.weight' is f32[8,8,3,3] in the weights file, "
                                   "expected f32[64,8,3,3]");
    const tiny_attr bottleneck = { "block", TINY_STRING, 0, { 0 }, 0, "bottleneck" };
    expect_over_refused(c, &bottleneck, "key 'layer1.0.conv1.weight' is f32[8,8,3,3] in the weights file, "
                                        "expected f32[8,8,1,1]");
    const tiny_attr shallower = { "layers", TINY_INTS, 0, { 1, 1, 1, 1 }, 4, NULL };
    expect_over_refused(c, &shallower, "unexpected key 'layer1.1.");
    expect_attr_refused(c, "num_classes", 0, 12, "key 'fc.weight' has 10 classes in the weights file, attribute "
                                                 "num_classes is 12");
    expect_num_classes_accepted(c, 10);
    /* groups 1: the 3x3 conv of the bottleneck is dense, 2 wide (int(8 * 16 / 64) * 1) */
    expect_attr_refused(&tiny_resnet_bottleneck, "groups", 0, 1, "key 'layer1.0.conv1.weight' is f32[4,8,1,1] in "
                                                                 "the weights file, expected f32[2,8,1,1]");
}

static void tiny_effnet_matches_torchvision(void **state)
{
    (void)state;
    check_tiny(&tiny_effnet);
}

static void effnet_bad_attributes_name_the_attribute(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_effnet;
    const tiny_attr short_row = { "stages", TINY_INTS, 0, { 1, 1, 3, 1, 8, 8 }, 6, NULL };
    expect_over_refused(c, &short_row, "attribute 'stages' must hold 1 to 8 rows of 7 ints (fused, expand_ratio, "
                                       "kernel, stride, in, out, layers), not 6 ints");
    const tiny_attr stride3 = { "stages", TINY_INTS, 0, { 1, 1, 3, 1, 8, 8, 2, 1, 4, 3, 3, 8, 16, 2 }, 14, NULL };
    expect_over_refused(c, &stride3, "attribute 'stages' row 1: stride is 3, not in [1, 2]");
    const tiny_attr fused2 = { "stages", TINY_INTS, 0, { 2, 1, 3, 1, 8, 8, 2 }, 7, NULL };
    expect_over_refused(c, &fused2, "attribute 'stages' row 0: fused is 2, not in [0, 1]");
    const tiny_attr even = { "stages", TINY_INTS, 0, { 1, 1, 4, 1, 8, 8, 2 }, 7, NULL };
    expect_over_refused(c, &even, "attribute 'stages' row 0: kernel 4 is even");
    const tiny_attr chain = { "stages", TINY_INTS, 0, { 1, 1, 3, 1, 8, 8, 2, 1, 4, 3, 2, 16, 16, 2 }, 14, NULL };
    expect_over_refused(c, &chain, "attribute 'stages' row 1: in is 16, row 0's out 8");
    expect_attr_refused(c, "last_channel", 0, 0, "attribute 'last_channel' is 0");
}

static void effnet_file_not_fitting_names_the_key(void **state)
{
    (void)state;
    const tiny_config *c = &tiny_effnet;
    expect_attr_refused(c, "last_channel", 0, 64, "key 'features.4.0.weight' is f32[32,24,1,1] in the weights "
                                                  "file, expected f32[64,24,1,1]");
    /* unset: torchvision's 4 x 24 */
    const tiny_attr stages = { "stages", TINY_INTS, 0, TINY_EFFNET_STAGES, 21, NULL };
    const tiny_config no_last = { c->cls, c->dir, { stages } };
    expect_over_refused(&no_last, &stages, "expected f32[96,24,1,1]");
    /* in 12 and out 12 are adjusted to 16 (_make_divisible), as torchvision's configs do */
    const tiny_attr odd = { "stages", TINY_INTS, 0, { 1, 1, 3, 1, 12, 12, 2, 1, 4, 3, 2, 12, 16, 2, 0, 4, 3, 2,
                                                      16, 24, 2 }, 21, NULL };
    expect_over_refused(c, &odd, "key 'features.0.0.weight' is f32[8,3,3,3] in the weights file, expected "
                                 "f32[16,3,3,3]");
    const tiny_attr shallower = { "stages", TINY_INTS, 0, { 1, 1, 3, 1, 8, 8, 2, 1, 4, 3, 2, 8, 16, 2, 0, 4, 3, 2,
                                                            16, 24, 1 }, 21, NULL };
    expect_over_refused(c, &shallower, "unexpected key 'features.3.1.");
    expect_attr_refused(c, "num_classes", 0, 1000, "key 'classifier.1.weight' has 10 classes in the weights file");
    expect_num_classes_accepted(c, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_regnet_matches_torchvision),
        cmocka_unit_test(regnet_bad_attributes_name_the_attribute),
        cmocka_unit_test(regnet_file_not_fitting_names_the_key),
        cmocka_unit_test(tiny_shufflenet_matches_torchvision),
        cmocka_unit_test(shufflenet_bad_attributes_name_the_attribute),
        cmocka_unit_test(shufflenet_file_not_fitting_names_the_key),
        cmocka_unit_test(tiny_mnasnet_matches_torchvision),
        cmocka_unit_test(mnasnet_bad_attributes_name_the_attribute),
        cmocka_unit_test(mnasnet_file_not_fitting_names_the_key),
        cmocka_unit_test(tiny_resnet_basic_matches_torchvision),
        cmocka_unit_test(tiny_resnet_bottleneck_matches_torchvision),
        cmocka_unit_test(resnet_bad_attributes_name_the_attribute),
        cmocka_unit_test(resnet_file_not_fitting_names_the_key),
        cmocka_unit_test(tiny_effnet_matches_torchvision),
        cmocka_unit_test(effnet_bad_attributes_name_the_attribute),
        cmocka_unit_test(effnet_file_not_fitting_names_the_key),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
