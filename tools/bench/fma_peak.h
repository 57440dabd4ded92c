/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fma_peak.h - this machine's measured single-precision FMA peak, the
** ceiling that GEMM throughput is compared with, per vector ISA.
*/
#ifndef LOOM_BENCH_FMA_PEAK_H
#define LOOM_BENCH_FMA_PEAK_H

typedef enum fma_isa { FMA_ISA_AVX2 = 0, FMA_ISA_AVX512 = 1 } fma_isa;

/* GFLOP/s of independent FMA chains on `threads` threads with the given
** ISA (an FMA on L floats counts 2L flops); 0 when the CPU lacks it. */
double fma_peak_gflops_isa(fma_isa isa, int threads);

/* The AVX2 figure: fma_peak_gflops_isa(FMA_ISA_AVX2, threads). */
double fma_peak_gflops(int threads);

/* The core clock in GHz while one thread runs a chain of dependent integer
** adds (one per cycle on every x86 core since the Pentium Pro), or 0. */
double fma_clock_ghz(void);

#endif
