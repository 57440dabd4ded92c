#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""RetinaNet's parts in loom against torchvision, in one run.

    .venv/bin/python tools/bench/vision_detection/retinanet_parts.py [--only SUBSTRING] [--threads N] [--cpu]

Cases, both sides on the same arrays, 2 threads each unless --threads:

  group_norm 32 groups [1,256,100,152]   F.group_norm on RetinaNet's P3 map of an
      800 x 1216 batch (the v2 heads' norm).
  retinanet_head v2 cls 256x384          RetinaNetClassificationHead with
      GroupNorm(32) (256 channels, 9 anchors, 91 classes) over the five
      levels of a 256 x 384 batch (strides 8..128).
  retinanet_postprocess 800x1216         RetinaNet.postprocess_detections on the
      182403 anchors x 91 classes of an 800 x 1216 batch: sigmoid, score 0.05,
      top 1000 per level, decode, clip, nms 0.5, 300 kept.

The ratio is torchvision's time over loom's (> 1: loom is faster); the
unit is images/s (one image per call).
"""
import argparse
import os
import sys
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402
from torch import nn  # noqa: E402
from torchvision.models.detection.anchor_utils import AnchorGenerator  # noqa: E402
from torchvision.models.detection.image_list import ImageList  # noqa: E402
from torchvision.models.detection.retinanet import RetinaNet, RetinaNetClassificationHead  # noqa: E402

import sidebyside  # noqa: E402


def group_norm_case():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 256, 100, 152, generator=gen)
    w, b = torch.randn(256, generator=gen), torch.randn(256, generator=gen)
    return sidebyside.Case(
        name="group_norm 32 groups [1,256,100,152]", op="vision.group_norm",
        inputs={"input": x.numpy(), "weight": w.numpy(), "bias": b.numpy()}, attrs={"num_groups": "32"},
        reference=lambda: F.group_norm(x, 32, w, b), items=1, unit="images/s", repeat=20, warmup=2)


def head_case():
    torch.manual_seed(1)
    head = RetinaNetClassificationHead(256, 9, 91, norm_layer=partial(nn.GroupNorm, 32)).eval()
    feats = [torch.randn(1, 256, h, w) for h, w in [(32, 48), (16, 24), (8, 12), (4, 6), (2, 3)]]
    inputs = {
        "conv_weight": torch.stack([head.conv[i][0].weight for i in range(4)]).detach().numpy(),
        "norm_weight": torch.stack([head.conv[i][1].weight for i in range(4)]).detach().numpy(),
        "norm_bias": torch.stack([head.conv[i][1].bias for i in range(4)]).detach().numpy(),
        "out_weight": head.cls_logits.weight.detach().numpy(), "out_bias": head.cls_logits.bias.detach().numpy(),
    }
    inputs.update({f"features{i}": f.numpy() for i, f in enumerate(feats)})

    def reference():
        with torch.no_grad():
            return head(feats)

    return sidebyside.Case(
        name="retinanet_head v2 cls 256x384", op="vision.retinanet_head", inputs=inputs,
        attrs={"num_outputs": "91"}, reference=reference, items=1, unit="images/s", repeat=3, warmup=1)


class _StandIn(nn.Module):
    out_channels = 8

    def forward(self, x):
        return x


def postprocess_case():
    gen = torch.Generator().manual_seed(2)
    h, w = 800, 1216
    grids = [(100, 152), (50, 76), (25, 38), (13, 19), (7, 10)]
    sizes = tuple((x, int(x * 2 ** (1 / 3)), int(x * 2 ** (2 / 3))) for x in [32, 64, 128, 256, 512])
    ag = AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * 5)
    anchors = ag(ImageList(torch.zeros(1, 3, h, w), [(h, w)]), [torch.zeros(1, 1, gh, gw) for gh, gw in grids])[0]
    per_level = [gh * gw * 9 for gh, gw in grids]
    n = sum(per_level)
    logits = torch.randn(1, n, 91, generator=gen) - 4.5
    reg = torch.randn(1, n, 4, generator=gen) * 0.3
    model = RetinaNet(_StandIn(), 91).eval()

    def reference():
        with torch.no_grad():
            return model.postprocess_detections(
                {"cls_logits": list(logits.split(per_level, 1)), "bbox_regression": list(reg.split(per_level, 1))},
                [list(anchors.split(per_level))], [(h, w)])

    return sidebyside.Case(
        name=f"retinanet_postprocess {h}x{w}", op="vision.retinanet_postprocess",
        inputs={"cls_logits": logits.numpy(), "bbox_regression": reg.numpy(), "anchors": anchors.numpy(),
                "image_sizes": np.array([[h, w]], dtype=np.int64)},
        attrs={"num_anchors_per_level": ",".join(map(str, per_level))}, reference=reference, items=1,
        unit="images/s", repeat=5, warmup=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    args = ap.parse_args()
    makers = [group_norm_case, head_case, postprocess_case]
    cases = [m() for m in makers]
    sidebyside.run([c for c in cases if args.only in c.name],
                   f"RetinaNet parts vs torchvision {torchvision.__version__}", args.threads, args.cpu)


if __name__ == "__main__":
    main()
