/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_plan.c - `loom plan CONFIG.json [--json]`: the rec pack's sharding
** planner (rec.plan, TorchRec's EmbeddingShardingPlanner) on a config file
** in torchrec's names (examples/rec/plan_config.json). Prints the planner's
** stats table, or with --json the plan as loom.rec.plan/1 JSON (what the
** sharded modules read). A config that cannot be read, or a model that fits
** no plan, fails with the planner's message (the table and the field, or the
** table and the shortfall in bytes).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char plan_usage[] =
    "usage: loom plan CONFIG.json [--json]\n"
    "  Plan the sharding of embedding tables as torchrec's EmbeddingShardingPlanner does\n"
    "  (rec.plan): enumerate the options of every table, estimate their perf and storage,\n"
    "  propose, partition, and keep the fastest plan that fits.\n"
    "  CONFIG.json  {\"tables\": [EmbeddingBagConfig fields + pooling_factor and constraints],\n"
    "                \"topology\": {world_size, local_world_size, compute_device, hbm_cap, ddr_cap,\n"
    "                intra_host_bw, inter_host_bw}, \"batch_size\"} (README: rec planner)\n"
    "  --json       print the plan (loom.rec.plan/1) instead of the stats table\n";

/* The whole file as bytes; NULL (with a message) when it cannot be read. */
static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "loom plan: cannot open %s\n", path);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            char *b = realloc(buf, cap);
            if (b == NULL) {
                free(buf);
                fclose(f);
                fprintf(stderr, "loom plan: out of memory reading %s\n", path);
                return NULL;
            }
            buf = b;
        }
        const size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0)
            break;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        fprintf(stderr, "loom plan: read error in %s\n", path);
        return NULL;
    }
    *n = len;
    return buf;
}

int cmd_plan(int argc, char **argv)
{
    int json = 0;
    int rc = cli_json_options("plan", plan_usage, argc, argv, &json);
    if (rc == CLI_HELP_SHOWN)
        return CLI_OK;
    if (rc != CLI_OK)
        return rc;
    extern int optind;
    if (argc - optind != 1)
        return cli_usage_error("plan", plan_usage, argc - optind < 1 ? "expected CONFIG.json" : "one CONFIG.json only");
    size_t n = 0;
    char *text = read_file(argv[optind], &n);
    if (text == NULL)
        return CLI_FAIL;
    if (cli_init() != CLI_OK) {
        free(text);
        return CLI_FAIL;
    }
    loom_tensor *in = NULL, *out[2] = { NULL, NULL };
    const int64_t shape[1] = { (int64_t)n };
    rc = CLI_OK;
    if (loom_op_find("rec.plan") == NULL) {
        fprintf(stderr, "loom plan: the rec pack is not loaded (rec.plan not found; see `loom doctor`)\n");
        rc = CLI_FAIL;
    } else if (loom_tensor_wrap(&in, text, LOOM_DTYPE_U8, 1, shape, NULL, NULL) != LOOM_OK) {
        rc = cli_fail();
    } else {
        const loom_tensor *ins[1] = { in };
        if (loom_run("rec.plan", ins, 1, NULL, out, 2, NULL) != LOOM_OK) {
            rc = cli_fail();
        } else {
            const loom_tensor *t = out[json ? 0 : 1];
            fwrite(loom_data(t), 1, loom_tensor_nbytes(t), stdout);
            if (json)
                fputc('\n', stdout);
        }
    }
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    loom_tensor_free(in);
    free(text);
    cli_shutdown();
    return rc;
}
