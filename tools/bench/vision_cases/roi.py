"""RoI ops of the vision pack against torchvision.ops (imported by tools/bench/vision_ops).

The detection case: 1000 FPN-like rois (8..308 px boxes in an 800 x 1088
image) on a [2, 256, 200, 272] feature map at spatial_scale 0.25, output
7 x 7. roi_align with sampling_ratio 2, aligned False must run at least
twice as fast as torchvision's CPU kernel; roi_pool on the same data is
shown without a target.
"""
import numpy as np
import torch
import torchvision

import sidebyside


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    feat = rng.standard_normal((2, 256, 200, 272), dtype=np.float32)
    k = 1000
    xy = rng.random((k, 2), dtype=np.float32) * np.array([1088.0, 800.0], dtype=np.float32)
    wh = rng.random((k, 2), dtype=np.float32) * 300.0 + 8.0
    batch = rng.integers(0, 2, (k, 1)).astype(np.float32)
    boxes = np.concatenate([batch, xy, xy + wh], axis=1).astype(np.float32)
    return feat, boxes


def cases():
    feat, boxes = _inputs()
    tf, tb = torch.from_numpy(feat), torch.from_numpy(boxes)
    k = boxes.shape[0]
    return [
        sidebyside.Case(
            name="roi_align 1000 rois 2x256x200x272 7x7 sr2",
            op="vision.roi_align", inputs={"input": feat, "boxes": boxes},
            attrs={"output_size": "7,7", "spatial_scale": "0.25", "sampling_ratio": "2", "aligned": "false"},
            reference=lambda: torchvision.ops.roi_align(tf, tb, (7, 7), 0.25, 2, False),
            items=k, unit="rois/s", target=2.0, repeat=5, warmup=1),
        sidebyside.Case(
            name="roi_pool 1000 rois 2x256x200x272 7x7",
            op="vision.roi_pool", inputs={"input": feat, "boxes": boxes},
            attrs={"output_size": "7,7", "spatial_scale": "0.25"},
            reference=lambda: torchvision.ops.roi_pool(tf, tb, (7, 7), 0.25),
            items=k, unit="rois/s", repeat=3, warmup=1),
    ]
