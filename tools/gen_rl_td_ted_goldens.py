#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a small TED dataset (TorchRL Episode Data) to tests/data/rl/ted/.

    .venv-rl/bin/python tools/gen_rl_td_ted_goldens.py [OUTDIR]

cartpole/  two CartPole-v1 rollouts of 20 steps (torchrl's GymEnv over
           gymnasium, seeds 0 and 1, random actions from a seeded generator,
           episodes reset inside a rollout), stacked to batch [2, 20] and
           saved with TensorDict.memmap: observation, action, done,
           terminated, truncated at the root, their ("next", ...) values and
           ("next", "reward"), as torchrl's collectors and datasets lay them
           out. tests/rl/test_ted.c streams it into an rl.replay_buffer.
"""
import os
import shutil
import sys

import torch
from torchrl.envs import GymEnv

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "ted")


def rollout(seed):
    env = GymEnv("CartPole-v1")
    env.set_seed(seed)
    g = torch.Generator().manual_seed(seed)

    def policy(td):
        td["action"] = torch.nn.functional.one_hot(torch.randint(0, 2, (), generator=g), 2).to(torch.int64)
        return td

    return env.rollout(20, policy, break_when_any_done=False)


def main():
    td = torch.stack([rollout(0), rollout(1)]).contiguous()
    p = os.path.join(OUT, "cartpole")
    shutil.rmtree(p, ignore_errors=True)
    os.makedirs(OUT, exist_ok=True)
    td.memmap(p, num_threads=0)
    print(td)


if __name__ == "__main__":
    main()
