/* SPDX-License-Identifier: BSD-3-Clause */
/*
** value.h - the value module of the rl pack: the estimators of
** torchrl.objectives.value.functional (torchrl 0.14), with its names,
** argument names and semantics:
**   rl.generalized_advantage_estimate   GAE -> advantage, value_target
**   rl.td0_return_estimate              one-step bootstrapped return
**   rl.td_lambda_return_estimate        TD(lambda) return
**   rl.vtrace_advantage_estimate        V-trace (IMPALA) -> advantage, value_target
**
** Layout: every tensor is [*B, T, *F] with time on `time_dim` (default -2,
** torchrl's); the estimators see it as [outer, T, inner] chains, one per
** (outer, inner) pair, run backwards in time. Several trajectories may be
** concatenated along time: `done` (terminated OR truncated) cuts the
** lambda/trace chain after a step, `terminated` alone drops the bootstrap
** value V(s_{t+1}) (a truncated step still bootstraps). done and
** terminated are bool tensors of the values' shape; terminated defaults
** to done, as in torchrl.
**
** Scalar coefficients are rounded as torchrl rounds them: a Python float
** times an int mask is a float32 tensor, so in GAE, TD(0) and V-trace
** gamma (and gamma*lmbda, rho_thresh, c_thresh) enter the f64 arithmetic
** as float32 values; TD(lambda) fills gamma and lmbda at the values' dtype
** (torch.full_like). The kernels keep torch's operation order, one
** rounding per operation and no fused multiply-add, so f32 results are
** torch's to the bit (V-trace's exp aside).
*/
#ifndef LOOM_RL_VALUE_H
#define LOOM_RL_VALUE_H

#include <stdint.h>

#include "dtype_traits.h"
#include "pack.h"

#define RL_VALUE_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
#define RL_FLAG_DTYPES LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL)
#define RL_VALUE_KERNEL_DTYPES (RL_VALUE_DTYPES | RL_FLAG_DTYPES)

#define RL_TIME_DIM_ATTR(A, op) \
    A(op, time_dim, INT, LOOM_DEFAULT_INT(-2), 0, "the time dimension (negative: from the end)", )

#define RL_GAE_ATTRS(A, op)                                                                              \
    A(op, gamma, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "the discount", )     \
    A(op, lmbda, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "the GAE lambda", )   \
    RL_TIME_DIM_ATTR(A, op)
PK_ATTR_ENUM(rl_gae, RL_GAE_ATTRS);

#define RL_TD0_ATTRS(A, op) \
    A(op, gamma, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "the discount", )
PK_ATTR_ENUM(rl_td0, RL_TD0_ATTRS);

#define RL_TDL_ATTRS(A, op)                                                                              \
    A(op, gamma, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "the discount", )     \
    A(op, lmbda, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "the TD lambda", )    \
    RL_TIME_DIM_ATTR(A, op)
PK_ATTR_ENUM(rl_tdl, RL_TDL_ATTRS);

#define RL_VTRACE_ATTRS(A, op)                                                                           \
    A(op, gamma, FLOAT, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED | LOOM_ATTR_FINITE, "the discount", )     \
    A(op, rho_thresh, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE,                                  \
      "clip of the importance weights rho in the TD errors", )                                          \
    A(op, c_thresh, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE,                                    \
      "clip of the importance weights c in the trace", )                                                \
    RL_TIME_DIM_ATTR(A, op)
PK_ATTR_ENUM(rl_vtrace, RL_VTRACE_ATTRS);

#define RL_VALUE_OPS(X) X(rl_gae_schema) X(rl_td0_schema) X(rl_tdl_schema) X(rl_vtrace_schema)
PK_OPS_DECLARE(rl_value_ops, RL_VALUE_OPS);

/* The time layout of one call: `chains` = outer * inner independent chains
** of T steps; element (o, t, i) is at (o * T + t) * inner + i. */
typedef struct rl_time_layout {
    int64_t outer, T, inner;
} rl_time_layout;

/* The checks every estimator shares (value_checks.c). The inputs
** call->inputs[0 .. n_values) are the float tensors and [n_values ..
** n_values + n_flags) the bool flags (an absent optional flag is skipped):
** all compact, of one shape, the floats of one dtype. time_dim < 0 (or
** `has_time` 0, for the elementwise TD(0)) resolves the layout. Then it
** allocates the call's n_out outputs with the values' dtype and shape. */
loom_status rl_value_check(loom_call *call, int n_values, int n_flags, int has_time, int64_t time_dim, int n_out,
                           rl_time_layout *lay, loom_tensor **out);

/* The GAE coefficients, as torchrl rounds them (see the header comment). */
typedef struct rl_gae_job {
    const void *state_value, *next_state_value, *reward;
    const uint8_t *done, *terminated;
    void *advantage, *value_target;
    rl_time_layout lay;
    float gamma, gamma_lmbda;
} rl_gae_job;

/* GAE over the blocks [begin, end) of RL_GAE_BLOCK_* rows (chains) of
** job->lay, for inner == 1 only: each block's chains side by side in one
** vector, time steps transposed in registers; a last, partial block goes
** through the portable body (value_gae_avx2.c). The same bits as it. */
enum { RL_GAE_BLOCK_F32 = 8, RL_GAE_BLOCK_F64 = 4 };
void rl_gae_blocks_avx2_f32(void *user, int64_t begin, int64_t end, int32_t thread_index);
void rl_gae_blocks_avx2_f64(void *user, int64_t begin, int64_t end, int32_t thread_index);
/* The portable bodies (value_cpu.c): chains [begin, end) of outer rows. */
void rl_gae_rows_f32(void *user, int64_t begin, int64_t end, int32_t thread_index);
void rl_gae_rows_f64(void *user, int64_t begin, int64_t end, int32_t thread_index);

extern const pk_module rl_value_cpu;

#endif /* LOOM_RL_VALUE_H */
