/* SPDX-License-Identifier: BSD-3-Clause */
/*
** value_schemas.c - the definitions of the rl value estimators (value.h):
** torchrl.objectives.value.functional's names and argument names. Shapes
** are [*B, T, *F], time on the attribute time_dim (torchrl's keyword).
*/
#include "value.h"

#define VALUES(nm, d) { .name = nm, .dtypes = RL_VALUE_DTYPES, .ndim = -1, .doc = d }
#define VALUES_AS0(nm, d) \
    { .name = nm, .dtypes = RL_VALUE_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1, .doc = d }
#define FLAGS(nm, fl, d) { .name = nm, .dtypes = RL_FLAG_DTYPES, .flags = (fl), .ndim = -1, .doc = d }
#define OUT_AS0(nm, d) \
    { .name = nm, .dtypes = RL_VALUE_DTYPES, .flags = LOOM_ARG_SAME_DTYPE_AS(0), .ndim = -1, .doc = d }

#define DONE_DOC "bool: the step ended its trajectory (terminated or truncated): cuts the chain"
#define TERMINATED_DOC "bool: the step ended its episode: no bootstrap from V(s_{t+1}); default done"

/* Each estimator reads every element a few times and writes its outputs. */
static void rl_value_cost(const loom_call *call, double *flops, double *bytes)
{
    const loom_tensor *x = call->inputs[0];
    const double n = (double)loom_numel(x);
    *flops = 6.0 * n;
    *bytes = n * (double)(call->n_inputs + call->n_outputs) * (double)pk_host->dtype_size(loom_tensor_dtype_of(x));
}

/* ------------------------------------------------------------------- GAE */

static const loom_arg_def gae_inputs[] = {
    VALUES("state_value", "V(s_t) [*B, T, *F], f32 or f64"),
    VALUES_AS0("next_state_value", "V(s_{t+1}), the same shape"),
    VALUES_AS0("reward", "r_t, the same shape"),
    FLAGS("done", 0, DONE_DOC),
    FLAGS("terminated", LOOM_ARG_OPTIONAL, TERMINATED_DOC),
};
static const loom_arg_def gae_outputs[] = {
    OUT_AS0("advantage", "A_t = delta_t + gamma*lmbda*(1-done_t)*A_{t+1}"),
    OUT_AS0("value_target", "advantage + state_value"),
};
PK_ATTR_TABLE(rl_gae, RL_GAE_ATTRS);
PK_SCHEMA(rl_gae_schema, "rl.generalized_advantage_estimate", 1,
          "generalized advantage estimate: delta_t = r_t + gamma*(1-terminated_t)*V(s_{t+1}) - V(s_t), "
          "summed backwards with gamma*lmbda, cut at done",
          PK_INPUTS(gae_inputs), PK_OUTPUTS(gae_outputs), PK_ATTRS(rl_gae_attrs), .cost = rl_value_cost);

/* ------------------------------------------------------------------ TD(0) */

static const loom_arg_def td0_inputs[] = {
    VALUES("next_state_value", "V(s_{t+1}), any shape, f32 or f64"),
    VALUES_AS0("reward", "r_t, the same shape"),
    FLAGS("terminated", 0, "bool: the step ended its episode: no bootstrap"),
};
static const loom_arg_def td0_outputs[] = {
    OUT_AS0("returns", "r_t + gamma*(1-terminated_t)*V(s_{t+1})"),
};
PK_ATTR_TABLE(rl_td0, RL_TD0_ATTRS);
PK_SCHEMA(rl_td0_schema, "rl.td0_return_estimate", 1,
          "one-step bootstrapped return r_t + gamma*(1-terminated_t)*V(s_{t+1}), element-wise",
          PK_INPUTS(td0_inputs), PK_OUTPUTS(td0_outputs), PK_ATTRS(rl_td0_attrs), .cost = rl_value_cost);

/* ------------------------------------------------------------- TD(lambda) */

static const loom_arg_def tdl_inputs[] = {
    VALUES("next_state_value", "V(s_{t+1}) [*B, T, *F], f32 or f64"),
    VALUES_AS0("reward", "r_t, the same shape"),
    FLAGS("done", 0, DONE_DOC),
    FLAGS("terminated", LOOM_ARG_OPTIONAL, TERMINATED_DOC),
};
static const loom_arg_def tdl_outputs[] = {
    OUT_AS0("returns", "G_t = r_t + gamma*((1-lmbda)*V'_{t+1} + lmbda*G_{t+1}), restarted at done"),
};
PK_ATTR_TABLE(rl_tdl, RL_TDL_ATTRS);
PK_SCHEMA(rl_tdl_schema, "rl.td_lambda_return_estimate", 1,
          "TD(lambda) return, backwards over time; at done the tail restarts from the (bootstrapped) next value",
          PK_INPUTS(tdl_inputs), PK_OUTPUTS(tdl_outputs), PK_ATTRS(rl_tdl_attrs), .cost = rl_value_cost);

/* ---------------------------------------------------------------- V-trace */

static const loom_arg_def vtrace_inputs[] = {
    VALUES("log_pi", "log-probability of the actions, [*B, T, *F], f32 or f64"),
    VALUES_AS0("log_mu", "log-probability under the other policy: rho = exp(log_pi - log_mu)"),
    VALUES_AS0("state_value", "V(s_t), the same shape"),
    VALUES_AS0("next_state_value", "V(s_{t+1}), the same shape"),
    VALUES_AS0("reward", "r_t, the same shape"),
    FLAGS("done", 0, DONE_DOC),
    FLAGS("terminated", LOOM_ARG_OPTIONAL, TERMINATED_DOC),
};
static const loom_arg_def vtrace_outputs[] = {
    OUT_AS0("advantage", "min(rho, rho_thresh) * (r_t + gamma*(1-terminated_t)*vs_{t+1} - V(s_t))"),
    OUT_AS0("value_target", "the V-trace targets vs_t"),
};
PK_ATTR_TABLE(rl_vtrace, RL_VTRACE_ATTRS);
PK_SCHEMA(rl_vtrace_schema, "rl.vtrace_advantage_estimate", 1,
          "V-trace off-policy targets vs_t and advantages (IMPALA), with clipped importance weights",
          PK_INPUTS(vtrace_inputs), PK_OUTPUTS(vtrace_outputs), PK_ATTRS(rl_vtrace_attrs), .cost = rl_value_cost);

PK_OPS_DEFINE(rl_value_ops, RL_VALUE_OPS);
