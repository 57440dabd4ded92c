#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the fbgemm `tbe` module to tests/data/fbgemm/tbe/.

    .venv-fbgemm/bin/python tools/gen_fbgemm_tbe_goldens.py [OUTDIR]

Needs torch + fbgemm-gpu-cpu (the .venv-fbgemm venv). Everything is seeded
and small (the whole folder stays well under 1.5 MB).

Quantisers (q_*.npy): q_input.npy holds f32 rows with edge cases (random,
huge and tiny ranges, constant rows, zeros, integers, NaN and +-inf). The
expected rows come from fbgemm itself:
  q_fused_int8      torch.ops.fbgemm.FloatToFused8BitRowwiseQuantized
  q_fused_int4/2    torch.ops.fbgemm.FloatToFusedNBitRowwiseQuantizedSBHalf
  q_tbe_int8/4/2    fbgemm_gpu.tbe.utils.quantize.quantize_embs, scale/bias
                    header moved to the front (what the IntNBit TBE stores)
  q_tbe_fp8         torch.ops.fbgemm.FloatToHFP8Quantized(x, 4, 7, 240)
  q_tbe_fp16        Tensor.half()
and the dequantised rows (dq_*, finite rows only: NaN payloads are not part
of the contract) from Fused8BitRowwiseQuantizedToFloat,
FusedNBitRowwiseQuantizedSBHalfToFloat, HFP8QuantizedToFloat and
fbgemm_gpu.tbe.utils.quantize.dequantize_embs. All compared bit for bit.

Lookups (tbe_*): 3 tables, 4 features (feature_table_map [0, 1, 0, 2], so
table 0 is shared), B = 5, bags of length 0..6 (empty bags in every case).
  tables_<wt>.safetensors   the tables in loom's TBE layout (table.<t>)
  <case>_indices / _offsets / _psw / _out .npy
Case names: <wt>_<pooling>_<w|nw>  (w: per_sample_weights), indices i32 for
even case numbers and i64 for odd ones (the test derives the same).
Reference modules (which fbgemm-gpu-cpu supports on CPU):
  fp32 fp16 int8 int4 int2 fp8  IntNBitTableBatchedEmbeddingBagsCodegen
                                (device cpu, EmbeddingLocation.HOST)
  bf16                          neither module runs bf16 weights on CPU:
                                torch.nn.functional.embedding_bag on the bf16
                                rows widened to f32 (fbgemm's own tests use
                                nn.EmbeddingBag as the reference)
  vbe_*                         SplitTableBatchedEmbeddingBagsCodegen (cpu)
                                with batch_size_per_feature_per_rank (VBE is
                                a training-module feature); fp32 weights
  out_fp16 / out_bf16           IntNBit with output_dtype FP16 / BF16
  bc_*                          IntNBit with bounds_check_mode WARNING and
                                IGNORE on a bad index, a bad last offset and
                                decreasing offsets (FATAL raises: no golden)
  pruned                        IntNBit with index -1 (skipped, counts in L)
Note (per_sample_weights): the IntNBit CPU kernel divides MEAN bags by their
length also when weights are given (the training module's CPU kernel does
not), and ignores the weights with pooling NONE; loom follows IntNBit, and so
does the bf16 reference here.
Tolerances (in the test): fp32 tables rtol = atol = 1e-5 (forward_test.py),
every other type rtol = atol = 1e-2 (nbit_forward_test.py); fp16/bf16
outputs add one rounding of the output type.
"""
import json
import os
import sys
import warnings

import numpy as np
import torch

warnings.filterwarnings("ignore")
import fbgemm_gpu  # noqa: E402,F401  (registers torch.ops.fbgemm)
from fbgemm_gpu.split_embedding_configs import FP8QuantizationConfig, SparseType  # noqa: E402
from fbgemm_gpu.split_table_batched_embeddings_ops_common import (  # noqa: E402
    BoundsCheckMode, EmbeddingLocation, PoolingMode)
from fbgemm_gpu.split_table_batched_embeddings_ops_inference import (  # noqa: E402
    IntNBitTableBatchedEmbeddingBagsCodegen)
from fbgemm_gpu.split_table_batched_embeddings_ops_training import (  # noqa: E402
    ComputeDevice, SplitTableBatchedEmbeddingBagsCodegen)
from fbgemm_gpu.tbe.utils.quantize import dequantize_embs, quantize_embs  # noqa: E402

from fbgemm_tables import write_safetensors  # noqa: E402  (tools/fbgemm_tables.py, beside this script)

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "fbgemm", "tbe")
os.makedirs(OUT, exist_ok=True)
rng = np.random.default_rng(20240607)

SPARSE = {"fp32": SparseType.FP32, "fp16": SparseType.FP16, "int8": SparseType.INT8,
          "int4": SparseType.INT4, "int2": SparseType.INT2, "fp8": SparseType.FP8}
WTYPES = ["fp32", "fp16", "int8", "int4", "int2", "fp8", "bf16"]
POOLINGS = {"sum": PoolingMode.SUM, "mean": PoolingMode.MEAN, "none": PoolingMode.NONE}
FP8 = FP8QuantizationConfig(4, 7)
ROWS = [40, 30, 50]
DIMS = [16, 32, 16]           # pooled cases; NONE needs one D: DIMS_NONE
DIMS_NONE = [16, 16, 16]
FTM = [0, 1, 0, 2]
B = 5


def save(name, a):
    np.save(os.path.join(OUT, name + ".npy"), a, allow_pickle=False)


def bf16_raw(t):
    return t.contiguous().view(torch.int16).numpy().view(np.dtype("V2"))


# --------------------------------------------------------------- quantisers

def quantiser_goldens():
    D = 64
    parts = [rng.standard_normal((8, D)), rng.standard_normal((4, D)) * 1e4, rng.standard_normal((4, D)) * 1e-6,
             rng.uniform(-1e30, 1e30, (2, D)), np.full((2, D), 3.25), np.zeros((2, D)),
             rng.integers(-3, 4, (4, D)), rng.standard_normal((4, D)) * 300,
             rng.standard_normal((2, D)) + 1e6]
    fin = np.concatenate(parts).astype(np.float32)
    nanr = rng.standard_normal((6, D)).astype(np.float32)
    nanr[0, 0] = np.nan
    nanr[1, 3] = np.nan
    nanr[2, :] = np.nan
    nanr[3, 1] = np.inf
    nanr[4, 0] = -np.inf
    nanr[5, 2], nanr[5, 5] = np.inf, -np.inf
    x = np.concatenate([fin, nanr])
    t = torch.from_numpy(x)
    save("q_input", x)
    save("q_fused_int8", torch.ops.fbgemm.FloatToFused8BitRowwiseQuantized(t).numpy())
    for bits, name in ((4, "int4"), (2, "int2")):
        save("q_fused_" + name, torch.ops.fbgemm.FloatToFusedNBitRowwiseQuantizedSBHalf(t, bits).numpy())
    for name in ("int8", "int4", "int2"):
        w, sb = quantize_embs(t, SPARSE[name])
        save("q_tbe_" + name, np.concatenate([sb.numpy(), w.numpy()], axis=1))
    xc = np.clip(x, -1e6, 1e6)    # FloatToHFP8Quantized clamps to max_pos itself; keep inf out of the compare
    save("q_fp8_input", xc)
    save("q_tbe_fp8", torch.ops.fbgemm.FloatToHFP8Quantized(torch.from_numpy(xc), 4, 7, 240.0).numpy())
    save("q_tbe_fp16", t.half().numpy())
    # dequantisation, finite rows
    n = fin.shape[0]
    tf = torch.from_numpy(fin)
    q8 = torch.ops.fbgemm.FloatToFused8BitRowwiseQuantized(tf)
    save("dq_fused_int8_in", q8.numpy())
    save("dq_fused_int8", torch.ops.fbgemm.Fused8BitRowwiseQuantizedToFloat(q8).numpy())
    for bits, name in ((4, "int4"), (2, "int2")):
        q = torch.ops.fbgemm.FloatToFusedNBitRowwiseQuantizedSBHalf(tf, bits)
        save(f"dq_fused_{name}_in", q.numpy())
        save(f"dq_fused_{name}", torch.ops.fbgemm.FusedNBitRowwiseQuantizedSBHalfToFloat(q, bits).numpy())
    for name in ("int8", "int4", "int2"):
        w, sb = quantize_embs(tf, SPARSE[name])
        save(f"dq_tbe_{name}_in", np.concatenate([sb.numpy(), w.numpy()], axis=1))
        save(f"dq_tbe_{name}", dequantize_embs(w, sb, SPARSE[name], True).numpy())
    h = torch.ops.fbgemm.FloatToHFP8Quantized(tf, 4, 7, 240.0)
    save("dq_tbe_fp8_in", h.numpy())
    save("dq_tbe_fp8", torch.ops.fbgemm.HFP8QuantizedToFloat(h, 4, 7).numpy())
    assert n == fin.shape[0]


# ------------------------------------------------------------------ tables

def make_tables(wt, dims):
    """(loom safetensors tensors, fbgemm weight list, dequantised f32 tables)."""
    st, qlist, deq = [], [], []
    for t, (E, D) in enumerate(zip(ROWS, dims)):
        x = torch.from_numpy((rng.standard_normal((E, D)) * 0.5).astype(np.float32))
        if wt == "bf16":
            xb = x.bfloat16()
            st.append((f"table.{t}", "BF16", bf16_raw(xb)))
            deq.append(xb.float())
            continue
        w, sb = quantize_embs(x, SPARSE[wt], FP8 if wt == "fp8" else None)
        qlist.append((w, sb))
        if wt == "fp32":
            st.append((f"table.{t}", "F32", w.view(torch.float32).numpy()))
        elif wt == "fp16":
            st.append((f"table.{t}", "F16", w.view(torch.float16).numpy()))
        else:
            rows = w.numpy() if sb is None else np.concatenate([sb.numpy(), w.numpy()], axis=1)
            st.append((f"table.{t}", "U8", rows))
        deq.append(dequantize_embs(w, sb, SPARSE[wt], True, FP8 if wt == "fp8" else None).float())
    return st, qlist, deq


def make_batch(n_bags, idx_dtype, rows_of_bag):
    lengths = rng.integers(0, 7, n_bags)
    lengths[rng.integers(0, n_bags, 2)] = 0          # at least one empty bag
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([rng.integers(0, rows_of_bag(k), L) for k, L in enumerate(lengths)]) \
        if offsets[-1] else np.zeros(0, np.int64)
    return indices.astype(idx_dtype), offsets.astype(idx_dtype)


def intnbit(wt, dims, qlist, pooling, out_dtype=SparseType.FP32, bounds=BoundsCheckMode.WARNING):
    specs = [("", E, D, SPARSE[wt], EmbeddingLocation.HOST) for E, D in zip(ROWS, dims)]
    m = IntNBitTableBatchedEmbeddingBagsCodegen(specs, feature_table_map=FTM, pooling_mode=pooling, device="cpu",
                                                output_dtype=out_dtype, bounds_check_mode=bounds,
                                                fp8_exponent_bits=4, fp8_exponent_bias=7)
    m.initialize_weights()
    m.assign_embedding_weights(qlist)
    return m


def reference_bag(deq, indices, offsets, psw, pooling, dims):
    """torch.nn.functional.embedding_bag per feature (the bf16 reference)."""
    T = len(FTM)
    if pooling == "none":     # IntNBit semantics: nobag ignores per_sample_weights
        return torch.cat([deq[FTM[f]][torch.from_numpy(indices[offsets[f * B]:offsets[(f + 1) * B]].astype(np.int64))]
                          for f in range(T)])
    outs = []
    for f in range(T):
        lo, hi = offsets[f * B], offsets[(f + 1) * B]
        ind = torch.from_numpy(indices[lo:hi].astype(np.int64))
        off = torch.from_numpy((offsets[f * B:(f + 1) * B + 1] - lo).astype(np.int64))
        w = None if psw is None else torch.from_numpy(psw[lo:hi])
        if pooling == "mean" and w is not None:   # IntNBit semantics: weighted sum / L
            o = torch.nn.functional.embedding_bag(ind, deq[FTM[f]], off, mode="sum", per_sample_weights=w,
                                                  include_last_offset=True)
            L = (off[1:] - off[:-1]).clamp(min=1).float()[:, None]
            o = o / L
        else:
            o = torch.nn.functional.embedding_bag(ind, deq[FTM[f]], off, mode=pooling, per_sample_weights=w,
                                                  include_last_offset=True)
        outs.append(o)
    return torch.cat(outs, dim=1)


def lookup_goldens():
    manifest = {}
    case = 0
    for wt in WTYPES:
        sets = {"pooled": make_tables(wt, DIMS), "none": make_tables(wt, DIMS_NONE)}
        for tag, (st, _, _) in sets.items():
            write_safetensors(os.path.join(OUT, f"tables_{wt}_{tag}.safetensors"), st)
        saved_pooled[wt] = sets["pooled"]
        for pooling in POOLINGS:
            dims = DIMS_NONE if pooling == "none" else DIMS
            st, qlist, deq = sets["none" if pooling == "none" else "pooled"]
            for weighted in (False, True):
                name = f"{wt}_{pooling}_{'w' if weighted else 'nw'}"
                idx_dtype = np.int32 if case % 2 == 0 else np.int64
                case += 1
                indices, offsets = make_batch(len(FTM) * B, idx_dtype, lambda k: ROWS[FTM[k // B]])
                psw = rng.uniform(0.5, 2.0, indices.shape[0]).astype(np.float32) if weighted else None
                if wt == "bf16":
                    out = reference_bag(deq, indices, offsets, psw, pooling, dims)
                    module = "torch.nn.functional.embedding_bag"
                else:
                    m = intnbit(wt, dims, qlist, POOLINGS[pooling])
                    out = m(torch.from_numpy(indices), torch.from_numpy(offsets),
                            None if psw is None else torch.from_numpy(psw))
                    module = "IntNBitTableBatchedEmbeddingBagsCodegen"
                save(name + "_indices", indices)
                save(name + "_offsets", offsets)
                if psw is not None:
                    save(name + "_psw", psw)
                save(name + "_out", out.float().numpy())
                manifest[name] = module
    return manifest


saved_pooled = {}


def output_dtype_goldens(manifest):
    for wt in ("fp16", "int4"):
        st, qlist, deq = saved_pooled[wt]
        for od, name in ((SparseType.FP16, "fp16"), (SparseType.BF16, "bf16")):
            indices, offsets = make_batch(len(FTM) * B, np.int64, lambda k: ROWS[FTM[k // B]])
            m = intnbit(wt, DIMS, qlist, PoolingMode.SUM, out_dtype=od)
            out = m(torch.from_numpy(indices), torch.from_numpy(offsets))
            case = f"out_{name}_{wt}"
            save(case + "_indices", indices)
            save(case + "_offsets", offsets)
            save(case + "_out", out.numpy() if name == "fp16" else bf16_raw(out))
            manifest[case] = "IntNBitTableBatchedEmbeddingBagsCodegen output_dtype=" + name


def bounds_goldens(manifest):
    """Bad inputs under WARNING and IGNORE (both repair the same way)."""
    st, qlist, deq = saved_pooled["int8"]
    good_i, good_o = make_batch(len(FTM) * B, np.int64, lambda k: ROWS[FTM[k // B]])
    while good_o[-1] < 8:
        good_i, good_o = make_batch(len(FTM) * B, np.int64, lambda k: ROWS[FTM[k // B]])
    bad = {}
    i = good_i.copy()
    i[1] = 1000          # past table rows
    i[3] = -5            # negative (not the pruned marker -1)
    bad["index"] = (i, good_o.copy())
    o = good_o.copy()
    o[-1] = o[-1] - 2    # last offset != number of indices
    bad["last_offset"] = (good_i.copy(), o)
    o = good_o.copy()
    k = 3
    o[k] = o[k + 1] + 3  # a start past its end (and past the next start)
    bad["decreasing"] = (good_i.copy(), o)
    o = good_o.copy()
    o[2] = -4
    bad["negative_offset"] = (good_i.copy(), o)
    for mode, bcm in (("warning", BoundsCheckMode.WARNING), ("ignore", BoundsCheckMode.IGNORE)):
        for what, (ind, off) in bad.items():
            m = intnbit("int8", DIMS, qlist, PoolingMode.SUM, bounds=bcm)
            ti, to = torch.from_numpy(ind.copy()), torch.from_numpy(off.copy())
            out = m(ti, to)
            case = f"bc_{mode}_{what}"
            save(case + "_indices", ind)
            save(case + "_offsets", off)
            save(case + "_out", out.float().numpy())
            manifest[case] = f"IntNBit int8 bounds_check_mode={mode}"
    # pruned rows: -1 is skipped but counts in MEAN's L
    ind, off = good_i.copy(), good_o.copy()
    ind[0] = -1
    ind[2] = -1
    m = intnbit("int8", DIMS, qlist, PoolingMode.MEAN)
    save("pruned_indices", ind)
    save("pruned_offsets", off)
    save("pruned_out", m(torch.from_numpy(ind), torch.from_numpy(off)).float().numpy())
    manifest["pruned"] = "IntNBit int8 mean with index -1"


def vbe_goldens(manifest):
    """fp32 weights through the training module with VBE."""
    R = 3
    bsz = rng.integers(0, 4, (len(FTM), R))
    bsz[0, 0] = 0
    bsz[1, 2] = 3
    # fp32 only: fbgemm-gpu-cpu 1.9.0 raises "Index .. is out of bounds" for
    # fp16 weights with VBE and mixed dims on CPU
    for wt, wp in (("fp32", SparseType.FP32),):
        st, qlist, deq = saved_pooled[wt]
        for pooling in ("sum", "mean"):
            m = SplitTableBatchedEmbeddingBagsCodegen(
                [(E, D, EmbeddingLocation.HOST, ComputeDevice.CPU) for E, D in zip(ROWS, DIMS)],
                feature_table_map=FTM, weights_precision=wp, pooling_mode=POOLINGS[pooling],
                output_dtype=SparseType.FP32)
            with torch.no_grad():
                for t, w in enumerate(m.split_embedding_weights()):
                    w.copy_(deq[t].to(w.dtype))
            n_bags = int(bsz.sum())
            feat_of_bag = np.repeat(np.arange(len(FTM)), bsz.sum(1))
            indices, offsets = make_batch(n_bags, np.int64, lambda k: ROWS[FTM[feat_of_bag[k]]])
            out = m(torch.from_numpy(indices), torch.from_numpy(offsets),
                    batch_size_per_feature_per_rank=bsz.tolist())
            case = f"vbe_{wt}_{pooling}"
            save(case + "_indices", indices)
            save(case + "_offsets", offsets)
            save(case + "_out", out.detach().float().numpy())
            manifest[case] = "SplitTableBatchedEmbeddingBagsCodegen (cpu) VBE"
    save("vbe_bsz", bsz.astype(np.int64))


def cli_goldens(manifest):
    """The CLI test: fp32 tables, default feature_table_map (one feature per
    table), B = 4, sum; compared byte for byte with fbgemm's output (a
    sequential f32 sum of each bag, the same additions in the same order)."""
    st, qlist, deq = saved_pooled["fp32"]
    specs = [("", E, D, SparseType.FP32, EmbeddingLocation.HOST) for E, D in zip(ROWS, DIMS)]
    m = IntNBitTableBatchedEmbeddingBagsCodegen(specs, pooling_mode=PoolingMode.SUM, device="cpu",
                                                output_dtype=SparseType.FP32)
    m.initialize_weights()
    m.assign_embedding_weights(qlist)
    Bc = 4
    indices, offsets = make_batch(3 * Bc, np.int64, lambda k: ROWS[k // Bc])
    save("cli_indices", indices)
    save("cli_offsets", offsets)
    save("cli_psw", rng.uniform(0.5, 2.0, indices.shape[0]).astype(np.float32))
    save("cli_out", m(torch.from_numpy(indices), torch.from_numpy(offsets)).numpy())
    manifest["cli"] = "IntNBit fp32 sum, feature_table_map identity"


def main():
    quantiser_goldens()
    manifest = lookup_goldens()
    output_dtype_goldens(manifest)
    bounds_goldens(manifest)
    vbe_goldens(manifest)
    cli_goldens(manifest)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"reference_module_per_case": manifest, "feature_table_map": FTM, "rows": ROWS,
                   "dims_pooled": DIMS, "dims_none": DIMS_NONE, "B": B}, f, indent=1, sort_keys=True)
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print(f"{OUT}: {len(os.listdir(OUT))} files, {total} bytes")


if __name__ == "__main__":
    main()
