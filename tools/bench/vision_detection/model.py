#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A Faster R-CNN class (vision.fasterrcnn_resnet50_fpn_v2, ...) against torchvision eager, on the same weights and image, in one run.

    .venv/bin/python tools/bench/vision_detection/model.py [--threads 2] [--repeat 1] [--size 800,1216]
        [--model fasterrcnn_resnet50_fpn_v2 | fasterrcnn_mobilenet_v3_large_fpn]

loom comes from LOOM_BUILD_ROOT, else build-release, else build (its libloom and its core and vision packs).

The weights are torchvision's --model (default fasterrcnn_resnet50_fpn_v2) with seeded random values
(build-models/vision/<model>/model.safetensors when tools/gen_vision_fasterrcnn_goldens.py --full or
tools/gen_vision_fasterrcnn_mobilenet_goldens.py --full made it, else made here into a temporary file); the image is one seeded [3, H, W] batch (default 800 x 1216, which the
transform keeps at min_size 800). Both sides run in this process one after the other with the given threads
(torch.set_num_threads; loom's pool through loom.init), at torchvision's defaults (1000 proposals per image,
box_score_thresh 0.05, 100 detections).
Printed: the CPU seconds per call of each side (time.process_time around the calls), the ratio torchvision /
loom (> 1: loom is faster) and images/s of CPU time; and the stages: torchvision's transform, backbone+FPN,
RPN, RoI heads and postprocess timed one by one; loom's up to the proposals (the _rpn method) and the rest.
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision.models as tvm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "python"))


def point_loom_at_build():
    """LOOM_LIBRARY and LOOM_PLUGIN_PATH of the first build with libloom, unless LOOM_LIBRARY is set."""
    if os.environ.get("LOOM_LIBRARY"):
        return
    for d in (os.environ.get("LOOM_BUILD_ROOT"), os.path.join(ROOT, "build-release"), os.path.join(ROOT, "build")):
        if d and os.path.exists(os.path.join(d, "core", "libloom.so.0")):
            os.environ["LOOM_LIBRARY"] = os.path.join(d, "core", "libloom.so.0")
            os.environ["LOOM_PLUGIN_PATH"] = os.path.join(d, "plugins", "core") + ":" + os.path.join(d, "plugins",
                                                                                                    "vision")
            return
    sys.exit("no build with libloom: run `tools/dev bench` (or set LOOM_BUILD_ROOT)")


point_loom_at_build()
import loom  # noqa: E402

MODELS = ["fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn"]


def cpu_per_call(fn, repeat):
    fn()    # warm-up: plans, caches, first-touch pages
    t0 = time.process_time()
    for _ in range(repeat):
        out = fn()
    return (time.process_time() - t0) / repeat, out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--size", default="800,1216")
    p.add_argument("--model", choices=MODELS, default=MODELS[0])
    a = p.parse_args()
    h, w = (int(v) for v in a.size.split(","))
    torch.set_num_threads(a.threads)
    loom.init(num_threads=a.threads)
    gen = torch.Generator().manual_seed(2102)
    model = getattr(tvm.detection, a.model)(weights=None, weights_backbone=None).eval()
    path = os.path.join(ROOT, "build-models", "vision", a.model, "model.safetensors")
    if os.path.exists(path):
        from safetensors.torch import load_file
        # a body saved as a pretrained file has it (FrozenBatchNorm2d) lacks num_batches_tracked, unused in eval
        missing, unexpected = model.load_state_dict(load_file(path), strict=False)
        assert not unexpected and all(k.endswith("num_batches_tracked") for k in missing), (missing, unexpected)
    else:
        from safetensors.torch import save_file
        with torch.no_grad():
            for prm in model.parameters():
                prm.copy_(torch.randn(prm.shape, generator=gen) * (0.1 if prm.dim() == 1 else prm[0].numel() ** -0.5))
        path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, path)
    image = torch.rand(1, 3, h, w, generator=gen)
    x = image.numpy()
    det = loom.Object("vision." + a.model, path)

    with torch.inference_mode():
        t_torch, ref = cpu_per_call(lambda: model([image[0]]), a.repeat)
        # torchvision's stages, one by one on the same image
        il, _ = model.transform([image[0]])
        stages = {}
        stages["transform"], _ = cpu_per_call(lambda: model.transform([image[0]]), a.repeat)
        stages["backbone+FPN"], feats = cpu_per_call(lambda: model.backbone(il.tensors), a.repeat)
        stages["RPN"], (props, _) = cpu_per_call(lambda: model.rpn(il, feats), a.repeat)
        stages["RoI heads"], (dets, _) = cpu_per_call(lambda: model.roi_heads(feats, props, il.image_sizes),
                                                      a.repeat)
        stages["postprocess"], _ = cpu_per_call(
            lambda: model.transform.postprocess(dets, il.image_sizes, [(h, w)]), a.repeat)
    t_loom, out = cpu_per_call(lambda: det(x), a.repeat)
    t_loom_rpn, _ = cpu_per_call(lambda: getattr(det, a.model + "_rpn")(x), a.repeat)

    n_loom, n_ref = len(np.asarray(out[1])), len(ref[0]["scores"])
    print(f"{a.model}, one {h}x{w} image, {a.threads} threads each side, {a.repeat} timed call(s); "
          f"CPU seconds per call (loaded machine: wall times not meaningful)")
    print(f"  detections: loom {n_loom}, torchvision {n_ref}")
    print(f"  {'':28s} {'loom':>10s} {'torchvision':>12s} {'ratio':>7s}")
    print(f"  {'whole model (CPU s)':28s} {t_loom:10.3f} {t_torch:12.3f} {t_torch / t_loom:6.2f}x")
    print(f"  {'images/s of CPU time':28s} {1 / t_loom:10.3f} {1 / t_torch:12.3f}")
    ref_rpn = stages["transform"] + stages["backbone+FPN"] + stages["RPN"]
    print(f"  {'up to the proposals (CPU s)':28s} {t_loom_rpn:10.3f} {ref_rpn:12.3f} {ref_rpn / t_loom_rpn:6.2f}x")
    ref_rest = stages["RoI heads"] + stages["postprocess"]
    print(f"  {'RoI heads + postprocess':28s} {t_loom - t_loom_rpn:10.3f} {ref_rest:12.3f} "
          f"{ref_rest / max(t_loom - t_loom_rpn, 1e-9):6.2f}x")
    for k, v in stages.items():
        print(f"    torchvision {k:16s} {v:8.3f} CPU s")


if __name__ == "__main__":
    main()
