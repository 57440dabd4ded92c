#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the RetinaNet classes (vision.retinanet ...; tests/vision/detection/test_retinanet_model.c).

Run with the repository's venv (torch + torchvision on CPU):
    .venv/bin/python tools/gen_vision_retinanet_model_goldens.py
Writes tests/data/vision/detection/retina_tiny/<case>_*: a tiny RetinaNet built from torchvision's own classes
(RetinaNet(BackboneWithFPN(a ResNet body of Bottlenecks, layers 1, 1, 1, 1, stem 8), returned layers 2, 3, 4,
LastLevelP6P7), 3 classes, anchors (x, x 2^1/3, x 2^2/3) for x in 8..128 with ratios 0.5, 1, 2), random weights,
in two cases:
  v1  widths 4, 4, 8, 8, an 8-channel FPN, LastLevelP6P7(8, 8) (from P5, as retinanet_resnet50_fpn's), heads of
      conv + relu; the body's batchnorms saved as a pretrained file has them (no num_batches_tracked)
  v2  widths 4, 4, 8, 16, a 32-channel FPN, LastLevelP6P7(64, 32) (from C5, as retinanet_resnet50_fpn_v2's),
      heads of conv + GroupNorm(32) + relu
each as <case>_model.safetensors (the state_dict, torchvision's keys) and .npy: the two input images of different
sizes, 3 x 64 x 96 and 3 x 80 x 64 (the jagged form: images, images_offsets, original_sizes), resized with
min_size 72, max_size 112 (72 x 108 and 90 x 72, batched to 96 x 128), the five backbone maps x0..x4 and the
resized sizes as intermediate results, and the detections (boxes, scores, labels, offsets). score_thresh 0.2
keeps more than detections_per_img 15 after the nms on both images, so the cap fixes the count.
--full also writes build-models/vision/retinanet_resnet50_fpn_v2/ and retinanet_resnet50_fpn/: torchvision's models
with random weights (model.safetensors, 146 and 130 MB; v1's body without num_batches_tracked, as a pretrained
file's FrozenBatchNorm2d) and their detections of one 3 x 120 x 160 image with min_size 160, max_size 320,
score_thresh 0.05 and 300 detections, torchvision's (input.npy, boxes.npy, scores.npy, labels.npy).
"""
import os
import sys

import numpy as np
import torch
import torchvision.models as tvm
from safetensors.torch import save_file
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.retinanet import RetinaNet, RetinaNetHead
from torchvision.ops.feature_pyramid_network import LastLevelP6P7

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_vision_models_goldens import TinyResNet  # noqa: E402  (torchvision's ResNet with given widths)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "vision", "detection", "retina_tiny")
DETECTIONS = 15
MODELS = os.path.join(ROOT, "build-models", "vision")


def save(case, **arrays):
    for name, t in arrays.items():
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{case}_{name}.npy"), a.copy(order="C"))


def randomize(model, gen):
    """Normal weights of std 1/sqrt(fan_in) (box codes 10 times smaller, so boxes stay apart), biases 0.1;
    batchnorms: weights near 1, statistics of a trained net's size; GroupNorms: weights near 1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            std = (0.1 if p.dim() == 1 else p[0].numel() ** -0.5) * (0.1 if "bbox_reg" in name else 1.0)
            p.copy_(torch.randn(p.shape, generator=gen) * std)
        for m in model.modules():
            if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.GroupNorm)):
                m.weight.copy_(1 + 0.2 * torch.randn(m.weight.shape, generator=gen))
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.copy_(0.2 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=gen))


def tiny(gen, v2):
    widths = [4, 4, 8, 16] if v2 else [4, 4, 8, 8]
    body = TinyResNet(tvm.resnet.Bottleneck, [1, 1, 1, 1], widths, 8, num_classes=1)
    ch = 32 if v2 else 8
    c5 = 4 * widths[3]
    extra = LastLevelP6P7(c5, ch) if v2 else LastLevelP6P7(ch, ch)
    assert extra.use_P5 == (not v2)
    backbone = BackboneWithFPN(body, {"layer2": "0", "layer3": "1", "layer4": "2"}, [4 * w for w in widths[1:]], ch,
                               extra_blocks=extra)
    sizes = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3))) for x in [8, 16, 32, 64, 128])
    anchors = AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * 5)
    norm = (lambda c: torch.nn.GroupNorm(32, c)) if v2 else None
    head = RetinaNetHead(ch, 9, 3, norm_layer=norm)
    model = RetinaNet(backbone, 3, min_size=72, max_size=112, anchor_generator=anchors, head=head, score_thresh=0.2,
                      detections_per_img=DETECTIONS, topk_candidates=40).eval()
    randomize(model, gen)
    images = [torch.rand(3, 64, 96, generator=gen), torch.rand(3, 80, 64, generator=gen)]
    with torch.no_grad():
        il, _ = model.transform(images)
        feats = list(model.backbone(il.tensors).values())
        detections = model(images)
    counts = [len(d["boxes"]) for d in detections]
    assert counts == [DETECTIONS, DETECTIONS], counts
    case = "v2" if v2 else "v1"
    sd = {k: v.contiguous() for k, v in model.state_dict().items()
          if v2 or not (k.startswith("backbone.body.") and k.endswith("num_batches_tracked"))}
    save_file(sd, os.path.join(OUT, f"{case}_model.safetensors"))
    save(case, images=torch.cat([im.reshape(-1) for im in images]),
         images_offsets=np.cumsum([0] + [im.numel() for im in images]).astype(np.int64),
         original_sizes=np.array([im.shape[-2:] for im in images], dtype=np.int64),
         image_sizes=np.array(il.image_sizes, dtype=np.int64))
    save(case, **{f"x{i}": f for i, f in enumerate(feats)})
    save(case, boxes=torch.cat([d["boxes"] for d in detections]), scores=torch.cat([d["scores"] for d in detections]),
         labels=torch.cat([d["labels"] for d in detections]),
         offsets=np.cumsum([0] + counts).astype(np.int64))
    s = torch.cat([d["scores"] for d in detections])
    print(case, "batch", tuple(il.tensors.shape), "sizes", il.image_sizes, "maps", [tuple(f.shape) for f in feats],
          "scores", f"{s.min().item():.4f}..{s.max().item():.4f}", "params", sum(p.numel() for p in model.parameters()))


def full(gen, name):
    """retinanet_resnet50_fpn[_v2] as torchvision builds it, random weights, one small image."""
    d = os.path.join(MODELS, name)
    os.makedirs(d, exist_ok=True)
    model = getattr(tvm.detection, name)(weights=None, weights_backbone=None, min_size=160, max_size=320).eval()
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
    gen = torch.Generator().manual_seed(2401)
    tiny(gen, False)
    tiny(gen, True)
    if "--full" in sys.argv:
        full(torch.Generator().manual_seed(2402), "retinanet_resnet50_fpn_v2")
        full(torch.Generator().manual_seed(2403), "retinanet_resnet50_fpn")


if __name__ == "__main__":
    main()
