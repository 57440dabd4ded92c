/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cli_spawn.c - the `loom` child processes of the CLI tests (cli_spawn.h):
** posix_spawn with stdout and stderr opened on files, waitpid, and the
** files read back.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_spawn.h"

extern char **environ;

char *cli_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
    } else {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

cli_result cli_run(const char *cli, const char *dir, const char *const *args)
{
    const char *argv[64];
    char out_path[512], err_path[512];
    posix_spawn_file_actions_t fa;
    cli_result r = { -1, NULL, NULL };
    int n = 0, wstatus;
    pid_t pid;

    argv[n++] = cli;
    for (const char *const *a = args; *a != NULL && n < 63; a++)
        argv[n++] = *a;
    argv[n] = NULL;
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_int_equal(posix_spawn(&pid, cli, &fa, NULL, (char *const *)argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    if (WIFEXITED(wstatus))
        r.status = WEXITSTATUS(wstatus);
    r.out = cli_slurp(out_path);
    r.err = cli_slurp(err_path);
    assert_non_null(r.out);
    assert_non_null(r.err);
    return r;
}

void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

void cli_expect_status(const cli_result *r, int status)
{
    if (r->status != status)
        print_error("exit %d (expected %d)\nstdout:\n%s\nstderr:\n%s\n", r->status, status, r->out, r->err);
    assert_int_equal(r->status, status);
}

void cli_expect_contains(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        print_error("expected '%s' in:\n%s\n", needle, text);
    assert_non_null(strstr(text, needle));
}
