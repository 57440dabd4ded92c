/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_mmt.c - rl.memmap_tensor against tensordict's MemoryMappedTensor.
** tests/data/rl/mmt (tools/gen_rl_mmt_goldens.py) holds the files
** tensordict 0.14 wrote with from_tensor, empty and writes through the
** mapping: loom must write the same bytes for the same calls, and read
** tensordict's files back equal to their .npy values. Then the behaviour of
** the mappings: a shared write is seen by another mapping of the file and
** by read(2), a private one is not, read_only refuses writes; and every
** refusal (a file that exists, a symbolic link, a missing, truncated or
** longer file, a bad dtype, rows out of range) names the argument.
*/
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "td_test_util.h"

static const struct {
    const char *name, *dtype;
} golden[] = {
    { "f32", "torch.float32" }, { "f64", "float64" }, { "f16", "torch.float16" }, { "i64", "torch.int64" },
    { "i32", "torch.int32" },   { "i16", "int16" },   { "u8", "torch.uint8" },    { "bool", "torch.bool" },
    { "scalar", "torch.float32" },
};

static char *path_in(const char *dir, const char *name)
{
    static char p[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void assert_same_file(const char *got, const char *want)
{
    size_t ng, nw;
    char *g = tdt_slurp(got, &ng), *w = tdt_slurp(want, &nw);
    if (ng != nw || memcmp(g, w, ng) != 0)
        fail_msg("%s (%zu bytes) differs from tensordict's %s (%zu bytes)", got, ng, want, nw);
    free(g);
    free(w);
}

/* An rl.memmap_tensor from "name=value" attributes (NULL-terminated), with
** the tensor named input when `input` is not NULL; NULL on failure (status
** in *st when st is not NULL, else the test fails). */
static loom_object *mmt_create(loom_status *st, const loom_tensor *input, ...)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    va_list ap;
    va_start(ap, input);
    for (const char *kv = va_arg(ap, const char *); kv != NULL; kv = va_arg(ap, const char *)) {
        const char *eq = strchr(kv, '=');
        char name[64];
        assert_non_null(eq);
        snprintf(name, sizeof name, "%.*s", (int)(eq - kv), kv);
        if (loom_attrs_parse(a, "rl.memmap_tensor", name, eq + 1) != LOOM_OK)
            fail_msg("%s: %s", kv, loom_last_error());
    }
    va_end(ap);
    loom_object_options opt = LOOM_OBJECT_OPTIONS_INIT;
    loom_named_tensor named = { .name = "input", .tensor = input };
    if (input != NULL) {
        opt.n_tensors = 1;
        opt.tensors = &named;
    }
    loom_object *o = NULL;
    loom_status s = loom_object_create_ex(&o, "rl.memmap_tensor", a, &opt);
    loom_attrs_free(a);
    if (st != NULL)
        *st = s;
    else if (s != LOOM_OK)
        fail_msg("rl.memmap_tensor: %s", loom_last_error());
    return o;
}

/* "shape=3,4" for a tensor's shape (a scalar: no attribute, an empty string). */
static const char *shape_attr(const loom_tensor *t, char *buf, size_t n)
{
    int k = snprintf(buf, n, "shape=");
    for (int32_t d = 0; d < t->ndim; d++)
        k += snprintf(buf + k, n - (size_t)k, "%s%lld", d ? "," : "", (long long)t->shape[d]);
    return t->ndim > 0 ? buf : NULL;
}

static loom_tensor *as_tensor(loom_object *o)
{
    loom_tensor *t = NULL;
    if (tdt_call(o, "rl.mmt_as_tensor", NULL, &t, NULL) != LOOM_OK)
        fail_msg("rl.mmt_as_tensor: %s", loom_last_error());
    return t;
}

static void test_from_tensor_writes_tensordicts_bytes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        char rel[64], fn[1100];
        snprintf(rel, sizeof rel, "rl/mmt/%s", golden[i].name);
        loom_tensor *v = tu_npy(rel);
        snprintf(rel, sizeof rel, "%s.memmap", golden[i].name);
        snprintf(fn, sizeof fn, "filename=%s", path_in(tdt_scratch, rel));
        loom_object *o = mmt_create(NULL, v, "from=from_tensor", fn, NULL);
        assert_same_file(path_in(tdt_scratch, rel), tu_data_path(path_in("rl/mmt", rel)));
        loom_tensor *back = as_tensor(o);
        tdt_assert_bytes(back, v, golden[i].name);
        loom_tensor_free(back);
        loom_object_free(o);
        loom_tensor_free(v);
    }
}

static void test_from_filename_reads_tensordicts_files(void **state)
{
    (void)state;
    static const char *const modes[] = { "auto", "shared", "private", "read_only" };
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++)
        for (int m = 0; m < 4; m++) {
            char rel[64], fn[1100], dt[64], md[32], sh[128];
            snprintf(rel, sizeof rel, "rl/mmt/%s", golden[i].name);
            loom_tensor *want = tu_npy(rel);
            snprintf(rel, sizeof rel, "rl/mmt/%s.memmap", golden[i].name);
            /* shared maps read-write: on a copy, so the goldens stay untouched */
            const char *file = tu_data_path(rel);
            if (m == 1) {
                size_t n;
                char *b = tdt_slurp(file, &n);
                file = path_in(tdt_scratch, "copy.memmap");
                FILE *f = fopen(file, "wb");
                assert_int_equal(fwrite(b, 1, n, f), n);
                fclose(f);
                free(b);
            }
            snprintf(fn, sizeof fn, "filename=%s", file);
            snprintf(dt, sizeof dt, "dtype=%s", golden[i].dtype);
            snprintf(md, sizeof md, "mode=%s", modes[m]);
            loom_object *o = mmt_create(NULL, NULL, "from=from_filename", fn, dt, md, shape_attr(want, sh, sizeof sh),
                                        NULL);
            loom_tensor *got = as_tensor(o);
            tdt_assert_bytes(got, want, golden[i].name);
            assert_int_equal(got->dtype.code, want->dtype.code);
            assert_int_equal(got->dtype.bits, want->dtype.bits);
            loom_tensor_free(got);
            loom_object_free(o);
            loom_tensor_free(want);
        }
}

static void test_empty_and_row_writes_as_tensordict(void **state)
{
    (void)state;
    char fn[1100];
    snprintf(fn, sizeof fn, "filename=%s", path_in(tdt_scratch, "empty.memmap"));
    loom_object *e = mmt_create(NULL, NULL, "from=empty", fn, "dtype=torch.float32", "shape=3,2", NULL);
    assert_same_file(path_in(tdt_scratch, "empty.memmap"), tu_data_path("rl/mmt/empty.memmap"));
    loom_object_free(e);

    /* t = empty((4, 3), int64); t[1:3] = rows; t[3] = 7 */
    snprintf(fn, sizeof fn, "filename=%s", path_in(tdt_scratch, "rows.memmap"));
    loom_object *o = mmt_create(NULL, NULL, "from=empty", fn, "dtype=int64", "shape=4,3", NULL);
    loom_tensor *rows = tu_npy("rl/mmt/rows");
    assert_int_equal(tdt_call(o, "rl.mmt_write", rows, NULL, "offset=1", NULL), LOOM_OK);
    int64_t one[] = { 1, 3 };
    loom_tensor *sevens = tdt_tensor(LOOM_DTYPE_I64, 2, one, (const double[]){ 7, 7, 7 });
    assert_int_equal(tdt_call(o, "rl.mmt_write", sevens, NULL, "offset=3", NULL), LOOM_OK);
    assert_int_equal(tdt_call(o, "rl.mmt_flush", NULL, NULL, NULL), LOOM_OK);
    assert_same_file(path_in(tdt_scratch, "rows.memmap"), tu_data_path("rl/mmt/rows.memmap"));

    /* t[1:3] as a tensor gives the rows back */
    loom_tensor *part = NULL;
    assert_int_equal(tdt_call(o, "rl.mmt_as_tensor", NULL, &part, "rows=1,3", NULL), LOOM_OK);
    tdt_assert_bytes(part, rows, "t[1:3]");
    loom_tensor_free(part);
    loom_tensor *json = NULL;
    assert_int_equal(tdt_call(o, "rl.mmt_describe", NULL, &json, NULL), LOOM_OK);
    char want[1300];
    snprintf(want, sizeof want, "{\"filename\":\"%s\",\"dtype\":\"torch.int64\",\"shape\":[4,3],\"mode\":\"shared\"}",
             path_in(tdt_scratch, "rows.memmap"));
    assert_int_equal(json->shape[0], (int64_t)strlen(want));
    assert_memory_equal(json->data, want, strlen(want));
    loom_tensor_free(json);
    loom_tensor_free(sevens);
    loom_tensor_free(rows);
    loom_object_free(o);
}

/* Writes through one shared mapping reach another and the file; a private
** mapping's writes stay its own; read_only refuses them. */
static void test_mappings_share_writes(void **state)
{
    (void)state;
    char fn[1100];
    const char *file = path_in(tdt_scratch, "shared.memmap");
    snprintf(fn, sizeof fn, "filename=%s", file);
    int64_t shape[] = { 4, 2 };
    loom_tensor *ramp = tdt_ramp(2, shape, 1.0, 0.0);
    loom_object *a = mmt_create(NULL, ramp, "from=from_tensor", fn, NULL);
    loom_object *b = mmt_create(NULL, NULL, "from=from_filename", fn, "dtype=float32", "shape=4,2", "mode=shared",
                                NULL);
    loom_object *p = mmt_create(NULL, NULL, "from=from_filename", fn, "dtype=float32", "shape=4,2", "mode=private",
                                NULL);
    loom_object *r = mmt_create(NULL, NULL, "from=from_filename", fn, "dtype=float32", "shape=4,2",
                                "mode=read_only", NULL);
    int64_t one[] = { 1, 2 };
    loom_tensor *row = tdt_tensor(LOOM_DTYPE_F32, 2, one, (const double[]){ -1.5, 9.0 });
    assert_int_equal(tdt_call(a, "rl.mmt_write", row, NULL, "offset=2", NULL), LOOM_OK);
    const float want[] = { 0, 1, 2, 3, -1.5f, 9, 6, 7 };
    for (int k = 0; k < 3; k++) {
        loom_tensor *t = as_tensor(k == 0 ? b : k == 1 ? r : a);
        assert_memory_equal(t->data, want, sizeof want);
        loom_tensor_free(t);
    }
    float disk[8];
    int fd = open(file, O_RDONLY);
    assert_int_equal(pread(fd, disk, sizeof disk, 0), (ssize_t)sizeof disk);
    close(fd);
    assert_memory_equal(disk, want, sizeof want);

    /* a private mapping's write is its own */
    loom_tensor *other = tdt_tensor(LOOM_DTYPE_F32, 2, one, (const double[]){ 100, 200 });
    assert_int_equal(tdt_call(p, "rl.mmt_write", other, NULL, "offset=0", NULL), LOOM_OK);
    assert_int_equal(tdt_call(p, "rl.mmt_flush", NULL, NULL, NULL), LOOM_OK);
    loom_tensor *t = as_tensor(p);
    assert_true(((const float *)t->data)[0] == 100.0f);
    loom_tensor_free(t);
    t = as_tensor(b);
    assert_true(((const float *)t->data)[0] == 0.0f);
    loom_tensor_free(t);

    tdt_assert_fails(tdt_call(r, "rl.mmt_write", other, NULL, NULL), LOOM_EINVAL, "read_only; writes are refused");
    tdt_assert_fails(tdt_call(a, "rl.mmt_write", other, NULL, "offset=4", NULL), LOOM_EINVAL, "offset + n <= 4");
    loom_tensor *wrong = tdt_tensor(LOOM_DTYPE_F64, 2, one, (const double[]){ 1, 2 });
    tdt_assert_fails(tdt_call(a, "rl.mmt_write", wrong, NULL, NULL), LOOM_EINVAL, "value: f64, but the tensor is f32");
    int64_t three[] = { 1, 3 };
    loom_tensor *wide = tdt_tensor(LOOM_DTYPE_F32, 2, three, (const double[]){ 1, 2, 3 });
    tdt_assert_fails(tdt_call(a, "rl.mmt_write", wide, NULL, NULL), LOOM_EINVAL, "rows [n, 2]");
    tdt_assert_fails(tdt_call(a, "rl.mmt_as_tensor", NULL, &t, "rows=3,5", NULL), LOOM_EINVAL, "stop <= 4");
    loom_tensor_free(wide);
    loom_tensor_free(wrong);
    loom_tensor_free(other);
    loom_tensor_free(row);
    loom_tensor_free(ramp);
    loom_object_free(r);
    loom_object_free(p);
    loom_object_free(b);
    loom_object_free(a);
}

static void test_refusals(void **state)
{
    (void)state;
    char fn[1100], cmd[2300];
    loom_status st;
    int64_t two[] = { 2 };
    loom_tensor *v = tdt_tensor(LOOM_DTYPE_F32, 1, two, (const double[]){ 1, 2 });
    const char *file = path_in(tdt_scratch, "exists.memmap");
    snprintf(fn, sizeof fn, "filename=%s", file);
    loom_object_free(mmt_create(NULL, v, "from=from_tensor", fn, NULL));
    /* an existing file is refused unless existsok, and left as it was */
    assert_null(mmt_create(&st, v, "from=from_tensor", fn, NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "already exists (existsok=true");
    assert_null(mmt_create(&st, NULL, "from=empty", fn, "dtype=float32", "shape=2", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "already exists");
    loom_object_free(mmt_create(NULL, NULL, "from=empty", fn, "dtype=float32", "shape=3", "existsok=true", NULL));
    struct stat sb;
    assert_int_equal(stat(file, &sb), 0);
    assert_int_equal(sb.st_size, 12);
    /* a symbolic link is never written through */
    const char *link = path_in(tdt_scratch, "link.memmap");
    assert_int_equal(symlink(file, link), 0);
    snprintf(fn, sizeof fn, "filename=%s", link);
    assert_null(mmt_create(&st, v, "from=from_tensor", fn, "existsok=true", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "symbolic link");
    /* from_filename: missing, truncated, longer files and bad dtypes */
    snprintf(fn, sizeof fn, "filename=%s", path_in(tdt_scratch, "missing.memmap"));
    assert_null(mmt_create(&st, NULL, "from=from_filename", fn, "dtype=float32", "shape=2", NULL));
    tdt_assert_fails(st, LOOM_ENOENT, "missing.memmap: the file cannot be opened");
    snprintf(fn, sizeof fn, "filename=%s", file);
    assert_null(mmt_create(&st, NULL, "from=from_filename", fn, "dtype=float32", "shape=4", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "holds 12 bytes, but the dtype and shape given need 16 (truncated)");
    assert_null(mmt_create(&st, NULL, "from=from_filename", fn, "dtype=float32", "shape=2", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "holds 12 bytes, but the dtype and shape given need 8");
    assert_null(mmt_create(&st, NULL, "from=from_filename", fn, "dtype=torch.complex64", "shape=2", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "dtype: 'torch.complex64'");
    assert_null(mmt_create(&st, NULL, "from=from_filename", fn, "shape=3", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "dtype: ''");
    assert_null(mmt_create(&st, NULL, "from=from_tensor", fn, "existsok=true", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "needs the tensor named input");
    assert_null(mmt_create(&st, NULL, "from=empty", fn, "dtype=float32", "shape=3", "existsok=true",
                           "mode=private", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "mode=private: from=empty makes the file");
    snprintf(fn, sizeof fn, "filename=%s/no/such/dir/x.memmap", tdt_scratch);
    assert_null(mmt_create(&st, v, "from=from_tensor", fn, NULL));
    tdt_assert_fails(st, LOOM_ENOENT, "cannot create the file");
    /* a read-only file opens private under mode=auto, as tensordict maps it */
    snprintf(cmd, sizeof cmd, "chmod a-w '%s'", file);
    assert_int_equal(system(cmd), 0);
    snprintf(fn, sizeof fn, "filename=%s", file);
    loom_object *o = mmt_create(NULL, NULL, "from=from_filename", fn, "dtype=float32", "shape=3", NULL);
    loom_tensor *json = NULL;
    assert_int_equal(tdt_call(o, "rl.mmt_describe", NULL, &json, NULL), LOOM_OK);
    const char *mode = getuid() == 0 ? "\"mode\":\"shared\"" : "\"mode\":\"private\"";   /* root may write it */
    char *text = strndup(json->data, (size_t)json->shape[0]);
    assert_non_null(strstr(text, mode));
    free(text);
    loom_tensor_free(json);
    loom_object_free(o);
    loom_tensor_free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_tensor_writes_tensordicts_bytes),
        cmocka_unit_test(test_from_filename_reads_tensordicts_files),
        cmocka_unit_test(test_empty_and_row_writes_as_tensordict),
        cmocka_unit_test(test_mappings_share_writes),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tdt_scratch_setup, tdt_scratch_teardown);
}
