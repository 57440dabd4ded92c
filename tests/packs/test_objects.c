/* SPDX-License-Identifier: BSD-3-Clause */
/* test_objects.c - stateful objects: create, call methods, count, destroy. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "packs_util.h"

static int64_t count(loom_object *obj, int64_t n)
{
    float x[8] = { 0 };
    loom_tensor *in = f32_tensor(x, n), *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    int64_t total = -100;
    opt.object = obj;
    if (loom_run("mock.count", (const loom_tensor *const *)&in, 1, NULL, &out, 1, &opt) == LOOM_OK)
        total = *(int64_t *)out->data;
    loom_tensor_free(out);
    loom_tensor_free(in);
    return total;
}

static void objects_keep_state_between_calls(void **state)
{
    loom_object *a = NULL, *b = NULL;
    loom_attrs *attrs = NULL;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    loom_attrs_new(&attrs);
    assert_int_equal(loom_attrs_parse(attrs, "mock.counter", "start", "10"), LOOM_OK);
    assert_int_equal(loom_object_create(&a, "mock.counter", attrs, NULL), LOOM_OK);
    assert_int_equal(loom_object_create(&b, "mock.counter", NULL, NULL), LOOM_OK);
    assert_string_equal(loom_object_class_name(a), "mock.counter");
    assert_int_equal(count(a, 3), 13);
    assert_int_equal(count(a, 2), 15);
    assert_int_equal(count(b, 2), 2);
    assert_int_equal(packs_scan("mock_0good.so").live_objects, 2);
    loom_object_free(a);
    assert_int_equal(packs_scan("mock_0good.so").live_objects, 1);
    loom_object_free(b);
    loom_object_free(NULL);
    loom_attrs_free(attrs);
}

static void methods_need_an_object_of_their_class(void **state)
{
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(count(NULL, 2), -100);
    assert_int_equal(loom_last_status(), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "method of object class mock.counter"));
}

static void bad_class_and_attributes_are_refused(void **state)
{
    loom_object *obj = NULL;
    loom_attrs *attrs = NULL;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "mock.nothing", NULL, NULL), LOOM_ENOENT);
    assert_null(obj);
    loom_attrs_new(&attrs);
    loom_attrs_set_string(attrs, "start", "x");
    assert_int_equal(loom_object_create(&obj, "mock.counter", attrs, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "mock.counter: attribute 'start' must be int"));
    assert_int_equal(loom_object_create(&obj, "mock.counter", NULL, "/nonexistent.safetensors"), LOOM_ENOENT);
    assert_null(obj);
    loom_attrs_free(attrs);
}

static void shutdown_destroys_forgotten_objects(void **state)
{
    loom_object *obj = NULL;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "mock.counter", NULL, NULL), LOOM_OK);
    loom_shutdown();   /* must not leak (ASan) nor crash */
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(packs_scan("mock_0good.so").live_objects, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(objects_keep_state_between_calls),
        cmocka_unit_test(methods_need_an_object_of_their_class),
        cmocka_unit_test(bad_class_and_attributes_are_refused),
        cmocka_unit_test(shutdown_destroys_forgotten_objects),
    };
    int rc = cmocka_run_group_tests_name("objects", tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
