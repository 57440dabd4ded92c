# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side cases of the vision pack's box ops against torchvision.ops.

Scenes follow torchvision's NMS benchmark style: random xyxy boxes in a
1000 x 1000 image with widths and heights in [10, 100], uniform scores,
IoU threshold 0.5. Imported by tools/bench/vision_ops (tools/bench on sys.path).
"""
import numpy as np
import torch
import torchvision

import sidebyside


def _scene(n, seed):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 1000, size=(n, 2))
    wh = rng.uniform(10, 100, size=(n, 2))
    boxes = np.concatenate([xy, xy + wh], axis=1).astype(np.float32)
    scores = rng.uniform(0, 1, size=n).astype(np.float32)
    return boxes, scores


def cases():
    boxes, scores = _scene(10_000, 0)
    idxs = np.random.default_rng(1).integers(0, 80, size=10_000).astype(np.int64)
    tb, ts, ti = torch.from_numpy(boxes), torch.from_numpy(scores), torch.from_numpy(idxs)
    b1, _ = _scene(1000, 2)
    b2, _ = _scene(1000, 3)
    tb1, tb2 = torch.from_numpy(b1), torch.from_numpy(b2)
    h1, h2 = b1.astype(np.float16), b2.astype(np.float16)
    th1, th2 = torch.from_numpy(h1), torch.from_numpy(h2)
    return [
        sidebyside.Case(
            name="nms 10k boxes f32, iou 0.5", op="vision.nms",
            inputs={"boxes": boxes, "scores": scores}, attrs={"iou_threshold": "0.5"},
            reference=lambda: torchvision.ops.nms(tb, ts, 0.5),
            items=10_000, unit="boxes/s", target=5.0),
        sidebyside.Case(
            name="batched_nms 10k boxes, 80 classes", op="vision.batched_nms",
            inputs={"boxes": boxes, "scores": scores, "idxs": idxs}, attrs={"iou_threshold": "0.5"},
            reference=lambda: torchvision.ops.batched_nms(tb, ts, ti, 0.5),
            items=10_000, unit="boxes/s", target=3.0),
        sidebyside.Case(
            name="box_iou 1000x1000 f32", op="vision.box_iou",
            inputs={"boxes1": b1, "boxes2": b2},
            reference=lambda: torchvision.ops.box_iou(tb1, tb2),
            items=1_000_000, unit="pairs/s"),
        # f16 boxes: torch computes the corner differences in f16, the rest
        # in f32 after _upcast; loom rounds those steps with F16C
        sidebyside.Case(
            name="box_iou 1000x1000 f16", op="vision.box_iou",
            inputs={"boxes1": h1, "boxes2": h2},
            reference=lambda: torchvision.ops.box_iou(th1, th2),
            items=1_000_000, unit="pairs/s"),
        sidebyside.Case(
            name="generalized_box_iou 1000x1000 f16", op="vision.generalized_box_iou",
            inputs={"boxes1": h1, "boxes2": h2},
            reference=lambda: torchvision.ops.generalized_box_iou(th1, th2),
            items=1_000_000, unit="pairs/s"),
    ]
