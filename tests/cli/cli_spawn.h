/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cli_spawn.h - run the built `loom` ($LOOM_CLI) as a child process from a
** cmocka test and capture what it did: exit status, stdout and stderr
** (through files in a folder the test owns). The child inherits the test's
** environment (meson's LOOM_PLUGIN_PATH and the rest).
*/
#ifndef LOOM_TEST_CLI_SPAWN_H
#define LOOM_TEST_CLI_SPAWN_H

typedef struct cli_result {
    int status;             /* exit status, or -1 if the process did not exit normally */
    char *out, *err;        /* NUL-terminated; freed by cli_result_free */
} cli_result;

/* The NULL-terminated argument list of one `loom` call. */
#define CLI_ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Run `cli ARGS...` (args NULL-terminated, at most 62); the streams go
** through dir/stdout.txt and dir/stderr.txt. Fails the test when the
** process cannot be started or its output cannot be read back. */
cli_result cli_run(const char *cli, const char *dir, const char *const *args);
void cli_result_free(cli_result *r);
/* The whole of a file, NUL-terminated (malloc'd), or NULL. */
char *cli_slurp(const char *path);
/* Fail, showing both streams, unless the exit status is `status`. */
void cli_expect_status(const cli_result *r, int status);
/* Fail, showing text, unless it contains needle. */
void cli_expect_contains(const char *text, const char *needle);

#endif
