/* SPDX-License-Identifier: BSD-3-Clause */
/* test_object_device.c - an object method goes to the device the object was
** made for (ABI 1.5), then to its inputs' device: on the pack "objdev"
** (objdevpack.c), whose methods have a cpu kernel and a kernel on a fake
** device type (OBJDEV_DEVICE, two devices), for a method without inputs
** (objdev.pop) and one with an input (objdev.scale). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "packs_util.h"

#define OBJDEV_DEVICE 66

/* Start on the objdev pack only and make an objdev.source on device type
** dev (0: the default, the CPU), device id 0 or 1. */
static loom_object *make_source(int32_t dev, int32_t id)
{
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    loom_object *obj = NULL;
    o.device = (loom_dl_device){ dev, id };
    assert_int_equal(loom_object_create_ex(&obj, "objdev.source", NULL, &o), LOOM_OK);
    return obj;
}

static int setup(void **state)
{
    (void)state;
    if (packs_init("objdev*", NULL, 0, NULL) != LOOM_OK)
        return -1;
    return packs_scan("objdev.so").result == LOOM_SCAN_LOADED ? 0 : -1;
}

/* objdev.pop on obj: the device type its kernel ran on, or -1 when the call
** failed; the output's device in *out_dev. */
static int32_t pop(loom_object *obj, loom_dl_device *out_dev, loom_dispatch_info *info)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_tensor *out = NULL;
    int32_t ran = -1;
    opt.object = obj;
    if (loom_run("objdev.pop", NULL, 0, NULL, &out, 1, &opt) == LOOM_OK) {
        ran = *(const int32_t *)out->data;     /* the fake device is host memory */
        *out_dev = out->device;
    } else {
        assert_null(out);
    }
    assert_int_equal(loom_last_dispatch(info), LOOM_OK);
    loom_tensor_free(out);
    return ran;
}

/* objdev.scale on obj with {1, 2, 3} on device in_dev; checks the values on
** success. */
static loom_status scale(loom_object *obj, loom_dl_device in_dev, loom_dispatch_info *info)
{
    float x[3] = { 1, 2, 3 };
    loom_tensor *host_in = f32_tensor(x, 3), *in = NULL, *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_status st;
    opt.object = obj;
    assert_int_equal(loom_tensor_copy_to(&in, host_in, &in_dev), LOOM_OK);
    st = loom_run("objdev.scale", (const loom_tensor *const *)&in, 1, NULL, &out, 1, &opt);
    if (st == LOOM_OK) {
        assert_int_equal(out->device.device_type, in_dev.device_type);
        for (int i = 0; i < 3; i++)
            assert_true(((const float *)out->data)[i] == 2 * x[i]);
    } else {
        assert_null(out);
    }
    assert_int_equal(loom_last_dispatch(info), LOOM_OK);
    loom_tensor_free(out);
    loom_tensor_free(in);
    loom_tensor_free(host_in);
    return st;
}

static void a_method_without_inputs_runs_on_the_objects_device(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    loom_dl_device dev = { 0, 0 };
    loom_object *obj = make_source(OBJDEV_DEVICE, 1);
    (void)state;
    assert_int_equal(pop(obj, &dev, &info), OBJDEV_DEVICE);
    assert_string_equal(info.backend, "fake");
    assert_int_equal(dev.device_type, OBJDEV_DEVICE);
    assert_int_equal(dev.device_id, 1);
    loom_object_free(obj);
}

static void a_cpu_object_runs_input_less_methods_on_the_cpu(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    loom_dl_device dev = { 0, 0 };
    (void)state;
    for (int explicit_cpu = 0; explicit_cpu < 2; explicit_cpu++) {
        loom_object *obj = make_source(explicit_cpu ? LOOM_DEVICE_CPU : 0, 0);
        assert_int_equal(pop(obj, &dev, &info), LOOM_DEVICE_CPU);
        assert_string_equal(info.backend, "cpu");
        assert_int_equal(dev.device_type, LOOM_DEVICE_CPU);
        loom_object_free(obj);
    }
}

/* A method whose kernels are all on the CPU runs there, its result a host
** value, though the object is on the fake device. */
static void a_method_without_a_kernel_there_follows_its_inputs(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_dl_device dev = { 0, 0 };
    loom_tensor *out = NULL;
    loom_object *obj = make_source(OBJDEV_DEVICE, 0);
    (void)state;
    assert_int_equal(pop(obj, &dev, &info), OBJDEV_DEVICE);
    opt.object = obj;
    assert_int_equal(loom_run("objdev.info", NULL, 0, NULL, &out, 1, &opt), LOOM_OK);
    assert_int_equal(loom_last_dispatch(&info), LOOM_OK);
    assert_string_equal(info.backend, "cpu");
    assert_int_equal(out->device.device_type, LOOM_DEVICE_CPU);
    assert_int_equal(*(const int32_t *)out->data, 1);
    loom_tensor_free(out);
    loom_object_free(obj);
}

/* The CPU object is the default and host memory: its methods follow their
** inputs, as before ABI 1.5 (host->object_backend_state serves devices). */
static void a_cpu_object_follows_its_inputs(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    loom_object *obj = make_source(0, 0);
    (void)state;
    assert_int_equal(scale(obj, (loom_dl_device){ LOOM_DEVICE_CPU, 0 }, &info), LOOM_OK);
    assert_string_equal(info.backend, "cpu");
    assert_int_equal(scale(obj, (loom_dl_device){ OBJDEV_DEVICE, 0 }, &info), LOOM_OK);
    assert_string_equal(info.backend, "fake");
    loom_object_free(obj);
}

static void a_device_object_takes_inputs_on_its_device(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    loom_object *obj = make_source(OBJDEV_DEVICE, 0);
    (void)state;
    assert_int_equal(scale(obj, (loom_dl_device){ OBJDEV_DEVICE, 0 }, &info), LOOM_OK);
    assert_string_equal(info.backend, "fake");
    loom_object_free(obj);
}

/* An input on another device than the object's, or on the same type with
** another id, is refused naming both and the input; no kernel runs. */
static void an_input_on_another_device_is_refused_naming_both(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    loom_object *obj = make_source(OBJDEV_DEVICE, 1);
    (void)state;
    assert_int_equal(scale(obj, (loom_dl_device){ LOOM_DEVICE_CPU, 0 }, &info), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "input 'input' is on cpu:0 but the objdev.source object is on "
                                              "device:1"));
    assert_int_equal(scale(obj, (loom_dl_device){ OBJDEV_DEVICE, 0 }, &info), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "is on device:0 but the objdev.source object is on device:1"));
    loom_object_free(obj);
}

/* A plan of a method is made for the object's device as a call is. */
static void plans_follow_the_objects_device(void **state)
{
    loom_object *obj = make_source(OBJDEV_DEVICE, 0);
    const loom_op *op = loom_op_find("objdev.pop");
    loom_plan *plan = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_tensor *out = NULL;
    (void)state;
    opt.object = obj;
    assert_non_null(op);
    assert_int_equal(loom_plan_create(&plan, op, NULL, 0, NULL, &opt), LOOM_OK);
    assert_int_equal(loom_plan_run(plan, NULL, 0, &out, 1), LOOM_OK);
    assert_int_equal(*(const int32_t *)out->data, OBJDEV_DEVICE);
    assert_int_equal(out->device.device_type, OBJDEV_DEVICE);
    loom_tensor_free(out);
    loom_plan_free(plan);

    float x[3] = { 1, 2, 3 };
    loom_tensor *in = f32_tensor(x, 3);
    const loom_op *sc = loom_op_find("objdev.scale");
    assert_int_equal(loom_plan_create(&plan, sc, (const loom_tensor *const *)&in, 1, NULL, &opt), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "is on cpu:0 but the objdev.source object is on device:0"));
    assert_null(plan);
    loom_tensor_free(in);
    loom_object_free(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_method_without_inputs_runs_on_the_objects_device),
        cmocka_unit_test(a_cpu_object_runs_input_less_methods_on_the_cpu),
        cmocka_unit_test(a_method_without_a_kernel_there_follows_its_inputs),
        cmocka_unit_test(a_cpu_object_follows_its_inputs),
        cmocka_unit_test(a_device_object_takes_inputs_on_its_device),
        cmocka_unit_test(an_input_on_another_device_is_refused_naming_both),
        cmocka_unit_test(plans_follow_the_objects_device),
    };
    int rc = cmocka_run_group_tests(tests, setup, NULL);
    loom_shutdown();
    return rc;
}
