/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demo_record.c - demo_record and the summary of a demo run on its own.
**
** Labels and names are copied: the dispatch strings are only valid until
** the next call on the thread. A record sent to `loom demo` is one line,
** "label<TAB>op<TAB>backend<TAB>impl", written with one write() so lines of
** one demo never interleave.
*/
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "demo.h"
#include "demo_record.h"

#define MAX_RECORDS 64

static struct {
    char label[64], op[64], backend[32], impl[64];
} records[MAX_RECORDS];
static int n_records;
static int record_fd = -1;

void demo_records_to(int fd)
{
    record_fd = fd;
}

void demo_record(const char *label)
{
    loom_dispatch_info d = LOOM_DISPATCH_INFO_INIT;
    if (loom_last_dispatch(&d) != LOOM_OK)
        return;
    const char *op = d.op != NULL ? d.op : "?", *backend = d.backend != NULL ? d.backend : "?";
    const char *impl = d.impl != NULL ? d.impl : "?";
    if (record_fd >= 0) {
        char line[256];
        int n = snprintf(line, sizeof line, "%s\t%s\t%s\t%s\n", label, op, backend, impl);
        if (n > 0 && (size_t)n < sizeof line && write(record_fd, line, (size_t)n) != n)
            fprintf(stderr, "demo: a record of '%s' was lost\n", label);
        return;
    }
    if (n_records >= MAX_RECORDS)
        return;
    snprintf(records[n_records].label, sizeof records[n_records].label, "%s", label);
    snprintf(records[n_records].op, sizeof records[n_records].op, "%s", op);
    snprintf(records[n_records].backend, sizeof records[n_records].backend, "%s", backend);
    snprintf(records[n_records].impl, sizeof records[n_records].impl, "%s", impl);
    n_records++;
}

void demo_records_finish(void)
{
    int wl = 5, wo = 2;
    if (record_fd >= 0 || n_records == 0)
        return;
    for (int i = 0; i < n_records; i++) {
        if ((int)strlen(records[i].label) > wl)
            wl = (int)strlen(records[i].label);
        if ((int)strlen(records[i].op) > wo)
            wo = (int)strlen(records[i].op);
    }
    printf("\nWhere each call ran (LOOM_VERBOSE=2 shows why):\n");
    for (int i = 0; i < n_records; i++)
        printf("  %-*s  %-*s  %-8s %s\n", wl, records[i].label, wo, records[i].op, records[i].backend,
               records[i].impl);
}
