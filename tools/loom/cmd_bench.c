/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cmd_bench.c - `loom bench OP ... [--repeat N] [--warmup W] [--json]`: time
** one operator call made as `loom run` would make it.
**
** Each timed iteration is one loom_op_run with fresh outputs (allocation is
** part of what a caller pays) followed by a device sync; outputs are freed
** outside the timed region. Reported: median, p10 and p90 (linear
** interpolation between order statistics), and GFLOP/s and GB/s at the median
** when the op declares its cost; also the median CPU seconds of the process
** (every thread) per call, which on a machine shared with other work tells
** the call's cost where wall time tells the others' load, and which leaves
** out what create and warm-up cost.
*/
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "callspec.h"
#include "json.h"

static const char usage[] =
    "usage: loom bench OP --in NAME=FILE.npy ... [--lines NAME=FILE.txt ...] [--kjt NAME=FILE ...]\n"
    "                  [--attr KEY=VALUE ...] [--weights FILE.safetensors] [--backend B] [--device cpu|cuda[:N]]\n"
    "                  [--repeat N] [--warmup W] [--json]\n"
    "  Time OP (arguments as for `loom run`): median, p10 and p90 seconds over N\n"
    "  calls (default 20) after W untimed ones (default 3), and GFLOP/s and GB/s\n"
    "  when the op declares its cost.\n"
    "  --json   print median_s, p10_s, p90_s, cpu_median_s, repeats, gflops, gbps, backend, impl\n";

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-quantile (0..1) of sorted v[n]. */
static double quantile(const double *v, long n, double p)
{
    double pos = p * (double)(n - 1);
    long lo = (long)pos;
    double frac = pos - (double)lo;
    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + frac * (v[lo + 1] - v[lo]);
}

static void print_time(const char *label, double s)
{
    if (s >= 1.0)
        printf("%s %.3f s", label, s);
    else if (s >= 1e-3)
        printf("%s %.3f ms", label, s * 1e3);
    else if (s >= 1e-6)
        printf("%s %.3f us", label, s * 1e6);
    else
        printf("%s %.1f ns", label, s * 1e9);
}

/* CPU seconds of every thread of the process so far. */
static double process_cpu_seconds(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One call with fresh outputs; *seconds is its wall time, *cpu_seconds
** the CPU time the process spent meanwhile. */
static int timed_call(callspec *c, loom_tensor **outputs, double *seconds, double *cpu_seconds)
{
    uint32_t n_out = c->schema->n_outputs;
    loom_status st;
    double t0, c0;

    for (uint32_t i = 0; i < n_out; i++)
        outputs[i] = NULL;
    c0 = process_cpu_seconds();
    t0 = cli_now();
    st = callspec_call(c, outputs);
    *seconds = cli_now() - t0;
    *cpu_seconds = process_cpu_seconds() - c0;
    for (uint32_t i = 0; i < n_out; i++)
        loom_tensor_free(outputs[i]);
    return st == LOOM_OK ? CLI_OK : cli_fail();
}

static int report(const callspec *c, const double *times, const double *cpu_times, double flops, double bytes,
                  const loom_dispatch_info *d)
{
    double med = quantile(times, c->repeat, 0.5), p10 = quantile(times, c->repeat, 0.1),
           p90 = quantile(times, c->repeat, 0.9), cpu_med = quantile(cpu_times, c->repeat, 0.5);

    if (c->json) {
        cJSON *root = cJSON_CreateObject();
        json_add_str(root, "op", c->schema->name);
        json_add_num(root, "median_s", med);
        json_add_num(root, "p10_s", p10);
        json_add_num(root, "p90_s", p90);
        json_add_num(root, "cpu_median_s", cpu_med);
        json_add_num(root, "repeats", (double)c->repeat);
        json_add_num(root, "warmup", (double)c->warmup);
        if (flops > 0 && med > 0)
            json_add_num(root, "gflops", flops / med * 1e-9);
        if (bytes > 0 && med > 0)
            json_add_num(root, "gbps", bytes / med * 1e-9);
        json_add_str(root, "backend", d->backend);
        json_add_str(root, "impl", d->impl);
        return json_emit(root);
    }
    printf("%s on %s (%s): %ld calls after %ld warm-up\n", c->schema->name,
           d->backend != NULL ? d->backend : "?", d->impl != NULL ? d->impl : "?", c->repeat, c->warmup);
    print_time("  median", med);
    print_time("   p10", p10);
    print_time("   p90", p90);
    print_time("   CPU median", cpu_med);
    printf("\n");
    if (flops > 0 && med > 0)
        printf("  %.2f GFLOP/s", flops / med * 1e-9);
    if (bytes > 0 && med > 0)
        printf("  %.2f GB/s", bytes / med * 1e-9);
    if (flops > 0 || bytes > 0)
        printf("  (at the median)\n");
    else
        printf("  (%s declares no cost: no GFLOP/s or GB/s)\n", c->schema->name);
    return CLI_OK;
}

static int bench(callspec *c)
{
    uint32_t n_out = c->schema->n_outputs;
    loom_tensor **outputs = calloc(n_out > 0 ? n_out : 1, sizeof *outputs);
    double *times = calloc((size_t)c->repeat, sizeof *times);
    double *cpu_times = calloc((size_t)c->repeat, sizeof *cpu_times);
    loom_dispatch_info d = LOOM_DISPATCH_INFO_INIT;
    double flops = 0, bytes = 0, ignored, ignored_cpu;
    int rc = CLI_OK;

    if (outputs == NULL || times == NULL || cpu_times == NULL) {
        fprintf(stderr, "loom bench: out of memory\n");
        rc = CLI_FAIL;
    }
    cli_progress_begin(c->schema->name, c->warmup + c->repeat);
    for (long i = 0; rc == CLI_OK && i < c->warmup; i++) {
        rc = timed_call(c, outputs, &ignored, &ignored_cpu);
        cli_progress_update(i + 1);
    }
    for (long i = 0; rc == CLI_OK && i < c->repeat; i++) {
        rc = timed_call(c, outputs, &times[i], &cpu_times[i]);
        cli_progress_update(c->warmup + i + 1);
    }
    cli_progress_end();
    if (rc == CLI_OK) {
        /* Both describe the last call, which succeeded. */
        loom_last_call_cost(&flops, &bytes);
        if (loom_last_dispatch(&d) != LOOM_OK)
            rc = cli_fail();
    }
    if (rc == CLI_OK) {
        qsort(times, (size_t)c->repeat, sizeof *times, cmp_double);
        qsort(cpu_times, (size_t)c->repeat, sizeof *cpu_times, cmp_double);
        rc = report(c, times, cpu_times, flops, bytes, &d);
    }
    free(cpu_times);
    free(times);
    free(outputs);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    callspec c;
    int rc = callspec_parse(&c, CALLSPEC_BENCH, usage, argc, argv);

    if (rc == CLI_OK)
        rc = callspec_prepare(&c);
    if (rc == CLI_OK)
        rc = bench(&c);
    callspec_free(&c);
    return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
}
