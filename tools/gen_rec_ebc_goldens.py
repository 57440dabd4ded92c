#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of rec.embedding_bag_collection and rec.embedding_collection to tests/data/rec/collections/.

Expected outputs come from torchrec.modules.embedding_modules.EmbeddingBagCollection
(torchrec 1.9, torch 2.14 CPU): its forward on KJTs whose keys come in another order
than the tables' features, with empty bags, sum and mean pooling, FP32 and FP16 tables,
per-sample weights, a feature shared by two tables, VBE KJTs expanded through
inverse_indices, INT8 and INT4 tables of torchrec.quant's EmbeddingBagCollection; and EmbeddingCollection's forward (ec_cases.inc, compared
exactly: its rows are copies). The tables are the module's own state_dict (torchrec's keys,
embedding_bags.<table>.weight), saved as <case>.safetensors. Files: <case>.<input>.npy,
<case>.out<i>.npy (values, keys, keys_offsets, length_per_key, offset_per_key) and
cases.inc, the table the C test includes:

    CASE(name, "class attrs", "inputs", "op attrs", rtol, atol)

    .venv-rec/bin/python tools/gen_rec_ebc_goldens.py [OUTDIR]
"""
import os
import sys

import numpy as np
import torch
from safetensors.torch import save_file
from torchrec.modules.embedding_configs import DataType, EmbeddingBagConfig, EmbeddingConfig, PoolingType
from torchrec.modules.embedding_modules import EmbeddingBagCollection, EmbeddingCollection
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "collections")
RNG = np.random.default_rng(20261202)
CASES = []
EC_CASES = []

# Tolerances. FP32 tables: torch's embedding_bag and fbgemm's TBE both add the
# rows of a bag in index order in f32; they may differ by the contraction of a
# weighted sum into FMAs and, for mean, by dividing by the length or multiplying
# by its reciprocal: a few ulp of the result (|x| < 10 here), within 1e-6.
# FP16 tables: both return f16 bags (torchrec then .float()), rounded once from
# f32 sums that may differ as above, so one f16 ulp at most: rtol 2^-10.
TOL_FP32 = (1e-6, 1e-6)
TOL_FP16 = (2.0 ** -10, 1e-3)


def npy(t):
    return t.detach().cpu().numpy()


def keys_jagged(keys):
    data = b"".join(k.encode() for k in keys)
    offs = np.cumsum([0] + [len(k.encode()) for k in keys]).astype(np.int64)
    return np.frombuffer(data, dtype=np.uint8).copy(), offs


def class_attrs(tables, weighted):
    feats = ",".join("|".join(t.feature_names) for t in tables)
    pooling = ",".join("mean" if t.pooling == PoolingType.MEAN else "sum" for t in tables)
    dtype = ",".join("fp16" if t.data_type == DataType.FP16 else "fp32" for t in tables)
    return (f"tables={','.join(t.name for t in tables)};num_embeddings={','.join(str(t.num_embeddings) for t in tables)};"
            f"embedding_dim={','.join(str(t.embedding_dim) for t in tables)};feature_names={feats};"
            f"pooling={pooling};data_type={dtype};is_weighted={'true' if weighted else 'false'}")


def add_case(name, tables, kjt, weighted=False, tol=TOL_FP32):
    torch.manual_seed(len(CASES) + 1)
    ebc = EmbeddingBagCollection(tables=tables, is_weighted=weighted)
    with torch.no_grad():
        for p in ebc.parameters():   # values of a few units, not torchrec's tiny init, so sums are tested
            p.copy_(torch.randn(p.shape) .to(p.dtype))
    kt = ebc(kjt)
    save_file({k: v.contiguous() for k, v in ebc.state_dict().items()}, os.path.join(OUT, f"{name}.safetensors"))
    inputs = []
    fields = [("values", kjt.values()), ("lengths", kjt.lengths()), ("offsets", None),
              ("weights", kjt.weights_or_none()),
              ("stride_per_key_per_rank", torch.tensor(kjt.stride_per_key_per_rank(), dtype=torch.int32)
               if kjt.variable_stride_per_key() else None),
              ("inverse_indices", kjt.inverse_indices_or_none()[1] if kjt.inverse_indices_or_none() else None)]
    for field, t in fields:
        if t is None:
            inputs.append("")
            continue
        np.save(os.path.join(OUT, f"{name}.{field}.npy"), npy(t))
        inputs.append(field)
    while inputs and inputs[-1] == "":
        inputs.pop()
    kb, ko = keys_jagged(kt.keys())
    outs = [npy(kt.values()).astype(np.float32), kb, ko, np.array(kt.length_per_key(), np.int64),
            np.array(kt.offset_per_key(), np.int64)]
    for i, o in enumerate(outs):
        np.save(os.path.join(OUT, f"{name}.out{i}.npy"), o)
    CASES.append((name, class_attrs(tables, weighted), ",".join(inputs), "keys=" + ",".join(kjt.keys()), tol))


def add_quant_case(name, tables, kjt, weight_dtype):
    """torchrec.quant's EmbeddingBagCollection (IntNBit TBE rows, fp16 scale and bias first), made by
    from_float from an EBC of these tables, on fbgemm's CPU kernel: the same row format and dequantisation
    as fbgemm.tbe's; f32 sums of the dequantised rows, in order: within 1e-5."""
    import torch.quantization as tq
    from torchrec.quant.embedding_modules import EmbeddingBagCollection as QuantEmbeddingBagCollection
    torch.manual_seed(200 + len(CASES))
    ebc = EmbeddingBagCollection(tables=tables)
    with torch.no_grad():
        for p in ebc.parameters():
            p.copy_(torch.randn(p.shape).to(p.dtype))
    ebc.qconfig = tq.QConfig(activation=tq.PlaceholderObserver.with_args(dtype=torch.float),
                             weight=tq.PlaceholderObserver.with_args(dtype=weight_dtype))
    qebc = QuantEmbeddingBagCollection.from_float(ebc)
    kt = qebc(kjt)
    # the quantised weights are a tensor subclass over the TBE's buffer: copied out as plain tensors
    # (INT4: torchrec's UInt4Tensor, whose elem holds the u8 rows)
    save_file({k: (v.elem if hasattr(v, "elem") else v.as_subclass(torch.Tensor)).clone().contiguous()
               for k, v in qebc.state_dict().items()},
              os.path.join(OUT, f"{name}.safetensors"))
    for field, t in (("values", kjt.values()), ("lengths", kjt.lengths())):
        np.save(os.path.join(OUT, f"{name}.{field}.npy"), npy(t))
    kb, ko = keys_jagged(kt.keys())
    outs = [npy(kt.values()).astype(np.float32), kb, ko, np.array(kt.length_per_key(), np.int64),
            np.array(kt.offset_per_key(), np.int64)]
    for i, o in enumerate(outs):
        np.save(os.path.join(OUT, f"{name}.out{i}.npy"), o)
    qname = "int8" if weight_dtype == torch.quint8 else "int4"
    cattrs = class_attrs(tables, False).replace(
        "data_type=" + ",".join("fp32" for _ in tables), "data_type=" + ",".join(qname for _ in tables))
    CASES.append((name, cattrs, "values,lengths", "keys=" + ",".join(kjt.keys()), (1e-5, 1e-5)))


def add_ec_case(name, tables, kjt):
    """EmbeddingCollection: one JaggedTensor per feature; f32 and f16 rows are copied, so exact."""
    torch.manual_seed(100 + len(EC_CASES))
    ec = EmbeddingCollection(tables=tables)
    with torch.no_grad():
        for p in ec.parameters():
            p.copy_(torch.randn(p.shape).to(p.dtype))
    d = ec(kjt)
    save_file({k: v.contiguous() for k, v in ec.state_dict().items()}, os.path.join(OUT, f"{name}.safetensors"))
    inputs = []
    for field, t in (("values", kjt.values()), ("lengths", kjt.lengths()), ("offsets", None), ("weights", None),
                     ("stride_per_key_per_rank", torch.tensor(kjt.stride_per_key_per_rank(), dtype=torch.int32)
                      if kjt.variable_stride_per_key() else None)):
        if t is None:
            inputs.append("")
            continue
        np.save(os.path.join(OUT, f"{name}.{field}.npy"), npy(t))
        inputs.append(field)
    while inputs and inputs[-1] == "":
        inputs.pop()
    keys = list(d.keys())
    kb, ko = keys_jagged(keys)
    vals = [npy(d[k].values()).astype(np.float32) for k in keys]
    lens = [npy(d[k].lengths()) for k in keys]
    outs = [np.concatenate(vals) if vals else np.zeros((0, tables[0].embedding_dim), np.float32),
            np.cumsum([0] + [len(v) for v in vals]).astype(np.int64),
            np.concatenate(lens), np.cumsum([0] + [len(x) for x in lens]).astype(np.int64), kb, ko]
    for i, o in enumerate(outs):
        np.save(os.path.join(OUT, f"{name}.out{i}.npy"), o)
    feats = ",".join("|".join(t.feature_names) for t in tables)
    dtype = ",".join("fp16" if t.data_type == DataType.FP16 else "fp32" for t in tables)
    cattrs = (f"tables={','.join(t.name for t in tables)};"
              f"num_embeddings={','.join(str(t.num_embeddings) for t in tables)};"
              f"embedding_dim={','.join(str(t.embedding_dim) for t in tables)};feature_names={feats};data_type={dtype}")
    EC_CASES.append((name, cattrs, ",".join(inputs), "keys=" + ",".join(kjt.keys())))


def random_kjt(keys, B, tables_rows, weighted=False, max_len=4, spkpr=None, inverse_b=None):
    counts = [sum(r) for r in spkpr] if spkpr else [B] * len(keys)
    lengths = np.concatenate([RNG.integers(0, max_len + 1, c) for c in counts]).astype(np.int64)
    lengths[1] = 0                                          # an empty bag
    vals = []
    pos = 0
    for k, c in zip(keys, counts):
        n = int(lengths[pos:pos + c].sum())
        vals.append(RNG.integers(0, tables_rows[k], n))
        pos += c
    values = torch.tensor(np.concatenate(vals).astype(np.int64))
    weights = torch.tensor(RNG.uniform(0.5, 1.5, values.numel()), dtype=torch.float32) if weighted else None
    inverse = None
    if inverse_b:
        inverse = (list(keys), torch.stack([torch.tensor(RNG.integers(0, c, inverse_b)) for c in counts]))
    return KeyedJaggedTensor.from_lengths_sync(keys=list(keys), values=values, lengths=torch.tensor(lengths),
                                               weights=weights, stride=None if spkpr else B,
                                               stride_per_key_per_rank=spkpr, inverse_indices=inverse)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith((".npy", ".safetensors")) or f in ("cases.inc", "ec_cases.inc"):
            os.remove(os.path.join(OUT, f))

    mixed = [
        EmbeddingBagConfig(name="t0", num_embeddings=20, embedding_dim=4, feature_names=["f0", "f1"]),
        EmbeddingBagConfig(name="t1", num_embeddings=15, embedding_dim=8, feature_names=["f2"],
                           pooling=PoolingType.MEAN),
        EmbeddingBagConfig(name="t2", num_embeddings=10, embedding_dim=4, feature_names=["f3"],
                           data_type=DataType.FP16),
        EmbeddingBagConfig(name="t3", num_embeddings=12, embedding_dim=16, feature_names=["f4"]),
    ]
    rows = {"f0": 20, "f1": 20, "f2": 15, "f3": 10, "f4": 12}
    # the KJT's keys in another order than the tables' features
    add_case("mixed", mixed, random_kjt(["f2", "f4", "f0", "f3", "f1"], 6, rows), tol=TOL_FP16)
    fp32 = [EmbeddingBagConfig(name="user", num_embeddings=50, embedding_dim=8, feature_names=["user_id"]),
            EmbeddingBagConfig(name="item", num_embeddings=40, embedding_dim=4, feature_names=["item_id", "item_cat"],
                               pooling=PoolingType.MEAN)]
    rows2 = {"user_id": 50, "item_id": 40, "item_cat": 40}
    add_case("fp32", fp32, random_kjt(["user_id", "item_id", "item_cat"], 9, rows2))
    weighted = [EmbeddingBagConfig(name="a", num_embeddings=30, embedding_dim=8, feature_names=["fa"]),
                EmbeddingBagConfig(name="b", num_embeddings=30, embedding_dim=4, feature_names=["fb"])]
    add_case("weighted", weighted, random_kjt(["fb", "fa"], 5, {"fa": 30, "fb": 30}, weighted=True), weighted=True)
    # a feature shared by two tables: embedding names feature@table
    shared = [EmbeddingBagConfig(name="s0", num_embeddings=10, embedding_dim=4, feature_names=["q"]),
              EmbeddingBagConfig(name="s1", num_embeddings=10, embedding_dim=8, feature_names=["q", "r"])]
    add_case("shared", shared, random_kjt(["q", "r"], 4, {"q": 10, "r": 10}))
    # VBE: per-key strides from two ranks, expanded to the batch of 7 through inverse_indices
    vbe_tables = [EmbeddingBagConfig(name="v0", num_embeddings=25, embedding_dim=8, feature_names=["x"]),
                  EmbeddingBagConfig(name="v1", num_embeddings=25, embedding_dim=4, feature_names=["y"],
                                     pooling=PoolingType.MEAN)]
    add_case("vbe", vbe_tables, random_kjt(["y", "x"], None, {"x": 25, "y": 25}, spkpr=[[2, 1], [3, 2]],
                                           inverse_b=7))
    add_case("vbe_weighted", weighted,
             random_kjt(["fa", "fb"], None, {"fa": 30, "fb": 30}, weighted=True, spkpr=[[1, 2], [2, 2]],
                        inverse_b=6), weighted=True)

    # torchrec.quant: INT8 and INT4 tables (sum and mean)
    qtables = [EmbeddingBagConfig(name="q0", num_embeddings=40, embedding_dim=16, feature_names=["a0"]),
               EmbeddingBagConfig(name="q1", num_embeddings=30, embedding_dim=8, feature_names=["a1"],
                                  pooling=PoolingType.MEAN)]
    qrows = {"a0": 40, "a1": 30}
    add_quant_case("int8", qtables, random_kjt(["a1", "a0"], 6, qrows), torch.quint8)
    add_quant_case("int4", qtables, random_kjt(["a0", "a1"], 5, qrows), torch.quint4x2)
    # EmbeddingCollection (sequence): tables of one D, FP32 and FP16, a shared feature, VBE lengths
    seq = [EmbeddingConfig(name="item_t", num_embeddings=30, embedding_dim=8, feature_names=["hist", "cand"]),
           EmbeddingConfig(name="cats", num_embeddings=12, embedding_dim=8, feature_names=["cat"],
                           data_type=DataType.FP16)]
    add_ec_case("ec", seq, random_kjt(["cat", "hist", "cand"], 5, {"hist": 30, "cand": 30, "cat": 12}))
    add_ec_case("ec_vbe", seq, random_kjt(["hist", "cand", "cat"], None, {"hist": 30, "cand": 30, "cat": 12},
                                          spkpr=[[2, 2], [1, 1], [3, 0]]))
    # one group of f32 bags whose features are the KJT's keys in order: loom's zero-copy path
    add_case("in_order_weighted", weighted,
             random_kjt(["fa", "fb"], 7, {"fa": 30, "fb": 30}, weighted=True), weighted=True)
    add_case("in_order", fp32[:1] + [EmbeddingBagConfig(name="item", num_embeddings=40, embedding_dim=4,
                                                        feature_names=["item_id", "item_cat"])],
             random_kjt(["user_id", "item_id", "item_cat"], 3, rows2))
    with open(os.path.join(OUT, "ec_cases.inc"), "w") as f:
        f.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        f.write("/* Written by tools/gen_rec_ebc_goldens.py: ECASE(name, class attrs, inputs, op attrs) */\n")
        for name, cattrs, ins, attrs in EC_CASES:
            f.write(f'ECASE("{name}", "{cattrs}", "{ins}", "{attrs}")\n')

    with open(os.path.join(OUT, "cases.inc"), "w") as f:
        f.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        f.write("/* Written by tools/gen_rec_ebc_goldens.py: CASE(name, class attrs, inputs, op attrs, rtol, atol) */\n")
        for name, cattrs, ins, attrs, (rtol, atol) in CASES:
            f.write(f'CASE("{name}", "{cattrs}", "{ins}", "{attrs}", {rtol!r}, {atol!r})\n')
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
