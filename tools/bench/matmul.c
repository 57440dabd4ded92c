/*
** matmul.c - core.matmul throughput, f32, square sizes 256..2048, on the
** cpu kernel and on the onednn kernel (forced per call), in one process run,
** next to this machine's measured FMA peak.
**
**   bench_matmul [--plugin-path DIR] [--max N]
**
** Each size runs once to warm up (packing buffers, oneDNN primitive), then
** repeats for at least 0.5 s; the best time is reported.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom/loom.h"
#include "fma_peak.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best GFLOP/s of n x n x n on backend, or -1 when the backend cannot run it. */
static double bench(int64_t n, const char *backend, const loom_tensor *a, const loom_tensor *b)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_tensor *out = NULL;
    const loom_tensor *in[2] = { a, b };
    opt.backend = backend;
    if (loom_run("core.matmul", in, 2, NULL, &out, 1, &opt) != LOOM_OK) {
        fprintf(stderr, "%s: %s\n", backend, loom_last_error());
        return -1;
    }
    double best = 1e30, start = now();
    int reps = 0;
    while (reps < 3 || now() - start < 0.5) {
        double t0 = now();
        loom_tensor *outs[1] = { out };    /* written in place: no allocation timed */
        if (loom_run("core.matmul", in, 2, NULL, outs, 1, &opt) != LOOM_OK)
            return -1;
        double dt = now() - t0;
        best = dt < best ? dt : best;
        reps++;
    }
    loom_tensor_free(out);
    return 2.0 * (double)n * (double)n * (double)n / best * 1e-9;
}

int main(int argc, char **argv)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    int64_t max = 2048;
    o.plugin_path = BENCH_PLUGIN_PATH;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plugin-path") == 0 && i + 1 < argc)
            o.plugin_path = argv[++i];
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = strtoll(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: %s [--plugin-path DIR] [--max N]\n", argv[0]);
            return 2;
        }
    }
    if (loom_init(&o) != LOOM_OK) {
        fprintf(stderr, "loom_init: %s\n", loom_last_error());
        return 1;
    }
    int threads = loom_num_threads();
    double peak1 = fma_peak_gflops(1), peak = fma_peak_gflops(threads);
    printf("FMA peak f32: %.1f GFLOP/s (1 thread), %.1f GFLOP/s (%d threads)\n", peak1, peak, threads);
    printf("%6s %14s %14s %10s %10s\n", "size", "cpu GFLOP/s", "onednn GFLOP/s", "cpu/onednn", "cpu/peak");
    for (int64_t n = 256; n <= max; n *= 2) {
        int64_t shape[2] = { n, n };
        loom_tensor *a, *b;
        if (loom_tensor_new(&a, LOOM_DTYPE_F32, 2, shape, NULL) != LOOM_OK
            || loom_tensor_new(&b, LOOM_DTYPE_F32, 2, shape, NULL) != LOOM_OK) {
            fprintf(stderr, "%s\n", loom_last_error());
            return 1;
        }
        float *pa = loom_data(a), *pb = loom_data(b);
        for (int64_t i = 0; i < n * n; i++) {
            pa[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
            pb[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        }
        double cpu = bench(n, "cpu", a, b), dnn = bench(n, "onednn", a, b);
        printf("%6lld %14.1f ", (long long)n, cpu);
        if (dnn > 0)
            printf("%14.1f %10.2f", dnn, cpu / dnn);
        else
            printf("%14s %10s", "n/a", "n/a");
        printf(" %9.0f%%\n", peak > 0 ? 100.0 * cpu / peak : 0.0);
        fflush(stdout);
        loom_tensor_free(a);
        loom_tensor_free(b);
    }
    loom_shutdown();
    return 0;
}
