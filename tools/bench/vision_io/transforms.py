#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Transforms v2 kernels of loom against torchvision.transforms.v2.functional, in one run.

    .venv/bin/python tools/bench/vision_io/transforms.py [--only SUBSTRING] [--threads N] [--cpu]

Cases (both sides on the same arrays, 2 threads each unless --threads):

  resize u8 1920x1080 -> 224 bilinear aa   a full-HD RGB frame, uint8 CHW
      (contiguous), short edge to 224 with antialias: torchvision's native
      uint8 path (PyTorch's AVX2 fixed-point kernels). Target: 1.5x.
  resize u8 ... (torch channels-last)      the same pixels handed to torch
      in its fastest layout (HWC memory, as decode_jpeg gives), shown
      without a target.
  resize f32 1920x1080 -> 224 bilinear aa  the float32 path.
  resize u8 1920x1080 -> 224 bicubic aa    bicubic, uint8.
  preset resnet50 ...                      vision.preprocess against ResNet50
      IMAGENET1K_V2's weights.transforms() (ImageClassification: resize 232
      bilinear antialias, centre crop 224, to float, normalise) on the same
      uint8 frame, CHW (target 1.5x) and, for torch, channels-last.

The ratio is torchvision's time over loom's (> 1: loom is faster); the unit
is images/s. Needs the release build (tools/dev bench builds it) and .venv.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
import torchvision.transforms.v2.functional as F  # noqa: E402
from torchvision.transforms import InterpolationMode  # noqa: E402

import sidebyside  # noqa: E402


def frame_u8():
    """A smooth 1080p RGB frame with noise: what a decoded photo looks like to a resampler."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:1080, 0:1920].astype(np.float32)
    base = np.stack([128 + 100 * np.sin(xx / (60 + 20 * c)) * np.cos(yy / 45) for c in range(3)])
    return np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)


def resize_case(name, x, mode, target=None, channels_last=False):
    t = torch.from_numpy(x)
    if channels_last:
        t = t.permute(1, 2, 0).contiguous().permute(2, 0, 1)   # HWC memory, CHW view
    interp = InterpolationMode.BILINEAR if mode == "bilinear" else InterpolationMode.BICUBIC
    return sidebyside.Case(
        name=name, op="vision.resize", inputs={"image": x},
        attrs={"size": "224", "interpolation": mode, "antialias": "true"},
        reference=lambda: F.resize(t, [224], interpolation=interp, antialias=True),
        items=1, unit="images/s", target=target, repeat=30, warmup=3)


def preset_case(name, x, channels_last=False):
    """ResNet50 IMAGENET1K_V2's weights.transforms(): resize 232 bilinear aa, crop 224, normalise."""
    from torchvision.transforms._presets import ImageClassification
    t = torch.from_numpy(x)
    if channels_last:
        t = t.permute(1, 2, 0).contiguous().permute(2, 0, 1)
    preset = ImageClassification(crop_size=224, resize_size=232)
    return sidebyside.Case(
        name=name, op="vision.preprocess", inputs={"image": x},
        attrs={"resize_size": "232", "crop_size": "224"},
        reference=lambda: preset(t), items=1, unit="images/s",
        target=None if channels_last else 1.5, repeat=30, warmup=3)


def cases():
    x = frame_u8()
    xf = x.astype(np.float32) / 255
    return [
        preset_case("preset resnet50 u8 1920x1080 -> 232 -> 224", x),
        preset_case("preset resnet50 u8 1920x1080 (torch channels-last)", x, channels_last=True),
        resize_case("resize u8 1920x1080 -> 224 bilinear aa", x, "bilinear", target=1.5),
        resize_case("resize u8 1920x1080 -> 224 bilinear aa (torch channels-last)", x, "bilinear",
                    channels_last=True),
        resize_case("resize f32 1920x1080 -> 224 bilinear aa", xf, "bilinear"),
        resize_case("resize u8 1920x1080 -> 224 bicubic aa", x, "bicubic"),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    args = ap.parse_args()
    rows = sidebyside.run([c for c in cases() if args.only in c.name],
                          f"transforms vs torchvision {torchvision.__version__}", args.threads, args.cpu)
    missed = [r["case"] for r in rows if r["target"] and r["ratio"] < r["target"]]
    if missed:
        print("below target: " + ", ".join(missed))


if __name__ == "__main__":
    main()
