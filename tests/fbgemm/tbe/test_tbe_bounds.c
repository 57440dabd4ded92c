/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_bounds.c - bad indices, bad offsets and bad table files.
** FATAL fails naming the bag or index; WARNING and IGNORE repair as fbgemm's
** bounds_check_indices does (goldens from IntNBit with those modes); NONE
** repairs like IGNORE in loom (a kernel never reads out of bounds). Extreme
** values and broken files must fail cleanly: CI runs this under ASan+UBSan.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbe_test_util.h"

static const char *const bad_cases[] = { "index", "last_offset", "decreasing", "negative_offset" };

static loom_object *int8_object(const char *mode)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "int8,int8,int8");
    tt_set_ints(a, "feature_table_map", tt_ftm, 4);
    tt_set_str(a, "bounds_check_mode", mode);
    loom_object *o = tt_create_golden("int8_pooled", a);
    loom_attrs_free(a);
    return o;
}

static void load_case(const char *name, loom_tensor **ind, loom_tensor **off)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s_indices", name);
    *ind = tt_npy(buf);
    snprintf(buf, sizeof buf, "%s_offsets", name);
    *off = tt_npy(buf);
}

static void test_fatal(void **state)
{
    (void)state;
    static const char *const needles[] = { "indices[1] = 1000", "last offset", "bag 3", "bag 1" };
    loom_object *obj = int8_object("fatal");
    for (int c = 0; c < 4; c++) {
        char name[64];
        loom_tensor *ind, *off, *out = NULL;
        snprintf(name, sizeof name, "bc_ignore_%s", bad_cases[c]);
        load_case(name, &ind, &off);
        tt_assert_fails(tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, NULL, &out), LOOM_EINVAL, needles[c]);
        assert_null(out);
        loom_tensor_free(ind);
        loom_tensor_free(off);
    }
    /* the pruned marker -1 is not an error */
    loom_tensor *ind, *off, *out = NULL;
    load_case("pruned", &ind, &off);
    assert_int_equal(tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, NULL, &out), LOOM_OK);
    loom_tensor_free(out);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_object_free(obj);
}

/* WARNING and IGNORE against fbgemm; NONE (as an op attribute over a
** WARNING object) gives IGNORE's result. Inputs stay untouched. */
static void test_repair_modes(void **state)
{
    (void)state;
    static const char *const modes[] = { "warning", "ignore" };
    for (int m = 0; m < 2; m++) {
        loom_object *obj = int8_object(modes[m]);
        for (int c = 0; c < 4; c++) {
            char name[64];
            loom_tensor *ind, *off, *out = NULL, *ind0 = NULL, *off0 = NULL;
            snprintf(name, sizeof name, "bc_%s_%s", modes[m], bad_cases[c]);
            load_case(name, &ind, &off);
            assert_int_equal(loom_tensor_copy_to(&ind0, ind, NULL), LOOM_OK);
            assert_int_equal(loom_tensor_copy_to(&off0, off, NULL), LOOM_OK);
            snprintf(name, sizeof name, "bc_%s_%s_out", modes[m], bad_cases[c]);
            loom_tensor *want = tt_npy(name);
            if (tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, NULL, &out) != LOOM_OK)
                fail_msg("%s: %s", name, loom_last_error());
            tt_assert_close(out, want, 1e-5, 1e-5, name);   /* see test_tbe_lookup.c */
            tt_assert_same_bytes(ind, ind0, "indices after a repair");
            tt_assert_same_bytes(off, off0, "offsets after a repair");
            loom_tensor_free(out);
            if (m == 1) {
                loom_attrs *a;
                assert_int_equal(loom_attrs_new(&a), LOOM_OK);
                tt_set_str(a, "bounds_check_mode", "none");
                assert_int_equal(tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, a, &out), LOOM_OK);
                tt_assert_close(out, want, 1e-5, 1e-5, "bounds_check_mode none");
                loom_tensor_free(out);
                loom_attrs_free(a);
            }
            loom_tensor_free(want);
            loom_tensor_free(ind0);
            loom_tensor_free(off0);
            loom_tensor_free(ind);
            loom_tensor_free(off);
        }
        loom_object_free(obj);
    }
}

/* Extreme values in every slot under every repairing mode: no crash, no
** out-of-bounds read, a result of the right shape. */
static void test_extremes(void **state)
{
    (void)state;
    static const char *const modes[] = { "warning", "ignore", "none" };
    const int64_t n = 12, nb = 4 * 2 + 1;
    const int64_t vals[] = { INT64_MAX, INT64_MIN, -2, 40, 1LL << 40, -1 };
    for (int m = 0; m < 3; m++) {
        loom_object *obj = int8_object(modes[m]);
        for (int dt = 0; dt < 2; dt++) {
            loom_dtype d = dt ? LOOM_DTYPE_I64 : LOOM_DTYPE_I32;
            for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++) {
                loom_tensor *ind = NULL, *off = NULL, *out = NULL;
                assert_int_equal(loom_tensor_new(&ind, d, 1, &n, NULL), LOOM_OK);
                assert_int_equal(loom_tensor_new(&off, d, 1, &nb, NULL), LOOM_OK);
                for (int64_t k = 0; k < nb; k++) {
                    int64_t o = k * 12 / 8, x = k == (int64_t)(v % (size_t)nb) ? vals[v] : o;
                    if (dt)
                        ((int64_t *)loom_data(off))[k] = x;
                    else
                        ((int32_t *)loom_data(off))[k] = (int32_t)x;
                }
                for (int64_t i = 0; i < n; i++) {
                    int64_t x = i % 3 == 0 ? vals[(v + (size_t)i) % 6] : i;
                    if (dt)
                        ((int64_t *)loom_data(ind))[i] = x;
                    else
                        ((int32_t *)loom_data(ind))[i] = (int32_t)x;
                }
                if (tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, NULL, &out) != LOOM_OK)
                    fail_msg("%s: %s", modes[m], loom_last_error());
                assert_int_equal(out->shape[0], 2);
                assert_int_equal(out->shape[1], 16 + 32 + 16 + 16);
                loom_tensor_free(out);
                loom_tensor_free(ind);
                loom_tensor_free(off);
            }
        }
        loom_object_free(obj);
    }
}

/* A copy of a golden tables file cut to `keep` bytes (or grown by `extra`). */
static void write_variant(const char *set, char *path, size_t path_size, long keep, long extra)
{
    char src[512], name[96];
    snprintf(name, sizeof name, "tables_%s.safetensors", set);
    tt_data_path(src, sizeof src, name);
    FILE *f = fopen(src, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = calloc((size_t)(size + extra), 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    snprintf(path, path_size, "/tmp/loom_tbe_test_%d_%s.safetensors", (int)getpid(), set);
    f = fopen(path, "wb");
    assert_non_null(f);
    size_t n = keep >= 0 ? (size_t)keep : (size_t)(size + extra);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    free(buf);
}

static void test_bad_table_files(void **state)
{
    (void)state;
    char path[256];
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "int4,int4,int4");
    /* truncated: the file ends inside table.2 */
    write_variant("int4_pooled", path, sizeof path, 400, 0);
    assert_null(tt_create(path, a));
    assert_int_equal(loom_last_status(), LOOM_EFORMAT);
    unlink(path);
    /* trailing garbage after the last table is tolerated or refused, never read */
    write_variant("int4_pooled", path, sizeof path, -1, 64);
    loom_object *o = tt_create(path, a);
    loom_object_free(o);
    unlink(path);
    loom_attrs_free(a);

    /* rows of another width than the weight type and dim need */
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "int8,int8,int8");
    const int64_t dims[3] = { 16, 32, 16 };
    tt_set_ints(a, "embedding_dims", dims, 3);
    tt_data_path(path, sizeof path, "tables_int4_pooled.safetensors");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "takes 20 bytes");
    loom_attrs_free(a);

    /* num_embeddings disagrees with the file */
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    const int64_t rows[3] = { 40, 31, 50 };
    tt_set_ints(a, "num_embeddings", rows, 3);
    tt_data_path(path, sizeof path, "tables_fp32_pooled.safetensors");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "holds 30 rows");
    loom_attrs_free(a);

    /* u8 tables need their type */
    tt_data_path(path, sizeof path, "tables_int2_pooled.safetensors");
    assert_null(tt_create(path, NULL));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "give weights_tys");

    /* a type list of the wrong length, a bad feature map, a bad mode */
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "int2,int2");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "2 types for 3 tables");
    tt_set_str(a, "weights_tys", "int2,int2,int2");
    const int64_t ftm[2] = { 0, 3 };
    tt_set_ints(a, "feature_table_map", ftm, 2);
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "'feature_table_map'[1] = 3");
    loom_attrs_free(a);
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "bounds_check_mode", "strict");
    tt_data_path(path, sizeof path, "tables_fp32_pooled.safetensors");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "bounds_check_mode 'strict'");
    loom_attrs_free(a);

    /* no weights file at all */
    assert_null(tt_create(NULL, NULL));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "needs a weights file");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fatal),
        cmocka_unit_test(test_repair_modes),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_bad_table_files),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-bounds", tests, tu_setup, tu_teardown);
}
