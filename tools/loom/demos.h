/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demos.h - the demo programs `loom demo` runs: where they are found and
** what each says about itself (the protocol is examples/demos/demo.h).
**
** Search order: the ':'-separated directories of LOOM_DEMO_PATH (ignored in
** privileged processes), then the build tree's examples/demos when this
** `loom` runs from the build tree, then the installed directory
** (<libexecdir>/loom/demos). Every executable file of a directory that
** answers --describe with a name and a title is a demo; the first demo of a
** name wins, so LOOM_DEMO_PATH overrides. The list is sorted by the demos'
** order, then by name.
*/
#ifndef LOOM_CLI_DEMOS_H
#define LOOM_CLI_DEMOS_H

typedef struct cli_demo {
    char path[4096];        /* the program */
    char name[64];
    int order;
    char ops[512];          /* ','-separated ops it needs */
    char title[256];
} cli_demo;

typedef struct cli_demo_list {
    cli_demo *demos;
    int n;
    char searched[4096];    /* the directories searched, "DIR (origin)" joined by "; " */
} cli_demo_list;

/* Find every demo (see above). Returns 0, or -1 when out of memory (after
** printing why); programs that do not describe themselves are skipped with
** a line on stderr. */
int cli_demos_find(cli_demo_list *list);
void cli_demos_free(cli_demo_list *list);

#endif /* LOOM_CLI_DEMOS_H */
