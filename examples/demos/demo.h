/* SPDX-License-Identifier: BSD-3-Clause */
/*
** demo.h - what every demo program of `loom demo` shares.
**
** A demo is a small host program written against the public API only
** (loom/loom.h): one short, self-contained demonstration on data it
** generates (or writes to a temporary directory it removes). Its file
** defines its description with DEMO_DEFINE and its body, demo_run(); the
** shared main (demo_main.c) gives every demo the same command line:
**
**   PROGRAM              loom_init, demo_run, then "Where each call ran"
**   PROGRAM --describe   "name: ...", "order: ...", "ops: ...", "title: ..."
**                        lines on stdout, without initialising loom
**   PROGRAM --record-fd N
**                        run, but write each recorded call to fd N as
**                        "label<TAB>op<TAB>backend<TAB>impl\n" instead of
**                        printing the summary: `loom demo` collects them
**                        from every demo into one summary
**
** `loom demo` runs the demos in ascending order (then by name), skips one
** whose ops are not all loaded, and passes its stdout through. The exit
** status is 0 when the demo ran, 1 when a loom call failed (the message is
** on stderr), 2 for a bad command line.
**
** demo_run prints readable text (indented by two spaces), records every
** loom call it makes with demo_record, and returns DEMO_OK or DEMO_FAIL.
*/
#ifndef LOOM_DEMO_H
#define LOOM_DEMO_H

#include <stdint.h>

#include "loom/loom.h"

enum { DEMO_OK = 0, DEMO_FAIL = 1, DEMO_USAGE = 2 };

typedef struct demo_info {
    const char *name;       /* what `loom demo NAME` selects */
    int order;              /* place in the tour, ascending (this tree: core 10-49,
                            ** vision 50-69, fbgemm 70-89, audio 90-109) */
    const char *ops;        /* ','-separated ops it needs */
    const char *title;      /* one line */
} demo_info;

/* The description of this program's demo, defined once per demo file. */
extern const demo_info demo_this;
#define DEMO_DEFINE(NAME, ORDER, OPS, TITLE) \
    const demo_info demo_this = { .name = (NAME), .order = (ORDER), .ops = (OPS), .title = (TITLE) }

/* The body of the demo: loom is initialised; returns DEMO_OK or DEMO_FAIL. */
int demo_run(void);

/* Note where the last call on this thread ran, under a short label. */
void demo_record(const char *label);
/* Print "demo: <loom_last_error()>" to stderr; returns DEMO_FAIL. */
int demo_fail(void);
/* True when op exists and has a kernel of this backend. */
int demo_has_backend(const char *op, const char *backend);
/* A new zero-filled CPU tensor of dtype. NULL after printing the error. */
loom_tensor *demo_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape);
/* A new f32 CPU tensor holding values[numel] (values may be NULL: zeros).
** NULL after printing the error. */
loom_tensor *demo_f32(int32_t ndim, const int64_t *shape, const float *values);
/* A pseudo-random number in [-1, 1) from a fixed sequence (reproducible). */
float demo_random(void);
/* Print "  label dtype[shape] = [values]" on one line (a CPU tensor). */
void demo_show(const char *label, const loom_tensor *t);
/* Monotonic seconds. */
double demo_now(void);

#endif /* LOOM_DEMO_H */
