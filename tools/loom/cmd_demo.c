/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_demo.c - `loom demo [--list] [NAME...]`: a short tour of what the
** loaded packs do, on generated data, ending with where each call ran.
**
** The tour is whatever demo programs are found (demos.h; the programs are
** examples/demos/), so this file knows no pack: each demo says which ops it
** needs, and one whose ops are not all loaded is skipped with a line saying
** which is missing. A demo runs as a child process that inherits the
** environment (so it loads the same packs), writes to the same stdout and
** sends a record of each call through a pipe for the summary. The exit
** status is 1 when a demo failed or none was found.
*/
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "demos.h"

extern char **environ;

static const char usage[] =
    "usage: loom demo [--list] [NAME...]\n"
    "  A short tour on generated data: each demo runs a few calls, shows the\n"
    "  results, and the summary says which backend ran each call. Without\n"
    "  NAME every demo runs. The demos are programs found in LOOM_DEMO_PATH,\n"
    "  the build tree (when run from it) and the installed demo directory.\n"
    "  --list   print the demos: name, title and the program\n";

/* Where each call ran, for the summary: one line per record, as the demos
** send them ("label\top\tbackend\timpl"). */
#define MAX_RECORDS 256
static struct {
    char label[64], op[64], backend[32], impl[64];
} records[MAX_RECORDS];
static int n_records;

static void add_record(char *line)
{
    char *f[4] = { line, NULL, NULL, NULL };
    for (int i = 1; i < 4 && f[i - 1] != NULL; i++) {
        char *tab = strchr(f[i - 1], '\t');
        if (tab != NULL) {
            *tab = '\0';
            f[i] = tab + 1;
        }
    }
    if (f[3] == NULL || n_records >= MAX_RECORDS)
        return;
    snprintf(records[n_records].label, sizeof records[n_records].label, "%s", f[0]);
    snprintf(records[n_records].op, sizeof records[n_records].op, "%s", f[1]);
    snprintf(records[n_records].backend, sizeof records[n_records].backend, "%s", f[2]);
    snprintf(records[n_records].impl, sizeof records[n_records].impl, "%s", f[3]);
    n_records++;
}

/* Read the records of one demo until it closes the pipe. */
static void read_records(int fd)
{
    char buf[4096];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            add_record(line);
            line = nl + 1;
        }
        len = strlen(line);
        memmove(buf, line, len);
        if (len == sizeof buf - 1)
            len = 0;                    /* a line longer than any record: dropped */
    }
}

/* Run one demo with --record-fd; CLI_OK when it exited 0. */
static int run_demo(const cli_demo *d)
{
    int fds[2], status;
    char fd_text[16];
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) != 0 || fcntl(fds[1], F_SETFD, 0) != 0) {
        fprintf(stderr, "loom demo: pipe: %s\n", strerror(errno));
        return CLI_FAIL;
    }
    snprintf(fd_text, sizeof fd_text, "%d", fds[1]);
    char *const argv[] = { (char *)d->path, (char *)"--record-fd", fd_text, NULL };
    fflush(NULL);                       /* our own lines first: the demo writes to the same stdout */
    int rc = posix_spawn(&pid, d->path, NULL, NULL, argv, environ);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fprintf(stderr, "loom demo: cannot run %s: %s\n", d->path, strerror(rc));
        return CLI_FAIL;
    }
    read_records(fds[0]);
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "loom demo: waitpid: %s\n", strerror(errno));
            return CLI_FAIL;
        }
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "loom demo: %s was killed by signal %d (%s)\n", d->path, WTERMSIG(status),
                strsignal(WTERMSIG(status)));
        return CLI_FAIL;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "loom demo: %s exited with status %d\n", d->path, WEXITSTATUS(status));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* The first op of a ','-separated list that is not loaded, or NULL. */
static const char *missing_op(const char *ops, char *buf, size_t size)
{
    const char *p = ops;
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        snprintf(buf, size, "%.*s", (int)len, p);
        if (len > 0 && loom_op_find(buf) == NULL)
            return buf;
        p += len;
        if (*p == ',')
            p++;
    }
    return NULL;
}

static int selected(const cli_demo *d, int argc, char **argv, int first)
{
    if (first >= argc)
        return 1;
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], d->name) == 0)
            return 1;
    }
    return 0;
}

static void summary(void)
{
    int wl = 5, wo = 2;
    if (n_records == 0)
        return;
    for (int i = 0; i < n_records; i++) {
        if ((int)strlen(records[i].label) > wl)
            wl = (int)strlen(records[i].label);
        if ((int)strlen(records[i].op) > wo)
            wo = (int)strlen(records[i].op);
    }
    printf("\nWhere each call ran (LOOM_VERBOSE=2 shows why):\n");
    for (int i = 0; i < n_records; i++)
        printf("  %-*s  %-*s  %-8s %s\n", wl, records[i].label, wo, records[i].op, records[i].backend,
               records[i].impl);
}

static int tour(const cli_demo_list *list, int argc, char **argv, int first)
{
    int failed = 0, ran = 0;
    char missing[128];

    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    n_records = 0;
    printf("loom %s demo\n", loom_version());
    for (int i = 0; i < list->n; i++) {
        const cli_demo *d = &list->demos[i];
        if (!selected(d, argc, argv, first))
            continue;
        printf("\n== %s ==\n", d->title);
        if (missing_op(d->ops, missing, sizeof missing) != NULL) {
            printf("  skipped: op %s is not loaded (`loom doctor` shows what was)\n", missing);
            continue;
        }
        ran++;
        if (run_demo(d) != CLI_OK)
            failed++;
    }
    summary();
    if (ran == 0)
        printf("\nNo demo could run: no pack with these ops was loaded.\n");
    return failed > 0 ? CLI_FAIL : CLI_OK;
}

int cmd_demo(int argc, char **argv)
{
    static const struct option opts[] = {
        { "list", no_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, list_only = 0, rc;
    cli_demo_list list;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            return CLI_OK;
        } else if (c == 'l') {
            list_only = 1;
        } else {
            return cli_bad_option("demo", usage, c, argv);
        }
    }
    if (cli_demos_find(&list) != 0)
        return CLI_FAIL;
    for (int i = optind; i < argc; i++) {
        int known = 0;
        for (int k = 0; k < list.n; k++)
            known |= strcmp(argv[i], list.demos[k].name) == 0;
        if (!known) {
            cli_demos_free(&list);
            return cli_usage_error("demo", usage, "no demo '%s' (`loom demo --list`)", argv[i]);
        }
    }
    if (list.n == 0) {
        fprintf(stderr, "loom demo: no demo programs found; searched %s\n", list.searched);
        rc = CLI_FAIL;
    } else if (list_only) {
        for (int i = 0; i < list.n; i++)
            printf("%-8s %-64s %s\n", list.demos[i].name, list.demos[i].title, list.demos[i].path);
        rc = CLI_OK;
    } else {
        rc = tour(&list, argc, argv, optind);
    }
    cli_demos_free(&list);
    return rc;
}
