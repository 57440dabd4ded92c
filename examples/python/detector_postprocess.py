#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Detector post-processing as torchvision users write it, on torch tensors:
per-class NMS over a batch of candidate boxes (batched_nms), then the kept
boxes' features pooled from the feature map (roi_align) for a second stage.
Checked against torchvision.ops when it is importable.

    LOOM_LIBRARY=build/core/libloom.so.0 PYTHONPATH=python .venv/bin/python examples/python/detector_postprocess.py
"""
import torch

import loom

torch.manual_seed(0)
n_candidates, n_classes = 1000, 5
xy = torch.rand(n_candidates, 2) * 200
boxes = torch.cat([xy, xy + torch.rand(n_candidates, 2) * 60 + 4], dim=1)    # xyxy on a 256x256 image
scores = torch.rand(n_candidates)
labels = torch.randint(0, n_classes, (n_candidates,))
features = torch.rand(1, 16, 32, 32)                                        # stride 8 feature map

keep = loom.ops.vision.batched_nms(boxes, scores, labels, iou_threshold=0.5)
keep = keep[:100]                                                            # top 100 detections
rois = torch.cat([torch.zeros(len(keep), 1), boxes[keep]], dim=1)            # (batch index, x1, y1, x2, y2)
pooled = loom.ops.vision.roi_align(features, rois, output_size=[7, 7], spatial_scale=1 / 8,
                                   sampling_ratio=2, aligned=True)
print(f"kept {len(keep)} of {n_candidates} boxes; pooled features {tuple(pooled.shape)} ({type(pooled).__name__})")

try:
    import torchvision
except ImportError:
    torchvision = None
if torchvision is not None:
    same_keep = torch.equal(keep, torchvision.ops.batched_nms(boxes, scores, labels, 0.5)[:100])
    same_pool = torch.allclose(pooled, torchvision.ops.roi_align(features, rois, [7, 7], 1 / 8, 2, True), atol=1e-5)
    print(f"torchvision {torchvision.__version__}: batched_nms equal: {same_keep}, roi_align equal: {same_pool}")
