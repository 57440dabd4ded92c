/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dispatch_overhead.c - what a loom call costs on top of the work it does.
**
**   dispatch_overhead [ITERATIONS]      (default 1000000)
**
** Times core.add on two 1-element f32 tensors into a preallocated output
** (so no allocation happens inside the loop), called by name (loom_run),
** through a looked-up op (loom_op_run) and through a plan (loom_plan_run),
** against a direct call of a non-inlined C function adding two floats
** through pointers; and bench.nested_add (nestpack.c), whose kernel calls
** core.add through host->op_call, so its time less loom_op_run's is the
** cost of one nested dispatch. Prints ns per call for each and the
** difference to the direct call, which is the dispatch overhead.
** Targets: under 1 us per call; a planned call's overhead at most 1/3 of
** loom_op_run's. The iterations are split into rounds that alternate
** between the three paths; the fastest round of each path is reported, so
** other load on the machine inflates the numbers as little as possible.
** Target: under 1 us per call.
** Exit status: 0 measured, 1 a loom call failed, 2 usage error.
*/
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "loom/loom.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The same work with no framework: kept out of line so the loop pays a call. */
__attribute__((noinline)) static void add_direct(const float *a, const float *b, float *out)
{
    *out = *a + *b;
}

static int fail(void)
{
    fprintf(stderr, "dispatch_overhead: %s\n", loom_last_error());
    return 1;
}

enum path { DIRECT, BY_NAME, BY_OP, PLANNED, NESTED, N_PATHS };

typedef struct bench_args {
    const loom_tensor *in[2];
    loom_tensor *out;
    const loom_op *op, *nested;
    loom_plan *plan;
    float *a, *b, *c;
} bench_args;

/* ns per call of `n` calls along one path; negative when a call failed. */
static double measure(enum path path, bench_args *x, long n)
{
    double t0 = now();
    for (long i = 0; i < n; i++) {
        loom_status st = LOOM_OK;
        if (path == DIRECT) {
            add_direct(x->a, x->b, x->c);
            __asm__ __volatile__("" ::: "memory");   /* keep every call: the loop must not collapse */
        } else if (path == BY_NAME) {
            st = loom_run("core.add", x->in, 2, NULL, &x->out, 1, NULL);
        } else if (path == BY_OP) {
            st = loom_op_run(x->op, x->in, 2, NULL, &x->out, 1, NULL);
        } else if (path == PLANNED) {
            st = loom_plan_run(x->plan, x->in, 2, &x->out, 1);
        } else {
            st = loom_op_run(x->nested, x->in, 2, NULL, &x->out, 1, NULL);
        }
        if (st != LOOM_OK)
            return -1.0;
    }
    return (now() - t0) / (double)n * 1e9;
}

int main(int argc, char **argv)
{
    static const char *const names[N_PATHS] = {
        "direct C call (noinline)", "loom_run (name lookup)", "loom_op_run (looked-up op)",
        "loom_plan_run (prepared)", "nested op_call (in a kernel)",
    };
    enum { ROUNDS = 10 };
    long iters = 1000000;
    const int64_t shape[1] = { 1 };
    float a = 1.5f, b = 2.25f, c = 0.0f;
    loom_tensor *ta = NULL, *tb = NULL;
    bench_args x = { .a = &a, .b = &b, .c = &c };
    double best[N_PATHS];
    int bad_usage = argc > 2, rc = 0;

    if (argc == 2) {
        char *end;
        errno = 0;
        iters = strtol(argv[1], &end, 10);
        bad_usage = errno != 0 || end == argv[1] || *end != '\0' || iters < ROUNDS;
    }
    if (bad_usage) {
        fprintf(stderr, "usage: dispatch_overhead [ITERATIONS >= %d]\n", ROUNDS);
        return 2;
    }
    /* the default packs, then nestpack.c from next to this benchmark */
    if (loom_init(NULL) != LOOM_OK || loom_load_pack(BENCH_NEST_DIR "/bench.so") != LOOM_OK)
        return fail();
    if (loom_tensor_wrap(&ta, &a, LOOM_DTYPE_F32, 1, shape, NULL, NULL) != LOOM_OK
        || loom_tensor_wrap(&tb, &b, LOOM_DTYPE_F32, 1, shape, NULL, NULL) != LOOM_OK
        || loom_tensor_wrap(&x.out, &c, LOOM_DTYPE_F32, 1, shape, NULL, NULL) != LOOM_OK
        || (x.op = loom_op_find("core.add")) == NULL || (x.nested = loom_op_find("bench.nested_add")) == NULL) {
        rc = fail();
    }
    x.in[0] = ta;
    x.in[1] = tb;
    if (rc == 0 && loom_plan_create(&x.plan, x.op, x.in, 2, NULL, NULL) != LOOM_OK)
        rc = fail();

    /* Warm up every path: first-call lookups, page faults, the thread pool. */
    for (int p = 0; rc == 0 && p < N_PATHS; p++) {
        if (measure((enum path)p, &x, 10000) < 0)
            rc = fail();
        best[p] = INFINITY;
    }
    for (int r = 0; rc == 0 && r < ROUNDS; r++) {
        for (int p = 0; rc == 0 && p < N_PATHS; p++) {
            double ns = measure((enum path)p, &x, iters / ROUNDS);
            if (ns < 0)
                rc = fail();
            else if (ns < best[p])
                best[p] = ns;
        }
    }
    if (rc == 0 && c != 3.75f) {
        fprintf(stderr, "dispatch_overhead: core.add gave %g, expected 3.75\n", (double)c);
        rc = 1;
    }
    if (rc == 0) {
        printf("core.add on 1-element f32 tensors, preallocated output, %ld calls per path"
               " (fastest of %d rounds)\n", iters, ROUNDS);
        printf("  %-28s %8.1f ns/call\n", names[DIRECT], best[DIRECT]);
        for (int p = BY_NAME; p < NESTED; p++)
            printf("  %-28s %8.1f ns/call  overhead %7.1f ns\n", names[p], best[p], best[p] - best[DIRECT]);
        printf("  %-28s %8.1f ns/call  nested dispatch %7.1f ns (its time less loom_op_run's)\n", names[NESTED],
               best[NESTED], best[NESTED] - best[BY_OP]);
        double op_over = best[BY_OP] - best[DIRECT], plan_over = best[PLANNED] - best[DIRECT];
        printf("  target, under 1000 ns per call: %s\n",
               best[BY_NAME] < 1000.0 && best[BY_OP] < 1000.0 ? "met" : "NOT met");
        printf("  target, planned overhead <= 1/3 of loom_op_run's: %.2f of it, %s\n", plan_over / op_over,
               plan_over <= op_over / 3.0 ? "met" : "NOT met");
    }
    loom_plan_free(x.plan);
    loom_tensor_free(ta);
    loom_tensor_free(tb);
    loom_tensor_free(x.out);
    loom_shutdown();
    return rc;
}
