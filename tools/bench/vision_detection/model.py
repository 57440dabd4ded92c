#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A detector of the vision pack against torchvision eager (and ONNX Runtime), on the same weights and image.

    .venv/bin/python tools/bench/vision_detection/model.py [--model fasterrcnn_resnet50_fpn_v2]
        [--threads 2] [--repeat 1] [--size 800,1216] [--no-onnx]

--model: fasterrcnn_resnet50_fpn_v2 (the default), retinanet_resnet50_fpn_v2,
fasterrcnn_mobilenet_v3_large_fpn or maskrcnn_resnet50_fpn_v2 (box_score_thresh 0 on both sides, so that its
random heads keep 100 detections for the mask branch; loom has no _rpn method for it: the whole model only).

loom comes from LOOM_BUILD_ROOT, else build-release, else build (its libloom and its core and vision packs).

The weights are torchvision's model with seeded random values (build-models/vision/<model>/model.safetensors
when there, e.g. from tools/gen_vision_fasterrcnn_goldens.py --full or
tools/gen_vision_fasterrcnn_mobilenet_goldens.py --full, else made here into a temporary file); the
image is one seeded [3, H, W] batch (default 800 x 1216, which the transform keeps at min_size 800). The sides run
in this process one after the other with the given threads (torch.set_num_threads; loom's pool through
loom.init; ONNX Runtime's intra_op_num_threads), at torchvision's defaults (Faster R-CNN: 1000 proposals per
image, box_score_thresh 0.05, 100 detections; RetinaNet: score_thresh 0.05, topk_candidates 1000, 300
detections). ONNX Runtime runs torchvision's own ONNX export (torch.onnx.export(..., dynamo=False,
opset_version=17)); where the export fails its column says so.
Printed: the CPU seconds per call of each side (time.process_time around the calls), the ratio torchvision /
loom (> 1: loom is faster) and images/s of CPU time; and the stages: torchvision's timed one by one
(Faster R-CNN: transform, backbone+FPN, RPN, RoI heads, postprocess; RetinaNet: transform, backbone+FPN, head,
anchors + postprocess); loom's up to the proposals (the _rpn method) or the FPN maps (the _features method), and
the rest.
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

MODELS = ("fasterrcnn_resnet50_fpn_v2", "retinanet_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn",
          "maskrcnn_resnet50_fpn_v2")


def cpu_per_call(fn, repeat):
    fn()    # warm-up: plans, caches, first-touch pages
    t0 = time.process_time()
    for _ in range(repeat):
        out = fn()
    return (time.process_time() - t0) / repeat, out


def torchvision_stages(name, model, image, h, w, repeat):
    """torchvision's stages one by one on the same image: {stage: CPU s}, and the stages up to loom's first method."""
    il, _ = model.transform([image[0]])
    stages = {}
    stages["transform"], _ = cpu_per_call(lambda: model.transform([image[0]]), repeat)
    stages["backbone+FPN"], feats = cpu_per_call(lambda: model.backbone(il.tensors), repeat)
    if name.startswith(("fasterrcnn", "maskrcnn")):
        stages["RPN"], (props, _) = cpu_per_call(lambda: model.rpn(il, feats), repeat)
        stages["RoI heads"], (dets, _) = cpu_per_call(lambda: model.roi_heads(feats, props, il.image_sizes), repeat)
        stages["postprocess"], _ = cpu_per_call(
            lambda: model.transform.postprocess(dets, il.image_sizes, [(h, w)]), repeat)
        return stages, ("transform", "backbone+FPN", "RPN"), "up to the proposals (CPU s)", "RoI heads + postprocess"
    fl = list(feats.values())
    stages["head"], head = cpu_per_call(lambda: model.head(fl), repeat)

    def rest():
        anchors = model.anchor_generator(il, fl)
        per_level = [x.size(2) * x.size(3) * 9 for x in fl]
        split = {k: list(v.split(per_level, dim=1)) for k, v in head.items()}
        dets = model.postprocess_detections(split, [list(a.split(per_level)) for a in anchors], il.image_sizes)
        return model.transform.postprocess(dets, il.image_sizes, [(h, w)])
    stages["anchors+postprocess"], _ = cpu_per_call(rest, repeat)
    return stages, ("transform", "backbone+FPN"), "up to the FPN maps (CPU s)", "head + postprocess"


def onnx_runtime(model, image, threads, repeat):
    """CPU s per call of torchvision's ONNX export under ONNX Runtime, or the reason there is none."""
    try:
        import onnxruntime as ort
        path = os.path.join(tempfile.mkdtemp(), "model.onnx")
        with torch.no_grad():
            torch.onnx.export(model, ([image[0]],), path, dynamo=False, opset_version=17)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: image[0].numpy()}
        t, out = cpu_per_call(lambda: sess.run(None, feed), repeat)
        return t, len(out[1]), None
    except Exception as e:     # noqa: BLE001  (the export's failures are many kinds)
        return None, None, f"{type(e).__name__}: {str(e).splitlines()[0][:80] if str(e) else ''}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default=MODELS[0], choices=MODELS)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--size", default="800,1216")
    p.add_argument("--no-onnx", action="store_true", help="skip the ONNX Runtime column")
    a = p.parse_args()
    name = a.model
    h, w = (int(v) for v in a.size.split(","))
    torch.set_num_threads(a.threads)
    loom.init(num_threads=a.threads)
    gen = torch.Generator().manual_seed(2102)
    masks = name.startswith("maskrcnn")
    extra = {"box_score_thresh": 0.0} if masks else {}
    model = getattr(tvm.detection, name)(weights=None, weights_backbone=None, **extra).eval()
    path = os.path.join(ROOT, "build-models", "vision", name, "model.safetensors")
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
    det = loom.Object("vision." + name, path, **extra)

    with torch.inference_mode():
        t_torch, ref = cpu_per_call(lambda: model([image[0]]), a.repeat)
        stages, first, first_label, rest_label = torchvision_stages(name, model, image, h, w, a.repeat)
    t_loom, out = cpu_per_call(lambda: det(x), a.repeat)
    t_loom_first = None
    if not masks:
        first_method = getattr(det, name + ("_rpn" if name.startswith("fasterrcnn") else "_features"))
        t_loom_first, _ = cpu_per_call(lambda: first_method(x), a.repeat)
    t_ort, n_ort, why = (None, None, "--no-onnx") if a.no_onnx else onnx_runtime(model, image, a.threads, a.repeat)

    n_loom, n_ref = len(np.asarray(out[1])), len(ref[0]["scores"])
    print(f"{name}, one {h}x{w} image, batch 1, {a.threads} threads each side, {a.repeat} timed call(s); "
          f"CPU seconds per call (loaded machine: wall times not meaningful)")
    print(f"  detections: loom {n_loom}, torchvision {n_ref}" + (f", onnxruntime {n_ort}" if n_ort is not None else ""))
    print(f"  {'':28s} {'loom':>10s} {'torchvision':>12s} {'ratio':>7s} {'onnxruntime':>12s} {'ratio':>7s}")
    ort_cols = f" {t_ort:12.3f} {t_ort / t_loom:6.2f}x" if t_ort is not None else f"  n/a ({why})"
    print(f"  {'whole model (CPU s)':28s} {t_loom:10.3f} {t_torch:12.3f} {t_torch / t_loom:6.2f}x" + ort_cols)
    print(f"  {'images/s of CPU time':28s} {1 / t_loom:10.3f} {1 / t_torch:12.3f}"
          + (f" {'':7s} {1 / t_ort:12.3f}" if t_ort is not None else ""))
    ref_first = sum(stages[k] for k in first)
    if t_loom_first is None:
        for k, v in stages.items():
            print(f"    torchvision {k:20s} {v:8.3f} CPU s")
        return
    print(f"  {first_label:28s} {t_loom_first:10.3f} {ref_first:12.3f} {ref_first / t_loom_first:6.2f}x")
    ref_rest = sum(v for k, v in stages.items() if k not in first)
    print(f"  {rest_label:28s} {t_loom - t_loom_first:10.3f} {ref_rest:12.3f} "
          f"{ref_rest / max(t_loom - t_loom_first, 1e-9):6.2f}x")
    for k, v in stages.items():
        print(f"    torchvision {k:20s} {v:8.3f} CPU s")


if __name__ == "__main__":
    main()
