# SPDX-License-Identifier: BSD-3-Clause
"""What the CTC benchmarks share: the build they run loom from and the
environment that points loom's Python package at it."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def build_root():
    """LOOM_BUILD_ROOT, else build-release, else build: the first with libloom."""
    for d in (os.environ.get("LOOM_BUILD_ROOT"), os.path.join(ROOT, "build-release"), os.path.join(ROOT, "build")):
        if d and os.path.exists(os.path.join(d, "core", "libloom.so.0")):
            return d
    sys.exit("no build with libloom: run `tools/dev bench` (or set LOOM_BUILD_ROOT)")


def loom_env(root):
    """The environment of a child process that imports loom from `root` (core and audio packs, and their cuda
    packs when built)."""
    env = dict(os.environ)
    env["LOOM_LIBRARY"] = os.path.join(root, "core", "libloom.so.0")
    env["LOOM_PLUGIN_PATH"] = os.path.join(root, "plugins", "core") + ":" + os.path.join(root, "plugins", "audio")
    return env
