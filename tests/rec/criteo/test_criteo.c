/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_criteo.c - rec.criteo_reader on tests/data/rec/criteo/day_0.tsv
** against torchrec.datasets.criteo's parsing of the same file
** (tools/gen_rec_criteo.py): every batch's dense features within 1 ulp-ish
** of torchrec's f32 (shift_min: numpy's f32 log and ours may differ in the
** last bit, so rtol 2^-23 with atol 0) or of the float64 formula rounded
** once (log1p: exactly the nearest f32, as ours; atol 0, rtol 2^-24 for the
** libm's last bit), the ids and labels exactly, the KJT's lengths and keys.
** Then the batching (drop_last, the end of the file), and the refusals:
** too few or too many fields, a bad hex id, a bad integer, bad options,
** each message naming file:line and the field.
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

#define CLS "rec.criteo_reader"
#define ROWS 200
enum { OUT_DENSE, OUT_LABELS, OUT_KEYS, OUT_KEYS_OFF, OUT_VALUES, OUT_LENGTHS, OUT_OFFSETS, OUT_WEIGHTS, OUT_SPKPR,
       OUT_INVERSE, OUT_STRIDE, OUT_SPK, OUT_LPK, OUT_OPK, N_OUT };

static int64_t hashes[26];
static char scratch_dir[256];

static int scratch_setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(scratch_dir, sizeof scratch_dir, "%s/loom-criteo-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(scratch_dir) ? 0 : -1;
}

static int scratch_teardown(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/bad.tsv", scratch_dir);
    remove(path);
    return rmdir(scratch_dir);
}

static loom_status open_reader(const char *path, int64_t batch, const char *dense, const char *missing, int hashed,
                               int drop_last, loom_object **o)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", path), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "batch_size", batch), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "dense_transform", dense), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "missing", missing), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "drop_last", drop_last), LOOM_OK);
    if (hashed)
        assert_int_equal(loom_attrs_set_ints(a, "hashes", hashes, 26), LOOM_OK);
    loom_status st = loom_object_create(o, CLS, a, NULL);
    loom_attrs_free(a);
    return st;
}

static loom_status next_batch(loom_object *o, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    for (int i = 0; i < N_OUT; i++)
        out[i] = NULL;
    return loom_run(CLS, NULL, 0, NULL, out, N_OUT, &opt);
}

static void free_outs(loom_tensor **out)
{
    for (int i = 0; i < N_OUT; i++)
        loom_tensor_free(out[i]);
}

static void load_hashes(void)
{
    FILE *f = fopen(tu_data_path("rec/criteo/hashes.txt"), "r");
    assert_non_null(f);
    for (int k = 0; k < 26; k++) {
        long long h;
        assert_int_equal(fscanf(f, k ? ",%lld" : "%lld", &h), 1);
        hashes[k] = h;
    }
    fclose(f);
}

/* Reads the whole file in batches of `batch` and checks every row. */
static void check_file(const char *dense_mode, const char *missing, int hashed, int64_t batch)
{
    loom_tensor *dense = tu_npy(!strcmp(dense_mode, "shift_min") ? "rec/criteo/tsv_dense" : "rec/criteo/log1p_dense");
    loom_tensor *ids = tu_npy(hashed ? "rec/criteo/hashed_sparse" : "rec/criteo/tsv_sparse");
    loom_tensor *labels = tu_npy("rec/criteo/tsv_labels");
    loom_tensor *present = tu_npy("rec/criteo/present");
    const float *wd = loom_data(dense);
    const int64_t *wi = loom_data(ids);
    const int32_t *wl = loom_data(labels);
    const uint8_t *wp = loom_data(present);
    const double rtol = !strcmp(dense_mode, "shift_min") ? 0x1p-23 : 0x1p-24;
    const int zero = !strcmp(missing, "zero");
    loom_object *o = NULL;
    if (open_reader(tu_data_path("rec/criteo/day_0.tsv"), batch, dense_mode, missing, hashed, 0, &o) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    int64_t row0 = 0;
    for (;;) {
        loom_tensor *out[N_OUT];
        if (next_batch(o, out) != LOOM_OK)
            fail_msg("%s", loom_last_error());
        const int64_t B = out[OUT_DENSE]->shape[0];
        assert_int_equal(B, row0 + batch <= ROWS ? batch : ROWS - row0);
        assert_int_equal(out[OUT_DENSE]->shape[1], 13);
        assert_int_equal(*(int64_t *)loom_data(out[OUT_STRIDE]), B);
        assert_int_equal(loom_tensor_dtype_of(out[OUT_LENGTHS]), LOOM_DTYPE_I32);
        assert_int_equal(loom_tensor_dtype_of(out[OUT_VALUES]), LOOM_DTYPE_I64);
        assert_int_equal(out[OUT_KEYS_OFF]->shape[0], 27);
        const char *keys = loom_data(out[OUT_KEYS]);
        const int64_t *ko = loom_data(out[OUT_KEYS_OFF]);
        assert_memory_equal(keys + ko[25], "cat_25", 6);
        assert_memory_equal(keys, "cat_0", 5);
        const float *gd = loom_data(out[OUT_DENSE]), *gl = loom_data(out[OUT_LABELS]);
        for (int64_t b = 0; b < B; b++) {
            assert_int_equal((int)gl[b], wl[row0 + b]);
            for (int j = 0; j < 13; j++) {
                const double want = wd[(row0 + b) * 13 + j], got = gd[b * 13 + j];
                if (!(got == want || (want != 0 && (got - want) / want <= rtol && (want - got) / want <= rtol)))
                    fail_msg("%s row %lld int_%d: %.9g, torchrec %.9g", dense_mode, (long long)(row0 + b), j, got,
                             want);
            }
        }
        const int32_t *len = loom_data(out[OUT_LENGTHS]);
        const int64_t *val = loom_data(out[OUT_VALUES]);
        int64_t v = 0;
        for (int k = 0; k < 26; k++)
            for (int64_t b = 0; b < B; b++) {
                const int64_t r = row0 + b;
                const int has = zero || wp[r * 26 + k];
                if (len[k * B + b] != has)
                    fail_msg("row %lld cat_%d: length %d, expected %d", (long long)r, k, len[k * B + b], has);
                if (has) {
                    const int64_t want = wp[r * 26 + k] ? wi[r * 26 + k] : 0;
                    if (val[v] != want)
                        fail_msg("row %lld cat_%d: id %lld, torchrec %lld", (long long)r, k, (long long)val[v],
                                 (long long)want);
                    v++;
                }
            }
        assert_int_equal(out[OUT_VALUES]->shape[0], v);
        free_outs(out);
        if (B == 0)
            break;
        row0 += B;
    }
    assert_int_equal(row0, ROWS);
    loom_object_free(o);
    loom_tensor_free(dense);
    loom_tensor_free(ids);
    loom_tensor_free(labels);
    loom_tensor_free(present);
}

static void test_shift_min_zero(void **state)
{
    (void)state;
    check_file("shift_min", "zero", 0, 64);   /* torchrec's tsv_to_npys exactly */
}

static void test_log1p_empty_hashed(void **state)
{
    (void)state;
    load_hashes();
    check_file("log1p", "empty", 1, 37);
    check_file("log1p", "zero", 1, 1000);     /* one batch of all the rows */
}

static void test_drop_last(void **state)
{
    (void)state;
    loom_object *o = NULL;
    assert_int_equal(open_reader(tu_data_path("rec/criteo/day_0.tsv"), 64, "none", "empty", 0, 1, &o), LOOM_OK);
    int64_t total = 0;
    for (;;) {
        loom_tensor *out[N_OUT];
        assert_int_equal(next_batch(o, out), LOOM_OK);
        const int64_t B = out[OUT_DENSE]->shape[0];
        free_outs(out);
        if (B == 0)
            break;
        assert_int_equal(B, 64);
        total += B;
    }
    assert_int_equal(total, 192);
    loom_object_free(o);
}

/* Writes text to a scratch file and reads it in one batch: the status and message. */
static loom_status read_text(const char *text, const char *dense_mode, char *msg, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad.tsv", scratch_dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    loom_object *o = NULL;
    loom_status st = open_reader(path, 8, dense_mode, "empty", 0, 0, &o);
    if (st == LOOM_OK) {
        loom_tensor *out[N_OUT];
        st = next_batch(o, out);
        if (st == LOOM_OK)
            free_outs(out);
        loom_object_free(o);
    }
    snprintf(msg, n, "%s", st == LOOM_OK ? "" : loom_last_error());
    return st;
}

#define GOOD1 "1\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13" \
    "\ta\tb\tc\td\te\tf\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\n"

static void expect_bad(const char *text, const char *want1, const char *want2)
{
    char msg[512];
    for (int shift = 0; shift < 2; shift++) {
        assert_int_not_equal(read_text(text, shift ? "shift_min" : "log1p", msg, sizeof msg), LOOM_OK);
        if (!strstr(msg, want1) || !strstr(msg, want2))
            fail_msg("expected '%s' and '%s' in: %s", want1, want2, msg);
    }
}

static void test_bad_lines(void **state)
{
    (void)state;
    char msg[512];
    /* the good line and an empty-field line (39 tabs) read; a final line without '\n' too; CRLF too */
    assert_int_equal(read_text(GOOD1 "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\r\n"
                               "0\t-5\t\t\t\t\t\t\t\t\t\t\t\t\tFFFFFFFF\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t",
                               "log1p", msg, sizeof msg), LOOM_OK);
    expect_bad(GOOD1 "1\t2\t3\n", ":2:", "3 tab-separated fields");
    expect_bad(GOOD1 GOOD1 "\n", ":3:", "1 tab-separated fields");
    expect_bad("1\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\ta\tb\tc\td\te\tf\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11"
               "\t12\t13\t14\t15\t16\t17\t18\tzz\n", ":1:", "cat_25: 'zz' is not");
    expect_bad(GOOD1 "1\t1\t2x\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\ta\tb\tc\td\te\tf\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9"
               "\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\n", ":2:", "int_1: '2x'");
    expect_bad("1\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t99999999999999999999\ta\tb\tc\td\te\tf\t0\t1\t2\t3\t4\t5\t6"
               "\t7\t8\t9\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\n", ":1:", "int_12");
    expect_bad("1\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\t12345678901234567\tb\tc\td\te\tf\t0\t1\t2\t3\t4\t5\t6"
               "\t7\t8\t9\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\n", ":1:", "cat_0");
    expect_bad("x" GOOD1, ":1:", "label: 'x1'");
    expect_bad(GOOD1 "1\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\t12\t13\ta\tb\tc\td\te\tf\t0\t1\t2\t3\t4\t5\t6\t7\t8\t9"
               "\t10\t11\t12\t13\t14\t15\t16\t17\t18\t19\t20\n", ":2:", "more than 40");
    expect_bad("1\t\n", ":1:", "2 tab-separated");
}

/* A bad line fails its call; the next call returns the rows read before it and those after it. */
static void test_resume_after_bad_line(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/bad.tsv", scratch_dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(GOOD1 GOOD1 GOOD1 "1\t2\n" GOOD1 GOOD1, f);
    fclose(f);
    loom_object *o = NULL;
    assert_int_equal(open_reader(path, 8, "log1p", "empty", 0, 0, &o), LOOM_OK);
    loom_tensor *out[N_OUT];
    assert_int_equal(next_batch(o, out), LOOM_EFORMAT);
    assert_non_null(strstr(loom_last_error(), "bad.tsv:4:"));
    assert_int_equal(next_batch(o, out), LOOM_OK);
    assert_int_equal(out[OUT_DENSE]->shape[0], 5);
    assert_int_equal(out[OUT_VALUES]->shape[0], 5 * 26);
    free_outs(out);
    assert_int_equal(next_batch(o, out), LOOM_OK);
    assert_int_equal(out[OUT_DENSE]->shape[0], 0);
    free_outs(out);
    loom_object_free(o);
}

static void test_bad_options(void **state)
{
    (void)state;
    loom_object *o = NULL;
    const char *tsv = tu_data_path("rec/criteo/day_0.tsv");
    assert_int_not_equal(open_reader("/nonexistent/day_0.tsv", 8, "log1p", "empty", 0, 0, &o), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "/nonexistent/day_0.tsv"));
    assert_int_not_equal(open_reader(tsv, 8, "log", "empty", 0, 0, &o), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "dense_transform"));
    assert_int_not_equal(open_reader(tsv, 8, "log1p", "skip", 0, 0, &o), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "missing"));
    assert_int_not_equal(open_reader(tsv, 0, "log1p", "empty", 0, 0, &o), LOOM_OK);
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", tsv), LOOM_OK);
    int64_t h[25] = { 0 };
    assert_int_equal(loom_attrs_set_ints(a, "hashes", h, 25), LOOM_OK);
    assert_int_not_equal(loom_object_create(&o, CLS, a, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "hashes"));
    int64_t h26[26];
    for (int k = 0; k < 26; k++)
        h26[k] = k == 7 ? 0 : 10;
    assert_int_equal(loom_attrs_set_ints(a, "hashes", h26, 26), LOOM_OK);
    assert_int_not_equal(loom_object_create(&o, CLS, a, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "cat_7"));
    loom_attrs_free(a);
    /* the method without an object */
    loom_tensor *out[N_OUT];
    assert_int_not_equal(loom_run(CLS, NULL, 0, NULL, out, N_OUT, NULL), LOOM_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shift_min_zero),
        cmocka_unit_test(test_log1p_empty_hashed),
        cmocka_unit_test(test_drop_last),
        cmocka_unit_test_setup_teardown(test_bad_lines, scratch_setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_resume_after_bad_line, scratch_setup, scratch_teardown),
        cmocka_unit_test(test_bad_options),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
