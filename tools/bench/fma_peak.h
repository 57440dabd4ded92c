/*
** fma_peak.h - this machine's measured single-precision FMA peak, the
** ceiling that GEMM throughput is compared with.
*/
#ifndef LOOM_BENCH_FMA_PEAK_H
#define LOOM_BENCH_FMA_PEAK_H

/* GFLOP/s of independent AVX2 FMA chains on `threads` threads (an FMA on 8
** floats counts 16 flops); 0 when the CPU lacks AVX2+FMA. */
double fma_peak_gflops(int threads);

#endif
