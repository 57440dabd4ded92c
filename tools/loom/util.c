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

int cli_fail(void)
{
    const char *msg = loom_last_error();
    fprintf(stderr, "loom: %s\n", msg != NULL && msg[0] != '\0' ? msg : "unknown error");
    return CLI_FAIL;
}

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "loom %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage);
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
