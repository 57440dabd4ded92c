/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_glue.c - `loom glue DATASET SPLIT ROOT`: the first rows and the
** counts of a GLUE split, read by the text pack's text.glue object exactly
** as a host program would (public API only).
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char glue_usage[] =
    "usage: loom glue DATASET SPLIT ROOT [--rows N] [--skip-malformed]\n"
    "  DATASET  CoLA, SST2, MRPC, QQP, STSB, MNLI, QNLI, RTE or WNLI\n"
    "  SPLIT    train, dev, test (MNLI: dev_matched, dev_mismatched)\n"
    "  ROOT     the folder of the extracted distribution files or of torchtext's\n"
    "           zips (extracted files first), or one file, or the dataset's zip\n"
    "  --rows N          rows to print (default 5)\n"
    "  --skip-malformed  count malformed rows instead of failing on the first\n";

enum { O_LABEL, O_SCORE, O_IDX, O_T1, O_T1_OFF, O_T2, O_T2_OFF, O_STATS, O_N };

static void print_text(const char *name, const loom_tensor *v, const loom_tensor *off, int64_t i)
{
    if (off->shape[0] <= i + 1)
        return;
    const int64_t *o = loom_data(off);
    const char *s = (const char *)loom_data(v);
    const int64_t n = o[i + 1] - o[i];
    printf("  %s=\"", name);
    for (int64_t k = 0; k < n && k < 120; k++) {
        const char ch = s[o[i] + k];
        if (ch == '\n' || ch == '\t' || ch == '\r')
            printf("\\%c", ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r');
        else
            putchar(ch);
    }
    printf("%s\"", n > 120 ? "..." : "");
}

static void print_rows(loom_tensor **t, int64_t *printed, int64_t want)
{
    const int64_t n = t[O_T1_OFF]->shape[0] - 1;
    for (int64_t i = 0; i < n && *printed < want; i++, (*printed)++) {
        printf("%lld:", (long long)*printed);
        if (t[O_IDX]->shape[0] > i)
            printf("  idx=%lld", (long long)((const int64_t *)loom_data(t[O_IDX]))[i]);
        if (t[O_LABEL]->shape[0] > i)
            printf("  label=%lld", (long long)((const int64_t *)loom_data(t[O_LABEL]))[i]);
        if (t[O_SCORE]->shape[0] > i)
            printf("  score=%g", ((const double *)loom_data(t[O_SCORE]))[i]);
        print_text("text1", t[O_T1], t[O_T1_OFF], i);
        print_text("text2", t[O_T2], t[O_T2_OFF], i);
        printf("\n");
    }
}

int cmd_glue(int argc, char **argv)
{
    static const struct option opts[] = {
        { "rows", required_argument, NULL, 'r' }, { "skip-malformed", no_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
    };
    long want = 5;
    int skip = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'h') {
            fputs(glue_usage, stdout);
            return CLI_OK;
        }
        if (c == 's') {
            skip = 1;
        } else if (c == 'r') {
            char *end;
            want = strtol(optarg, &end, 10);
            if (*end != '\0' || want < 0)
                return cli_usage_error("glue", glue_usage, "--rows takes a count, not '%s'", optarg);
        } else {
            return cli_bad_option("glue", glue_usage, c, argv);
        }
    }
    if (argc - optind != 3)
        return cli_usage_error("glue", glue_usage, "expected DATASET SPLIT ROOT");
    const char *dataset = argv[optind], *split = argv[optind + 1], *root = argv[optind + 2];
    if (cli_init() != CLI_OK)
        return CLI_FAIL;
    int rc = CLI_FAIL;
    loom_attrs *ca = NULL, *ma = NULL;
    loom_object *obj = NULL;
    loom_tensor *t[O_N] = { 0 };
    if (loom_attrs_new(&ca) != LOOM_OK || loom_attrs_new(&ma) != LOOM_OK
        || loom_attrs_set_string(ca, "dataset", dataset) != LOOM_OK
        || loom_attrs_set_string(ca, "split", split) != LOOM_OK
        || loom_attrs_set_string(ca, "on_error", skip ? "skip" : "raise") != LOOM_OK
        || loom_attrs_set_int(ma, "max_rows", 4096) != LOOM_OK)
        goto done;
    FILE *probe = fopen(root, "rb");
    int is_file = 0;
    if (probe != NULL) {
        char b;
        is_file = fread(&b, 1, 1, probe) == 1 || feof(probe);   /* a folder reads with EISDIR */
        fclose(probe);
    }
    if (loom_attrs_set_string(ca, is_file ? "file" : "root", root) != LOOM_OK
        || loom_object_create(&obj, "text.glue", ca, NULL) != LOOM_OK)
        goto done;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    int64_t printed = 0, stats[4] = { 0 };
    for (;;) {
        for (int i = 0; i < O_N; i++) {
            loom_tensor_free(t[i]);
            t[i] = NULL;
        }
        if (loom_run("text.glue", NULL, 0, ma, t, O_N, &opt) != LOOM_OK)
            goto done;
        print_rows(t, &printed, want);
        memcpy(stats, loom_data(t[O_STATS]), sizeof stats);
        if (t[O_T1_OFF]->shape[0] <= 1)
            break;
    }
    printf("%s %s: %lld rows", dataset, split, (long long)stats[0]);
    printf(", %lld filtered as torchtext filters", (long long)stats[1]);
    if (skip)
        printf(", %lld malformed skipped", (long long)stats[2]);
    printf(", %lld lines\n", (long long)stats[3]);
    rc = CLI_OK;
done:
    if (rc != CLI_OK)
        cli_fail();
    for (int i = 0; i < O_N; i++)
        loom_tensor_free(t[i]);
    loom_object_free(obj);
    loom_attrs_free(ca);
    loom_attrs_free(ma);
    cli_shutdown();
    return rc;
}
