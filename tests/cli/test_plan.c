/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_plan.c - `loom plan` end to end with every pack of the build: the
** stats table of examples/rec/plan_config.json, the plan with --json (the
** plan format's keys, one entry per table in the config's order), a config
** naming its bad field and a usage error. The plans themselves are checked
** against torchrec in tests/rec/planner.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <cjson/cJSON.h>

#include "cli_spawn.h"

static const char *cli;
static char tmpdir[256], example[512];

static void stats_table(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("plan", example));
    cli_expect_status(&r, 0);
    cli_expect_contains(r.out, "Planner Statistics");
    cli_expect_contains(r.out, "Perf rating");
    cli_expect_contains(r.out, "t_user");
    cli_expect_contains(r.out, "t_hist");
    cli_result_free(&r);
}

static void json_plan(void **state)
{
    (void)state;
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("plan", "--json", example));
    cli_expect_status(&r, 0);
    cJSON *j = cJSON_Parse(r.out);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring, "loom.rec.plan/1");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "world_size")->valueint, 4);
    const cJSON *tables = cJSON_GetObjectItemCaseSensitive(j, "tables");
    assert_int_equal(cJSON_GetArraySize(tables), 5);
    static const char *const names[] = { "t_user", "t_item", "t_cat", "t_hist", "t_ads" };
    int i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tables)
    {
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring, names[i++]);
        assert_non_null(cJSON_GetObjectItemCaseSensitive(t, "sharding_type"));
        assert_non_null(cJSON_GetObjectItemCaseSensitive(t, "ranks"));
        assert_non_null(cJSON_GetObjectItemCaseSensitive(t, "shards"));
    }
    cJSON_Delete(j);
    cli_result_free(&r);
}

static void refusals(void **state)
{
    (void)state;
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad.json", tmpdir);
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"topology\": {\"world_size\": 2}, \"tables\": [{\"name\": \"a\", \"num_embeddings\": 10}]}", f);
    fclose(f);
    cli_result r = cli_run(cli, tmpdir, CLI_ARGV("plan", bad));
    cli_expect_status(&r, 1);
    cli_expect_contains(r.err, "tables[0] (a): 'embedding_dim' is required");
    cli_result_free(&r);
    remove(bad);
    r = cli_run(cli, tmpdir, CLI_ARGV("plan", "/no/such/config.json"));
    cli_expect_status(&r, 1);
    cli_expect_contains(r.err, "cannot open /no/such/config.json");
    cli_result_free(&r);
    r = cli_run(cli, tmpdir, CLI_ARGV("plan"));
    cli_expect_status(&r, 2);
    cli_expect_contains(r.err, "expected CONFIG.json");
    cli_result_free(&r);
}

static int setup(void **state)
{
    (void)state;
    cli = getenv("LOOM_CLI");
    const char *src = getenv("LOOM_SOURCE_ROOT");
    if (cli == NULL || src == NULL) {
        fprintf(stderr, "LOOM_CLI and LOOM_SOURCE_ROOT must be set (meson test does)\n");
        return -1;
    }
    snprintf(example, sizeof example, "%s/examples/rec/plan_config.json", src);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-plan-XXXXXX");
    return mkdtemp(tmpdir) != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char p[300];
    snprintf(p, sizeof p, "%s/stdout.txt", tmpdir);
    remove(p);
    snprintf(p, sizeof p, "%s/stderr.txt", tmpdir);
    remove(p);
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stats_table),
        cmocka_unit_test(json_plan),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
