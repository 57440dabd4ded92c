#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden trajectories of the rl pack's environments to
tests/data/rl/envs/, from gymnasium 1.4 (gym.make, so with its TimeLimit).

For each environment and seed: reset(seed=seed), then STEPS steps of
seeded random actions; whenever a step ends the episode (terminated or
truncated) the next one starts with reset() without a seed, which
continues the generator's stream. Saved per <env>_<seed>_:
    actions      [STEPS] i64 (discrete) or [STEPS, 1] f32 (box)
    observation  [STEPS, obs] f32, after each step
    reward       [STEPS] f64
    terminated, truncated  [STEPS] bool
    reset_observation  [R, obs] f32: the first reset's, then every later reset's

Then TorchRL's auto-reset, which rl.parallel_env follows: a SerialEnv of
GymEnv("CartPole-v1") seeded with set_seed(5) (gymnasium's reset(seed=5);
the rollout's own reset then continues the stream) and rolled out for 300
seeded random actions with break_when_any_done=False, saved as
torchrl_serial_CartPole-v1_5_: actions, observation (each step's root),
next_observation, reward, terminated, truncated, done.

    .venv-rl/bin/python tools/gen_rl_env_goldens.py [OUTDIR]
"""
import os
import sys

import gymnasium as gym
import numpy as np

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rl", "envs")
# id: (seeds, steps): CartPole episodes end early (terminations), the others at the time limit
ENVS = {"CartPole-v1": ((0, 7, 123456789), 600), "Pendulum-v1": ((0, 42), 230), "MountainCar-v0": ((3,), 230),
        "MountainCarContinuous-v0": ((11,), 300), "Acrobot-v1": ((2,), 520)}
# CartPole balanced by a simple controller (push towards where the pole falls) reaches the
# 500-step time limit: this seed's actions come from it
BALANCED = ("CartPole-v1", 5, 520)


def balance(obs):
    return int(obs[2] + np.float32(0.5) * obs[3] > 0)


def main():
    os.makedirs(OUT, exist_ok=True)
    runs = [(env_id, seed, steps) for env_id, (seeds, steps) in ENVS.items() for seed in seeds] + [BALANCED]
    for env_id, seed, steps in runs:
        if True:
            env = gym.make(env_id)
            rng = np.random.default_rng(seed + 1000)
            if isinstance(env.action_space, gym.spaces.Discrete):
                actions = rng.integers(0, env.action_space.n, size=steps).astype(np.int64)
            else:
                lo, hi = env.action_space.low[0], env.action_space.high[0]
                # some actions beyond the bounds: the environment clips them
                actions = rng.uniform(1.25 * lo, 1.25 * hi, size=(steps, 1)).astype(np.float32)
            obs, _ = env.reset(seed=seed)
            resets, o, r, te, tr = [obs], [], [], [], []
            for k in range(steps):
                if (env_id, seed, steps) == BALANCED:
                    actions[k] = balance(obs)
                a = int(actions[k]) if actions.ndim == 1 else actions[k]
                obs, reward, terminated, truncated, _ = env.step(a)
                o.append(obs), r.append(reward), te.append(terminated), tr.append(truncated)
                if terminated or truncated:
                    obs, _ = env.reset()
                    resets.append(obs)
            p = os.path.join(OUT, "%s_%d_" % (env_id, seed))
            np.save(p + "actions.npy", actions)
            np.save(p + "observation.npy", np.array(o, dtype=np.float32))
            np.save(p + "reward.npy", np.array(r, dtype=np.float64))
            np.save(p + "terminated.npy", np.array(te, dtype=np.bool_))
            np.save(p + "truncated.npy", np.array(tr, dtype=np.bool_))
            np.save(p + "reset_observation.npy", np.array(resets, dtype=np.float32))
            print(env_id, seed, "episodes:", len(resets) - 1, "terminated:", int(np.sum(te)), "truncated:", int(np.sum(tr)))
    torchrl_serial()
    print("wrote", os.path.normpath(OUT))


def torchrl_serial(env_id="CartPole-v1", seed=5, steps=300):
    import torch
    from torchrl.envs import GymEnv, SerialEnv
    env = SerialEnv(1, lambda: GymEnv(env_id, categorical_action_encoding=True))
    env.set_seed(seed, static_seed=True)
    actions = torch.from_numpy(np.random.default_rng(seed).integers(0, 2, size=steps))
    k = iter(range(steps))

    def policy(td):
        td["action"] = actions[next(k)].reshape(1)
        return td

    td = env.rollout(steps, policy, break_when_any_done=False)[0]
    p = os.path.join(OUT, "torchrl_serial_%s_%d_" % (env_id, seed))
    np.save(p + "actions.npy", actions.numpy().astype(np.int64))
    np.save(p + "observation.npy", td["observation"].numpy())
    for key in ("observation", "reward", "terminated", "truncated", "done"):
        np.save(p + ("next_observation" if key == "observation" else key) + ".npy", td["next", key].numpy())
    env.close()
    print("torchrl SerialEnv", env_id, seed, "episodes:", int(td["next", "done"].sum()))


if __name__ == "__main__":
    main()
