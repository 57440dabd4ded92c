/*
** fma_peak.c - measure the f32 FMA peak: each thread runs 12 independent
** chains of _mm256_fmadd_ps (more than latency x issue width = 4 x 2 on
** current x86 cores, so the FMA ports never wait), from registers only.
** Built as the `fma_peak` tool (with FMA_PEAK_MAIN) and linked into the
** matmul benchmark.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "fma_peak.h"

#define ITERS 50000000L

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx2,fma")))
static void *chains(void *out)
{
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 c0 = _mm256_set1_ps(0.0f), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
    __m256 c6 = c0, c7 = c0, c8 = c0, c9 = c0, c10 = c0, c11 = c0;
    for (long i = 0; i < ITERS; i++) {
        c0 = _mm256_fmadd_ps(a, c0, b); c1 = _mm256_fmadd_ps(a, c1, b);
        c2 = _mm256_fmadd_ps(a, c2, b); c3 = _mm256_fmadd_ps(a, c3, b);
        c4 = _mm256_fmadd_ps(a, c4, b); c5 = _mm256_fmadd_ps(a, c5, b);
        c6 = _mm256_fmadd_ps(a, c6, b); c7 = _mm256_fmadd_ps(a, c7, b);
        c8 = _mm256_fmadd_ps(a, c8, b); c9 = _mm256_fmadd_ps(a, c9, b);
        c10 = _mm256_fmadd_ps(a, c10, b); c11 = _mm256_fmadd_ps(a, c11, b);
        /* keep the chains live without a store: an empty asm the compiler must respect */
        __asm__ volatile("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(c8, c9), _mm256_add_ps(c10, c11)));
    *(float *)out = _mm256_cvtss_f32(s);
    return NULL;
}

double fma_peak_gflops(int threads)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || threads < 1)
        return 0.0;
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    float *sink = calloc((size_t)threads, sizeof *sink);
    if (tid == NULL || sink == NULL) {
        free(tid);
        free(sink);
        return 0.0;
    }
    double t0 = now();
    int started = 0;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&tid[i], NULL, chains, &sink[i]) == 0)
            started++;
        else
            break;
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    double dt = now() - t0;
    free(tid);
    free(sink);
    return (double)started * (double)ITERS * 12.0 * 16.0 / dt * 1e-9;
}
#else
double fma_peak_gflops(int threads)
{
    (void)threads;
    return 0.0;
}
#endif

#ifdef FMA_PEAK_MAIN
#include <unistd.h>

int main(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    printf("f32 FMA peak, 1 thread : %8.1f GFLOP/s\n", fma_peak_gflops(1));
    printf("f32 FMA peak, %ld threads: %8.1f GFLOP/s\n", cpus, fma_peak_gflops((int)cpus));
    return 0;
}
#endif
