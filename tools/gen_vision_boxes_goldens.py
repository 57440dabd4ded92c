#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the vision pack's box ops (tests/vision/boxes), from torchvision.

Run with the repository's venv (torch + torchvision on CPU):
    .venv/bin/python tools/gen_vision_boxes_goldens.py
Writes tests/data/vision/boxes/<case>_<argument>.npy: the inputs under their
torchvision argument names and the result as <case>_output.npy. The cases
(and their attributes) are mirrored in tests/vision/boxes/test_boxes_*.c.
"""
import math
import os

import numpy as np
import torch
import torchvision
from torchvision import ops

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "boxes")


def save(case, **arrays):
    for name, t in arrays.items():
        a = t.numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{case}_{name}.npy"), a.copy(order="C"))


def scene(n, gen, dtype=torch.float32, size=200.0):
    """Random xyxy boxes in a size x size image, sides in [size/100, size/10]."""
    xy = torch.rand(n, 2, generator=gen, dtype=torch.float64) * size
    wh = torch.rand(n, 2, generator=gen, dtype=torch.float64) * size * 0.09 + size * 0.01
    return torch.cat([xy, xy + wh], 1).to(dtype)


def special_boxes(dtype):
    """Zero-area boxes, duplicates, touching and nested boxes."""
    return torch.tensor([
        [0, 0, 10, 10], [0, 0, 10, 10], [5, 5, 5, 5], [5, 5, 5, 5], [0, 0, 0, 10],
        [10, 0, 20, 10], [2, 2, 8, 8], [0, 0, 10, 5], [1, 1, 11, 11], [3, 0, 3, 7],
        [0, 0, 20, 20], [10, 10, 30, 30], [100, 100, 101, 101],
    ], dtype=dtype)


def gen_nms(gen):
    for dt, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        b = scene(300, gen, dt)
        s = torch.rand(300, generator=gen, dtype=torch.float64).to(dt)
        for thr in (0.3, 0.5):
            save(f"nms_{tag}_thr{int(thr * 10)}", boxes=b, scores=s, output=ops.nms(b, s, thr))
        # equal scores: only five distinct values among 300 boxes
        st = (s * 5).floor() / 5
        save(f"nms_{tag}_ties", boxes=b, scores=st, output=ops.nms(b, st, 0.3))
        sp = special_boxes(dt)
        ss = torch.tensor([0.9, 0.9, 0.8, 0.8, 0.7, 0.7, 0.6, 0.95, 0.5, 0.4, 0.3, 0.3, 0.1], dtype=dt)
        save(f"nms_{tag}_special", boxes=sp, scores=ss, output=ops.nms(sp, ss, 0.2))
    # IoU exactly 0.5 is not above a 0.5 threshold: both boxes stay
    b = torch.tensor([[0, 0, 2, 1], [0, 0, 1, 1.0]])
    s = torch.tensor([0.9, 0.8])
    save("nms_f32_exact", boxes=b, scores=s, output=ops.nms(b, s, 0.5))
    save("nms_f32_empty", boxes=torch.zeros(0, 4), scores=torch.zeros(0),
         output=ops.nms(torch.zeros(0, 4), torch.zeros(0), 0.5))


def gen_batched(gen):
    for dt, tag in [(torch.float32, "f32"), (torch.float64, "f64")]:
        # <= 1000 boxes: torchvision's coordinate-offset path
        b = scene(400, gen, dt)
        s = ((torch.rand(400, generator=gen) * 8).floor() / 8).to(dt)
        i = torch.randint(0, 6, (400,), generator=gen)
        save(f"bnms_{tag}_small", boxes=b, scores=s, idxs=i, output=ops.batched_nms(b, s, i, 0.4))
        # > 1000 boxes: per-category loop, kept indices re-sorted by an unstable sort
        b = scene(1500, gen, dt, 400.0)
        s = ((torch.rand(1500, generator=gen) * 6).floor() / 6).to(dt)
        i = torch.randint(-3, 17, (1500,), generator=gen) * 1000
        save(f"bnms_{tag}_large", boxes=b, scores=s, idxs=i, output=ops.batched_nms(b, s, i, 0.4))
    # NaN scores (visited first) and coordinates, -0.0 ties with 0.0, on both paths
    for n, tag in ((300, "small"), (1200, "large")):
        b = scene(n, gen, torch.float32, 300.0)
        s = ((torch.rand(n, generator=gen) * 4).floor() / 4 - 0.25)
        s[::17] = float("nan")
        s[5::19] = -0.0
        b[::23, 1] = float("nan")
        i = torch.randint(0, 4, (n,), generator=gen)
        save(f"bnms_f32_nan_{tag}", boxes=b, scores=s, idxs=i, output=ops.batched_nms(b, s, i, 0.3))
        if tag == "small":
            save("nms_f32_nan", boxes=b, scores=s, output=ops.nms(b, s, 0.3))
    save("bnms_f32_empty", boxes=torch.zeros(0, 4), scores=torch.zeros(0), idxs=torch.zeros(0, dtype=torch.int64),
         output=ops.batched_nms(torch.zeros(0, 4), torch.zeros(0), torch.zeros(0, dtype=torch.int64), 0.5))


def pair_inputs(gen, dt):
    a = torch.cat([scene(11, gen, torch.float64, 40.0), special_boxes(torch.float64)[:6]]).to(dt)
    b = torch.cat([scene(9, gen, torch.float64, 40.0), special_boxes(torch.float64)[6:]]).to(dt)
    return a, b


def gen_pairwise(gen):
    for dt, tag in [(torch.float32, "f32"), (torch.float64, "f64"), (torch.float16, "f16")]:
        a, b = pair_inputs(gen, dt)
        for fmt in ("xyxy", "xywh", "cxcywh"):
            save(f"box_iou_{tag}_{fmt}", boxes1=a, boxes2=b, output=ops.box_iou(a, b, fmt=fmt))
        save(f"generalized_box_iou_{tag}", boxes1=a, boxes2=b, output=ops.generalized_box_iou(a, b))
        save(f"distance_box_iou_{tag}", boxes1=a, boxes2=b, output=ops.distance_box_iou(a, b))
        save(f"complete_box_iou_{tag}", boxes1=a, boxes2=b, output=ops.complete_box_iou(a, b))
    a, b = pair_inputs(gen, torch.float32)
    save("distance_box_iou_f32_eps", boxes1=a, boxes2=b, output=ops.distance_box_iou(a, b, eps=0.5))
    save("complete_box_iou_f32_eps", boxes1=a, boxes2=b, output=ops.complete_box_iou(a, b, eps=0.5))
    e = torch.zeros(0, 4)
    save("box_iou_f32_empty", boxes1=e, boxes2=a, output=ops.box_iou(e, a))


LOSSES = {
    "generalized_box_iou_loss": ops.generalized_box_iou_loss,
    "distance_box_iou_loss": ops.distance_box_iou_loss,
    "complete_box_iou_loss": ops.complete_box_iou_loss,
}


def gen_losses(gen):
    for dt, tag in [(torch.float32, "f32"), (torch.float64, "f64"), (torch.float16, "f16")]:
        a = torch.cat([scene(20, gen, torch.float64, 40.0), special_boxes(torch.float64)[:5]]).to(dt)
        b = torch.cat([scene(20, gen, torch.float64, 40.0), special_boxes(torch.float64)[5:10]]).to(dt)
        for name, fn in LOSSES.items():
            for red in ("none", "mean", "sum"):
                save(f"{name}_{tag}_{red}", boxes1=a, boxes2=b, output=fn(a, b, reduction=red))
    a = scene(6, gen, torch.float32, 40.0).reshape(2, 3, 4)
    b = scene(6, gen, torch.float32, 40.0).reshape(2, 3, 4)
    for name, fn in LOSSES.items():
        save(f"{name}_f32_eps", boxes1=a, boxes2=b, output=fn(a, b, eps=1.0))
        e = torch.zeros(0, 4)
        for red in ("none", "mean", "sum"):
            save(f"{name}_f32_empty_{red}", boxes1=e, boxes2=e, output=fn(e, e, reduction=red))


def gen_utils(gen):
    fmts = ("xyxy", "xywh", "cxcywh")
    for dt, tag in [(torch.float32, "f32"), (torch.float64, "f64"), (torch.float16, "f16")]:
        b = (torch.rand(2, 5, 4, generator=gen, dtype=torch.float64) * 50 + 0.1).to(dt)
        save(f"box_convert_{tag}", boxes=b)
        for i in fmts:
            for o in fmts:
                np.save(os.path.join(OUT, f"box_convert_{tag}_{i}_{o}_output.npy"), ops.box_convert(b, i, o).numpy())
            np.save(os.path.join(OUT, f"box_area_{tag}_{i}_output.npy"), ops.box_area(b, fmt=i).numpy())
        c = (torch.rand(7, 4, generator=gen, dtype=torch.float64) * 300 - 100).to(dt)
        save(f"clip_boxes_to_image_{tag}", boxes=c, output=ops.clip_boxes_to_image(c, (120, 90)))
        r = special_boxes(dt)
        save(f"remove_small_boxes_{tag}", boxes=r, output=ops.remove_small_boxes(r, 6.0))
    # 10.000000001 rounds to 10 in f32: torch compares in the box dtype
    r = torch.tensor([[0, 0, 10, 10], [0, 0, 10, 11], [0, 0, 9.99, 20]])
    save("remove_small_boxes_f32_round", boxes=r, output=ops.remove_small_boxes(r, 10.000000001))


def main():
    os.makedirs(OUT, exist_ok=True)
    gen = torch.Generator().manual_seed(20261129)
    gen_nms(gen)
    gen_batched(gen)
    gen_pairwise(gen)
    gen_losses(gen)
    gen_utils(gen)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"torchvision {torchvision.__version__}: {len(os.listdir(OUT))} files, {total / 1024:.0f} KiB in {OUT}")


if __name__ == "__main__":
    main()
