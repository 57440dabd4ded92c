#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the vision `transforms` module to tests/data/vision/transforms/.

Every case is a call of torchvision.transforms.v2.functional on the CPU
(torch's uint8 resize there is its native fixed-point path: AVX2 on x86,
which is what `loom` must match bit for bit). The inputs are seeded random
images (uint8 0..255, float32 in [0, 1)), masks and boxes, shared between
cases. cases.txt lists one case a line, read by the C tests:

    OP NAME INPUT ATTRS

where ATTRS are `key=value` pairs separated by `;` in loom's attribute
syntax, the output is NAME.npy (and NAME_canvas.npy, the new canvas size,
for boxes) and the input INPUT.npy.

    .venv/bin/python tools/gen_vision_transforms_goldens.py [OUTDIR]

Needs numpy, torch and torchvision. Keeps the module under ~300 KB.
"""
import os
import sys

import numpy as np
import torch
import torchvision
import torchvision.transforms.v2.functional as F
from torchvision import tv_tensors
from torchvision.transforms import InterpolationMode

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "transforms")

MODES = {"nearest": InterpolationMode.NEAREST, "nearest-exact": InterpolationMode.NEAREST_EXACT,
         "bilinear": InterpolationMode.BILINEAR, "bicubic": InterpolationMode.BICUBIC}

rng = np.random.default_rng(20261201)
inputs = {}
lines = []


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a), allow_pickle=False)


def add_input(name, a):
    inputs[name] = a
    save(name, a)


def attrs_text(size=None, max_size=None, **kw):
    parts = []
    if size is not None:
        parts.append("size=" + ",".join(str(s) for s in size))
    if max_size is not None:
        parts.append(f"max_size={max_size}")
    for k, v in kw.items():
        parts.append(f"{k}={'true' if v is True else 'false' if v is False else v}")
    return ";".join(parts) if parts else "-"


def resize_case(name, inp, size, mode, antialias=True, max_size=None):
    x = torch.from_numpy(inputs[inp])
    y = F.resize(x, size, interpolation=MODES[mode], max_size=max_size, antialias=antialias)
    save(name, y.numpy())
    lines.append(f"vision.resize {name} {inp} "
                 + attrs_text(size, max_size, interpolation=mode, antialias=antialias))


def mask_case(name, inp, size, mode="nearest", max_size=None):
    m = tv_tensors.Mask(torch.from_numpy(inputs[inp]))
    y = F.resize(m, size, interpolation=MODES[mode], max_size=max_size)
    save(name, y.as_subclass(torch.Tensor).numpy())
    lines.append(f"vision.resize_mask {name} {inp} " + attrs_text(size, max_size, interpolation=mode))


def boxes_case(name, inp, canvas, size, fmt="xyxy", max_size=None):
    b = tv_tensors.BoundingBoxes(torch.from_numpy(inputs[inp]), format=fmt.upper(), canvas_size=canvas)
    y = F.resize(b, size, max_size=max_size)
    save(name, y.as_subclass(torch.Tensor).numpy())
    save(name + "_canvas", np.array(y.canvas_size, dtype=np.int64))
    lines.append(f"vision.resize_bounding_boxes {name} {inp} "
                 + attrs_text(size, max_size, canvas_size=f"{canvas[0]},{canvas[1]}", format=fmt))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.set_num_threads(2)
    # Images: [C, H, W] and a batch [N, C, H, W]; channel counts 1, 3, 4, 5
    # (torch's AVX2 uint8 kernels take C <= 4, its generic ones C > 4).
    add_input("img_u8", rng.integers(0, 256, (3, 23, 31), dtype=np.uint8))
    add_input("img_f32", rng.random((3, 23, 31), dtype=np.float32))
    add_input("batch_u8", rng.integers(0, 256, (2, 3, 13, 18), dtype=np.uint8))
    add_input("batch_f32", rng.random((2, 1, 13, 18), dtype=np.float32))
    add_input("gray_u8", rng.integers(0, 256, (1, 96, 128), dtype=np.uint8))
    add_input("rgba_u8", rng.integers(0, 256, (4, 19, 17), dtype=np.uint8))
    add_input("c5_u8", rng.integers(0, 256, (5, 16, 21), dtype=np.uint8))
    # a smooth image: bicubic overshoot stays small, so the clamp is rarely hit
    yy, xx = np.mgrid[0:23, 0:31]
    add_input("smooth_u8", np.stack([(127 + 120 * np.sin(xx / 4.0 + c) * np.cos(yy / 5.0)).astype(np.uint8)
                                     for c in range(3)]))

    sizes = {"down": [11, 14], "up": [30, 41], "mixed": [35, 13], "wonly": [23, 20], "short": [12]}
    configs = [("nearest", False), ("nearest-exact", False), ("bilinear", True), ("bilinear", False),
               ("bicubic", True), ("bicubic", False)]
    for mode, aa in configs:
        tag = mode.replace("-", "_") + ("_aa" if aa else "")
        for sname, size in sizes.items():
            resize_case(f"u8_{tag}_{sname}", "img_u8", size, mode, aa)
        for sname in ("down", "up", "mixed"):
            resize_case(f"f32_{tag}_{sname}", "img_f32", sizes[sname], mode, aa)
        resize_case(f"u8_{tag}_max_size", "img_u8", [12], mode, aa, max_size=14)
        resize_case(f"batch_u8_{tag}", "batch_u8", [7, 29], mode, aa)
        resize_case(f"batch_f32_{tag}", "batch_f32", [7, 29], mode, aa)
        resize_case(f"smooth_u8_{tag}", "smooth_u8", [17, 45], mode, aa)
    # wide filters (support > 8 taps: several vector chunks per output)
    for mode in ("bilinear", "bicubic"):
        resize_case(f"gray_u8_{mode}_aa_x9", "gray_u8", [11, 13], mode, True)
        resize_case(f"gray_u8_{mode}_x9", "gray_u8", [11, 13], mode, False)
        resize_case(f"rgba_u8_{mode}_aa", "rgba_u8", [8, 33], mode, True)
        resize_case(f"c5_u8_{mode}_aa", "c5_u8", [9, 10], mode, True)
        resize_case(f"c5_u8_{mode}", "c5_u8", [30, 10], mode, False)
    # (torch 2.15 asserts on a 1 x 1 uint8 output: its channels-last check is ambiguous there)
    resize_case("u8_bilinear_aa_1row", "img_u8", [1, 5], "bilinear", True)
    resize_case("u8_bicubic_1col", "img_u8", [5, 1], "bicubic", False)
    resize_case("u8_bicubic_aa_none", "img_u8", None, "bicubic", True, max_size=19)
    resize_case("u8_same_size", "img_u8", [23, 31], "bilinear", True)

    # Masks: resized by nearest neighbour with their image
    add_input("mask_u8", rng.integers(0, 6, (2, 23, 31), dtype=np.uint8))
    add_input("mask_i64", rng.integers(0, 1000, (23, 31), dtype=np.int64))
    for sname, size in sizes.items():
        mask_case(f"mask_u8_{sname}", "mask_u8", size)
        mask_case(f"mask_u8_exact_{sname}", "mask_u8", size, "nearest-exact")
    mask_case("mask_i64_up", "mask_i64", [30, 41])
    mask_case("mask_u8_bilinear_means_nearest", "mask_u8", [11, 14], "bilinear")

    # Boxes on the img_u8 canvas (23 x 31), every format
    xy = rng.uniform(0, 20, (6, 2)).astype(np.float32)
    wh = rng.uniform(1, 10, (6, 2)).astype(np.float32)
    add_input("boxes_xyxy", np.concatenate([xy, xy + wh], axis=1))
    add_input("boxes_xywh", np.concatenate([xy, wh], axis=1))
    add_input("boxes_cxcywh", np.concatenate([xy + wh / 2, wh], axis=1))
    for fmt in ("xyxy", "xywh", "cxcywh"):
        for sname in ("down", "up", "short"):
            boxes_case(f"boxes_{fmt}_{sname}", f"boxes_{fmt}", (23, 31), sizes[sname], fmt)
    boxes_case("boxes_xyxy_max_size", "boxes_xyxy", (23, 31), [12], "xyxy", max_size=14)

    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write(f"# torchvision {torchvision.__version__}, torch {torch.__version__}, "
                f"cpu capability {torch.backends.cpu.get_cpu_capability()}\n")
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases in {OUT}")


if __name__ == "__main__":
    main()
