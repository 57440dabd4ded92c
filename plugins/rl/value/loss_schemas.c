/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loss_schemas.c - the definitions of the rl losses (loss.h): torchrl's
** names for the inputs (the tensordict keys the loss reads) and for the
** outputs (the keys of the tensordict it returns), then the gradients.
*/
#include "loss.h"

#define IN(nm, d) { .name = nm, .dtypes = RL_LOSS_DTYPES, .ndim = 1, .doc = d }
#define IN_AS0(nm, nd, d) \
    { .name = nm, .dtypes = RL_LOSS_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = (nd), .doc = d }
#define OUT(nm, nd, d) \
    { .name = nm, .dtypes = RL_LOSS_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = (nd), .doc = d }

#define LOG_PROB IN("log_prob", "[N] log-probability of the actions under the current policy, f32 or f64")
#define SAMPLE_LOG_PROB IN_AS0("sample_log_prob", 1, "[N] their log-probability when they were sampled")
#define ADVANTAGE IN_AS0("advantage", 2, "[N, 1] the advantage estimate")
#define STATE_VALUE IN_AS0("state_value", 2, "[N, 1] the critic's V(s)")
#define VALUE_TARGET IN_AS0("value_target", 2, "[N, 1] the critic's target return")
#define ENTROPY IN_AS0("entropy", 1, "[N] the policy distribution's entropy")

#define COMMON_OUTPUTS                                                                           \
    OUT("loss_objective", 0, "mean of -surrogate"),                                              \
    OUT("loss_critic", 0, "critic_coeff * mean(distance(value_target, state_value))"),          \
    OUT("loss_entropy", 0, "mean(-entropy_coeff * entropy)"),                                     \
    OUT("entropy", 0, "mean(entropy), for logging")
#define GRAD_OUTPUTS                                                                             \
    OUT("grad_log_prob", 1, "[N] d(loss_objective + loss_critic + loss_entropy) / d log_prob"),  \
    OUT("grad_state_value", 2, "[N, 1] d loss / d state_value"),                                  \
    OUT("grad_entropy", 1, "[N] d loss / d entropy")

static const char *const critic_types[] = { "l1", "l2", "smooth_l1", NULL };

static void rl_loss_cost(const loom_call *call, double *flops, double *bytes)
{
    const double n = (double)loom_numel(call->inputs[0]);
    *flops = 20.0 * n;
    *bytes = n * (double)(call->n_inputs + 3) * (double)pk_host->dtype_size(loom_tensor_dtype_of(call->inputs[0]));
}

/* ---------------------------------------------------------------- ClipPPO */

static const loom_arg_def clip_ppo_inputs[] = { LOG_PROB, SAMPLE_LOG_PROB, ADVANTAGE, STATE_VALUE, VALUE_TARGET,
                                                ENTROPY };
static const loom_arg_def clip_ppo_outputs[] = {
    COMMON_OUTPUTS,
    OUT("clip_fraction", 0, "the share of samples whose log-ratio was clipped"),
    OUT("kl_approx", 0, "mean(sample_log_prob - log_prob), for logging"),
    OUT("ESS", 0, "effective sample size of the ratios over N, for logging"),
    GRAD_OUTPUTS,
};
PK_ATTR_TABLE(rl_clip_ppo, RL_CLIP_PPO_ATTRS);
static const loom_attr_choices clip_ppo_choices[] = { { PK_ATTR(rl_clip_ppo, loss_critic_type), critic_types } };
PK_SCHEMA(rl_clip_ppo_schema, "rl.clip_ppo_loss", 1,
          "torchrl ClipPPOLoss: -mean(min(r A, clip(r, 1-eps, 1+eps) A)), critic and entropy terms and gradients",
          PK_INPUTS(clip_ppo_inputs), PK_OUTPUTS(clip_ppo_outputs), PK_ATTRS(rl_clip_ppo_attrs),
          PK_CHOICES(clip_ppo_choices), .cost = rl_loss_cost);

/* ----------------------------------------------------------------- KLPPO */

static const loom_arg_def kl_ppo_inputs[] = {
    LOG_PROB, SAMPLE_LOG_PROB, ADVANTAGE, STATE_VALUE, VALUE_TARGET, ENTROPY,
    IN_AS0("kl", 1, "[N] KL(sampling policy || current policy) per sample"),
};
static const loom_arg_def kl_ppo_outputs[] = {
    COMMON_OUTPUTS,
    OUT("kl_approx", 0, "mean(sample_log_prob - log_prob), for logging"),
    OUT("beta", 0, "beta after the adaptive update (the loss used the attribute's)"),
    GRAD_OUTPUTS,
    OUT("grad_kl", 1, "[N] d loss / d kl, as torch autograd gives it after the update: beta (updated) / N"),
};
PK_ATTR_TABLE(rl_kl_ppo, RL_KL_PPO_ATTRS);
static const loom_attr_choices kl_ppo_choices[] = { { PK_ATTR(rl_kl_ppo, loss_critic_type), critic_types } };
PK_SCHEMA(rl_kl_ppo_schema, "rl.kl_ppo_loss", 1,
          "torchrl KLPENPPOLoss: -mean(r A - beta kl), critic and entropy terms, gradients and the next beta",
          PK_INPUTS(kl_ppo_inputs), PK_OUTPUTS(kl_ppo_outputs), PK_ATTRS(rl_kl_ppo_attrs), PK_CHOICES(kl_ppo_choices),
          .cost = rl_loss_cost);

/* ------------------------------------------------------------------- A2C */

static const loom_arg_def a2c_inputs[] = { LOG_PROB, ADVANTAGE, STATE_VALUE, VALUE_TARGET, ENTROPY };
static const loom_arg_def a2c_outputs[] = { COMMON_OUTPUTS, GRAD_OUTPUTS };
PK_ATTR_TABLE(rl_a2c, RL_A2C_ATTRS);
static const loom_attr_choices a2c_choices[] = { { PK_ATTR(rl_a2c, loss_critic_type), critic_types } };
PK_SCHEMA(rl_a2c_schema, "rl.a2c_loss", 1,
          "torchrl A2CLoss: -mean(log_prob A), critic and entropy terms and gradients",
          PK_INPUTS(a2c_inputs), PK_OUTPUTS(a2c_outputs), PK_ATTRS(rl_a2c_attrs), PK_CHOICES(a2c_choices),
          .cost = rl_loss_cost);

PK_OPS_DEFINE(rl_loss_ops, RL_LOSS_OPS);
