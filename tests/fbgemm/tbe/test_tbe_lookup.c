/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_lookup.c - fbgemm.tbe forward against fbgemm_gpu goldens: every
** weight type x pooling (sum, mean, none) x per-sample weights, i32 and i64
** indices, a shared table (feature_table_map [0, 1, 0, 2]), empty bags,
** fp16/bf16 outputs, VBE and pruned (-1) indices.
** Tolerance rtol = atol = 1e-5 for every weight type: fbgemm's tests allow
** 1e-5 for fp32 (forward_test.py) and 1e-2 for the others
** (nbit_forward_test.py) because its GPU kernels form int4/int2 products in
** fp16; its CPU kernels, like loom's, dequantise in f32 with the same fma
** order, and the two agree to < 1e-6 on these goldens. An fp16/bf16 output
** may differ by one rounding of that type (2^-11 / 2^-8 relative): 1e-2.
*/
#include <stdio.h>
#include <string.h>

#include "tbe_test_util.h"

static const char *const wtypes[] = { "fp32", "fp16", "int8", "int4", "int2", "fp8", "bf16" };
static const char *const poolings[] = { "sum", "mean", "none" };

static double tol_of(const char *wt) { (void)wt; return 1e-5; }

/* Run golden case `name` on obj with pooling given as an op attribute. */
static void run_case(loom_object *obj, const char *name, const char *pooling, const loom_tensor *bsz, double tol)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s_indices", name);
    loom_tensor *ind = tt_npy(buf);
    snprintf(buf, sizeof buf, "%s_offsets", name);
    loom_tensor *off = tt_npy(buf);
    snprintf(buf, sizeof buf, "%s_psw", name);
    loom_tensor *psw = tt_npy_exists(buf) ? tt_npy(buf) : NULL;
    snprintf(buf, sizeof buf, "%s_out", name);
    loom_tensor *want = tt_npy(buf), *got = NULL;
    /* the caller's inputs must come back untouched */
    loom_tensor *ind0 = NULL, *off0 = NULL;
    assert_int_equal(loom_tensor_copy_to(&ind0, ind, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_copy_to(&off0, off, NULL), LOOM_OK);
    loom_attrs *a = NULL;
    if (pooling != NULL) {
        assert_int_equal(loom_attrs_new(&a), LOOM_OK);
        tt_set_str(a, "pooling_mode", pooling);
    }
    loom_status st = tt_run("fbgemm.tbe", obj, ind, off, psw, bsz, a, &got);
    if (st != LOOM_OK)
        fail_msg("%s: %s", name, loom_last_error());
    tt_assert_close(got, want, tol, tol, name);
    tt_assert_same_bytes(ind, ind0, "indices after the call");
    tt_assert_same_bytes(off, off0, "offsets after the call");
    loom_attrs_free(a);
    loom_tensor_free(got);
    loom_tensor_free(want);
    loom_tensor_free(psw);
    loom_tensor_free(ind0);
    loom_tensor_free(off0);
    loom_tensor_free(ind);
    loom_tensor_free(off);
}

static void test_weight_types(void **state)
{
    (void)state;
    for (size_t w = 0; w < sizeof wtypes / sizeof wtypes[0]; w++) {
        for (size_t p = 0; p < 3; p++) {
            char set[32], name[64];
            snprintf(set, sizeof set, "%s_%s", wtypes[w], p == 2 ? "none" : "pooled");
            loom_attrs *a = tt_golden_attrs(wtypes[w]);
            loom_object *obj = tt_create_golden(set, a);
            for (int weighted = 0; weighted < 2; weighted++) {
                snprintf(name, sizeof name, "%s_%s_%s", wtypes[w], poolings[p], weighted ? "w" : "nw");
                run_case(obj, name, poolings[p], NULL, tol_of(wtypes[w]));
            }
            loom_object_free(obj);
            loom_attrs_free(a);
        }
    }
}

/* The object's pooling_mode is used when the call gives none; float
** tables need no weights_tys (the dtype says it). */
static void test_object_defaults(void **state)
{
    (void)state;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_ints(a, "feature_table_map", tt_ftm, 4);
    tt_set_str(a, "pooling_mode", "mean");
    loom_object *obj = tt_create_golden("fp16_pooled", a);
    run_case(obj, "fp16_mean_w", NULL, NULL, 1e-5);
    run_case(obj, "fp16_sum_nw", "sum", NULL, 1e-5);
    loom_object_free(obj);
    loom_attrs_free(a);
}

static void test_output_dtypes(void **state)
{
    (void)state;
    static const char *const wts[] = { "fp16", "int4" }, *const outs[] = { "fp16", "bf16" };
    for (int w = 0; w < 2; w++)
        for (int o = 0; o < 2; o++) {
            char set[32], name[64];
            snprintf(set, sizeof set, "%s_pooled", wts[w]);
            snprintf(name, sizeof name, "out_%s_%s", outs[o], wts[w]);
            loom_attrs *a = tt_golden_attrs(wts[w]);
            tt_set_str(a, "output_dtype", outs[o]);
            loom_object *obj = tt_create_golden(set, a);
            run_case(obj, name, "sum", NULL, 1e-2);
            loom_object_free(obj);
            loom_attrs_free(a);
        }
}

static void test_vbe(void **state)
{
    (void)state;
    loom_tensor *bsz = tt_npy("vbe_bsz");
    loom_attrs *a = tt_golden_attrs("fp32");
    loom_object *obj = tt_create_golden("fp32_pooled", a);
    run_case(obj, "vbe_fp32_sum", "sum", bsz, 1e-5);
    run_case(obj, "vbe_fp32_mean", "mean", bsz, 1e-5);
    /* VBE with pooling none is refused, as fbgemm asserts */
    loom_tensor *ind = tt_npy("vbe_fp32_sum_indices"), *off = tt_npy("vbe_fp32_sum_offsets"), *out = NULL;
    loom_attrs *c;
    assert_int_equal(loom_attrs_new(&c), LOOM_OK);
    tt_set_str(c, "pooling_mode", "none");
    tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, off, NULL, bsz, c, &out), LOOM_EINVAL, "pooling sum or mean");
    loom_attrs_free(c);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_object_free(obj);
    loom_attrs_free(a);
    loom_tensor_free(bsz);
}

static void test_pruned(void **state)
{
    (void)state;
    loom_attrs *a = tt_golden_attrs("int8");
    loom_object *obj = tt_create_golden("int8_pooled", a);
    run_case(obj, "pruned", "mean", NULL, 1e-5);
    loom_object_free(obj);
    loom_attrs_free(a);
}

/* i32 and i64 indices give the same bytes. */
static void test_index_dtypes(void **state)
{
    (void)state;
    loom_attrs *a = tt_golden_attrs("int4");
    loom_object *obj = tt_create_golden("int4_pooled", a);
    loom_tensor *ind = tt_npy("int4_sum_w_indices"), *off = tt_npy("int4_sum_w_offsets"), *psw = tt_npy("int4_sum_w_psw");
    loom_tensor *ind2 = NULL, *off2 = NULL, *o1 = NULL, *o2 = NULL;
    const loom_dtype other = loom_tensor_dtype_of(ind) == LOOM_DTYPE_I32 ? LOOM_DTYPE_I64 : LOOM_DTYPE_I32;
    int64_t ni = ind->shape[0], no = off->shape[0];
    assert_int_equal(loom_tensor_new(&ind2, other, 1, &ni, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&off2, other, 1, &no, NULL), LOOM_OK);
    for (int64_t i = 0; i < ni + no; i++) {
        const loom_tensor *src = i < ni ? ind : off;
        loom_tensor *dst = i < ni ? ind2 : off2;
        int64_t k = i < ni ? i : i - ni;
        int64_t v = loom_tensor_dtype_of(src) == LOOM_DTYPE_I32 ? ((const int32_t *)loom_data(src))[k]
                                                               : ((const int64_t *)loom_data(src))[k];
        if (other == LOOM_DTYPE_I32)
            ((int32_t *)loom_data(dst))[k] = (int32_t)v;
        else
            ((int64_t *)loom_data(dst))[k] = v;
    }
    assert_int_equal(tt_run("fbgemm.tbe", obj, ind, off, psw, NULL, NULL, &o1), LOOM_OK);
    assert_int_equal(tt_run("fbgemm.tbe", obj, ind2, off2, psw, NULL, NULL, &o2), LOOM_OK);
    tt_assert_same_bytes(o1, o2, "i32 vs i64");
    /* mixed dtypes are refused */
    loom_tensor *o3 = NULL;
    tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, off2, psw, NULL, NULL, &o3), LOOM_EINVAL, "same dtype");
    loom_tensor_free(o1);
    loom_tensor_free(o2);
    loom_tensor_free(ind2);
    loom_tensor_free(off2);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_tensor_free(psw);
    loom_object_free(obj);
    loom_attrs_free(a);
}

static void test_call_refusals(void **state)
{
    (void)state;
    loom_attrs *a = tt_golden_attrs("fp32");
    loom_object *obj = tt_create_golden("fp32_pooled", a);
    loom_tensor *ind = tt_npy("fp32_sum_nw_indices"), *off = tt_npy("fp32_sum_nw_offsets"), *out = NULL;
    loom_tensor *short_off = NULL, *psw = NULL;
    int64_t n = off->shape[0] - 1, np1 = ind->shape[0] + 1;
    assert_int_equal(loom_tensor_wrap(&short_off, loom_data(off), loom_tensor_dtype_of(off), 1, &n, NULL, NULL),
                     LOOM_OK);
    tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, short_off, NULL, NULL, NULL, &out), LOOM_EINVAL, "T*B+1");
    assert_int_equal(loom_tensor_new(&psw, LOOM_DTYPE_F32, 1, &np1, NULL), LOOM_OK);
    tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, off, psw, NULL, NULL, &out), LOOM_EINVAL, "one weight per index");
    loom_attrs *c;
    assert_int_equal(loom_attrs_new(&c), LOOM_OK);
    tt_set_str(c, "pooling_mode", "max");
    tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, c, &out), LOOM_EINVAL, "pooling_mode 'max'");
    loom_attrs_free(c);
    /* pooling none needs one D: the pooled tables have 16, 32, 16 */
    assert_int_equal(loom_attrs_new(&c), LOOM_OK);
    tt_set_str(c, "pooling_mode", "none");
    tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, c, &out), LOOM_EINVAL, "same dim");
    loom_attrs_free(c);
    loom_tensor_free(psw);
    loom_tensor_free(short_off);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_object_free(obj);
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weight_types),
        cmocka_unit_test(test_object_defaults),
        cmocka_unit_test(test_output_dtypes),
        cmocka_unit_test(test_vbe),
        cmocka_unit_test(test_pruned),
        cmocka_unit_test(test_index_dtypes),
        cmocka_unit_test(test_call_refusals),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-lookup", tests, tu_setup, tu_teardown);
}
