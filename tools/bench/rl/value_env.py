#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rl pack benchmark against torchrl, on the same inputs in one run.

    .venv-rl/bin/python tools/bench/rl/value_env.py [--threads N] [--cpu]

Value estimators (sidebyside cases): rl.generalized_advantage_estimate over [256, 1000, 1] f32 and f64
trajectories (about 1 step in 12 terminated, 1 in 12 truncated) against
torchrl.objectives.value.functional's generalized_advantage_estimate (the
loop) and vec_generalized_advantage_estimate (what torchrl's GAE module
runs by default); rl.td_lambda_return_estimate and
rl.vtrace_advantage_estimate on the f32 batch against theirs. Throughput in
transitions (steps of one trajectory) per second; the target is the issue's
>= 5x over torchrl for GAE. The ratio is torchrl's time over loom's.

Environments: CartPole-v1 steps per second with 64 environments and a
random policy, `loom rl rollout CartPole-v1 --envs 64` (rl.parallel_env
over the core's pool, the policy's draws included) against gymnasium 1.4's
vector environments on the same budget of steps: gym.make_vec with
vectorization_mode "sync" (SyncVectorEnv, the target: >= 20x) and
"vector_entry_point" (CartPoleVectorEnv, numpy over the batch), each with
action_space.sample() per step. The ratio is loom's steps/s over theirs.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np
import torch
from torchrl.objectives.value import functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sidebyside  # noqa: E402

GAMMA, LMBDA = 0.99, 0.95
B, T = 256, 1000


def batch(dtype, seed=0):
    rng = np.random.default_rng(seed)
    shape = (B, T, 1)
    u = rng.random(shape)
    d = {
        "state_value": rng.uniform(-5, 5, shape).astype(dtype),
        "next_state_value": rng.uniform(-5, 5, shape).astype(dtype),
        "reward": rng.uniform(-1, 2, shape).astype(dtype),
        "log_pi": rng.uniform(-2.5, 0, shape).astype(dtype),
        "log_mu": rng.uniform(-2.5, 0, shape).astype(dtype),
        "done": u < 2 / 12,
        "terminated": u < 1 / 12,
    }
    return d, {k: torch.from_numpy(v) for k, v in d.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call (a shared machine)")
    args = ap.parse_args()
    cases = []
    gae_in = ("state_value", "next_state_value", "reward", "done", "terminated")
    gl = {"gamma": str(GAMMA), "lmbda": str(LMBDA)}
    for dtype, name in ((np.float32, "f32"), (np.float64, "f64")):
        d, t = batch(dtype)
        ins = {k: d[k] for k in gae_in}
        cases.append(sidebyside.Case(
            name=f"GAE [{B},{T},1] {name} vs torchrl loop", op="rl.generalized_advantage_estimate", inputs=ins,
            attrs=gl, items=B * T, unit="steps/s", target=5.0, repeat=10,
            reference=lambda t=t: F.generalized_advantage_estimate(
                GAMMA, LMBDA, t["state_value"], t["next_state_value"], t["reward"], t["done"], t["terminated"])))
        cases.append(sidebyside.Case(
            name=f"GAE [{B},{T},1] {name} vs torchrl vec", op="rl.generalized_advantage_estimate", inputs=ins,
            attrs=gl, items=B * T, unit="steps/s", target=5.0, repeat=10,
            reference=lambda t=t: F.vec_generalized_advantage_estimate(
                GAMMA, LMBDA, t["state_value"], t["next_state_value"], t["reward"], t["done"], t["terminated"])))
    d, t = batch(np.float32)
    cases.append(sidebyside.Case(
        name=f"TD(lambda) [{B},{T},1] f32", op="rl.td_lambda_return_estimate",
        inputs={k: d[k] for k in ("next_state_value", "reward", "done", "terminated")}, attrs=gl,
        items=B * T, unit="steps/s", repeat=10,
        reference=lambda: F.td_lambda_return_estimate(GAMMA, LMBDA, t["next_state_value"], t["reward"], t["done"],
                                                      t["terminated"])))
    cases.append(sidebyside.Case(
        name=f"V-trace [{B},{T},1] f32", op="rl.vtrace_advantage_estimate",
        inputs={k: d[k] for k in ("log_pi", "log_mu", "state_value", "next_state_value", "reward", "done",
                                  "terminated")},
        attrs={"gamma": str(GAMMA)}, items=B * T, unit="steps/s", repeat=10,
        reference=lambda: F.vtrace_advantage_estimate(GAMMA, t["log_pi"], t["log_mu"], t["state_value"],
                                                      t["next_state_value"], t["reward"], t["done"], t["terminated"])))
    with torch.no_grad():
        sidebyside.run(cases, "rl value estimators vs torchrl", threads=args.threads, cpu=args.cpu)
    cartpole(args.threads or int(os.environ.get("LOOM_NUM_THREADS", os.cpu_count() or 1)))


def gym_steps_per_s(mode, n_envs, steps):
    import gymnasium as gym
    env = gym.make_vec("CartPole-v1", num_envs=n_envs, vectorization_mode=mode)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(50):                   # warm-up
        env.step(env.action_space.sample())
    t0 = time.perf_counter()
    for _ in range(steps):
        env.step(env.action_space.sample())
    secs = time.perf_counter() - t0
    env.close()
    return n_envs * steps / secs


def loom_steps_per_s(n_envs, steps, threads):
    env = dict(os.environ, LOOM_NUM_THREADS=str(threads))
    out = subprocess.run([sidebyside.loom_cli(), "rl", "rollout", "CartPole-v1", "--envs", str(n_envs), "--steps",
                          str(steps), "--policy", "random"], capture_output=True, text=True, env=env, check=True)
    return float(re.search(r"^([0-9.]+) steps/s", out.stdout, re.M).group(1))


def cartpole(threads, n_envs=64, steps=2000):
    print(f"\nCartPole-v1, {n_envs} environments, random policy, {steps} steps each: loom {threads} threads")
    ours = max(loom_steps_per_s(n_envs, steps, threads) for _ in range(3))
    print(f"{'reference':<44} {'loom':>12} {'reference':>12} {'unit':<8} {'ratio':>7} {'target':>7}")
    for mode, target in (("sync", 20.0), ("vector_entry_point", None)):
        theirs = max(gym_steps_per_s(mode, n_envs, steps // 4) for _ in range(2))
        label = f"gymnasium make_vec {mode}"
        tgt = f"{target:.1f}x" if target else ""
        print(f"{label:<44} {ours:>12.4g} {theirs:>12.4g} {'steps/s':<8} {ours / theirs:>6.2f}x {tgt:>7}")


if __name__ == "__main__":
    main()
