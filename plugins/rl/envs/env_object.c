/* SPDX-License-Identifier: BSD-3-Clause */
/*
** env_object.c - the rl.env object class, its methods rl.env_reset and
** rl.env_step (envs.h), and the registration of the built-in environments
** as the rl.env interface.
*/
#include <stdlib.h>
#include <string.h>

#include "classic.h"
#include "describe.h"
#include "envs.h"

/* ---------------------------------------------------------------- schemas */

static const loom_arg_def reset_outputs[] = {
    { .name = "observation", .dtypes = 0, .ndim = 1, .doc = "[observation size], the space's dtype" },
};
PK_ATTR_TABLE(rl_env_reset, RL_ENV_RESET_ATTRS);
PK_SCHEMA(rl_env_reset_schema, "rl.env_reset", 1, "a new episode of the object's environment (gymnasium reset)",
          PK_OUTPUTS(reset_outputs), PK_ATTRS(rl_env_reset_attrs), .object_class = RL_ENV_CLASS);

static const loom_arg_def step_inputs[] = {
    { .name = "action", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_I64) | LOOM_DTYPE_BIT(LOOM_DTYPE_F32), .ndim = -1,
      .doc = "the action's size of elements: i64 for a discrete space, f32 for a box" },
};
#define FLAG_OUT(nm, d) { .name = nm, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_BOOL), .ndim = 1, .doc = d }
static const loom_arg_def step_outputs[] = {
    { .name = "observation", .dtypes = 0, .ndim = 1, .doc = "[observation size] after the step" },
    { .name = "reward", .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_F64), .ndim = 1, .doc = "[1] f64" },
    FLAG_OUT("terminated", "[1] the episode ended"),
    FLAG_OUT("truncated", "[1] the time limit cut it"),
    FLAG_OUT("done", "[1] terminated or truncated"),
};
PK_SCHEMA(rl_env_step_schema, "rl.env_step", 1, "one step of the object's environment (gymnasium step)",
          PK_INPUTS(step_inputs), PK_OUTPUTS(step_outputs), .object_class = RL_ENV_CLASS);

#define SPEC_OUT(nm, dt, d) { .name = nm, .dtypes = LOOM_DTYPE_BIT(LOOM_DTYPE_##dt), .ndim = 1, .doc = d }
static const loom_arg_def spec_outputs[] = {
    SPEC_OUT("observation_low", F64, "[observation size] the observation box's bounds (+-inf: none)"),
    SPEC_OUT("observation_high", F64, "[observation size]"),
    SPEC_OUT("action_n", I64, "[1] a discrete action's number of values; 0 for a box"),
    SPEC_OUT("action_low", F64, "[action size] a box action's bounds (discrete: [0], [n - 1])"),
    SPEC_OUT("action_high", F64, "[action size]"),
    SPEC_OUT("max_episode_steps", I64, "[1] the time limit (0: none)"),
};
PK_SCHEMA(rl_env_spec_schema, "rl.env_spec", 1, "the spaces and the time limit of the object's environment",
          PK_OUTPUTS(spec_outputs), .object_class = RL_ENV_CLASS);

PK_OPS_DEFINE(rl_envs_ops, RL_ENVS_OPS);   /* rl.parallel_env's schemas: parallel_env.c */

/* ---------------------------------------------------------------- objects */

loom_status rl_env_find(const char *iface, const char *id, const loom_rl_env_api **api,
                        const loom_rl_env_spec **spec)
{
    const loom_rl_env_api *a = pk_host->get_extension(iface, LOOM_RL_ENV_VERSION);
    if (a == NULL || a->struct_size < sizeof(loom_rl_env_api))
        return pk_host->fail(LOOM_ENOENT, "no interface '%s' version %u (loom/rl_env.h) is offered by a loaded pack",
                             iface, LOOM_RL_ENV_VERSION);
    for (int32_t k = 0; k < a->count(); k++) {
        const loom_rl_env_spec *s = a->spec(k);
        if (s != NULL && strcmp(s->id, id) == 0) {
            *api = a;
            *spec = s;
            return LOOM_OK;
        }
    }
    return pk_host->fail(LOOM_ENOENT, "interface '%s' offers no environment '%s'", iface, id);
}

static loom_status env_create(const loom_object_args *args, void **state_out)
{
    const loom_attr_value *a = args->attrs;
    rl_env_object *o = calloc(1, sizeof *o);
    *state_out = NULL;
    if (o == NULL)
        return pk_host->fail(LOOM_ENOMEM, "rl.env: out of memory");
    loom_status st = rl_env_find(a[PK_ATTR(rl_env_class, interface)].u.s, a[PK_ATTR(rl_env_class, id)].u.s,
                                 &o->api, &o->spec);
    if (st == LOOM_OK)
        st = o->api->create(o->spec->id, &o->env);
    if (st != LOOM_OK) {
        free(o);
        return st;
    }
    *state_out = o;
    return LOOM_OK;
}

static void env_destroy(void *state)
{
    rl_env_object *o = state;
    if (o != NULL && o->env != NULL)
        o->api->destroy(o->env);
    free(o);
}

PK_ATTR_TABLE(rl_env_class, RL_ENV_CLASS_ATTRS);
const loom_object_class rl_env_class = {
    .struct_size = sizeof(loom_object_class),
    .name = RL_ENV_CLASS,
    .doc = "one environment of the rl.env interface (gymnasium's classic control built in); methods "
           "rl.env_reset, rl.env_step",
    PK_ATTRS(rl_env_class_attrs),
    .create = env_create,
    .destroy = env_destroy,
};

/* ---------------------------------------------------------------- methods */

static loom_status env_reset_run(loom_call *call)
{
    rl_env_object *o = call->object;
    const int64_t seed = call->attrs[PK_ATTR(rl_env_reset, seed)].u.i;
    if (seed < -1)
        return pk_host->fail(LOOM_EINVAL, "seed %lld: a seed is >= 0 (or -1 for none)", (long long)seed);
    const int64_t shape[1] = { o->spec->observation.size };
    loom_tensor *obs;
    loom_status st = pk_host->alloc_output(call, 0, o->spec->observation.dtype, 1, shape, &obs);
    if (st != LOOM_OK)
        return st;
    return o->api->reset(o->env, seed >= 0, (uint64_t)(seed >= 0 ? seed : 0), loom_data(obs));
}

static loom_status env_step_run(loom_call *call)
{
    rl_env_object *o = call->object;
    const loom_tensor *action = call->inputs[0];
    const loom_rl_space *as = &o->spec->action;
    char b[160];
    if ((int32_t)loom_tensor_dtype_of(action) != as->dtype || loom_numel(action) != as->size || !loom_is_contiguous(action))
        return pk_host->fail(LOOM_EINVAL, "'action' %s: %s takes %d %s element%s (a compact tensor)",
                             pk_describe(pk_host, action, b, sizeof b), o->spec->id, (int)as->size,
                             pk_host->dtype_name((loom_dtype)as->dtype), as->size == 1 ? "" : "s");
    const int64_t obs_shape[1] = { o->spec->observation.size }, one[1] = { 1 };
    loom_tensor *out[5];
    loom_status st = pk_host->alloc_output(call, 0, o->spec->observation.dtype, 1, obs_shape, &out[0]);
    if (st == LOOM_OK)
        st = pk_host->alloc_output(call, 1, LOOM_DTYPE_F64, 1, one, &out[1]);
    for (int k = 2; st == LOOM_OK && k < 5; k++)
        st = pk_host->alloc_output(call, k, LOOM_DTYPE_BOOL, 1, one, &out[k]);
    if (st != LOOM_OK)
        return st;
    uint8_t *term = loom_data(out[2]), *trunc = loom_data(out[3]), *done = loom_data(out[4]);
    st = o->api->step(o->env, loom_data(action), loom_data(out[0]), loom_data(out[1]), term, trunc);
    *done = (uint8_t)(*term | *trunc);
    return st;
}

static loom_status env_spec_run(loom_call *call)
{
    const rl_env_object *o = call->object;
    const loom_rl_env_spec *sp = o->spec;
    const loom_rl_space *spaces[2] = { &sp->observation, &sp->action };
    loom_tensor *t;
    loom_status st;
    const int64_t one[1] = { 1 };
    for (int s = 0; s < 2; s++) {
        const int64_t n[1] = { spaces[s]->size };
        for (int side = 0; side < 2; side++) {
            const int index = s == 0 ? side : 3 + side;
            if ((st = pk_host->alloc_output(call, index, LOOM_DTYPE_F64, 1, n, &t)) != LOOM_OK)
                return st;
            double *v = loom_data(t);
            for (int64_t i = 0; i < n[0]; i++) {
                const double *b = side == 0 ? spaces[s]->low : spaces[s]->high;
                v[i] = b != NULL ? b[i] : side == 0 ? 0.0 : (double)(spaces[s]->n - 1);
            }
        }
    }
    if ((st = pk_host->alloc_output(call, 2, LOOM_DTYPE_I64, 1, one, &t)) != LOOM_OK)
        return st;
    *(int64_t *)loom_data(t) = sp->action.n;
    if ((st = pk_host->alloc_output(call, 5, LOOM_DTYPE_I64, 1, one, &t)) != LOOM_OK)
        return st;
    *(int64_t *)loom_data(t) = sp->max_episode_steps;
    return LOOM_OK;
}

static const loom_object_class *const rl_envs_classes[] = { &rl_env_class, &rl_parallel_env_class };

static const loom_kernel_desc rl_envs_cpu_kernels[] = {
    PK_KERNEL_CPU(rl_env_reset_schema, "cpu", 0, env_reset_run),
    PK_KERNEL_CPU(rl_env_step_schema, "cpu", 0, env_step_run),
    PK_KERNEL_CPU(rl_env_spec_schema, "cpu", 0, env_spec_run),
};

/* rl.parallel_env's kernels (parallel_env.c), then the built-in environments as rl.env v1 */
static loom_status rl_envs_register_more(const loom_host_api *host, loom_registrar *reg)
{
    loom_status st = pk_register_kernels(host, reg, rl_parallel_kernels, PK_COUNT(rl_parallel_kernels));
    if (st != LOOM_OK)
        return st;
    return host->register_interface(reg, LOOM_RL_ENV_INTERFACE, LOOM_RL_ENV_VERSION, &rl_classic_envs);
}

const pk_module rl_envs_cpu = {
    .name = "envs",
    .ops = rl_envs_ops, .n_ops = PK_COUNT(rl_envs_ops),
    .classes = rl_envs_classes, .n_classes = PK_COUNT(rl_envs_classes),
    .kernels = rl_envs_cpu_kernels, .n_kernels = PK_COUNT(rl_envs_cpu_kernels),
    .register_more = rl_envs_register_more,
};
