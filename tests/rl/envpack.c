/* SPDX-License-Identifier: BSD-3-Clause */
/*
** envpack.c - a pack of the environment tests that offers an environment
** through the rl.env interface layout (loom/rl_env.h) under a name of its
** own, "testenv.env", as any pack would: Counter-v0, whose observation is
** [the step count, the last action], reward the action, terminated after
** 3 steps with action 1 in a row, truncated at 5 steps; seeds shift the
** start count. The rl pack's rl.env and rl.parallel_env step it given
** interface=testenv.env (test_env_interface.c). Built against the ABI
** headers only.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/plugin.h"
#include "loom/rl_env.h"

static const loom_host_api *host;

typedef struct counter {
    int reset;
    float count, run;
    int64_t steps;
} counter;

static const double obs_low[2] = { 0.0, 0.0 }, obs_high[2] = { INFINITY, 1.0 };
static const loom_rl_env_spec spec = {
    sizeof(loom_rl_env_spec), "Counter-v0",
    { LOOM_DTYPE_F32, 2, 0, obs_low, obs_high },
    { LOOM_DTYPE_I64, 1, 2, NULL, NULL },
    0.0, 1.0, 5,
};

static int32_t count(void) { return 1; }
static const loom_rl_env_spec *get_spec(int32_t i) { return i == 0 ? &spec : NULL; }

static loom_status create(const char *id, void **env)
{
    if (strcmp(id, spec.id) != 0)
        return host->fail(LOOM_ENOENT, "testenv offers Counter-v0, not %s", id);
    *env = calloc(1, sizeof(counter));
    return *env ? LOOM_OK : host->fail(LOOM_ENOMEM, "out of memory");
}

static void destroy(void *env) { free(env); }

static loom_status reset(void *env, int has_seed, uint64_t seed, void *observation)
{
    counter *c = env;
    c->reset = 1;
    c->count = has_seed ? (float)(seed % 100) : 0.0f;
    c->run = 0;
    c->steps = 0;
    float obs[2] = { c->count, 0.0f };
    memcpy(observation, obs, sizeof obs);
    return LOOM_OK;
}

static loom_status step(void *env, const void *action, void *observation, double *reward, uint8_t *terminated,
                        uint8_t *truncated)
{
    counter *c = env;
    int64_t a;
    memcpy(&a, action, sizeof a);
    if (!c->reset || (a != 0 && a != 1))
        return host->fail(LOOM_EINVAL, "Counter-v0: reset first, actions 0 or 1");
    c->count += 1.0f;
    c->run = a ? c->run + 1.0f : 0.0f;
    c->steps++;
    float obs[2] = { c->count, (float)a };
    memcpy(observation, obs, sizeof obs);
    *reward = (double)a;
    *terminated = c->run >= 3.0f;
    *truncated = c->steps >= spec.max_episode_steps;
    return LOOM_OK;
}

static const loom_rl_env_api api = { sizeof(loom_rl_env_api), count, get_spec, create, destroy, reset, step };

static loom_status init(const loom_host_api *h, loom_registrar *reg)
{
    host = h;
    return h->register_interface(reg, "testenv.env", LOOM_RL_ENV_VERSION, &api);
}

LOOM_PLUGIN_DEFINE("testenv", "1.0", "an environment offered through the rl.env interface (tests)", init, NULL)
