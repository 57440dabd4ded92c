#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run torchrl's own D4RL processing on the arrays of tests/data/rl/h5/
d4rl_tiny.npz (written with d4rl_tiny.hdf5 by tools/gen_h5_rl_datasets.py)
and write every leaf it gives to tests/data/rl/h5/d4rl_expect/<key>.npy.

    .venv-rl/bin/python tools/gen_rl_d4rl_goldens.py [H5DIR]

torchrl 0.14's D4RLExperienceReplay reads a downloaded HDF5 file with
PersistentTensorDict.from_h5 and hands it to _process_data_from_env, then
zeroes ("next", "observation") where ("next", "done"); the same arrays go
through that same method here (h5py is not in .venv-rl, and a
PersistentTensorDict's to_tensordict() holds exactly these arrays), with
use_truncated_as_done=True, its default. tests/rl/test_rl_datasets.c checks
tools/convert_rl_dataset.py's d4rl_td/ against these files bit for bit.
"""
import os
import shutil
import sys
import types

import numpy as np
import torch
from tensordict import TensorDict
from torchrl.data.datasets.d4rl import D4RLExperienceReplay

HERE = os.path.dirname(os.path.abspath(__file__))
H5 = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "tests", "data", "rl", "h5")


def main():
    arrays = np.load(os.path.join(H5, "d4rl_tiny.npz"))
    n = arrays["observations"].shape[0]
    td = TensorDict({k: torch.from_numpy(arrays[k]) for k in arrays.files}, batch_size=[n]).unflatten_keys("/")
    host_self = types.SimpleNamespace(use_truncated_as_done=True)
    host_self._shift_reward_done = lambda d: D4RLExperienceReplay._shift_reward_done(host_self, d)
    out = D4RLExperienceReplay._process_data_from_env(host_self, td)
    out["next", "observation"][out["next", "done"].squeeze()] = 0
    dst = os.path.join(H5, "d4rl_expect")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for key, val in out.items(include_nested=True, leaves_only=True):
        name = ".".join(key) if isinstance(key, tuple) else key
        np.save(os.path.join(dst, name + ".npy"), val.numpy(), allow_pickle=False)


if __name__ == "__main__":
    main()
