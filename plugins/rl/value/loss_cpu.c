/* SPDX-License-Identifier: BSD-3-Clause */
/*
** loss_cpu.c - the cpu kernels of the rl losses (loss.h): the shape checks,
** then one pass over the batch (loss_cpu_tmpl.h, once per dtype). A batch
** of a loss is small next to the networks that made it; one thread.
*/
#include <math.h>
#include <string.h>

#include "describe.h"
#include "loss.h"

enum { RL_LOSS_CLIP_PPO, RL_LOSS_KL_PPO, RL_LOSS_A2C };
enum { RL_CRITIC_L1, RL_CRITIC_L2, RL_CRITIC_SMOOTH_L1 };
/* Where each scalar output goes in rl_loss_job.scalars. */
enum { RL_OUT_OBJECTIVE, RL_OUT_CRITIC, RL_OUT_ENTROPY_LOSS, RL_OUT_ENTROPY, RL_OUT_KL_APPROX, RL_OUT_CLIP_FRACTION,
       RL_OUT_ESS, RL_OUT_BETA, RL_OUT_N };
/* torch.finfo(torch.float).resolution, the eps of torchrl's _standardize */
#define RL_STD_EPS 1e-6

typedef struct rl_loss_job {
    int kind, critic, normalize;
    int64_t n;
    const void *log_prob, *sample_log_prob, *advantage, *state_value, *value_target, *entropy, *kl;
    void *grad_log_prob, *grad_state_value, *grad_entropy, *grad_kl;
    void *scalars[RL_OUT_N];
    /* torchrl's float32 buffers */
    float entropy_coeff, critic_coeff, clip_lo, clip_hi, beta;
    double dtarg, increment, decrement;
} rl_loss_job;

#define PK_SFX f32
#define RL_EXP expf
#include "loss_cpu_tmpl.h"
#define PK_SFX f64
#define RL_EXP exp
#include "loss_cpu_tmpl.h"

/* The inputs: log_prob [N] first, then each input k in `ranks` (1: [N],
** 2: [N, 1]); all compact. */
static loom_status rl_loss_check(const loom_call *call, const int *ranks, int n_in, int64_t *n)
{
    const loom_arg_def *args = call->schema->inputs;
    char b[160], c[160];
    *n = call->inputs[0]->shape[0];
    for (int k = 0; k < n_in; k++) {
        const loom_tensor *t = call->inputs[k];
        if (loom_numel(t) > 0 && !loom_is_contiguous(t))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be contiguous (compact row-major)", args[k].name,
                                 pk_describe(pk_host, t, b, sizeof b));
        if (t->shape[0] != *n || (ranks[k] == 2 && t->shape[1] != 1))
            return pk_host->fail(LOOM_EINVAL, "'%s' %s must be [N%s] for 'log_prob' %s (N = %lld)", args[k].name,
                                 pk_describe(pk_host, t, b, sizeof b), ranks[k] == 2 ? ", 1" : "",
                                 pk_describe(pk_host, call->inputs[0], c, sizeof c), (long long)*n);
    }
    return LOOM_OK;
}

static int rl_critic_type(const char *s)
{
    return strcmp(s, "l1") == 0 ? RL_CRITIC_L1 : strcmp(s, "l2") == 0 ? RL_CRITIC_L2 : RL_CRITIC_SMOOTH_L1;
}

/* Allocates the outputs: scalars at the indices of `scalar_slots` (in
** output order), then the gradients (each the shape of its input). */
static loom_status rl_loss_outputs(loom_call *call, rl_loss_job *j, const int *scalar_slots, int n_scalars,
                                   const int *grad_inputs, void **grads, int n_grads)
{
    const loom_dtype dt = loom_tensor_dtype_of(call->inputs[0]);
    loom_tensor *out;
    for (int k = 0; k < n_scalars; k++) {
        loom_status st = pk_host->alloc_output(call, k, dt, 0, NULL, &out);
        if (st != LOOM_OK)
            return st;
        j->scalars[scalar_slots[k]] = loom_data(out);
    }
    for (int k = 0; k < n_grads; k++) {
        const loom_tensor *in = call->inputs[grad_inputs[k]];
        loom_status st = pk_host->alloc_output(call, n_scalars + k, dt, in->ndim, in->shape, &out);
        if (st != LOOM_OK)
            return st;
        grads[k] = loom_data(out);
    }
    return LOOM_OK;
}

static void rl_loss_run_body(rl_loss_job *j, loom_dtype dt)
{
    if (dt == LOOM_DTYPE_F64)
        rl_loss_body_f64(j);
    else
        rl_loss_body_f32(j);
}

static loom_status rl_clip_ppo_run(loom_call *call)
{
    static const int ranks[] = { 1, 1, 2, 2, 2, 1 };
    static const int slots[] = { RL_OUT_OBJECTIVE, RL_OUT_CRITIC, RL_OUT_ENTROPY_LOSS, RL_OUT_ENTROPY,
                                 RL_OUT_CLIP_FRACTION, RL_OUT_KL_APPROX, RL_OUT_ESS };
    static const int grad_in[] = { 0, 3, 5 };
    const loom_attr_value *a = call->attrs;
    rl_loss_job j = { .kind = RL_LOSS_CLIP_PPO };
    loom_status st = rl_loss_check(call, ranks, 6, &j.n);
    void *g[3];
    if (st == LOOM_OK)
        st = rl_loss_outputs(call, &j, slots, 7, grad_in, g, 3);
    if (st != LOOM_OK)
        return st;
    const float eps = (float)a[PK_ATTR(rl_clip_ppo, clip_epsilon)].u.f;
    j.critic = rl_critic_type(a[PK_ATTR(rl_clip_ppo, loss_critic_type)].u.s);
    j.normalize = a[PK_ATTR(rl_clip_ppo, normalize_advantage)].u.b;
    j.entropy_coeff = (float)a[PK_ATTR(rl_clip_ppo, entropy_coeff)].u.f;
    j.critic_coeff = (float)a[PK_ATTR(rl_clip_ppo, critic_coeff)].u.f;
    j.clip_lo = log1pf(-eps);       /* ClipPPOLoss._clip_bounds on the float32 buffer */
    j.clip_hi = log1pf(eps);
    j.log_prob = loom_data(call->inputs[0]);
    j.sample_log_prob = loom_data(call->inputs[1]);
    j.advantage = loom_data(call->inputs[2]);
    j.state_value = loom_data(call->inputs[3]);
    j.value_target = loom_data(call->inputs[4]);
    j.entropy = loom_data(call->inputs[5]);
    j.grad_log_prob = g[0];
    j.grad_state_value = g[1];
    j.grad_entropy = g[2];
    rl_loss_run_body(&j, loom_tensor_dtype_of(call->inputs[0]));
    return LOOM_OK;
}

static loom_status rl_kl_ppo_run(loom_call *call)
{
    static const int ranks[] = { 1, 1, 2, 2, 2, 1, 1 };
    static const int slots[] = { RL_OUT_OBJECTIVE, RL_OUT_CRITIC, RL_OUT_ENTROPY_LOSS, RL_OUT_ENTROPY,
                                 RL_OUT_KL_APPROX, RL_OUT_BETA };
    static const int grad_in[] = { 0, 3, 5, 6 };
    const loom_attr_value *a = call->attrs;
    rl_loss_job j = { .kind = RL_LOSS_KL_PPO };
    const double inc = a[PK_ATTR(rl_kl_ppo, increment)].u.f, dec = a[PK_ATTR(rl_kl_ppo, decrement)].u.f;
    if (inc < 1.0)      /* KLPENPPOLoss raises ValueError */
        return pk_host->fail(LOOM_EINVAL, "increment %g must be >= 1", inc);
    if (dec > 1.0)
        return pk_host->fail(LOOM_EINVAL, "decrement %g must be <= 1", dec);
    loom_status st = rl_loss_check(call, ranks, 7, &j.n);
    void *g[4];
    if (st == LOOM_OK)
        st = rl_loss_outputs(call, &j, slots, 6, grad_in, g, 4);
    if (st != LOOM_OK)
        return st;
    j.critic = rl_critic_type(a[PK_ATTR(rl_kl_ppo, loss_critic_type)].u.s);
    j.normalize = a[PK_ATTR(rl_kl_ppo, normalize_advantage)].u.b;
    j.entropy_coeff = (float)a[PK_ATTR(rl_kl_ppo, entropy_coeff)].u.f;
    j.critic_coeff = (float)a[PK_ATTR(rl_kl_ppo, critic_coeff)].u.f;
    j.beta = (float)a[PK_ATTR(rl_kl_ppo, beta)].u.f;
    j.dtarg = a[PK_ATTR(rl_kl_ppo, dtarg)].u.f;
    j.increment = inc;
    j.decrement = dec;
    j.log_prob = loom_data(call->inputs[0]);
    j.sample_log_prob = loom_data(call->inputs[1]);
    j.advantage = loom_data(call->inputs[2]);
    j.state_value = loom_data(call->inputs[3]);
    j.value_target = loom_data(call->inputs[4]);
    j.entropy = loom_data(call->inputs[5]);
    j.kl = loom_data(call->inputs[6]);
    j.grad_log_prob = g[0];
    j.grad_state_value = g[1];
    j.grad_entropy = g[2];
    j.grad_kl = g[3];
    rl_loss_run_body(&j, loom_tensor_dtype_of(call->inputs[0]));
    return LOOM_OK;
}

static loom_status rl_a2c_run(loom_call *call)
{
    static const int ranks[] = { 1, 2, 2, 2, 1 };
    static const int slots[] = { RL_OUT_OBJECTIVE, RL_OUT_CRITIC, RL_OUT_ENTROPY_LOSS, RL_OUT_ENTROPY };
    static const int grad_in[] = { 0, 2, 4 };
    const loom_attr_value *a = call->attrs;
    rl_loss_job j = { .kind = RL_LOSS_A2C };
    loom_status st = rl_loss_check(call, ranks, 5, &j.n);
    void *g[3];
    if (st == LOOM_OK)
        st = rl_loss_outputs(call, &j, slots, 4, grad_in, g, 3);
    if (st != LOOM_OK)
        return st;
    j.critic = rl_critic_type(a[PK_ATTR(rl_a2c, loss_critic_type)].u.s);
    j.entropy_coeff = (float)a[PK_ATTR(rl_a2c, entropy_coeff)].u.f;
    j.critic_coeff = (float)a[PK_ATTR(rl_a2c, critic_coeff)].u.f;
    j.log_prob = loom_data(call->inputs[0]);
    j.advantage = loom_data(call->inputs[1]);
    j.state_value = loom_data(call->inputs[2]);
    j.value_target = loom_data(call->inputs[3]);
    j.entropy = loom_data(call->inputs[4]);
    j.grad_log_prob = g[0];
    j.grad_state_value = g[1];
    j.grad_entropy = g[2];
    rl_loss_run_body(&j, loom_tensor_dtype_of(call->inputs[0]));
    return LOOM_OK;
}

static const loom_kernel_desc rl_loss_cpu_kernels[] = {
    PK_KERNEL_CPU(rl_clip_ppo_schema, "cpu:batch", RL_LOSS_DTYPES, rl_clip_ppo_run),
    PK_KERNEL_CPU(rl_kl_ppo_schema, "cpu:batch", RL_LOSS_DTYPES, rl_kl_ppo_run),
    PK_KERNEL_CPU(rl_a2c_schema, "cpu:batch", RL_LOSS_DTYPES, rl_a2c_run),
};

const pk_module rl_loss_cpu = PK_MODULE("loss", rl_loss_ops, rl_loss_cpu_kernels, NULL);
