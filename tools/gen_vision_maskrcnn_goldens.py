#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the Mask R-CNN classes (vision.maskrcnn ...; tests/vision/detection/test_maskrcnn.c).

Run with the repository's venv (torch + torchvision on CPU):
    .venv/bin/python tools/gen_vision_maskrcnn_goldens.py
Writes tests/data/vision/detection/maskrcnn_tiny/<case>_*: a tiny MaskRCNN built from torchvision's own classes on
the tiny Faster R-CNN of tools/gen_vision_fasterrcnn_goldens.py (a ResNet body of Bottlenecks, layers 1, 1, 1, 1,
widths 4, 4, 8, 8, stem 8; an FPN of 8 channels), random weights, in two cases:
  v1  FPN convs with bias, RPNHead(conv_depth=1), TwoMLPHead, MaskRCNNHeads(8, [8, 8, 8, 8], 1) (convs with bias);
      the body's batchnorms saved as a pretrained file has them (no num_batches_tracked). Also saved with the
      mask head's pre-0.8 key names (mask_fcn1..4: v1_legacy_model.safetensors), which MaskRCNNHeads loads.
  v2  maskrcnn_resnet50_fpn_v2's parts: BatchNorm2d in the FPN, RPNHead(conv_depth=2), FastRCNNConvFCHead,
      MaskRCNNHeads(8, [8, 8, 6, 6], 1, BatchNorm2d) (widths that differ, so the file must give them)
both with MultiScaleRoIAlign 14 x 14 (sampling 2) and MaskRCNNPredictor(in, 6, 4 classes); the batchnorms with
statistics of a trained net's size. The .npy: the two input images of different sizes (the jagged form: images,
images_offsets, original_sizes), the detections (boxes, scores, labels, offsets), the mask probabilities of each
detection's label before pasting (mask_probs [D, 1, 28, 28]) and the pasted masks (image after image, each
[K_b, 1, H_b, W_b] flattened: masks). box_score_thresh 0 keeps every class score, so nms and
box_detections_per_img 12 fix the count.

The pasted masks are compared where the integer boxes of paste_masks_in_image agree (the test recomputes them
from both sides' boxes): the script prints the smallest distance of an expanded box coordinate to an integer,
leaving out the sides whose two ends are both clipped to the image, to show how rare a disagreement is.
"""
import os
import sys

import numpy as np
import torch
import torchvision.models as tvm
from safetensors.torch import save_file
from torchvision.models.detection.backbone_utils import BackboneWithFPN
from torchvision.models.detection.faster_rcnn import FastRCNNConvFCHead, FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.mask_rcnn import MaskRCNN, MaskRCNNHeads, MaskRCNNPredictor
from torchvision.models.detection.roi_heads import expand_boxes
from torchvision.models.detection.rpn import RPNHead
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_vision_fasterrcnn_goldens import randomize  # noqa: E402  (the Faster R-CNN goldens' weights)
from gen_vision_models_goldens import TinyResNet  # noqa: E402  (torchvision's ResNet with given widths)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "data", "vision", "detection", "maskrcnn_tiny")


def save(case, **arrays):
    for name, t in arrays.items():
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{case}_{name}.npy"), a.copy(order="C"))


def tiny(gen, v2):
    body = TinyResNet(tvm.resnet.Bottleneck, [1, 1, 1, 1], [4, 4, 8, 8], 8, num_classes=1)
    ch = 8
    norm = torch.nn.BatchNorm2d if v2 else None
    backbone = BackboneWithFPN(body, {"layer1": "0", "layer2": "1", "layer3": "2", "layer4": "3"},
                               [16, 16, 32, 32], ch, extra_blocks=LastLevelMaxPool(), norm_layer=norm)
    layers = [8, 8, 6, 6] if v2 else [8, 8, 8, 8]
    extra = dict(rpn_head=RPNHead(ch, 3, conv_depth=2),
                 box_head=FastRCNNConvFCHead((ch, 7, 7), [ch] * 4, [16], norm_layer=norm)) if v2 else \
        dict(box_head=TwoMLPHead(ch * 7 * 7, 16))
    model = MaskRCNN(backbone, min_size=64, max_size=96, rpn_pre_nms_top_n_test=60, rpn_post_nms_top_n_test=25,
                     box_score_thresh=0.0, box_detections_per_img=12, box_predictor=FastRCNNPredictor(16, 4),
                     mask_head=MaskRCNNHeads(ch, layers, 1, norm_layer=norm),
                     mask_predictor=MaskRCNNPredictor(layers[-1], 6, 4), **extra).eval()
    randomize(model, gen)
    images = [torch.rand(3, 40, 56, generator=gen), torch.rand(3, 50, 36, generator=gen)]
    probs = []
    hook = model.roi_heads.mask_predictor.register_forward_hook(lambda m, i, o: probs.append(o))
    with torch.no_grad():
        il, _ = model.transform(images)
        detections = model(images)
    hook.remove()
    labels = torch.cat([d["labels"] for d in detections])
    mask_probs = probs[0].sigmoid()[torch.arange(len(labels)), labels][:, None]
    # the expanded boxes of paste_masks_in_image (on the original image): how near an integer they come
    # (a side whose two ends are both clipped to the image, each 0 or W (0 or H), is exact on both sides: left out)
    near = 1.0
    for d, im in zip(detections, images):
        b = d["boxes"]
        e = expand_boxes(b, (28 + 2) / 28)
        h, w = im.shape[-2:]
        edge_x, edge_y = (b[:, 0::2] == 0) | (b[:, 0::2] == w), (b[:, 1::2] == 0) | (b[:, 1::2] == h)
        exact_x, exact_y = edge_x.all(1), edge_y.all(1)
        dist = (e - e.round()).abs()
        for axis, exact in ((0, exact_x), (1, exact_y)):
            rows = dist[~exact][:, [axis, axis + 2]]
            if rows.numel():
                near = min(near, rows.min().item())
    case = "v2" if v2 else "v1"
    print(case, "detections per image:", [len(d["boxes"]) for d in detections],
          f"expanded box coordinates at least {near:.3g} from an integer")
    sd = {k: v.contiguous() for k, v in model.state_dict().items()
          if v2 or not (k.startswith("backbone.body.") and k.endswith("num_batches_tracked"))}
    save_file(sd, os.path.join(OUT, f"{case}_model.safetensors"))
    if not v2:
        legacy = {}
        for k, v in sd.items():
            parts = k.split(".")
            if k.startswith("roi_heads.mask_head.") and parts[4] in ("weight", "bias"):
                k = f"roi_heads.mask_head.mask_fcn{int(parts[2]) + 1}.{parts[4]}"
            legacy[k] = v
        save_file(legacy, os.path.join(OUT, "v1_legacy_model.safetensors"))
        check = MaskRCNN(backbone, num_classes=None, box_predictor=FastRCNNPredictor(16, 4),
                         mask_head=MaskRCNNHeads(ch, layers, 1), mask_predictor=MaskRCNNPredictor(layers[-1], 6, 4),
                         box_head=TwoMLPHead(ch * 7 * 7, 16))
        from safetensors.torch import load_file
        state = load_file(os.path.join(OUT, "v1_legacy_model.safetensors"))
        check.load_state_dict(state)        # strict: MaskRCNNHeads maps the legacy names (no version metadata)
        assert torch.equal(check.roi_heads.mask_head[0][0].weight, model.roi_heads.mask_head[0][0].weight)
    save(case, images=torch.cat([im.reshape(-1) for im in images]),
         images_offsets=np.cumsum([0] + [im.numel() for im in images]).astype(np.int64),
         original_sizes=np.array([im.shape[-2:] for im in images], dtype=np.int64),
         image_sizes=np.array(il.image_sizes, dtype=np.int64))
    save(case, boxes=torch.cat([d["boxes"] for d in detections]), scores=torch.cat([d["scores"] for d in detections]),
         labels=labels, offsets=np.cumsum([0] + [len(d["boxes"]) for d in detections]),
         mask_probs=mask_probs, masks=torch.cat([d["masks"].reshape(-1) for d in detections]))


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    tiny(torch.Generator().manual_seed(2111), False)
    tiny(torch.Generator().manual_seed(2112), True)


if __name__ == "__main__":
    main()
