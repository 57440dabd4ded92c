#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Convert fp32 embedding tables into a loom fbgemm.tbe weights file.

Inputs are fp32 tables [rows, D]: several .npy files (one table each, in
table order) or one .safetensors file (tensors named table.<t>, else taken in
name order). The output safetensors file holds one tensor per table, named
table.<t>, in that table's weight type and fbgemm's IntNBit TBE row layout:

  fp32 / fp16 / bf16   F32 / F16 / BF16 [rows, D]
  fp8 / int8 / int4 / int2
                       U8 [rows, row_bytes] (int types: f16 scale, f16 bias,
                       then the packed codes; rows padded to --row-alignment)

Quantiser (--quantizer):
  loom    (default) the pack's own fbgemm.quantize_rows through the loom CLI
          (--loom, or $LOOM_CLI, or `loom` on PATH): bit-exact with fbgemm
          and needs no Python packages beyond numpy.
  fbgemm  fbgemm_gpu.tbe.utils.quantize.quantize_embs (needs torch and
          fbgemm_gpu, e.g. .venv-fbgemm); the reference itself.
Float types are cast with numpy in either mode (round to nearest even).

Examples:
  tools/fbgemm_tables.py --weight-type int4 --out t.safetensors a.npy b.npy
  tools/fbgemm_tables.py --weight-type fp32,int8 --out t.safetensors in.safetensors
Then: loom run fbgemm.tbe --weights t.safetensors --attr weights_tys=int4,int4 ...
The header's __metadata__ records weights_tys and embedding_dims for reference.
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

WTYPES = ("fp32", "fp16", "bf16", "fp8", "int8", "int4", "int2")
ST_DTYPES = {"float32": "F32", "float16": "F16", "uint8": "U8", "bfloat16": "BF16"}


def row_bytes(wtype, dim, align):
    raw = {"fp32": 4 * dim, "fp16": 2 * dim, "bf16": 2 * dim, "fp8": dim,
           "int8": dim + 4, "int4": dim // 2 + 4, "int2": dim // 4 + 4}[wtype]
    return (raw + align - 1) // align * align


def read_safetensors(path):
    """Tensors of a safetensors file as (name, np.ndarray f32), in table order."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
    header.pop("__metadata__", None)
    names = list(header)
    tables = sorted((k for k in names if k.startswith("table.") and k[6:].isdigit()), key=lambda k: int(k[6:]))
    order = tables if tables else sorted(names)
    mm = np.memmap(path, dtype=np.uint8, mode="r")
    out = []
    for k in order:
        e = header[k]
        if e["dtype"] != "F32":
            sys.exit(f"{path}: tensor {k} is {e['dtype']}, expected F32")
        b, end = e["data_offsets"]
        out.append((k, np.frombuffer(mm[base + b:base + end], dtype=np.float32).reshape(e["shape"])))
    return out


def bf16_bits(x):
    u = x.astype(np.float32).view(np.uint32)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(x)] = 0x7FC0
    return r


def cast_float(x, wtype, align):
    if wtype == "fp32":
        y = x.astype(np.float32, copy=False)
    elif wtype == "fp16":
        y = x.astype(np.float16)
    else:
        y = bf16_bits(x)
    if align > 1 and (y.shape[1] * y.itemsize) % align:
        raw = y.view(np.uint8).reshape(y.shape[0], -1)
        pad = row_bytes(wtype, x.shape[1], align) - raw.shape[1]
        return np.pad(raw, ((0, 0), (0, pad))), "U8"
    return y, ("BF16" if wtype == "bf16" else ST_DTYPES[str(y.dtype)])


def quantize_loom(x, wtype, args, tmp):
    cli = args.loom or os.environ.get("LOOM_CLI") or shutil.which("loom")
    if cli is None:
        sys.exit("no loom CLI: pass --loom PATH, set LOOM_CLI, or use --quantizer fbgemm")
    src, dst = os.path.join(tmp, "in.npy"), os.path.join(tmp, "out.npy")
    np.save(src, np.ascontiguousarray(x, dtype=np.float32))
    cmd = [cli, "run", "fbgemm.quantize_rows", "--in", f"input={src}", "--out", f"output={dst}",
           "--attr", f"weight_type={wtype}", "--attr", f"row_alignment={args.row_alignment}",
           "--attr", f"fp8_exponent_bits={args.fp8_exponent_bits}",
           "--attr", f"fp8_exponent_bias={args.fp8_exponent_bias}"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return np.load(dst)


def quantize_fbgemm(x, wtype, args):
    import torch
    from fbgemm_gpu.split_embedding_configs import FP8QuantizationConfig, SparseType
    from fbgemm_gpu.tbe.utils.quantize import quantize_embs

    st = {"fp8": SparseType.FP8, "int8": SparseType.INT8, "int4": SparseType.INT4, "int2": SparseType.INT2}[wtype]
    cfg = FP8QuantizationConfig(args.fp8_exponent_bits, args.fp8_exponent_bias) if wtype == "fp8" else None
    w, sb = quantize_embs(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)), st, cfg)
    rows = w.numpy() if sb is None else np.concatenate([sb.numpy(), w.numpy()], axis=1)
    pad = row_bytes(wtype, x.shape[1], args.row_alignment) - rows.shape[1]
    return np.pad(rows, ((0, 0), (0, pad))) if pad > 0 else rows


def write_safetensors(path, tensors, metadata=None):
    """tensors: list of (name, st_dtype, np.ndarray); data streamed in order.
    metadata: the header's __metadata__ dict, or None for no such entry.
    Also what tools/gen_fbgemm_tbe_goldens.py writes its tables with."""
    header, off = ({} if metadata is None else {"__metadata__": metadata}), 0
    for name, dt, arr in tensors:
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + arr.nbytes]}
        off += arr.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for _, _, arr in tensors:
            np.ascontiguousarray(arr).tofile(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help=".npy tables (one per file) or one .safetensors file")
    ap.add_argument("--out", required=True, help="output .safetensors")
    ap.add_argument("--weight-type", required=True,
                    help="one type for all tables or a comma-separated list: " + ", ".join(WTYPES))
    ap.add_argument("--row-alignment", type=int, default=1, help="row padding in bytes (fbgemm CPU: 1)")
    ap.add_argument("--fp8-exponent-bits", type=int, default=4)
    ap.add_argument("--fp8-exponent-bias", type=int, default=7)
    ap.add_argument("--quantizer", choices=("loom", "fbgemm"), default="loom")
    ap.add_argument("--loom", help="path of the loom CLI (quantizer loom)")
    args = ap.parse_args()

    if len(args.inputs) == 1 and args.inputs[0].endswith(".safetensors"):
        tables = [x for _, x in read_safetensors(args.inputs[0])]
    else:
        tables = [np.load(p, mmap_mode="r") for p in args.inputs]
    wtypes = args.weight_type.split(",")
    if len(wtypes) == 1:
        wtypes = wtypes * len(tables)
    if len(wtypes) != len(tables) or any(w not in WTYPES for w in wtypes):
        sys.exit(f"--weight-type: need {len(tables)} types from {', '.join(WTYPES)}")

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for t, (x, w) in enumerate(zip(tables, wtypes)):
            if x.ndim != 2 or x.dtype != np.float32:
                sys.exit(f"table {t}: expected f32 [rows, D], got {x.dtype} {list(x.shape)}")
            if w in ("fp32", "fp16", "bf16"):
                arr, dt = cast_float(np.asarray(x), w, args.row_alignment)
            elif args.quantizer == "loom":
                arr, dt = quantize_loom(x, w, args, tmp), "U8"
            else:
                arr, dt = quantize_fbgemm(x, w, args), "U8"
            out.append((f"table.{t}", dt, arr))
        meta = {"weights_tys": ",".join(wtypes), "embedding_dims": ",".join(str(x.shape[1]) for x in tables),
                "row_alignment": str(args.row_alignment)}
        write_safetensors(args.out, out, meta)
    print(f"{args.out}: {len(out)} tables ({','.join(wtypes)})")


if __name__ == "__main__":
    main()
