/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu.c - the CPU features loom may use: cpuid (and the OS's XSAVE state,
** without which AVX and AVX-512 registers are not usable) read once, capped
** by LOOM_CPU_MAX_ISA. The one place in loom that decides an ISA: packs get
** the result through loom_exec_ctx.cpu_features and host->cpu_features().
*/
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "internal.h"

static atomic_ullong features;      /* LOOM_CPU_* in force; set by loom__cpu_init */

#if defined(__x86_64__) || defined(__i386__)
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

/* Everything the hardware and the OS allow, uncapped. */
static uint64_t detect(void)
{
    unsigned a, b, c, d, max;
    uint64_t f = 0, xcr0 = 0;

    if (!__get_cpuid(0, &max, &b, &c, &d) || max < 1)
        return 0;
    __cpuid(1, a, b, c, d);
    bool osxsave = (c >> 27) & 1;
    if ((c >> 20) & 1)
        f |= LOOM_CPU_SSE42;
    if (osxsave)
        xcr0 = xgetbv0();
    bool ymm = osxsave && (xcr0 & 0x6) == 0x6;                 /* XMM and YMM state */
    bool zmm = ymm && (xcr0 & 0xE0) == 0xE0;                   /* opmask, ZMM_Hi256, Hi16_ZMM */
    bool amx = (xcr0 & (UINT64_C(3) << 17)) == (UINT64_C(3) << 17);   /* XTILECFG, XTILEDATA */
    if (ymm && ((c >> 28) & 1))
        f |= LOOM_CPU_AVX;
    if (ymm && ((c >> 12) & 1))
        f |= LOOM_CPU_FMA;
    if (ymm && ((c >> 29) & 1))
        f |= LOOM_CPU_F16C;
    if (max >= 7) {
        unsigned a1 = 0, b1, c1, d1;
        __cpuid_count(7, 0, a, b, c, d);
        if (a >= 1)
            __cpuid_count(7, 1, a1, b1, c1, d1);
        if (ymm && ((b >> 5) & 1))
            f |= LOOM_CPU_AVX2;
        if (zmm && ((b >> 16) & 1)) {
            f |= LOOM_CPU_AVX512F;
            if ((b >> 30) & 1) f |= LOOM_CPU_AVX512BW;
            if ((b >> 31) & 1) f |= LOOM_CPU_AVX512VL;
            if ((b >> 17) & 1) f |= LOOM_CPU_AVX512DQ;
            if ((c >> 11) & 1) f |= LOOM_CPU_AVX512VNNI;
            if ((d >> 23) & 1) f |= LOOM_CPU_AVX512FP16;
            if ((a1 >> 5) & 1) f |= LOOM_CPU_AVX512BF16;
        }
        if (amx && ((d >> 24) & 1)) {
            f |= LOOM_CPU_AMX_TILE;
            if ((d >> 22) & 1) f |= LOOM_CPU_AMX_BF16;
            if ((d >> 25) & 1) f |= LOOM_CPU_AMX_INT8;
        }
    }
    return f;
}
#else
static uint64_t detect(void) { return 0; }
#endif

uint64_t loom__cpu_detect(void) { return detect(); }

/* The LOOM_CPU_LEVEL_* mask of a LOOM_CPU_MAX_ISA value; false if unknown. */
bool loom__cpu_level(const char *name, uint64_t *mask)
{
    static const struct { const char *name; uint64_t mask; } levels[] = {
        { "scalar", LOOM_CPU_LEVEL_SCALAR }, { "sse4", LOOM_CPU_LEVEL_SSE4 },
        { "avx2", LOOM_CPU_LEVEL_AVX2 },     { "avx512", LOOM_CPU_LEVEL_AVX512 },
        { "amx", LOOM_CPU_LEVEL_AMX },       { "native", ~UINT64_C(0) },
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strcasecmp(name, levels[i].name) == 0) {
            *mask = levels[i].mask;
            return true;
        }
    return false;
}

void loom__cpu_init(const char *max_isa)
{
    uint64_t cap = ~UINT64_C(0);
    if (max_isa != NULL)
        loom__cpu_level(max_isa, &cap);   /* config.c validated it */
    atomic_store(&features, detect() & cap);
}

uint64_t loom__cpu_features(void)
{
    return atomic_load_explicit(&features, memory_order_relaxed);
}

LOOM_API uint64_t loom_cpu_features(void)
{
    return loom__cpu_features();
}

LOOM_API const char *loom_cpu_features_text(uint64_t f, char *buf, size_t size)
{
    static const char *const names[] = {
        "sse4.2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq",
        "avx512vnni", "avx512bf16", "avx512fp16", "amx-tile", "amx-bf16", "amx-int8",
    };
    size_t used = 0;

    if (buf == NULL || size == 0)
        return "";
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((f >> i) & 1) {
            int n = snprintf(buf + used, size - used, "%s%s", used ? " " : "", names[i]);
            if (n < 0 || (size_t)n >= size - used)
                break;
            used += (size_t)n;
        }
    if (used == 0)
        snprintf(buf, size, "scalar");
    return buf;
}
