#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the MemoryMappedTensor goldens of the rl pack to tests/data/rl/mmt/.

    .venv-rl/bin/python tools/gen_rl_mmt_goldens.py [OUTDIR]

For every case NAME of CASES:
  NAME.memmap   MemoryMappedTensor.from_tensor(value, filename=...) as
                tensordict 0.14 writes it (raw bytes, C order, no header)
  NAME.npy      the same value (the C test makes its own file from it and
                compares the bytes, and reads NAME.memmap back with
                from_filename and compares the values)
and two files that tensordict fills in place:
  empty.memmap  MemoryMappedTensor.empty((3, 2), dtype=torch.float32)
  rows.memmap   MemoryMappedTensor.empty((4, 3), dtype=torch.int64), then
                t[1:3] = rows.npy and t[3] = 7 through the mapping
"""
import os
import shutil
import sys

import numpy as np
import torch
from tensordict import MemoryMappedTensor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "mmt")


def cases():
    g = torch.Generator().manual_seed(20261201)
    return {
        "f32": torch.randn(3, 4, generator=g),
        "f64": torch.randn(2, 2, 2, generator=g, dtype=torch.float64),
        "f16": torch.randn(5, generator=g).to(torch.float16),
        "i64": torch.randint(-(2**40), 2**40, (6,), generator=g, dtype=torch.int64),
        "i32": torch.randint(-100000, 100000, (2, 3), generator=g, dtype=torch.int32),
        "i16": torch.randint(-1000, 1000, (4,), generator=g, dtype=torch.int16),
        "u8": torch.randint(0, 256, (2, 2, 3), generator=g, dtype=torch.uint8),
        "bool": torch.rand(3, 3, generator=g) > 0.5,
        "scalar": torch.tensor(2.5),
    }


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for name, value in cases().items():
        path = os.path.join(OUT, name + ".memmap")
        MemoryMappedTensor.from_tensor(value, filename=path)
        np.save(os.path.join(OUT, name + ".npy"), value.numpy(), allow_pickle=False)
        back = MemoryMappedTensor.from_filename(path, dtype=value.dtype, shape=value.shape)
        assert torch.equal(back, value), name
    MemoryMappedTensor.empty((3, 2), dtype=torch.float32, filename=os.path.join(OUT, "empty.memmap"))
    rows = torch.tensor([[1, -2, 3], [2**50, 5, -6]], dtype=torch.int64)
    np.save(os.path.join(OUT, "rows.npy"), rows.numpy(), allow_pickle=False)
    t = MemoryMappedTensor.empty((4, 3), dtype=torch.int64, filename=os.path.join(OUT, "rows.memmap"))
    t[1:3] = rows
    t[3] = 7
    del t


if __name__ == "__main__":
    main()
