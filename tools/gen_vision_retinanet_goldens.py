#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of RetinaNet's ops to tests/data/vision/retinanet/.

vision.retinanet_head: torchvision's RetinaNetClassificationHead and
RetinaNetRegressionHead, v1 (conv + relu, 8 channels) and v2 (conv +
GroupNorm(32) + relu, 32 channels; its two heads share their four conv
weights, copied, so the file holds them once), every parameter re-drawn so
that no layer is an identity, on three levels of a batch of two.

The composed case: a tiny torchvision RetinaNet (BackboneWithFPN over a
three-stage body, LastLevelP6P7 from P5, five levels; heads v1 with an
8-channel FPN and v2 with a 32-channel one), run whole on two images of
different sizes; the FPN maps it computed (caught by a forward hook) are
the inputs of the loom ops, its final detections (after transform.postprocess)
the goldens, with the thresholds that keep a fixed number of them.

vision.retinanet_postprocess: torchvision's own RetinaNet.postprocess_detections
(a RetinaNet built around a stand-in backbone: the method reads only the
thresholds and the box coder) on seeded head outputs for a batch of two
images and three levels of anchors from torchvision's AnchorGenerator. The
logits are centred below the score threshold so that a few hundred pairs
pass; topk_candidates cuts the first level; detections_per_img caps image 0
and not image 1. The script refuses inputs where a score lies within 1e-5
of the threshold or of the top-k cut (loom's sigmoid may differ from
PyTorch's by an ulp, which must not change the set).

    .venv/bin/python tools/gen_vision_retinanet_goldens.py [OUTDIR]

Needs numpy, torch and torchvision. Writes ~300 KB.
"""
import os
import sys
from functools import partial

import numpy as np
import torch
from torch import nn
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.ops.feature_pyramid_network import LastLevelP6P7
from torchvision.models.detection.image_list import ImageList
from torchvision.models.detection.retinanet import (RetinaNet, RetinaNetClassificationHead,
                                                     RetinaNetRegressionHead)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "retinanet")

# the postprocess case: the attributes, the same in tests/vision/detection/test_retinanet.c
NUM_CLASSES = 5
GRIDS = [(8, 8), (4, 4), (2, 2)]
IMAGE = (64, 64)
IMAGE_SIZES = [(60, 64), (64, 50)]
SCORE_THRESH = 0.05
TOPK = 60
NMS_THRESH = 0.5
DETECTIONS_PER_IMG = 40


def save(name, t, dtype=np.float32):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy().astype(dtype), allow_pickle=False)


class StandIn(nn.Module):
    """The backbone RetinaNet's constructor needs; postprocess_detections never runs it."""

    out_channels = 8

    def forward(self, x):
        return x


def anchors_of_grids():
    sizes = tuple((s, int(s * 2 ** (1 / 3)), int(s * 2 ** (2 / 3))) for s in (8, 16, 32))
    gen = AnchorGenerator(sizes, ((0.5, 1.0, 2.0),) * len(GRIDS))
    feats = [torch.zeros(1, 1, h, w) for h, w in GRIDS]
    images = ImageList(torch.zeros(1, 3, *IMAGE), [IMAGE])
    return gen(images, feats)[0], gen.num_anchors_per_location()[0]


def check_margins(logits, per_level):
    scores = torch.sigmoid(logits)
    assert ((scores - SCORE_THRESH).abs() > 1e-5).all(), "a score lies at the threshold: reseed"
    start = 0
    for n in per_level:
        for img in range(scores.shape[0]):
            s = scores[img, start:start + n].flatten()
            s = s[s > SCORE_THRESH].sort(descending=True).values
            if s.numel() > TOPK:
                assert s[TOPK - 1] - s[TOPK] > 1e-5, "a tie at the top-k cut: reseed"
            assert (s[:-1] - s[1:] > 0).all(), "equal scores: reseed"
        start += n


# the head cases: channels, anchors per location, classes, GroupNorm (v2)
HEAD_CASES = {"v1": (8, 3, 3, False), "v2": (32, 3, 3, True)}
HEAD_GRIDS = [(6, 7), (3, 4), (2, 2)]


def redraw(module):
    """Every parameter drawn again: convs ~ N(0, 1/fan_in), norms near (1, 0), biases small."""
    for name, p in module.named_parameters():
        if p.dim() == 4:
            nn.init.normal_(p, 0.0, (p.shape[1] * 9) ** -0.5)
        elif "weight" in name:
            nn.init.normal_(p, 1.0, 0.2)
        else:
            nn.init.normal_(p, 0.0, 0.2)


def head_cases():
    for name, (c, a, k, gn) in HEAD_CASES.items():
        norm = partial(nn.GroupNorm, 32) if gn else None
        cls = RetinaNetClassificationHead(c, a, k, norm_layer=norm).eval()
        reg = RetinaNetRegressionHead(c, a, norm_layer=norm).eval()
        redraw(cls)
        redraw(reg)
        if gn:
            with torch.no_grad():
                for i in range(4):
                    reg.conv[i][0].weight.copy_(cls.conv[i][0].weight)
        feats = [torch.randn(2, c, h, w) for h, w in HEAD_GRIDS]
        with torch.no_grad():
            out_cls, out_reg = cls(feats), reg(feats)
        for i, f in enumerate(feats):
            save(f"head_{name}_features{i}", f)
        for tag, head, out in (("cls", cls, out_cls), ("reg", reg, out_reg)):
            if tag == "cls" or not gn:
                save(f"head_{name}_{tag}_conv_weight", torch.stack([head.conv[i][0].weight for i in range(4)]))
            if not gn:
                save(f"head_{name}_{tag}_conv_bias", torch.stack([head.conv[i][0].bias for i in range(4)]))
            else:
                save(f"head_{name}_{tag}_norm_weight", torch.stack([head.conv[i][1].weight for i in range(4)]))
                save(f"head_{name}_{tag}_norm_bias", torch.stack([head.conv[i][1].bias for i in range(4)]))
            last = head.cls_logits if tag == "cls" else head.bbox_reg
            save(f"head_{name}_{tag}_out_weight", last.weight)
            save(f"head_{name}_{tag}_out_bias", last.bias)
            save(f"head_{name}_{tag}_output", out)


# the composed case: FPN channels, GroupNorm heads; the attributes as in test_retinanet.c
MODEL_CASES = {"v1": (8, False), "v2": (32, True)}
MODEL_IMAGES = [(3, 50, 60), (3, 64, 44)]
MODEL_ANCHOR_SIZES = tuple((x, int(x * 2 ** (1 / 3)), int(x * 2 ** (2 / 3))) for x in (8, 16, 32, 64, 128))
MODEL_ATTRS = dict(min_size=64, max_size=96, score_thresh=0.3, nms_thresh=0.5, detections_per_img=15,
                   topk_candidates=40)


def tiny_body():
    body = nn.Sequential()
    body.add_module("stem", nn.Sequential(nn.Conv2d(3, 4, 3, stride=4, padding=1), nn.ReLU()))
    body.add_module("c3", nn.Sequential(nn.Conv2d(4, 6, 3, stride=2, padding=1), nn.ReLU()))
    body.add_module("c4", nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.ReLU()))
    body.add_module("c5", nn.Sequential(nn.Conv2d(8, 10, 3, stride=2, padding=1), nn.ReLU()))
    return body


def model_cases():
    for name, (c, gn) in MODEL_CASES.items():
        backbone = BackboneWithFPN(tiny_body(), {"c3": "0", "c4": "1", "c5": "2"}, [6, 8, 10], c,
                                   extra_blocks=LastLevelP6P7(c, c))
        anchors = AnchorGenerator(MODEL_ANCHOR_SIZES, ((0.5, 1.0, 2.0),) * 5)
        head = None
        if gn:
            from torchvision.models.detection.retinanet import RetinaNetHead
            head = RetinaNetHead(c, anchors.num_anchors_per_location()[0], 3, norm_layer=partial(nn.GroupNorm, 32))
        model = RetinaNet(backbone, 3, anchor_generator=anchors, head=head, **MODEL_ATTRS).eval()
        redraw(model.head)
        for p in model.backbone.parameters():
            if p.dim() == 4:
                nn.init.normal_(p, 0.0, (p.shape[1] * p.shape[2] * p.shape[3]) ** -0.5)
        with torch.no_grad():
            if gn:                       # the two heads share their conv weights: stored once
                for i in range(4):
                    model.head.regression_head.conv[i][0].weight.copy_(model.head.classification_head.conv[i][0].weight)
            model.head.classification_head.cls_logits.bias.add_(-1.0)
        maps = {}
        model.backbone.register_forward_hook(lambda m, i, o: maps.update(o))
        seen = {}
        model.transform.register_forward_hook(lambda m, i, o: seen.update(sizes=o[0].image_sizes,
                                                                         padded=o[0].tensors.shape[-2:]))
        images = [torch.rand(*s) for s in MODEL_IMAGES]
        with torch.no_grad():
            dets = model(images)
        for i, key in enumerate(maps):
            save(f"model_{name}_p{i}", maps[key])
        for tag, h in (("cls", model.head.classification_head), ("reg", model.head.regression_head)):
            if tag == "cls" or not gn:
                save(f"model_{name}_{tag}_conv_weight", torch.stack([h.conv[i][0].weight for i in range(4)]))
            if not gn:
                save(f"model_{name}_{tag}_conv_bias", torch.stack([h.conv[i][0].bias for i in range(4)]))
            else:
                save(f"model_{name}_{tag}_norm_weight", torch.stack([h.conv[i][1].weight for i in range(4)]))
                save(f"model_{name}_{tag}_norm_bias", torch.stack([h.conv[i][1].bias for i in range(4)]))
            last = h.cls_logits if tag == "cls" else h.bbox_reg
            save(f"model_{name}_{tag}_out_weight", last.weight)
            save(f"model_{name}_{tag}_out_bias", last.bias)
        save(f"model_{name}_image_sizes", torch.tensor(seen["sizes"]), np.int64)
        save(f"model_{name}_boxes", torch.cat([d["boxes"] for d in dets]))
        save(f"model_{name}_scores", torch.cat([d["scores"] for d in dets]))
        save(f"model_{name}_labels", torch.cat([d["labels"] for d in dets]), np.int64)
        offsets = np.cumsum([0] + [len(d["scores"]) for d in dets])
        np.save(os.path.join(OUT, f"model_{name}_offsets.npy"), offsets.astype(np.int64), allow_pickle=False)
        print(f"model {name}: padded {tuple(seen['padded'])}, sizes {seen['sizes']}, maps "
              f"{[tuple(m.shape[-2:]) for m in maps.values()]}, detections {[len(d['scores']) for d in dets]}")


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(22)
    head_cases()
    torch.manual_seed(23)
    model_cases()
    torch.manual_seed(21)
    anchors, a_per_loc = anchors_of_grids()
    per_level = [h * w * a_per_loc for h, w in GRIDS]
    total = sum(per_level)
    model = RetinaNet(StandIn(), NUM_CLASSES, score_thresh=SCORE_THRESH, nms_thresh=NMS_THRESH,
                      detections_per_img=DETECTIONS_PER_IMG, topk_candidates=TOPK).eval()
    logits = torch.randn(2, total, NUM_CLASSES) * 1.2 - 4.2
    logits[1] -= 1.9                # fewer candidates: image 1 stays under detections_per_img
    regression = torch.randn(2, total, 4) * 0.4
    check_margins(logits, per_level)
    split_logits = list(logits.split(per_level, dim=1))
    split_reg = list(regression.split(per_level, dim=1))
    split_anchors = [list(anchors.split(per_level))] * 2
    with torch.no_grad():
        dets = model.postprocess_detections({"cls_logits": split_logits, "bbox_regression": split_reg},
                                            split_anchors, IMAGE_SIZES)
    save("post_cls_logits", logits)
    save("post_bbox_regression", regression)
    save("post_anchors", anchors)
    save("post_image_sizes", torch.tensor(IMAGE_SIZES), np.int64)
    save("post_boxes", torch.cat([d["boxes"] for d in dets]))
    save("post_scores", torch.cat([d["scores"] for d in dets]))
    save("post_labels", torch.cat([d["labels"] for d in dets]), np.int64)
    offsets = np.cumsum([0] + [len(d["scores"]) for d in dets])
    np.save(os.path.join(OUT, "post_offsets.npy"), offsets.astype(np.int64), allow_pickle=False)
    print("num_anchors_per_level", per_level, "detections per image", [len(d["scores"]) for d in dets])


if __name__ == "__main__":
    main()
