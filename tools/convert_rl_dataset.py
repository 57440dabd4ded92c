#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Convert a Minari or D4RL HDF5 dataset into a TensorDict memmap directory
laid out as torchrl's MinariExperienceReplay / D4RLExperienceReplay lay it
out (TED: root observation/action, ("next", ...) after each step).

    .venv-h5/bin/python tools/convert_rl_dataset.py minari main_data.hdf5 OUTDIR [--loom build/tools/loom]
    .venv-h5/bin/python tools/convert_rl_dataset.py d4rl hopper-medium-v2.hdf5 OUTDIR [--no-truncated-as-done]

h5py reads the file; `loom td save` writes the directory (tensordict's memmap
layout, which TensorDict.load_memmap, rl.tensordict from=load and
rl.rb_extend_ted read). LOOM_PLUGIN_PATH must let loom find the rl pack.

minari (torchrl/data/datasets/minari_data.py): groups episode_<n>, taken in
  the order of n, each with observations [T + 1, ...] (or a group of them),
  actions [T, ...], rewards, terminations, truncations [T] and infos (a group,
  skipped when empty). Items: "episode" (n), "observation" = observations[:-1],
  ("next", "observation") = observations[1:] (the same for "state" and
  "infos" -> "info"), "action", ("next", "reward" | "terminated" |
  "truncated") [N, 1], ("next", "done") = terminated | truncated; any other
  dataset of T rows at the root under its own name. The first episode fixes
  the keys and dtypes; a later one of other lengths or keys is refused.
d4rl (torchrl/data/datasets/d4rl.py, the direct-download path): datasets
  observations, actions, rewards, terminals, timeouts (optional),
  next_observations (optional), infos/... of N rows ("metadata" is left
  out). observations -> "observation", terminals -> "terminated", timeouts
  -> "truncated", done = terminated | truncated (or terminated alone with
  --no-truncated-as-done), all flags bool [N, 1], reward [N, 1]. The last row
  is dropped: ("next", "observation") is next_observations[:-1] or
  observations[1:], ("next", "info") infos[1:], ("next", reward | done |
  terminated | truncated) the row's own values, and the root reward and flags
  are shifted one row down (row 0 gets 0). ("next", "observation") is zeroed
  where ("next", "done") is true.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

MINARI_NAMES = {"observations": "observation", "rewards": "reward", "truncations": "truncated",
                "terminations": "terminated", "actions": "action", "infos": "info"}


class ConvertError(Exception):
    pass


def leaves(node, prefix=()):
    """Every dataset under an h5py group as (key tuple, array)."""
    if isinstance(node, h5py.Dataset):
        yield prefix, node[()]
        return
    for name in node:
        yield from leaves(node[name], prefix + (name,))


def minari_items(f):
    episodes = []
    for name in f:
        m = re.fullmatch(r"episode_(\d+)", name)
        if m is None or not isinstance(f[name], h5py.Group):
            raise ConvertError(f"{name}: not an episode_<n> group (a Minari main_data.hdf5 holds only those)")
        episodes.append((int(m.group(1)), name))
    if not episodes:
        raise ConvertError("no episode_<n> group: not a Minari dataset")
    episodes.sort()
    out, layout = {}, None
    for num, name in episodes:
        ep = f[name]
        if "actions" not in ep:
            raise ConvertError(f"{name}: no actions")
        steps = ep["actions"].shape[0]
        rows = {}
        for key in ep:
            match = MINARI_NAMES.get(key, key)
            node = ep[key]
            for sub, val in leaves(node, ()):
                if key in ("observations", "state", "infos"):
                    if val.shape[:1] != (steps + 1,):
                        raise ConvertError(f"{name}/{key}: {val.shape[0] if val.ndim else 0} rows, {steps + 1} "
                                           "expected (one more than actions)")
                    rows[(match,) + sub] = val[:-1]
                    rows[("next", match) + sub] = val[1:]
                elif key in ("terminations", "truncations", "rewards"):
                    if val.shape != (steps,):
                        raise ConvertError(f"{name}/{key}: shape {val.shape}, ({steps},) expected")
                    rows[("next", match)] = val.reshape(steps, 1)
                else:
                    if val.shape[:1] != (steps,):
                        raise ConvertError(f"{name}/{key}: {val.shape[0] if val.ndim else 0} rows, {steps} expected")
                    rows[(match,) + sub] = val
        for need in (("next", "terminated"), ("next", "truncated"), ("next", "reward"), ("observation",)):
            if need not in rows:
                raise ConvertError(f"{name}: no {'/'.join(need)} (terminations, truncations, rewards, observations)")
        rows[("next", "done")] = rows[("next", "terminated")].astype(bool) | rows[("next", "truncated")].astype(bool)
        rows[("episode",)] = np.full((steps,), num, dtype=np.int64)
        shape = {k: (v.dtype, v.shape[1:]) for k, v in rows.items()}
        if layout is None:
            layout = shape
        elif set(shape) != set(layout) or any(shape[k][1] != layout[k][1] for k in shape):
            raise ConvertError(f"{name}: its keys or item shapes differ from the first episode's")
        for k, v in rows.items():
            out.setdefault(k, []).append(v.astype(layout[k][0], copy=False))
    return {k: np.concatenate(v) for k, v in out.items()}


def d4rl_items(f, truncated_as_done=True):
    data = {}
    for name in f:
        if name == "metadata":
            continue
        for sub, val in leaves(f[name], (name,)):
            data[sub] = val
    for need in ("observations", "actions", "rewards", "terminals"):
        if (need,) not in data:
            raise ConvertError(f"no {need}: not a D4RL dataset")
    n = data[("observations",)].shape[0]
    bad = [k for k, v in data.items() if v.shape[:1] != (n,)]
    if bad:
        raise ConvertError(f"{'/'.join(bad[0])}: not {n} rows as observations")
    if n < 2:
        raise ConvertError("fewer than 2 rows: no transition")
    names = {"observations": "observation", "terminals": "terminated", "timeouts": "truncated",
             "rewards": "reward", "actions": "action", "infos": "info"}
    root = {(names.get(k[0], k[0]),) + k[1:]: v for k, v in data.items()}
    term = root[("terminated",)].astype(bool)
    trunc = root.get(("truncated",))
    done = term | trunc.astype(bool) if truncated_as_done and trunc is not None else term
    root[("done",)] = done
    for k in ("done", "terminated", "truncated"):
        if (k,) in root:
            root[(k,)] = root[(k,)].astype(bool).reshape(n, 1)
    root[("reward",)] = root[("reward",)].reshape(n, 1)
    out = {}
    for k, v in root.items():
        if k == ("next_observations",):
            out[("next", "observation")] = v[:-1]
        else:
            out[k] = v[:-1]
        if k[0] == "info":
            out[("next",) + k] = v[1:]
    if ("next_observations",) not in root:
        out[("next", "observation")] = root[("observation",)][1:]
    for k in ("reward", "done", "terminated", "truncated"):
        if (k,) in out:
            out[("next", k)] = out[(k,)].copy()
            shifted = np.zeros_like(out[(k,)])
            shifted[1:] = out[(k,)][:-1]
            out[(k,)] = shifted
    nobs = out[("next", "observation")].copy()
    nobs[out[("next", "done")].reshape(-1)] = 0
    out[("next", "observation")] = nobs
    return out


def save(items, outdir, loom):
    n = next(iter(items.values())).shape[0]
    with tempfile.TemporaryDirectory() as tmp:
        args = [loom, "td", "save", outdir, "--batch-size", str(n)]
        for i, (key, val) in enumerate(sorted(items.items())):
            if any("." in part or "=" in part for part in key):
                raise ConvertError(f"{'/'.join(key)}: a key component holds '.' or '='")
            path = os.path.join(tmp, f"{i}.npy")
            np.save(path, np.ascontiguousarray(val), allow_pickle=False)
            args += ["--in", ".".join(key) + "=" + path]
        if os.path.exists(outdir):
            shutil.rmtree(outdir)
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("format", choices=("minari", "d4rl"))
    ap.add_argument("input", help="the HDF5 file")
    ap.add_argument("outdir", help="the TensorDict memmap directory to write (replaced)")
    ap.add_argument("--loom", default=shutil.which("loom") or "build/tools/loom", help="the loom CLI")
    ap.add_argument("--no-truncated-as-done", action="store_true", help="d4rl: done = terminated only")
    args = ap.parse_args()
    try:
        with h5py.File(args.input, "r") as f:
            items = minari_items(f) if args.format == "minari" else d4rl_items(f, not args.no_truncated_as_done)
        save(items, args.outdir, args.loom)
    except (ConvertError, OSError) as err:
        sys.exit(f"{args.input}: {err}")
    print(f"{args.outdir}: {next(iter(items.values())).shape[0]} items, {len(items)} keys")


if __name__ == "__main__":
    main()
