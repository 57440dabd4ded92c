/* SPDX-License-Identifier: BSD-3-Clause */
/*
** matmul.c - core.matmul throughput, f32, on the cpu kernel (the common
** GEMM, plugins/common/gemm) and on the onednn kernel (forced per call), in
** one process run, next to NumPy's matmul (its BLAS) and this machine's
** measured FMA peak.
**
**   bench_matmul [--plugin-path DIR] [--threads LIST] [--quick] [--cputime]
**                [--python PY | --no-numpy]
**
** Shapes (M x K x N): 256, 512, 1024, 2048 square, 1x1024x1024 (GEMV) and
** 64x4096x1024, each at 1 and 2 threads (--threads 1,2,4 for others).
** Both loom kernels get the thread count as the call's num_threads: the
** onednn kernel runs oneDNN within the call's budget itself (capped by this
** thread's OpenMP setting, which the header shows). NumPy's column comes from
** tools/bench/matmul_numpy.py, run by PY (default: the source tree's
** .venv/bin/python, when present) once per thread count with
** OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS set to it; it
** times the same shapes and values on the wall clock (best of repeats for
** 0.4 s), whatever --quick and --cputime say.
** Each case runs once to warm up (packing buffers, oneDNN primitive), then
** repeats for at least 0.4 s (--quick: 0.1 s); the best time is reported.
** --cputime times the 1-thread rows by the calling thread's CPU time (both
** libraries then run on that thread), which a loaded machine's time slicing
** does not inflate; rows with more threads stay on the wall clock.
** The peak is fma_peak_gflops_isa for the ISA the core allows (AVX-512 when
** loom_cpu_features() has AVX512F, else AVX2) at the same thread count.
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "loom/loom.h"
#include "loom/plugin.h"
#include "fma_peak.h"

static int use_cputime;

static double now_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double min_time = 0.4;

#define N_SHAPES 6
static const int64_t shapes[N_SHAPES][3] = {   /* M, K, N; matmul_numpy.py has the same list */
    { 256, 256, 256 }, { 512, 512, 512 }, { 1024, 1024, 1024 }, { 2048, 2048, 2048 },
    { 1, 1024, 1024 }, { 64, 4096, 1024 },
};

/* NumPy's GFLOP/s per shape at `threads` BLAS threads into gflops (-1 where
** absent): matmul_numpy.py run by python; 0 when it could not run. */
static int numpy_rates(const char *python, int threads, double *gflops)
{
    char cmd[4096], line[256];
    for (int s = 0; s < N_SHAPES; s++)
        gflops[s] = -1;
    snprintf(cmd, sizeof cmd,
             "OPENBLAS_NUM_THREADS=%d OMP_NUM_THREADS=%d MKL_NUM_THREADS=%d '%s' '%s' 2>/dev/null",
             threads, threads, threads, python, BENCH_SOURCE_ROOT "/tools/bench/matmul_numpy.py");
    FILE *p = popen(cmd, "r");
    if (p == NULL)
        return 0;
    int rows = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        char name[64];
        double g;
        if (sscanf(line, "%63s %lf", name, &g) != 2)
            continue;
        for (int s = 0; s < N_SHAPES; s++) {
            char want[64];
            snprintf(want, sizeof want, "%lldx%lldx%lld", (long long)shapes[s][0], (long long)shapes[s][1],
                     (long long)shapes[s][2]);
            if (strcmp(name, want) == 0) {
                gflops[s] = g;
                rows++;
            }
        }
    }
    return pclose(p) == 0 && rows > 0;
}

/* Best GFLOP/s of m x k x n on backend, or -1 when the backend cannot run it. */
static double bench(int64_t m, int64_t k, int64_t n, const char *backend, int threads, const loom_tensor *a,
                    const loom_tensor *b)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    loom_tensor *out = NULL;
    const loom_tensor *in[2] = { a, b };
    opt.backend = backend;
    opt.num_threads = threads;
    if (loom_run("core.matmul", in, 2, NULL, &out, 1, &opt) != LOOM_OK) {
        fprintf(stderr, "%s: %s\n", backend, loom_last_error());
        return -1;
    }
    clockid_t clk = use_cputime && threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
    double best = 1e30, start = now();
    int reps = 0;
    while (reps < 3 || now() - start < min_time) {
        double t0 = now_clock(clk);
        loom_tensor *outs[1] = { out };    /* written in place: no allocation timed */
        if (loom_run("core.matmul", in, 2, NULL, outs, 1, &opt) != LOOM_OK)
            return -1;
        double dt = now_clock(clk) - t0;
        best = dt < best ? dt : best;
        reps++;
    }
    loom_tensor_free(out);
    return 2.0 * (double)m * (double)n * (double)k / best * 1e-9;
}

static loom_tensor *filled(int64_t rows, int64_t cols, int mul, int mod)
{
    int64_t shape[2] = { rows, cols };
    loom_tensor *t;
    if (loom_tensor_new(&t, LOOM_DTYPE_F32, 2, shape, NULL) != LOOM_OK)
        return NULL;
    float *p = loom_data(t);
    for (int64_t i = 0; i < rows * cols; i++)
        p[i] = (float)((i * mul) % mod) / (float)mod - 0.5f;
    return t;
}

static void cpu_name(char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    snprintf(buf, size, "unknown CPU");
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v != NULL) {
                snprintf(buf, size, "%s", v + 2);
                buf[strcspn(buf, "\n")] = 0;
            }
            break;
        }
    if (f != NULL)
        fclose(f);
}

int main(int argc, char **argv)
{
    loom_init_options o = LOOM_INIT_OPTIONS_INIT;
    const char *python = BENCH_SOURCE_ROOT "/.venv/bin/python";
    int numpy = access(python, X_OK) == 0;
    int thread_list[8] = { 1, 2 }, n_threads = 2;
    o.plugin_path = BENCH_PLUGIN_PATH;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plugin-path") == 0 && i + 1 < argc) {
            o.plugin_path = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            n_threads = 0;
            for (char *s = argv[++i]; *s != 0 && n_threads < 8; s += strspn(s, ","))
                thread_list[n_threads++] = (int)strtol(s, &s, 10);
        } else if (strcmp(argv[i], "--quick") == 0) {
            min_time = 0.1;
        } else if (strcmp(argv[i], "--cputime") == 0) {
            use_cputime = 1;
        } else if (strcmp(argv[i], "--python") == 0 && i + 1 < argc) {
            python = argv[++i];
            numpy = 1;
        } else if (strcmp(argv[i], "--no-numpy") == 0) {
            numpy = 0;
        } else {
            fprintf(stderr, "usage: %s [--plugin-path DIR] [--threads 1,2] [--quick] [--cputime] "
                    "[--python PY | --no-numpy]\n", argv[0]);
            return 2;
        }
    }
    if (loom_init(&o) != LOOM_OK) {
        fprintf(stderr, "loom_init: %s\n", loom_last_error());
        return 1;
    }
    /* this thread's OpenMP setting, which caps the onednn kernel's threads (shown, never changed) */
    int (*omp_max)(void) = NULL;
    void *gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);   /* loaded by libdnnl, locally */
    void *omp_sym = gomp != NULL ? dlsym(gomp, "omp_get_max_threads") : dlsym(RTLD_DEFAULT, "omp_get_max_threads");
    memcpy(&omp_max, &omp_sym, sizeof omp_sym);
    char cpu[200], feat[200];
    cpu_name(cpu, sizeof cpu);
    uint64_t f = loom_cpu_features();
    fma_isa isa = (f & LOOM_CPU_AVX512F) ? FMA_ISA_AVX512 : FMA_ISA_AVX2;
    printf("CPU: %s\nfeatures in force: %s\n", cpu, loom_cpu_features_text(f, feat, sizeof feat));
    printf("peak: %s FMA, measured per thread count below; best of repeats (noisy on a shared machine)%s\n",
           isa == FMA_ISA_AVX512 ? "AVX-512" : "AVX2", use_cputime ? "; 1-thread rows on thread CPU time" : "");
    if (omp_max != NULL)
        printf("OpenMP threads of this thread (cap of the onednn kernel): %d\n", omp_max());
    printf("GFLOP/s; ratio = loom / onednn%s\n", numpy ? "; numpy on the wall clock" : "");
    printf("%-16s %3s %10s %10s %10s %7s %9s %9s\n", "MxKxN", "thr", "loom", "onednn", "numpy", "ratio", "loom/pk",
           "peak");
    for (int ti = 0; ti < n_threads; ti++) {
        int t = thread_list[ti];
        double peak = fma_peak_gflops_isa(isa, t), np_rate[N_SHAPES];
        if (numpy && !numpy_rates(python, t, np_rate)) {
            fprintf(stderr, "numpy: %s %s failed; --no-numpy leaves the column out\n", python,
                    BENCH_SOURCE_ROOT "/tools/bench/matmul_numpy.py");
            numpy = 0;
        }
        for (size_t s = 0; s < N_SHAPES; s++) {
            int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
            loom_tensor *a = filled(m, k, 7, 13), *b = filled(k, n, 5, 11);
            if (a == NULL || b == NULL) {
                fprintf(stderr, "%s\n", loom_last_error());
                return 1;
            }
            double cpu_g = bench(m, k, n, "cpu", t, a, b), dnn = bench(m, k, n, "onednn", t, a, b);
            char name[48];
            snprintf(name, sizeof name, "%lldx%lldx%lld", (long long)m, (long long)k, (long long)n);
            printf("%-16s %3d %10.1f ", name, t, cpu_g);
            if (dnn > 0)
                printf("%10.1f ", dnn);
            else
                printf("%10s ", "n/a");
            if (numpy && np_rate[s] > 0)
                printf("%10.1f ", np_rate[s]);
            else
                printf("%10s ", "n/a");
            if (dnn > 0)
                printf("%7.2f", cpu_g / dnn);
            else
                printf("%7s", "n/a");
            printf(" %8.0f%% %9.1f\n", peak > 0 ? 100.0 * cpu_g / peak : 0.0, peak);
            fflush(stdout);
            loom_tensor_free(a);
            loom_tensor_free(b);
        }
    }
    loom_shutdown();
    return 0;
}
