/* SPDX-License-Identifier: BSD-3-Clause */
/*
** main.c - the `loom` command: picks the subcommand and hands it the rest of
** the command line. Exit status: 0 success, 1 a loom call failed, 2 usage error.
*/
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    { "list",   cmd_list,   "every operator and object class of every loaded pack" },
    { "info",   cmd_info,   "the schema and the kernels of one operator" },
    { "doctor", cmd_doctor, "configuration, devices, each file the loader saw, dependencies, quarantine" },
    { "run",    cmd_run,    "run one operator on .npy files" },
    { "bench",  cmd_bench,  "time one operator: median, p10, p90, GFLOP/s, GB/s" },
    { "demo",   cmd_demo,   "a short tour on generated data" },
    { "glue",   cmd_glue,   "the first rows and the counts of a GLUE split (text pack)" },
    { "rl",     cmd_rl,     "rl rollout ENV: step environments of the rl pack (episodes, return, steps/s)" },
    { "td",     cmd_td,     "info, load or save a TensorDict in tensordict's memmap layout (rl pack)" },
    { "ctc-lm", cmd_ctc_lm, "convert an ARPA n-gram model to loom's binary format (audio pack)" },
    { "classify", cmd_classify, "top-k categories of images with a vision model and its weight entry" },
    { "detect", cmd_detect, "boxes, scores and labels of an image with a vision detector (--draw out.png)" },
    { "plan",   cmd_plan,   "shard embedding tables as torchrec's planner does (rec pack): stats or --json plan" },
    { "completion", cmd_completion, "a bash or zsh completion script (names from the loaded packs)" },
};

#define N_COMMANDS (sizeof commands / sizeof commands[0])

const char *const *cli_command_names(size_t *n)
{
    static const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++)
        names[i] = commands[i].name;
    *n = N_COMMANDS;
    return names;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: loom COMMAND [ARGS]   (loom COMMAND --help for details)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nThe core reads its configuration from the environment: LOOM_PLUGIN_PATH,\n"
               "LOOM_PLUGINS_SELECT, LOOM_PLUGINS_DISABLE, LOOM_BACKENDS, LOOM_STRICT,\n"
               "LOOM_VERBOSE, LOOM_NUM_THREADS, LOOM_CPU_MAX_ISA, LOOM_MAX_ALLOC,\n"
               "LOOM_ALLOC_CACHE, LOOM_PROBE, LOOM_PROBE_TIMEOUT, LOOM_CUDA_GATE\n"
               "(see `loom doctor`).\n"
               "Exit status: 0 success, 1 a loom call failed, 2 usage error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("loom %s (ABI %u.%u)\n", LOOM_VERSION_STRING, LOOM_ABI_MAJOR, LOOM_ABI_MINOR);
        return CLI_OK;
    }
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--json") == 0)
            cli_json_errors = 1;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(argv[1], commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            cli_shutdown();
            return rc;
        }
    }
    size_t n_names;
    const char *const *names = cli_command_names(&n_names);
    const char *near = loom_suggest(argv[1], names, (int64_t)n_names);
    if (near != NULL)
        fprintf(stderr, "loom: unknown command '%s'; did you mean '%s'?\n", argv[1], near);
    else
        fprintf(stderr, "loom: unknown command '%s'\n", argv[1]);
    fprintf(stderr, "Try 'loom --help'.\n");
    return CLI_USAGE;
}
