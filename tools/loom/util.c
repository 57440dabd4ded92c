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
