/* SPDX-License-Identifier: BSD-3-Clause */
/* test_family.c - an object's state reaches kernels of the pack that made it
** and of that pack's family (P and P-<suffix>), and no other pack's.
**
** Packs (familypack.c): "objfam" makes objfam.box objects and runs
** objfam.shift on cpu; "objfam-extra" (its family) on backend "fast";
** "objfamx" (a longer name without the dash: another family) on backend
** "other". Only these three are loaded (LOOM_PLUGINS_SELECT objfam*). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "packs_util.h"

#define OFFSET 10.5f
#define OTHER_FAMILY "other:objfamx: the object was made by a pack of another family"

/* Start on the family packs with the given LOOM_BACKENDS and make a box. */
static loom_object *family_setup(const char *backends, FILE *log)
{
    loom_object *obj = NULL;
    loom_attrs *attrs = NULL;
    assert_int_equal(packs_init("objfam*", backends, 0, log), LOOM_OK);
    assert_int_equal(packs_scan("objfam.so").result, LOOM_SCAN_LOADED);
    assert_int_equal(packs_scan("objfam-extra.so").result, LOOM_SCAN_LOADED);
    assert_int_equal(packs_scan("objfamx.so").result, LOOM_SCAN_LOADED);
    assert_int_equal(loom_op_kernel_count(loom_op_find("objfam.shift")), 3);
    loom_attrs_new(&attrs);
    assert_int_equal(loom_attrs_parse(attrs, "objfam.box", "offset", "10.5"), LOOM_OK);
    assert_int_equal(loom_object_create(&obj, "objfam.box", attrs, NULL), LOOM_OK);
    loom_attrs_free(attrs);
    return obj;
}

/* Run objfam.shift on {1, 2, 3} with obj, optionally forcing a backend;
** on success checks every value carries the box's offset. */
static loom_status shift(loom_object *obj, const char *backend, loom_dispatch_info *info)
{
    float x[3] = { 1, 2, 3 };
    loom_tensor *in = f32_tensor(x, 3), *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    opt.backend = backend;
    loom_status st = loom_run("objfam.shift", (const loom_tensor *const *)&in, 1, NULL, &out, 1, &opt);
    if (st == LOOM_OK) {
        for (int i = 0; i < 3; i++)
            assert_true(((float *)out->data)[i] == x[i] + OFFSET);
    } else {
        assert_null(out);
    }
    assert_int_equal(loom_last_dispatch(info), LOOM_OK);
    loom_tensor_free(out);
    loom_tensor_free(in);
    return st;
}

static void the_making_pack_runs_its_own_kernel(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    loom_object *obj = family_setup(NULL, NULL);
    /* Default policy: the built-in cpu backend ranks before the others. */
    assert_int_equal(shift(obj, NULL, &info), LOOM_OK);
    assert_string_equal(info.impl, "cpu:objfam");
    loom_object_free(obj);
}

static void a_pack_of_the_family_receives_the_state(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    /* Forced by LOOM_BACKENDS. */
    loom_object *obj = family_setup("fast", NULL);
    assert_int_equal(shift(obj, NULL, &info), LOOM_OK);
    assert_string_equal(info.backend, "fast");
    assert_string_equal(info.impl, "fast:objfam-extra");
    assert_int_equal(info.fallback, 0);
    loom_object_free(obj);
    /* Forced by the call options. */
    obj = family_setup(NULL, NULL);
    assert_int_equal(shift(obj, "fast", &info), LOOM_OK);
    assert_string_equal(info.impl, "fast:objfam-extra");
    loom_object_free(obj);
}

static void a_pack_of_another_family_is_refused(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    /* Forced by LOOM_BACKENDS: nothing else may run, so the call fails. */
    loom_object *obj = family_setup("other", NULL);
    assert_int_equal(shift(obj, NULL, &info), LOOM_ENOTSUP);
    assert_int_equal(loom_last_status(), LOOM_ENOTSUP);
    assert_non_null(strstr(loom_last_error(), "no kernel can run this call"));
    assert_non_null(strstr(loom_last_error(), OTHER_FAMILY));
    assert_null(info.backend);
    assert_non_null(strstr(info.text, OTHER_FAMILY));
    assert_non_null(strstr(info.text, "cpu:objfam: excluded by LOOM_BACKENDS"));
    loom_object_free(obj);
    /* Forced by the call options. */
    obj = family_setup(NULL, NULL);
    assert_int_equal(shift(obj, "other", &info), LOOM_ENOTSUP);
    assert_non_null(strstr(loom_last_error(), OTHER_FAMILY));
    assert_non_null(strstr(info.text, "fast:objfam-extra: another backend was forced for this call"));
    loom_object_free(obj);
}

static void the_refusal_is_no_fallback_and_shows_in_verbose_lines(void **state)
{
    FILE *log = tmpfile();
    char buf[4096] = "";
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    assert_non_null(log);
    /* "other" is preferred but may not touch the box: "fast" runs, and that
    ** is not a fallback (LOOM_STRICT would not object). */
    loom_object *obj = family_setup("other,fast", log);
    long start = ftell(log);
    assert_int_equal(shift(obj, NULL, &info), LOOM_OK);
    assert_string_equal(info.impl, "fast:objfam-extra");
    assert_int_equal(info.fallback, 0);
    assert_non_null(strstr(info.text, OTHER_FAMILY));
    fflush(log);
    fseek(log, start, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "dispatch objfam.shift (f32[3] on cpu) -> fast (fast:objfam-extra)"));
    assert_non_null(strstr(buf, OTHER_FAMILY));
    loom_object_free(obj);
    packs_init(NULL, NULL, 0, NULL);
    fclose(log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_making_pack_runs_its_own_kernel),
        cmocka_unit_test(a_pack_of_the_family_receives_the_state),
        cmocka_unit_test(a_pack_of_another_family_is_refused),
        cmocka_unit_test(the_refusal_is_no_fallback_and_shows_in_verbose_lines),
    };
    int rc = cmocka_run_group_tests_name("family", tests, NULL, NULL);
    unsetenv("LOOM_PLUGINS_SELECT");
    loom_shutdown();
    return rc;
}
