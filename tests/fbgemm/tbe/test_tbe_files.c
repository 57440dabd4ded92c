/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_files.c - fbgemm.tbe objects over generated table files and
** with extreme class attributes (CI runs this under ASan+UBSan):
**  - a file of 60,000 tables table.0 .. table.59999 of zero rows loads, and
**    answers a call, in linear time (the table count once scanned every
**    name for every index: 32 s for such a file). No time is asserted; the
**    test prints it and must finish far inside the meson timeout;
**  - names that only look like table indices (table.01, table.+1, gaps)
**    are not tables;
**  - a header of 0 rows with rows larger than any fbgemm row (u8 [0, 2^52])
**    is refused before any row size is computed from it;
**  - every constrained attribute of the class refuses 0 / negative / NaN /
**    inf values (the schema's flags) and INT64_MAX / INT32_MAX (create's
**    checks) with a message naming the attribute;
**  - a weights file truncated in place while objects use it is refused by
**    the next call (forward and prefetch, cached or not) with LOOM_EFORMAT
**    instead of a SIGBUS; the test prints what a call and the check cost.
*/
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tbe_test_util.h"

static char dir[256];

static void path_of(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* n tensors named names[i] of dtype dt and shape [rows, cols], no data */
static void write_empty_tables(const char *path, const char *const *names, int64_t n, loom_dtype dt, int64_t rows,
                               int64_t cols)
{
    loom_tensor **ts = calloc((size_t)n, sizeof *ts);
    assert_non_null(ts);
    const int64_t shape[2] = { rows, cols };
    for (int64_t i = 0; i < n; i++)
        assert_int_equal(loom_tensor_wrap(&ts[i], NULL, dt, 2, shape, NULL, NULL), LOOM_OK);
    if (loom_safetensors_write(path, names, (const loom_tensor *const *)ts, n) != LOOM_OK)
        fail_msg("writing %s: %s", path, loom_last_error());
    for (int64_t i = 0; i < n; i++)
        loom_tensor_free(ts[i]);
    free(ts);
}

static void sixty_thousand_tables_load_in_linear_time(void **state)
{
    (void)state;
    enum { N = 60000 };
    char path[300];
    char **names = calloc(N, sizeof *names);
    assert_non_null(names);
    for (int i = 0; i < N; i++) {
        names[i] = malloc(24);
        assert_non_null(names[i]);
        snprintf(names[i], 24, "table.%d", i);
    }
    path_of(path, sizeof path, "many.safetensors");
    write_empty_tables(path, (const char *const *)names, N, LOOM_DTYPE_F32, 0, 4);
    for (int i = 0; i < N; i++)
        free(names[i]);
    free(names);

    double t0 = now();
    loom_object *obj = tt_create(path, NULL);
    double t1 = now();
    if (obj == NULL)
        fail_msg("60000 tables: %s", loom_last_error());
    printf("fbgemm.tbe over %d tables of 0 rows: created in %.3f s\n", N, t1 - t0);

    /* one call: B = 1, every bag empty -> [1, 4 * N] zeros */
    loom_tensor *ind, *off, *out = NULL;
    assert_int_equal(loom_tensor_new(&ind, LOOM_DTYPE_I64, 1, (const int64_t[]){ 0 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&off, LOOM_DTYPE_I64, 1, (const int64_t[]){ N + 1 }, NULL), LOOM_OK);
    if (tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, NULL, &out) != LOOM_OK)
        fail_msg("call: %s", loom_last_error());
    assert_int_equal(out->ndim, 2);
    assert_int_equal(out->shape[0], 1);
    assert_int_equal(out->shape[1], 4 * N);
    loom_tensor_free(out);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_object_free(obj);

    /* a type list of the wrong length is refused for a clear reason, as fast */
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "fp32,fp32");
    t0 = now();
    assert_null(tt_create(path, a));
    t1 = now();
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "2 types for 60000 tables");
    printf("refused (weights_tys of 2 types) in %.3f s\n", t1 - t0);
    loom_attrs_free(a);
    unlink(path);
}

static void only_canonical_names_are_tables(void **state)
{
    (void)state;
    char path[300];
    path_of(path, sizeof path, "names.safetensors");
    /* table.0, table.1 and decoys: the count is 2 (table.3 follows a gap) */
    const char *names[] = { "table.1", "table.01", "table.+2", "table.-1", "table.2x", "table.3", "table.0",
                            "table.", "tables.2", "table.99999999999999999999" };
    write_empty_tables(path, names, 10, LOOM_DTYPE_F32, 0, 4);
    loom_object *obj = tt_create(path, NULL);
    if (obj == NULL)
        fail_msg("create: %s", loom_last_error());
    loom_tensor *ind, *off, *out = NULL;
    assert_int_equal(loom_tensor_new(&ind, LOOM_DTYPE_I64, 1, (const int64_t[]){ 0 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&off, LOOM_DTYPE_I64, 1, (const int64_t[]){ 3 }, NULL), LOOM_OK);
    if (tt_run("fbgemm.tbe", obj, ind, off, NULL, NULL, NULL, &out) != LOOM_OK)
        fail_msg("call: %s", loom_last_error());
    /* two features of D 4, one bag each */
    assert_int_equal(out->shape[0], 1);
    assert_int_equal(out->shape[1], 8);
    loom_tensor_free(out);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_object_free(obj);
    unlink(path);

    /* no table.0: refused naming it */
    write_empty_tables(path, (const char *[]){ "table.1", "weights" }, 2, LOOM_DTYPE_F32, 0, 4);
    assert_null(tt_create(path, NULL));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "no tensor 'table.0'");
    unlink(path);
}

static void overflowing_row_sizes_are_refused(void **state)
{
    (void)state;
    char path[300];
    loom_attrs *a;
    path_of(path, sizeof path, "wide.safetensors");
    /* 0 rows of 2^52 bytes (the largest dim a header may give, 2^53, is
    ** not far): valid safetensors (no data), but no valid table */
    write_empty_tables(path, (const char *[]){ "table.0" }, 1, LOOM_DTYPE_U8, 0, INT64_C(1) << 52);
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "weights_tys", "int2");
    assert_null(tt_create(path, a));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "larger than any int2 row");
    loom_attrs_free(a);
    unlink(path);
    /* 0 rows of 2^52 f32 elements: 2^54 bytes per row */
    write_empty_tables(path, (const char *[]){ "table.0" }, 1, LOOM_DTYPE_F32, 0, INT64_C(1) << 52);
    assert_null(tt_create(path, NULL));
    tt_assert_fails(loom_last_status(), LOOM_EINVAL, "larger than any fp32 row");
    unlink(path);
}

/* create over a file of two f32 tables [3, 4] with one attribute parsed from text */
static void expect_refused(const char *path, const char *name, const char *value, const char *needle)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (loom_attrs_parse(a, "fbgemm.tbe", name, value) != LOOM_OK)
        fail_msg("%s=%s: %s", name, value, loom_last_error());
    loom_object *o = tt_create(path, a);
    if (o != NULL)
        fail_msg("%s=%s was accepted", name, value);
    if (loom_last_status() != LOOM_EINVAL || strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s=%s: %s: '%s' does not say '%s'", name, value, loom_status_name(loom_last_status()),
                 loom_last_error(), needle);
    loom_attrs_free(a);
}

static void class_attributes_refuse_bad_values(void **state)
{
    (void)state;
    char path[300];
    path_of(path, sizeof path, "two.safetensors");
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 2, (const int64_t[]){ 3, 4 }, NULL), LOOM_OK);
    if (loom_safetensors_write(path, (const char *[]){ "table.0", "table.1" }, (const loom_tensor *[]){ t, t }, 2)
        != LOOM_OK)
        fail_msg("write: %s", loom_last_error());
    loom_tensor_free(t);
    static const struct { const char *name, *values[6], *needle; } cases[] = {
        { "embedding_dims", { "4,0", "-4,4", NULL }, "'embedding_dims' must be > 0" },
        { "embedding_dims", { "9223372036854775807,4", "4611686018427387904,4", NULL }, "'embedding_dims'" },
        { "embedding_dims", { "4,2147483647", NULL }, "takes" },
        { "num_embeddings", { "-1,3", "3,-9223372036854775808", NULL }, "'num_embeddings' must be >= 0" },
        { "num_embeddings", { "9223372036854775807,3", "3,2147483647", NULL }, "'num_embeddings'" },
        { "feature_table_map", { "0,-1", NULL }, "'feature_table_map' must be >= 0" },
        { "feature_table_map", { "0,9223372036854775807", "2147483647", NULL }, "'feature_table_map'" },
        { "row_alignment", { "0", "-16", NULL }, "'row_alignment' must be > 0" },
        { "row_alignment", { "9223372036854775807", "2147483647", NULL }, "'row_alignment'" },
        { "fp8_exponent_bits", { "0", "-1", NULL }, "'fp8_exponent_bits' must be > 0" },
        { "fp8_exponent_bits", { "9223372036854775807", "2147483647", NULL }, "'fp8_exponent_bits'" },
        { "fp8_exponent_bias", { "0", "-7", NULL }, "'fp8_exponent_bias' must be > 0" },
        { "fp8_exponent_bias", { "9223372036854775807", "2147483647", NULL }, "'fp8_exponent_bias'" },
        { "cache_load_factor", { "nan", "inf", "-inf", "-0.5", NULL }, "'cache_load_factor' must be finite" },
        { "cache_load_factor", { "1e300", "1.5", NULL }, "'cache_load_factor'" },
        { "cache_assoc", { "0", "-1", NULL }, "'cache_assoc' must be > 0" },
        { "cache_assoc", { "9223372036854775807", "2147483647", NULL }, "'cache_assoc'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (size_t v = 0; v < 6 && cases[i].values[v] != NULL; v++)
            expect_refused(path, cases[i].name, cases[i].values[v], cases[i].needle);
    unlink(path);
}

static void truncated_file_is_refused_before_reading(void **state)
{
    (void)state;
    enum { ROWS = 4096, D = 16, CALLS = 20000 };
    char path[300];
    path_of(path, sizeof path, "shrinking.safetensors");
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, 2, (const int64_t[]){ ROWS, D }, NULL), LOOM_OK);
    float *v = loom_data(t);
    for (int64_t i = 0; i < (int64_t)ROWS * D; i++)
        v[i] = (float)(i % 97);
    if (loom_safetensors_write(path, (const char *[]){ "table.0" }, (const loom_tensor *[]){ t }, 1) != LOOM_OK)
        fail_msg("write: %s", loom_last_error());
    loom_tensor_free(t);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_float(a, "cache_load_factor", 0.25);
    loom_object *plain = tt_create(path, NULL), *cached = tt_create(path, a);
    loom_attrs_free(a);
    assert_non_null(plain);
    assert_non_null(cached);
    /* one bag reading the last row */
    loom_tensor *ind, *off, *out = NULL;
    assert_int_equal(loom_tensor_new(&ind, LOOM_DTYPE_I64, 1, (const int64_t[]){ 1 }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&off, LOOM_DTYPE_I64, 1, (const int64_t[]){ 2 }, NULL), LOOM_OK);
    ((int64_t *)loom_data(ind))[0] = ROWS - 1;
    ((int64_t *)loom_data(off))[1] = 1;
    double t0 = now();
    for (int i = 0; i < CALLS; i++) {
        loom_tensor_free(out);
        if (tt_run("fbgemm.tbe", plain, ind, off, NULL, NULL, NULL, &out) != LOOM_OK)
            fail_msg("call: %s", loom_last_error());
    }
    double per_call = (now() - t0) / CALLS;
    assert_true(((const float *)loom_data(out))[0] == (float)(((ROWS - 1) * D) % 97));
    /* the check itself is one fstat of the file */
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct stat sb;
    t0 = now();
    for (int i = 0; i < CALLS; i++)
        assert_int_equal(fstat(fd, &sb), 0);
    double per_fstat = (now() - t0) / CALLS;
    close(fd);
    printf("fbgemm.tbe call of one bag: %.2f us; the file-size check (fstat): %.3f us\n", per_call * 1e6,
           per_fstat * 1e6);

    /* truncated in place: refused before a row past the end is touched (SIGBUS otherwise) */
    assert_int_equal(truncate(path, 4096), 0);
    loom_tensor_free(out);
    tt_assert_fails(tt_run("fbgemm.tbe", plain, ind, off, NULL, NULL, NULL, &out), LOOM_EFORMAT, "shrank");
    assert_null(out);
    tt_assert_fails(tt_run("fbgemm.tbe_prefetch", cached, ind, off, NULL, NULL, NULL, NULL), LOOM_EFORMAT,
                    "shrank");
    tt_assert_fails(tt_run("fbgemm.tbe", cached, ind, off, NULL, NULL, NULL, &out), LOOM_EFORMAT, "shrank");
    assert_null(out);
    loom_tensor_free(ind);
    loom_tensor_free(off);
    loom_object_free(plain);
    loom_object_free(cached);
    unlink(path);
}

static int setup(void **state)
{
    if (tu_setup(state) != 0)
        return -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loom-tbe-files-XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    rmdir(dir);
    return tu_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sixty_thousand_tables_load_in_linear_time),
        cmocka_unit_test(only_canonical_names_are_tables),
        cmocka_unit_test(overflowing_row_sizes_are_refused),
        cmocka_unit_test(class_attributes_refuse_bad_values),
        cmocka_unit_test(truncated_file_is_refused_before_reading),
    };
    return cmocka_run_group_tests_name("fbgemm-tbe-files", tests, setup, teardown);
}
