#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the replay-buffer goldens of the rl pack to tests/data/rl/replay/.

    .venv-rl/bin/python tools/gen_rl_td_replay_goldens.py [OUTDIR]

From torchrl 0.14 (ReplayBuffer with LazyTensorStorage):

prio_*      PrioritizedSampler(max_capacity=16, alpha=0.7, beta=0.5, eps=1e-8):
            10 items extended, update_priority(arange(10), prio_priority)
            (f32), then 10 more extended (indices 10..15, 0..3: new items get
            the largest raw priority seen). prio_tree1 / prio_tree2: the sum
            tree's leaves after each step (f32); prio_weight_index and
            prio_weight: the importance weights torchrl's sample() gave those
            items after step 1 (every item drawn at least once in 20000
            draws); prio_counts: how often each item came in 200000 draws
            after step 1 (the C test compares its own draws with these and
            with the expected distribution, chi-square).
maxv_*      TensorDictMaxValueWriter(rank_key="reward") over LazyTensorStorage(4):
            three extends of rewards maxv_reward<k>; maxv_index<k> the index
            extend returned, maxv_stored the rewards stored at the end.
"""
import os
import sys

import numpy as np
import torch
from tensordict import TensorDict
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer, TensorDictMaxValueWriter

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "replay")


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a), allow_pickle=False)


def items(n, start):
    return TensorDict({"obs": torch.arange(start, start + n, dtype=torch.float32).unsqueeze(-1)}, batch_size=[n])


def tree_leaves(sampler, n):
    return np.array([sampler._sum_tree[i] for i in range(n)], dtype=np.float32)


def prioritized():
    torch.manual_seed(0)
    np.random.seed(20261201)
    sampler = PrioritizedSampler(max_capacity=16, alpha=0.7, beta=0.5, eps=1e-8)
    rb = ReplayBuffer(storage=LazyTensorStorage(16), sampler=sampler, batch_size=1)
    rb.extend(items(10, 0))
    priority = torch.tensor([0.5, 2.0, 0.1, 1.0, 3.5, 0.25, 1.5, 0.75, 0.3, 2.5], dtype=torch.float32)
    rb.update_priority(torch.arange(10), priority)
    save("prio_priority", priority.numpy())
    save("prio_tree1", tree_leaves(sampler, 10))
    _, info = rb.sample(20000, return_info=True)
    idx = np.asarray(info["index"]).reshape(-1)
    w = np.asarray(info["priority_weight"]).reshape(-1)
    first = {}
    for i, x in zip(idx.tolist(), w.tolist()):
        first.setdefault(i, x)
    assert len(first) == 10, "every item should have been drawn"
    order = sorted(first)
    save("prio_weight_index", np.array(order, dtype=np.int64))
    save("prio_weight", np.array([first[i] for i in order], dtype=np.float32))
    _, info = rb.sample(200000, return_info=True)
    counts = np.bincount(np.asarray(info["index"]).reshape(-1), minlength=10).astype(np.int64)
    save("prio_counts", counts)
    rb.extend(items(10, 100))
    save("prio_tree2", tree_leaves(sampler, 16))


def max_value():
    rb = ReplayBuffer(storage=LazyTensorStorage(4), writer=TensorDictMaxValueWriter(rank_key="reward"), batch_size=1)
    rewards = [[1.0, 5.0, 3.0], [4.0, 0.5, 6.0, 2.0], [7.0, 7.0, 1.0]]
    for k, r in enumerate(rewards):
        td = TensorDict({"reward": torch.tensor(r, dtype=torch.float32),
                         "obs": torch.arange(len(r), dtype=torch.float32) + 10 * k}, batch_size=[len(r)])
        index = rb.extend(td)
        save(f"maxv_reward{k}", np.array(r, dtype=np.float32))
        save(f"maxv_index{k}", np.asarray(index, dtype=np.int64))
    save("maxv_stored", rb.storage["reward"][:len(rb)].numpy().astype(np.float32))


def main():
    os.makedirs(OUT, exist_ok=True)
    prioritized()
    max_value()


if __name__ == "__main__":
    main()
