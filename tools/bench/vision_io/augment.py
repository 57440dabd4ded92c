#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""vision.augmix against torchvision.transforms.v2.AugMix, in one run.

    .venv/bin/python tools/bench/vision_io/augment.py [--threads N] [--cpu] [--seed S]

Case: AugMix with its defaults (severity 3, mixture_width 3, chain_depth
-1, alpha 1, all_ops, bilinear) on a uint8 batch of 64 images 3x224x224.
Both sides do the same work: torchvision runs under a fixed torch seed, so
every call draws the same chains; its draws are recorded once (as the
goldens record them, tools/gen_vision_transforms_goldens.py) and loom is
given them as its `draws` input, so it applies the very same ops with the
same weights. Target: 2x. The ratio is torchvision's time over loom's (> 1:
loom is faster); the unit is images/s. On a shared machine pass --cpu (CPU
seconds per call rather than wall time). Needs the release build (tools/dev
bench builds it) and .venv.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import sidebyside  # noqa: E402
from gen_vision_transforms_goldens import DrawRecorder, RecordedAugMix  # noqa: E402


def batch_u8(n=64):
    """A batch of smooth noisy RGB images: what decoded photos look like to the ops."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:224, 0:224].astype(np.float32)
    base = np.stack([128 + 100 * np.sin(xx / (20 + 7 * c)) * np.cos(yy / 17) for c in range(3)])
    return np.clip(base[None] + rng.normal(0, 12, (n, 3, 224, 224)), 0, 255).astype(np.uint8)


def augmix_case(seed):
    x = batch_u8()
    t = torch.from_numpy(x)
    augmix = RecordedAugMix()
    torch.manual_seed(seed)
    with DrawRecorder() as rec:
        augmix.recorder = rec
        augmix(t)
    draws = np.array(rec.draws, dtype=np.float64)
    augmix.recorder = DrawRecorder()   # recording continues (cheaply) in the timed calls

    def reference():
        torch.manual_seed(seed)
        return augmix(t)

    return sidebyside.Case(
        name="augmix u8 64x3x224x224", op="vision.augmix", inputs={"image": x, "draws": draws},
        reference=reference, items=64, unit="images/s", target=2.0, repeat=10, warmup=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    ap.add_argument("--seed", type=int, default=3, help="torch seed of the chains both sides apply")
    args = ap.parse_args()
    rows = sidebyside.run([augmix_case(args.seed)], f"augmix vs torchvision {torchvision.__version__}",
                          args.threads, args.cpu)
    missed = [r["case"] for r in rows if r["target"] and r["ratio"] < r["target"]]
    if missed:
        print("below target: " + ", ".join(missed))


if __name__ == "__main__":
    main()
