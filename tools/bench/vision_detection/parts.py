#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The detection parts of loom against torchvision.models.detection, in one run.

    .venv/bin/python tools/bench/vision_detection/parts.py [--only SUBSTRING] [--threads N] [--cpu]

Cases, on the sizes of Faster R-CNN at its defaults (an 800 x 1216 batch,
5 FPN levels at strides 4..64, 3 anchors per location, 256 channels), both
sides on the same arrays, 2 threads each unless --threads:

  transform 480x640 -> 800x1067        GeneralizedRCNNTransform(800, 1333) on
      one float32 image: normalize, bilinear resize, batch padded to 32.
  rpn proposals 242991 anchors         BoxCoder.decode + filter_proposals:
      top 1000 per level, clip, remove small, nms 0.7 per level, 1000 kept.
  multiscale roi_align 1000 boxes      MultiScaleRoIAlign(['0'..'3'], 7, 2)
      on 256-channel maps of strides 4..32.
  postprocess detections 1000 x 91     RoIHeads.postprocess_detections:
      softmax over 91 classes, decode, clip, score 0.05, nms 0.5, 100 kept.

The ratio is torchvision's time over loom's (> 1: loom is faster); the
unit is images/s (one image per call). The whole detector is model.py.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
from torchvision.models.detection import _utils as det_utils  # noqa: E402
from torchvision.models.detection.anchor_utils import AnchorGenerator  # noqa: E402
from torchvision.models.detection.image_list import ImageList  # noqa: E402
from torchvision.models.detection.roi_heads import RoIHeads  # noqa: E402
from torchvision.models.detection.rpn import RegionProposalNetwork, RPNHead  # noqa: E402
from torchvision.models.detection.transform import GeneralizedRCNNTransform  # noqa: E402
from torchvision.ops import MultiScaleRoIAlign  # noqa: E402

import sidebyside  # noqa: E402

H, W = 800, 1216
GRIDS = [(200, 304), (100, 152), (50, 76), (25, 38), (13, 19)]
SIZES = ((32,), (64,), (128,), (256,), (512,))


def transform_case():
    gen = torch.Generator().manual_seed(0)
    img = torch.rand(3, 480, 640, generator=gen)
    t = GeneralizedRCNNTransform(800, 1333, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]).eval()
    return sidebyside.Case(
        name="transform 480x640 -> 800x1067", op="vision.rcnn_transform",
        inputs={"images": img.reshape(-1).numpy(), "images_offsets": np.array([0, img.numel()], dtype=np.int64),
                "original_sizes": np.array([[480, 640]], dtype=np.int64)},
        attrs={"min_size": "800", "max_size": "1333"}, reference=lambda: t([img]), items=1, unit="images/s",
        repeat=10, warmup=2)


def rpn_case():
    gen = torch.Generator().manual_seed(1)
    ag = AnchorGenerator(SIZES, ((0.5, 1.0, 2.0),) * 5)
    rpn = RegionProposalNetwork(ag, RPNHead(1, 3), 0.7, 0.3, 256, 0.5, dict(training=1000, testing=1000),
                                dict(training=1000, testing=1000), 0.7).eval()
    il = ImageList(torch.zeros(1, 3, H, W), [(H, W)])
    anchors = ag(il, [torch.zeros(1, 1, h, w) for h, w in GRIDS])
    per_level = [h * w * 3 for h, w in GRIDS]
    n = sum(per_level)
    obj = torch.randn(1, n, generator=gen) * 3
    deltas = torch.randn(1, n, 4, generator=gen) * 0.3

    def reference():
        with torch.no_grad():
            proposals = rpn.box_coder.decode(deltas.reshape(-1, 4), anchors).view(1, -1, 4)
            return rpn.filter_proposals(proposals, obj, il.image_sizes, per_level)

    return sidebyside.Case(
        name=f"rpn proposals {n} anchors", op="vision.rpn_proposals",
        inputs={"objectness": obj.numpy(), "pred_bbox_deltas": deltas.numpy(), "anchors": anchors[0].numpy(),
                "image_sizes": np.array([[H, W]], dtype=np.int64)},
        attrs={"num_anchors_per_level": ",".join(map(str, per_level))}, reference=reference, items=1,
        unit="images/s", repeat=10, warmup=2)


def boxes(gen, n, lo, hi, extent):
    xy = torch.rand(n, 2, generator=gen) * torch.tensor(extent)
    wh = torch.rand(n, 2, generator=gen) * (hi - lo) + lo
    return torch.cat([xy, xy + wh], 1)


def multiscale_case():
    gen = torch.Generator().manual_seed(2)
    feats = {str(k): torch.randn(1, 256, h, w, generator=gen) for k, (h, w) in enumerate(GRIDS[:4])}
    b = boxes(gen, 1000, 8, 600, [W - 8, H - 8])
    pool = MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)
    inputs = {"boxes": b.numpy(), "boxes_offsets": np.array([0, 1000], dtype=np.int64),
              "image_sizes": np.array([[H, W]], dtype=np.int64)}
    inputs.update({f"x{k}": feats[str(k)].numpy() for k in range(4)})
    return sidebyside.Case(
        name="multiscale roi_align 1000 boxes", op="vision.multiscale_roi_align", inputs=inputs,
        attrs={"output_size": "7"}, reference=lambda: pool(feats, [b], [(H, W)]), items=1, unit="images/s",
        repeat=10, warmup=2)


def detections_case():
    gen = torch.Generator().manual_seed(3)
    heads = RoIHeads(None, None, None, 0.5, 0.5, 512, 0.25, None, 0.05, 0.5, 100)
    props = boxes(gen, 1000, 4, 300, [W - 4, H - 4])
    logits = torch.randn(1000, 91, generator=gen) * 3
    reg = torch.randn(1000, 364, generator=gen) * 0.3
    return sidebyside.Case(
        name="postprocess detections 1000 x 91", op="vision.rcnn_postprocess_detections",
        inputs={"class_logits": logits.numpy(), "box_regression": reg.numpy(), "proposals": props.numpy(),
                "proposals_offsets": np.array([0, 1000], dtype=np.int64),
                "image_sizes": np.array([[H, W]], dtype=np.int64)},
        reference=lambda: heads.postprocess_detections(logits, reg, [props], [(H, W)]), items=1,
        unit="images/s", repeat=200, warmup=5)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    args = ap.parse_args()
    cases = [transform_case(), rpn_case(), multiscale_case(), detections_case()]
    sidebyside.run([c for c in cases if args.only in c.name],
                   f"detection parts vs torchvision {torchvision.__version__}", args.threads, args.cpu)


if __name__ == "__main__":
    main()
