#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rl pack benchmark against torchrl, on the same inputs in one run.

    .venv-rl/bin/python tools/bench/rl/value_env.py [--threads N] [--cpu]

Cases: rl.generalized_advantage_estimate over [256, 1000, 1] f32 and f64
trajectories (about 1 step in 12 terminated, 1 in 12 truncated) against
torchrl.objectives.value.functional's generalized_advantage_estimate (the
loop) and vec_generalized_advantage_estimate (what torchrl's GAE module
runs by default); rl.td_lambda_return_estimate and
rl.vtrace_advantage_estimate on the f32 batch against theirs. Throughput in
transitions (steps of one trajectory) per second; the target is the issue's
>= 5x over torchrl for GAE. The ratio is torchrl's time over loom's.
"""
import argparse
import os
import sys

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


if __name__ == "__main__":
    main()
