#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Read a directory loom wrote with rl.td_save back with tensordict and
compare it with the dict of tools/gen_rl_td_goldens.py (the other direction
of the memmap interop test: tests/rl/test_td_memmap.c writes the directory,
by default build/tests/rl/td_from_loom).

    .venv-rl/bin/python tools/check_rl_td_memmap.py [DIR]

Exits 0 when every tensor leaf is bit-identical (same dtype, shape and
bytes), every NonTensorData equal and the key sets and batch sizes the same.
"""
import os
import sys

import torch
from tensordict import TensorDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_rl_td_goldens import make_td  # noqa: E402


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "tests", "rl", "td_from_loom")
    got = TensorDict.load_memmap(path)
    want = make_td()
    problems = []
    if got.batch_size != want.batch_size:
        problems.append(f"batch_size {got.batch_size} != {want.batch_size}")
    gk = set(got.keys(include_nested=True, leaves_only=True))
    wk = set(want.keys(include_nested=True, leaves_only=True))
    if gk != wk:
        problems.append(f"keys differ: only loom {sorted(map(str, gk - wk))}, only tensordict {sorted(map(str, wk - gk))}")
    if got["traj"].batch_size != want["traj"].batch_size:
        problems.append(f"traj batch_size {got['traj'].batch_size} != {want['traj'].batch_size}")
    for key in sorted(gk & wk, key=str):
        g, w = got.get(key), want.get(key)
        if isinstance(w, torch.Tensor):
            if g.dtype != w.dtype or g.shape != w.shape or not torch.equal(g, w):
                problems.append(f"{key}: {g.dtype}{list(g.shape)} != {w.dtype}{list(w.shape)} or values differ")
        elif got[key] != want[key]:
            problems.append(f"{key}: NonTensorData {got[key]!r} != {want[key]!r}")
    from gen_rl_td_goldens import NON_TENSOR
    for name, value in NON_TENSOR.items():
        key = tuple(name.split("."))
        if got[key] != value:
            problems.append(f"{name}: NonTensorData {got[key]!r} != {value!r}")
    if problems:
        print("\n".join(problems))
        return 1
    print(f"{path}: tensordict reads loom's memmap: {len(gk)} leaves and {len(NON_TENSOR)} NonTensorData equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
