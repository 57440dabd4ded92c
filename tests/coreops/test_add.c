/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_add.c - core.add against torch.add: every dtype torch adds (float8
** has no torch add), broadcasting, alpha, integer wrap-around, a strided
** input; and the errors for mismatched dtypes, shapes and alpha.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_tensor *add(const loom_tensor *a, const loom_tensor *b, double alpha, int set_alpha,
                        loom_status *st)
{
    loom_attrs *attrs = NULL;
    loom_tensor *out = NULL;
    if (set_alpha) {
        assert_int_equal(loom_attrs_new(&attrs), LOOM_OK);
        assert_int_equal(loom_attrs_set_float(attrs, "alpha", alpha), LOOM_OK);
    }
    *st = tu_call("core.add", (const loom_tensor *[]){ a, b }, 2, attrs, NULL, &out);
    loom_attrs_free(attrs);
    return out;
}

static void check_golden(const char *stem, double alpha, int set_alpha)
{
    char name[96];
    loom_status st;
    snprintf(name, sizeof name, "coreops/%s_input", stem);
    loom_tensor *a = tu_npy(name);
    snprintf(name, sizeof name, "coreops/%s_other", stem);
    loom_tensor *b = tu_npy(name);
    snprintf(name, sizeof name, "coreops/%s_output", stem);
    loom_tensor *want = tu_npy(name);
    loom_tensor *got = add(a, b, alpha, set_alpha, &st);
    if (st != LOOM_OK)
        fail_msg("%s: %s", stem, loom_last_error());
    /* torch computes input + alpha * other with one rounding per element
    ** (opmath float, fused for alpha != 1), which the kernel reproduces */
    tu_assert_identical(got, want, stem);
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(want);
    loom_tensor_free(got);
}

/* [3,4] + [4] for each dtype, bit-exact */
static void add_broadcasts_like_torch_for_every_dtype(void **state)
{
    static const char *const names[] = { "f32", "f64", "f16", "bf16", "i8", "u8", "i16", "i32",
                                         "i64", "bool", "c64", "c128" };
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char stem[32];
        snprintf(stem, sizeof stem, "add_%s", names[i]);
        check_golden(stem, 1.0, 0);
    }
}

static void add_applies_alpha_and_wraps_integers(void **state)
{
    (void)state;
    check_golden("add_f32_alpha", 2.5, 1);
    check_golden("add_i8_alpha", 3.0, 1);
}

/* input given as a transposed view of a [4,3] buffer */
static void add_reads_strided_input(void **state)
{
    loom_status st;
    (void)state;
    loom_tensor *at = tu_npy("coreops/add_f32_strided_input_t"), *b = tu_npy("coreops/add_f32_strided_other");
    loom_tensor *want = tu_npy("coreops/add_f32_strided_output"), *view;
    int64_t shape[2] = { at->shape[1], at->shape[0] }, strides[2] = { 1, at->shape[1] };
    assert_int_equal(loom_tensor_wrap(&view, loom_data(at), LOOM_DTYPE_F32, 2, shape, strides, NULL),
                     LOOM_OK);
    loom_tensor *got = add(view, b, 1.0, 0, &st);
    assert_int_equal(st, LOOM_OK);
    tu_assert_identical(got, want, "add_f32_strided");
    loom_tensor_free(got);
    loom_tensor_free(view);
    loom_tensor_free(at);
    loom_tensor_free(b);
    loom_tensor_free(want);
}

/* A plan of core.add (prepare: checks, broadcast and iteration once) gives
** the goldens bit for bit, on compact inputs and, through the general path,
** on a strided view of the shape the plan was made for. */
static void planned_add_matches_the_goldens(void **state)
{
    static const char *const names[] = { "add_f32", "add_i8", "add_c64", "add_f32_alpha" };
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char name[96];
        loom_plan *plan = NULL;
        loom_attrs *attrs = NULL;
        loom_tensor *out = NULL;
        snprintf(name, sizeof name, "coreops/%s_input", names[i]);
        loom_tensor *a = tu_npy(name);
        snprintf(name, sizeof name, "coreops/%s_other", names[i]);
        loom_tensor *b = tu_npy(name);
        snprintf(name, sizeof name, "coreops/%s_output", names[i]);
        loom_tensor *want = tu_npy(name);
        const loom_tensor *in[2] = { a, b };
        loom_attrs_new(&attrs);
        if (strstr(names[i], "alpha") != NULL)
            loom_attrs_set_float(attrs, "alpha", 2.5);
        assert_int_equal(loom_plan_create(&plan, loom_op_find("core.add"), in, 2, attrs, NULL), LOOM_OK);
        for (int rep = 0; rep < 2; rep++) {
            assert_int_equal(loom_plan_run(plan, in, 2, &out, 1), LOOM_OK);
            tu_assert_identical(out, want, names[i]);
            loom_tensor_free(out);
            out = NULL;
        }
        loom_plan_free(plan);
        loom_attrs_free(attrs);
        loom_tensor_free(a);
        loom_tensor_free(b);
        loom_tensor_free(want);
    }
    /* the strided golden through a plan made for its shape */
    loom_tensor *at = tu_npy("coreops/add_f32_strided_input_t"), *b = tu_npy("coreops/add_f32_strided_other");
    loom_tensor *want = tu_npy("coreops/add_f32_strided_output"), *view, *out = NULL;
    int64_t shape[2] = { at->shape[1], at->shape[0] }, strides[2] = { 1, at->shape[1] };
    loom_plan *plan = NULL;
    assert_int_equal(loom_tensor_wrap(&view, loom_data(at), LOOM_DTYPE_F32, 2, shape, strides, NULL), LOOM_OK);
    const loom_tensor *in[2] = { want, b };   /* described compact */
    const loom_tensor *run_in[2] = { view, b };
    assert_int_equal(loom_plan_create(&plan, loom_op_find("core.add"), in, 2, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_plan_run(plan, run_in, 2, &out, 1), LOOM_OK);
    tu_assert_identical(out, want, "add_f32_strided (planned)");
    loom_tensor_free(out);
    loom_plan_free(plan);
    loom_tensor_free(view);
    loom_tensor_free(at);
    loom_tensor_free(b);
    loom_tensor_free(want);
}

static void add_rejects_bad_arguments(void **state)
{
    float f[6] = { 0 };
    int32_t i[6] = { 0 };
    int64_t s23[2] = { 2, 3 }, s4[1] = { 4 };
    loom_tensor *a, *b, *c, *out;
    loom_status st;
    (void)state;
    assert_int_equal(loom_tensor_wrap(&a, f, LOOM_DTYPE_F32, 2, s23, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&b, i, LOOM_DTYPE_I32, 2, s23, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&c, f, LOOM_DTYPE_F32, 1, s4, NULL, NULL), LOOM_OK);

    out = add(a, b, 1.0, 0, &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_null(out);
    assert_non_null(strstr(loom_last_error(), "same dtype"));

    out = add(a, c, 1.0, 0, &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "broadcast"));

    out = add(b, b, 0.5, 1, &st);
    assert_int_equal(st, LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "alpha"));
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_broadcasts_like_torch_for_every_dtype),
        cmocka_unit_test(add_applies_alpha_and_wraps_integers),
        cmocka_unit_test(add_reads_strided_input),
        cmocka_unit_test(planned_add_matches_the_goldens),
        cmocka_unit_test(add_rejects_bad_arguments),
    };
    return cmocka_run_group_tests_name("coreops_add", tests, tu_setup, tu_teardown);
}
