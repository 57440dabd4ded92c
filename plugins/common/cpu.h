/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cpu.h - which vector code a pack may run, shared by every pack.
**
** Contract: a pack calls pk_cpu_init(host) first thing in its init. The
** features then come from the core (host->cpu_features(), ABI 1.1): cpuid
** read once and capped by LOOM_CPU_MAX_ISA, so the core, `loom doctor` and
** every pack agree on the ISA. A pack never reads the environment. Under a
** 1.0 core (no cpu_features) the features are the CPU's own, uncapped.
** pk_cpu_avx2(extra) is 1 when AVX2 is allowed plus the features named in
** `extra` (PK_CPU_FMA, PK_CPU_F16C); pk_cpu_features() gives every
** LOOM_CPU_* bit, for AVX-512 and AMX paths.
*/
#ifndef LOOM_PACK_CPU_H
#define LOOM_PACK_CPU_H

#include <stdint.h>

#include "loom/plugin.h"

enum { PK_CPU_FMA = 1, PK_CPU_F16C = 2 };

void pk_cpu_init(const loom_host_api *host);
uint64_t pk_cpu_features(void);
int pk_cpu_avx2(int extra);

#endif
