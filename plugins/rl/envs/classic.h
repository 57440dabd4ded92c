/* SPDX-License-Identifier: BSD-3-Clause */
/*
** classic.h - gymnasium 1.4's classic-control environments, as gym.make
** gives them (the TimeLimit wrapper included): CartPole-v1, Pendulum-v1,
** MountainCar-v0, MountainCarContinuous-v0 and Acrobot-v1, offered through
** the rl.env interface
** (loom/rl_env.h). Equations, constants, termination and truncation are
** gymnasium's; the reset states are drawn from gymnasium's generator
** (pcg64.h), so a seed and a list of actions give gymnasium's trajectory.
** Arithmetic follows numpy's types step by step (NumPy 2 promotion: a
** float32 action times a Python float stays float32), as each step says.
*/
#ifndef LOOM_RL_CLASSIC_H
#define LOOM_RL_CLASSIC_H

#include "loom/rl_env.h"

/* The vtable this pack registers as rl.env v1 (classic.c). */
extern const loom_rl_env_api rl_classic_envs;

#endif /* LOOM_RL_CLASSIC_H */
