/* SPDX-License-Identifier: BSD-3-Clause */
/*
** parallel_env.c - the rl.parallel_env object class: num_envs environments
** of one id (any rl.env interface) stepped together over the core's pool,
** with TorchRL's auto-reset (EnvBase.step_and_maybe_reset, as ParallelEnv
** and SerialEnv run it):
**   rl.parallel_env_reset  (seed)  -> observation [N, obs]
**       seed >= 0 seeds environment i with seed + i (gymnasium's vector
**       reset); -1 continues each stream.
**   rl.parallel_env_step   action [N] (discrete) or [N, act]
**       -> next_observation [N, obs], reward [N, 1], terminated [N, 1],
**          truncated [N, 1], done [N, 1], observation [N, obs]
**       next_* are the step's results (TED's ("next", ...) entries); every
**       environment that is done is then reset (its stream continues) and
**       `observation` is the root of the next step: the reset observation
**       where done, next_observation elsewhere.
** One caller at a time per object; the environments of one call run on
** the pool's threads, each environment on one thread.
*/
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "envs.h"

typedef struct rl_parallel {
    const loom_rl_env_api *api;
    const loom_rl_env_spec *spec;
    int64_t n;
    void **envs;
} rl_parallel;

#define RL_PARALLEL_CLASS_ATTRS(A, op)                                                                   \
    RL_ENV_CLASS_ATTRS(A, op)                                                                            \
    A(op, num_envs, INT, LOOM_DEFAULT_INT(1), LOOM_ATTR_POSITIVE, "the number of environments", )
PK_ATTR_ENUM(rl_parallel_class, RL_PARALLEL_CLASS_ATTRS);
PK_ATTR_TABLE(rl_parallel_class, RL_PARALLEL_CLASS_ATTRS);

static void parallel_destroy(void *state)
{
    rl_parallel *p = state;
    if (p == NULL)
        return;
    for (int64_t i = 0; p->envs != NULL && i < p->n; i++)
        if (p->envs[i] != NULL)
            p->api->destroy(p->envs[i]);
    free(p->envs);
    free(p);
}

/* so many environments is a mistake, not a workload: refuse before allocating */
#define RL_MAX_ENVS (1 << 20)

static loom_status parallel_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    const int64_t n = a[PK_ATTR(rl_parallel_class, num_envs)].u.i;
    *state_out = NULL;
    if (n > RL_MAX_ENVS)
        return pk_host->fail(LOOM_EINVAL, "num_envs %lld: at most %d", (long long)n, RL_MAX_ENVS);
    rl_parallel *p = calloc(1, sizeof *p);
    if (p == NULL || (p->envs = calloc((size_t)n, sizeof *p->envs)) == NULL) {
        free(p);
        return pk_host->fail(LOOM_ENOMEM, "rl.parallel_env: out of memory for %lld environments", (long long)n);
    }
    p->n = n;
    loom_status st = rl_env_find(a[PK_ATTR(rl_parallel_class, interface)].u.s, a[PK_ATTR(rl_parallel_class, id)].u.s,
                                 &p->api, &p->spec);
    for (int64_t i = 0; st == LOOM_OK && i < n; i++)
        st = p->api->create(p->spec->id, &p->envs[i]);
    if (st != LOOM_OK) {
        parallel_destroy(p);
        return st;
    }
    *state_out = p;
    return LOOM_OK;
}

const loom_object_class rl_parallel_env_class = {
    .struct_size = sizeof(loom_object_class),
    .name = "rl.parallel_env",
    .doc = "num_envs environments of one id stepped over the core's threads with TorchRL's auto-reset; methods "
           "rl.parallel_env_reset, rl.parallel_env_step",
    PK_ATTRS(rl_parallel_class_attrs),
    .create = parallel_create,
    .destroy = parallel_destroy,
};

/* ---------------------------------------------------------------- schemas */

static const loom_arg_def preset_outputs[] = {
    { .name = "observation", .dtypes = 0, .ndim = 2, .doc = "[N, observation size]" },
};
PK_ATTR_TABLE(rl_env_reset_p, RL_ENV_RESET_ATTRS);
PK_SCHEMA(rl_parallel_reset_schema, "rl.parallel_env_reset", 1,
          "reset every environment (seed >= 0: environment i gets seed + i)", PK_OUTPUTS(preset_outputs),
          PK_ATTRS(rl_env_reset_p_attrs), .object_class = "rl.parallel_env");

static const loom_arg_def pstep_inputs[] = {
    { .name = "action", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "[N] i64 (discrete) or [N, action size] f32 (box)" },
};
#define PFLAG(nm, d) { .name = nm, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL), .ndim = 2, .doc = d }
static const loom_arg_def pstep_outputs[] = {
    { .name = "next_observation", .dtypes = 0, .ndim = 2, .doc = "[N, obs] after the step: (\"next\", \"observation\")" },
    { .name = "reward", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 2, .doc = "[N, 1]" },
    PFLAG("terminated", "[N, 1]"),
    PFLAG("truncated", "[N, 1]"),
    PFLAG("done", "[N, 1] terminated or truncated: these environments were reset"),
    { .name = "observation", .dtypes = 0, .ndim = 2,
      .doc = "[N, obs] the next step's root: the reset observation where done, else next_observation" },
};
PK_SCHEMA(rl_parallel_step_schema, "rl.parallel_env_step", 1,
          "step every environment, then reset those that are done (TorchRL's step_and_maybe_reset)",
          PK_INPUTS(pstep_inputs), PK_OUTPUTS(pstep_outputs), .object_class = "rl.parallel_env");

/* ---------------------------------------------------------------- methods */

typedef struct rl_pjob {
    rl_parallel *p;
    int has_seed;
    int64_t seed;
    const char *action;
    char *next_obs, *obs;
    double *reward;
    uint8_t *term, *trunc, *done;
    size_t obs_bytes, act_bytes;
    loom_status *status;        /* one per environment: the first failure is reported */
} rl_pjob;

static void parallel_reset_envs(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_pjob *j = user;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        j->status[i] = j->p->api->reset(j->p->envs[i], j->has_seed, (uint64_t)j->seed + (uint64_t)i,
                                        j->obs + (size_t)i * j->obs_bytes);
}

static void parallel_step_envs(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    const rl_pjob *j = user;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++) {
        char *next = j->next_obs + (size_t)i * j->obs_bytes;
        loom_status st = j->p->api->step(j->p->envs[i], j->action + (size_t)i * j->act_bytes, next, &j->reward[i],
                                         &j->term[i], &j->trunc[i]);
        j->done[i] = (uint8_t)(j->term[i] | j->trunc[i]);
        if (st == LOOM_OK && j->done[i])
            st = j->p->api->reset(j->p->envs[i], 0, 0, j->obs + (size_t)i * j->obs_bytes);
        else if (st == LOOM_OK)
            memcpy(j->obs + (size_t)i * j->obs_bytes, next, j->obs_bytes);
        j->status[i] = st;
    }
}

/* The first failing environment's status (its message is in its thread's
** error slot, so the message here names the environment again). */
static loom_status parallel_status(const rl_pjob *j, const char *what)
{
    for (int64_t i = 0; i < j->p->n; i++)
        if (j->status[i] != LOOM_OK)
            return pk_host->fail(j->status[i], "%s of environment %lld (%s) failed (an action outside the space, or "
                                 "a step before the first reset)", what, (long long)i, j->p->spec->id);
    return LOOM_OK;
}

static loom_status parallel_reset_run(loom_call *call)
{
    rl_parallel *p = call->object;
    const int64_t seed = call->attrs[PK_ATTR(rl_env_reset, seed)].u.i;
    if (seed < -1)
        return pk_host->fail(LOOM_EINVAL, "seed %lld: a seed is >= 0 (or -1 for none)", (long long)seed);
    const int64_t shape[2] = { p->n, p->spec->observation.size };
    loom_tensor *obs;
    loom_status st = pk_host->alloc_output(call, 0, p->spec->observation.dtype, 2, shape, &obs);
    if (st != LOOM_OK)
        return st;
    loom_status *status = pk_host->scratch(call->ctx, (size_t)p->n * sizeof *status);
    if (status == NULL)
        return LOOM_ENOMEM;
    rl_pjob j = { .p = p, .has_seed = seed >= 0, .seed = seed >= 0 ? seed : 0, .obs = loom_data(obs),
                  .obs_bytes = (size_t)p->spec->observation.size * pk_host->dtype_size(p->spec->observation.dtype),
                  .status = status };
    st = pk_host->parallel_for(call->ctx, p->n, 8, parallel_reset_envs, &j);
    return st != LOOM_OK ? st : parallel_status(&j, "reset");
}

static loom_status parallel_step_run(loom_call *call)
{
    rl_parallel *p = call->object;
    const loom_tensor *action = call->inputs[0];
    const loom_rl_space *as = &p->spec->action;
    char b[160];
    const int discrete = as->n > 0;
    const int ok_shape = discrete ? (action->ndim == 1 && action->shape[0] == p->n)
                                  : (action->ndim == 2 && action->shape[0] == p->n && action->shape[1] == as->size);
    if ((int32_t)loom_tensor_dtype_of(action) != as->dtype || !ok_shape ||
        (loom_numel(action) > 0 && !loom_is_contiguous(action)))
        return pk_host->fail(LOOM_EINVAL, "'action' %s: %lld environments of %s take %s [%lld%s] (compact)",
                             pk_describe(pk_host, action, b, sizeof b), (long long)p->n, p->spec->id,
                             pk_host->dtype_name((loom_dtype)as->dtype), (long long)p->n,
                             discrete ? "" : ", action size");
    const int64_t obs_shape[2] = { p->n, p->spec->observation.size }, col[2] = { p->n, 1 };
    loom_tensor *out[6];
    loom_status st = pk_host->alloc_output(call, 0, p->spec->observation.dtype, 2, obs_shape, &out[0]);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F64, 2, col, &out[1]);
    for (int k = 2; st == LOOM_OK && k < 5; k++)
        st = pk_host->alloc_output(call, k, LOOM_DTYPE_BOOL, 2, col, &out[k]);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 5, p->spec->observation.dtype, 2, obs_shape, &out[5]);
    if (st != LOOM_OK)
        return st;
    loom_status *status = pk_host->scratch(call->ctx, (size_t)p->n * sizeof *status);
    if (status == NULL)
        return LOOM_ENOMEM;
    rl_pjob j = { .p = p, .action = loom_data(action), .next_obs = loom_data(out[0]), .reward = loom_data(out[1]),
                  .term = loom_data(out[2]), .trunc = loom_data(out[3]), .done = loom_data(out[4]),
                  .obs = loom_data(out[5]),
                  .obs_bytes = (size_t)p->spec->observation.size * pk_host->dtype_size(p->spec->observation.dtype),
                  .act_bytes = (size_t)as->size * pk_host->dtype_size((loom_dtype)as->dtype), .status = status };
    st = pk_host->parallel_for(call->ctx, p->n, 8, parallel_step_envs, &j);
    return st != LOOM_OK ? st : parallel_status(&j, "step");
}

const loom_kernel_desc rl_parallel_kernels[2] = {
    PK_KERNEL_CPU(rl_parallel_reset_schema, "cpu:pool", 0, parallel_reset_run),
    PK_KERNEL_CPU(rl_parallel_step_schema, "cpu:pool", 0, parallel_step_run),
};
