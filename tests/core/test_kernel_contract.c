/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_kernel_contract.c - what the core enforces around a kernel's run and
** around loom_shutdown, whatever a pack does:
**  - outputs are re-checked after run(): a kernel that changes an output's
**    rank, shape or data after allocating it, or stores a tensor of its own,
**    fails the call (LOOM_EINTERNAL) and nothing leaks;
**  - a second alloc_output for one output must agree with the first;
**  - scratch sizes near SIZE_MAX fail instead of wrapping to a small block;
**  - LOOM_MAX_ALLOC caps a single output (naming the op, output and size);
**  - attribute value constraints (LOOM_ATTR_FINITE/POSITIVE/NONNEG);
**  - op and object handles from before loom_shutdown fail with LOOM_EINVAL
**    instead of touching freed memory; double frees are refused;
**  - empty tensors: one contiguity rule, no overflow on huge zero-size shapes.
** Uses rogue.so (roguepack.c) from this folder and, for the cap, the real
** fbgemm pack of the build tree.
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "loom/loom.h"

/* Init on this folder's rogue pack (plus the build tree's packs when all). */
static void init_rogue(int all)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    loom_shutdown();
    o.plugin_path = getenv("LOOM_TEST_ROGUE");
    o.no_default_dirs = all ? 0 : 1;
    o.verbose = -1;
    assert_int_equal(loom_init(&o), LOOM_OK);
    assert_non_null(loom_op_find("rogue.misbehave"));
}

static loom_status misbehave(const char *mode, loom_tensor **out)
{
    loom_attrs *a = NULL;
    loom_status st;
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "mode", mode);
    st = loom_run("rogue.misbehave", NULL, 0, a, out, 1, NULL);
    loom_attrs_free(a);
    return st;
}

static void well_behaved_kernel_runs(void **state)
{
    loom_tensor *y = NULL;
    (void)state;
    init_rogue(0);
    assert_int_equal(misbehave("ok", &y), LOOM_OK);
    assert_non_null(y);
    assert_int_equal(y->ndim, 1);
    assert_int_equal(y->shape[0], 4);
    loom_tensor_free(y);
}

static void outputs_changed_after_allocation_fail_the_call(void **state)
{
    static const char *const modes[] = { "ndim", "shape", "data" };
    (void)state;
    init_rogue(0);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        loom_tensor *y = NULL;
        assert_int_equal(misbehave(modes[i], &y), LOOM_EINTERNAL);
        assert_null(y);   /* the core freed its tensor (ASan's leak check sees it) */
        assert_non_null(strstr(loom_last_error(), "changed output 'output' after it was allocated as f32[4]"));
        assert_non_null(strstr(loom_last_error(), "rogue.misbehave"));
    }
}

static void supplied_outputs_are_rechecked_too(void **state)
{
    float buf[4];
    int64_t four = 4;
    loom_tensor *y = NULL, *given = NULL;
    (void)state;
    init_rogue(0);
    assert_int_equal(loom_tensor_wrap(&given, buf, LOOM_DTYPE_F32, 1, &four, NULL, NULL), LOOM_OK);
    y = given;
    assert_int_equal(misbehave("ok", &y), LOOM_OK);
    assert_ptr_equal(y, given);
    assert_int_equal(misbehave("shape", &y), LOOM_EINTERNAL);
    assert_non_null(strstr(loom_last_error(), "changed output"));
    loom_tensor_free(given);
}

static void outputs_must_come_from_alloc_output(void **state)
{
    loom_tensor *y = NULL;
    (void)state;
    init_rogue(0);
    assert_int_equal(misbehave("own", &y), LOOM_EINTERNAL);
    assert_null(y);
    assert_non_null(strstr(loom_last_error(), "instead of through host->alloc_output"));
}

static void second_alloc_output_must_agree(void **state)
{
    loom_tensor *y = NULL;
    (void)state;
    init_rogue(0);
    assert_int_equal(misbehave("twice", &y), LOOM_EINVAL);
    assert_null(y);
    assert_non_null(strstr(loom_last_error(), "already allocated as f32[4]"));
    assert_non_null(strstr(loom_last_error(), "f32[8] disagrees"));
    assert_int_equal(misbehave("twice_same", &y), LOOM_OK);
    loom_tensor_free(y);
}

static void scratch_sizes_near_size_max_fail(void **state)
{
    loom_tensor *y = NULL;
    (void)state;
    init_rogue(0);
    assert_int_equal(misbehave("scratch_wrap", &y), LOOM_ENOMEM);
    assert_non_null(strstr(loom_last_error(), "overflowed"));
    /* once the thread's arena exists (grown by a 1 MiB call), still NULL */
    assert_int_equal(misbehave("scratch_grow", &y), LOOM_ENOMEM);
    assert_int_equal(misbehave("scratch_grow", &y), LOOM_ENOMEM);
    assert_non_null(strstr(loom_last_error(), "overflowed"));
}

static void max_alloc_caps_one_output(void **state)
{
    loom_attrs *a = NULL;
    loom_tensor *y = NULL;
    (void)state;
    setenv("LOOM_MAX_ALLOC", "1M", 1);
    init_rogue(0);
    loom_attrs_new(&a);
    loom_attrs_set_string(a, "mode", "big");
    loom_attrs_set_int(a, "n", 1 << 18);   /* exactly 1 MiB: allowed */
    assert_int_equal(loom_run("rogue.misbehave", NULL, 0, a, &y, 1, NULL), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    loom_attrs_set_int(a, "n", (1 << 18) + 1);
    assert_int_equal(loom_run("rogue.misbehave", NULL, 0, a, &y, 1, NULL), LOOM_ENOMEM);
    assert_null(y);
    assert_non_null(strstr(loom_last_error(), "rogue.misbehave"));
    assert_non_null(strstr(loom_last_error(), "output 'output' (f32[262145])"));
    assert_non_null(strstr(loom_last_error(), "1048580 bytes exceed LOOM_MAX_ALLOC (1048576 bytes"));
    loom_attrs_free(a);
    unsetenv("LOOM_MAX_ALLOC");
}

/* The attack's case: an attribute that forces a 16 GB zeroed output. */
static void attribute_forced_allocation_is_capped(void **state)
{
    float values[4] = { 1, 2, 3, 4 };
    int64_t grad_shape[3] = { 2, 3, 1 }, off_n = 3, val_shape[2] = { 4, 1 };
    int64_t offsets[3] = { 0, 2, 4 };
    float grad[6] = { 0 };
    loom_tensor *g = NULL, *off = NULL, *out = NULL;
    loom_attrs *a = NULL;
    (void)values;
    (void)val_shape;
    (void)state;
    setenv("LOOM_MAX_ALLOC", "1G", 1);
    init_rogue(1);
    if (loom_op_find("fbgemm.jagged_to_padded_dense_backward") == NULL) {
        unsetenv("LOOM_MAX_ALLOC");
        skip();
    }
    loom_tensor_wrap(&g, grad, LOOM_DTYPE_F32, 3, grad_shape, NULL, NULL);
    loom_tensor_wrap(&off, offsets, LOOM_DTYPE_I64, 1, &off_n, NULL, NULL);
    loom_attrs_new(&a);
    assert_int_equal(loom_attrs_parse(a, "fbgemm.jagged_to_padded_dense_backward", "total_L", "2147483647"),
                     LOOM_OK);
    const loom_tensor *in[2] = { g, off };
    assert_int_equal(loom_run("fbgemm.jagged_to_padded_dense_backward", in, 2, a, &out, 1, NULL), LOOM_ENOMEM);
    assert_null(out);
    assert_non_null(strstr(loom_last_error(), "fbgemm.jagged_to_padded_dense_backward"));
    assert_non_null(strstr(loom_last_error(), "LOOM_MAX_ALLOC"));
    loom_attrs_free(a);
    loom_tensor_free(off);
    loom_tensor_free(g);
    unsetenv("LOOM_MAX_ALLOC");
}

static void attribute_constraints_are_enforced(void **state)
{
    const double bad[] = { NAN, INFINITY, -INFINITY, 0.0, -1.0 };
    loom_tensor *y = NULL;
    loom_attrs *a = NULL;
    (void)state;
    init_rogue(0);
    loom_attrs_new(&a);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        loom_attrs_set_float(a, "scale", bad[i]);
        assert_int_equal(loom_run("rogue.misbehave", NULL, 0, a, &y, 1, NULL), LOOM_EINVAL);
        assert_null(y);
        assert_non_null(strstr(loom_last_error(), "attribute 'scale' must be finite and > 0"));
    }
    loom_attrs_set_float(a, "scale", 1e300);   /* finite and > 0: the kernel's to judge */
    assert_int_equal(loom_run("rogue.misbehave", NULL, 0, a, &y, 1, NULL), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    loom_attrs_set_int(a, "n", -1);
    assert_int_equal(loom_run("rogue.misbehave", NULL, 0, a, &y, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "attribute 'n' must be >= 0, got -1"));
    /* the CLI's parser goes through the same check at call time */
    assert_int_equal(loom_attrs_parse(a, "rogue.misbehave", "scale", "nan"), LOOM_OK);
    loom_attrs_set_int(a, "n", 4);
    assert_int_equal(loom_run("rogue.misbehave", NULL, 0, a, &y, 1, NULL), LOOM_EINVAL);
    loom_attrs_free(a);
}

static void op_handles_do_not_survive_shutdown(void **state)
{
    const loom_op *op;
    loom_tensor *y = NULL;
    loom_attrs *a = NULL;
    loom_dispatch_info info = LOOM_DISPATCH_INFO_INIT;
    (void)state;
    init_rogue(0);
    op = loom_op_find("rogue.misbehave");
    assert_non_null(op);
    assert_ptr_equal(loom_op_find("rogue.misbehave"), op);   /* one handle per op and init */
    assert_string_equal(loom_op_schema_of(op)->name, "rogue.misbehave");
    assert_int_equal(loom_op_kernel_count(op), 1);
    assert_int_equal(loom_op_run(op, NULL, 0, NULL, &y, 1, NULL), LOOM_OK);
    loom_tensor_free(y);
    y = NULL;
    assert_int_equal(loom_last_dispatch(&info), LOOM_OK);

    loom_shutdown();
    assert_int_equal(loom_op_run(op, NULL, 0, NULL, &y, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "previous loom_init"));
    init_rogue(0);
    assert_int_equal(loom_op_run(op, NULL, 0, NULL, &y, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "previous loom_init"));
    assert_null(loom_op_schema_of(op));
    assert_int_equal(loom_op_kernel_count(op), 0);
    assert_int_equal(loom_last_dispatch(&info), LOOM_ENOENT);   /* its record named the old registry */
    /* not a handle at all */
    assert_int_equal(loom_op_run((const loom_op *)(void *)&info, NULL, 0, NULL, &y, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "not a handle from loom_op_find"));
    /* a fresh handle works */
    assert_int_equal(loom_op_run(loom_op_find("rogue.misbehave"), NULL, 0, a, &y, 1, NULL), LOOM_OK);
    loom_tensor_free(y);
}

static loom_status peek(loom_object *obj, int64_t *value)
{
    loom_tensor *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_status st;
    opt.object = obj;
    st = loom_run("rogue.peek", NULL, 0, NULL, &out, 1, &opt);
    if (st == LOOM_OK)
        *value = *(int64_t *)loom_data(out);
    loom_tensor_free(out);
    return st;
}

static void object_handles_do_not_survive_shutdown(void **state)
{
    loom_object *obj = NULL, *other = NULL;
    int64_t v = -1;
    (void)state;
    init_rogue(0);
    assert_int_equal(loom_object_create(&obj, "rogue.box", NULL, NULL), LOOM_OK);
    assert_string_equal(loom_object_class_name(obj), "rogue.box");
    assert_int_equal(peek(obj, &v), LOOM_OK);
    assert_int_equal(peek(obj, &v), LOOM_OK);
    assert_int_equal(v, 1);
    loom_object_free(obj);
    assert_null(loom_object_class_name(obj));
    assert_int_equal(peek(obj, &v), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "already freed"));
    loom_object_free(obj);   /* a double free is refused, not a crash */
    assert_int_equal(loom_last_status(), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "already freed"));
    /* its slot is reused by the next object, but the old handle stays stale */
    assert_int_equal(loom_object_create(&other, "rogue.box", NULL, NULL), LOOM_OK);
    assert_true(other != obj);
    assert_null(loom_object_class_name(obj));
    assert_int_equal(peek(other, &v), LOOM_OK);
    assert_int_equal(v, 0);

    loom_shutdown();          /* destroys `other`, which the host forgot */
    loom_object_free(other);  /* after shutdown: refused, nothing touched */
    assert_non_null(strstr(loom_last_error(), "previous loom_init"));
    init_rogue(0);
    loom_object_free(other);  /* and after the next init */
    assert_non_null(strstr(loom_last_error(), "previous loom_init"));
    assert_int_equal(peek(other, &v), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "previous loom_init"));
    {
        int64_t garbage[4] = { 0 };
        assert_int_equal(peek((loom_object *)(void *)garbage, &v), LOOM_EINVAL);
        assert_non_null(strstr(loom_last_error(), "not a loom object"));
    }
}

static void empty_tensors_have_one_contiguity_rule(void **state)
{
    const int64_t empty[2] = { 3, 0 }, huge[3] = { 0, (int64_t)1 << 62, 4 };
    loom_tensor *t = NULL;
    (void)state;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 2, empty, NULL), LOOM_OK);
    assert_true(loom_is_contiguous(t));
    assert_int_equal(loom_numel(t), 0);
    assert_int_equal(loom_tensor_nbytes(t), 0);
    loom_tensor_free(t);
    /* a zero-size tensor whose other dims multiply past INT64_MAX: no UB */
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 3, huge, NULL), LOOM_OK);
    assert_true(loom_is_contiguous(t));
    assert_int_equal(loom_numel(t), 0);
    loom_tensor_free(t);
    {
        const int64_t late_zero[3] = { (int64_t)1 << 62, 4, 0 };
        assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 3, late_zero, NULL), LOOM_OK);
        assert_int_equal(loom_numel(t), 0);
        assert_true(loom_is_contiguous(t));
        loom_tensor_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(well_behaved_kernel_runs),
        cmocka_unit_test(outputs_changed_after_allocation_fail_the_call),
        cmocka_unit_test(supplied_outputs_are_rechecked_too),
        cmocka_unit_test(outputs_must_come_from_alloc_output),
        cmocka_unit_test(second_alloc_output_must_agree),
        cmocka_unit_test(scratch_sizes_near_size_max_fail),
        cmocka_unit_test(max_alloc_caps_one_output),
        cmocka_unit_test(attribute_forced_allocation_is_capped),
        cmocka_unit_test(attribute_constraints_are_enforced),
        cmocka_unit_test(op_handles_do_not_survive_shutdown),
        cmocka_unit_test(object_handles_do_not_survive_shutdown),
        cmocka_unit_test(empty_tensors_have_one_contiguity_rule),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    loom_shutdown();
    return rc;
}
