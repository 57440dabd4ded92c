#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the MobileNetV3 Faster R-CNN classes (vision.fasterrcnn_mobilenet_v3 ...;
tests/vision/detection/test_fasterrcnn_mobilenet.c).

Run with the repository's venv (torch + torchvision on CPU):
    .venv/bin/python tools/gen_vision_fasterrcnn_mobilenet_goldens.py [--full]
Writes tests/data/vision/detection/frcnn_mnv3_tiny/: a tiny fasterrcnn_mobilenet_v3_large_fpn built the way
torchvision's _fasterrcnn_mobilenet_v3_large_fpn builds it, from its own classes, smaller:
  - the body: MobileNetV3(_mobilenet_v3_conf("mobilenet_v3_large", width_mult=0.1), norm_layer=BatchNorm2d)'s
    features (17 modules: the stem, 15 inverted residual blocks with SE and hardswish / relu, the 1x1 last conv),
    saved without num_batches_tracked as a pretrained file's FrozenBatchNorm2d has them;
  - BackboneWithFPN on the returned layers _mobilenet_extractor picks (the last two stages: features 13 and 16)
    with 16 FPN channels (torchvision's: 256) and LastLevelMaxPool;
  - AnchorGenerator(((32, 64, 128, 256, 512),) * 3, ((0.5, 1.0, 2.0),) * 3), RPNHead(16, 15),
    TwoMLPHead(16 * 7 * 7, 32), FastRCNNPredictor(32, 5), rpn_score_thresh 0.05 (the class's default);
random weights, batchnorm statistics of a trained net's size, run on a list of two images of different sizes
(3 x 40 x 56 and 3 x 50 x 36, min_size 128, max_size 160: a 160 x 160 batch, maps of 5 x 5, 5 x 5, 3 x 3).
Saved: model.safetensors (torchvision's keys), the images in the jagged form (images, images_offsets,
original_sizes), image_sizes, the FPN maps x0..x2 and the proposals (with offsets) as intermediate results,
and the detections (boxes, scores, labels, offsets). box_score_thresh 0 keeps every class score, so nms and
box_detections_per_img 12 fix the count.
--full also writes build-models/vision/fasterrcnn_mobilenet_v3_large_fpn/ and
fasterrcnn_mobilenet_v3_large_320_fpn/: torchvision's models with random weights (model.safetensors, 74 MB; the
body without num_batches_tracked) and their detections of one 3 x 120 x 160 image with box_score_thresh 0 and
the class's other defaults (input.npy, boxes.npy, scores.npy, labels.npy).
"""
import os
import sys

import numpy as np
import torch
import torchvision.models as tvm
from safetensors.torch import save_file
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.faster_rcnn import FasterRCNN, FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.rpn import RPNHead
from torchvision.models.mobilenetv3 import MobileNetV3, _mobilenet_v3_conf
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_vision_fasterrcnn_goldens import randomize  # noqa: E402  (the same weights and batchnorm statistics)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "vision", "detection", "frcnn_mnv3_tiny")
MODELS = os.path.join(ROOT, "build-models", "vision")


def save(**arrays):
    for name, t in arrays.items():
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{name}.npy"), a.copy(order="C"))


def pretrained_keys(model):
    """The state_dict as a pretrained file has it: the body's FrozenBatchNorm2d has no num_batches_tracked."""
    return {k: v.contiguous() for k, v in model.state_dict().items()
            if not (k.startswith("backbone.body.") and k.endswith("num_batches_tracked"))}


def extractor(features, fpn_channels):
    """_mobilenet_extractor(fpn=True) with its default returned layers, the FPN's width given."""
    stage_indices = [0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)] + [len(features) - 1]
    returned = [len(stage_indices) - 2, len(stage_indices) - 1]
    return_layers = {f"{stage_indices[k]}": str(v) for v, k in enumerate(returned)}
    in_channels = [features[stage_indices[i]].out_channels for i in returned]
    return BackboneWithFPN(features, return_layers, in_channels, fpn_channels, extra_blocks=LastLevelMaxPool())


def tiny(gen):
    setting, last = _mobilenet_v3_conf("mobilenet_v3_large", width_mult=0.1)
    body = MobileNetV3(setting, last, norm_layer=torch.nn.BatchNorm2d).features
    ch = 16
    anchors = AnchorGenerator(((32, 64, 128, 256, 512),) * 3, ((0.5, 1.0, 2.0),) * 3)
    model = FasterRCNN(extractor(body, ch), rpn_anchor_generator=anchors, rpn_head=RPNHead(ch, 15),
                       box_head=TwoMLPHead(ch * 7 * 7, 32), box_predictor=FastRCNNPredictor(32, 5),
                       min_size=128, max_size=160, rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=30,
                       rpn_score_thresh=0.05, box_score_thresh=0.0, box_detections_per_img=12).eval()
    randomize(model, gen)
    images = [torch.rand(3, 40, 56, generator=gen), torch.rand(3, 50, 36, generator=gen)]
    with torch.no_grad():
        il, _ = model.transform(images)
        feats = model.backbone(il.tensors)
        proposals, _ = model.rpn(il, feats)
        detections = model(images)
    save_file(pretrained_keys(model), os.path.join(OUT, "model.safetensors"))
    save(images=torch.cat([im.reshape(-1) for im in images]),
         images_offsets=np.cumsum([0] + [im.numel() for im in images]).astype(np.int64),
         original_sizes=np.array([im.shape[-2:] for im in images], dtype=np.int64),
         image_sizes=np.array(il.image_sizes, dtype=np.int64))
    save(**{f"x{i}": feats[name] for i, name in enumerate(["0", "1", "pool"])})
    save(proposals=torch.cat(proposals), proposals_offsets=np.cumsum([0] + [len(p) for p in proposals]),
         boxes=torch.cat([d["boxes"] for d in detections]), scores=torch.cat([d["scores"] for d in detections]),
         labels=torch.cat([d["labels"] for d in detections]),
         offsets=np.cumsum([0] + [len(d["boxes"]) for d in detections]))
    print("tiny: maps", [tuple(f.shape) for f in feats.values()], "proposals per image:",
          [len(p) for p in proposals], "detections per image:", [len(d["boxes"]) for d in detections])


def full(gen, name):
    """fasterrcnn_mobilenet_v3_large[_320]_fpn as torchvision builds it, random weights, one small image."""
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    model = getattr(tvm.detection, name)(weights=None, weights_backbone=None, box_score_thresh=0.0).eval()
    randomize(model, gen)
    image = torch.rand(1, 3, 120, 160, generator=gen)
    with torch.no_grad():
        det = model([image[0]])[0]
    save_file(pretrained_keys(model), os.path.join(d, "model.safetensors"))
    for what, t in [("input", image), ("boxes", det["boxes"]), ("scores", det["scores"]), ("labels", det["labels"])]:
        np.save(os.path.join(d, f"{what}.npy"), t.numpy())
    print(name + ":", len(det["boxes"]), "detections,", sum(p.numel() for p in model.parameters()), "parameters")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    tiny(torch.Generator().manual_seed(2111))
    if "--full" in sys.argv:
        full(torch.Generator().manual_seed(2112), "fasterrcnn_mobilenet_v3_large_fpn")
        full(torch.Generator().manual_seed(2114), "fasterrcnn_mobilenet_v3_large_320_fpn")


if __name__ == "__main__":
    main()
