/* SPDX-License-Identifier: BSD-3-Clause */
/* test_dispatch.c - backend policy, fallback, LOOM_STRICT, verbose lines,
** argument checking and preallocated outputs, on the mock packs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <setjmp.h>
#include <cmocka.h>

#include "packs_util.h"

/* Run mock.double on n elements; returns status, fills info. */
static loom_status run_double(int64_t n, loom_dispatch_info *info, float *result)
{
    float x[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    loom_tensor *in = f32_tensor(x, n), *out = NULL;
    loom_status st = loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &out, 1, NULL);
    if (st == LOOM_OK && result != NULL)
        *result = ((float *)out->data)[n - 1];
    loom_last_dispatch(info);
    loom_tensor_free(out);
    loom_tensor_free(in);
    return st;
}

static void default_policy_prefers_builtin_backends(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    float r = 0;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(run_double(2, &info, &r), LOOM_OK);
    assert_string_equal(info.backend, "cpu");
    assert_true(r == 4.0f);
    assert_int_equal(info.fallback, 0);
}

static void backends_list_orders_and_falls_back(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    assert_int_equal(packs_init(NULL, "fast,cpu", 0, NULL), LOOM_OK);
    assert_int_equal(run_double(3, &info, NULL), LOOM_OK);
    assert_string_equal(info.backend, "fast");
    assert_int_equal(info.fallback, 0);
    assert_int_equal(run_double(6, &info, NULL), LOOM_OK);
    assert_string_equal(info.backend, "cpu");
    assert_int_equal(info.fallback, 1);
    assert_non_null(strstr(info.text, "fast:mock: declined: only up to 4 elements"));
}

static void strict_turns_a_fallback_into_an_error(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    assert_int_equal(packs_init(NULL, "fast,cpu", 1, NULL), LOOM_OK);
    assert_int_equal(run_double(3, &info, NULL), LOOM_OK);
    assert_int_equal(run_double(6, &info, NULL), LOOM_ESTRICT);
    assert_non_null(strstr(loom_last_error(), "LOOM_STRICT=1"));
    assert_non_null(strstr(loom_last_error(), "only up to 4 elements"));
}

static void per_op_override_and_exclusion(void **state)
{
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    assert_int_equal(packs_init(NULL, "cpu;mock.d*=fast,cpu", 0, NULL), LOOM_OK);
    assert_int_equal(run_double(2, &info, NULL), LOOM_OK);
    assert_string_equal(info.backend, "fast");
    assert_int_equal(packs_init(NULL, "fast", 0, NULL), LOOM_OK);
    assert_int_equal(run_double(6, &info, NULL), LOOM_ENOTSUP);
    assert_non_null(strstr(loom_last_error(), "excluded by LOOM_BACKENDS"));
    assert_non_null(strstr(loom_last_error(), "no kernel can run this call"));
}

static void forced_backend_in_call_options(void **state)
{
    float x[2] = { 1, 2 };
    loom_tensor *in = f32_tensor(x, 2), *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    opt.backend = "fast";
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &out, 1, &opt), LOOM_OK);
    loom_last_dispatch(&info);
    assert_string_equal(info.backend, "fast");
    loom_tensor_free(out);
    out = NULL;
    opt.backend = "nope";
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &out, 1, &opt), LOOM_ENOTSUP);
    assert_null(out);
    loom_tensor_free(in);
}

static void verbose_two_prints_one_line_per_call(void **state)
{
    FILE *log = tmpfile();
    char buf[4096] = "";
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    assert_int_equal(packs_init(NULL, "fast,cpu", 0, log), LOOM_OK);
    long start = ftell(log);
    assert_int_equal(run_double(6, &info, NULL), LOOM_OK);
    fflush(log);
    fseek(log, start, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "dispatch mock.double (f32[6] on cpu) -> cpu (cpu:mock) [fallback]"));
    assert_non_null(strstr(buf, "fast:mock: declined: only up to 4 elements"));
    /* the candidates that lose say why in the user's terms: a backend the
    ** list leaves out is excluded, one after the chosen one is lower in it */
    packs_init(NULL, "fast,cpu", 0, NULL);
    assert_int_equal(run_double(2, &info, NULL), LOOM_OK);
    assert_non_null(strstr(info.text, "-> fast (fast:mock); cpu:mock: lower in LOOM_BACKENDS"));
    packs_init(NULL, "cpu", 0, NULL);
    assert_int_equal(run_double(2, &info, NULL), LOOM_OK);
    assert_non_null(strstr(info.text, "-> cpu (cpu:mock); fast:mock: excluded by LOOM_BACKENDS"));
    packs_init(NULL, NULL, 0, NULL);
    fclose(log);
}

static void bad_arguments_are_named(void **state)
{
    double d[2] = { 1, 2 };
    float f[2] = { 1, 2 };
    int64_t n = 2;
    loom_tensor *dt = NULL, *ft = f32_tensor(f, 2), *out = NULL;
    loom_attrs *attrs = NULL;
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    loom_tensor_wrap(&dt, d, LOOM_DTYPE_F64, 1, &n, NULL, NULL);
    /* A dtype no kernel takes. */
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&dt, 1, NULL, &out, 1, NULL), LOOM_ENOTSUP);
    assert_non_null(strstr(loom_last_error(), "f64 of 'input'"));
    /* A missing input, too many inputs, too many outputs. */
    const loom_tensor *none[2] = { NULL, NULL };
    assert_int_equal(loom_run("mock.double", none, 1, NULL, &out, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "mock.double: required input 'input' (#0) is missing"));
    assert_int_equal(loom_run("mock.double", none, 2, NULL, &out, 1, NULL), LOOM_EINVAL);
    loom_tensor *outs[2] = { NULL, NULL };
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&ft, 1, NULL, outs, 2, NULL), LOOM_EINVAL);
    /* Unknown attribute, wrong attribute type. */
    loom_attrs_new(&attrs);
    loom_attrs_set_int(attrs, "nope", 1);
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&ft, 1, attrs, &out, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "no attribute 'nope' (attributes: scale)"));
    loom_attrs_free(attrs);
    loom_attrs_new(&attrs);
    loom_attrs_set_string(attrs, "scale", "big");
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&ft, 1, attrs, &out, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "attribute 'scale' must be float, got string"));
    assert_int_equal(loom_attrs_parse(attrs, "mock.double", "scale", "abc"), LOOM_EINVAL);
    assert_int_equal(loom_attrs_parse(attrs, "mock.double", "scale", "3"), LOOM_OK);
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&ft, 1, attrs, &out, 1, NULL), LOOM_OK);
    assert_true(((float *)out->data)[1] == 6.0f);
    loom_tensor_free(out);
    out = NULL;
    loom_attrs_free(attrs);
    /* An unknown op names itself. */
    assert_int_equal(loom_run("mock.nope", NULL, 0, NULL, NULL, 0, NULL), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "'mock.nope'"));
    loom_tensor_free(dt);
    loom_tensor_free(ft);
}

static void preallocated_outputs_are_checked_and_written_in_place(void **state)
{
    float x[3] = { 1, 2, 3 }, y[3] = { 0 }, z[2] = { 0 };
    loom_tensor *in = f32_tensor(x, 3), *good = f32_tensor(y, 3), *bad = f32_tensor(z, 2);
    (void)state;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &good, 1, NULL), LOOM_OK);
    assert_true(y[2] == 6.0f);
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &bad, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "output 'output' was supplied as f32[2] but the op produces f32[3]"));
    loom_tensor_free(in);
    loom_tensor_free(good);
    loom_tensor_free(bad);
}

/* A caller's tensors may be bare loom_tensor structs, allocated to their
** exact size: the core reads nothing past them (ASan checks the heap ones). */
static void bare_caller_tensors_are_read_only_within_themselves(void **state)
{
    float x[3] = { 1, 2, 3 }, y[3] = { 0 };
    int64_t shape[1] = { 3 };
    loom_tensor *in = malloc(sizeof *in), *out = malloc(sizeof *out);
    (void)state;
    assert_non_null(in);
    assert_non_null(out);
    *in = (loom_tensor){ .data = x, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 1,
                         .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape };
    *out = *in;
    out->data = y;
    assert_int_equal(packs_init(NULL, NULL, 0, NULL), LOOM_OK);
    assert_int_equal(loom_run("mock.double", (const loom_tensor *const *)&in, 1, NULL, &out, 1, NULL), LOOM_OK);
    assert_true(y[0] == 2.0f && y[2] == 6.0f);
    free(in);
    free(out);
}

static void dlpack_round_trip_keeps_data_and_calls_the_deleter(void **state)
{
    int64_t shape[2] = { 2, 3 };
    loom_tensor *t = NULL, *back = NULL;
    loom_dlpack_managed *m = NULL;
    (void)state;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    ((float *)t->data)[5] = 7.5f;
    assert_int_equal(loom_tensor_to_dlpack(&m, t), LOOM_OK);
    assert_int_equal(m->version.major, 1);
    assert_int_equal(m->dl_tensor.dtype.code, LOOM_DL_FLOAT);
    assert_int_equal(m->dl_tensor.shape[1], 3);
    assert_int_equal(loom_tensor_from_dlpack(&back, m), LOOM_OK);
    assert_true(((float *)loom_data(back))[5] == 7.5f);
    loom_tensor_free(back);   /* runs m's deleter, which frees t */
    m = calloc(1, sizeof *m);
    m->version.major = 2;
    assert_int_equal(loom_tensor_from_dlpack(&back, m), LOOM_EABI);
    free(m);
}

/* A producer's DLPack 0.x (unversioned) tensor: a transposed 2x3 view of a
** row-major 3x2 block, so the import keeps strides; the deleter runs once,
** at loom_tensor_free, and a strided import runs through an op. */
static int legacy_deleted;
static void legacy_deleter(loom_dlpack_legacy *self)
{
    legacy_deleted++;
    free(self->manager_ctx);
    free(self);
}

static void dlpack_legacy_import_keeps_strides_and_ownership(void **state)
{
    (void)state;
    static int64_t shape[2] = { 2, 3 }, strides[2] = { 1, 2 };
    float *data = malloc(6 * sizeof *data);
    for (int i = 0; i < 6; i++)
        data[i] = (float)i;            /* [[0,1],[2,3],[4,5]]; the view is its transpose */
    loom_dlpack_legacy *m = calloc(1, sizeof *m);
    m->dl_tensor = (loom_tensor){ .data = data, .device = { LOOM_DEVICE_CPU, 0 }, .ndim = 2,
                                  .dtype = { LOOM_DL_FLOAT, 32, 1 }, .shape = shape, .strides = strides };
    m->manager_ctx = data;
    m->deleter = legacy_deleter;
    loom_tensor *t = NULL, *out = NULL;
    assert_int_equal(loom_tensor_from_dlpack_legacy(&t, m), LOOM_OK);
    assert_false(loom_is_contiguous(t));
    assert_true(((float *)loom_data(t))[2] == 2.0f);
    /* mock.double reads compact inputs only: the core copies the view */
    assert_int_equal(loom_run("mock.double", (const loom_tensor *[]){ t }, 1, NULL, &out, 1, NULL), LOOM_OK);
    const float want[6] = { 0, 4, 8, 2, 6, 10 };
    assert_memory_equal(loom_data(out), want, sizeof want);
    loom_tensor_free(out);
    assert_int_equal(legacy_deleted, 0);
    loom_tensor_free(t);
    assert_int_equal(legacy_deleted, 1);
    /* a lying tensor is refused and stays the caller's */
    loom_dlpack_legacy bad = { .dl_tensor = { .data = NULL, .ndim = -1 } };
    assert_int_not_equal(loom_tensor_from_dlpack_legacy(&t, &bad), LOOM_OK);
    assert_null(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(default_policy_prefers_builtin_backends),
        cmocka_unit_test(backends_list_orders_and_falls_back),
        cmocka_unit_test(strict_turns_a_fallback_into_an_error),
        cmocka_unit_test(per_op_override_and_exclusion),
        cmocka_unit_test(forced_backend_in_call_options),
        cmocka_unit_test(verbose_two_prints_one_line_per_call),
        cmocka_unit_test(bad_arguments_are_named),
        cmocka_unit_test(preallocated_outputs_are_checked_and_written_in_place),
        cmocka_unit_test(bare_caller_tensors_are_read_only_within_themselves),
        cmocka_unit_test(dlpack_round_trip_keeps_data_and_calls_the_deleter),
        cmocka_unit_test(dlpack_legacy_import_keeps_strides_and_ownership),
    };
    int rc = cmocka_run_group_tests_name("dispatch", tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
