#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the SliceSampler and max_priority_within_buffer goldens of the rl
pack to tests/data/rl/slice/.

    .venv-rl/bin/python tools/gen_rl_slice_goldens.py [OUTDIR]

Deterministic given the stored items, so compared exactly:
  <scn>_items.npy           i64 [N, 3]: episode, done, extend number of every item
                            in the order the extends wrote them (capacity 10)
  <scn>_<key>_bounds.npy    i64 [3, T]: start, stop, length of the trajectories
                            torchrl's SliceSampler recovers (traj_key "episode",
                            or end_key ("next", "done") on a storage without it):
                            a full storage is circular and its last written slot
                            ends a trajectory
  prio_<mode>.npy           f64 [steps, 10 + 1]: after each step of PRIO_STEPS, the
                            sum tree's leaves and the raw max priority (NaN: none),
                            mode within (max_priority_within_buffer=True) or ever
Random (torchrl's torch generator is not loom's), so compared by support:
  support_<cfg>.npy         i64 [K, W]: every distinct slice (storage indices,
                            -1 after its end) among DRAWS samples of torchrl's
                            SliceSampler with that configuration on scenario
                            "wrapped"; padded configurations as index * 2 + mask.
                            torchrl's span=True may also draw empty slices (a start
                            one past the end): they are left out, loom draws none
"""
import os
import shutil
import sys

import numpy as np
import torch
from tensordict import TensorDict
from torchrl.data import LazyTensorStorage, PrioritizedSampler, ReplayBuffer, SliceSampler, TensorDictReplayBuffer

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "slice")
CAP = 10
DRAWS = 3000
# each scenario: episodes as (episode id, length), written one extend each
SCENARIOS = {
    "partial": [(0, 3), (1, 4)],
    "wrapped": [(0, 6), (1, 6), (2, 2)],
    "ends_lost": [(0, 4), (1, 5), (2, 3)],
}
# slice configurations sampled on "wrapped": (name, SliceSampler kwargs, batch size)
CONFIGS = [
    ("strict", dict(slice_len=4), 8),
    ("loose", dict(slice_len=4, strict_length=False), 8),
    ("padded", dict(slice_len=4, strict_length=False, pad_output=True), 8),
    ("span_all", dict(slice_len=4, span=True), 8),
    ("span_2_all", dict(slice_len=4, span=(2, True)), 8),
    ("span_int", dict(slice_len=4, span=(1, 2)), 8),
    # an integer span with short trajectories kept fails in torchrl (it compares
    # the span with a tensor of slice lengths), so span=True there
    ("span_loose", dict(slice_len=4, span=True, strict_length=False), 8),
]
# prioritized steps: ("extend", n) or ("update", indices, priorities)
PRIO_STEPS = [
    ("extend", 5),
    ("update", [0, 2, 4], [5.0, 0.5, 2.0]),
    ("extend", 2),
    ("update", [0], [0.25]),
    ("extend", 4),
    ("update", [3, 6], [7.5, 1.0]),
    ("extend", 3),
    ("update", [3], [0.125]),
    ("extend", 1),
]


def scenario_items(episodes, with_episode=True):
    parts = []
    for ext, (ep, n) in enumerate(episodes):
        done = torch.zeros(n, 1, dtype=torch.bool)
        done[-1] = True
        d = {"next": {"done": done}, "obs": torch.arange(n, dtype=torch.float32).unsqueeze(-1)}
        if with_episode:
            d["episode"] = torch.full((n,), ep, dtype=torch.int64)
        parts.append((TensorDict(d, batch_size=[n]), ep, done, ext))
    return parts


def buffer(sampler, episodes, with_episode=True):
    rb = TensorDictReplayBuffer(storage=LazyTensorStorage(CAP), sampler=sampler, batch_size=8)
    for td, _, _, _ in scenario_items(episodes, with_episode):
        rb.extend(td)
    return rb


def slices_of(sample, padded):
    index = sample["index"].reshape(-1).tolist()
    trunc = sample["next", "truncated"].reshape(-1).tolist()
    mask = sample["collector", "mask"].reshape(-1).tolist() if padded else [True] * len(index)
    out, cur = [], []
    for i, t, m in zip(index, trunc, mask):
        cur.append(i * 2 + int(m) if padded else i)
        if padded:
            if len(cur) == 4:
                out.append(tuple(cur))
                cur = []
        elif t:
            out.append(tuple(cur))
            cur = []
    assert not cur
    return out


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for scn, episodes in SCENARIOS.items():
        rows = []
        for _, ep, done, ext in scenario_items(episodes):
            for k in range(done.shape[0]):
                rows.append([ep, int(done[k, 0]), ext])
        np.save(os.path.join(OUT, f"{scn}_items.npy"), np.array(rows, dtype=np.int64))
        for key, kw, with_ep in (("traj", dict(traj_key="episode"), True), ("end", dict(end_key=("next", "done")), False)):
            sampler = SliceSampler(slice_len=2, **kw)
            rb = buffer(sampler, episodes, with_ep)
            start, stop, length = sampler._get_stop_and_length(rb._storage)
            np.save(os.path.join(OUT, f"{scn}_{key}_bounds.npy"),
                    np.stack([start[:, 0].numpy(), stop[:, 0].numpy(), length.numpy()]).astype(np.int64))
    torch.manual_seed(20261201)
    for name, kw, batch in CONFIGS:
        sampler = SliceSampler(traj_key="episode", **kw)
        rb = buffer(sampler, SCENARIOS["wrapped"])
        seen = set()
        for _ in range(DRAWS):
            try:
                sample = rb.sample(batch)
            except RuntimeError:
                # span=True can draw a start one past a trajectory's end (an empty
                # slice); a batch of only such slices fails in torchrl's marking
                continue
            seen.update(s for s in slices_of(sample, kw.get("pad_output", False)) if s)
        width = max(len(s) for s in seen)
        arr = np.full((len(seen), width), -1, dtype=np.int64)
        for r, s in enumerate(sorted(seen)):
            arr[r, : len(s)] = s
        np.save(os.path.join(OUT, f"support_{name}.npy"), arr)
    for mode in ("within", "ever"):
        sampler = PrioritizedSampler(CAP, alpha=0.7, beta=0.5, max_priority_within_buffer=mode == "within")
        rb = ReplayBuffer(storage=LazyTensorStorage(CAP), sampler=sampler)
        rows = []
        for step in PRIO_STEPS:
            if step[0] == "extend":
                rb.extend(TensorDict({"obs": torch.zeros(step[1], 1)}, batch_size=[step[1]]))
            else:
                rb.update_priority(torch.tensor(step[1]), torch.tensor(step[2]))
            leaves = [float(sampler._sum_tree[i]) for i in range(CAP)]
            mp = sampler._max_priority[0]
            rows.append(leaves + [float("nan") if mp is None else float(mp)])
        np.save(os.path.join(OUT, f"prio_{mode}.npy"), np.array(rows, dtype=np.float64))


if __name__ == "__main__":
    main()
