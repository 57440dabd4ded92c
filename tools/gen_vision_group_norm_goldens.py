#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of vision.group_norm to tests/data/vision/group_norm/.

F.group_norm on the CPU in f32, on small seeded inputs of rank 2 to 5, with
and without weight and bias, group sizes that are and are not multiples of
the vector width, and a RetinaNet v2 head's GroupNorm(32, C) on maps with a
large mean (the statistics' precision matters there). The cases' attributes
are in CASES and, the same, in tests/vision/layers/test_group_norm.c.

    .venv/bin/python tools/gen_vision_group_norm_goldens.py [OUTDIR]

Prints, per case, max |torch - exact| (the statistics in float64) next to
max |torch|: the gap the test's tolerance covers. Needs numpy and torch.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "group_norm")

# name: shape, num_groups, affine (weight and bias), eps, scale, offset of the input
CASES = {
    "nchw":    ((2, 8, 5, 6), 4, True, 1e-5, 1.0, 0.0),
    "rank3":   ((3, 6, 7), 3, True, 1e-6, 2.0, -1.0),
    "rank2":   ((4, 6), 2, True, 1e-5, 1.0, 0.5),
    "rank5":   ((1, 4, 3, 2, 5), 2, False, 1e-5, 1.0, 0.0),
    "retina":  ((1, 64, 7, 9), 32, True, 1e-5, 3.0, 5.0),
    "single":  ((2, 5, 3, 3), 1, True, 1e-3, 1.0, 0.0),
    "per_ch":  ((2, 6, 4, 4), 6, True, 1e-5, 0.5, 100.0),
}


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy().astype(np.float32),
            allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(21)
    for name, (shape, groups, affine, eps, scale, offset) in CASES.items():
        x = torch.randn(*shape) * scale + offset
        c = shape[1]
        w = torch.randn(c) if affine else None
        b = torch.randn(c) if affine else None
        y = F.group_norm(x, groups, w, b, eps)
        exact = F.group_norm(x.double(), groups, None if w is None else w.double(),
                             None if b is None else b.double(), eps)
        print(f"{name}: max |torch - exact| = {(y.double() - exact).abs().max().item():.3g}, "
              f"max |torch| = {y.abs().max().item():.3g}")
        save(f"{name}_input", x)
        if affine:
            save(f"{name}_weight", w)
            save(f"{name}_bias", b)
        save(f"{name}_output", y)


if __name__ == "__main__":
    main()
