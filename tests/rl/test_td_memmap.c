/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_td_memmap.c - tensordict's memmap layout both ways. The golden
** directory tests/data/rl/td/py_memmap was written by tensordict 0.14's
** TensorDict.memmap (tools/gen_rl_td_goldens.py); every leaf must load bit
** for bit equal to expect/<key>.npy and every NonTensorData to its JSON.
** Then loom writes the dict itself, to $LOOM_BUILD_ROOT/tests/rl/td_from_loom
** (tools/check_rl_td_memmap.py reads it back with TensorDict.load_memmap),
** and reads its own files back. Broken copies (invalid or lying meta.json,
** truncated, missing or oversized leaf files) fail naming file and fault.
** How a save writes (in place into a fresh directory, beside and renamed
** over existing files, every meta.json after the leaves) and a large leaf
** read into memory (map=read) are checked on a dict of loom's own.
*/
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "td_test_util.h"

static const char *const leaves[] = {
    "observation", "action", "next.observation", "next.reward", "next.done", "a b/c", "half", "brain",
    "pixels", "i8", "i16", "i32", "empty", "traj.x",
};

/* NonTensorData as tensordict wrote them (cJSON prints 0.001 as 0.001). */
static const char *const non_tensor[][2] = {
    { "env_name", "\"CartPole-v1\"" },
    { "config", "{\"lr\":0.001,\"layers\":[64,64],\"ok\":true,\"none\":null,\"name\":\"ppo\"}" },
    { "next.info", "3" },
};

static loom_object *load(const char *dir, const char *map, loom_status *st)
{
    char p[4200], m[32];
    snprintf(p, sizeof p, "path=%s", dir);
    snprintf(m, sizeof m, "map=%s", map);
    return tdt_create(st, "from=load", p, m, NULL);
}

static void check_golden_content(loom_object *o)
{
    int64_t b[4];
    assert_int_equal(tdt_batch(o, b), 1);
    assert_int_equal(b[0], 4);
    for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) {
        char rel[256], file[128];
        size_t k = 0;
        for (const char *c = leaves[i]; *c; c++)
            k += (size_t)snprintf(file + k, sizeof file - k, *c == '/' ? "%%2F" : "%c", *c);
        snprintf(rel, sizeof rel, "rl/td/expect/%s", file);
        loom_tensor *want = tu_npy(rel);
        loom_tensor *got = tdt_get(o, leaves[i]);
        tdt_assert_bytes(got, want, leaves[i]);
        assert_int_equal(got->dtype.code, want->dtype.code == 3 /* npy |V2 bf16 */ ? got->dtype.code : want->dtype.code);
        loom_tensor_free(got);
        loom_tensor_free(want);
    }
    for (size_t i = 0; i < sizeof non_tensor / sizeof non_tensor[0]; i++) {
        char *s = tdt_get_json(o, non_tensor[i][0]);
        assert_string_equal(s, non_tensor[i][1]);
        free(s);
    }
}

static const char *golden_dir(void) { return tu_data_path("rl/td/py_memmap"); }

static void test_load_tensordict_files(void **state)
{
    (void)state;
    static const char *const maps[] = { "private", "shared", "read", "read_only" };
    for (int m = 0; m < 4; m++) {
        /* shared maps read-write: on a copy, so the goldens stay untouched */
        char tmp[] = "/tmp/loom-td-XXXXXX", cmd[2048];
        assert_non_null(mkdtemp(tmp));
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s/d'", golden_dir(), tmp);
        assert_int_equal(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s/d", tmp);
        loom_object *o = load(m == 1 ? cmd : golden_dir(), maps[m], NULL);
        check_golden_content(o);
        loom_object_free(o);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        assert_int_equal(system(cmd), 0);
    }
}

static void test_save_and_reload(void **state)
{
    (void)state;
    loom_object *o = load(golden_dir(), "read", NULL);
    const char *root = getenv("LOOM_BUILD_ROOT");
    char dir[1024], kv[1100];
    if (root != NULL && root[0] != '\0')
        snprintf(dir, sizeof dir, "%s/tests/rl/td_from_loom", root);
    else
        snprintf(dir, sizeof dir, "/tmp/loom-td_from_loom");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(kv, sizeof kv, "path=%s", dir);
    if (tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_save: %s", loom_last_error());
    loom_object_free(o);
    /* the encoded file name, the NonTensorData directory, no file for the empty leaf */
    struct stat sb;
    snprintf(cmd, sizeof cmd, "%s/a%%20b%%2Fc.memmap", dir);
    assert_int_equal(stat(cmd, &sb), 0);
    assert_int_equal(sb.st_size, 4 * 8);
    snprintf(cmd, sizeof cmd, "%s/next/info/meta.json", dir);
    assert_int_equal(stat(cmd, &sb), 0);
    snprintf(cmd, sizeof cmd, "%s/empty.memmap", dir);
    assert_int_not_equal(stat(cmd, &sb), 0);
    o = load(dir, "private", NULL);
    check_golden_content(o);
    /* saving again over it replaces the files */
    if (tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_save again: %s", loom_last_error());
    loom_object_free(o);
    o = load(dir, "read", NULL);
    check_golden_content(o);
    loom_object_free(o);
}

static void test_save_refusals(void **state)
{
    (void)state;
    const int64_t b[1] = { 2 };
    loom_object *o = tdt_new(1, b);
    loom_tensor *x = tdt_ramp(1, b, 1.0, 0.0);
    tdt_set(o, "shape", x);
    char tmp[] = "/tmp/loom-td-XXXXXX", kv[200], cmd[300];
    assert_non_null(mkdtemp(tmp));
    snprintf(kv, sizeof kv, "path=%s/d", tmp);
    tdt_assert_fails(tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL), LOOM_EINVAL, "meta.json uses that name");
    assert_int_equal(tdt_call(o, "rl.td_del", NULL, NULL, "key=shape", NULL), LOOM_OK);
    tdt_set(o, "x", x);
    snprintf(cmd, sizeof cmd, "%s/file", tmp);
    FILE *f = fopen(cmd, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(kv, sizeof kv, "path=%s/file", tmp);
    tdt_assert_fails(tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL), LOOM_EINVAL, "not a directory");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
    loom_tensor_free(x);
    loom_object_free(o);
}

/* ----------------------------------------------------- broken directories */

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Replace the first `from` in path's text by `to`. */
static void edit_file(const char *path, const char *from, const char *to)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[65536], out[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *hit = strstr(buf, from);
    assert_non_null(hit);
    snprintf(out, sizeof out, "%.*s%s%s", (int)(hit - buf), buf, to, hit + strlen(from));
    write_file(path, out);
}

typedef struct broken_case {
    const char *what;
    const char *file;           /* under the copy */
    const char *from, *to;      /* edit; from == NULL: see action */
    int action;                 /* 0 edit, 1 truncate to `size`, 2 remove, 3 append a byte, 4 cut meta.json */
    long size;
    loom_status status;
    const char *needle;
} broken_case;

static const broken_case broken[] = {
    { "meta.json cut short", "meta.json", NULL, NULL, 4, 0, LOOM_EINVAL, "meta.json: not valid JSON" },
    { "meta.json not an object", "meta.json", NULL, NULL, 5, 0, LOOM_EINVAL, "not a JSON object" },
    { "unknown dtype", "meta.json", "torch.float32", "torch.float99", 0, 0, LOOM_EINVAL, "dtype torch.float99" },
    { "negative dim", "meta.json", "\"shape\":[4,3]", "\"shape\":[4,-3]", 0, 0, LOOM_EINVAL, "non-negative integer" },
    { "fractional dim", "meta.json", "\"shape\":[4,3]", "\"shape\":[4,2.5]", 0, 0, LOOM_EINVAL, "non-negative integer" },
    { "shape lies", "meta.json", "\"shape\":[4,3]", "\"shape\":[4,4]", 0, 0, LOOM_EINVAL, "need 64 (truncated)" },
    { "leaf off the batch", "meta.json", "\"shape\":[4,3]", "\"shape\":[3,4]", 0, 0, LOOM_EINVAL,
      "does not start with the batch_size" },
    { "huge shape", "meta.json", "\"shape\":[4,3]", "\"shape\":[4,4294967296,4294967296]", 0, 0, LOOM_EINVAL,
      "overflows" },
    { "shape not a list", "meta.json", "\"shape\":[4,3]", "\"shape\":7", 0, 0, LOOM_EINVAL, "not a list" },
    { "nested tensor", "meta.json", "\"is_nested\":false", "\"is_nested\":true", 0, 0, LOOM_ENOTSUP, "nested" },
    { "unknown collection", "meta.json", "{\"type\":\"TensorDict\"}", "{\"type\":\"LazyStackedTensorDict\"}", 0, 0,
      LOOM_ENOTSUP, "LazyStackedTensorDict" },
    { "leaf truncated", "observation.memmap", NULL, NULL, 1, 10, LOOM_EINVAL,
      "observation.memmap: the leaf file holds 10 bytes, but meta.json's dtype and shape need 48 (truncated)" },
    { "leaf too long", "next/reward.memmap", NULL, NULL, 3, 0, LOOM_EINVAL, "holds 17 bytes" },
    { "leaf missing", "i32.memmap", NULL, NULL, 2, 0, LOOM_ENOENT, "i32.memmap: the leaf file cannot be opened" },
    { "nested meta.json missing", "traj/meta.json", NULL, NULL, 2, 0, LOOM_ENOENT, "traj/meta.json: cannot open" },
    { "NonTensorData without data", "config/meta.json", "\"data\"", "\"dat\"", 0, 0, LOOM_EINVAL, "no \"data\"" },
    { "NonTensorData pickled", "env_name/meta.json", "\"data\"", "\"dat\"", 6, 0, LOOM_ENOTSUP, "pickled" },
    { "not a TensorDict", "meta.json", "tensordict._td.TensorDict", "tensordict.tensorclass.Foo", 0, 0, LOOM_ENOTSUP,
      "_type" },
};

static void test_broken_directories(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof broken / sizeof broken[0]; c++) {
        const broken_case *k = &broken[c];
        char tmp[] = "/tmp/loom-td-XXXXXX", cmd[2048], path[1024], dir[256];
        assert_non_null(mkdtemp(tmp));
        snprintf(dir, sizeof dir, "%s/d", tmp);
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", golden_dir(), dir);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof path, "%s/%s", dir, k->file);
        switch (k->action) {
        case 0: edit_file(path, k->from, k->to); break;
        case 1: assert_int_equal(truncate(path, k->size), 0); break;
        case 2: assert_int_equal(unlink(path), 0); break;
        case 3: {
            FILE *f = fopen(path, "a");
            assert_non_null(f);
            fputc(0, f);
            fclose(f);
            break;
        }
        case 4: {
            struct stat sb;
            assert_int_equal(stat(path, &sb), 0);
            assert_int_equal(truncate(path, sb.st_size / 2), 0);
            break;
        }
        case 5: write_file(path, "[1, 2]"); break;
        case 6: {
            edit_file(path, k->from, k->to);
            snprintf(cmd, sizeof cmd, "%s/env_name/other.pickle", dir);
            write_file(cmd, "not read");
            break;
        }
        }
        loom_status st = LOOM_OK;
        loom_object *o = load(dir, c % 2 ? "read" : "private", &st);
        if (o != NULL)
            fail_msg("%s: loaded", k->what);
        if (st != k->status || strstr(loom_last_error(), k->needle) == NULL)
            fail_msg("%s: %s '%s', want %s with '%s'", k->what, loom_status_name(st), loom_last_error(),
                     loom_status_name(k->status), k->needle);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        assert_int_equal(system(cmd), 0);
    }
    loom_status st;
    assert_null(load("/nonexistent/loom-td", "private", &st));
    tdt_assert_fails(st, LOOM_ENOENT, "/nonexistent/loom-td/meta.json");
}

/* Names in dir holding ".tmp-" (files written aside and not renamed). */
static int aside_files_left(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

static void assert_leaf(loom_object *o, const char *key, const loom_tensor *want)
{
    loom_tensor *got = tdt_get(o, key);
    tdt_assert_bytes(got, want, key);
    loom_tensor_free(got);
}

static void test_save_in_place_and_aside(void **state)
{
    (void)state;
    /* map=read copies "big" (320 KB) into a populated anonymous mapping,
    ** "huge" (2.5 MiB, not a whole number of huge pages) into one asking
    ** for transparent huge pages */
    const int64_t b[1] = { 2 }, shape[2] = { 2, 40000 }, huge_shape[2] = { 2, 327680 };
    loom_object *o = tdt_new(1, b);
    loom_tensor *big = tdt_ramp(2, shape, 0.5, 1.0), *big2 = tdt_ramp(2, shape, -1.0, 7.0);
    loom_tensor *huge = tdt_ramp(2, huge_shape, 0.25, -3.0);
    loom_tensor *small = tdt_ramp(1, b, 1.0, 3.0);
    tdt_set(o, "big", big);
    tdt_set(o, "huge", huge);
    tdt_set(o, "small", small);
    char dir[256], kv[300], path[400];
    snprintf(dir, sizeof dir, "%s/d", tdt_scratch);
    snprintf(kv, sizeof kv, "path=%s", dir);
    if (tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_save: %s", loom_last_error());
    assert_int_equal(aside_files_left(dir), 0);
    loom_object *mapped = load(dir, "private", NULL), *read = load(dir, "read", NULL);
    assert_leaf(read, "big", big);
    assert_leaf(read, "huge", huge);
    assert_leaf(read, "small", small);
    loom_object_free(read);

    /* saved again over the files a dict maps: written aside and renamed, the
    ** mapping keeps the bytes it had */
    tdt_set(o, "big", big2);
    if (tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_save again: %s", loom_last_error());
    assert_int_equal(aside_files_left(dir), 0);
    assert_leaf(mapped, "big", big);
    read = load(dir, "read", NULL);
    assert_leaf(read, "big", big2);
    assert_leaf(read, "small", small);
    loom_object_free(read);
    loom_object_free(mapped);

    /* a leaf that cannot be written: the error names it, and the fresh
    ** directory gets no meta.json (meta.json files follow the leaves) */
    snprintf(dir, sizeof dir, "%s/e", tdt_scratch);
    snprintf(kv, sizeof kv, "path=%s", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/big.memmap", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    tdt_assert_fails(tdt_call(o, "rl.td_save", NULL, NULL, kv, NULL), LOOM_EIO, "big.memmap: cannot write");
    snprintf(path, sizeof path, "%s/meta.json", dir);
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0);
    assert_int_equal(aside_files_left(dir), 0);

    loom_object_free(o);
    loom_tensor_free(big);
    loom_tensor_free(big2);
    loom_tensor_free(huge);
    loom_tensor_free(small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_tensordict_files),
        cmocka_unit_test(test_save_and_reload),
        cmocka_unit_test(test_save_refusals),
        cmocka_unit_test(test_broken_directories),
        cmocka_unit_test(test_save_in_place_and_aside),
    };
    return cmocka_run_group_tests(tests, tdt_scratch_setup, tdt_scratch_teardown);
}
