/* SPDX-License-Identifier: BSD-3-Clause */
/* tests/files/test_fileio.c - whole-file mapping and atomic replacement. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <sys/stat.h>

#include "tu_files.h"

static char *scratch;

static int setup(void **state)
{
    (void)state;
    scratch = tu_scratch_make();
    return scratch ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tu_rm_tree(scratch);
    return 0;
}

static int entries_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d)
        closedir(d);
    return n;
}

static void map_gives_the_bytes_and_empty_files_a_dummy(void **state)
{
    (void)state;
    char *path = tu_path_in(scratch, "m.bin");
    assert_int_equal(tu_write_bytes(path, "hello", 5), 0);
    const void *data = NULL;
    size_t n = 0;
    assert_int_equal(loom__map_file(path, &data, &n), LOOM_OK);
    assert_int_equal(n, 5);
    assert_memory_equal(data, "hello", 5);
    loom__unmap_file(data, n);

    assert_int_equal(tu_write_bytes(path, "", 0), 0);
    assert_int_equal(loom__map_file(path, &data, &n), LOOM_OK);
    assert_non_null(data);
    assert_int_equal(n, 0);
    loom__unmap_file(data, n);
    loom__unmap_file(NULL, 0);
    free(path);
}

static void map_errors_name_the_path(void **state)
{
    (void)state;
    const void *data = (const void *)&data;
    size_t n = 7;
    char *missing = tu_path_in(scratch, "nope.bin");
    assert_int_equal(loom__map_file(missing, &data, &n), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), missing));
    assert_null(data);
    assert_int_equal(n, 0);
    assert_int_equal(loom__map_file(scratch, &data, &n), LOOM_EIO);
    assert_non_null(strstr(loom_last_error(), "not a regular file"));
    assert_int_equal(loom__map_file(NULL, &data, &n), LOOM_EINVAL);
    free(missing);
}

/* The target is replaced whole, and no temporary file is left behind
** either after success or after a failure. */
static void write_replaces_atomically_and_leaves_no_temp(void **state)
{
    (void)state;
    char *dir = tu_path_in(scratch, "w");
    assert_int_equal(mkdir(dir, 0755), 0);
    char *path = tu_path_in(dir, "out.bin");
    const void *chunks[3] = { "ab", NULL, "cde" };
    size_t sizes[3] = { 2, 0, 3 };
    assert_int_equal(loom__write_file(path, chunks, sizes, 3), LOOM_OK);
    assert_int_equal(loom__write_file(path, chunks + 2, sizes + 2, 1), LOOM_OK);
    size_t n;
    unsigned char *b = tu_read_bytes(path, &n);
    assert_int_equal(n, 3);
    assert_memory_equal(b, "cde", 3);
    free(b);
    assert_int_equal(entries_in(dir), 1);

    const void *bad[1] = { NULL };
    size_t one[1] = { 1 };
    assert_int_equal(loom__write_file(path, bad, one, 1), LOOM_EINVAL);
    assert_int_equal(entries_in(dir), 1);
    b = tu_read_bytes(path, &n);
    assert_memory_equal(b, "cde", 3);   /* the old file survives a failed write */
    free(b);

    assert_int_equal(loom__write_file(path, NULL, NULL, 0), LOOM_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 0);

    char *nodir = tu_path_in(dir, "missing/out.bin");
    assert_int_equal(loom__write_file(nodir, chunks, sizes, 1), LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), nodir));
    assert_int_equal(loom__write_file("", chunks, sizes, 1), LOOM_EINVAL);
    assert_int_equal(loom__write_file(path, NULL, sizes, 1), LOOM_EINVAL);
    free(nodir);

    /* a bare file name is written in the current directory */
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(loom__write_file("rel.bin", chunks, sizes, 1), LOOM_OK);
    assert_int_equal(stat("rel.bin", &st), 0);
    assert_int_equal(st.st_size, 2);
    assert_int_equal(chdir("/"), 0);
    free(path);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(map_gives_the_bytes_and_empty_files_a_dummy),
        cmocka_unit_test(map_errors_name_the_path),
        cmocka_unit_test(write_replaces_atomically_and_leaves_no_temp),
    };
    return cmocka_run_group_tests_name("fileio", tests, setup, teardown);
}
