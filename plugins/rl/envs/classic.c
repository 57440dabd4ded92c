/* SPDX-License-Identifier: BSD-3-Clause */
/*
** classic.c - CartPole-v1, Pendulum-v1, MountainCar-v0, MountainCarContinuous-v0
** and Acrobot-v1 (classic.h).
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


/* -------------------------------------------------- MountainCarContinuous */

/* Its step mixes NumPy 2 scalar types: the state is float64 after reset
** and float32 after every step (np.array(..., dtype=np.float32)), the
** action is float32, the constants are Python floats (weak: they take the
** other operand's type). A value here carries its type, and each operation
** follows NEP 50: float64 if either side is float64, else float32 if
** either is float32 (computed and rounded in float), else a Python float. */
typedef enum { NP_PY, NP_F32, NP_F64 } np_kind;
typedef struct np_val {
    double v;
    np_kind k;
} np_val;

static np_val np_make(double v, np_kind k) { return (np_val){ k == NP_F32 ? (double)(float)v : v, k }; }
static np_kind np_join(np_val a, np_val b)
{
    return a.k == NP_F64 || b.k == NP_F64 ? NP_F64 : a.k == NP_F32 || b.k == NP_F32 ? NP_F32 : NP_PY;
}
static np_val np_add(np_val a, np_val b)
{
    const np_kind k = np_join(a, b);
    return k == NP_F32 ? np_make((double)((float)a.v + (float)b.v), k) : np_make(a.v + b.v, k);
}
static np_val np_sub(np_val a, np_val b)
{
    const np_kind k = np_join(a, b);
    return k == NP_F32 ? np_make((double)((float)a.v - (float)b.v), k) : np_make(a.v - b.v, k);
}
static np_val np_mul(np_val a, np_val b)
{
    const np_kind k = np_join(a, b);
    return k == NP_F32 ? np_make((double)((float)a.v * (float)b.v), k) : np_make(a.v * b.v, k);
}
static np_val py(double v) { return np_make(v, NP_PY); }

#define MCC_POWER 0.0015
#define MCC_GOAL_POSITION 0.45

/* state[2] holds the state's type: 0 float64 (after reset), 1 float32 */
static void mountaincar_cont_reset(rl_classic *e)
{
    e->state[0] = rl_pcg64_uniform(&e->rng, -0.6, -0.4);
    e->state[1] = 0.0;
    e->state[2] = 0.0;
}

static loom_status mountaincar_cont_step(rl_classic *e, const void *action, double *reward, uint8_t *terminated)
{
    float a0;
    memcpy(&a0, action, sizeof a0);
    if (isnan(a0))
        return pk_host->fail(LOOM_EINVAL, "MountainCarContinuous-v0: the action is NaN");
    const np_kind sk = e->state[2] != 0.0 ? NP_F32 : NP_F64;
    np_val position = np_make(e->state[0], sk), velocity = np_make(e->state[1], sk);
    /* force = min(max(action[0], -1.0), 1.0): Python's min and max return one of their arguments */
    np_val force = np_make(a0, NP_F32);
    if (!((double)a0 > -1.0))
        force = py(-1.0);
    if (!(force.v < 1.0))
        force = py(1.0);
    /* velocity += force * power - 0.0025 * math.cos(3 * position) */
    const np_val c = py(cos(np_mul(py(3.0), position).v));
    velocity = np_add(velocity, np_sub(np_mul(force, py(MCC_POWER)), np_mul(py(0.0025), c)));
    if (velocity.v > MC_MAX_SPEED)
        velocity = py(MC_MAX_SPEED);
    if (velocity.v < -MC_MAX_SPEED)
        velocity = py(-MC_MAX_SPEED);
    position = np_add(position, velocity);
    if (position.v > MC_MAX_POSITION)
        position = py(MC_MAX_POSITION);
    if (position.v < MC_MIN_POSITION)
        position = py(MC_MIN_POSITION);
    if (position.v == MC_MIN_POSITION && velocity.v < 0)
        velocity = py(0.0);
    *terminated = position.v >= MCC_GOAL_POSITION && velocity.v >= 0.0;
    double r = *terminated ? 100.0 : 0.0;
    r -= pow((double)a0, 2) * 0.1;        /* math.pow(action[0], 2) * 0.1 */
    *reward = r;
    e->state[0] = (double)(float)position.v;      /* np.array([...], dtype=np.float32) */
    e->state[1] = (double)(float)velocity.v;
    e->state[2] = 1.0;
    return LOOM_OK;
}

/* ----------------------------------------------------------------- Acrobot */

#define AC_DT 0.2
#define AC_L1 1.0
#define AC_M1 1.0
#define AC_M2 1.0
#define AC_LC1 0.5
#define AC_LC2 0.5
#define AC_I 1.0
#define AC_G 9.8
#define AC_MAX_VEL_1 (4 * RL_PI)
#define AC_MAX_VEL_2 (9 * RL_PI)

static void acrobot_reset(rl_classic *e)
{
    for (int i = 0; i < 4; i++)     /* uniform(-0.1, 0.1, size=(4,)).astype(np.float32); the steps are float64 */
        e->state[i] = (double)(float)rl_pcg64_uniform(&e->rng, -0.1, 0.1);
}

/* _dsdt ("book" dynamics), Python's evaluation order term by term */
static void acrobot_dsdt(const double y[5], double dy[5])
{
    const double a = y[4], theta1 = y[0], theta2 = y[1], dtheta1 = y[2], dtheta2 = y[3];
    const double d1 = AC_M1 * (AC_LC1 * AC_LC1) +
                      AC_M2 * (AC_L1 * AC_L1 + AC_LC2 * AC_LC2 + 2 * AC_L1 * AC_LC2 * cos(theta2)) + AC_I + AC_I;
    const double d2 = AC_M2 * (AC_LC2 * AC_LC2 + AC_L1 * AC_LC2 * cos(theta2)) + AC_I;
    const double phi2 = AC_M2 * AC_LC2 * AC_G * cos(theta1 + theta2 - RL_PI / 2.0);
    const double phi1 = -AC_M2 * AC_L1 * AC_LC2 * (dtheta2 * dtheta2) * sin(theta2) -
                        2 * AC_M2 * AC_L1 * AC_LC2 * dtheta2 * dtheta1 * sin(theta2) +
                        (AC_M1 * AC_LC1 + AC_M2 * AC_L1) * AC_G * cos(theta1 - RL_PI / 2) + phi2;
    const double ddtheta2 = (a + d2 / d1 * phi1 - AC_M2 * AC_L1 * AC_LC2 * (dtheta1 * dtheta1) * sin(theta2) - phi2) /
                            (AC_M2 * (AC_LC2 * AC_LC2) + AC_I - (d2 * d2) / d1);
    const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    dy[0] = dtheta1, dy[1] = dtheta2, dy[2] = ddtheta1, dy[3] = ddtheta2, dy[4] = 0.0;
}

static double ac_wrap(double x, double m, double M)
{
    const double diff = M - m;
    while (x > M)
        x = x - diff;
    while (x < m)
        x = x + diff;
    return x;
}

static loom_status acrobot_step(rl_classic *e, const void *action, double *reward, uint8_t *terminated)
{
    static const double torques[3] = { -1.0, 0.0, 1.0 };
    int64_t a;
    memcpy(&a, action, sizeof a);
    if (a < 0 || a > 2)
        return pk_host->fail(LOOM_EINVAL, "Acrobot-v1: action %lld is not in Discrete(3)", (long long)a);
    /* rk4 over t = [0, dt] of the state with the torque appended (torque noise 0) */
    double y0[5] = { e->state[0], e->state[1], e->state[2], e->state[3], torques[a] }, k1[5], k2[5], k3[5], k4[5], y[5];
    const double dt = AC_DT - 0, dt2 = dt / 2.0;
    acrobot_dsdt(y0, k1);
    for (int i = 0; i < 5; i++)
        y[i] = y0[i] + dt2 * k1[i];
    acrobot_dsdt(y, k2);
    for (int i = 0; i < 5; i++)
        y[i] = y0[i] + dt2 * k2[i];
    acrobot_dsdt(y, k3);
    for (int i = 0; i < 5; i++)
        y[i] = y0[i] + dt * k3[i];
    acrobot_dsdt(y, k4);
    for (int i = 0; i < 4; i++)
        y[i] = y0[i] + dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    e->state[0] = ac_wrap(y[0], -RL_PI, RL_PI);
    e->state[1] = ac_wrap(y[1], -RL_PI, RL_PI);
    e->state[2] = clip(y[2], -AC_MAX_VEL_1, AC_MAX_VEL_1);
    e->state[3] = clip(y[3], -AC_MAX_VEL_2, AC_MAX_VEL_2);
    *terminated = -cos(e->state[0]) - cos(e->state[1] + e->state[0]) > 1.0;
    *reward = *terminated ? 0.0 : -1.0;
    return LOOM_OK;
}

static void acrobot_observe(const rl_classic *e, float *obs)
{
    obs[0] = (float)cos(e->state[0]);
    obs[1] = (float)sin(e->state[0]);
    obs[2] = (float)cos(e->state[1]);
    obs[3] = (float)sin(e->state[1]);
    obs[4] = (float)e->state[2];
    obs[5] = (float)e->state[3];
}

/* ------------------------------------------------------------------ table */

/* the observation bounds, as gymnasium's float32 Box declares them */
static const double cp_high[4] = { CP_X_THRESHOLD * 2, INFINITY, CP_THETA_THRESHOLD * 2, INFINITY };
static const double cp_low[4] = { -CP_X_THRESHOLD * 2, -INFINITY, -CP_THETA_THRESHOLD * 2, -INFINITY };
static const double pd_high[3] = { 1.0, 1.0, PD_MAX_SPEED }, pd_low[3] = { -1.0, -1.0, -PD_MAX_SPEED };
static const double pd_act_high[1] = { PD_MAX_TORQUE }, pd_act_low[1] = { -PD_MAX_TORQUE };
static const double mc_high[2] = { MC_MAX_POSITION, MC_MAX_SPEED }, mc_low[2] = { MC_MIN_POSITION, -MC_MAX_SPEED };
static const double mcc_act_high[1] = { 1.0 }, mcc_act_low[1] = { -1.0 };
static const double ac_high[6] = { 1.0, 1.0, 1.0, 1.0, AC_MAX_VEL_1, AC_MAX_VEL_2 };
static const double ac_low[6] = { -1.0, -1.0, -1.0, -1.0, -AC_MAX_VEL_1, -AC_MAX_VEL_2 };

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
    { SPEC("MountainCarContinuous-v0", BOX(2, mc_low, mc_high), BOX(1, mcc_act_low, mcc_act_high), -INFINITY,
           100.0, 999), mountaincar_cont_reset, mountaincar_cont_step, mountaincar_observe },
    { SPEC("Acrobot-v1", BOX(6, ac_low, ac_high), DISCRETE(3), -1.0, 0.0, 500), acrobot_reset, acrobot_step,
      acrobot_observe },
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
    return pk_host->fail(LOOM_ENOENT, "no environment '%s' (CartPole-v1, Pendulum-v1, MountainCar-v0, "
                         "MountainCarContinuous-v0, Acrobot-v1)",
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
