#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the vision `layers` module to tests/data/vision/layers/.

Every op against torch.nn.functional on the CPU in f32, on small seeded
inputs: conv2d (grouped, depthwise, dilated, strided, 1x1, the padding
modes of nn.Conv2d, and a fused activation: the golden is F.relu/F.silu/
F.gelu of F.conv2d), batch_norm at inference, the activations, the pools,
linear, softmax and layer_norm. The attributes of each case are in the
CASES tables below and, the same, in tests/vision/layers/test_layers.c.

    .venv/bin/python tools/gen_vision_layers_goldens.py [OUTDIR]

Needs numpy and torch. Keeps the module under ~700 KB.
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "layers")


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy().astype(np.float32),
            allow_pickle=False)


# name: N, Cin, H, W, Cout, k (kh, kw), stride, padding, dilation, groups, bias, padding_mode, activation
CONV_CASES = {
    "basic":      (2, 3, 9, 8, 4, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, "zeros", "none"),
    "stride_nob": (1, 4, 10, 11, 6, (3, 3), (2, 2), (1, 1), (1, 1), 1, False, "zeros", "none"),
    "groups_dil": (2, 6, 9, 9, 4, (3, 2), (1, 2), (2, 1), (2, 2), 2, True, "zeros", "none"),
    "depthwise":  (1, 8, 9, 9, 8, (3, 3), (2, 2), (1, 1), (1, 1), 8, True, "zeros", "none"),
    "pointwise":  (2, 16, 5, 6, 12, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "zeros", "none"),
    "down":       (1, 8, 10, 10, 16, (1, 1), (2, 2), (0, 0), (1, 1), 1, False, "zeros", "none"),
    "stem":       (1, 3, 32, 32, 8, (7, 7), (2, 2), (3, 3), (1, 1), 1, False, "zeros", "none"),
    "reflect":    (1, 3, 7, 6, 4, (3, 3), (1, 1), (2, 1), (1, 1), 1, True, "reflect", "none"),
    "replicate":  (1, 3, 7, 6, 4, (3, 3), (1, 2), (2, 2), (1, 1), 1, True, "replicate", "none"),
    "circular":   (1, 3, 7, 6, 4, (3, 3), (1, 1), (1, 3), (1, 1), 1, True, "circular", "none"),
    "relu":       (2, 8, 8, 8, 16, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, "zeros", "relu"),
    "silu":       (1, 4, 6, 6, 8, (3, 3), (1, 1), (1, 1), (1, 1), 2, True, "zeros", "silu"),
    "gelu":       (1, 4, 6, 6, 8, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "zeros", "gelu"),
}

# the direct depthwise kernel (groups == Cin == Cout): stride 1 over the
# padded width, stride 2 with its even lanes, the other strides and the
# dilations on the portable taps, maps narrower than a vector, a padding mode
# name: as CONV_CASES
DEPTHWISE_CASES = {
    "dw_s1_silu":  (2, 16, 14, 13, 16, (3, 3), (1, 1), (1, 1), (1, 1), 16, True, "zeros", "silu"),
    "dw_s2_silu":  (1, 12, 15, 14, 12, (3, 3), (2, 2), (1, 1), (1, 1), 12, True, "zeros", "silu"),
    "dw_5x5_dil":  (1, 6, 11, 12, 6, (5, 5), (1, 1), (4, 4), (2, 2), 6, True, "zeros", "relu"),
    "dw_narrow":   (3, 20, 7, 7, 20, (3, 3), (1, 1), (1, 1), (1, 1), 20, False, "zeros", "none"),
    "dw_s2_5x5":   (1, 5, 9, 20, 5, (5, 5), (2, 2), (2, 2), (1, 1), 5, True, "zeros", "gelu"),
    "dw_s3_rect":  (1, 4, 10, 11, 4, (3, 2), (3, 2), (1, 0), (1, 1), 4, True, "zeros", "silu"),
    "dw_reflect":  (1, 4, 8, 9, 4, (3, 3), (1, 1), (1, 2), (1, 1), 4, True, "reflect", "none"),
}

ACTS = {"none": lambda x: x, "relu": F.relu, "silu": F.silu, "gelu": F.gelu}

# name: kernel_size, stride (None: kernel), padding, dilation, ceil_mode
MAX_POOL_CASES = {
    "resnet": ((3, 3), (2, 2), (1, 1), (1, 1), False),
    "ceil":   ((3, 2), (2, 2), (0, 1), (1, 1), True),
    "dil":    ((2, 3), (1, 2), (1, 1), (2, 2), False),
    "dflt":   ((2, 2), None, (0, 0), (1, 1), False),
}
# name: kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
AVG_POOL_CASES = {
    "pad_incl": ((3, 3), (2, 2), (1, 1), False, True, None),
    "pad_excl": ((3, 3), (2, 2), (1, 1), False, False, None),
    "ceil":     ((2, 3), (2, 2), (1, 0), True, True, None),
    "divisor":  ((2, 2), None, (0, 0), False, True, 3),
}
ADAPTIVE_CASES = {"global": (1, 1), "uneven": (3, 2), "up": (9, 11)}


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(13)
    for name, (n, cin, h, w, cout, k, s, p, d, g, bias, mode, act) in CONV_CASES.items():
        conv = nn.Conv2d(cin, cout, k, stride=s, padding=p, dilation=d, groups=g, bias=bias, padding_mode=mode)
        x = torch.randn(n, cin, h, w)
        with torch.no_grad():
            y = ACTS[act](conv(x))
        save(f"conv_{name}_input", x)
        save(f"conv_{name}_weight", conv.weight)
        if bias:
            save(f"conv_{name}_bias", conv.bias)
        save(f"conv_{name}_output", y)

    # the end of a ResNet block: relu(conv + bias + residual)
    conv = nn.Conv2d(8, 12, 3, padding=1)
    x, r = torch.randn(2, 8, 7, 7), torch.randn(2, 12, 7, 7)
    save("conv_residual_input", x)
    save("conv_residual_weight", conv.weight)
    save("conv_residual_bias", conv.bias)
    save("conv_residual_residual", r)
    with torch.no_grad():
        save("conv_residual_output", F.relu(conv(x) + r))

    # batch_norm: non-trivial statistics; with and without the affine part
    x = torch.randn(2, 5, 4, 3)
    mean, var = torch.randn(5), torch.rand(5) + 0.5
    wt, b = torch.randn(5), torch.randn(5)
    save("bn_input", x)
    save("bn_mean", mean)
    save("bn_var", var)
    save("bn_weight", wt)
    save("bn_bias", b)
    save("bn_output", F.batch_norm(x, mean, var, wt, b, training=False, eps=1e-3))
    save("bn_plain_output", F.batch_norm(x, mean, var, training=False, eps=1e-5))

    # activations: a spread over [-10, 10] plus the edges of each formula
    xa = torch.cat([torch.linspace(-10, 10, 997), torch.tensor([-3.0, 3.0, 0.0, 6.0, -6.0, 1e-8, -1e-8])])
    save("act_input", xa)
    save("act_relu", F.relu(xa))
    save("act_relu6", F.relu6(xa))
    save("act_silu", F.silu(xa))
    save("act_gelu", F.gelu(xa))
    save("act_gelu_tanh", F.gelu(xa, approximate="tanh"))
    save("act_hardswish", F.hardswish(xa))
    save("act_sigmoid", torch.sigmoid(xa))

    xp = torch.randn(2, 3, 11, 10)
    save("pool_input", xp)
    for name, (k, s, p, d, c) in MAX_POOL_CASES.items():
        save(f"maxpool_{name}", F.max_pool2d(xp, k, stride=s, padding=p, dilation=d, ceil_mode=c))
    for name, (k, s, p, c, inc, div) in AVG_POOL_CASES.items():
        save(f"avgpool_{name}", F.avg_pool2d(xp, k, stride=s, padding=p, ceil_mode=c, count_include_pad=inc,
                                             divisor_override=div))
    for name, o in ADAPTIVE_CASES.items():
        save(f"adaptive_{name}", F.adaptive_avg_pool2d(xp, o))

    xl = torch.randn(2, 3, 40)
    lin = nn.Linear(40, 24)
    save("linear_input", xl)
    save("linear_weight", lin.weight)
    save("linear_bias", lin.bias)
    with torch.no_grad():
        save("linear_output", lin(xl))
    xs = torch.randn(3, 7, 5) * 4
    save("softmax_input", xs)
    save("softmax_dim1", F.softmax(xs, dim=1))
    save("softmax_last", F.softmax(xs, dim=-1))
    xn = torch.randn(2, 5, 6, 8) * 3 + 1
    lw, lb = torch.randn(6, 8), torch.randn(6, 8)
    save("ln_input", xn)
    save("ln_weight", lw)
    save("ln_bias", lb)
    save("ln_output", F.layer_norm(xn, (6, 8), lw, lb, eps=1e-6))

    # seeded apart, so the cases above keep their values
    torch.manual_seed(31)
    for name, (n, cin, h, w, cout, k, s, p, d, g, bias, mode, act) in DEPTHWISE_CASES.items():
        conv = nn.Conv2d(cin, cout, k, stride=s, padding=p, dilation=d, groups=g, bias=bias, padding_mode=mode)
        x = torch.randn(n, cin, h, w)
        with torch.no_grad():
            y = ACTS[act](conv(x))
        save(f"conv_{name}_input", x)
        save(f"conv_{name}_weight", conv.weight)
        if bias:
            save(f"conv_{name}_bias", conv.bias)
        save(f"conv_{name}_output", y)
    # a depthwise conv with both residual forms: relu(conv + bias + r), silu(conv + bias) + r
    conv = nn.Conv2d(8, 8, 3, padding=1, groups=8)
    x, r = torch.randn(2, 8, 9, 10), torch.randn(2, 8, 9, 10)
    save("conv_dw_residual_input", x)
    save("conv_dw_residual_weight", conv.weight)
    save("conv_dw_residual_bias", conv.bias)
    save("conv_dw_residual_residual", r)
    with torch.no_grad():
        save("conv_dw_residual_output", F.relu(conv(x) + r))
        save("conv_dw_residual_after_output", F.silu(conv(x)) + r)


if __name__ == "__main__":
    main()
