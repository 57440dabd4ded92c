/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_regnet_params.c - the stage table of every RegNet class
** (plugins/vision/models/regnet_params.c, linked in directly) against
** torchvision's BlockParams.from_init_params: widths, depths and group
** widths of each stage, exactly, from tests/data/vision/models/
** regnet_configs.json (tools/gen_vision_models_goldens.py writes it from
** the builders themselves). The JSON is read by a scanner for its one
** shape: one line per variant, "name": {"depths": [...], ...}.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "regnet.h"
#include "tu_env.h"

static char last_error[512];

static loom_status fake_fail(loom_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

static loom_host_api fake_host;

static const char *const names[] = {
    "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf",
    "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf",
    "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf",
};

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("%s: cannot open", path);
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    assert_true(n > 0);
    return buf;
}

/* The integers of list `key` in the line of variant `name`; their count. */
static int list_of(const char *json, const char *name, const char *key, int64_t *out, int max)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": {", name);
    const char *line = strstr(json, pat);
    if (line == NULL)
        fail_msg("regnet_configs.json has no %s", name);
    const char *end = strchr(line, '\n');
    snprintf(pat, sizeof pat, "\"%s\": [", key);
    const char *at = strstr(line, pat);
    if (at == NULL || (end != NULL && at > end))
        fail_msg("regnet_configs.json: %s has no %s", name, key);
    at += strlen(pat);
    int n = 0;
    while (*at != ']' && n < max) {
        char *next;
        out[n++] = strtoll(at, &next, 10);
        if (next == at)
            fail_msg("regnet_configs.json: %s.%s is not a list of integers", name, key);
        at = next;
        while (*at == ',' || *at == ' ')
            at++;
    }
    return n;
}

static void every_stage_table_is_torchvisions(void **state)
{
    (void)state;
    char *json = read_all(tu_data_path("vision/models/regnet_configs.json"));
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char cls[64];
        snprintf(cls, sizeof cls, "vision.%s", names[i]);
        const regnet_arch *a = regnet_arch_of(cls);
        assert_non_null(a);
        regnet_stages s;
        if (regnet_stages_of(a, &s) != LOOM_OK)
            fail_msg("%s: %s", cls, last_error);
        int64_t want[3][REGNET_MAX_STAGES];
        static const char *const keys[3] = { "widths", "depths", "group_widths" };
        const int64_t *got[3] = { s.width, s.depth, s.group_width };
        for (int k = 0; k < 3; k++) {
            int n = list_of(json, names[i], keys[k], want[k], REGNET_MAX_STAGES);
            if (n != s.n)
                fail_msg("%s: %d stages, torchvision has %d", names[i], s.n, n);
            for (int j = 0; j < n; j++)
                if (got[k][j] != want[k][j])
                    fail_msg("%s: stage %d %s %lld, torchvision's %lld", names[i], j + 1, keys[k],
                             (long long)got[k][j], (long long)want[k][j]);
        }
        /* the SE ratio: Y models 0.25, X models none */
        int64_t se[1];
        char *p = strstr(strstr(json, names[i]), "\"se_ratio\": ");
        assert_non_null(p);
        se[0] = strncmp(p + 12, "0.25", 4) == 0;
        assert_int_equal(se[0], a->se_ratio == 0.25);
    }
    free(json);
}

static void invalid_settings_are_refused(void **state)
{
    (void)state;
    const regnet_arch bad = { "vision.regnet_bad", 4, 12, 8.0, 2.0, 8, 0, 32, 1.0 }; /* w_0 not a multiple of 8 */
    regnet_stages s;
    assert_int_equal(regnet_stages_of(&bad, &s), LOOM_EINVAL);
    assert_non_null(strstr(last_error, "vision.regnet_bad: invalid RegNet settings"));
    assert_null(regnet_arch_of("vision.regnet_z_1gf"));
}

int main(void)
{
    fake_host.fail = fake_fail;
    pk_host = &fake_host;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_stage_table_is_torchvisions),
        cmocka_unit_test(invalid_settings_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
