#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the `core` op pack to tests/data/coreops/.

Every expected output comes from torch on the CPU (torch.matmul, torch.add,
Tensor.to, torch.nn.functional.linear); inputs are small and seeded, so the
files are reproducible. bf16 and f8e4m3 arrays are stored as raw bytes
('|V2' / '|V1' .npy descr), the layout loom_npy_read expects for them.

    .venv/bin/python tools/gen_core_goldens.py [OUTDIR]

Needs numpy and torch (CPU is enough). Keep the total small (< 300 KB).
"""
import math
import os
import sys

import numpy as np
import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "coreops")

DTYPES = {  # loom name -> torch dtype
    "f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
    "bf16": torch.bfloat16, "f8e4m3": torch.float8_e4m3fn, "i8": torch.int8,
    "u8": torch.uint8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
    "bool": torch.bool, "c64": torch.complex64, "c128": torch.complex128,
    "u16": torch.uint16, "u32": torch.uint32,
}
FLOATS = ["f32", "f64", "f16", "bf16", "f8e4m3"]
INTS = ["i8", "u8", "i16", "i32", "i64", "u16", "u32"]
COMPLEX = ["c64", "c128"]


def to_numpy(t):
    """A numpy array with the exact bytes of t; bf16/f8 as void records."""
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.dtype("V2"))
    if t.dtype == torch.float8_e4m3fn:
        return t.view(torch.uint8).numpy().view(np.dtype("V1"))
    return t.numpy()


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), to_numpy(t), allow_pickle=False)


def tricky_floats():
    """Edge values for every float dtype: zeros, subnormals, limits, ties."""
    v = [0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.5, 0.3, -7.7, 123.456, 1e10, -1e-10,
         2.0 ** -149, -(2.0 ** -149), 2.0 ** -126, 3.4028234663852886e38, -3.4028234663852886e38,
         math.inf, -math.inf, math.nan,
         65504.0, 65505.0, 65519.0, 65520.0, 1e5,           # f16 max, ties to inf
         1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -25,  # f16 ties, subnormals
         1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8, -(1 + 2.0 ** -8),   # bf16 ties
         448.0, 449.0, 464.0, 465.0, 480.0, -500.0,         # f8e4m3 max, ties, overflow to NaN
         2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 2.0 ** -6 * 1.0625]
    return v


def source_values(src):
    """(all values, values whose truncation fits every integer dtype)."""
    if src == "bool":
        t = torch.tensor([False, True, True, False])
        return t, t
    if src in INTS:
        info = torch.iinfo(DTYPES[src])
        vals = sorted({0, 1, -1, 2, 7, 100, 127, 128, 255, 256, 300, -129, -300, 32767, 40000,
                       -40000, 2 ** 31 - 1, -2 ** 31, 2 ** 40 + 1, 2 ** 53 + 1, 2 ** 63 - 1,
                       -2 ** 63, info.min, info.max, info.max - 1})
        vals = [x for x in vals if info.min <= x <= info.max]
        t = torch.tensor(vals, dtype=DTYPES[src])
        return t, t
    if src == "f8e4m3":
        t = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch.float8_e4m3fn)
    elif src in COMPLEX:
        re = torch.tensor([0.0, -0.0, 1.5, -2.5, 0.0, math.nan, math.inf, 65520.0, 1 + 2.0 ** -11, 3.0],
                          dtype=torch.float64)
        im = torch.tensor([0.0, 0.0, -2.5, 0.0, 1.0, 0.0, 1.0, 2.0, -0.0, -4.0], dtype=torch.float64)
        t = torch.complex(re, im).to(DTYPES[src])
    else:
        vals = tricky_floats()
        if src == "f64":
            vals += [1e300, -1e300, 5e-324, 1 + 2.0 ** -24 + 2.0 ** -60, 1 + 2.0 ** -11 + 2.0 ** -40,
                     2.0 ** 63, 0.1]
        t = torch.tensor(vals, dtype=torch.float64).to(DTYPES[src])
    # truncation within [0, 127] is defined for every integer target (torch
    # leaves out-of-range and NaN float -> int undefined)
    real = t.real if t.is_complex() else t
    r = real.to(torch.float64)
    ok = torch.isfinite(r) & (r > -1.0) & (r < 128.0)
    return t, t[ok]


def gen_cast():
    for src in DTYPES:
        all_vals, safe = source_values(src)
        save(f"cast_in_{src}", all_vals)
        if safe.numel() != all_vals.numel() or not torch.equal(safe.view(-1), all_vals.view(-1)):
            save(f"cast_in_{src}_intsafe", safe)
        for dst in DTYPES:
            vals = safe if (dst in INTS and src not in INTS and src != "bool") else all_vals
            save(f"cast_{src}_to_{dst}", vals.to(DTYPES[dst]))


def gen_matmul(g):
    cases = {
        "f32_2d": ((5, 7), (7, 9), torch.float32),
        "f32_k300": ((20, 300), (300, 18), torch.float32),   # two KC slices
        "f32_batch": ((3, 4, 33), (3, 33, 17), torch.float32),
        "f32_bcast": ((2, 6, 40), (1, 40, 5), torch.float32),
        "f64_2d": ((17, 19), (19, 23), torch.float64),
    }
    for name, (sa, sb, dt) in cases.items():
        a = torch.randn(sa, generator=g, dtype=torch.float64).to(dt)
        b = torch.randn(sb, generator=g, dtype=torch.float64).to(dt)
        save(f"matmul_{name}_input", a)
        save(f"matmul_{name}_other", b)
        save(f"matmul_{name}_output", torch.matmul(a, b))


def gen_add(g):
    for name, dt in DTYPES.items():
        if name in ("f8e4m3", "u16", "u32"):
            continue                                  # torch has no add for float8, uint16, uint32
        if name in FLOATS or name in COMPLEX:
            a = torch.randn((3, 4), generator=g, dtype=torch.float64) * 4
            b = torch.randn((4,), generator=g, dtype=torch.float64) * 4
            if name in COMPLEX:
                a = torch.complex(a, torch.randn((3, 4), generator=g, dtype=torch.float64))
                b = torch.complex(b, torch.randn((4,), generator=g, dtype=torch.float64))
            a, b = a.to(dt), b.to(dt)
        elif name == "bool":
            a = torch.randint(0, 2, (3, 4), generator=g).to(torch.bool)
            b = torch.randint(0, 2, (4,), generator=g).to(torch.bool)
        else:
            info = torch.iinfo(dt)
            a = torch.randint(info.min, info.max, (3, 4), generator=g, dtype=torch.int64).to(dt)
            b = torch.randint(info.min, info.max, (4,), generator=g, dtype=torch.int64).to(dt)
        save(f"add_{name}_input", a)
        save(f"add_{name}_other", b)
        save(f"add_{name}_output", torch.add(a, b))
    # alpha, integer wrap-around and a transposed (strided) input
    a = torch.randn((4, 3), generator=g, dtype=torch.float32)
    b = torch.randn((3, 4), generator=g, dtype=torch.float32)
    save("add_f32_alpha_input", a.t().contiguous())
    save("add_f32_alpha_other", b)
    save("add_f32_alpha_output", torch.add(a.t().contiguous(), b, alpha=2.5))
    save("add_f32_strided_input_t", a)                # the test views it transposed
    save("add_f32_strided_other", b)
    save("add_f32_strided_output", torch.add(a.t(), b))
    a = torch.tensor([[100, -100, 127], [-128, 5, 0]], dtype=torch.int8)
    b = torch.tensor([100, -100, 3], dtype=torch.int8)
    save("add_i8_alpha_input", a)
    save("add_i8_alpha_other", b)
    save("add_i8_alpha_output", torch.add(a, b, alpha=3))


def gen_linear(g):
    w = torch.randn((5, 8), generator=g, dtype=torch.float32)
    bias = torch.randn((5,), generator=g, dtype=torch.float32)
    x = torch.randn((2, 3, 8), generator=g, dtype=torch.float32)
    save("linear_weight", w)
    save("linear_bias", bias)
    save("linear_input", x)
    save("linear_output", torch.nn.functional.linear(x, w, bias))
    save("linear_output_nobias", torch.nn.functional.linear(x, w))


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))
    g = torch.Generator().manual_seed(1234)
    gen_cast()
    gen_matmul(g)
    gen_add(g)
    gen_linear(g)
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{len(os.listdir(OUT))} files, {total} bytes in {OUT}")


if __name__ == "__main__":
    main()
