/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demo_main.c - the command line every demo program shares (demo.h):
** --describe, --record-fd N, or a plain run with its own summary.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"
#include "demo_record.h"

static const char usage[] =
    "usage: %s [--describe | --record-fd N]\n"
    "  Without options: run the demo, then say where each call ran.\n"
    "  --describe      print name, order, ops and title, one 'key: value' a line\n"
    "  --record-fd N   write the calls to file descriptor N instead of the summary\n";

int main(int argc, char **argv)
{
    int record_fd = -1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--describe") == 0) {
            printf("name: %s\norder: %d\nops: %s\ntitle: %s\n", demo_this.name, demo_this.order, demo_this.ops,
                   demo_this.title);
            return DEMO_OK;
        } else if (strcmp(argv[i], "--record-fd") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            long fd = strtol(argv[++i], &end, 10);
            if (errno != 0 || *end != '\0' || end == argv[i] || fd < 0 || fd > 65535) {
                fprintf(stderr, "%s: --record-fd needs a file descriptor, not '%s'\n", argv[0], argv[i]);
                return DEMO_USAGE;
            }
            record_fd = (int)fd;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf(usage, argv[0]);
            return DEMO_OK;
        } else {
            fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], argv[i]);
            fprintf(stderr, usage, argv[0]);
            return DEMO_USAGE;
        }
    }
    if (loom_init(NULL) != LOOM_OK)
        return demo_fail();
    demo_records_to(record_fd);
    int rc = demo_run();
    fflush(stdout);
    demo_records_finish();
    loom_shutdown();
    return rc;
}
