/* SPDX-License-Identifier: BSD-3-Clause */
/*
** membw.c - this machine's memory read bandwidth, STREAM-like: each thread
** streams its share of a buffer far larger than the caches and sums it
** (read-only, AVX2 loads when the compiler may use them), best of several
** passes. It is the ceiling the TBE benchmark (tools/bench/tbe) compares the
** FP32 lookup against, measured in the same run.
**
**   membw [--threads N] [--mib M] [--passes P] [--row-bytes R]
**                                                   (defaults 2, 2048, 5, 0)
** prints:  membw: <GB/s> GB/s read (N threads, M MiB, best of P; cpu-time <GB/s>)
** GB are 1e9 bytes, as fbgemm's benchmarks count them. The cpu-time figure
** divides the bytes by the process CPU time / N instead of the wall time:
** on a shared machine it is what the threads reached while they ran.
** With --row-bytes R > 0 the threads instead read R-byte rows at uniformly
** random row offsets (software prefetch 8 rows ahead), as many bytes as the
** buffer holds: the ceiling of an embedding gather, printed as
** "membw: ... GB/s random R-byte rows ...".
*/
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef struct worker {
    const uint64_t *data;
    size_t n;                     /* 8-byte words (sequential); rows to read (gather) */
    size_t row_words;             /* gather: words per row, 0 = sequential */
    size_t n_rows;                /* gather: rows in the whole buffer */
    uint64_t seed;
    uint64_t sum;
    pthread_barrier_t *start;
} worker;

#if defined(__x86_64__)
__attribute__((target("avx2")))
static uint64_t sum_avx2(const uint64_t *p, size_t n)
{
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_add_epi64(a0, _mm256_load_si256((const __m256i *)(const void *)(p + i)));
        a1 = _mm256_add_epi64(a1, _mm256_load_si256((const __m256i *)(const void *)(p + i + 4)));
        a2 = _mm256_add_epi64(a2, _mm256_load_si256((const __m256i *)(const void *)(p + i + 8)));
        a3 = _mm256_add_epi64(a3, _mm256_load_si256((const __m256i *)(const void *)(p + i + 12)));
    }
    a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
    uint64_t lanes[4];
    _mm256_storeu_si256((__m256i *)(void *)lanes, a0);
    uint64_t s = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; i++)
        s += p[i];
    return s;
}
#endif

static uint64_t sum_scalar(const uint64_t *p, size_t n)
{
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += p[i];
        s1 += p[i + 1];
        s2 += p[i + 2];
        s3 += p[i + 3];
    }
    for (; i < n; i++)
        s0 += p[i];
    return s0 + s1 + s2 + s3;
}

static int use_avx2;

/* Sum n random rows of row_words words each, prefetching 8 rows ahead. */
static uint64_t gather(const uint64_t *base, size_t row_words, size_t n_rows, size_t n, uint64_t seed)
{
    enum { AHEAD = 8 };
    size_t ring[AHEAD];
    uint64_t x = seed | 1, s = 0;
    for (int k = 0; k < AHEAD; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ring[k] = (size_t)(x % n_rows);
    }
    for (size_t i = 0; i < n; i++) {
        const uint64_t *row = base + ring[i % AHEAD] * row_words;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ring[i % AHEAD] = (size_t)(x % n_rows);
        const char *next = (const char *)(base + ring[i % AHEAD] * row_words);
        for (size_t o = 0; o < row_words * 8; o += 64)
            __builtin_prefetch(next + o, 0, 3);
#if defined(__x86_64__)
        s += use_avx2 ? sum_avx2(row, row_words) : sum_scalar(row, row_words);
#else
        s += sum_scalar(row, row_words);
#endif
    }
    return s;
}

static void *run(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    if (w->row_words > 0) {
        w->sum = gather(w->data, w->row_words, w->n_rows, w->n, w->seed);
        return NULL;
    }
#if defined(__x86_64__)
    w->sum = use_avx2 ? sum_avx2(w->data, w->n) : sum_scalar(w->data, w->n);
#else
    w->sum = sum_scalar(w->data, w->n);
#endif
    return NULL;
}

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec
         + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long threads = 2, mib = 2048, passes = 5, row_bytes = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--threads") == 0 && v > 0 && v <= 256)
            threads = v;
        else if (strcmp(argv[i], "--mib") == 0 && v > 0)
            mib = v;
        else if (strcmp(argv[i], "--passes") == 0 && v > 0)
            passes = v;
        else if (strcmp(argv[i], "--row-bytes") == 0 && v >= 32 && v % 32 == 0)
            row_bytes = v;
        else {
            fprintf(stderr, "usage: membw [--threads N] [--mib M] [--passes P] [--row-bytes R (multiple of 32)]\n");
            return 2;
        }
    }
#if defined(__x86_64__)
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    const size_t bytes = (size_t)mib << 20, words = bytes / 8;
    uint64_t *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, bytes) != 0) {
        fprintf(stderr, "membw: cannot allocate %ld MiB\n", mib);
        return 1;
    }
    for (size_t i = 0; i < words; i++)      /* touch every page (and defeat zero-page sharing) */
        buf[i] = i;
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    pthread_barrier_t start;
    if (w == NULL || tid == NULL || pthread_barrier_init(&start, NULL, (unsigned)threads + 1) != 0) {
        fprintf(stderr, "membw: out of memory\n");
        return 1;
    }
    double best = 0, best_cpu = 0;
    uint64_t check = 0;
    for (long p = 0; p < passes; p++) {
        size_t per = words / (size_t)threads / 4 * 4;
        for (long t = 0; t < threads; t++) {
            if (row_bytes > 0)      /* every thread gathers from the whole buffer */
                w[t] = (worker){ buf, bytes / (size_t)row_bytes / (size_t)threads, (size_t)row_bytes / 8,
                                 bytes / (size_t)row_bytes, 0x9E3779B97F4A7C15ull * (uint64_t)(t + 1 + p * 64), 0,
                                 &start };
            else
                w[t] = (worker){ buf + (size_t)t * per, t == threads - 1 ? words - (size_t)t * per : per, 0, 0, 0, 0,
                                 &start };
            pthread_create(&tid[t], NULL, run, &w[t]);
        }
        double t0 = now(), c0 = cpu_now();
        pthread_barrier_wait(&start);
        for (long t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            check += w[t].sum;
        }
        double gbs = (double)bytes / (now() - t0) / 1e9;
        double cpu_gbs = (double)bytes / ((cpu_now() - c0) / (double)threads) / 1e9;
        if (gbs > best)
            best = gbs;
        if (cpu_gbs > best_cpu)
            best_cpu = cpu_gbs;
    }
    if (row_bytes > 0)
        printf("membw: %.2f GB/s random %ld-byte rows (%ld threads, %ld MiB, best of %ld; cpu-time %.2f GB/s)\n",
               best, row_bytes, threads, mib, passes, best_cpu);
    else
        printf("membw: %.2f GB/s read (%ld threads, %ld MiB, best of %ld; cpu-time %.2f GB/s)\n", best, threads, mib,
               passes, best_cpu);
    fprintf(stderr, "checksum %llu\n", (unsigned long long)check);
    pthread_barrier_destroy(&start);
    free(w);
    free(tid);
    free(buf);
    return 0;
}
