#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the models' building blocks to tests/data/vision/blocks/.

vision.squeeze_excitation against torchvision.ops.SqueezeExcitation (in
eval mode, seeded weights; the activation pairs torchvision's models use:
ReLU + Sigmoid for RegNet and MNASNet-style blocks, SiLU + Sigmoid for
EfficientNet, ReLU + Hardsigmoid for MobileNetV3) and vision.channel_shuffle
against torch.nn.functional.channel_shuffle and torchvision's ShuffleNetV2
helper (they agree; both are checked here), and vision.conv2d's residual
after the activation (FusedMBConv without expansion: silu(conv(x)) + x). The cases are the CASES tables
below and, the same, those of tests/vision/layers/test_blocks.c.

    .venv/bin/python tools/gen_vision_blocks_goldens.py [OUTDIR]

Needs numpy, torch and torchvision. Keeps the folder under ~100 KB.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torchvision.models.shufflenetv2 import channel_shuffle as tv_channel_shuffle
from torchvision.ops import SqueezeExcitation

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "blocks")

ACTS = {"relu": torch.nn.ReLU, "silu": torch.nn.SiLU}
SCALE_ACTS = {"sigmoid": torch.nn.Sigmoid, "hardsigmoid": torch.nn.Hardsigmoid}

# name: N, C, S (squeeze channels), H, W, activation, scale_activation
SE_CASES = {
    "relu_sigmoid": (2, 16, 4, 7, 7, "relu", "sigmoid"),
    "silu_sigmoid": (2, 24, 6, 5, 9, "silu", "sigmoid"),
    "relu_hardsigmoid": (3, 16, 8, 6, 6, "relu", "hardsigmoid"),
    "wide_plane": (1, 4, 2, 33, 35, "relu", "sigmoid"),     # planes of 1155: the vector loop and its tail
}
# name: shape, groups, dtype
SHUFFLE_CASES = {
    "f32_g3": ((2, 12, 5, 7), 3, torch.float32),
    "f32_rank3": ((1, 6, 4), 2, torch.float32),
    "i64_g4": ((2, 8, 3, 3), 4, torch.int64),
}


def save(name, t, dtype=np.float32):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy().astype(dtype), allow_pickle=False)


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(17)
    for name, (n, c, s, h, w, act, scale) in SE_CASES.items():
        se = SqueezeExcitation(c, s, activation=ACTS[act], scale_activation=SCALE_ACTS[scale]).eval()
        with torch.no_grad():
            for p in se.parameters():      # weights large enough that the scale is far from 0.5
                p.copy_(torch.randn(p.shape) * 0.8)
            x = torch.randn(n, c, h, w) + 0.3
            y = se(x)
        save(f"se_{name}_input", x)
        save(f"se_{name}_fc1_weight", se.fc1.weight)
        save(f"se_{name}_fc1_bias", se.fc1.bias)
        save(f"se_{name}_fc2_weight", se.fc2.weight)
        save(f"se_{name}_fc2_bias", se.fc2.bias)
        save(f"se_{name}_output", y)
    for name, (shape, groups, dtype) in SHUFFLE_CASES.items():
        x = torch.randn(shape) * 100 if dtype.is_floating_point else torch.randint(-1000, 1000, shape)
        x = x.to(dtype)
        y = F.channel_shuffle(x, groups)
        if len(shape) == 4:
            assert torch.equal(y, tv_channel_shuffle(x, groups))
        np_dtype = np.float32 if dtype == torch.float32 else np.int64
        save(f"shuffle_{name}_input", x, np_dtype)
        save(f"shuffle_{name}_output", y, np_dtype)
    # cat([input, other], 1) then shuffled: ShuffleNetV2's block end (torchvision's InvertedResidual)
    a, b = torch.randn(2, 6, 3, 5), torch.randn(2, 6, 3, 5)
    save("shuffle_cat_input", a)
    save("shuffle_cat_other", b)
    save("shuffle_cat_output", tv_channel_shuffle(torch.cat((a, b), dim=1), 2))
    # vision.conv2d with residual_after_activation: FusedMBConv without expansion, silu(conv(x)) + x
    conv = torch.nn.Conv2d(8, 8, 3, padding=1)
    with torch.no_grad():
        x = torch.randn(2, 8, 9, 10)
        y = F.silu(conv(x)) + x
    save("conv_res_after_input", x)
    save("conv_res_after_weight", conv.weight)
    save("conv_res_after_bias", conv.bias)
    save("conv_res_after_output", y)


if __name__ == "__main__":
    main()
