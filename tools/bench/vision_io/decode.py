#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""JPEG decode throughput: vision.decode_jpeg against torchvision.io.decode_jpeg
and PIL (Image.open + load + np.asarray, what torchvision's PIL path does),
on the same files, in one run.

    .venv/bin/python tools/bench/vision_io/decode.py [--threads N] [--batch B] [--cpu]

The script makes one 1920 x 1080 picture (smooth gradients, edges and noise,
so it costs what a photo costs to decode) and saves it with PIL as a
quality-90 4:2:0 baseline JPEG (the most common kind); a batch of B copies
is decoded per call, spread over N threads (default 2) on each side: loom
through its jagged batch input (input = the files back to back, offsets =
their bounds; one file per task of the core's pool), torchvision and PIL
through a thread pool of N workers (both release the GIL while decoding).
Printed in images/s; the target is >= 1x PIL.
"""
import argparse
import io
import os
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import sidebyside  # noqa: E402

warnings.filterwarnings("ignore", category=DeprecationWarning)   # torchvision.io 0.29's deprecation notice


def picture(h=1080, w=1920, seed=0):
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.stack([255 * x / (w - 1), 255 * y / (h - 1), 127.5 + 127.5 * np.sin((x + 2 * y) / 37.0)], -1)
    img[((x // 97 + y // 61) % 2) == 0] *= 0.7
    img += rng.normal(0, 6, img.shape).astype(np.float32)
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2, help="threads on each side (default 2)")
    ap.add_argument("--batch", type=int, default=16, help="images per call (default 16)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    args = ap.parse_args()
    import torchvision
    from torchvision.io import decode_jpeg

    buf = io.BytesIO()
    Image.fromarray(picture()).save(buf, "JPEG", quality=90, subsampling=2)
    jpeg = buf.getvalue()
    b = args.batch
    files = np.frombuffer(jpeg * b, dtype=np.uint8)
    offsets = np.arange(b + 1, dtype=np.int64) * len(jpeg)
    tensors = [torch.frombuffer(bytearray(jpeg), dtype=torch.uint8) for _ in range(b)]
    pool = ThreadPoolExecutor(args.threads)

    def tv():
        list(pool.map(lambda t: decode_jpeg(t, mode="RGB"), tensors))

    def pil():
        def one(_):
            im = Image.open(io.BytesIO(jpeg))
            im.load()
            return np.asarray(im)
        list(pool.map(one, range(b)))

    inputs = {"input": files, "offsets": offsets}
    name = f"decode 1920x1080 JPEG q90 4:2:0, x{b}"
    cases = [
        sidebyside.Case(name=name + " vs torchvision", op="vision.decode_jpeg", inputs=inputs,
                        attrs={"mode": "RGB"}, reference=tv, items=b, unit="images/s", repeat=10, warmup=2),
        sidebyside.Case(name=name + " vs PIL", op="vision.decode_jpeg", inputs=inputs,
                        attrs={"mode": "RGB"}, reference=pil, items=b, unit="images/s", target=1.0, repeat=10,
                        warmup=2),
    ]
    import PIL
    rows = sidebyside.run(cases, f"image decode vs torchvision {torchvision.__version__} / PIL {PIL.__version__} "
                          f"({len(jpeg) // 1024} KB file)", args.threads, args.cpu)
    pool.shutdown()
    missed = [r["case"] for r in rows if r["target"] and r["ratio"] < r["target"]]
    if missed:
        print("below target: " + ", ".join(missed))


if __name__ == "__main__":
    main()
