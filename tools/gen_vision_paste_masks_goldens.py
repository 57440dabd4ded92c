#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of vision.paste_masks to tests/data/vision/paste_masks/.

torchvision.models.detection.roi_heads.paste_masks_in_image on the CPU in f32:
seeded masks in [0, 1] (Mask R-CNN's sigmoid probabilities) of 28 x 28 and
of 7 x 7, boxes inside the image, partly outside it (each side), tiny
(under a pixel, and with x2 < x1 after truncation), large against the mask,
and an empty list (K = 0). torchvision itself fails on a box wholly outside
the image (its slice ends go negative), so the cases hold none. The cases'
attributes are in CASES and, the same, in tests/vision/roi/test_paste_masks.c.

    .venv/bin/python tools/gen_vision_paste_masks_goldens.py [OUTDIR]

Needs numpy, torch and torchvision.
"""
import os
import sys

import numpy as np
import torch
from torchvision.models.detection.roi_heads import paste_masks_in_image

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "paste_masks")

BOXES = [
    [4.3, 6.1, 30.7, 25.2],       # inside
    [-5.5, 10.0, 12.25, 33.9],    # past the left and the bottom edge
    [35.2, -3.7, 52.0, 8.4],      # past the top and the right edge
    [20.0, 20.0, 20.4, 20.3],     # under a pixel
    [11.6, 3.2, 11.1, 9.8],       # x2 < x1: one column after max(w, 1)
    [0.0, 0.0, 47.9, 35.0],       # the whole image
    [2.5, 30.5, 9.5, 37.5],       # a corner box
]

# name: mask side, image (H, W), padding, boxes (indices into BOXES or None for none)
CASES = {
    "mask28": (28, (36, 48), 1, list(range(len(BOXES)))),
    "mask7": (7, (36, 48), 1, [0, 1, 2, 5]),
    "pad2": (28, (36, 48), 2, [0, 2, 3, 6]),
    "empty": (28, (36, 48), 1, []),
}


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy().astype(np.float32),
            allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(28)
    for name, (m, (h, w), padding, which) in CASES.items():
        k = len(which)
        masks = torch.rand(k, 1, m, m)
        boxes = torch.tensor([BOXES[i] for i in which], dtype=torch.float32).reshape(k, 4)
        out = paste_masks_in_image(masks, boxes, (h, w), padding=padding)
        print(f"{name}: masks {tuple(masks.shape)} -> {tuple(out.shape)}, nonzero {int((out > 0).sum())}")
        save(f"{name}_masks", masks)
        save(f"{name}_boxes", boxes)
        save(f"{name}_output", out)


if __name__ == "__main__":
    main()
