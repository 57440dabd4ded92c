/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_rl.c - case generators of the rl pack's ops (see conformance.h);
** each states its tolerance and why.
*/
#include "conformance.h"

/* [5, 19, 1] (case 0) or [2, 9, 3] (case 1) trajectories: values in
** [-5, 5), rewards in [-1, 2), log-probabilities in [-2.5, 0), and flags
** where about one step in ten terminates and one in ten is truncated. */
static const int64_t rl_shapes[2][3] = { { 5, 19, 1 }, { 2, 9, 3 } };

static loom_tensor *rl_flag(cf_case *c, uint64_t stream, double lo, double hi)
{
    loom_tensor *t = cf_zeros(c, LOOM_DTYPE_BOOL, 3, rl_shapes[c->index]);
    uint8_t *p = loom_data(t);
    for (int64_t i = 0; i < loom_numel(t); i++) {
        const double u = cf_draw(c, stream, (uint64_t)i);
        p[i] = (uint8_t)(u >= lo && u < hi);
    }
    return t;
}

/* The flags: stream 9 drawn once; terminated [0, 0.1), done [0, 0.2). */
static void rl_flags(cf_case *c, int at)
{
    c->in[at] = rl_flag(c, 9, 0.0, 0.2);
    c->in[at + 1] = rl_flag(c, 9, 0.0, 0.1);
}

static loom_tensor *rl_values(cf_case *c, uint64_t stream, double lo, double hi)
{
    return cf_uniform(c, c->dtype, 3, rl_shapes[c->index], stream, lo, hi);
}

/* Every backend runs torch's operations in torch's order (plugins/rl/value/value.h):
** within a few f32 ulps of the cpu, the trace sums amplifying none. */
static void rl_tol(cf_case *c, int n_out)
{
    c->n_out = n_out;
    cf_tol_all(c, CF_CLOSE, c->dtype == LOOM_DTYPE_F64 ? 1e-12 : 1e-5, c->dtype == LOOM_DTYPE_F64 ? 1e-12 : 1e-5);
}

static int rl_gae_make(cf_case *c)
{
    c->in[0] = rl_values(c, 0, -5, 5);
    c->in[1] = rl_values(c, 1, -5, 5);
    c->in[2] = rl_values(c, 2, -1, 2);
    rl_flags(c, 3);
    c->n_in = 5;
    cf_attrs(c, "gamma=0.99;lmbda=0.95");
    rl_tol(c, 2);
    cf_what(c, "[%lld,%lld,%lld], gamma 0.99, lmbda 0.95", (long long)rl_shapes[c->index][0],
            (long long)rl_shapes[c->index][1], (long long)rl_shapes[c->index][2]);
    return 1;
}

static int rl_td0_make(cf_case *c)
{
    c->in[0] = rl_values(c, 1, -5, 5);
    c->in[1] = rl_values(c, 2, -1, 2);
    c->in[2] = rl_flag(c, 9, 0.0, 0.1);
    c->n_in = 3;
    cf_attrs(c, "gamma=0.99");
    rl_tol(c, 1);
    cf_what(c, "%s, gamma 0.99", c->index == 0 ? "[5,19,1]" : "[2,9,3]");
    return 1;
}

static int rl_tdl_make(cf_case *c)
{
    c->in[0] = rl_values(c, 1, -5, 5);
    c->in[1] = rl_values(c, 2, -1, 2);
    rl_flags(c, 2);
    c->n_in = 4;
    cf_attrs(c, "gamma=0.99;lmbda=0.95");
    rl_tol(c, 1);
    cf_what(c, "%s, gamma 0.99, lmbda 0.95", c->index == 0 ? "[5,19,1]" : "[2,9,3]");
    return 1;
}

static int rl_vtrace_make(cf_case *c)
{
    c->in[0] = rl_values(c, 3, -2.5, 0);
    c->in[1] = rl_values(c, 4, -2.5, 0);
    c->in[2] = rl_values(c, 0, -5, 5);
    c->in[3] = rl_values(c, 1, -5, 5);
    c->in[4] = rl_values(c, 2, -1, 2);
    rl_flags(c, 5);
    c->n_in = 7;
    cf_attrs(c, "gamma=0.99;rho_thresh=0.9;c_thresh=1.1");
    rl_tol(c, 2);
    cf_what(c, "%s, gamma 0.99, rho 0.9, c 1.1", c->index == 0 ? "[5,19,1]" : "[2,9,3]");
    return 1;
}

/* The losses on a batch of 37: log-ratios within +-0.5 (inside and outside
** the clip bounds), the first four outputs (the loss terms and the entropy) compared. The
** means are double sums on the cpu: another backend's reductions differ in
** the last places. */
static int rl_loss_make(cf_case *c, int kind)
{
    const int64_t n1[1] = { 37 }, n2[2] = { 37, 1 };
    int k = 0;
    c->in[k++] = cf_uniform(c, c->dtype, 1, n1, 0, -3, -0.2);
    if (kind != 2)
        c->in[k++] = cf_uniform(c, c->dtype, 1, n1, 1, -3, -0.2);
    c->in[k++] = cf_uniform(c, c->dtype, 2, n2, 2, -2, 2);
    c->in[k++] = cf_uniform(c, c->dtype, 2, n2, 3, -3, 3);
    c->in[k++] = cf_uniform(c, c->dtype, 2, n2, 4, -3, 3);
    c->in[k++] = cf_uniform(c, c->dtype, 1, n1, 5, 0, 2);
    if (kind == 1)
        c->in[k++] = cf_uniform(c, c->dtype, 1, n1, 6, 0, 0.05);
    c->n_in = k;
    cf_attrs(c, "loss_critic_type=%s", c->index == 0 ? "smooth_l1" : "l2");
    c->n_out = 4;
    cf_tol_all(c, CF_CLOSE, c->dtype == LOOM_DTYPE_F64 ? 1e-12 : 1e-5, c->dtype == LOOM_DTYPE_F64 ? 1e-12 : 1e-5);
    cf_what(c, "N 37, %s", c->index == 0 ? "smooth_l1" : "l2");
    return 1;
}

static int rl_clip_ppo_make(cf_case *c) { return rl_loss_make(c, 0); }
static int rl_kl_ppo_make(cf_case *c) { return rl_loss_make(c, 1); }
static int rl_a2c_make(cf_case *c) { return rl_loss_make(c, 2); }

#define RL_F32_F64 (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
const cf_gen cf_rl_gens[] = {
    { "rl.generalized_advantage_estimate", RL_F32_F64, 2, rl_gae_make, NULL },
    { "rl.td0_return_estimate", RL_F32_F64, 2, rl_td0_make, NULL },
    { "rl.td_lambda_return_estimate", RL_F32_F64, 2, rl_tdl_make, NULL },
    { "rl.vtrace_advantage_estimate", RL_F32_F64, 2, rl_vtrace_make, NULL },
    { "rl.clip_ppo_loss", RL_F32_F64, 2, rl_clip_ppo_make, NULL },
    { "rl.kl_ppo_loss", RL_F32_F64, 2, rl_kl_ppo_make, NULL },
    { "rl.a2c_loss", RL_F32_F64, 2, rl_a2c_make, NULL },
    { "rl.env_reset", 0, 0, NULL, "tests/rl/test_env_goldens.c: a method of a stateful environment object" },
    { "rl.env_step", 0, 0, NULL, "tests/rl/test_env_goldens.c: a method of a stateful environment object" },
    { "rl.env_spec", 0, 0, NULL, "tests/rl/test_value_cases.c: a method of an environment object" },
    { "rl.parallel_env_reset", 0, 0, NULL, "tests/rl/test_env_parallel.c: a method of stateful environments" },
    { "rl.parallel_env_step", 0, 0, NULL, "tests/rl/test_env_parallel.c: a method of stateful environments" },
};
const size_t cf_rl_n_gens = sizeof cf_rl_gens / sizeof cf_rl_gens[0];
