/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm.c - the core pack's GEMM: plugins/common/gemm (gemm.h), the one
** GEMM of every pack, behind the core_gemm entry of core_pack.h.
**
** The micro-kernel is the one the common GEMM picks from the core's CPU
** features (pk_cpu_features(), capped by LOOM_CPU_MAX_ISA): AVX-512F,
** AVX2+FMA or portable C. core_cpu_isa says whether a vector kernel runs;
** the kernel's implementation name (cpu_pack.c) names the one in use.
*/
#include "core_pack.h"
#include "gemm.h"

core_isa core_cpu_isa = CORE_ISA_SCALAR;

void core_cpu_isa_init(void)
{
    core_cpu_isa = pk_gemm_current_isa() >= PK_GEMM_ISA_AVX2 ? CORE_ISA_AVX2 : CORE_ISA_SCALAR;
}

const char *core_cpu_isa_name(void) { return pk_gemm_isa_name(); }

loom_status core_gemm(loom_exec_ctx *ctx, loom_dtype elem, int64_t m, int64_t n, int64_t k,
                      const void *a, int64_t a_rs, int64_t a_cs,
                      const void *b, int64_t b_rs, int64_t b_cs, void *c)
{
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = (pk_gemm_operand){ .data = a, .dtype = elem, .rs = a_rs, .cs = a_cs };
    g.b = (pk_gemm_operand){ .data = b, .dtype = elem, .rs = b_rs, .cs = b_cs };
    g.c = c;
    g.ldc = n;
    return pk_gemm(ctx, &g);
}
