/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_jagged_errors.c - the jagged ops refuse bad input with LOOM_EINVAL
** and a message naming the argument, before any kernel reads: offsets are
** untrusted (not monotone, negative, ending anywhere but at the values'
** rows, of a float dtype, of the wrong count), shapes and dtypes that do
** not match, bad attributes, indices out of range. Run under ASan+UBSan in
** CI: a refusal that came after an out-of-bounds read would show there.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

#define MAX_IN 4

typedef struct arg {
    loom_dtype dtype;
    int32_t ndim;
    int64_t shape[3];
    const void *data;         /* NULL: zero-filled */
    const int64_t *strides;   /* NULL: compact */
} arg;

static float zeros[4096];

/* Run op on the cpu with the given inputs and "name=value;..." attributes;
** expect `want` and a message containing `msg`. */
static void expect(loom_status want, const char *op, const arg *args, int n, const char *attrs, const char *msg)
{
    loom_tensor *in[MAX_IN] = { NULL }, *out[2] = { NULL, NULL };
    for (int i = 0; i < n; i++)
        assert_int_equal(loom_tensor_wrap(&in[i], (void *)(args[i].data != NULL ? args[i].data : zeros),
                                          args[i].dtype, args[i].ndim, args[i].shape, args[i].strides, NULL),
                         LOOM_OK);
    loom_attrs *a;
    char buf[256];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    snprintf(buf, sizeof buf, "%s", attrs);
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        assert_int_equal(loom_attrs_parse(a, op, kv, eq + 1), LOOM_OK);
    }
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    int n_out = strstr(op, "mul_backward") != NULL ? 2 : 1;
    loom_status st = loom_run(op, (const loom_tensor *const *)in, n, a, out, n_out, &opt);
    if (st != want || strstr(loom_last_error(), msg) == NULL)
        fail_msg("%s: got %s '%s', expected %s containing '%s'", op, loom_status_name(st), loom_last_error(),
                 loom_status_name(want), msg);
    for (int i = 0; i < 2; i++)
        loom_tensor_free(out[i]);
    for (int i = 0; i < n; i++)
        loom_tensor_free(in[i]);
    loom_attrs_free(a);
}

#define F32 LOOM_DTYPE_F32
#define I64 LOOM_DTYPE_I64
#define I32 LOOM_DTYPE_I32
#define VALUES(rows) { F32, 2, { rows, 4, 0 }, NULL, NULL }
#define OFFS(n, p) { I64, 1, { n, 0, 0 }, p, NULL }
#define J2PD "fbgemm.jagged_to_padded_dense"

static const int64_t good[] = { 0, 3, 3, 7 };

static void offsets_are_validated(void **state)
{
    static const int64_t not_monotone[] = { 0, 5, 2, 7 }, negative[] = { -1, 3, 3, 7 };
    static const int64_t huge[] = { 0, INT64_C(1) << 60, INT64_C(1) << 61, 7 }, short_end[] = { 0, 3, 3, 6 };
    static const int64_t past_end[] = { 0, 3, 3, 1000000 };
    static const float foffs[] = { 0, 3, 3, 7 };
    (void)state;
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, not_monotone) }, 2, "max_lengths=4", "non-decreasing");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, negative) }, 2, "max_lengths=4", ">= 0");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, huge) }, 2, "max_lengths=4", "non-decreasing");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, short_end) }, 2, "max_lengths=4", "ends at 6");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, past_end) }, 2, "max_lengths=4", "ends at 1000000");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), { F32, 1, { 4, 0, 0 }, foffs, NULL } }, 2, "max_lengths=4",
           "offsets");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), { I64, 2, { 2, 2, 0 }, good, NULL } }, 2, "max_lengths=4",
           "offsets");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), { I64, 1, { 0, 0, 0 }, good, NULL } }, 2, "max_lengths=4",
           "B+1");
    /* int32 offsets read as int32: 7 rows end, but the bytes of an int64 0,3 would not */
    static const int32_t bad32[] = { 0, 3, 2, 7 };
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), { I32, 1, { 4, 0, 0 }, bad32, NULL } }, 2, "max_lengths=4",
           "non-decreasing");
    /* every op that takes offsets goes through the same check */
    expect(LOOM_EINVAL, "fbgemm.dense_to_jagged", (arg[]){ { F32, 3, { 3, 4, 4 }, NULL, NULL }, OFFS(4, not_monotone) },
           2, "", "non-decreasing");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_elementwise_mul",
           (arg[]){ VALUES(7), OFFS(4, short_end), { F32, 3, { 3, 4, 4 }, NULL, NULL } }, 3, "", "ends at 6");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_bmm",
           (arg[]){ VALUES(7), OFFS(4, negative), { F32, 3, { 3, 4, 5 }, NULL, NULL } }, 3, "max_L=2", ">= 0");
    expect(LOOM_EINVAL, "fbgemm.jagged_jagged_bmm", (arg[]){ VALUES(7), VALUES(7), OFFS(4, past_end) }, 3, "max_L=2",
           "ends at");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_elementwise_mul_backward",
           (arg[]){ VALUES(7), OFFS(4, not_monotone), { F32, 3, { 3, 4, 4 }, NULL, NULL }, VALUES(7) }, 4, "",
           "non-decreasing");
}

static void shapes_dtypes_and_attrs_are_checked(void **state)
{
    (void)state;
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, good) }, 2, "max_lengths=4,4", "one entry per offsets");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(4, good) }, 2, "max_lengths=-1", ">= 0");
    expect(LOOM_EINVAL, J2PD, (arg[]){ { I32, 2, { 7, 4, 0 }, NULL, NULL }, OFFS(4, good) }, 2,
           "max_lengths=2;padding_value=0.5", "padding_value");
    /* a strided values view runs: the core hands the kernel a compact copy */
    expect(LOOM_OK, J2PD, (arg[]){ { F32, 2, { 7, 4, 0 }, NULL, (const int64_t[]){ 1, 7 } }, OFFS(4, good) }, 2,
           "max_lengths=2", "");
    /* dense operand with the wrong batch or inner dims, or another dtype */
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_elementwise_add",
           (arg[]){ VALUES(7), OFFS(4, good), { F32, 3, { 2, 4, 4 }, NULL, NULL } }, 3, "", "B+1 = 3");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_elementwise_add",
           (arg[]){ VALUES(7), OFFS(4, good), { F32, 3, { 3, 4, 5 }, NULL, NULL } }, 3, "", "inner dims");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_elementwise_add",
           (arg[]){ VALUES(7), OFFS(4, good), { LOOM_DTYPE_F64, 3, { 3, 4, 4 }, NULL, NULL } }, 3, "", "same dtype");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_elementwise_mul_backward",
           (arg[]){ VALUES(7), OFFS(4, good), { F32, 3, { 3, 4, 4 }, NULL, NULL }, VALUES(6) }, 4, "",
           "shape of 'grad_output'");
    /* total_L below the last offset */
    expect(LOOM_EINVAL, "fbgemm.dense_to_jagged", (arg[]){ { F32, 3, { 3, 4, 4 }, NULL, NULL }, OFFS(4, good) }, 2,
           "total_L=5", "past total_L");
    expect(LOOM_EINVAL, "fbgemm.jagged_to_padded_dense_backward",
           (arg[]){ { F32, 3, { 3, 4, 4 }, NULL, NULL }, OFFS(4, good) }, 2, "total_L=6", "past total_L");
    /* bmm geometry */
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_bmm",
           (arg[]){ VALUES(7), OFFS(4, good), { F32, 3, { 3, 5, 5 }, NULL, NULL } }, 3, "max_L=2", "[B, K, N]");
    expect(LOOM_EINVAL, "fbgemm.jagged_dense_bmm",
           (arg[]){ VALUES(7), OFFS(4, good), { F32, 3, { 3, 4, 5 }, NULL, NULL } }, 3, "max_L=-2", "max_L");
    expect(LOOM_EINVAL, "fbgemm.jagged_jagged_bmm", (arg[]){ VALUES(7), VALUES(6), OFFS(4, good) }, 3, "max_L=2",
           "[total_L, N]");
    expect(LOOM_EINVAL, "fbgemm.permute102_baddbmm_permute102",
           (arg[]){ { F32, 2, { 3, 5, 0 }, NULL, NULL }, { F32, 3, { 2, 3, 4 }, NULL, NULL },
                    { F32, 3, { 3, 4, 6 }, NULL, NULL } }, 3, "", "[b, n]");
}

/* Several jagged dims: each level must end at the next level's entry count. */
static void offsets_levels_are_validated(void **state)
{
    static const int64_t outer[] = { 0, 2, 3 }, inner_ok[] = { 0, 1, 4, 7 }, outer_long[] = { 0, 2, 4 };
    static const int64_t inner_bad[] = { 0, 5, 4, 7 };
    (void)state;
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(3, outer_long), OFFS(4, inner_ok) }, 3, "max_lengths=2,3",
           "'offsets' ends at 4 but must end at 3");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(3, outer), OFFS(4, inner_bad) }, 3, "max_lengths=2,3",
           "'offsets_1' must be non-decreasing");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(6), OFFS(3, outer), OFFS(4, inner_ok) }, 3, "max_lengths=2,3",
           "'offsets_1' ends at 7");
    expect(LOOM_EINVAL, J2PD, (arg[]){ VALUES(7), OFFS(3, outer), OFFS(4, inner_ok) }, 3, "max_lengths=2",
           "one entry per offsets tensor (2)");
    /* offsets_2 without offsets_1 */
    loom_tensor *in[4] = { NULL };
    int64_t vs[2] = { 7, 4 }, n3 = 3;
    assert_int_equal(loom_tensor_wrap(&in[0], zeros, F32, 2, vs, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&in[1], (void *)outer, I64, 1, &n3, NULL, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_wrap(&in[3], (void *)outer, I64, 1, &n3, NULL, NULL), LOOM_OK);
    loom_attrs *a;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_parse(a, J2PD, "max_lengths", "2,3"), LOOM_OK);
    assert_int_equal(loom_run(J2PD, (const loom_tensor *const *)in, 4, a, &out, 1, NULL), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'offsets_2' given without 'offsets_1'"));
    loom_attrs_free(a);
    for (int i = 0; i < 4; i++)
        loom_tensor_free(in[i]);
    /* dense rank below the number of jagged dims */
    expect(LOOM_EINVAL, "fbgemm.dense_to_jagged",
           (arg[]){ { F32, 2, { 2, 3, 0 }, NULL, NULL }, OFFS(3, outer), OFFS(4, inner_ok) }, 3, "",
           "must be [B, max_L x 2");
}

static void indices_are_validated(void **state)
{
    static const int64_t past[] = { 0, 7 }, neg[] = { -1, 0 };
    static const int32_t past32[] = { 2, 5 };
    (void)state;
    expect(LOOM_EINVAL, "fbgemm.index_select_dim0", (arg[]){ VALUES(7), { I64, 1, { 2, 0, 0 }, past, NULL } }, 2, "",
           "'indices'[1] is 7");
    expect(LOOM_EINVAL, "fbgemm.index_select_dim0", (arg[]){ VALUES(7), { I64, 1, { 2, 0, 0 }, neg, NULL } }, 2, "",
           "'indices'[0] is -1");
    expect(LOOM_EINVAL, "fbgemm.index_select_dim0", (arg[]){ VALUES(5), { I32, 1, { 2, 0, 0 }, past32, NULL } }, 2,
           "", "'indices'[1] is 5");
    expect(LOOM_EINVAL, "fbgemm.index_select_dim0", (arg[]){ VALUES(7), { I64, 1, { 2, 0, 0 }, good, NULL } }, 2,
           "consecutive_range_start=-1", "consecutive_range");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(offsets_are_validated),
        cmocka_unit_test(shapes_dtypes_and_attrs_are_checked),
        cmocka_unit_test(offsets_levels_are_validated),
        cmocka_unit_test(indices_are_validated),
    };
    return cmocka_run_group_tests_name("fbgemm_jagged_errors", tests, tu_setup, tu_teardown);
}
