/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_table_memory.c - fbgemm.tbe's table_memory: an object whose
** tables are copied into huge-page anonymous memory ("hugepage") gives the
** very bytes of one reading the mapped file ("map", the default, which the
** lookup test checks against the fbgemm_gpu goldens), for every weight
** type, pooling, per-sample weights and with the cache tier over the copy;
** a value that is neither, and hugepage with an optimizer, are refused by
** name.
*/
#include <stdio.h>
#include <string.h>

#include "tbe_test_util.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* 4 features x B bags of 0..6 rows over the golden tables (features 0 and 2
** share table 0: tt_ftm), with per-sample weights. */
static void make_batch(int64_t B, loom_tensor **ind, loom_tensor **off, loom_tensor **psw)
{
    static const int64_t rows[4] = { 40, 30, 40, 50 };
    int64_t nb = 4 * B + 1, lens[4 * 16], n = 0;
    assert_true(4 * B <= 4 * 16);
    for (int64_t k = 0; k < 4 * B; k++)
        n += lens[k] = (int64_t)(next_rand() % 7);
    assert_int_equal(loom_tensor_new(ind, LOOM_DTYPE_I64, 1, &n, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(off, LOOM_DTYPE_I64, 1, &nb, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(psw, LOOM_DTYPE_F32, 1, &n, NULL), LOOM_OK);
    int64_t *I = loom_data(*ind), *O = loom_data(*off), pos = 0;
    float *W = loom_data(*psw);
    O[0] = 0;
    for (int64_t k = 0; k < 4 * B; k++) {
        for (int64_t l = 0; l < lens[k]; l++, pos++) {
            uint64_t r = next_rand();
            I[pos] = (int64_t)((r >> 8) % (uint64_t)rows[k / B]);
            W[pos] = 0.25f + (float)(r % 16) / 8.0f;
        }
        O[k + 1] = pos;
    }
}

static loom_object *object(const char *wt, const char *set, const char *memory, double clf)
{
    loom_attrs *a = tt_golden_attrs(wt);
    tt_set_str(a, "table_memory", memory);
    tt_set_float(a, "cache_load_factor", clf);
    loom_object *o = tt_create_golden(set, a);
    loom_attrs_free(a);
    if (o == NULL)
        fail_msg("%s %s table_memory %s: %s", wt, set, memory, loom_last_error());
    return o;
}

static void check_identical(const char *wt, const char *pooling, double clf)
{
    char set[32];
    snprintf(set, sizeof set, "%s_%s", wt, strcmp(pooling, "none") == 0 ? "none" : "pooled");
    loom_object *mapped = object(wt, set, "map", 1.0), *copied = object(wt, set, "hugepage", clf);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "pooling_mode", pooling);
    for (int batch = 0; batch < 6; batch++) {
        loom_tensor *ind, *off, *psw, *want = NULL, *got = NULL;
        make_batch(5, &ind, &off, &psw);
        const loom_tensor *w = batch % 2 == 0 ? psw : NULL;
        assert_int_equal(tt_run("fbgemm.tbe", mapped, ind, off, w, NULL, a, &want), LOOM_OK);
        if (tt_run("fbgemm.tbe", copied, ind, off, w, NULL, a, &got) != LOOM_OK)
            fail_msg("%s %s: %s", wt, pooling, loom_last_error());
        tt_assert_same_bytes(got, want, "hugepage copy vs mapped file");
        loom_tensor_free(want);
        loom_tensor_free(got);
        loom_tensor_free(ind);
        loom_tensor_free(off);
        loom_tensor_free(psw);
    }
    loom_attrs_free(a);
    loom_object_free(mapped);
    loom_object_free(copied);
}

static void test_bit_identical(void **state)
{
    (void)state;
    static const char *const wts[] = { "fp32", "fp16", "bf16", "fp8", "int8", "int4", "int2" };
    for (size_t w = 0; w < sizeof wts / sizeof wts[0]; w++)
        check_identical(wts[w], "sum", 1.0);
    check_identical("fp32", "mean", 1.0);
    check_identical("fp16", "none", 1.0);
    check_identical("int4", "none", 1.0);
}

/* The cache tier's slow tier is then the copy: still the same bytes. */
static void test_cached_copy(void **state)
{
    (void)state;
    check_identical("fp32", "sum", 0.2);
    check_identical("int8", "sum", 0.2);
}

static void test_bad_values(void **state)
{
    (void)state;
    char path[512];
    tt_data_path(path, sizeof path, "tables_fp32_pooled.safetensors");
    loom_attrs *a = tt_golden_attrs("fp32");
    tt_set_str(a, "table_memory", "huge");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "table_memory 'huge' is not map or hugepage");
    /* training updates owned copies of the tables: no second copy */
    tt_set_str(a, "table_memory", "hugepage");
    tt_set_str(a, "optimizer", "exact_sgd");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "table_memory hugepage is for inference tables");
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bit_identical),
        cmocka_unit_test(test_cached_copy),
        cmocka_unit_test(test_bad_values),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-table-memory", tests, tu_setup, tu_teardown);
}
