#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of `loom classify` and tools/convert_torchvision.py, and the
decode demo's photo.

Committed, small (tests/data/vision/classify/):
  scene_wide.jpg (320x240) and scene_tall.jpg (180x260, portrait):
      synthetic scenes (gradients, discs, bars, seeded noise) encoded by
      torchvision.io.encode_jpeg at quality 90; the first is downscaled by the
      preset (antialias), the second upscaled.

Committed, for `loom demo decode` (examples/demos/data/):
  street.jpg (640x480): the same kind of scene at quality 85.

At goldens time (tens of MB, not committed; the test skips without them),
in build-models/vision/classify/:
  resnet18-HASH.pth        torchvision.models.resnet18 with seeded random weights
                           and batchnorm statistics (gen_vision_models_goldens.randomise),
                           saved as torchvision's reference scripts save checkpoints:
                           {"model": state_dict, "epoch": ...}; HASH: its sha256 prefix
  resnet18.safetensors     tools/convert_torchvision.py of that file (run as a user runs it)
  expected.json            torchvision's answer for IMAGENET1K_V1 on both images:
                           decode_image(read_file(f), mode=RGB), weights.transforms(),
                           the model, softmax(1), topk(5): {"images": [{"image",
                           "top": [{"index", "category", "score"}]}]}

The fc layer's weights are scaled up so that the top-5 scores are apart by
far more than the test's tolerance (random weights otherwise give a nearly
flat softmax, whose order would hinge on the last bits).

    .venv/bin/python tools/gen_vision_classify_goldens.py [MODELS_DIR]
"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torchvision
from torchvision.io import ImageReadMode, decode_image, encode_jpeg, read_file

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(TOOLS, "..")
DATA = os.path.join(ROOT, "tests", "data", "vision", "classify")
IMAGES = [("scene_wide.jpg", 240, 320, 11), ("scene_tall.jpg", 260, 180, 12)]
sys.path.insert(0, TOOLS)
from gen_vision_models_goldens import randomise  # noqa: E402


def scene(h, w, seed):
    """A synthetic photograph-like u8 [3, h, w]: sky and ground gradients, discs, bars, noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    img = np.zeros((3, h, w), np.float32)
    horizon = h * rng.uniform(0.4, 0.6)
    sky = y < horizon
    for c, (top, bottom) in enumerate([(90, 200), (140, 120), (230, 60)]):
        img[c] = np.where(sky, top + (bottom - top) * y / h, bottom * 0.8 + 40 * np.sin(x / w * 7 + c))
    for _ in range(6):
        cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(8, min(h, w) / 4)
        colour = rng.uniform(0, 255, 3)
        disc = (y - cy) ** 2 + (x - cx) ** 2 < r * r
        img[:, disc] = colour[:, None] * (0.7 + 0.3 * np.cos((x[disc] - cx) / r))[None]
    for _ in range(4):
        x0 = int(rng.uniform(0, w - 10))
        img[:, :, x0:x0 + int(rng.uniform(3, 12))] *= rng.uniform(0.3, 0.9)
    img += rng.normal(0, 6, img.shape)
    return torch.from_numpy(np.clip(np.rint(img), 0, 255).astype(np.uint8))


def write_jpeg(path, img, quality):
    with open(path, "wb") as f:
        f.write(encode_jpeg(img, quality=quality).numpy().tobytes())


def write_images():
    os.makedirs(DATA, exist_ok=True)
    for name, h, w, seed in IMAGES:
        write_jpeg(os.path.join(DATA, name), scene(h, w, seed), 90)
    write_jpeg(os.path.join(ROOT, "examples", "demos", "data", "street.jpg"), scene(480, 640, 13), 85)


def write_model(out):
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.startswith("resnet18-") and f.endswith(".pth"):
            os.remove(os.path.join(out, f))
    torch.manual_seed(300)
    model = randomise(torchvision.models.resnet18(weights=None), 300)
    with torch.no_grad():
        model.fc.weight.mul_(40.0)
    tmp = os.path.join(out, "resnet18.pth.tmp")
    torch.save({"model": model.state_dict(), "epoch": 89}, tmp)
    with open(tmp, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    pth = os.path.join(out, f"resnet18-{digest[:8]}.pth")
    os.replace(tmp, pth)
    st = os.path.join(out, "resnet18.safetensors")
    subprocess.run([sys.executable, os.path.join(TOOLS, "convert_torchvision.py"), pth, st], check=True)
    return model


def write_expected(out, model):
    weights = torchvision.models.ResNet18_Weights.IMAGENET1K_V1
    preset = weights.transforms()
    cats = weights.meta["categories"]
    result = {"model": "vision.resnet18", "weights": "IMAGENET1K_V1", "images": []}
    for name, _, _, _ in IMAGES:
        img = decode_image(read_file(os.path.join(DATA, name)), mode=ImageReadMode.RGB)
        with torch.no_grad():
            probs = model(preset(img).unsqueeze(0)).softmax(1)[0]
        top = probs.topk(6)
        gaps = (top.values[:-1] - top.values[1:]).min().item()
        assert gaps > 5e-4, f"{name}: top scores {top.values.tolist()} too close for the test's order check"
        result["images"].append({"image": name, "top": [
            {"index": int(i), "category": cats[int(i)], "score": float(v)}
            for v, i in zip(top.values[:5], top.indices[:5])]})
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(result, f, indent=1)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build-models", "vision", "classify")
    write_images()
    model = write_model(out)
    write_expected(out, model)
    print(f"classify goldens: {DATA}, {out}")


if __name__ == "__main__":
    main()
