/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_linear.c - the core.linear object: created from a safetensors file
** the test writes, called as a method, compared with
** torch.nn.functional.linear; and the errors for missing, mistyped and
** misshapen weights and for a strided input.
**
** Tolerance: K = 8 products per element, so loom and torch differ by at
** most 2*8*2^-24*(|x||W| + |b|) < 1e-5 for these O(1) values.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"

static char path[256];

static void write_weights(const char *const *names, const loom_tensor *const *ts, int64_t n)
{
    snprintf(path, sizeof path, "/tmp/loom-coreops-linear-%d.safetensors", (int)getpid());
    if (loom_safetensors_write(path, names, ts, n) != LOOM_OK)
        fail_msg("writing %s: %s", path, loom_last_error());
}

static loom_tensor *run_linear(loom_object *obj, const loom_tensor *x, loom_status *st)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_tensor *out = NULL;
    opt.object = obj;
    *st = loom_run("core.linear", (const loom_tensor *[]){ x }, 1, NULL, &out, 1, &opt);
    return out;
}

static void linear_matches_torch(void **state)
{
    (void)state;
    loom_tensor *w = tu_npy("coreops/linear_weight"), *b = tu_npy("coreops/linear_bias"), *x = tu_npy("coreops/linear_input");
    loom_tensor *want = tu_npy("coreops/linear_output"), *want_nb = tu_npy("coreops/linear_output_nobias");
    loom_object *obj;
    loom_status st;

    write_weights((const char *[]){ "weight", "bias" }, (const loom_tensor *[]){ w, b }, 2);
    if (loom_object_create(&obj, "core.linear", NULL, path) != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    assert_string_equal(loom_object_class_name(obj), "core.linear");
    loom_tensor *got = run_linear(obj, x, &st);
    if (st != LOOM_OK)
        fail_msg("call: %s", loom_last_error());
    tu_assert_close(got, want, 0, 1e-5, "linear with bias");
    loom_tensor_free(got);
    loom_object_free(obj);

    write_weights((const char *[]){ "weight" }, (const loom_tensor *[]){ w }, 1);
    assert_int_equal(loom_object_create(&obj, "core.linear", NULL, path), LOOM_OK);
    got = run_linear(obj, x, &st);
    assert_int_equal(st, LOOM_OK);
    tu_assert_close(got, want_nb, 0, 1e-5, "linear without bias");
    loom_tensor_free(got);

    /* a strided input is refused with a message naming it */
    int64_t shape[2] = { 8, 6 }, strides[2] = { 1, 8 };
    loom_tensor *view;
    assert_int_equal(loom_tensor_wrap(&view, loom_data(x), LOOM_DTYPE_F32, 2, shape, strides, NULL), LOOM_OK);
    got = run_linear(obj, view, &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'input'"));
    loom_tensor_free(view);
    loom_object_free(obj);

    unlink(path);
    loom_tensor *all[] = { w, b, x, want, want_nb };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

/* ABI 1.3: the same object from in-memory tensors (borrowed, so they stay
** alive until the object is freed) gives the same output bit for bit */
static void linear_from_tensors_equals_linear_from_a_file(void **state)
{
    (void)state;
    loom_tensor *w = tu_npy("coreops/linear_weight"), *b = tu_npy("coreops/linear_bias"), *x = tu_npy("coreops/linear_input");
    loom_object *from_file, *from_mem;
    loom_status st;

    write_weights((const char *[]){ "weight", "bias" }, (const loom_tensor *[]){ w, b }, 2);
    assert_int_equal(loom_object_create(&from_file, "core.linear", NULL, path), LOOM_OK);
    const loom_named_tensor tensors[2] = { { "bias", b }, { "weight", w } };
    loom_object_options o = LOOM_OBJECT_OPTIONS_INIT;
    o.n_tensors = 2;
    o.tensors = tensors;
    if (loom_object_create_ex(&from_mem, "core.linear", NULL, &o) != LOOM_OK)
        fail_msg("create from tensors: %s", loom_last_error());
    loom_tensor *want = run_linear(from_file, x, &st);
    assert_int_equal(st, LOOM_OK);
    loom_tensor *got = run_linear(from_mem, x, &st);
    assert_int_equal(st, LOOM_OK);
    tu_assert_close(got, want, 0, 0, "linear from tensors");
    loom_tensor_free(got);
    loom_tensor_free(want);
    loom_object_free(from_mem);
    loom_object_free(from_file);

    /* a missing tensor is named as in a file, with where the tensors came from */
    o.n_tensors = 1;
    assert_int_equal(loom_object_create_ex(&from_mem, "core.linear", NULL, &o), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "no tensor 'weight'"));
    unlink(path);
    loom_tensor_free(w);
    loom_tensor_free(b);
    loom_tensor_free(x);
}

static void expect_create_error(const char *needle)
{
    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "core.linear", NULL, path), LOOM_EINVAL);
    assert_null(obj);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not mention '%s'", loom_last_error(), needle);
}

static void bad_weights_are_rejected(void **state)
{
    (void)state;
    double d[8] = { 0 };
    float f[8] = { 0 };
    int64_t s24[2] = { 2, 4 }, s8[1] = { 8 }, s3[1] = { 3 };
    loom_tensor *wd, *w1, *w24, *b3;
    assert_int_equal(loom_tensor_wrap(&wd, d, LOOM_DTYPE_F64, 2, s24, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&w1, f, LOOM_DTYPE_F32, 1, s8, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&w24, f, LOOM_DTYPE_F32, 2, s24, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&b3, f, LOOM_DTYPE_F32, 1, s3, NULL, NULL), LOOM_OK);

    write_weights((const char *[]){ "bias" }, (const loom_tensor *[]){ b3 }, 1);
    expect_create_error("no tensor 'weight'");
    write_weights((const char *[]){ "weight" }, (const loom_tensor *[]){ wd }, 1);
    expect_create_error("expected f32");
    write_weights((const char *[]){ "weight" }, (const loom_tensor *[]){ w1 }, 1);
    expect_create_error("[out_features, in_features]");
    write_weights((const char *[]){ "weight", "bias" }, (const loom_tensor *[]){ w24, b3 }, 2);
    expect_create_error("'bias'");

    /* 0 columns and 2^40 rows: no data, so create must do no per-row work
    ** (this finished in 12 s of looping before; it is immediate now) */
    {
        int64_t s_huge0[2] = { (int64_t)1 << 40, 0 };
        loom_tensor *w0;
        loom_object *huge = NULL;
        assert_int_equal(loom_tensor_wrap(&w0, f, LOOM_DTYPE_F32, 2, s_huge0, NULL, NULL), LOOM_OK);
        write_weights((const char *[]){ "weight" }, (const loom_tensor *[]){ w0 }, 1);
        assert_int_equal(loom_object_create(&huge, "core.linear", NULL, path), LOOM_OK);
        loom_object_free(huge);
        loom_tensor_free(w0);
    }

    loom_object *obj = NULL;
    assert_int_equal(loom_object_create(&obj, "core.linear", NULL, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "weights file"));
    unlink(path);
    loom_tensor_free(wd);
    loom_tensor_free(w1);
    loom_tensor_free(w24);
    loom_tensor_free(b3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(linear_matches_torch),
        cmocka_unit_test(linear_from_tensors_equals_linear_from_a_file),
        cmocka_unit_test(bad_weights_are_rejected),
    };
    return cmocka_run_group_tests_name("coreops_linear", tests, tu_setup, tu_teardown);
}
