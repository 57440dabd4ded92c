#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the Faster R-CNN classes (vision.fasterrcnn ...; tests/vision/detection/test_fasterrcnn.c).

Run with the repository's venv (torch + torchvision on CPU):
    .venv/bin/python tools/gen_vision_fasterrcnn_goldens.py [--full]
Writes tests/data/vision/detection/frcnn_tiny/<case>_*: a tiny FasterRCNN built from torchvision's own classes
(FasterRCNN(BackboneWithFPN(a ResNet body of Bottlenecks, layers 1, 1, 1, 1, widths 4, 4, 8, 8, stem 8), ...)),
random weights, in two cases:
  v1  FPN convs with bias, RPNHead(conv_depth=1), TwoMLPHead(8 * 7 * 7, 16); the body's batchnorms saved as a
      pretrained file has them (FrozenBatchNorm2d: no num_batches_tracked)
  v2  fasterrcnn_resnet50_fpn_v2's parts: BatchNorm2d after the FPN convs, RPNHead(conv_depth=2),
      FastRCNNConvFCHead((8, 7, 7), [8] * 4, [16], BatchNorm2d)
each as <case>_model.safetensors (the state_dict, torchvision's keys) and .npy: the two input images of different
sizes (the jagged form: images, images_offsets, original_sizes), the FPN maps x0..x4 and the proposals (with their
offsets) as intermediate results, and the detections (boxes, scores, labels, offsets). box_score_thresh 0 keeps
every class score, so nms and box_detections_per_img 12 fix the count.
--full also writes build-models/vision/fasterrcnn_resnet50_fpn_v2/ and fasterrcnn_resnet50_fpn/: torchvision's
models with random weights (model.safetensors, 167 and 160 MB; v1's body without num_batches_tracked, as a
pretrained file's FrozenBatchNorm2d) and their detections of one 3 x 120 x 160 image with min_size 160,
box_score_thresh 0 (input.npy, boxes.npy, scores.npy, labels.npy).
"""
import os
import sys

import numpy as np
import torch
import torchvision.models as tvm
from safetensors.torch import save_file
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.faster_rcnn import FasterRCNN, FastRCNNConvFCHead, FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.rpn import RPNHead
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_vision_models_goldens import TinyResNet  # noqa: E402  (torchvision's ResNet with given widths)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "vision", "detection", "frcnn_tiny")
MODELS = os.path.join(ROOT, "build-models", "vision")


def save(case, **arrays):
    for name, t in arrays.items():
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{case}_{name}.npy"), a.copy(order="C"))


def randomize(model, gen):
    """Normal weights of std 1/sqrt(fan_in) (box codes 10 times smaller, so boxes stay apart), biases 0.1;
    batchnorms: weights near 1, statistics of a trained net's size."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            std = (0.1 if p.dim() == 1 else p[0].numel() ** -0.5) * (0.1 if "bbox_pred" in name else 1.0)
            p.copy_(torch.randn(p.shape, generator=gen) * std)
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(1 + 0.2 * torch.randn(m.weight.shape, generator=gen))
                m.running_mean.copy_(0.2 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=gen))


def tiny(gen, v2):
    body = TinyResNet(tvm.resnet.Bottleneck, [1, 1, 1, 1], [4, 4, 8, 8], 8, num_classes=1)
    ch = 8
    norm = torch.nn.BatchNorm2d if v2 else None
    backbone = BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"},
                               [16, 16, 32, 32], ch, extra_blocks=LastLevelMaxPool(), norm_layer=norm)
    extra = dict(rpn_head=RPNHead(ch, 3, conv_depth=2),
                 box_head=FastRCNNConvFCHead((ch, 7, 7), [ch] * 4, [16], norm_layer=norm)) if v2 else \
        dict(box_head=TwoMLPHead(ch * 7 * 7, 16))
    model = FasterRCNN(backbone, min_size=64, max_size=96, rpn_pre_nms_top_n_test=60, rpn_post_nms_top_n_test=25,
                       box_score_thresh=0.0, box_detections_per_img=12, box_predictor=FastRCNNPredictor(16, 4),
                       **extra).eval()
    randomize(model, gen)
    images = [torch.rand(3, 40, 56, generator=gen), torch.rand(3, 50, 36, generator=gen)]
    with torch.no_grad():
        il, _ = model.transform(images)
        feats = model.backbone(il.tensors)
        proposals, _ = model.rpn(il, feats)
        detections = model(images)
    case = "v2" if v2 else "v1"
    sd = {k: v.contiguous() for k, v in model.state_dict().items()
          if v2 or not (k.startswith("backbone.body.") and k.endswith("num_batches_tracked"))}
    save_file(sd, os.path.join(OUT, f"{case}_model.safetensors"))
    save(case, images=torch.cat([im.reshape(-1) for im in images]),
         images_offsets=np.cumsum([0] + [im.numel() for im in images]).astype(np.int64),
         original_sizes=np.array([im.shape[-2:] for im in images], dtype=np.int64),
         image_sizes=np.array(il.image_sizes, dtype=np.int64))
    save(case, **{f"x{i}": feats[name] for i, name in enumerate(["0", "1", "2", "3", "pool"])})
    save(case, proposals=torch.cat(proposals), proposals_offsets=np.cumsum([0] + [len(p) for p in proposals]),
         boxes=torch.cat([d["boxes"] for d in detections]), scores=torch.cat([d["scores"] for d in detections]),
         labels=torch.cat([d["labels"] for d in detections]),
         offsets=np.cumsum([0] + [len(d["boxes"]) for d in detections]))
    print(case, "detections per image:", [len(d["boxes"]) for d in detections])


def full(gen, name):
    """fasterrcnn_resnet50_fpn[_v2] as torchvision builds it, random weights, one small image."""
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    model = getattr(tvm.detection, name)(weights=None, weights_backbone=None, min_size=160, max_size=320,
                                         box_score_thresh=0.0).eval()
    randomize(model, gen)
    image = torch.rand(1, 3, 120, 160, generator=gen)
    with torch.no_grad():
        det = model([image[0]])[0]
    v1 = not name.endswith("_v2")
    sd = {k: v.contiguous() for k, v in model.state_dict().items()
          if not (v1 and k.startswith("backbone.body.") and k.endswith("num_batches_tracked"))}
    save_file(sd, os.path.join(d, "model.safetensors"))
    for what, t in [("input", image), ("boxes", det["boxes"]), ("scores", det["scores"]), ("labels", det["labels"])]:
        np.save(os.path.join(d, f"{what}.npy"), t.numpy())
    print(name + ":", len(det["boxes"]), "detections")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(2101)
    tiny(gen, False)
    tiny(gen, True)
    if "--full" in sys.argv:
        full(torch.Generator().manual_seed(2102), "fasterrcnn_resnet50_fpn_v2")
        full(torch.Generator().manual_seed(2103), "fasterrcnn_resnet50_fpn")


if __name__ == "__main__":
    main()
