/*
** cpu.h - which vector code a pack may run, shared by every pack.
**
** Contract: pk_cpu_avx2(extra) is 1 when the CPU has AVX2 plus the features
** named in `extra` (PK_CPU_FMA, PK_CPU_F16C) and LOOM_CPU_MAX_ISA does not
** cap the ISA below avx2 (unset, empty, or avx2* / avx512* leave it
** uncapped; sse4, scalar and anything else cap it). 0 on other
** architectures. Packs call it once, at init or first use.
*/
#ifndef LOOM_PACK_CPU_H
#define LOOM_PACK_CPU_H

enum { PK_CPU_FMA = 1, PK_CPU_F16C = 2 };

int pk_cpu_avx2(int extra);

#endif
