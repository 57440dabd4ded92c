#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write tiny Minari and D4RL HDF5 files and their conversions for the rl
pack's tests to tests/data/rl/h5/ (h5py, in .venv-h5).

    .venv-h5/bin/python tools/gen_h5_rl_datasets.py [OUTDIR]

minari_tiny.hdf5    Minari's main_data.hdf5 layout: episode_0, episode_1,
                    episode_2 and episode_10 (taken in the order of their
                    numbers, not of their names), observations f32 [T + 1, 2],
                    actions i64 [T], rewards f64 [T], terminations and
                    truncations bool [T], infos/success bool [T + 1]
minari/E_KEY.npy    the same arrays per episode E, for the C test to check
                    the conversion against
d4rl_tiny.hdf5      D4RL's layout: observations f32 [N, 3], actions f32 [N, 2],
                    rewards f32 [N], terminals and timeouts bool [N],
                    infos/qpos f32 [N, 2], metadata/algorithm (left out)
d4rl_tiny.npz       the same arrays for tools/gen_rl_d4rl_goldens.py, which
                    runs torchrl's own D4RL processing on them
minari_td/, d4rl_td/  tools/convert_rl_dataset.py's output (it runs the loom
                    CLI: LOOM_CLI, default build/tools/loom, with the rl
                    pack on LOOM_PLUGIN_PATH, default build/plugins/{core,rl})
"""
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "data", "rl", "h5")


def minari(path, npy_dir):
    rng = np.random.default_rng(20261201)
    lengths = {0: 3, 1: 4, 2: 2, 10: 3}
    os.makedirs(npy_dir)
    with h5py.File(path, "w") as f:
        f.attrs["dataset_id"] = "loom/tiny-v0"
        for num, t in lengths.items():
            g = f.create_group(f"episode_{num}")
            arrays = {
                "observations": rng.standard_normal((t + 1, 2)).astype(np.float32),
                "actions": rng.integers(0, 3, size=(t,)).astype(np.int64),
                "rewards": rng.standard_normal(t),
                "terminations": np.arange(t) == t - 1 if num != 1 else np.zeros(t, bool),
                "truncations": np.arange(t) == t - 1 if num == 1 else np.zeros(t, bool),
            }
            for k, v in arrays.items():
                g.create_dataset(k, data=v)
            success = rng.random(t + 1) > 0.5
            g.create_group("infos").create_dataset("success", data=success)
            arrays["infos_success"] = success
            for k, v in arrays.items():
                np.save(os.path.join(npy_dir, f"{num}_{k}.npy"), v, allow_pickle=False)


def d4rl(path, npz):
    rng = np.random.default_rng(7)
    n = 9
    arrays = {
        "observations": rng.standard_normal((n, 3)).astype(np.float32),
        "actions": rng.standard_normal((n, 2)).astype(np.float32),
        "rewards": rng.standard_normal(n).astype(np.float32),
        "terminals": np.isin(np.arange(n), [3]),
        "timeouts": np.isin(np.arange(n), [6]),
        "infos/qpos": rng.standard_normal((n, 2)).astype(np.float32),
    }
    with h5py.File(path, "w") as f:
        for k, v in arrays.items():
            f.create_dataset(k, data=v)
        f.create_dataset("metadata/algorithm", data=np.bytes_("SAC"))
    np.savez(npz, **arrays)


def convert(fmt, src, dst):
    env = dict(os.environ)
    build = os.path.join(ROOT, "build")
    env.setdefault("LOOM_PLUGIN_PATH", os.path.join(build, "plugins", "core") + ":" + os.path.join(build, "plugins", "rl"))
    loom = env.get("LOOM_CLI", os.path.join(build, "tools", "loom"))
    subprocess.run([sys.executable, os.path.join(HERE, "convert_rl_dataset.py"), fmt, src, dst, "--loom", loom],
                   check=True, env=env)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    minari(os.path.join(OUT, "minari_tiny.hdf5"), os.path.join(OUT, "minari"))
    d4rl(os.path.join(OUT, "d4rl_tiny.hdf5"), os.path.join(OUT, "d4rl_tiny.npz"))
    convert("minari", os.path.join(OUT, "minari_tiny.hdf5"), os.path.join(OUT, "minari_td"))
    convert("d4rl", os.path.join(OUT, "d4rl_tiny.hdf5"), os.path.join(OUT, "d4rl_td"))


if __name__ == "__main__":
    main()
