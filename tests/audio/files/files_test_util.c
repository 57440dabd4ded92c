/* SPDX-License-Identifier: BSD-3-Clause */
/*
** files_test_util.c - see files_test_util.h.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "files_test_util.h"
#include "tu_env.h"

int ft_files(ft_file *out, int max)
{
    FILE *f = fopen(tu_data_path("audio/files/info.txt"), "r");
    assert_non_null(f);
    char line[256];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f) != NULL) {
        ft_file *e = &out[n];
        long long r, fr, ch;
        if (line[0] == '#' || sscanf(line, "%63s %lld %lld %lld %15s", e->name, &r, &fr, &ch, e->subtype) != 5)
            continue;
        e->rate = r, e->frames = fr, e->channels = ch;
        snprintf(e->stem, sizeof e->stem, "%s", e->name);
        char *dot = strrchr(e->stem, '.');
        if (dot != NULL)
            *dot = 0;
        n++;
    }
    fclose(f);
    return n;
}

loom_tensor *ft_bytes(const char *name)
{
    char rel[160];
    snprintf(rel, sizeof rel, "audio/files/%s", name);
    FILE *f = fopen(tu_data_path(rel), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    const int64_t n = ftell(f);
    fseek(f, 0, SEEK_SET);
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_U8, 1, &n, NULL), LOOM_OK);
    assert_int_equal(fread(loom_data(t), 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return t;
}

loom_tensor *ft_prefix(const loom_tensor *t, int64_t n)
{
    loom_tensor *p;
    assert_int_equal(loom_tensor_new(&p, LOOM_DTYPE_U8, 1, &n, NULL), LOOM_OK);
    if (n > 0)
        memcpy(loom_data(p), loom_data(t), (size_t)n);
    return p;
}
