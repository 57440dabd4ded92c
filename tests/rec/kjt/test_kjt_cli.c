/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_kjt_cli.c - `loom run ... --kjt NAME=FILE.safetensors` end to end:
** a KJT written with torchrec's field names (keys, keys_offsets, values,
** lengths) fills the op's inputs and its keys attribute; a field the op has
** no input for, and one given by --in as well, are usage errors naming it.
** Spawns the built loom ($LOOM_CLI).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "loom/loom.h"

extern char **environ;
static char dir[256];

static int run_loom(const char *const *args, char *err, size_t err_size)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = getenv("LOOM_CLI");
    for (const char *const *a = args; *a && n < 31; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    char err_path[320];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    assert_int_equal(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    FILE *f = fopen(err_path, "rb");
    size_t got = f ? fread(err, 1, err_size - 1, f) : 0;
    err[got] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static loom_tensor *tensor(loom_dtype dt, int64_t n, const void *v, size_t esize)
{
    int64_t shape[1] = { n };
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, dt, 1, shape, NULL), LOOM_OK);
    if (n > 0)
        memcpy(loom_data(t), v, (size_t)n * esize);
    return t;
}

/* keys F0, F1, stride 3: the docstring's KJT of torchrec's KeyedJaggedTensor */
static void write_kjt(const char *path, int with_extra)
{
    const uint8_t keys[4] = { 'F', '0', 'F', '1' };
    const int64_t ko[3] = { 0, 2, 4 }, v[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, l[6] = { 2, 0, 1, 1, 1, 3 };
    loom_tensor *ts[5] = { tensor(LOOM_DTYPE_U8, 4, keys, 1), tensor(LOOM_DTYPE_I64, 3, ko, 8),
                           tensor(LOOM_DTYPE_I64, 8, v, 8), tensor(LOOM_DTYPE_I64, 6, l, 8),
                           tensor(LOOM_DTYPE_I64, 6, l, 8) };
    const char *names[5] = { "keys", "keys_offsets", "values", "lengths", "colour" };
    assert_int_equal(loom_safetensors_write(path, names, (const loom_tensor *const *)ts, with_extra ? 5 : 4),
                     LOOM_OK);
    for (int i = 0; i < 5; i++)
        loom_tensor_free(ts[i]);
}

static void kjt_file_fills_inputs_and_keys(void **state)
{
    (void)state;
    char path[300], arg[320], out[300], outarg[320], err[4096];
    snprintf(path, sizeof path, "%s/batch.safetensors", dir);
    snprintf(out, sizeof out, "%s/values.npy", dir);
    write_kjt(path, 0);
    snprintf(arg, sizeof arg, "features=%s", path);
    snprintf(outarg, sizeof outarg, "values=%s", out);
    const char *args[] = { "run", "rec.kjt_permute", "--kjt", arg, "--attr", "indices=1,0", "--out", outarg, NULL };
    if (run_loom(args, err, sizeof err) != 0)
        fail_msg("loom run --kjt: %s", err);
    loom_tensor *v = NULL;
    assert_int_equal(loom_npy_read(&v, out), LOOM_OK);
    const int64_t want[8] = { 4, 5, 6, 7, 8, 1, 2, 3 };      /* F1's values, then F0's */
    assert_int_equal(loom_numel(v), 8);
    assert_memory_equal(loom_data(v), want, sizeof want);
    loom_tensor_free(v);
}

static void kjt_file_errors_name_the_field(void **state)
{
    (void)state;
    char path[300], arg[320], err[4096];
    snprintf(path, sizeof path, "%s/extra.safetensors", dir);
    write_kjt(path, 1);
    snprintf(arg, sizeof arg, "f=%s", path);
    const char *args[] = { "run", "rec.kjt_to_dict", "--kjt", arg, NULL };
    assert_int_not_equal(run_loom(args, err, sizeof err), 0);
    assert_non_null(strstr(err, "has no input 'f_colour' or 'colour' for the field 'colour'"));
    snprintf(path, sizeof path, "%s/batch.safetensors", dir);
    write_kjt(path, 0);
    snprintf(arg, sizeof arg, "f=%s", path);
    const char *twice[] = { "run", "rec.kjt_to_dict", "--kjt", arg, "--in", "values=/nonexistent.npy", NULL };
    assert_int_not_equal(run_loom(twice, err, sizeof err), 0);
    assert_non_null(strstr(err, "input 'values' given by both --in and --kjt f"));
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/loom-kjt-cli-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *files[] = { "batch.safetensors", "extra.safetensors", "values.npy", "stderr.txt" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[320];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kjt_file_fills_inputs_and_keys),
        cmocka_unit_test(kjt_file_errors_name_the_field),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
