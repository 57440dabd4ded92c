#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of vision.conv_transpose2d to tests/data/vision/conv_transpose/.

F.conv_transpose2d on the CPU in f32 on small seeded inputs: Mask R-CNN's
predictor (2x2, stride 2), strides, paddings and output_padding that differ
per axis, dilation with groups, no bias, a 1x1 input. Per case it also
writes `<name>_abs`: the same transposed convolution of |input| and |weight|
plus |bias| in float64, the sum of the magnitudes of each output's terms,
from which the test bounds the rounding of either side. The cases'
attributes are in CASES and, the same, in
tests/vision/layers/test_conv_transpose.c.

    .venv/bin/python tools/gen_vision_conv_transpose_goldens.py [OUTDIR]

Prints max |torch - exact float64| per case. Needs numpy and torch.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "conv_transpose")

# name: input shape, weight shape, bias, stride, padding, output_padding, groups, dilation
CASES = {
    "predictor": ((2, 8, 7, 7), (8, 5, 2, 2), True, (2, 2), (0, 0), (0, 0), 1, (1, 1)),
    "basic":     ((1, 4, 5, 6), (4, 3, 3, 3), True, (1, 1), (0, 0), (0, 0), 1, (1, 1)),
    "strided":   ((2, 3, 4, 5), (3, 4, 3, 2), True, (2, 3), (1, 0), (1, 2), 1, (1, 1)),
    "grouped":   ((1, 4, 5, 4), (4, 3, 3, 3), True, (2, 2), (1, 1), (1, 0), 2, (2, 1)),
    "nobias":    ((2, 6, 3, 3), (6, 2, 3, 3), False, (1, 2), (2, 1), (0, 1), 3, (1, 1)),
    "pixel":     ((3, 5, 1, 1), (5, 4, 4, 3), True, (1, 1), (0, 1), (0, 0), 1, (1, 1)),
}


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy().astype(np.float32),
            allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(40)
    for name, (xs, ws, has_bias, stride, padding, outpad, groups, dilation) in CASES.items():
        x = torch.randn(*xs)
        w = torch.randn(*ws)
        b = torch.randn(ws[1] * groups) if has_bias else None
        kw = dict(stride=stride, padding=padding, output_padding=outpad, groups=groups, dilation=dilation)
        y = F.conv_transpose2d(x, w, b, **kw)
        exact = F.conv_transpose2d(x.double(), w.double(), None if b is None else b.double(), **kw)
        mag = F.conv_transpose2d(x.double().abs(), w.double().abs(), None if b is None else b.double().abs(),
                                 **kw)
        print(f"{name}: output {tuple(y.shape)}, max |torch - exact| = {(y.double() - exact).abs().max().item():.3g}")
        save(f"{name}_input", x)
        save(f"{name}_weight", w)
        if b is not None:
            save(f"{name}_bias", b)
        save(f"{name}_output", y)
        save(f"{name}_abs", mag)


if __name__ == "__main__":
    main()
