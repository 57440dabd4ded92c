/* SPDX-License-Identifier: BSD-3-Clause */
/*
** progress.c - one progress line on stderr for long runs (`loom bench` with
** many repeats, large loads): "label  37/200  18%  (2.1 s left)".
**
** Shown only when stderr is a terminal, so logs and pipes stay clean;
** LOOM_PROGRESS=1 forces it on (tests) and LOOM_PROGRESS=0 off. Redrawn at
** most ten times a second, and only once the run has lasted half a second,
** so short runs print nothing. The line is erased when the run ends.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static struct {
    int on;
    const char *label;
    long total;
    double start, last;
    int drawn;
} bar;

void cli_progress_begin(const char *label, long total)
{
    const char *env = getenv("LOOM_PROGRESS");
    bar.on = env != NULL && env[0] != '\0' ? env[0] == '1' : isatty(STDERR_FILENO);
    bar.label = label;
    bar.total = total;
    bar.start = cli_now();
    bar.last = 0;
    bar.drawn = 0;
}

void cli_progress_update(long done)
{
    if (!bar.on || bar.total <= 0)
        return;
    double now = cli_now(), elapsed = now - bar.start;
    /* forced lines (LOOM_PROGRESS=1) skip the half-second grace: tests are short */
    const char *env = getenv("LOOM_PROGRESS");
    int forced = env != NULL && env[0] == '1';
    if ((!forced && elapsed < 0.5) || (bar.drawn && now - bar.last < 0.1 && done < bar.total))
        return;
    double left = done > 0 ? elapsed * (double)(bar.total - done) / (double)done : 0;
    fprintf(stderr, "\r%s  %ld/%ld  %3d%%  (%.1f s left)  ", bar.label, done, bar.total,
            (int)(100.0 * (double)done / (double)bar.total), left);
    fflush(stderr);
    bar.last = now;
    bar.drawn = 1;
}

void cli_progress_end(void)
{
    if (bar.on && bar.drawn) {
        /* erase the line: what follows starts at column 0 */
        fprintf(stderr, "\r%*s\r", 60 + (int)strlen(bar.label), "");
        fflush(stderr);
    }
    bar.on = 0;
}
