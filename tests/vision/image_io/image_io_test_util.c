/* SPDX-License-Identifier: BSD-3-Clause */
/*
** image_io_test_util.c - see image_io_test_util.h.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "image_io_test_util.h"
#include "tu_env.h"

loom_tensor *iot_bytes(const uint8_t *bytes, size_t n)
{
    loom_tensor *t;
    const int64_t shape[1] = { (int64_t)n };
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_U8, 1, shape, NULL), LOOM_OK);
    if (n > 0)
        memcpy(loom_data(t), bytes, n);
    return t;
}

loom_tensor *iot_file(const char *name)
{
    char rel[160];
    snprintf(rel, sizeof rel, "vision/image_io/%s", name);
    FILE *f = fopen(tu_data_path(rel), "rb");
    if (f == NULL)
        fail_msg("cannot open %s", rel);
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    loom_tensor *t = iot_bytes(buf, n);
    free(buf);
    return t;
}

loom_status iot_decode(const char *op, const loom_tensor *bytes, const char *mode, int exif, int64_t max_pixels,
                       loom_tensor **out)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (mode != NULL)
        assert_int_equal(loom_attrs_set_string(a, "mode", mode), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "apply_exif_orientation", exif), LOOM_OK);
    if (max_pixels > 0)
        assert_int_equal(loom_attrs_set_int(a, "max_pixels", max_pixels), LOOM_OK);
    loom_status st = tu_call(op, (const loom_tensor *[]){ bytes }, 1, a, "cpu", out);
    loom_attrs_free(a);
    return st;
}

iot_case *iot_manifest(const char *name, size_t *n)
{
    char rel[160], line[256];
    snprintf(rel, sizeof rel, "vision/image_io/%s", name);
    FILE *f = fopen(tu_data_path(rel), "r");
    if (f == NULL)
        fail_msg("cannot open %s", rel);
    iot_case *cases = NULL;
    size_t len = 0, cap = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        iot_case c;
        memset(&c, 0, sizeof c);
        if (sscanf(line, "%63s %15s %d %95s", c.image, c.mode, &c.exif, c.golden) < 2)
            continue;
        if (len == cap) {
            cap = cap ? 2 * cap : 64;
            cases = realloc(cases, cap * sizeof *cases);
            assert_non_null(cases);
        }
        cases[len++] = c;
    }
    fclose(f);
    *n = len;
    return cases;
}

size_t iot_images(char names[][64], size_t max)
{
    size_t n_cases, n = 0;
    iot_case *cases = iot_manifest("cases.txt", &n_cases);
    for (size_t i = 0; i < n_cases; i++) {
        size_t k = 0;
        while (k < n && strcmp(names[k], cases[i].image) != 0)
            k++;
        if (k == n && n < max)
            snprintf(names[n++], 64, "%s", cases[i].image);
    }
    free(cases);
    return n;
}
