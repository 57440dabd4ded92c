# SPDX-License-Identifier: BSD-3-Clause
"""deform_conv2d of the vision pack against torchvision.ops (imported by tools/bench/vision_ops).

The DCNv2 layer of a ResNet stage: input [8, 64, 56, 56], 3 x 3 kernel,
64 output channels, stride 1, padding 1, one offset group, offsets
N(0, 1), mask uniform in [0, 1), bias. With the mask loom must run at least
1.5x as fast as torchvision's CPU kernel; the DCNv1 case (no mask) is shown
without a target. Throughput in images/s.
"""
import numpy as np
import torch
import torchvision

import sidebyside


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    n, cin, h, w, cout, k = 8, 64, 56, 56, 64, 3
    x = rng.standard_normal((n, cin, h, w), dtype=np.float32)
    offset = rng.standard_normal((n, 2 * k * k, h, w), dtype=np.float32)
    mask = rng.random((n, k * k, h, w), dtype=np.float32)
    weight = (rng.standard_normal((cout, cin, k, k), dtype=np.float32) * 0.05).astype(np.float32)
    bias = rng.standard_normal(cout, dtype=np.float32)
    return x, offset, weight, bias, mask


def cases():
    x, offset, weight, bias, mask = _inputs()
    tx, to, tw, tb, tm = (torch.from_numpy(a) for a in (x, offset, weight, bias, mask))
    n = x.shape[0]
    attrs = {"stride": "1,1", "padding": "1,1", "dilation": "1,1"}
    return [
        sidebyside.Case(
            name="deform_conv2d 8x64x56x56 3x3 Cout64 mask",
            op="vision.deform_conv2d",
            inputs={"input": x, "offset": offset, "weight": weight, "bias": bias, "mask": mask},
            attrs=attrs,
            reference=lambda: torchvision.ops.deform_conv2d(tx, to, tw, tb, padding=(1, 1), mask=tm),
            items=n, unit="images/s", target=1.5, repeat=5, warmup=1),
        sidebyside.Case(
            name="deform_conv2d 8x64x56x56 3x3 Cout64 no mask",
            op="vision.deform_conv2d",
            inputs={"input": x, "offset": offset, "weight": weight, "bias": bias},
            attrs=attrs,
            reference=lambda: torchvision.ops.deform_conv2d(tx, to, tw, tb, padding=(1, 1)),
            items=n, unit="images/s", repeat=5, warmup=1),
    ]
