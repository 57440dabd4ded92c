/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_quantize.c - fbgemm.quantize_rows / fbgemm.dequantize_rows
** against fbgemm's own quantisers, bit for bit (goldens from
** FloatToFused8BitRowwiseQuantized, FloatToFusedNBitRowwiseQuantizedSBHalf,
** FloatToHFP8Quantized, quantize_embs and their inverses), on random rows,
** huge and tiny ranges, constant rows, NaN and inf; plus the refusals.
*/
#include <stdio.h>
#include <string.h>

#include "tbe_test_util.h"

static loom_tensor *quantize(const loom_tensor *x, const char *wtype, const char *layout)
{
    loom_attrs *a;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weight_type", wtype);
    tt_set_str(a, "layout", layout);
    loom_status st = tu_call("fbgemm.quantize_rows", &x, 1, a, NULL, &out);
    loom_attrs_free(a);
    if (st != LOOM_OK)
        fail_msg("quantize_rows %s/%s: %s", wtype, layout, loom_last_error());
    return out;
}

static loom_tensor *dequantize(const loom_tensor *q, const char *wtype, const char *layout, int64_t dim)
{
    loom_attrs *a;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weight_type", wtype);
    tt_set_str(a, "layout", layout);
    if (dim > 0)
        tt_set_int(a, "dim", dim);
    loom_status st = tu_call("fbgemm.dequantize_rows", &q, 1, a, NULL, &out);
    loom_attrs_free(a);
    if (st != LOOM_OK)
        fail_msg("dequantize_rows %s/%s: %s", wtype, layout, loom_last_error());
    return out;
}

static void check_quantize(const char *input, const char *wtype, const char *layout, const char *golden)
{
    loom_tensor *x = tt_npy(input), *want = tt_npy(golden);
    loom_tensor *got = quantize(x, wtype, layout);
    tt_assert_same_bytes(got, want, golden);
    loom_tensor_free(got);
    loom_tensor_free(want);
    loom_tensor_free(x);
}

static void test_quantize_fused(void **state)
{
    (void)state;
    check_quantize("q_input", "int8", "fused", "q_fused_int8");
    check_quantize("q_input", "int4", "fused", "q_fused_int4");
    check_quantize("q_input", "int2", "fused", "q_fused_int2");
}

static void test_quantize_tbe(void **state)
{
    (void)state;
    check_quantize("q_input", "int8", "tbe", "q_tbe_int8");
    check_quantize("q_input", "int4", "tbe", "q_tbe_int4");
    check_quantize("q_input", "int2", "tbe", "q_tbe_int2");
    check_quantize("q_fp8_input", "fp8", "tbe", "q_tbe_fp8");
    check_quantize("q_input", "fp16", "tbe", "q_tbe_fp16");
}

static void check_dequantize(const char *wtype, const char *layout, const char *golden)
{
    char in_name[96];
    snprintf(in_name, sizeof in_name, "%s_in", golden);
    loom_tensor *q = tt_npy(in_name), *want = tt_npy(golden);
    loom_tensor *got = dequantize(q, wtype, layout, want->shape[1]);
    tt_assert_same_bytes(got, want, golden);
    loom_tensor_free(got);
    /* the dim is also derived from the row bytes when not given */
    got = dequantize(q, wtype, layout, 0);
    tt_assert_same_bytes(got, want, golden);
    loom_tensor_free(got);
    loom_tensor_free(want);
    loom_tensor_free(q);
}

static void test_dequantize(void **state)
{
    (void)state;
    check_dequantize("int8", "fused", "dq_fused_int8");
    check_dequantize("int4", "fused", "dq_fused_int4");
    check_dequantize("int2", "fused", "dq_fused_int2");
    check_dequantize("int8", "tbe", "dq_tbe_int8");
    check_dequantize("int4", "tbe", "dq_tbe_int4");
    check_dequantize("int2", "tbe", "dq_tbe_int2");
    check_dequantize("fp8", "tbe", "dq_tbe_fp8");
}

/* quantise -> dequantise -> quantise is the identity on the codes of the
** float types and fp8 (the integer types re-derive scale and bias) */
static void test_round_trip(void **state)
{
    (void)state;
    static const char *const types[] = { "fp32", "fp16", "bf16", "fp8" };
    loom_tensor *x = tt_npy("dq_fused_int8");      /* finite rows, D = 64 */
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        loom_tensor *q = quantize(x, types[i], "tbe");
        loom_tensor *y = dequantize(q, types[i], "tbe", 64);
        loom_tensor *q2 = quantize(y, types[i], "tbe");
        tt_assert_same_bytes(q2, q, types[i]);
        loom_tensor_free(q);
        loom_tensor_free(y);
        loom_tensor_free(q2);
    }
    loom_tensor_free(x);
}

static void test_row_alignment(void **state)
{
    (void)state;
    loom_tensor *x = tt_npy("q_input");
    loom_attrs *a;
    loom_tensor *out = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weight_type", "int4");
    tt_set_int(a, "row_alignment", 16);
    assert_int_equal(tu_call("fbgemm.quantize_rows", (const loom_tensor *const *)&x, 1, a, NULL, &out), LOOM_OK);
    assert_int_equal(out->shape[1], 48);            /* 64/2 + 4 = 36 -> 48 */
    loom_tensor *want = tt_npy("q_tbe_int4");
    for (int64_t r = 0; r < out->shape[0]; r++) {
        const uint8_t *g = (const uint8_t *)loom_data(out) + r * 48, *w = (const uint8_t *)loom_data(want) + r * 36;
        assert_memory_equal(g, w, 36);
        for (int k = 36; k < 48; k++)
            assert_int_equal(g[k], 0);
    }
    loom_tensor_free(want);
    loom_tensor_free(out);
    loom_attrs_free(a);
    loom_tensor_free(x);
}

static void test_refusals(void **state)
{
    (void)state;
    loom_attrs *a;
    loom_tensor *out = NULL, *x;
    int64_t shape[2] = { 3, 6 };
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weight_type", "int3");
    tt_assert_fails(tu_call("fbgemm.quantize_rows", (const loom_tensor *const *)&x, 1, a, NULL, &out), LOOM_EINVAL,
                    "weight_type 'int3'");
    tt_set_str(a, "weight_type", "int2");          /* D = 6 is not a multiple of 4 */
    tt_assert_fails(tu_call("fbgemm.quantize_rows", (const loom_tensor *const *)&x, 1, a, NULL, &out), LOOM_EINVAL,
                    "multiple of 4");
    tt_set_str(a, "weight_type", "int8");
    tt_set_str(a, "layout", "packed");
    tt_assert_fails(tu_call("fbgemm.quantize_rows", (const loom_tensor *const *)&x, 1, a, NULL, &out), LOOM_EINVAL,
                    "layout 'packed'");
    loom_attrs_free(a);
    /* dequantize: rows of the wrong width for the dim */
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weight_type", "int8");
    tt_set_int(a, "dim", 8);
    loom_tensor *u;
    assert_int_equal(loom_tensor_new(&u, LOOM_DTYPE_U8, 2, shape, NULL), LOOM_OK);
    tt_assert_fails(tu_call("fbgemm.dequantize_rows", (const loom_tensor *const *)&u, 1, a, NULL, &out), LOOM_EINVAL,
                    "bytes per row");
    /* a f32 input for int8 rows */
    tt_assert_fails(tu_call("fbgemm.dequantize_rows", (const loom_tensor *const *)&x, 1, a, NULL, &out), LOOM_EINVAL,
                    "come as u8");
    loom_attrs_free(a);
    loom_tensor_free(u);
    loom_tensor_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantize_fused),
        cmocka_unit_test(test_quantize_tbe),
        cmocka_unit_test(test_dequantize),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_row_alignment),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-quantize", tests, tu_setup, tu_teardown);
}
