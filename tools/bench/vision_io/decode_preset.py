#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A JPEG's way into a ResNet, loom against torchvision, in one run.

    .venv/bin/python tools/bench/vision_io/decode_preset.py [--threads N] [--repeat R]

The case: a 1920x1080 JPEG (quality 90, 4:2:0, the smooth noisy frame of
transforms.py) decoded to RGB and taken through ResNet50 IMAGENET1K_V2's
preset (resize 232 bilinear antialias, centre crop 224, float32, ImageNet
normalisation), one image per call:

  loom         vision.decode_jpeg(mode=RGB) then vision.preprocess (fused),
               through the Python package (libloom by ctypes) in this process
  torchvision  torchvision.io.decode_jpeg(mode=RGB) then transforms v2
               Compose([Resize(232, antialias=True), CenterCrop(224),
               ToDtype(float32, scale=True), Normalize(mean, std)])

Both sides get the same thread budget (2 unless --threads) and run in this
process one after the other, each call timed alone; the rows are the median
wall time per image and the median process CPU time per image (the shared
machine's load inflates wall time; CPU seconds measure what a call costs),
the rate in images/s and the ratio torchvision / loom (> 1: loom is
faster). Target: 1.5x.

Then the resize case of transforms.py (uint8 1920x1080 -> 224 bilinear
antialias, target 1.5x) again, and the same frame as a decoder leaves it:
HWC memory seen as [3, H, W], which vision.resize reads through its strides
(no transpose copy) and torch resizes in its channels-last path. Needs the
release build (tools/dev bench builds it) and .venv.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torchvision  # noqa: E402
from torchvision.io import ImageReadMode, decode_jpeg, encode_jpeg  # noqa: E402
from torchvision.transforms import v2  # noqa: E402
import torchvision.transforms.v2.functional as F  # noqa: E402

import sidebyside  # noqa: E402
from transforms import frame_u8  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def import_loom(threads):
    build = os.path.dirname(os.path.dirname(os.path.abspath(sidebyside.loom_cli())))
    os.environ.setdefault("LOOM_LIBRARY", os.path.join(build, "core", "libloom.so.0"))
    os.environ.setdefault("LOOM_PLUGIN_PATH", ":".join(os.path.join(build, "plugins", p) for p in ("core", "vision")))
    sys.path.insert(0, os.path.join(sidebyside.ROOT, "python"))
    import loom
    loom.init(num_threads=threads)
    return loom


def timed(fn, repeat, warmup):
    """(median wall seconds, median process CPU seconds) of one call."""
    for _ in range(warmup):
        fn()
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    ap.add_argument("--repeat", type=int, default=40)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    loom = import_loom(args.threads)
    data = encode_jpeg(torch.from_numpy(frame_u8()), quality=90)
    preset = v2.Compose([v2.Resize(232, antialias=True), v2.CenterCrop(224), v2.ToDtype(torch.float32, scale=True),
                         v2.Normalize(MEAN, STD)])
    vision = loom.ops.vision

    def ours():
        img = vision.decode_jpeg(data, mode="RGB")
        return vision.preprocess(img, resize_size=232, crop_size=224, mean=MEAN, std=STD)

    def reference():
        return preset(decode_jpeg(data, mode=ImageReadMode.RGB))

    a, b = ours(), reference()
    levels = ((a - b).abs() * torch.tensor(STD)[:, None, None] * 255).max().item()
    print(f"vision_io: {args.threads} threads each side, torch {torch.__version__}, torchvision "
          f"{torchvision.__version__}; medians of {args.repeat} calls, wall and process CPU seconds")
    print(f"  decode + preset outputs {tuple(a.shape)}: max difference {levels:.2f} levels of 255 (v2 resizes "
          "uint8 with rounding between its passes; vision.preprocess resizes in float32 as weights.transforms() "
          "does)")

    # the resize case again, the frame as a decoder leaves it: HWC memory seen as [3, H, W]
    frame = torch.from_numpy(frame_u8())
    hwc = frame.permute(1, 2, 0).contiguous().permute(2, 0, 1)
    got_cl, got = vision.resize(hwc, size=[224]), vision.resize(frame, size=[224])
    assert torch.equal(got_cl, got), "the channels-last view must give the compact image's bits"
    assert torch.equal(got, F.resize(frame, [224], antialias=True)), "resize must be torchvision's bits"

    rows = [
        (f"decode 1920x1080 JPEG ({data.numel() // 1024} KB) + ResNet50 V2 preset", ours, reference, 1.5),
        ("resize u8 1920x1080 -> 224 bilinear aa, CHW", lambda: vision.resize(frame, size=[224]),
         lambda: F.resize(frame, [224], antialias=True), 1.5),
        ("resize u8 ... channels-last (HWC memory) both", lambda: vision.resize(hwc, size=[224]),
         lambda: F.resize(hwc, [224], antialias=True), None),
    ]
    hdr = (f"  {'case':<52} {'loom wall':>10} {'ref wall':>10} {'loom CPU':>10} {'ref CPU':>10} "
           f"{'loom img/s':>10} {'ratio wall':>10} {'ratio CPU':>10} {'target':>6}")
    print(hdr)
    for name, mine, theirs, target in rows:
        (ow, oc), (rw, rc) = timed(mine, args.repeat, 3), timed(theirs, args.repeat, 3)
        print(f"  {name:<52} {ow * 1e3:>8.3f}ms {rw * 1e3:>8.3f}ms {oc * 1e3:>8.3f}ms {rc * 1e3:>8.3f}ms "
              f"{1 / ow:>10.1f} {rw / ow:>9.2f}x {rc / oc:>9.2f}x {f'{target:.1f}x' if target else '':>6}")
    print("  ratio: torchvision's time over loom's (> 1: loom is faster); unit images/s")


if __name__ == "__main__":
    main()
