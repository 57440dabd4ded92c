/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fma_peak.c - measure the f32 FMA peak of this machine, for AVX2 and for
** AVX-512 separately, and the clock it runs at.
**
** Each thread runs CHAINS independent chains of FMAs, from registers only:
** more chains than FMA latency x FMA units (4 x 2 on current x86 cores), so
** the units never wait. Every chain starts from a different value and every
** chain is an operand of the empty asm in the loop, so the compiler can
** neither merge identical chains nor drop any: the count of FMAs executed is
** the count written. (An earlier version kept only 6 of its 12 chains live
** this way; the compiler merged the other 6 with them, and the figure it
** printed was twice the work done.)
**
** Check against the known figure: flop/cycle/core = 2 x FMA units x lanes,
** i.e. 32 for AVX2 and 64 for AVX-512 on a core with two FMA units (16 and
** 32 with one). fma_clock_ghz() gives the cycles.
** Built as the `fma_peak` tool (with FMA_PEAK_MAIN) and linked into the
** matmul benchmark.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "fma_peak.h"

#define ITERS 20000000L

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
/* 10 chains of 8-float FMAs: 10 + 2 operands of the 16 ymm registers. */
__attribute__((target("avx2,fma")))
static void *chains_avx2(void *out)
{
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 c0 = _mm256_set1_ps(0.0f), c1 = _mm256_set1_ps(0.1f), c2 = _mm256_set1_ps(0.2f);
    __m256 c3 = _mm256_set1_ps(0.3f), c4 = _mm256_set1_ps(0.4f), c5 = _mm256_set1_ps(0.5f);
    __m256 c6 = _mm256_set1_ps(0.6f), c7 = _mm256_set1_ps(0.7f), c8 = _mm256_set1_ps(0.8f);
    __m256 c9 = _mm256_set1_ps(0.9f);
    for (long i = 0; i < ITERS; i++) {
        c0 = _mm256_fmadd_ps(a, c0, b); c1 = _mm256_fmadd_ps(a, c1, b);
        c2 = _mm256_fmadd_ps(a, c2, b); c3 = _mm256_fmadd_ps(a, c3, b);
        c4 = _mm256_fmadd_ps(a, c4, b); c5 = _mm256_fmadd_ps(a, c5, b);
        c6 = _mm256_fmadd_ps(a, c6, b); c7 = _mm256_fmadd_ps(a, c7, b);
        c8 = _mm256_fmadd_ps(a, c8, b); c9 = _mm256_fmadd_ps(a, c9, b);
        __asm__ volatile("" : "+x"(c0), "+x"(c1), "+x"(c2), "+x"(c3), "+x"(c4), "+x"(c5), "+x"(c6),
                         "+x"(c7), "+x"(c8), "+x"(c9));
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), _mm256_add_ps(c2, c3)),
                             _mm256_add_ps(_mm256_add_ps(c4, c5), _mm256_add_ps(c6, c7)));
    s = _mm256_add_ps(s, _mm256_add_ps(c8, c9));
    *(float *)out = _mm256_cvtss_f32(s);
    return NULL;
}
#define AVX2_FLOPS_PER_ITER (10.0 * 16.0)

/* 16 chains of 16-float FMAs, in 16 of the 32 zmm registers. */
__attribute__((target("avx512f")))
static void *chains_avx512(void *out)
{
    __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    __m512 c[16];
    for (int k = 0; k < 16; k++)
        c[k] = _mm512_set1_ps(0.05f * (float)k);
    __m512 c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3], c4 = c[4], c5 = c[5], c6 = c[6], c7 = c[7];
    __m512 c8 = c[8], c9 = c[9], c10 = c[10], c11 = c[11], c12 = c[12], c13 = c[13], c14 = c[14], c15 = c[15];
    for (long i = 0; i < ITERS; i++) {
        c0 = _mm512_fmadd_ps(a, c0, b); c1 = _mm512_fmadd_ps(a, c1, b);
        c2 = _mm512_fmadd_ps(a, c2, b); c3 = _mm512_fmadd_ps(a, c3, b);
        c4 = _mm512_fmadd_ps(a, c4, b); c5 = _mm512_fmadd_ps(a, c5, b);
        c6 = _mm512_fmadd_ps(a, c6, b); c7 = _mm512_fmadd_ps(a, c7, b);
        c8 = _mm512_fmadd_ps(a, c8, b); c9 = _mm512_fmadd_ps(a, c9, b);
        c10 = _mm512_fmadd_ps(a, c10, b); c11 = _mm512_fmadd_ps(a, c11, b);
        c12 = _mm512_fmadd_ps(a, c12, b); c13 = _mm512_fmadd_ps(a, c13, b);
        c14 = _mm512_fmadd_ps(a, c14, b); c15 = _mm512_fmadd_ps(a, c15, b);
        __asm__ volatile("" : "+v"(c0), "+v"(c1), "+v"(c2), "+v"(c3), "+v"(c4), "+v"(c5), "+v"(c6), "+v"(c7));
        __asm__ volatile("" : "+v"(c8), "+v"(c9), "+v"(c10), "+v"(c11), "+v"(c12), "+v"(c13), "+v"(c14),
                         "+v"(c15));
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c0, c1), _mm512_add_ps(c2, c3)),
                             _mm512_add_ps(_mm512_add_ps(c4, c5), _mm512_add_ps(c6, c7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(c8, c9), _mm512_add_ps(c10, c11)),
                                       _mm512_add_ps(_mm512_add_ps(c12, c13), _mm512_add_ps(c14, c15))));
    *(float *)out = _mm512_reduce_add_ps(s);
    return NULL;
}
#define AVX512_FLOPS_PER_ITER (16.0 * 32.0)

double fma_peak_gflops_isa(fma_isa isa, int threads)
{
    void *(*fn)(void *);
    double per_iter;

    __builtin_cpu_init();
    if (threads < 1)
        return 0.0;
    if (isa == FMA_ISA_AVX2) {
        if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
            return 0.0;
        fn = chains_avx2;
        per_iter = AVX2_FLOPS_PER_ITER;
    } else {
        if (!__builtin_cpu_supports("avx512f"))
            return 0.0;
        fn = chains_avx512;
        per_iter = AVX512_FLOPS_PER_ITER;
    }
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
        if (pthread_create(&tid[i], NULL, fn, &sink[i]) == 0)
            started++;
        else
            break;
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    double dt = now() - t0;
    free(tid);
    free(sink);
    return (double)started * (double)ITERS * per_iter / dt * 1e-9;
}

double fma_clock_ghz(void)
{
    const long n = 400000000L;
    uint64_t x = 0;
    double t0 = now();
    /* 8 dependent adds per iteration, plus the loop's own add and branch on
    ** other ports: the chain is 8 cycles per iteration. */
    for (long i = 0; i < n / 8; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    double dt = now() - t0;
    return x == (uint64_t)(n / 8) * 8 ? (double)n / dt * 1e-9 : 0.0;
}
#else
double fma_peak_gflops_isa(fma_isa isa, int threads)
{
    (void)isa;
    (void)threads;
    return 0.0;
}

double fma_clock_ghz(void) { return 0.0; }
#endif

double fma_peak_gflops(int threads) { return fma_peak_gflops_isa(FMA_ISA_AVX2, threads); }

#ifdef FMA_PEAK_MAIN
#include <unistd.h>

int main(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    double ghz = fma_clock_ghz();
    static const char *const names[] = { "AVX2+FMA", "AVX-512F" };
    static const double expect[] = { 32.0, 64.0 };   /* flop/cycle/core with two FMA units */

    printf("clock (dependent integer adds, 1 thread): %.2f GHz\n", ghz);
    for (int isa = 0; isa < 2; isa++) {
        double one = fma_peak_gflops_isa((fma_isa)isa, 1);
        if (one == 0.0) {
            printf("%-9s f32 FMA peak: not available on this CPU\n", names[isa]);
            continue;
        }
        double all = fma_peak_gflops_isa((fma_isa)isa, (int)cpus);
        printf("%-9s f32 FMA peak, 1 thread : %8.1f GFLOP/s", names[isa], one);
        if (ghz > 0)
            printf("  = %.1f flop/cycle (%.0f with two FMA units)", one / ghz, expect[isa]);
        printf("\n%-9s f32 FMA peak, %ld threads: %8.1f GFLOP/s\n", names[isa], cpus, all);
    }
    return 0;
}
#endif
