/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm.h - the one GEMM of every pack (linked in from pack_common):
**
**   C = epilogue(alpha * op(A) * op(B) + beta * C), for each batch entry,
**   epilogue(v) = act(v + bias) + residual
**
** A is m x k, B is k x n, both read through element strides (rs, cs), so a
** transpose is a swap of strides (pk_gemm_matrix) and any view needs no
** copy; C is m x n with row stride ldc and unit column stride.
**
** Types: f32 and f64 compute in their own type; bf16 and f16 inputs (A and
** B, in any mix with f32) are widened while packed and accumulate in f32.
** C, alpha/beta, bias and residual are then f32 (f64 for f64 inputs).
** beta == 0 never reads C (it may hold NaN). bias is per column (bias[j],
** as nn.Linear adds it) or per row (bias[i], a convolution's channel). act
** is torch's: relu, gelu with approximate='tanh' or 'none' (erf), silu.
**
** Threads: pk_gemm runs on ctx->host->parallel_for within ctx->n_threads
** and takes its packing buffers from ctx's scratch, so it is called from a
** kernel's own thread (not from inside a parallel_for task: scratch is per
** call). Inside a task use pk_gemm_serial with a workspace the caller took
** from scratch before the parallel_for (pk_gemm_serial_workspace bytes per
** thread, for the largest shape it will run).
**
** Micro-kernels: AVX-512F, AVX2+FMA or portable C, picked from the core's
** CPU features (pk_cpu_features(), capped by LOOM_CPU_MAX_ISA) at first use.
** A packed operand (pk_gemm_pack) skips the packing of a matrix used many
** times (weights); it is tied to the micro-kernel in use when it was made.
*/
#ifndef LOOM_PACK_GEMM_H
#define LOOM_PACK_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "loom/plugin.h"

typedef enum pk_gemm_act {
    PK_GEMM_ACT_NONE = 0,
    PK_GEMM_ACT_RELU,
    PK_GEMM_ACT_GELU_TANH,          /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    PK_GEMM_ACT_GELU_ERF,           /* 0.5 x (1 + erf(x / sqrt(2))) */
    PK_GEMM_ACT_SILU,               /* x / (1 + exp(-x)) */
} pk_gemm_act;

typedef enum pk_gemm_bias {
    PK_GEMM_BIAS_NONE = 0,
    PK_GEMM_BIAS_COL,               /* bias[j], n values */
    PK_GEMM_BIAS_ROW,               /* bias[i], m values */
} pk_gemm_bias;

/* An operand packed once for the micro-kernel (pk_gemm_pack); the caller
** owns `data`. */
typedef struct pk_gemm_packed {
    int which;                      /* 0: an A (m x k), 1: a B (k x n) */
    int width;                      /* MR or NR it was packed for */
    int64_t mn, k;                  /* rows of A / columns of B, depth */
    loom_dtype compute;             /* F32 or F64 */
    const void *data;
} pk_gemm_packed;

typedef struct pk_gemm_operand {
    const void *data;
    loom_dtype dtype;               /* F32, F64, BF16 or F16 */
    int64_t rs, cs;                 /* element strides of a row / a column of op(X) */
    int64_t bs;                     /* element stride between batch entries */
    const pk_gemm_packed *packed;   /* when not NULL, data/dtype/strides are unused */
} pk_gemm_operand;

typedef struct pk_gemm_args {
    int64_t m, n, k;
    int64_t batch;                  /* >= 1 */
    pk_gemm_operand a, b;
    void *c;                        /* f32, or f64 for f64 inputs */
    int64_t ldc, c_bs;
    double alpha, beta;
    pk_gemm_bias bias_kind;
    const void *bias;               /* C's dtype */
    int64_t bias_bs;
    pk_gemm_act act;
    const void *residual;           /* C's dtype, m x n with row stride ldr */
    int64_t ldr, r_bs;
} pk_gemm_args;

/* alpha 1, beta 0, one batch entry, nothing else. */
#define PK_GEMM_ARGS_INIT { .batch = 1, .alpha = 1.0, .beta = 0.0 }

/* A row-major matrix with leading dimension ld, transposed or not. */
pk_gemm_operand pk_gemm_matrix(const void *data, loom_dtype dtype, int64_t ld, int trans);

/* Run the GEMM threaded on ctx (ctx->host: parallel_for, scratch, fail).
** LOOM_EINVAL for a dtype mix it does not take or a packed operand that does
** not match; LOOM_ENOMEM when scratch fails. */
loom_status pk_gemm(loom_exec_ctx *ctx, const pk_gemm_args *g);

/* The same on the calling thread, without host calls: work is 64-byte
** aligned and holds at least pk_gemm_serial_workspace(g) bytes. */
size_t pk_gemm_serial_workspace(const pk_gemm_args *g);
loom_status pk_gemm_serial(const pk_gemm_args *g, void *work, size_t work_bytes);

/* Pack x (an m x k A when which == 0, a k x n B when which == 1; mn is m
** or n) for the current micro-kernel into dst (64-byte aligned,
** pk_gemm_pack_bytes), and describe it in *out. */
size_t pk_gemm_pack_bytes(int which, loom_dtype compute, int64_t mn, int64_t k);
void pk_gemm_pack(pk_gemm_packed *out, void *dst, int which, const pk_gemm_operand *x, int64_t mn, int64_t k);

/* The micro-tile of the kernel in use for compute dtype F32 / F64. */
int pk_gemm_mr(loom_dtype compute);
int pk_gemm_nr(loom_dtype compute);

/* Which micro-kernels run: the best the CPU features allow, or the one a
** test forced. pk_gemm_force_isa returns 0 when the features lack it. */
typedef enum pk_gemm_isa { PK_GEMM_ISA_AUTO = -1, PK_GEMM_ISA_SCALAR = 0, PK_GEMM_ISA_AVX2 = 1,
                           PK_GEMM_ISA_AVX512 = 2 } pk_gemm_isa;
pk_gemm_isa pk_gemm_current_isa(void);
const char *pk_gemm_isa_name(void);     /* "avx512", "avx2-fma", "scalar" */
int pk_gemm_force_isa(pk_gemm_isa isa);

#endif
