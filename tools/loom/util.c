/* SPDX-License-Identifier: BSD-3-Clause */
/*
** util.c - start-up, error reporting and timing shared by every command.
**
** Invariant: a message for the user goes to stderr and carries the command
** ("loom run: ...") or, for a failed loom call, the core's own message, which
** names the op, argument or file.
*/
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "json.h"

static int initialised;

int cli_init(void)
{
    if (initialised)
        return CLI_OK;
    if (loom_init(NULL) != LOOM_OK)
        return cli_fail();
    initialised = 1;
    return CLI_OK;
}

void cli_shutdown(void)
{
    if (initialised)
        loom_shutdown();
    initialised = 0;
}

int cli_json_errors;

/* {"error": {"status": "LOOM_EINVAL", "code": -2, "message": "...", "exit": 1}}
** on stdout: with --json, a failure is as machine-readable as a success. */
static void json_error(const char *status, int code, const char *msg, int exit_status)
{
    cJSON *root = cJSON_CreateObject(), *e = cJSON_CreateObject();
    json_add_str(e, "status", status);
    json_add_num(e, "code", code);
    json_add_str(e, "message", msg);
    json_add_num(e, "exit", exit_status);
    cJSON_AddItemToObject(root, "error", e);
    json_emit(root);
}

int cli_fail(void)
{
    const char *msg = loom_last_error();
    msg = msg != NULL && msg[0] != '\0' ? msg : "unknown error";
    if (cli_json_errors)
        json_error(loom_status_name(loom_last_status()), (int)loom_last_status(), msg, CLI_FAIL);
    fprintf(stderr, "loom: %s\n", msg);
    return CLI_FAIL;
}

/* One line naming the mistake and one pointing at --help: the whole usage
** text would bury the line that matters. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    (void)usage;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (cli_json_errors)
        json_error("usage", CLI_USAGE, msg, CLI_USAGE);
    fprintf(stderr, "loom %s: %s\nTry 'loom %s --help'.\n", cmd, msg, cmd);
    return CLI_USAGE;
}

int cli_bad_option(const char *cmd, const char *usage, int code, char **argv)
{
    /* With opterr = 0 getopt_long stays silent; optind has moved past the
    ** offending word, which is the best thing to name. */
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    const char *eq = strchr(word, '=');
    if (code == ':')
        return cli_usage_error(cmd, usage, "option '%s' needs a value", word);
    if (strncmp(word, "--", 2) == 0 && eq != NULL)
        return cli_usage_error(cmd, usage, "option '%.*s' takes no value (or is unknown)", (int)(eq - word), word);
    return cli_usage_error(cmd, usage, "unknown option '%s'", word);
}

int cli_json_options(const char *cmd, const char *usage, int argc, char **argv, int *json)
{
    static const struct option opts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    *json = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'j')
            *json = 1;
        else if (c == 'h') {
            fputs(usage, stdout);
            return CLI_HELP_SHOWN;
        } else
            return cli_bad_option(cmd, usage, c, argv);
    }
    return CLI_OK;
}

int cli_json_or_text(const char *cmd, const char *usage, int argc, char **argv, int (*json_fn)(void),
                     int (*text_fn)(void))
{
    int json, rc = cli_json_options(cmd, usage, argc, argv, &json);

    if (rc != CLI_OK)
        return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    if (optind < argc)
        return cli_usage_error(cmd, usage, "unexpected argument '%s'", argv[optind]);
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    return json ? json_fn() : text_fn();
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const loom_object_class *cli_find_class(const char *name)
{
    int64_t n = loom_object_class_count();
    for (int64_t i = 0; i < n; i++) {
        const loom_object_class *c = loom_object_class_at(i);
        if (c != NULL && c->name != NULL && strcmp(c->name, name) == 0)
            return c;
    }
    return NULL;
}
