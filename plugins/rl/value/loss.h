/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loss.h - the loss module of the rl pack: the terms of torchrl's
** ClipPPOLoss, KLPENPPOLoss and A2CLoss (torchrl 0.14.1, reduction
** "mean") computed from what the networks gave, with their gradients:
**   rl.clip_ppo_loss   clipped surrogate, critic and entropy terms
**   rl.kl_ppo_loss     KL-penalised surrogate (and beta's adaptive update)
**   rl.a2c_loss        advantage actor-critic
**
** Inputs, for a batch of N samples (torchrl's layout): log_prob [N], the
** current policy's log-probability of the actions taken; sample_log_prob
** [N], the behaviour policy's (PPO only); advantage, state_value and
** value_target [N, 1]; entropy [N], the distribution's entropy (what
** dist.entropy() gives); kl [N] (kl_ppo_loss), KL(old || new) per sample.
**
** Outputs: the scalar terms under torchrl's names, then the gradients of
** loss_objective + loss_critic + loss_entropy with respect to log_prob,
** state_value, entropy (and kl), what torch autograd gives through the
** same graph: through min(gain1, gain2) to the first on a tie, through the
** clamp of the log-ratio only inside its bounds (inclusive). The gradient
** in kl is torch's too: the updated beta over N (loss_cpu_tmpl.h says why).
**
** Coefficients are torchrl's buffers: float32 scalars (torch.as_tensor of
** a Python float), so clip_epsilon, entropy_coeff, critic_coeff and beta
** enter f64 arithmetic rounded to float32. The clip bounds are
** log1p(-clip_epsilon) and log1p(clip_epsilon) in float32.
*/
#ifndef LOOM_RL_LOSS_H
#define LOOM_RL_LOSS_H

#include "dtype_traits.h"
#include "pack.h"

#define RL_LOSS_DTYPES (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))

/* The attributes every loss shares, in this order at the head of each list. */
#define RL_LOSS_COMMON_ATTRS(A, op)                                                                      \
    A(op, entropy_coeff, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE,                              \
      "loss_entropy = -entropy_coeff * mean(entropy)", )                                                \
    A(op, critic_coeff, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE,                                \
      "loss_critic = critic_coeff * mean(distance(value_target, state_value))", )                       \
    A(op, loss_critic_type, STRING, LOOM_DEFAULT_STRING("smooth_l1"), 0,                                 \
      "the distance: l1, l2 or smooth_l1 (beta 1)", )

#define RL_PPO_NORM_ATTR(A, op)                                                                          \
    A(op, normalize_advantage, BOOL, LOOM_DEFAULT_BOOL(0), 0,                                            \
      "standardise the advantage first: (A - mean) / max(std, 1e-6), unbiased std, when N > 1", )

#define RL_CLIP_PPO_ATTRS(A, op)                                                                         \
    RL_LOSS_COMMON_ATTRS(A, op)                                                                          \
    RL_PPO_NORM_ATTR(A, op)                                                                              \
    A(op, clip_epsilon, FLOAT, LOOM_DEFAULT_FLOAT(0.2), LOOM_ATTR_FINITE | LOOM_ATTR_NONNEG,             \
      "the ratio is clipped to [1 - clip_epsilon, 1 + clip_epsilon] (in log space)", )
PK_ATTR_ENUM(rl_clip_ppo, RL_CLIP_PPO_ATTRS);

#define RL_KL_PPO_ATTRS(A, op)                                                                           \
    RL_LOSS_COMMON_ATTRS(A, op)                                                                          \
    RL_PPO_NORM_ATTR(A, op)                                                                              \
    A(op, beta, FLOAT, LOOM_DEFAULT_FLOAT(1.0), LOOM_ATTR_FINITE, "the KL penalty's weight", )          \
    A(op, dtarg, FLOAT, LOOM_DEFAULT_FLOAT(0.01), LOOM_ATTR_FINITE, "the target KL", )                  \
    A(op, increment, FLOAT, LOOM_DEFAULT_FLOAT(2.0), LOOM_ATTR_FINITE,                                   \
      "beta *= increment when mean(kl) > 1.5 dtarg (>= 1)", )                                           \
    A(op, decrement, FLOAT, LOOM_DEFAULT_FLOAT(0.5), LOOM_ATTR_FINITE,                                   \
      "beta *= decrement when mean(kl) < dtarg / 1.5 (<= 1)", )
PK_ATTR_ENUM(rl_kl_ppo, RL_KL_PPO_ATTRS);

#define RL_A2C_ATTRS(A, op) RL_LOSS_COMMON_ATTRS(A, op)
PK_ATTR_ENUM(rl_a2c, RL_A2C_ATTRS);

#define RL_LOSS_OPS(X) X(rl_clip_ppo_schema) X(rl_kl_ppo_schema) X(rl_a2c_schema)
PK_OPS_DECLARE(rl_loss_ops, RL_LOSS_OPS);

extern const pk_module rl_loss_cpu;

#endif /* LOOM_RL_LOSS_H */
