/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_tiny.c - the convnet classes that take the architecture as
** attributes (vision.regnet) against torchvision, on tiny configurations
** committed in tests/data/vision/models/tiny_<family>/
** (tools/gen_vision_models_goldens.py write_convnets_tiny: random weights,
** non-trivial batchnorm statistics, a seeded [2, 3, 32, 32] batch), so the
** families' forwards run in CI without the full-size weights:
**  - tiny_regnet: RegNet(BlockParams.from_init_params(depth 4, w_0 8,
**    w_a 8, w_m 2, group_width 8, se_ratio 0.25), stem_width 8, 10
**    classes): stages 8, 16, 32 of depths 1, 1, 2, squeeze-excitation;
**  - the plan of the shape reused (the same bits);
**  - attributes out of range, each refused naming the attribute; attributes
**    the file does not fit, refused naming the key.
**
** Tolerance: max |got - want| <= 1e-4 * max |logit| (the bound;
** f32 on both sides, the batchnorm folding and the GEMMs' summation orders
** differ by a few ulps per layer). Run with the default backends
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

/* One attribute of a tiny configuration (a float when is_float). */
typedef struct tiny_attr {
    const char *name;
    int is_float;
    double v;
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
    { { "depth", 0, 4 }, { "w_0", 0, 8 }, { "w_a", 1, 8.0 }, { "w_m", 1, 2.0 }, { "group_width", 0, 8 },
      { "se_ratio", 1, 0.25 }, { "stem_width", 0, 8 } },
};

static const char *tiny_path(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s/%s", tu_data_path("vision/models"), dir, file);
    return buf;
}

/* c's attributes with `name` replaced by v (or added; name NULL: none). */
static loom_attrs *tiny_attrs(const tiny_config *c, const char *name, int is_float, double v)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    int replaced = 0;
    for (int i = 0; i < TINY_MAX_ATTRS && c->attrs[i].name != NULL; i++) {
        tiny_attr t = c->attrs[i];
        if (name != NULL && strcmp(t.name, name) == 0) {
            t.v = v;
            replaced = 1;
        }
        loom_status st = t.is_float ? loom_attrs_set_float(a, t.name, t.v)
                                    : loom_attrs_set_int(a, t.name, (int64_t)t.v);
        assert_int_equal(st, LOOM_OK);
    }
    if (name != NULL && !replaced)
        assert_int_equal(is_float ? loom_attrs_set_float(a, name, v) : loom_attrs_set_int(a, name, (int64_t)v),
                         LOOM_OK);
    return a;
}

/* The class of c on its file, its logits against torchvision's, twice. */
static void check_tiny(const tiny_config *c)
{
    char w[512], x[512], y[512];
    tiny_path(w, sizeof w, c->dir, "model.safetensors");
    loom_attrs *a = tiny_attrs(c, NULL, 0, 0);
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

/* c with attribute name = v on its own file is refused with a message
** holding needle. */
static void expect_attr_refused(const tiny_config *c, const char *name, int is_float, double v, const char *needle)
{
    char w[512];
    tiny_path(w, sizeof w, c->dir, "model.safetensors");
    loom_attrs *a = tiny_attrs(c, name, is_float, v);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, c->cls, a, w) == LOOM_OK) {
        loom_object_free(obj);
        fail_msg("%s with %s = %g was accepted", c->cls, name, v);
    }
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s with %s = %g: message \"%s\" does not say %s", c->cls, name, v, loom_last_error(), needle);
    loom_attrs_free(a);
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
    /* one block fewer: the file's last block is unexpected */
    expect_attr_refused(c, "depth", 0, 3, "trunk_output.block3.block3-1");
    /* no squeeze-excitation: the file's f.se keys are unexpected */
    expect_attr_refused(c, "se_ratio", 1, 0.0, "f.se.");
    /* the classes are the file's */
    expect_attr_refused(c, "num_classes", 0, 12, "key 'fc.weight' has 10 classes in the weights file, attribute "
                                                 "num_classes is 12");
    /* num_classes set to the file's: accepted */
    char w[512];
    loom_attrs *a = tiny_attrs(c, "num_classes", 0, 10);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, c->cls, a, tiny_path(w, sizeof w, c->dir, "model.safetensors")) != LOOM_OK)
        fail_msg("%s num_classes=10: %s", c->cls, loom_last_error());
    loom_object_free(obj);
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_regnet_matches_torchvision),
        cmocka_unit_test(regnet_bad_attributes_name_the_attribute),
        cmocka_unit_test(regnet_file_not_fitting_names_the_key),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
