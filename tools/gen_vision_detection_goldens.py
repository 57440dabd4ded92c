#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Golden data of the vision pack's detection parts (tests/vision/detection), from torchvision.

Run with the repository's venv (torch + torchvision on CPU):
    .venv/bin/python tools/gen_vision_detection_goldens.py
Writes tests/data/vision/detection/<case>_<name>.npy. Every result comes from
torchvision's own modules (GeneralizedRCNNTransform, AnchorGenerator,
BoxCoder, RegionProposalNetwork.filter_proposals) in eval mode; the cases and
their attributes are mirrored in tests/vision/detection/test_detection_*.c.

Image lists travel as loom's jagged form: the images' CHW values flattened
and concatenated (images), their element offsets [B+1] (images_offsets) and
their (H, W) sizes [B, 2] (original_sizes).
"""
import math
import os

import numpy as np
import torch
from torchvision.models.detection import _utils as det_utils
from collections import OrderedDict

from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.faster_rcnn import FasterRCNN, FastRCNNConvFCHead, FastRCNNPredictor, TwoMLPHead
from torchvision.models.detection.image_list import ImageList
from torchvision.models.detection.roi_heads import RoIHeads
from torchvision.models.detection.rpn import RegionProposalNetwork, RPNHead, concat_box_prediction_layers
from torchvision.ops import FeaturePyramidNetwork, MultiScaleRoIAlign
from torchvision.ops.feature_pyramid_network import LastLevelMaxPool, LastLevelP6P7
from torchvision.models.detection.transform import GeneralizedRCNNTransform, resize_boxes

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "detection")
MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def save(case, **arrays):
    for name, t in arrays.items():
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        np.save(os.path.join(OUT, f"{case}_{name}.npy"), a.copy(order="C"))


def jagged(images):
    """The jagged form of a list of [C, H, W] images."""
    values = torch.cat([im.reshape(-1) for im in images])
    offsets = np.cumsum([0] + [im.numel() for im in images]).astype(np.int64)
    sizes = np.array([list(im.shape[-2:]) for im in images], dtype=np.int64).reshape(-1, 2)
    return values, offsets, sizes


def gen_transform(gen):
    """GeneralizedRCNNTransform.forward in eval: normalize, resize, batch."""
    cases = {
        # two sizes in one list, up-scaled by the short edge; the batch pads both
        "transform_two": ([(3, 27, 38), (3, 35, 21)], 40, 64, 32),
        # the long edge caps the scale (50 * 40 / 12 > 64)
        "transform_cap": ([(3, 12, 50)], 40, 64, 32),
        # a 1x1 image is up-scaled to min_size like any other (torchvision accepts it)
        "transform_1x1": ([(3, 1, 1)], 20, 30, 32),
        # down-scaling, and a divisor that is not a power of two
        "transform_down": ([(3, 47, 39), (3, 31, 44)], 17, 25, 7),
    }
    for case, (shapes, min_size, max_size, div) in cases.items():
        images = [torch.rand(s, generator=gen) for s in shapes]
        t = GeneralizedRCNNTransform(min_size, max_size, MEAN, STD, size_divisible=div).eval()
        with torch.no_grad():
            il, _ = t([im.clone() for im in images])
        values, offsets, sizes = jagged(images)
        save(case, images=values, images_offsets=offsets, original_sizes=sizes, tensors=il.tensors,
             image_sizes=np.array(il.image_sizes, dtype=np.int64))
        # the one-image resize (vision.rcnn_resize) on the normalized first image
        norm = t.normalize(images[0])
        resized, _ = t.resize(norm.clone(), None)
        save(case + "_resize", image=norm, output=resized)


def gen_postprocess(gen):
    """GeneralizedRCNNTransform.postprocess: boxes back to the original size."""
    for case, new, orig in [("postprocess_up", (64, 91), (45, 64)), ("postprocess_down", (33, 40), (97, 118))]:
        b = torch.rand(23, 4, generator=gen) * torch.tensor([new[1], new[0], new[1], new[0]], dtype=torch.float32)
        b = torch.cat([torch.minimum(b[:, :2], b[:, 2:]), torch.maximum(b[:, :2], b[:, 2:])], 1)
        save(case, boxes=b, output=resize_boxes(b, new, orig))


SIZES_FRCNN = ((32,), (64,), (128,), (256,), (512,))
SIZES_RETINA = tuple((x, int(x * 2 ** (1.0 / 3)), int(x * 2 ** (2.0 / 3))) for x in [32, 64, 128, 256, 512])


def anchors_for(sizes, ratios, image_size, grids):
    ag = AnchorGenerator(sizes, (ratios,) * len(sizes))
    il = ImageList(torch.zeros(1, 3, *image_size), [tuple(image_size)])
    feats = [torch.zeros(1, 1, h, w) for h, w in grids]
    return ag, ag(il, feats)[0]


def gen_anchors():
    """AnchorGenerator: Faster R-CNN's one size per level, RetinaNet's three, a lone level."""
    cases = {
        "anchors_frcnn": (SIZES_FRCNN, (0.5, 1.0, 2.0), (64, 96), [(16, 24), (8, 12), (4, 6), (2, 3), (1, 2)]),
        "anchors_retina": (SIZES_RETINA, (0.5, 1.0, 2.0), (96, 64), [(12, 8), (6, 4), (3, 2), (2, 1), (1, 1)]),
        # ratios whose square roots round the half-integers both ways; a stride that does not divide
        "anchors_odd": (((13, 27),), (0.3, 1.0, 1.7, 4.0), (50, 70), [(7, 9)]),
    }
    for case, (sizes, ratios, image_size, grids) in cases.items():
        _, a = anchors_for(sizes, ratios, image_size, grids)
        save(case, output=a)


def gen_decode(gen):
    """BoxCoder.decode with the RPN's weights and the RoI heads' (10, 10, 5, 5), clamp included."""
    for case, weights, k in [("decode_rpn", (1.0, 1.0, 1.0, 1.0), 1), ("decode_roi", (10.0, 10.0, 5.0, 5.0), 3)]:
        xy = torch.rand(37, 2, generator=gen) * 80
        wh = torch.rand(37, 2, generator=gen) * 30 + 0.5
        boxes = torch.cat([xy, xy + wh], 1)
        codes = torch.randn(37, 4 * k, generator=gen) * 2
        codes[::5, 2::4] = 9.0   # past the clamp at log(1000 / 16)
        coder = det_utils.BoxCoder(weights)
        save(case, rel_codes=codes, boxes=boxes, output=coder.decode_single(codes, boxes).reshape(37, k, 4))


def gen_rpn(gen):
    """RegionProposalNetwork (test mode): the head, anchors, decode, filter_proposals."""
    cases = {
        # two images of one batch with their own sizes; nms on <= 4000 coordinates (offset path)
        "rpn_small": (2, (64, 96), [(64, 91), (50, 96)], [(16, 24), (8, 12), (4, 6)], 50, 30, 0.7, 0.0),
        # more boxes than batched_nms's offset path takes, a score threshold that drops some
        "rpn_large": (1, (96, 120), [(90, 120)], [(24, 30), (12, 15)], 1500, 300, 0.7, 0.45),
    }
    for case, (n, image_size, sizes, grids, pre, post, nms, thr) in cases.items():
        ch = 8
        ag = AnchorGenerator(SIZES_FRCNN[: len(grids)], ((0.5, 1.0, 2.0),) * len(grids))
        head = RPNHead(ch, 3).eval()
        rpn = RegionProposalNetwork(ag, head, 0.7, 0.3, 256, 0.5, dict(training=pre, testing=pre),
                                    dict(training=post, testing=post), nms, score_thresh=thr).eval()
        feats = [torch.randn(n, ch, h, w, generator=gen) for h, w in grids]
        il = ImageList(torch.zeros(n, 3, *image_size), sizes)
        with torch.no_grad():
            obj, deltas = head(feats)
            anchors = ag(il, feats)
            per_level = [o[0].numel() for o in obj]
            obj_c, deltas_c = concat_box_prediction_layers(obj, deltas)
            proposals = rpn.box_coder.decode(deltas_c, anchors).view(n, -1, 4)
            boxes, scores = rpn.filter_proposals(proposals, obj_c, il.image_sizes, per_level)
            full, _ = rpn(il, dict(zip(map(str, range(len(feats))), feats)))
        for a, b in zip(full, boxes):
            assert torch.equal(a, b)
        offsets = np.cumsum([0] + [len(b) for b in boxes]).astype(np.int64)
        save(case, objectness=obj_c.reshape(n, -1), pred_bbox_deltas=deltas_c.reshape(n, -1, 4),
             anchors=anchors[0], image_sizes=np.array(sizes, dtype=np.int64), boxes=torch.cat(boxes),
             scores=torch.cat(scores), offsets=offsets, per_level=np.array(per_level, dtype=np.int64))


def random_boxes(gen, n, lo, hi, extent):
    """n xyxy boxes with sides in [lo, hi) whose top-left corners lie in [0, extent)."""
    xy = torch.rand(n, 2, generator=gen) * extent
    wh = torch.rand(n, 2, generator=gen) * (hi - lo) + lo
    return torch.cat([xy, xy + wh], 1)


def gen_multiscale(gen):
    """MultiScaleRoIAlign(['0', '1', '2', '3'], 7, 2): boxes of every level (sides 8 to 800)."""
    image_sizes = [(256, 240), (200, 256)]
    feats = {str(k): torch.randn(2, 2, 256 >> (k + 2), 256 >> (k + 2), generator=gen) for k in range(4)}
    boxes = [random_boxes(gen, 12, 8, 800, 200), random_boxes(gen, 9, 8, 800, 200)]
    pool = MultiScaleRoIAlign(["0", "1", "2", "3"], 7, 2)
    out = pool(feats, boxes, image_sizes)
    save("multiscale", boxes=torch.cat(boxes), boxes_offsets=np.array([0, 12, 21], dtype=np.int64),
         image_sizes=np.array(image_sizes, dtype=np.int64), x0=feats["0"], x1=feats["1"], x2=feats["2"],
         x3=feats["3"], output=out)
    # one level: roi_align at the inferred scale alone
    one = MultiScaleRoIAlign(["0"], (3, 5), 2)
    save("multiscale_one", output=one({"0": feats["1"]}, boxes, image_sizes))


def gen_detections(gen):
    """RoIHeads.postprocess_detections: softmax, decode (10, 10, 5, 5), clip, thresholds, nms per class."""
    heads = RoIHeads(None, None, None, 0.5, 0.5, 512, 0.25, None, 0.15, 0.5, 20)
    sizes = [(60, 80), (70, 50)]
    proposals = [random_boxes(gen, 40, 2, 30, 50), random_boxes(gen, 30, 2, 30, 45)]
    logits = torch.randn(70, 5, generator=gen) * 2
    regression = torch.randn(70, 20, generator=gen) * 0.5
    boxes, scores, labels = heads.postprocess_detections(logits, regression, proposals, sizes)
    offsets = np.cumsum([0] + [len(b) for b in boxes]).astype(np.int64)
    save("detections", class_logits=logits, box_regression=regression, proposals=torch.cat(proposals),
         proposals_offsets=np.array([0, 40, 70], dtype=np.int64), image_sizes=np.array(sizes, dtype=np.int64),
         boxes=torch.cat(boxes), scores=torch.cat(scores), labels=torch.cat(labels), offsets=offsets)


class FixedBody(torch.nn.Module):
    """BackboneWithFPN over given body maps (layer1..layer4 of a ResNet): its FPN runs, the body is the golden
    input, so the keys are torchvision's (backbone.fpn.*) and the file stays small."""

    def __init__(self, body, in_channels, out_channels, norm_layer=None):
        super().__init__()
        self.body_maps = body
        self.fpn = FeaturePyramidNetwork(in_channels, out_channels, extra_blocks=LastLevelMaxPool(),
                                         norm_layer=norm_layer)
        self.out_channels = out_channels

    def forward(self, x):
        return self.fpn(self.body_maps)


def gen_pipeline(gen, v2=False):
    """A tiny FasterRCNN (torchvision's classes, random weights) from its body's maps on: FPN (inner and layer
    blocks, nearest top-down, LastLevelMaxPool), RPN head, anchors, proposals, MultiScaleRoIAlign, TwoMLPHead,
    FastRCNNPredictor, postprocess_detections, transform.postprocess. score_thresh 0 keeps every class score, so
    nms and detections_per_img fix the count. Intermediate goldens: the FPN maps x0..x4 and the proposals.
    v2: fasterrcnn_resnet50_fpn_v2's parts: the FPN's convs with BatchNorm2d, RPNHead(conv_depth=2) and
    FastRCNNConvFCHead (4 x conv + BatchNorm2d + ReLU, 1 FC), batchnorms with random statistics."""
    ch, image_sizes, original = 8, [(64, 90), (60, 96)], [(32, 45), (40, 64)]
    body_channels, grids = [4, 6, 8, 10], [(16, 24), (8, 12), (4, 6), (2, 3)]
    body = OrderedDict((str(i), torch.randn(2, c, h, w, generator=gen))
                       for i, (c, (h, w)) in enumerate(zip(body_channels, grids)))
    norm = torch.nn.BatchNorm2d if v2 else None
    extra = dict(rpn_head=RPNHead(ch, 3, conv_depth=2),
                 box_head=FastRCNNConvFCHead((ch, 7, 7), [ch] * 4, [16], norm_layer=norm)) if v2 else \
        dict(box_head=TwoMLPHead(ch * 7 * 7, 16))
    model = FasterRCNN(FixedBody(body, body_channels, ch, norm), min_size=64, max_size=96, rpn_pre_nms_top_n_test=60,
                       rpn_post_nms_top_n_test=25, box_score_thresh=0.0, box_detections_per_img=12,
                       box_predictor=FastRCNNPredictor(16, 4), **extra).eval()
    with torch.no_grad():
        # normal weights of std 1/sqrt(fan_in) (box codes 10 times smaller, so boxes stay apart), biases 0.1;
        # batchnorms: weights near 1, statistics of a trained net's size
        for name, p in model.named_parameters():
            std = (0.1 if p.dim() == 1 else p[0].numel() ** -0.5) * (0.1 if "bbox_pred" in name else 1.0)
            p.copy_(torch.randn(p.shape, generator=gen) * std)
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(1 + 0.2 * torch.randn(m.weight.shape, generator=gen))
                m.running_mean.copy_(0.2 * torch.randn(m.running_mean.shape, generator=gen))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape, generator=gen))
        il = ImageList(torch.zeros(2, 3, 64, 96), image_sizes)
        feats = model.backbone(il.tensors)
        proposals, _ = model.rpn(il, feats)
        detections, _ = model.roi_heads(feats, proposals, il.image_sizes)
        detections = model.transform.postprocess(detections, il.image_sizes, original)
    stem = "pipeline_v2" if v2 else "pipeline"
    weights = {k.replace(".", "_"): v for k, v in model.state_dict().items() if "num_batches_tracked" not in k}
    save(stem, **weights)
    save(stem, **{f"c{i + 2}": m for i, m in enumerate(body.values())})
    save(stem, **{f"x{i}": feats[name] for i, name in enumerate(["0", "1", "2", "3", "pool"])})
    save(stem, image_sizes=np.array(image_sizes, dtype=np.int64),
         proposals=torch.cat(proposals), proposals_offsets=np.cumsum([0] + [len(p) for p in proposals]),
         boxes=torch.cat([d["boxes"] for d in detections]), scores=torch.cat([d["scores"] for d in detections]),
         labels=torch.cat([d["labels"] for d in detections]),
         offsets=np.cumsum([0] + [len(d["boxes"]) for d in detections]))
    print(stem, "weights:", ", ".join(f"{k} {list(v.shape)}" for k, v in weights.items()))


def gen_fpn_p6p7(gen):
    """FeaturePyramidNetwork with RetinaNet's LastLevelP6P7: from C5 when its channels differ from the FPN's
    (retinanet_resnet50_fpn_v2: LastLevelP6P7(2048, 256)), from P5 when they are equal (v1: (256, 256))."""
    body_channels, grids = [4, 6, 8, 10], [(16, 24), (8, 12), (4, 6), (2, 3)]
    body = OrderedDict((str(i), torch.randn(2, c, h, w, generator=gen))
                       for i, (c, (h, w)) in enumerate(zip(body_channels, grids)))
    for case, p6_in in [("fpn_p6p7_c5", 10), ("fpn_p6p7_p5", 8)]:
        fpn = FeaturePyramidNetwork(body_channels, 8, extra_blocks=LastLevelP6P7(p6_in, 8)).eval()
        with torch.no_grad():
            for p in fpn.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * (0.1 if p.dim() == 1 else p[0].numel() ** -0.5))
            out = fpn(body)
        save(case, **{k.replace(".", "_"): v for k, v in fpn.state_dict().items()})
        save(case, **{f"c{i + 2}": m for i, m in enumerate(body.values())})
        save(case, **{f"x{i}": v for i, v in enumerate(out.values())})


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(21)
    gen_transform(gen)
    gen_postprocess(gen)
    gen_anchors()
    gen_decode(gen)
    gen_rpn(gen)
    gen_multiscale(gen)
    gen_detections(gen)
    gen_pipeline(gen)
    gen_pipeline(gen, v2=True)
    gen_fpn_p6p7(gen)


if __name__ == "__main__":
    main()
