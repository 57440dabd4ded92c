# SPDX-License-Identifier: BSD-3-Clause
"""The package's tests run against the source tree (python/) and a build
tree's libloom: LOOM_LIBRARY, else <repo>/build/core/libloom.so.0."""
import os
import subprocess
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)
DATA = os.path.join(REPO, "tests", "data")
sys.path.insert(0, PYTHON_DIR)
os.environ.setdefault("LOOM_LIBRARY", os.path.join(REPO, "build", "core", "libloom.so.0"))
# the tests choose their packs: the build tree's, not a caller's
for name in ("LOOM_PLUGIN_PATH", "LOOM_BACKENDS", "LOOM_STRICT", "LOOM_PLUGINS_SELECT", "LOOM_PLUGINS_DISABLE"):
    os.environ.pop(name, None)


def data(*parts):
    return os.path.join(DATA, *parts)


def torch_or_skip():
    """torch, or skip the test with a message saying why."""
    try:
        import torch
    except ImportError:
        pytest.skip("PyTorch is not importable in this interpreter (run with .venv/bin/python)")
    return torch


def run_python(code, env=None, check=True):
    """Run code in a fresh interpreter (loom_init happens once per process)."""
    full = dict(os.environ)
    full["PYTHONPATH"] = PYTHON_DIR + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env or {})
    r = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise AssertionError(f"subprocess failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r


def random_boxes(rng, n, scale=100.0, dtype="float32"):
    import numpy as np
    xy = rng.random((n, 2)) * scale
    wh = rng.random((n, 2)) * scale / 4 + 1
    return np.concatenate([xy, xy + wh], axis=1).astype(dtype)
