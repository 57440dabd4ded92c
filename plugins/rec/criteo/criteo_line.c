/* SPDX-License-Identifier: BSD-3-Clause */
/*
** criteo_line.c - one line of the Criteo TSV (criteo.h): split at tabs,
** each field checked and converted as torchrec's row_mapper does
** (int(x or "0") and int(x or "0", 16)), strictly.
*/
#include <stdio.h>
#include <string.h>

#include "criteo.h"

static void field_name(int f, char *out, size_t n)
{
    if (f == 0)
        snprintf(out, n, "label");
    else if (f <= REC_CRITEO_N_DENSE)
        snprintf(out, n, "int_%d", f - 1);
    else
        snprintf(out, n, "cat_%d", f - 1 - REC_CRITEO_N_DENSE);
}

static int bad(char *why, size_t why_size, int f, const char *s, size_t n, const char *what)
{
    char name[16];
    field_name(f, name, sizeof name);
    snprintf(why, why_size, "%s: '%.*s' is not %s", name, (int)(n > 40 ? 40 : n), s, what);
    return -1;
}

/* base-10 int64 with an optional sign; "" is 0 */
static int parse_int(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    if (n == 0) {
        *out = 0;
        return 0;
    }
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == n)
        return -1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_C(9223372036854775808) - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (!neg && v > (uint64_t)INT64_MAX)
        return -1;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* 1..16 hex digits below 2^63 */
static int parse_hex(const char *s, size_t n, int64_t *out)
{
    if (n == 0 || n > 16)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    if (v > (uint64_t)INT64_MAX)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int rec_criteo_parse_line(const char *line, size_t n, rec_criteo_row *row, char *why, size_t why_size)
{
    if (n > 0 && line[n - 1] == '\r')
        n--;
    size_t start = 0;
    int f = 0;
    for (;; f++) {
        const char *tab = memchr(line + start, '\t', n - start);
        size_t end = tab ? (size_t)(tab - line) : n;
        if (f >= REC_CRITEO_N_FIELDS) {
            snprintf(why, why_size, "more than %d tab-separated fields", REC_CRITEO_N_FIELDS);
            return -1;
        }
        const char *s = line + start;
        const size_t len = end - start;
        if (f == 0) {
            if (parse_int(s, len, &row->label) != 0)
                return bad(why, why_size, f, s, len, "a base-10 integer");
        } else if (f <= REC_CRITEO_N_DENSE) {
            if (parse_int(s, len, &row->dense[f - 1]) != 0)
                return bad(why, why_size, f, s, len, "a base-10 integer within int64");
        } else {
            const int k = f - 1 - REC_CRITEO_N_DENSE;
            row->present[k] = len > 0;
            row->sparse[k] = 0;
            if (len > 0 && parse_hex(s, len, &row->sparse[k]) != 0)
                return bad(why, why_size, f, s, len, "1 to 16 hex digits below 2^63");
        }
        if (!tab)
            break;
        start = end + 1;
    }
    if (f + 1 < REC_CRITEO_N_FIELDS) {
        snprintf(why, why_size, "%d tab-separated fields, expected %d (label, 13 integer, 26 categorical)", f + 1,
                 REC_CRITEO_N_FIELDS);
        return -1;
    }
    return 0;
}
