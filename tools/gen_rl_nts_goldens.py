#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the NonTensorStack goldens of the rl pack to tests/data/rl/nts/.

    .venv-rl/bin/python tools/gen_rl_nts_goldens.py [OUTDIR]

OUTDIR/py_memmap/   TensorDict.memmap() of make_td(), as tensordict 0.14 writes
                    it: NonTensorStacks of strings and of JSON objects over the
                    batch [3], one of ints over a nested dict's batch [3, 2], a
                    stack of equal values (tensordict stacks those too)
OUTDIR/expect.json  every stack's tolist(), and what indexing gives back:
                    td[1][key], td[[2, 0]][key].tolist()
The C test (tests/rl/test_td_nts.c) loads py_memmap, indexes it, stacks
TensorDicts of its own and saves them: the NonTensorStack meta.json files
must hold the bytes tensordict wrote.
"""
import json
import os
import shutil
import sys

import torch
from tensordict import NonTensorData, TensorDict

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "nts")


def make_td():
    tds = []
    for i in range(3):
        inner = torch.stack(
            [TensorDict({"tag": NonTensorData(10 * i + j), "x": torch.full((), float(j))}, []) for j in range(2)]
        )
        tds.append(
            TensorDict(
                {
                    "obs": torch.full((2,), float(i)),
                    "name": NonTensorData(f"env{i}"),
                    "cfg": NonTensorData({"seed": i, "mode": "train" if i < 2 else "eval"}),
                    "same": NonTensorData("CartPole-v1"),
                    "info": inner,
                },
                [],
            )
        )
    return torch.stack(tds)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    td = make_td()
    td.memmap(os.path.join(OUT, "py_memmap"), num_threads=0)
    expect = {}
    for key in ("name", "cfg", "same", ("info", "tag")):
        name = ".".join(key) if isinstance(key, tuple) else key
        expect[name] = {
            "tolist": td.get(key).tolist(),
            "at1": td[1].get(key) if not isinstance(td[1].get(key), torch.Tensor) else None,
            "pick20": td[torch.tensor([2, 0])].get(key).tolist(),
        }
        if hasattr(expect[name]["at1"], "tolist"):
            expect[name]["at1"] = expect[name]["at1"].tolist()
    with open(os.path.join(OUT, "expect.json"), "w") as f:
        json.dump(expect, f, sort_keys=True)
    back = TensorDict.load_memmap(os.path.join(OUT, "py_memmap"))
    assert back.get("name").tolist() == td.get("name").tolist()


if __name__ == "__main__":
    main()
