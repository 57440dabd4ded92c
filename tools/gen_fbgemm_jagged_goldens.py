#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the fbgemm jagged ops to tests/data/fbgemm/jagged/.

Expected outputs come from torch.ops.fbgemm.* (fbgemm-gpu-cpu 1.9) on the CPU.
fbgemm's CPU kernels have no f64 path for most jagged ops; their f64 goldens
come from the small numpy references below, which are first checked against
fbgemm in f32 (bit-exact for the copy and element-wise ops). Besides the .npy
files (<case>.<input>.npy, <case>.out<i>.npy) the script writes cases.inc,
the case table the C test includes:

    CASE(name, op, "input,input,...", "attr=value;...", n_outputs, rtol, atol)

rtol = atol = 0 means bit-identical. bf16 is stored as raw '|V2' bytes.

    .venv-fbgemm/bin/python tools/gen_fbgemm_jagged_goldens.py [OUTDIR]
"""
import os
import sys

import numpy as np
import torch
import fbgemm_gpu  # noqa: F401  (registers torch.ops.fbgemm)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "fbgemm", "jagged")
F = torch.ops.fbgemm
RNG = np.random.default_rng(20261129)
CASES = []

# Tolerances. Copies and element-wise ops compute exactly what fbgemm does
# (one f32 operation, one rounding), so they are compared bit for bit. The
# bmm ops sum K <= 40 products of N(0,1) values in another order than
# fbgemm: in f32 the difference stays within a few K * 2^-24 * sum|a*b|,
# covered by rtol = atol = 2e-5; 16-bit results are rounded once from f32
# sums and may land one unit in the last place apart (2^-10 f16, 2^-7 bf16).
EXACT = (0.0, 0.0)
BMM_TOL = {"f32": (2e-5, 2e-5), "f64": (1e-12, 1e-12), "f16": (2.0 ** -10, 2e-3), "bf16": (2.0 ** -7, 2e-2)}
TORCH = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
         "i32": torch.int32, "i64": torch.int64}


def to_numpy(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.dtype("V2"))
    return t.numpy()


def save(name, t):
    np.save(os.path.join(OUT, name + ".npy"), to_numpy(t), allow_pickle=False)


def case(name, op, inputs, attrs, outputs, tol):
    """inputs: [(arg name, tensor)], outputs: [tensor]."""
    for arg, t in inputs:
        save(f"{name}.{arg}", t)
    for i, t in enumerate(outputs):
        save(f"{name}.out{i}", t)
    a = ";".join(f"{k}={v}" for k, v in attrs)
    CASES.append(f'CASE("{name}", "fbgemm.{op}", "{",".join(n for n, _ in inputs)}", "{a}", '
                 f'{len(outputs)}, {tol[0]!r}, {tol[1]!r})')


def offsets_of(lengths, dtype=torch.int64, start=0):
    return torch.tensor(np.concatenate([[start], start + np.cumsum(lengths)]), dtype=dtype)


def randn(shape, dt):
    return torch.from_numpy(RNG.standard_normal(shape).astype(np.float32)).to(TORCH[dt])


# ------------------------------------------------- numpy references (f64)

def ref_to_padded(v, off, max_l, pad):
    v, off = v.numpy(), off.numpy()
    out = np.full((len(off) - 1, max_l) + v.shape[1:], pad, dtype=v.dtype)
    for b in range(len(off) - 1):
        n = min(off[b + 1] - off[b], max_l)
        out[b, :n] = v[off[b]:off[b] + n]
    return torch.from_numpy(out)


def ref_to_jagged(d, off, total):
    d, off = d.numpy(), off.numpy()
    out = np.zeros((total,) + d.shape[2:], dtype=d.dtype)
    for b in range(len(off) - 1):
        n = min(off[b + 1] - off[b], d.shape[1])
        out[off[b]:off[b] + n] = d[b, :n]
    return torch.from_numpy(out)


def ref_add(x, off, y):
    return ref_to_padded(x, off, y.shape[1], 0.0) + y


def ref_add_jagged(x, off, y):
    return x + ref_to_jagged(y, off, x.shape[0])


def ref_mul(x, off, y):
    return x * ref_to_jagged(y, off, x.shape[0])


def ref_mul_backward(g, off, y, x):
    # fbgemm: the gradient of x_values is +0 (not g * 0) past max_L
    inside = ref_to_jagged(torch.ones_like(y), off, g.shape[0]) != 0
    xg = torch.where(inside, g * ref_to_jagged(y, off, g.shape[0]), torch.zeros_like(g))
    return [xg, ref_to_padded(g * x, off, y.shape[1], 0.0)]


def ref_dense_bmm(x, off, y, max_l):
    out = torch.zeros(x.shape[0], y.shape[2], dtype=x.dtype)
    for b in range(len(off) - 1):
        o, n = int(off[b]), min(int(off[b + 1] - off[b]), max_l)
        out[o:o + n] = x[o:o + n] @ y[b]
    return out


def ref_jagged_bmm(x, y, off, max_l):
    out = torch.zeros(len(off) - 1, x.shape[1], y.shape[1], dtype=x.dtype)
    for b in range(len(off) - 1):
        o, n = int(off[b]), min(int(off[b + 1] - off[b]), max_l)
        out[b] = x[o:o + n].T @ y[o:o + n]
    return out


def check_refs():
    """The references agree with fbgemm in f32 (bit-exact where the op is)."""
    lengths = [3, 0, 7, 1, 4]
    off = offsets_of(lengths)
    x, y = randn((15, 6), "f32"), randn((5, 4, 6), "f32")
    eq = torch.testing.assert_close
    eq(ref_to_padded(x, off, 4, -1.5), F.jagged_to_padded_dense(x, [off], [4], -1.5), rtol=0, atol=0)
    eq(ref_to_jagged(y, off, 15), F.dense_to_jagged(y, [off])[0], rtol=0, atol=0)
    eq(ref_add(x, off, y), F.jagged_dense_elementwise_add(x, [off], y), rtol=0, atol=0)
    eq(ref_add_jagged(x, off, y), F.jagged_dense_elementwise_add_jagged_output(x, [off], y)[0], rtol=0, atol=0)
    eq(ref_mul(x, off, y), F.jagged_dense_elementwise_mul(x, [off], y)[0], rtol=0, atol=0)
    g = -x.abs()
    for r, f in zip(ref_mul_backward(g, off, y, x), F.jagged_dense_elementwise_mul_backward(g, [off], y, x)):
        eq(r, f, rtol=0, atol=0)
    yb = randn((5, 6, 9), "f32")
    eq(ref_dense_bmm(x, off, yb, 4), F.jagged_dense_bmm(x, off, yb, 4)[0], rtol=1e-5, atol=1e-5)
    x2 = randn((15, 9), "f32")
    eq(ref_jagged_bmm(x, x2, off, 4), F.jagged_jagged_bmm(x, x2, off, 4), rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------- cases

LENGTHS = [3, 0, 7, 1, 5, 2]        # an empty bag and rows longer than max_L = 4
MAX_L = 4


def gen_to_padded():
    for dt, odt in [("f32", torch.int64), ("f64", torch.int32), ("f16", torch.int32), ("bf16", torch.int64),
                    ("i32", torch.int64), ("i64", torch.int32)]:
        off = offsets_of(LENGTHS, odt)
        v = randn((int(off[-1]), 5), "f32")
        v = (v * 100).to(TORCH[dt]) if dt.startswith("i") else v.to(TORCH[dt])
        pad = -3.0 if dt.startswith("i") else -1.5
        want = ref_to_padded(v, off, MAX_L, pad) if dt == "f64" else F.jagged_to_padded_dense(v, [off], [MAX_L], pad)
        case(f"to_padded_{dt}", "jagged_to_padded_dense", [("values", v), ("offsets", off)],
             [("max_lengths", MAX_L), ("padding_value", pad)], [want], EXACT)
    off = offsets_of(LENGTHS, torch.int32)
    v = randn((int(off[-1]), 2, 3), "f32")        # inner dims kept (fbgemm takes 2-D values only)
    case("to_padded_3d", "jagged_to_padded_dense", [("values", v), ("offsets", off)], [("max_lengths", 6)],
         [ref_to_padded(v, off, 6, 0.0)], EXACT)
    v = randn((int(off[-1]),), "f32")             # 1-D values
    case("to_padded_1d", "jagged_to_padded_dense", [("values", v), ("offsets", off)],
         [("max_lengths", MAX_L), ("padding_value", 7.0)], [F.jagged_to_padded_dense(v, [off], [MAX_L], 7.0)], EXACT)
    off0 = torch.zeros(1, dtype=torch.int64)      # zero-size batch
    v = torch.zeros(0, 5)
    case("to_padded_empty_batch", "jagged_to_padded_dense", [("values", v), ("offsets", off0)],
         [("max_lengths", MAX_L)], [F.jagged_to_padded_dense(v, [off0], [MAX_L])], EXACT)
    offz = offsets_of([0, 0, 0])                  # only empty bags: all padding
    case("to_padded_all_empty", "jagged_to_padded_dense", [("values", v), ("offsets", offz)],
         [("max_lengths", 2), ("padding_value", 2.5)], [F.jagged_to_padded_dense(v, [offz], [2], 2.5)], EXACT)
    off = offsets_of(LENGTHS)
    v = randn((int(off[-1]), 5), "f32")
    case("to_padded_maxl0", "jagged_to_padded_dense", [("values", v), ("offsets", off)],
         [("max_lengths", 0)], [F.jagged_to_padded_dense(v, [off], [0])], EXACT)


def gen_to_padded_backward():
    for dt in ["f32", "f64", "f16", "bf16"]:
        off = offsets_of(LENGTHS, torch.int32 if dt == "f16" else torch.int64)
        total = int(off[-1])
        g = randn((len(LENGTHS), MAX_L, 5), dt)
        want = ref_to_jagged(g, off, total) if dt == "f64" else F.jagged_to_padded_dense_backward(g, [off], total)
        case(f"to_padded_backward_{dt}", "jagged_to_padded_dense_backward", [("grad_output", g), ("offsets", off)],
             [("total_L", total)], [want], EXACT)


def gen_to_jagged():
    for dt in ["f32", "f64", "f16", "bf16", "i64"]:
        off = offsets_of(LENGTHS, torch.int32 if dt in ("f16", "i64") else torch.int64)
        d = randn((len(LENGTHS), MAX_L, 5), "f32")
        d = (d * 100).to(TORCH[dt]) if dt.startswith("i") else d.to(TORCH[dt])
        want = ref_to_jagged(d, off, int(off[-1])) if dt == "f64" else F.dense_to_jagged(d, [off])[0]
        case(f"to_jagged_{dt}", "dense_to_jagged", [("dense", d), ("x_offsets", off)], [], [want], EXACT)
    off = offsets_of(LENGTHS)
    d = randn((len(LENGTHS), MAX_L, 5), "f32")
    total = int(off[-1]) + 3                       # total_L past the last offset: zero rows
    case("to_jagged_total_l", "dense_to_jagged", [("dense", d), ("x_offsets", off)], [("total_L", total)],
         [F.dense_to_jagged(d, [off], total_L=total)[0]], EXACT)
    off0 = torch.zeros(1, dtype=torch.int64)
    d = torch.zeros(0, MAX_L, 5)
    case("to_jagged_empty_batch", "dense_to_jagged", [("dense", d), ("x_offsets", off0)], [],
         [F.dense_to_jagged(d, [off0])[0]], EXACT)


def gen_elementwise():
    for dt in ["f32", "f64", "f16", "bf16"]:
        off = offsets_of(LENGTHS, torch.int32 if dt == "bf16" else torch.int64)
        x = randn((int(off[-1]), 6), dt)
        y = randn((len(LENGTHS), MAX_L, 6), dt)
        x[0, 0], y[0, 0, 0], y[1, 0, 1] = -0.0, -0.0, -0.0   # signed zeros: 0 + -0, padding + -0
        x[6, 1] = -0.0                                          # -0 past max_L: -0 + 0, -0 * 0
        if dt == "f64":
            add, addj, mul = ref_add(x, off, y), ref_add_jagged(x, off, y), ref_mul(x, off, y)
        else:
            add = F.jagged_dense_elementwise_add(x, [off], y)
            addj = F.jagged_dense_elementwise_add_jagged_output(x, [off], y)[0]
            mul = F.jagged_dense_elementwise_mul(x, [off], y)[0]
        ins = [("x_values", x), ("x_offsets", off), ("y", y)]
        case(f"add_{dt}", "jagged_dense_elementwise_add", ins, [], [add], EXACT)
        case(f"add_jagged_output_{dt}", "jagged_dense_elementwise_add_jagged_output", ins, [], [addj], EXACT)
        case(f"mul_{dt}", "jagged_dense_elementwise_mul", ins, [], [mul], EXACT)
        if dt == "bf16":
            continue                               # fbgemm has no bf16 mul_backward on CPU
        g = randn((int(off[-1]), 6), dt)
        g[7, 2] = -1.0                              # negative gradient past max_L: -1 * 0 = -0
        want = ref_mul_backward(g, off, y, x) if dt == "f64" else \
            list(F.jagged_dense_elementwise_mul_backward(g, [off], y, x))
        case(f"mul_backward_{dt}", "jagged_dense_elementwise_mul_backward",
             [("grad_output", g), ("x_offsets", off), ("y", y), ("x_values", x)], [], want, EXACT)
    off0 = torch.zeros(1, dtype=torch.int64)
    x, y = torch.zeros(0, 6), torch.zeros(0, MAX_L, 6)
    case("add_empty_batch", "jagged_dense_elementwise_add", [("x_values", x), ("x_offsets", off0), ("y", y)], [],
         [F.jagged_dense_elementwise_add(x, [off0], y)], EXACT)


def gen_bmm():
    lengths = [5, 0, 9, 1, 6, 3]
    for dt in ["f32", "f64", "f16", "bf16"]:
        off = offsets_of(lengths, torch.int32 if dt == "f16" else torch.int64)
        total, k, n = int(off[-1]), 24, 40         # 4x16 tiles plus edges in rows and columns
        x, y = randn((total, k), dt), randn((len(lengths), k, n), dt)
        want = ref_dense_bmm(x, off, y, 6) if dt == "f64" else F.jagged_dense_bmm(x, off, y, 6)[0]
        case(f"dense_bmm_{dt}", "jagged_dense_bmm", [("x_values", x), ("x_offsets", off), ("y", y)],
             [("max_L", 6)], [want], BMM_TOL[dt])
        m, n2 = 20, 35
        x, y2 = randn((total, m), dt), randn((total, n2), dt)
        want = ref_jagged_bmm(x, y2, off, 6) if dt == "f64" else F.jagged_jagged_bmm(x, y2, off, 6)
        case(f"jagged_bmm_{dt}", "jagged_jagged_bmm", [("x_values", x), ("y_values", y2), ("x_offsets", off)],
             [("max_L", 6)], [want], BMM_TOL[dt])
        mm, bb, kk, nn = 9, 3, 13, 34
        bias, a, b = randn((bb, nn), dt), randn((mm, bb, kk), dt), randn((bb, kk, nn), dt)
        case(f"permute102_{dt}", "permute102_baddbmm_permute102", [("bias", bias), ("A", a), ("B", b)], [],
             [F.permute102_baddbmm_permute102(bias, a, b).contiguous()], BMM_TOL[dt])
    off0 = torch.zeros(1, dtype=torch.int64)
    x, y = torch.zeros(0, 8), torch.zeros(0, 8, 5)
    case("dense_bmm_empty_batch", "jagged_dense_bmm", [("x_values", x), ("x_offsets", off0), ("y", y)],
         [("max_L", 3)], [F.jagged_dense_bmm(x, off0, y, 3)[0]], EXACT)
    y2 = torch.zeros(0, 4)
    case("jagged_bmm_empty_batch", "jagged_jagged_bmm", [("x_values", x), ("y_values", y2), ("x_offsets", off0)],
         [("max_L", 3)], [F.jagged_jagged_bmm(x, y2, off0, 3)], EXACT)
    off = offsets_of([0, 4, 0])                    # empty bags give zero blocks
    x, y2 = randn((4, 8), "f32"), randn((4, 5), "f32")
    case("jagged_bmm_empty_bags", "jagged_jagged_bmm", [("x_values", x), ("y_values", y2), ("x_offsets", off)],
         [("max_L", 3)], [F.jagged_jagged_bmm(x, y2, off, 3)], BMM_TOL["f32"])


def nested(top_lengths, rng_max, dtype=torch.int64):
    """offsets of one more jagged level under `top_lengths` entries: lengths in [0, rng_max]."""
    n = int(sum(top_lengths))
    lengths = RNG.integers(0, rng_max + 1, size=n)
    return offsets_of(lengths, dtype), lengths


def gen_multi_level():
    # two jagged dims: 4 bags of 0..3 lists of 0..4 rows, truncated to [2, 3]
    top = [3, 0, 2, 1]
    off0 = offsets_of(top, torch.int32)
    off1, inner = nested(top, 4, torch.int32)
    v = randn((int(off1[-1]), 3), "f32")
    case("to_padded_2level", "jagged_to_padded_dense", [("values", v), ("offsets", off0), ("offsets_1", off1)],
         [("max_lengths", "2,3"), ("padding_value", -2.0)],
         [F.jagged_to_padded_dense(v, [off0, off1], [2, 3], -2.0)], EXACT)
    d = randn((len(top), 2, 3, 3), "bf16")
    case("to_jagged_2level", "dense_to_jagged", [("dense", d), ("x_offsets", off0), ("x_offsets_1", off1)], [],
         [F.dense_to_jagged(d, [off0, off1])[0]], EXACT)
    g = randn((len(top), 2, 3, 3), "f32")
    total = int(off1[-1])
    case("to_padded_backward_2level", "jagged_to_padded_dense_backward",
         [("grad_output", g), ("offsets", off0), ("offsets_1", off1)], [("total_L", total)],
         [F.jagged_to_padded_dense_backward(g, [off0, off1], total)], EXACT)
    # three jagged dims, 1-D values
    off2, _ = nested(inner, 3)
    off0, off1 = off0.long(), off1.long()
    v = randn((int(off2[-1]),), "f32")
    case("to_padded_3level", "jagged_to_padded_dense",
         [("values", v), ("offsets", off0), ("offsets_1", off1), ("offsets_2", off2)],
         [("max_lengths", "3,2,2"), ("padding_value", 9.0)],
         [F.jagged_to_padded_dense(v, [off0, off1, off2], [3, 2, 2], 9.0)], EXACT)
    d = randn((len(top), 3, 2, 2, 2), "f32")
    case("to_jagged_3level", "dense_to_jagged",
         [("dense", d), ("x_offsets", off0), ("x_offsets_1", off1), ("x_offsets_2", off2)], [],
         [F.dense_to_jagged(d, [off0, off1, off2])[0]], EXACT)


def gen_index_select():
    for dt, idt in [("f32", torch.int64), ("f64", torch.int32), ("f16", torch.int64), ("bf16", torch.int32),
                    ("i64", torch.int64)]:
        x = randn((11, 7), "f32")
        x = (x * 100).to(TORCH[dt]) if dt.startswith("i") else x.to(TORCH[dt])
        idx = torch.tensor([3, 0, 10, 3, 7, 7, 1], dtype=idt)
        case(f"index_select_{dt}", "index_select_dim0", [("input", x), ("indices", idx)], [],
             [F.index_select_dim0(x, idx)], EXACT)
    x = randn((6, 2, 3), "f32")
    idx = torch.tensor([5, 1], dtype=torch.int64)
    case("index_select_3d", "index_select_dim0", [("input", x), ("indices", idx)],
         [("consecutive_range_start", 0), ("consecutive_range_length", 0), ("skip_indices_sorting_fwd", "true")],
         [F.index_select_dim0(x, idx, 0, 0, True)], EXACT)
    idx = torch.zeros(0, dtype=torch.int64)
    case("index_select_none", "index_select_dim0", [("input", x), ("indices", idx)], [],
         [F.index_select_dim0(x, idx)], EXACT)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy"):
            os.remove(os.path.join(OUT, f))
    check_refs()
    gen_to_padded()
    gen_to_padded_backward()
    gen_to_jagged()
    gen_multi_level()
    gen_elementwise()
    gen_bmm()
    gen_index_select()
    with open(os.path.join(OUT, "cases.inc"), "w") as f:
        f.write("/* Generated by tools/gen_fbgemm_jagged_goldens.py: the golden cases of the jagged ops. */\n")
        f.write("\n".join(CASES) + "\n")
    size = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print(f"{len(CASES)} cases, {size} bytes in {OUT}")


if __name__ == "__main__":
    main()
