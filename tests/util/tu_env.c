/* SPDX-License-Identifier: BSD-3-Clause */
/*
** tu_env.c - see tu_env.h.
*/
#include <stdio.h>
#include <stdlib.h>

#include "tu_env.h"

/* A test started outside meson test has no paths: say which variable is
** missing instead of failing later on a file that is not there. */
static const char *required(const char *name)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0') {
        fprintf(stderr, "%s is not set: run the test with meson test (tests/meson.build sets it)\n", name);
        exit(1);
    }
    return v;
}

const char *tu_data_path(const char *rel)
{
    static _Thread_local char ring[8][4096];
    static _Thread_local unsigned next;
    char *buf = ring[next++ % 8];
    int n = snprintf(buf, sizeof ring[0], "%s/%s", required("LOOM_TEST_DATA"), rel);
    if (n < 0 || (size_t)n >= sizeof ring[0]) {
        fprintf(stderr, "tu_data_path: path of %s too long\n", rel);
        exit(1);
    }
    return buf;
}

const char *tu_plugin_path(void)
{
    return required("LOOM_PLUGIN_PATH");
}
