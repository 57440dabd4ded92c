/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu.c - see cpu.h.
*/
#include "cpu.h"

static uint64_t features;
static int initialised;

/* The CPU's own features, for a core that does not hand them out (1.0). */
static uint64_t native(void)
{
    uint64_t f = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) f |= LOOM_CPU_SSE42;
    if (__builtin_cpu_supports("avx")) f |= LOOM_CPU_AVX;
    if (__builtin_cpu_supports("avx2")) f |= LOOM_CPU_AVX2;
    if (__builtin_cpu_supports("fma")) f |= LOOM_CPU_FMA;
    if (__builtin_cpu_supports("avx512f")) f |= LOOM_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw")) f |= LOOM_CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512vl")) f |= LOOM_CPU_AVX512VL;
    if (__builtin_cpu_supports("avx512dq")) f |= LOOM_CPU_AVX512DQ;
    /* f16c has no __builtin_cpu_supports name in every compiler: AVX2 CPUs have it */
    if (f & LOOM_CPU_AVX2) f |= LOOM_CPU_F16C;
#endif
    return f;
}

void pk_cpu_init(const loom_host_api *host)
{
    features = host != NULL && LOOM_HAS_MEMBER(host, loom_host_api, cpu_features) && host->cpu_features != NULL
             ? host->cpu_features() : native();
    initialised = 1;
}

uint64_t pk_cpu_features(void)
{
    if (!initialised)
        pk_cpu_init(NULL);
    return features;
}

int pk_cpu_avx2(int extra)
{
    uint64_t f = pk_cpu_features();
    return (f & LOOM_CPU_AVX2) && (!(extra & PK_CPU_FMA) || (f & LOOM_CPU_FMA))
           && (!(extra & PK_CPU_F16C) || (f & LOOM_CPU_F16C));
}
