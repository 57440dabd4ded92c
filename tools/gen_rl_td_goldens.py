#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the TensorDict memmap goldens of the rl pack to tests/data/rl/td/.

    .venv-rl/bin/python tools/gen_rl_td_goldens.py [OUTDIR]

OUTDIR/py_memmap/   TensorDict.memmap() of the dict made by make_td(), as
                    tensordict 0.14 writes it: meta.json files, one raw
                    .memmap file per leaf, NonTensorData in sub-directories,
                    a key that needs tensordict's filesystem encoding
OUTDIR/expect/      every tensor leaf as <key components joined by '.'>.npy
                    (bf16 as raw '|V2' bytes), and non_tensor.json: each
                    NonTensorData's key and value

The C test (tests/rl/test_td_memmap.c) loads py_memmap and compares it with
expect/, then writes the same dict itself; tools/check_rl_td_memmap.py reads
that directory back with TensorDict.load_memmap and compares it with make_td().
"""
import json
import os
import shutil
import sys

import numpy as np
import torch
from tensordict import NonTensorData, TensorDict

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "td")

# NonTensorData values: a string, a JSON object, a number nested under "next".
NON_TENSOR = {
    "env_name": "CartPole-v1",
    "config": {"lr": 0.001, "layers": [64, 64], "ok": True, "none": None, "name": "ppo"},
    "next.info": 3,
}


def make_td():
    """A batch of 4 with every dtype the layout holds, nested keys, a nested
    dict with an extra batch dim, an empty leaf and NonTensorData."""
    g = torch.Generator().manual_seed(20261201)
    b = 4
    td = TensorDict(
        {
            "observation": torch.randn(b, 3, generator=g),
            "action": torch.randint(-5, 5, (b,), generator=g, dtype=torch.int64),
            "next": TensorDict(
                {
                    "observation": torch.randn(b, 3, generator=g),
                    "reward": torch.randn(b, 1, generator=g),
                    "done": torch.tensor([[False], [True], [False], [True]]),
                },
                batch_size=[b],
            ),
            "a b/c": torch.randn(b, generator=g, dtype=torch.float64),
            "half": torch.randn(b, 2, generator=g).to(torch.float16),
            "brain": torch.randn(b, generator=g).to(torch.bfloat16),
            "pixels": torch.randint(0, 256, (b, 2, 2), generator=g, dtype=torch.uint8),
            "i8": torch.randint(-128, 128, (b,), generator=g, dtype=torch.int8),
            "i16": torch.randint(-1000, 1000, (b,), generator=g, dtype=torch.int16),
            "i32": torch.randint(-100000, 100000, (b,), generator=g, dtype=torch.int32),
            "empty": torch.zeros(b, 0),
            "traj": TensorDict({"x": torch.randn(b, 2, 5, generator=g)}, batch_size=[b, 2]),
        },
        batch_size=[b],
    )
    td["env_name"] = NonTensorData(NON_TENSOR["env_name"], batch_size=[b])
    td["config"] = NonTensorData(NON_TENSOR["config"], batch_size=[b])
    td["next", "info"] = NonTensorData(NON_TENSOR["next.info"], batch_size=[b])
    return td


def to_numpy(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.dtype("V2"))
    return t.numpy()


def main():
    td = make_td()
    mm = os.path.join(OUT, "py_memmap")
    ex = os.path.join(OUT, "expect")
    for d in (mm, ex):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(ex)
    td.memmap(mm, num_threads=0)
    for key, value in td.items(include_nested=True, leaves_only=True):
        name = ".".join(key) if isinstance(key, tuple) else key
        if isinstance(value, torch.Tensor):
            np.save(os.path.join(ex, name.replace("/", "%2F") + ".npy"), to_numpy(value), allow_pickle=False)
    with open(os.path.join(ex, "non_tensor.json"), "w") as f:
        json.dump(NON_TENSOR, f, sort_keys=True)
    back = TensorDict.load_memmap(mm)
    assert (back == td).all(), "tensordict does not read back what it wrote"


if __name__ == "__main__":
    main()
