/* SPDX-License-Identifier: BSD-3-Clause */
/*
** envs.h - the envs module of the rl pack: environments through the
** rl.env interface (loom/rl_env.h), for host programs as the object class
** rl.env with two methods, gymnasium's reset and step:
**   rl.env_reset  (seed attribute)          -> observation
**   rl.env_step   action                    -> observation, reward,
**                                              terminated, truncated, done
**   rl.env_spec                             -> the spaces' bounds, the time limit
** The module registers the pack's built-in environments (classic.h) as
** the interface rl.env v1; an rl.env object takes its environment from the
** interface named by its `interface` attribute, so environments of other
** packs are stepped the same way. The flags and reward have TorchRL's
** trailing singleton dimension ([1]), the observation is the space's size.
** An object is one environment: one caller at a time. rl.parallel_env
** (parallel_env.c) steps many over the core's threads, with auto-reset.
*/
#ifndef LOOM_RL_ENVS_H
#define LOOM_RL_ENVS_H

#include "loom/rl_env.h"
#include "pack.h"

#define RL_ENV_CLASS "rl.env"

#define RL_ENV_CLASS_ATTRS(A, op)                                                                        \
    A(op, id, STRING, LOOM_DEFAULT_NONE, LOOM_ATTR_REQUIRED, "the environment: CartPole-v1, Pendulum-v1, " \
      "MountainCar-v0, MountainCarContinuous-v0, Acrobot-v1 or an id of the interface", )                                                     \
    A(op, interface, STRING, LOOM_DEFAULT_STRING(LOOM_RL_ENV_INTERFACE), 0,                             \
      "the interface (version 1) offering the environment", )
PK_ATTR_ENUM(rl_env_class, RL_ENV_CLASS_ATTRS);

#define RL_ENV_RESET_ATTRS(A, op) \
    A(op, seed, INT, LOOM_DEFAULT_INT(-1), 0, "reseed with this (>= 0) first; -1 continues the stream", )
PK_ATTR_ENUM(rl_env_reset, RL_ENV_RESET_ATTRS);

#define RL_ENVS_OPS(X) \
    X(rl_env_reset_schema) X(rl_env_step_schema) X(rl_env_spec_schema) X(rl_parallel_reset_schema) \
    X(rl_parallel_step_schema)
PK_OPS_DECLARE(rl_envs_ops, RL_ENVS_OPS);

/* An rl.env object: the interface and the environment it made. */
typedef struct rl_env_object {
    const loom_rl_env_api *api;
    const loom_rl_env_spec *spec;
    void *env;
} rl_env_object;

/* The environment `id` of the interface `iface` (version 1): its api and spec. */
loom_status rl_env_find(const char *iface, const char *id, const loom_rl_env_api **api,
                        const loom_rl_env_spec **spec);

extern const loom_object_class rl_env_class;
extern const pk_module rl_envs_cpu;

/* rl.parallel_env (parallel_env.c): its class and its methods' kernels
** (their schemas are in RL_ENVS_OPS). */
extern const loom_object_class rl_parallel_env_class;
extern const loom_kernel_desc rl_parallel_kernels[2];

#endif /* LOOM_RL_ENVS_H */
