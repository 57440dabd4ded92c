#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the rl value estimators to tests/data/rl/value/.

The expected outputs come from torchrl.objectives.value.functional
(torchrl 0.14.1): generalized_advantage_estimate, td0_return_estimate,
td_lambda_return_estimate and vtrace_advantage_estimate, on seeded
batches of trajectories concatenated along time, with mid-trajectory
terminations and truncations (done = terminated | truncated), so every
boundary rule is exercised: a truncated step bootstraps and cuts the chain,
a terminated one cuts it without bootstrap.

    .venv-rl/bin/python tools/gen_rl_value_goldens.py [OUTDIR]

Shapes: [11, 37, 1] (a block of 8 rows of the AVX2 body, 3 rows more, 37
steps: 4 groups of 8 and a tail), [3, 20, 2] (two features per step) and
[3, 2, 17] with time_dim -1. The attributes are those of
tests/rl/test_value_goldens.c (GAMMA, LMBDA, ...).
"""
import os
import sys

import numpy as np
import torch
from torchrl.objectives.value import functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rl", "value")
GAMMA, LMBDA = 0.99, 0.95
RHO_THRESH, C_THRESH = 0.9, 1.1        # the second V-trace case; the first uses torchrl's 1.0, 1.0
DTYPES = {"f32": torch.float32, "f64": torch.float64}
CASES = {"a": ((11, 37, 1), -2), "b": ((3, 20, 2), -2), "c": ((3, 2, 17), -1)}


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.contiguous().numpy(), allow_pickle=False)


def trajectories(gen, shape, dtype):
    """Values, rewards and flags: about 1 step in 12 terminates, 1 in 12 is truncated."""
    def rnd(lo, hi):
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).to(dtype)
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    terminated = u < 1 / 12
    truncated = (u >= 1 / 12) & (u < 2 / 12)
    return {
        "state_value": rnd(-5, 5), "next_state_value": rnd(-5, 5), "reward": rnd(-1, 2),
        "log_pi": rnd(-2.5, 0), "log_mu": rnd(-2.5, 0),
        "done": terminated | truncated, "terminated": terminated,
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(20)
    for case, (shape, time_dim) in CASES.items():
        for name, dtype in DTYPES.items():
            d = trajectories(gen, shape, dtype)
            p = "%s_%s_" % (case, name)
            for k, t in d.items():
                save(p + k, t)
            adv, vt = F.generalized_advantage_estimate(GAMMA, LMBDA, d["state_value"], d["next_state_value"],
                                                       d["reward"], d["done"], d["terminated"], time_dim=time_dim)
            save(p + "gae_advantage", adv)
            save(p + "gae_value_target", vt)
            # terminated absent: torchrl takes done
            adv, vt = F.generalized_advantage_estimate(GAMMA, LMBDA, d["state_value"], d["next_state_value"],
                                                       d["reward"], d["done"], time_dim=time_dim)
            save(p + "gae_noterm_advantage", adv)
            save(p + "td0_returns", F.td0_return_estimate(GAMMA, d["next_state_value"], d["reward"], d["terminated"]))
            save(p + "tdl_returns", F.td_lambda_return_estimate(GAMMA, LMBDA, d["next_state_value"], d["reward"],
                                                                d["done"], d["terminated"], time_dim=time_dim))
            adv, vs = F.vtrace_advantage_estimate(GAMMA, d["log_pi"], d["log_mu"], d["state_value"],
                                                  d["next_state_value"], d["reward"], d["done"], d["terminated"],
                                                  time_dim=time_dim)
            save(p + "vtrace_advantage", adv)
            save(p + "vtrace_value_target", vs)
            adv, vs = F.vtrace_advantage_estimate(GAMMA, d["log_pi"], d["log_mu"], d["state_value"],
                                                  d["next_state_value"], d["reward"], d["done"], d["terminated"],
                                                  rho_thresh=RHO_THRESH, c_thresh=C_THRESH, time_dim=time_dim)
            save(p + "vtrace_clip_advantage", adv)
            save(p + "vtrace_clip_value_target", vs)
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
