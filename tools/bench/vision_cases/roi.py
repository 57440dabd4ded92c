# SPDX-License-Identifier: BSD-3-Clause
"""RoI ops of the vision pack against torchvision.ops (imported by tools/bench/vision_ops).

Both cases use a [2, 256, 200, 272] feature map (an 800 x 1088 image at
spatial_scale 0.25, FPN level P2), 1000 rois over the two images, output
7 x 7, sampling_ratio 2:

  large rois  FPN-like boxes of 8..308 image px (2..77 map px), aligned
              False; roi_pool on the same data is shown without a target.
  small rois  detection-like boxes of 16..128 image px (4..32 map px),
              aligned True: the rois touch little of the map each, so a
              cost per map pixel (a transposition of the whole map) would
              dominate the sampling.

roi_align must run at least 3 times as fast as torchvision's CPU kernel on
both, at any thread count.
"""
import numpy as np
import torch
import torchvision

import sidebyside


def _inputs(lo, hi, seed=0):
    """The map and 1000 boxes with sides uniform in [lo, hi) image px."""
    rng = np.random.default_rng(seed)
    feat = rng.standard_normal((2, 256, 200, 272), dtype=np.float32)
    k = 1000
    xy = rng.random((k, 2), dtype=np.float32) * np.array([1088.0, 800.0], dtype=np.float32)
    wh = rng.random((k, 2), dtype=np.float32) * np.float32(hi - lo) + np.float32(lo)
    batch = rng.integers(0, 2, (k, 1)).astype(np.float32)
    boxes = np.concatenate([batch, xy, xy + wh], axis=1).astype(np.float32)
    return feat, boxes


def _align(name, feat, boxes, aligned):
    tf, tb = torch.from_numpy(feat), torch.from_numpy(boxes)
    return sidebyside.Case(
        name=name, op="vision.roi_align", inputs={"input": feat, "boxes": boxes},
        attrs={"output_size": "7,7", "spatial_scale": "0.25", "sampling_ratio": "2",
               "aligned": "true" if aligned else "false"},
        reference=lambda: torchvision.ops.roi_align(tf, tb, (7, 7), 0.25, 2, aligned),
        items=boxes.shape[0], unit="rois/s", target=3.0, repeat=5, warmup=1)


def cases():
    feat, boxes = _inputs(8.0, 308.0)
    _, small = _inputs(16.0, 128.0, seed=1)
    tf, tb = torch.from_numpy(feat), torch.from_numpy(boxes)
    k = boxes.shape[0]
    return [
        _align("roi_align 1000 rois 2x256x200x272 7x7 sr2", feat, boxes, False),
        _align("roi_align 1000 small rois 4-32px 7x7 sr2 al", feat, small, True),
        sidebyside.Case(
            name="roi_pool 1000 rois 2x256x200x272 7x7",
            op="vision.roi_pool", inputs={"input": feat, "boxes": boxes},
            attrs={"output_size": "7,7", "spatial_scale": "0.25"},
            reference=lambda: torchvision.ops.roi_pool(tf, tb, (7, 7), 0.25),
            items=k, unit="rois/s", repeat=3, warmup=1),
    ]
