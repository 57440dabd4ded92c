/*
** demo.h - the sections of `loom demo` and the helpers they share.
**
** A section is one short, self-contained demonstration on data it generates
** (or writes to a temporary directory it removes). It prints readable text,
** records every loom call it makes with demo_record so the final summary can
** show where each call ran, and returns CLI_OK or CLI_FAIL. A section whose
** ops are not loaded prints why and returns CLI_OK: the demo shows what this
** installation can do. New packs add a demo_<pack>.c and rows to the table
** in cmd_demo.c.
*/
#ifndef LOOM_CLI_DEMO_H
#define LOOM_CLI_DEMO_H

#include "cli.h"

typedef struct demo_section {
    const char *name;               /* what `loom demo NAME` selects */
    const char *ops;                /* ','-separated ops it needs */
    const char *title;
    int (*run)(void);
} demo_section;

/* Sections of the core pack (demo_core.c). */
int demo_core_matmul(void);
int demo_core_add(void);
int demo_core_cast(void);
int demo_core_linear(void);

/* Sections of the vision pack (demo_vision.c). */
int demo_vision_detect(void);
int demo_vision_deform(void);

/* Sections of the fbgemm pack (demo_fbgemm.c). */
int demo_fbgemm_tbe(void);
int demo_fbgemm_jagged(void);

/* Note where the last call on this thread ran, under a short label. */
void demo_record(const char *label);
/* True when op exists and has a kernel of this backend. */
int demo_has_backend(const char *op, const char *backend);
/* A new zero-filled CPU tensor of dtype. NULL after printing the error. */
loom_tensor *demo_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape);
/* A new f32 CPU tensor holding values[numel] (values may be NULL: zeros).
** NULL after printing the error. */
loom_tensor *demo_f32(int32_t ndim, const int64_t *shape, const float *values);
/* A pseudo-random number in [-1, 1) from a fixed sequence (reproducible). */
float demo_random(void);
/* Print "  label dtype[shape] = [values]" on one line. */
void demo_show(const char *label, const loom_tensor *t);

#endif /* LOOM_CLI_DEMO_H */
