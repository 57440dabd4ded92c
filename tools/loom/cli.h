/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cli.h - what the files of the `loom` command share.
**
** Every command is `int cmd_<name>(int argc, char **argv)` with argv[0] the
** command name; it returns the process exit status:
**   CLI_OK (0)     success
**   CLI_FAIL (1)   a loom call failed; "loom: <loom_last_error()>" is on stderr
**   CLI_USAGE (2)  the command line is wrong; a message and the usage are on stderr
** The tool uses only the public API (loom/loom.h): what it can show, any host
** application can show too. The core is configured by the environment
** (LOOM_PLUGIN_PATH, LOOM_BACKENDS, LOOM_VERBOSE, ...).
*/
#ifndef LOOM_CLI_H
#define LOOM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "loom/loom.h"

enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Returned by option parsers when --help was printed: the command exits 0. */
#define CLI_HELP_SHOWN (-1)

int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_glue(int argc, char **argv);
int cmd_rl(int argc, char **argv);
int cmd_td(int argc, char **argv);
int cmd_ctc_lm(int argc, char **argv);
int cmd_classify(int argc, char **argv);
int cmd_detect(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_completion(int argc, char **argv);
/* The subcommand names, for completion and suggestions (main.c). */
const char *const *cli_command_names(size_t *n);

/* loom_init(NULL); on failure prints the error. Returns CLI_OK or CLI_FAIL. */
int cli_init(void);
/* loom_shutdown() if cli_init succeeded. */
void cli_shutdown(void);
/* Prints "loom: <loom_last_error()>" to stderr and returns CLI_FAIL. */
/* 1 when the command line has --json: failures are then printed as JSON on
** stdout too (set by main before the command runs). */
extern int cli_json_errors;
int cli_fail(void);
/* A progress line on stderr (progress.c): begin, update with the count
** done, end. Silent unless stderr is a terminal or LOOM_PROGRESS=1. */
void cli_progress_begin(const char *label, long total);
void cli_progress_update(long done);
void cli_progress_end(void);
/* Prints "loom <cmd>: <message>" and then usage to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    LOOM_PRINTF(3, 4);

/* Report an option getopt_long rejected (it returned '?' or ':' with opterr=0). */
int cli_bad_option(const char *cmd, const char *usage, int code, char **argv);

/* Parse the options of a command that takes only --json and --help: sets
** *json, leaves optind at the first operand. Returns CLI_OK, CLI_HELP_SHOWN
** (usage printed to stdout) or CLI_USAGE (message on stderr). */
int cli_json_options(const char *cmd, const char *usage, int argc, char **argv, int *json);
/* The whole of a command with no operands and only --json/--help: parses,
** initialises the core, then calls json_fn or text_fn. Returns an exit status. */
int cli_json_or_text(const char *cmd, const char *usage, int argc, char **argv, int (*json_fn)(void),
                     int (*text_fn)(void));

/* Formatting into caller buffers; each returns buf. */
char *cli_dtype_list(uint64_t mask, char *buf, size_t size);      /* "f32,bf16" or "any" */
char *cli_shape(const loom_tensor *t, char *buf, size_t size);     /* "[2,3]" */
char *cli_attr_value(const loom_attr_value *v, char *buf, size_t size);
const char *cli_attr_type_name(int32_t type);                      /* "int", "floats" */
const char *cli_device_name(int32_t device_type);                  /* "cpu", "cuda" */
/* "  (excluded by LOOM_BACKENDS)", "  (no device: cannot run here)" or "" */
const char *cli_kernel_note(const loom_kernel_info *k);

/* The object class with this name, or NULL. */
const loom_object_class *cli_find_class(const char *name);

/* Element i (row-major) of a compact host tensor as a double; 0 on success,
** -1 for a dtype that has no real value (complex). */
int cli_tensor_get(const loom_tensor *t, int64_t i, double *out);
/* Print up to `max` values of a tensor as "[1, 2.5, ...]" (copies device
** tensors to the host first). Returns CLI_OK or CLI_FAIL. */
int cli_print_values(const loom_tensor *t, int64_t max);

/* Monotonic seconds. */
double cli_now(void);

#endif /* LOOM_CLI_H */
