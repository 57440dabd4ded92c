/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_completion.c - `loom completion bash|zsh` prints a completion script;
** `loom completion --words KIND [OP]` prints the words it completes with,
** read from the registry at completion time, so the names are those of the
** packs loaded now: commands, ops, classes, backends, and an op's inputs
** (as NAME=), outputs (NAME=) and attributes (NAME=).
*/
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: loom completion bash|zsh\n"
    "       loom completion --words commands|ops|classes|backends|inputs OP|outputs OP|attrs OP\n"
    "  Print a completion script; install with e.g.\n"
    "    loom completion bash > ~/.local/share/bash-completion/completions/loom\n"
    "    loom completion zsh > \"${fpath[1]}/_loom\"   (or: source <(loom completion zsh))\n"
    "  --words prints the candidates the script asks for, one per line.\n";

/* The script: static structure, dynamic names through --words. */
static const char bash_script[] =
    "# bash completion for loom (loom completion bash)\n"
    "_loom() {\n"
    "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=${COMP_WORDS[1]}\n"
    "    local loom=${COMP_WORDS[0]} op=${COMP_WORDS[2]}\n"
    "    COMPREPLY=()\n"
    "    if (( COMP_CWORD == 1 )); then\n"
    "        COMPREPLY=($(compgen -W \"$($loom completion --words commands 2>/dev/null) --help --version\" -- \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    case $prev in\n"
    "        --backend) COMPREPLY=($(compgen -W \"$($loom completion --words backends 2>/dev/null)\" -- \"$cur\")); return ;;\n"
    "        --device) COMPREPLY=($(compgen -W \"cpu cuda cuda:0\" -- \"$cur\")); return ;;\n"
    "        --weights) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n"
    "        --in|--out|--attr)\n"
    "            local kind=inputs\n"
    "            [[ $prev == --out ]] && kind=outputs\n"
    "            [[ $prev == --attr ]] && kind=attrs\n"
    "            if [[ $cur == *=* && $prev != --attr ]]; then\n"
    "                local name=${cur%%=*}\n"
    "                COMPREPLY=($(compgen -f -- \"${cur#*=}\"))\n"
    "                COMPREPLY=(\"${COMPREPLY[@]/#/$name=}\")\n"
    "            else\n"
    "                COMPREPLY=($(compgen -W \"$($loom completion --words $kind \"$op\" 2>/dev/null)\" -- \"$cur\"))\n"
    "                compopt -o nospace 2>/dev/null\n"
    "            fi\n"
    "            return ;;\n"
    "    esac\n"
    "    case $cmd in\n"
    "        info|run|bench)\n"
    "            if (( COMP_CWORD == 2 )); then\n"
    "                COMPREPLY=($(compgen -W \"$($loom completion --words ops 2>/dev/null)\" -- \"$cur\"))\n"
    "            else\n"
    "                local opts=\"--in --attr --weights --backend --device --json --help\"\n"
    "                [[ $cmd == run ]] && opts+=\" --out\"\n"
    "                [[ $cmd == bench ]] && opts+=\" --repeat --warmup\"\n"
    "                [[ $cmd == info ]] && opts=\"--json --help\"\n"
    "                COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
    "            fi ;;\n"
    "        list|doctor) COMPREPLY=($(compgen -W \"--json --help\" -- \"$cur\")) ;;\n"
    "        demo) COMPREPLY=($(compgen -W \"--list --help\" -- \"$cur\")) ;;\n"
    "        completion) COMPREPLY=($(compgen -W \"bash zsh --words\" -- \"$cur\")) ;;\n"
    "    esac\n"
    "}\n"
    "complete -F _loom loom\n";

static void print_args(const loom_arg_def *args, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        printf("%s=\n", args[i].name);
}

static int words(const char *kind, const char *op_name)
{
    if (strcmp(kind, "commands") == 0) {
        size_t n;
        const char *const *names = cli_command_names(&n);
        for (size_t i = 0; i < n; i++)
            printf("%s\n", names[i]);
        return CLI_OK;
    }
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    if (strcmp(kind, "ops") == 0) {
        for (int64_t i = 0; i < loom_op_count(); i++)
            printf("%s\n", loom_op_schema_at(i)->name);
        return CLI_OK;
    }
    if (strcmp(kind, "classes") == 0) {
        for (int64_t i = 0; i < loom_object_class_count(); i++)
            printf("%s\n", loom_object_class_at(i)->name);
        return CLI_OK;
    }
    if (strcmp(kind, "backends") == 0) {
        const char *seen[64];
        int n_seen = 0;
        for (int64_t i = 0; i < loom_op_count(); i++) {
            const loom_op *op = loom_op_find(loom_op_schema_at(i)->name);
            for (int64_t k = 0; op != NULL && k < loom_op_kernel_count(op); k++) {
                loom_kernel_info info = LOOM_KERNEL_INFO_INIT;
                if (loom_op_kernel_at(op, k, &info) != LOOM_OK)
                    continue;
                int j = 0;
                while (j < n_seen && strcmp(seen[j], info.backend) != 0)
                    j++;
                if (j == n_seen && n_seen < 64) {
                    seen[n_seen++] = info.backend;
                    printf("%s\n", info.backend);
                }
            }
        }
        return CLI_OK;
    }
    if (strcmp(kind, "inputs") == 0 || strcmp(kind, "outputs") == 0 || strcmp(kind, "attrs") == 0) {
        const loom_op *op = op_name != NULL ? loom_op_find(op_name) : NULL;
        const loom_op_schema *s = op != NULL ? loom_op_schema_of(op) : NULL;
        if (s == NULL)
            return CLI_OK;          /* nothing to offer: completion stays quiet */
        if (kind[0] == 'i')
            print_args(s->inputs, s->n_inputs);
        else if (kind[0] == 'o')
            print_args(s->outputs, s->n_outputs);
        else
            for (uint32_t i = 0; i < s->n_attrs; i++)
                printf("%s=\n", s->attrs[i].name);
        return CLI_OK;
    }
    return cli_usage_error("completion", usage, "no word list '%s'", kind);
}

int cmd_completion(int argc, char **argv)
{
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (argc >= 3 && strcmp(argv[1], "--words") == 0)
        return words(argv[2], argc >= 4 ? argv[3] : NULL);
    if (argc == 2 && strcmp(argv[1], "bash") == 0) {
        fputs(bash_script, stdout);
        return CLI_OK;
    }
    if (argc == 2 && strcmp(argv[1], "zsh") == 0) {
        /* zsh runs the bash function through its bash-completion layer */
        printf("#compdef loom\n# zsh completion for loom (loom completion zsh)\n"
               "autoload -U +X bashcompinit && bashcompinit\n%s", bash_script);
        return CLI_OK;
    }
    return cli_usage_error("completion", usage, argc < 2 ? "which shell: bash or zsh" : "unknown argument '%s'",
                           argc < 2 ? "" : argv[1]);
}
