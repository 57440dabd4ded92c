#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the vision `deform` module to tests/data/vision/deform/.

deform_conv2d: torchvision.ops.deform_conv2d on the CPU; its gradients come
from torchvision's autograd (torchvision::_deform_conv2d_backward), driven by
a seeded random output gradient. Configurations: with and without mask and
bias, weight groups and offset groups > 1, stride 2, dilation 2, padding,
a non-square kernel, offsets that send samples outside the image (and onto
the exact -1 / H borders), N = 0, f64 and f16.

drop_block2d/3d and stochastic_depth draw from torch's RNG, which loom does
not reproduce. So for each case the generator re-seeds torch, draws the
Bernoulli tensor exactly as torchvision does (same shape, dtype, gamma),
stores it as `<case>_noise`, re-seeds and calls torchvision: the loom op fed
that noise must give the stored output bit for bit. Each case's attributes
are recorded in its name and in the test.

    .venv/bin/python tools/gen_vision_deform_goldens.py [OUTDIR]

Needs numpy, torch and torchvision (CPU). Keeps the module under ~300 KB.
"""
import os
import sys

import numpy as np
import torch
import torchvision.ops as tvo

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "vision", "deform")


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), t.detach().contiguous().numpy(), allow_pickle=False)


def out_size(size, k, s, p, d):
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


# name: N, Cin, H, W, Cout, groups, offset_groups, kh, kw, stride, padding, dilation, mask, bias,
#       offset scale, dtype
CONV_CASES = {
    "basic_mask":    (2, 4, 7, 7, 3, 1, 1, 3, 3, (1, 1), (1, 1), (1, 1), True, True, 1.0, torch.float32),
    "nomask_nobias": (2, 4, 7, 7, 3, 1, 1, 3, 3, (1, 1), (1, 1), (1, 1), False, False, 1.0, torch.float32),
    "groups_stride": (2, 6, 9, 8, 4, 2, 3, 3, 3, (2, 2), (1, 1), (1, 1), True, True, 1.0, torch.float32),
    "dilation":      (1, 4, 8, 9, 4, 1, 2, 3, 2, (1, 2), (2, 1), (2, 2), False, True, 1.0, torch.float32),
    "outside":       (2, 2, 5, 6, 3, 1, 1, 3, 3, (1, 1), (0, 0), (1, 1), True, False, 4.0, torch.float32),
    "groups_f64":    (2, 6, 9, 8, 4, 2, 3, 3, 3, (2, 2), (1, 1), (1, 1), True, True, 1.0, torch.float64),
    "f16":           (1, 4, 6, 6, 4, 2, 2, 3, 3, (1, 1), (1, 1), (1, 1), True, True, 1.0, torch.float16),
    "wide":          (3, 8, 12, 12, 13, 1, 2, 3, 3, (1, 1), (1, 1), (1, 1), True, True, 1.0, torch.float32),
    "empty":         (0, 4, 7, 7, 3, 1, 1, 3, 3, (1, 1), (1, 1), (1, 1), True, True, 1.0, torch.float32),
}


def conv_case(name, cfg, seed):
    n, cin, h, w, cout, groups, og, kh, kw, stride, pad, dil, use_mask, use_bias, oscale, dt = cfg
    g = torch.Generator().manual_seed(seed)
    ho, wo = out_size(h, kh, stride[0], pad[0], dil[0]), out_size(w, kw, stride[1], pad[1], dil[1])
    x = torch.randn(n, cin, h, w, generator=g, dtype=torch.float64)
    off = torch.randn(n, 2 * og * kh * kw, ho, wo, generator=g, dtype=torch.float64) * oscale
    if name == "outside":
        # exact borders: y = -1 and y = H, x = -1 and x = W, integer positions
        off[:, 0, 0, 0] = -1.0          # tap (0,0) at output (0,0): y = -1
        off[:, 1, 0, 0] = 0.25
        off[:, 2, 0, 1] = float(h)      # y = H + ...
        off[:, 4, 1, 1] = 1.0           # integer sample position
        off[:, 5, 1, 1] = -1.0
        off[:, 6, 0, 2] = -2.5          # well outside
    wt = torch.randn(cout, cin // groups, kh, kw, generator=g, dtype=torch.float64) * 0.5
    bias = torch.randn(cout, generator=g, dtype=torch.float64) if use_bias else None
    mask = torch.rand(n, og * kh * kw, ho, wo, generator=g, dtype=torch.float64) if use_mask else None
    grad = torch.randn(n, cout, ho, wo, generator=g, dtype=torch.float64)
    tensors = {"input": x, "offset": off, "weight": wt, "bias": bias, "mask": mask, "grad": grad}
    tensors = {k: (v.to(dt).requires_grad_(k != "grad") if v is not None else None) for k, v in tensors.items()}
    out = tvo.deform_conv2d(tensors["input"], tensors["offset"], tensors["weight"], tensors["bias"],
                            stride=stride, padding=pad, dilation=dil, mask=tensors["mask"])
    for k, v in tensors.items():
        if v is not None:
            save(f"{name}_{k}", v)
    save(f"{name}_output", out)
    if n == 0:
        return
    out.backward(tensors["grad"])
    for k in ("input", "weight", "offset", "mask", "bias"):
        if tensors[k] is not None:
            save(f"{name}_grad_{k}", tensors[k].grad)
    if tensors["bias"] is None:      # grad_bias is always returned: sum of grad over N, Ho, Wo
        save(f"{name}_grad_bias", tensors["grad"].sum((0, 2, 3)))


def drop_block_case(name, shape, p, block_size, dt, seed, dims):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64).to(dt)
    sizes = shape[2:]
    bs = min([block_size] + list(sizes))
    valid = 1
    for s in sizes:
        valid *= s - bs + 1
    area = 1
    for s in sizes:
        area *= s
    gamma = (p * area) / ((bs ** dims) * valid)
    torch.manual_seed(seed)
    noise = torch.empty([shape[0], shape[1]] + [s - bs + 1 for s in sizes], dtype=dt).bernoulli_(gamma)
    torch.manual_seed(seed)
    fn = tvo.drop_block2d if dims == 2 else tvo.drop_block3d
    out = fn(x, p, block_size)
    save(f"{name}_input", x)
    save(f"{name}_noise", noise)
    save(f"{name}_output", out)


def stochastic_depth_case(name, shape, p, mode, dt, seed):
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed + 1), dtype=torch.float64).to(dt)
    size = [shape[0]] + [1] * (len(shape) - 1) if mode == "row" else [1] * len(shape)
    torch.manual_seed(seed)
    noise = torch.empty(size, dtype=dt).bernoulli_(1.0 - p)
    torch.manual_seed(seed)
    out = tvo.stochastic_depth(x, p, mode)
    save(f"{name}_input", x)
    save(f"{name}_noise", noise)
    save(f"{name}_output", out)


def main():
    os.makedirs(OUT, exist_ok=True)
    for i, (name, cfg) in enumerate(CONV_CASES.items()):
        conv_case(name, cfg, 100 + i)
    # drop_block: name, shape, p, block_size, dtype, seed
    drop_block_case("db2d_f32", (2, 3, 9, 8), 0.3, 3, torch.float32, 1, 2)
    drop_block_case("db2d_f64", (2, 2, 7, 7), 0.5, 5, torch.float64, 2, 2)
    drop_block_case("db2d_f16", (2, 3, 8, 8), 0.4, 3, torch.float16, 3, 2)
    drop_block_case("db2d_bs1", (1, 2, 6, 5), 0.2, 1, torch.float32, 4, 2)
    drop_block_case("db2d_clamp", (1, 2, 5, 9), 0.9, 7, torch.float32, 5, 2)   # bs = min(7, 5, 9) = 5
    drop_block_case("db2d_p1", (1, 1, 5, 5), 1.0, 3, torch.float32, 6, 2)
    drop_block_case("db3d_f32", (2, 2, 5, 6, 7), 0.3, 3, torch.float32, 7, 3)
    drop_block_case("db3d_f16", (1, 2, 4, 5, 5), 0.5, 3, torch.float16, 8, 3)
    # stochastic_depth: name, shape, p, mode, dtype, seed
    stochastic_depth_case("sd_row_f32", (8, 3, 4), 0.4, "row", torch.float32, 11)
    stochastic_depth_case("sd_row_f64", (8, 5), 0.3, "row", torch.float64, 12)
    stochastic_depth_case("sd_row_f16", (8, 2, 3), 0.3, "row", torch.float16, 13)
    stochastic_depth_case("sd_batch_f32", (4, 3), 0.2, "batch", torch.float32, 14)
    stochastic_depth_case("sd_row_p1", (4, 3), 1.0, "row", torch.float32, 15)


if __name__ == "__main__":
    main()
