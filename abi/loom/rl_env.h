/* SPDX-License-Identifier: BSD-3-Clause */
/*
** rl_env.h - the environment interface packs offer each other: a
** versioned vtable (loom_rl_env_api) registered with
** host->register_interface and found with host->get_extension(name,
** LOOM_RL_ENV_VERSION). The rl pack offers gymnasium's classic-control
** environments under LOOM_RL_ENV_INTERFACE ("rl.env"). The core lets one
** pack offer a name, so another pack offers its environments under a name
** of its own ("<pack>.env") with this layout and version; the rl pack's
** rl.env and rl.parallel_env objects step them given interface=<that name>.
**
** One environment instance is stepped by one caller at a time. The step
** data are plain buffers, one environment's worth:
**   observation  spec->observation.size elements of its dtype
**   action       spec->action.size elements of its dtype (discrete: one
**                i64, the action's index)
**   reward       a double
**   terminated   the episode ended (no bootstrap from the next state)
**   truncated    it was cut short (time limit): done = terminated | truncated
** A TensorDict in TorchRL's layout (TED) holds the same: "observation" and
** "action" at the root, ("next", "observation"), ("next", "reward") [1],
** ("next", "terminated") [1], ("next", "truncated") [1] and ("next",
** "done") [1] per step; a batch of environments stacks them on dim 0.
**
** Versioning: members are appended, never moved; struct_size tells which
** a pack filled. A new incompatible layout takes a new version number.
*/
#ifndef LOOM_RL_ENV_H
#define LOOM_RL_ENV_H

#include <stdint.h>

#include "loom/plugin.h"

#define LOOM_RL_ENV_INTERFACE "rl.env"
#define LOOM_RL_ENV_VERSION 1u

/* A space of one environment: a box of `size` elements (dtype F32 or F64,
** bounds low[i] <= x[i] <= high[i], +-INFINITY when unbounded) or a
** discrete space (dtype I64, size 1, values 0 .. n - 1; low and high NULL). */
typedef struct loom_rl_space {
    int32_t dtype;             /* loom_dtype */
    int32_t size;
    int64_t n;                 /* discrete: the number of values; 0 for a box */
    const double *low, *high;
} loom_rl_space;

/* What an environment id is. */
typedef struct loom_rl_env_spec {
    uint32_t struct_size;
    const char *id;            /* "CartPole-v1" */
    loom_rl_space observation, action;
    double reward_low, reward_high;
    int64_t max_episode_steps; /* the TimeLimit: truncated at this many steps; 0 for none */
} loom_rl_env_spec;

typedef struct loom_rl_env_api {
    uint32_t struct_size;
    /* The ids offered, by index [0, count()). */
    int32_t (*count)(void);
    const loom_rl_env_spec *(*spec)(int32_t index);
    /* A new environment of that id (LOOM_ENOENT for an unknown one). It
    ** must be reset before its first step. */
    loom_status (*create)(const char *id, void **env);
    void (*destroy)(void *env);
    /* Reset: a new episode. has_seed 1 reseeds the environment's generator
    ** with seed first (gymnasium's reset(seed=...)); 0 continues its stream.
    ** Writes the first observation. */
    loom_status (*reset)(void *env, int has_seed, uint64_t seed, void *observation);
    /* One step with `action`; writes the next observation and the reward
    ** and flags. An action outside the space fails with LOOM_EINVAL. */
    loom_status (*step)(void *env, const void *action, void *observation, double *reward, uint8_t *terminated,
                        uint8_t *truncated);
} loom_rl_env_api;

#endif /* LOOM_RL_ENV_H */
