#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the vision pack's RoI ops to tests/data/vision/roi/.

Every expected value comes from torchvision's registered CPU ops
(torch.ops.torchvision.roi_align, roi_pool, ps_roi_align, ps_roi_pool) and,
for the backward ops, from autograd: the forward runs with requires_grad,
backward() with a seeded random grad_output, and input.grad is saved.

    .venv/bin/python tools/gen_vision_roi_goldens.py [OUTDIR]

Files (stem -> .npy), all small and seeded so the set is reproducible:
  feat_<dt>, boxes_<dt>        the shared [2, 3, 10, 12] map and 14 rois
  align_a<A>_sr<S>_ss<X>       roi_align output for aligned A, sampling_ratio
                               S, spatial_scale X (every combination, f32)
  align_<dt>_*, *_grad*        f64 / f16 forwards, backward grad_output and
                               input gradients
  pool_*, psalign_*, pspool_*  the other ops (output, argmax /
                               channel_mapping, gradients)
  params_<case>                f64 [ph, pw, spatial_scale, sampling_ratio,
                               aligned] of each case, read by the tests
The rois cover: boxes inside the map, partly and wholly outside it,
zero-area boxes, reversed boxes (x2 < x1), sub-pixel boxes, both images,
and an empty set (K = 0).
"""
import os
import sys

import numpy as np
import torch
import torchvision  # noqa: F401  (registers torch.ops.torchvision)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "roi")
TV = torch.ops.torchvision
DT = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy(), allow_pickle=False)


def params(name, ph, pw, ss, sr, aligned):
    save("params_" + name, torch.tensor([ph, pw, ss, sr, float(aligned)], dtype=torch.float64))


def feature_map(channels, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(2, channels, 10, 12, generator=g, dtype=torch.float64)


# (batch, x1, y1, x2, y2) in image coordinates; the map is 10 x 12, so at
# spatial_scale 0.5 / 0.25 the image is 20 x 24 / 40 x 48.
BOXES = torch.tensor([
    [0, 1.0, 1.0, 8.0, 6.0],        # inside at scale 1
    [1, 2.3, 0.7, 11.9, 9.6],       # most of the map, fractional corners
    [0, -3.0, -2.0, 4.0, 5.0],      # partly outside (top-left)
    [1, 9.0, 7.0, 15.0, 13.0],      # partly outside (bottom-right)
    [0, 30.0, 30.0, 40.0, 44.0],    # outside at scale 1, inside at 0.25
    [1, -20.0, -9.0, -12.0, -2.0],  # wholly outside
    [0, 5.0, 5.0, 5.0, 5.0],        # zero area
    [1, 3.0, 4.0, 3.0, 8.0],        # zero width
    [0, 6.0, 7.0, 2.0, 2.0],        # reversed (x2 < x1 and y2 < y1)
    [1, 4.4, 4.4, 4.6, 4.6],        # sub-pixel
    [0, 0.0, 0.0, 47.9, 39.9],      # whole image at scale 0.25
    [1, 11.5, 9.5, 12.5, 10.5],     # on the last pixel
    [0, 2.5, 3.5, 20.5, 17.5],      # half-pixel coordinates (round ties)
    [1, 7.0, 1.0, 23.0, 19.0],      # larger than the map at scale 1
], dtype=torch.float64)


def grad_like(t, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t.shape, generator=g, dtype=torch.float64).to(t.dtype)


def roi_align_cases():
    feat, boxes = feature_map(3, 1), BOXES
    for dt in DT:
        save("feat_" + dt, feat.to(DT[dt]))
        save("boxes_" + dt, boxes.to(DT[dt]))
    x, b = feat.float(), boxes.float()
    # every configuration: aligned x sampling_ratio x spatial_scale
    for aligned in (0, 1):
        for sr in (-1, 0, 1, 2):
            for ss in (1.0, 0.5, 0.25):
                name = f"align_a{aligned}_sr{sr}_ss{ss}"
                save(name, TV.roi_align(x, b, ss, 3, 4, sr, bool(aligned)))
                params(name, 3, 4, ss, sr, aligned)
    # other dtypes and a square output, forward and backward
    for dt, aligned, sr, ss, ph, pw in (("f32", 0, -1, 0.5, 3, 4), ("f32", 1, 2, 0.25, 2, 2),
                                        ("f64", 0, 2, 0.5, 3, 4), ("f64", 1, -1, 1.0, 5, 3),
                                        ("f16", 0, 2, 0.5, 3, 4), ("f16", 1, -1, 0.25, 2, 3)):
        name = f"align_{dt}_a{aligned}_sr{sr}_ss{ss}"
        xi = feat.to(DT[dt]).detach().clone().requires_grad_(True)
        out = TV.roi_align(xi, boxes.to(DT[dt]), ss, ph, pw, sr, bool(aligned))
        go = grad_like(out, 7)
        out.backward(go)
        save(name, out)
        save(name + "_gradout", go)
        save(name + "_gradin", xi.grad)
        params(name, ph, pw, ss, sr, aligned)
    # no rois
    save("boxes_empty_f32", torch.zeros(0, 5))
    save("align_empty", TV.roi_align(x, torch.zeros(0, 5), 1.0, 3, 4, -1, False))


def roi_pool_cases():
    feat, boxes = feature_map(3, 1), BOXES
    for dt, ss, ph, pw in (("f32", 1.0, 3, 4), ("f32", 0.5, 2, 2), ("f32", 0.25, 3, 3),
                           ("f64", 0.5, 3, 4)):
        name = f"pool_{dt}_ss{ss}"
        xi = feat.to(DT[dt]).detach().clone().requires_grad_(True)
        out, argmax = TV.roi_pool(xi, boxes.to(DT[dt]), ss, ph, pw)
        assert argmax.dtype == torch.int32
        go = grad_like(out, 8)
        out.backward(go)
        save(name, out)
        save(name + "_argmax", argmax)
        save(name + "_gradout", go)
        save(name + "_gradin", xi.grad)
        params(name, ph, pw, ss, -1, 0)


def ps_cases():
    feat = feature_map(18, 2)            # 2 output channels x 3 x 3 bins
    for dt in ("f32", "f64", "f16"):
        save("feat18_" + dt, feat.to(DT[dt]))
    for op, dts in (("psalign", ("f32", "f64", "f16")), ("pspool", ("f32", "f64"))):
        for dt in dts:
            for sr, ss in ((-1, 1.0), (2, 0.5), (-1, 0.25)):
                if op == "pspool" and sr != -1:
                    continue
                name = f"{op}_{dt}_sr{sr}_ss{ss}"
                xi = feat.to(DT[dt]).detach().clone().requires_grad_(True)
                b = BOXES.to(DT[dt])
                if op == "psalign":
                    out, cmap = TV.ps_roi_align(xi, b, ss, 3, 3, sr)
                else:
                    out, cmap = TV.ps_roi_pool(xi, b, ss, 3, 3)
                assert cmap.dtype == torch.int32
                go = grad_like(out, 9)
                out.backward(go)
                save(name, out)
                save(name + "_map", cmap)
                save(name + "_gradout", go)
                save(name + "_gradin", xi.grad)
                params(name, 3, 3, ss, sr, 1 if op == "psalign" else 0)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.unlink(os.path.join(OUT, f))
    roi_align_cases()
    roi_pool_cases()
    ps_cases()
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{len(os.listdir(OUT))} files, {total / 1024:.0f} KiB in {OUT}")


if __name__ == "__main__":
    main()
