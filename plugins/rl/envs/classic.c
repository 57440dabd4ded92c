/* SPDX-License-Identifier: BSD-3-Clause */
/*
** classic.c - CartPole-v1, Pendulum-v1 and MountainCar-v0 (classic.h).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classic.h"
#include "pack.h"
#include "pcg64.h"

#define RL_PI 3.14159265358979323846     /* math.pi, np.pi */

typedef struct rl_classic rl_classic;

typedef struct rl_classic_kind {
    loom_rl_env_spec spec;
    void (*reset)(rl_classic *e);
    /* the environment's own step (before the TimeLimit); 0 or LOOM_EINVAL */
    loom_status (*step)(rl_classic *e, const void *action, double *reward, uint8_t *terminated);
    void (*observe)(const rl_classic *e, float *obs);
} rl_classic_kind;

struct rl_classic {
    const rl_classic_kind *kind;
    rl_pcg64 rng;
    int seeded, was_reset;
    double state[4];
    int64_t elapsed;                /* TimeLimit's _elapsed_steps */
    int64_t steps_beyond_terminated; /* CartPole: -1 for None */
};

/* ---------------------------------------------------------------- CartPole */

#define CP_GRAVITY 9.8
#define CP_MASSCART 1.0
#define CP_MASSPOLE 0.1
#define CP_TOTAL_MASS (CP_MASSPOLE + CP_MASSCART)
#define CP_LENGTH 0.5
#define CP_POLEMASS_LENGTH (CP_MASSPOLE * CP_LENGTH)
#define CP_FORCE_MAG 10.0
#define CP_TAU 0.02
#define CP_THETA_THRESHOLD (12 * 2 * RL_PI / 360)
#define CP_X_THRESHOLD 2.4

static void cartpole_reset(rl_classic *e)
{
    for (int i = 0; i < 4; i++)     /* np_random.uniform(-0.05, 0.05, size=(4,)) */
        e->state[i] = rl_pcg64_uniform(&e->rng, -0.05, 0.05);
    e->steps_beyond_terminated = -1;
}

static loom_status cartpole_step(rl_classic *e, const void *action, double *reward, uint8_t *terminated)
{
    int64_t a;
    memcpy(&a, action, sizeof a);
    if (a != 0 && a != 1)
        return pk_host->fail(LOOM_EINVAL, "CartPole-v1: action %lld is not in Discrete(2)", (long long)a);
    double x = e->state[0], x_dot = e->state[1], theta = e->state[2], theta_dot = e->state[3];
    const double force = a == 1 ? CP_FORCE_MAG : -CP_FORCE_MAG;
    const double costheta = cos(theta), sintheta = sin(theta);
    const double temp = (force + CP_POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / CP_TOTAL_MASS;
    const double thetaacc = (CP_GRAVITY * sintheta - costheta * temp) /
                            (CP_LENGTH * (4.0 / 3.0 - CP_MASSPOLE * (costheta * costheta) / CP_TOTAL_MASS));
    const double xacc = temp - CP_POLEMASS_LENGTH * thetaacc * costheta / CP_TOTAL_MASS;
    x = x + CP_TAU * x_dot;         /* kinematics_integrator "euler" */
    x_dot = x_dot + CP_TAU * xacc;
    theta = theta + CP_TAU * theta_dot;
    theta_dot = theta_dot + CP_TAU * thetaacc;
    e->state[0] = x, e->state[1] = x_dot, e->state[2] = theta, e->state[3] = theta_dot;
    *terminated = x < -CP_X_THRESHOLD || x > CP_X_THRESHOLD || theta < -CP_THETA_THRESHOLD ||
                  theta > CP_THETA_THRESHOLD;
    if (!*terminated) {
        *reward = 1.0;
    } else if (e->steps_beyond_terminated < 0) {
        e->steps_beyond_terminated = 0;
        *reward = 1.0;
    } else {                        /* stepping past the end: gymnasium warns, reward 0 */
        e->steps_beyond_terminated++;
        *reward = 0.0;
    }
    return LOOM_OK;
}

static void cartpole_observe(const rl_classic *e, float *obs)
{
    for (int i = 0; i < 4; i++)
        obs[i] = (float)e->state[i];
}

/* ---------------------------------------------------------------- Pendulum */

#define PD_MAX_SPEED 8.0
#define PD_MAX_TORQUE 2.0
#define PD_DT 0.05
#define PD_G 10.0
#define PD_M 1.0
#define PD_L 1.0

static void pendulum_reset(rl_classic *e)
{
    /* uniform(low=-[pi, 1], high=[pi, 1]): low + (high - low) * draw, per element */
    e->state[0] = rl_pcg64_uniform(&e->rng, -RL_PI, RL_PI);
    e->state[1] = rl_pcg64_uniform(&e->rng, -1.0, 1.0);
}

/* Python's float % (numpy remainder): the sign of the divisor. */
static double py_mod(double a, double b)
{
    double m = fmod(a, b);
    if (m != 0.0) {
        if ((b < 0) != (m < 0))
            m += b;
    } else {
        m = copysign(0.0, b);
    }
    return m;
}

static double clip(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

static loom_status pendulum_step(rl_classic *e, const void *action, double *reward, uint8_t *terminated)
{
    float u;
    memcpy(&u, action, sizeof u);
    if (isnan(u))
        return pk_host->fail(LOOM_EINVAL, "Pendulum-v1: the action is NaN");
    const double th = e->state[0], thdot = e->state[1];
    /* np.clip(u, -2, 2)[0]: a float32; u**2 and 0.001 * u**2 and 3.0 * u stay float32 */
    const float uc = u < -2.0f ? -2.0f : u > 2.0f ? 2.0f : u;
    const float u2 = uc * uc, u_cost = 0.001f * u2, u_acc = 3.0f * uc;
    const double an = py_mod(th + RL_PI, 2 * RL_PI) - RL_PI;
    const double costs = an * an + 0.1 * (thdot * thdot) + (double)u_cost;
    double newthdot = thdot + (3 * PD_G / (2 * PD_L) * sin(th) + (double)u_acc) * PD_DT;
    newthdot = clip(newthdot, -PD_MAX_SPEED, PD_MAX_SPEED);
    e->state[0] = th + newthdot * PD_DT;
    e->state[1] = newthdot;
    *reward = -costs;
    *terminated = 0;
    return LOOM_OK;
}

static void pendulum_observe(const rl_classic *e, float *obs)
{
    obs[0] = (float)cos(e->state[0]);
    obs[1] = (float)sin(e->state[0]);
    obs[2] = (float)e->state[1];
}

/* ------------------------------------------------------------- MountainCar */

#define MC_MIN_POSITION -1.2
#define MC_MAX_POSITION 0.6
#define MC_MAX_SPEED 0.07
#define MC_GOAL_POSITION 0.5
#define MC_FORCE 0.001
#define MC_GRAVITY 0.0025

static void mountaincar_reset(rl_classic *e)
{
    e->state[0] = rl_pcg64_uniform(&e->rng, -0.6, -0.4);
    e->state[1] = 0.0;
}

static loom_status mountaincar_step(rl_classic *e, const void *action, double *reward, uint8_t *terminated)
{
    int64_t a;
    memcpy(&a, action, sizeof a);
    if (a < 0 || a > 2)
        return pk_host->fail(LOOM_EINVAL, "MountainCar-v0: action %lld is not in Discrete(3)", (long long)a);
    double position = e->state[0], velocity = e->state[1];
    velocity += (double)(a - 1) * MC_FORCE + cos(3 * position) * (-MC_GRAVITY);
    velocity = clip(velocity, -MC_MAX_SPEED, MC_MAX_SPEED);
    position += velocity;
    position = clip(position, MC_MIN_POSITION, MC_MAX_POSITION);
    if (position == MC_MIN_POSITION && velocity < 0)
        velocity = 0;
    *terminated = position >= MC_GOAL_POSITION && velocity >= 0.0;     /* goal_velocity 0 */
    *reward = -1.0;
    e->state[0] = position;
    e->state[1] = velocity;
    return LOOM_OK;
}

static void mountaincar_observe(const rl_classic *e, float *obs)
{
    obs[0] = (float)e->state[0];
    obs[1] = (float)e->state[1];
}

/* ------------------------------------------------------------------ table */

/* the observation bounds, as gymnasium's float32 Box declares them */
static const double cp_high[4] = { CP_X_THRESHOLD * 2, INFINITY, CP_THETA_THRESHOLD * 2, INFINITY };
static const double cp_low[4] = { -CP_X_THRESHOLD * 2, -INFINITY, -CP_THETA_THRESHOLD * 2, -INFINITY };
static const double pd_high[3] = { 1.0, 1.0, PD_MAX_SPEED }, pd_low[3] = { -1.0, -1.0, -PD_MAX_SPEED };
static const double pd_act_high[1] = { PD_MAX_TORQUE }, pd_act_low[1] = { -PD_MAX_TORQUE };
static const double mc_high[2] = { MC_MAX_POSITION, MC_MAX_SPEED }, mc_low[2] = { MC_MIN_POSITION, -MC_MAX_SPEED };

#define BOX(sz, lo, hi) { .dtype = LOOM_DTYPE_F32, .size = (sz), .n = 0, .low = (lo), .high = (hi) }
#define DISCRETE(k) { .dtype = LOOM_DTYPE_I64, .size = 1, .n = (k), .low = NULL, .high = NULL }
#define SPEC(ID, OBS, ACT, RLO, RHI, MAX) \
    { .struct_size = sizeof(loom_rl_env_spec), .id = (ID), .observation = OBS, .action = ACT, \
      .reward_low = (RLO), .reward_high = (RHI), .max_episode_steps = (MAX) }

static const rl_classic_kind kinds[] = {
    { SPEC("CartPole-v1", BOX(4, cp_low, cp_high), DISCRETE(2), 0.0, 1.0, 500), cartpole_reset, cartpole_step,
      cartpole_observe },
    /* the largest cost: pi^2 + 0.1 * 8^2 + 0.001 * 2^2 */
    { SPEC("Pendulum-v1", BOX(3, pd_low, pd_high), BOX(1, pd_act_low, pd_act_high),
           -(RL_PI * RL_PI + 6.4 + 0.004), 0.0, 200), pendulum_reset, pendulum_step, pendulum_observe },
    { SPEC("MountainCar-v0", BOX(2, mc_low, mc_high), DISCRETE(3), -1.0, -1.0, 200), mountaincar_reset,
      mountaincar_step, mountaincar_observe },
};
#define N_KINDS ((int32_t)(sizeof kinds / sizeof kinds[0]))

static int32_t classic_count(void) { return N_KINDS; }

static const loom_rl_env_spec *classic_spec(int32_t index)
{
    return index >= 0 && index < N_KINDS ? &kinds[index].spec : NULL;
}

static loom_status classic_create(const char *id, void **env)
{
    for (int32_t k = 0; id != NULL && k < N_KINDS; k++) {
        if (strcmp(kinds[k].spec.id, id) != 0)
            continue;
        rl_classic *e = calloc(1, sizeof *e);
        if (e == NULL)
            return pk_host->fail(LOOM_ENOMEM, "%s: out of memory", id);
        e->kind = &kinds[k];
        *env = e;
        return LOOM_OK;
    }
    return pk_host->fail(LOOM_ENOENT, "no environment '%s' (CartPole-v1, Pendulum-v1, MountainCar-v0)",
                         id ? id : "(null)");
}

static void classic_destroy(void *env) { free(env); }

static loom_status classic_reset(void *env, int has_seed, uint64_t seed, void *observation)
{
    rl_classic *e = env;
    if (has_seed || !e->seeded) {
        /* gymnasium seeds an environment never seeded from OS entropy: here the
        ** clock and the environment's address */
        if (!has_seed) {
            struct timespec ts;
            timespec_get(&ts, TIME_UTC);
            seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)e;
        }
        rl_pcg64_seed(&e->rng, seed);
        e->seeded = 1;
    }
    e->kind->reset(e);
    e->elapsed = 0;
    e->was_reset = 1;
    e->kind->observe(e, observation);
    return LOOM_OK;
}

static loom_status classic_step(void *env, const void *action, void *observation, double *reward,
                                uint8_t *terminated, uint8_t *truncated)
{
    rl_classic *e = env;
    if (!e->was_reset)      /* gymnasium's OrderEnforcing: ResetNeeded */
        return pk_host->fail(LOOM_EINVAL, "%s: reset the environment before its first step", e->kind->spec.id);
    loom_status st = e->kind->step(e, action, reward, terminated);
    if (st != LOOM_OK)
        return st;
    e->elapsed++;           /* TimeLimit */
    *truncated = e->kind->spec.max_episode_steps > 0 && e->elapsed >= e->kind->spec.max_episode_steps;
    e->kind->observe(e, observation);
    return LOOM_OK;
}

const loom_rl_env_api rl_classic_envs = {
    .struct_size = sizeof(loom_rl_env_api),
    .count = classic_count,
    .spec = classic_spec,
    .create = classic_create,
    .destroy = classic_destroy,
    .reset = classic_reset,
    .step = classic_step,
};
