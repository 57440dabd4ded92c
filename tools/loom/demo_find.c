/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demo_find.c - finding the demo programs and reading their --describe
** (demos.h).
*/
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "demos.h"

extern char **environ;

static void note_dir(cli_demo_list *list, const char *dir, const char *origin)
{
    size_t len = strlen(list->searched);
    snprintf(list->searched + len, sizeof list->searched - len, "%s%s (%s)", len > 0 ? "; " : "", dir, origin);
}

/* Copy the value of "key: value" into out when line starts with key. */
static int take(const char *line, const char *key, char *out, size_t size)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0 || line[k] != ':')
        return 0;
    line += k + 1;
    while (*line == ' ')
        line++;
    snprintf(out, size, "%.*s", (int)strcspn(line, "\n"), line);
    return 1;
}

/* Run `path --describe` and fill d from its lines. 0 when it exited 0 and
** gave a name and a title. */
static int describe(const char *path, cli_demo *d)
{
    char buf[8192], order[32] = "";
    size_t len = 0;
    int fds[2], status;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    char *const argv[] = { (char *)path, (char *)"--describe", NULL };

    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    int rc = posix_spawn(&pid, path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    for (ssize_t n; len < sizeof buf - 1 && (n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0;)
        len += (size_t)n;
    buf[len] = '\0';
    close(fds[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;

    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", path);
    for (char *line = buf; *line != '\0';) {
        (void)(take(line, "name", d->name, sizeof d->name) || take(line, "order", order, sizeof order)
               || take(line, "ops", d->ops, sizeof d->ops) || take(line, "title", d->title, sizeof d->title));
        char *nl = strchr(line, '\n');
        line = nl != NULL ? nl + 1 : line + strlen(line);
    }
    d->order = atoi(order);
    return d->name[0] != '\0' && d->title[0] != '\0' ? 0 : -1;
}

static int add(cli_demo_list *list, const cli_demo *d)
{
    for (int i = 0; i < list->n; i++)
        if (strcmp(list->demos[i].name, d->name) == 0)
            return 0;                           /* an earlier directory has it */
    cli_demo *grown = realloc(list->demos, (size_t)(list->n + 1) * sizeof *grown);
    if (grown == NULL) {
        fprintf(stderr, "loom demo: out of memory\n");
        return -1;
    }
    list->demos = grown;
    list->demos[list->n++] = *d;
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every executable regular file of dir that describes itself, in name order. */
static int scan(cli_demo_list *list, const char *dir, const char *origin)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0;
    int rc = 0;

    note_dir(list, dir, origin);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (grown == NULL || (grown[n] = strdup(e->d_name)) == NULL) {
            names = grown != NULL ? grown : names;
            rc = -1;
            break;
        }
        names = grown;
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        struct stat sb;
        cli_demo demo;
        if (rc == 0 && snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path
            && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0) {
            if (describe(path, &demo) == 0)
                rc = add(list, &demo);
            else
                fprintf(stderr, "loom demo: %s does not describe itself (--describe); skipped\n", path);
        }
        free(names[i]);
    }
    free(names);
    if (rc != 0)
        fprintf(stderr, "loom demo: out of memory reading %s\n", dir);
    return rc;
}

/* True when this executable lies inside the build tree it was built in. */
static int in_build_tree(void)
{
    char exe[PATH_MAX], root[PATH_MAX];
    if (realpath("/proc/self/exe", exe) == NULL || realpath(LOOM_BUILD_ROOT, root) == NULL)
        return 0;
    size_t len = strlen(root);
    return strncmp(exe, root, len) == 0 && exe[len] == '/';
}

static int by_order(const void *a, const void *b)
{
    const cli_demo *x = a, *y = b;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return strcmp(x->name, y->name);
}

int cli_demos_find(cli_demo_list *list)
{
    const char *path = secure_getenv("LOOM_DEMO_PATH");
    int rc = 0;

    memset(list, 0, sizeof *list);
    if (path != NULL && path[0] != '\0') {
        char *copy = strdup(path), *save = NULL;
        if (copy == NULL)
            rc = -1;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; rc == 0 && d != NULL; d = strtok_r(NULL, ":", &save))
            rc = scan(list, d, "LOOM_DEMO_PATH");
        free(copy);
    }
    if (rc == 0 && in_build_tree())
        rc = scan(list, LOOM_BUILD_DEMO_DIR, "build tree");
    if (rc == 0)
        rc = scan(list, LOOM_DEMO_DIR, "installed");
    if (rc != 0) {
        cli_demos_free(list);
        return -1;
    }
    if (list->n > 1)
        qsort(list->demos, (size_t)list->n, sizeof *list->demos, by_order);
    return 0;
}

void cli_demos_free(cli_demo_list *list)
{
    free(list->demos);
    list->demos = NULL;
    list->n = 0;
}
