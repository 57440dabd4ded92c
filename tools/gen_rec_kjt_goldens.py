#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the rec pack's KeyedJaggedTensor ops to tests/data/rec/kjt/.

Expected outputs come from torchrec.sparse.jagged_tensor.KeyedJaggedTensor
(torchrec 1.9 on fbgemm-gpu-cpu 1.9): from_lengths_sync, from_offsets_sync,
permute, split, concat and to_dict, on plain and VBE KJTs (stride_per_key_per_rank,
inverse_indices), weighted and not, i32 and i64. rec.kjt_dedup has no torchrec
method of its own: its expected VBE KJT comes from the small reference below
(distinct samples per key in first-seen order), and the script checks with
torchrec's EmbeddingBagCollection that the deduplicated KJT, expanded through
its inverse_indices, pools to exactly what the original KJT pools to.

A KJT result is stored as loom returns it (docs/rec-kjt.md): the keys as
jagged strings, the fields, and the caches of sync. Lists of KJTs (split) and
dicts of JaggedTensors (to_dict) are stored as jagged rows. Files are
<case>.<input>.npy and <case>.out<i>.npy; cases.inc is the table the C test
includes:

    CASE(name, op, "input,input,...", "attr=value;...", n_outputs)

where an empty input name is an absent optional input. Every output is
compared bit for bit: these ops move integers and copy weights.

    .venv-rec/bin/python tools/gen_rec_kjt_goldens.py [OUTDIR]
"""
import os
import sys

import numpy as np
import torch
from torchrec.modules.embedding_configs import EmbeddingBagConfig
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "kjt")
RNG = np.random.default_rng(20261201)
CASES = []

KJT_OPS_INPUTS = ["values", "lengths", "offsets", "weights", "stride_per_key_per_rank", "inverse_indices"]


def npy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def save(case, name, arr):
    np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.ascontiguousarray(arr))


def keys_jagged(keys):
    data = b"".join(k.encode() for k in keys)
    offs = np.cumsum([0] + [len(k.encode()) for k in keys]).astype(np.int64)
    return np.frombuffer(data, dtype=np.uint8).copy(), offs


def kjt_outputs(kjt):
    """The 12 outputs of a KJT result, in loom's order."""
    keys, keys_offsets = keys_jagged(kjt.keys())
    w = kjt.weights_or_none()
    vbe = kjt.variable_stride_per_key()
    spkpr = (np.asarray(kjt.stride_per_key_per_rank(), dtype=np.int32).reshape(len(kjt.keys()), -1)
             if vbe else np.zeros(0, np.int32))
    inv = kjt.inverse_indices_or_none()
    return [keys, keys_offsets, npy(kjt.values()), npy(kjt.lengths()), npy(kjt.offsets()),
            npy(w) if w is not None else np.zeros(0, np.float32), spkpr,
            npy(inv[1]) if inv is not None else np.zeros(0, np.int64),
            np.array([kjt.stride()], dtype=np.int64), np.array(kjt.stride_per_key(), dtype=np.int64),
            np.array(kjt.length_per_key(), dtype=np.int64), np.array(kjt.offset_per_key(), dtype=np.int64)]


def add_case(case, op, inputs, attrs, outputs):
    names = []
    for name, arr in inputs:
        if arr is None:
            names.append("")
            continue
        save(case, name, npy(arr))
        names.append(name)
    while names and names[-1] == "":
        names.pop()
    for i, arr in enumerate(outputs):
        save(case, f"out{i}", arr)
    CASES.append((case, op, ",".join(names), attrs, len(outputs)))


def kjt_inputs(kjt, offsets=False, with_lengths=True):
    w = kjt.weights_or_none()
    vbe = kjt.variable_stride_per_key()
    inv = kjt.inverse_indices_or_none()
    return [("values", kjt.values()), ("lengths", kjt.lengths() if with_lengths else None),
            ("offsets", kjt.offsets() if offsets else None), ("weights", w),
            ("stride_per_key_per_rank",
             torch.tensor(kjt.stride_per_key_per_rank(), dtype=torch.int32) if vbe else None),
            ("inverse_indices", inv[1] if inv is not None else None)]


def random_kjt(keys, stride, dtype=torch.int64, weighted=False, spkpr=None, inverse_b=None, max_len=3):
    if spkpr is not None:
        n = int(sum(sum(r) for r in spkpr))
    else:
        n = len(keys) * stride
    lengths = torch.tensor(RNG.integers(0, max_len + 1, n), dtype=dtype)
    total = int(lengths.sum())
    values = torch.tensor(RNG.integers(0, 1000, total), dtype=dtype)
    weights = torch.tensor(RNG.standard_normal(total), dtype=torch.float32) if weighted else None
    inverse = None
    if inverse_b is not None:
        spk = [sum(r) for r in spkpr]
        inv = torch.stack([torch.tensor(RNG.integers(0, s, inverse_b), dtype=torch.int64) for s in spk])
        inverse = (list(keys), inv)
    return KeyedJaggedTensor.from_lengths_sync(
        keys=list(keys), values=values, lengths=lengths, weights=weights,
        stride=None if spkpr is not None else stride, stride_per_key_per_rank=spkpr, inverse_indices=inverse)


def attr_keys(keys):
    return "keys=" + ",".join(keys)


def split_outputs(kjt, parts):
    keys = [k for p in parts for k in p.keys()]
    kb, ko = keys_jagged(keys)
    key_splits = np.cumsum([0] + [len(p.keys()) for p in parts]).astype(np.int64)
    vals = [npy(p.values()) for p in parts]
    lens = [npy(p.lengths()) for p in parts]
    # torchrec: a split of 0 keys has empty offsets; offsets() of the others from 0
    offs = [npy(p.offsets()) if len(p.keys()) else np.zeros(0, npy(kjt.lengths()).dtype) for p in parts]
    weighted = kjt.weights_or_none() is not None
    ws = [npy(p.weights()) for p in parts] if weighted else []
    vbe = kjt.variable_stride_per_key()
    spkpr = (np.concatenate([np.asarray(p.stride_per_key_per_rank(), np.int32).reshape(len(p.keys()), -1)
                             for p in parts if len(p.keys())] or [np.zeros((0, 1), np.int32)])
             if vbe else np.zeros(0, np.int32))
    whole = [p for p in parts if p.inverse_indices_or_none() is not None]
    inv = npy(whole[0].inverse_indices()[1]) if whole else np.zeros(0, np.int64)

    def rows(arrs, dtype):
        return (np.concatenate(arrs).astype(dtype) if arrs else np.zeros(0, dtype),
                np.cumsum([0] + [len(a) for a in arrs]).astype(np.int64))
    vdt, ldt = npy(kjt.values()).dtype, npy(kjt.lengths()).dtype
    v, vo = rows(vals, vdt)
    l, lo = rows(lens, ldt)
    o, oo = rows(offs, ldt)
    w = np.concatenate(ws).astype(np.float32) if weighted else np.zeros(0, np.float32)
    return [kb, ko, key_splits, v, vo, w, l, lo, o, oo, spkpr, inv]


def dict_outputs(kjt):
    d = kjt.to_dict()
    keys = list(d.keys())
    assert keys == kjt.keys()
    kb, ko = keys_jagged(keys)
    vdt, ldt = npy(kjt.values()).dtype, npy(kjt.lengths()).dtype
    vals = [npy(d[k].values()) for k in keys]
    lens = [npy(d[k].lengths()) for k in keys]
    offs = [npy(d[k].offsets()) for k in keys]
    weighted = kjt.weights_or_none() is not None

    def rows(arrs, dtype):
        return (np.concatenate(arrs).astype(dtype) if arrs else np.zeros(0, dtype),
                np.cumsum([0] + [len(a) for a in arrs]).astype(np.int64))
    v, vo = rows(vals, vdt)
    l, lo = rows(lens, ldt)
    o, oo = rows(offs, ldt)
    w = (np.concatenate([npy(d[k].weights()) for k in keys]).astype(np.float32) if weighted
         else np.zeros(0, np.float32))
    return [kb, ko, v, vo, w, l, lo, o, oo]


def dedup_reference(kjt):
    """Per key, the distinct samples (ids and weights) in first-seen order."""
    K, B = len(kjt.keys()), kjt.stride()
    lengths = npy(kjt.lengths()).reshape(K, B)
    offs = npy(kjt.offsets())
    v = npy(kjt.values())
    w = kjt.weights_or_none()
    w = npy(w) if w is not None else None
    new_v, new_w, new_l, spk, inv = [], [], [], [], np.zeros((K, B), np.int64)
    for k in range(K):
        seen = {}
        for b in range(B):
            i = k * B + b
            ids = v[offs[i]:offs[i + 1]]
            ws = w[offs[i]:offs[i + 1]] if w is not None else np.zeros(0, np.float32)
            key = (ids.tobytes(), ws.tobytes())
            if key not in seen:
                seen[key] = len(seen)
                new_v.append(ids)
                new_w.append(ws)
                new_l.append(lengths[k, b])
            inv[k, b] = seen[key]
        spk.append([len(seen)])
    return KeyedJaggedTensor(
        keys=kjt.keys(), values=torch.tensor(np.concatenate(new_v).astype(v.dtype)),
        weights=torch.tensor(np.concatenate(new_w)) if w is not None else None,
        lengths=torch.tensor(np.array(new_l, dtype=lengths.dtype)),
        stride_per_key_per_rank=spk, inverse_indices=(kjt.keys(), torch.tensor(inv)))


def check_dedup_with_ebc(kjt, dedup):
    torch.manual_seed(0)
    weighted = kjt.weights_or_none() is not None
    tables = [EmbeddingBagConfig(name=f"t_{k}", embedding_dim=4, num_embeddings=1000, feature_names=[k])
              for k in kjt.keys()]
    ebc = EmbeddingBagCollection(tables=tables, is_weighted=weighted)
    a = ebc(kjt).values()
    b = ebc(dedup).values()
    assert torch.equal(a, b), "dedup through inverse_indices changes the pooled embeddings"


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy") or f == "cases.inc":
            os.remove(os.path.join(OUT, f))

    keys3 = ["f0", "user_id", "item"]
    base = random_kjt(keys3, 4, weighted=True)
    add_case("lengths_sync", "rec.kjt_from_lengths_sync",
             [("values", base.values()), ("lengths", base.lengths()), ("weights", base.weights())],
             attr_keys(keys3), kjt_outputs(base))
    b32 = random_kjt(keys3, 5, dtype=torch.int32)
    o32 = KeyedJaggedTensor.from_offsets_sync(keys=keys3, values=b32.values(), offsets=b32.offsets())
    add_case("offsets_sync_i32", "rec.kjt_from_offsets_sync",
             [("values", o32.values()), ("offsets", b32.offsets())], attr_keys(keys3), kjt_outputs(o32))
    # an explicit stride, a key with empty samples only
    zero = random_kjt(["a", "b"], 3, max_len=0)
    add_case("lengths_sync_empty", "rec.kjt_from_lengths_sync",
             [("values", zero.values()), ("lengths", zero.lengths())], "keys=a,b;stride=3", kjt_outputs(zero))

    for idx, name in (([2, 0, 2], "permute_repeat"), ([1, 2, 0], "permute"), ([1], "permute_subset")):
        add_case(name, "rec.kjt_permute", kjt_inputs(base), attr_keys(keys3) + ";indices=" +
                 ",".join(map(str, idx)), kjt_outputs(base.permute(idx)))
    add_case("permute_offsets_i32", "rec.kjt_permute", kjt_inputs(b32, offsets=True, with_lengths=False),
             attr_keys(keys3) + ";indices=2,1,0", kjt_outputs(b32.permute([2, 1, 0])))

    for seg, name in (([1, 0, 2], "split"), ([3], "split_whole"), ([2], "split_prefix")):
        add_case(name, "rec.kjt_split", kjt_inputs(base), attr_keys(keys3) + ";segments=" +
                 ",".join(map(str, seg)), split_outputs(base, base.split(seg)))

    def concat_inputs(parts):
        cat = KeyedJaggedTensor.concat(parts)
        vbe = cat.variable_stride_per_key()
        inv = cat.inverse_indices_or_none()
        w = cat.weights_or_none()
        lo = np.cumsum([0] + [p.lengths().numel() for p in parts]).astype(np.int64)
        return cat, [("values", cat.values()), ("lengths", cat.lengths()), ("lengths_offsets", lo),
                     ("weights", w),
                     ("stride_per_key_per_rank",
                      torch.tensor(cat.stride_per_key_per_rank(), dtype=torch.int32) if vbe else None),
                     ("inverse_indices", inv[1] if inv is not None else None)]

    other = random_kjt(["g0", "g1"], 4, weighted=True)
    cat, ins = concat_inputs([base, other])
    add_case("concat", "rec.kjt_concat", ins, attr_keys(cat.keys()) + ";key_segments=3,2", kjt_outputs(cat))

    add_case("to_dict", "rec.kjt_to_dict", kjt_inputs(base), attr_keys(keys3), dict_outputs(base))
    add_case("to_dict_i32", "rec.kjt_to_dict", kjt_inputs(b32), attr_keys(keys3), dict_outputs(b32))

    # VBE: two ranks, a stride per key, inverse indices into the full batch of 5
    vkeys = ["u", "v", "w"]
    spkpr = [[2, 1], [1, 3], [0, 2]]
    vbe = random_kjt(vkeys, None, weighted=True, spkpr=spkpr, inverse_b=5)
    add_case("vbe_lengths_sync", "rec.kjt_from_lengths_sync",
             [("values", vbe.values()), ("lengths", vbe.lengths()), ("weights", vbe.weights()),
              ("stride_per_key_per_rank", torch.tensor(spkpr, dtype=torch.int32)),
              ("inverse_indices", vbe.inverse_indices()[1])], attr_keys(vkeys), kjt_outputs(vbe))
    vbe_noinv = random_kjt(vkeys, None, spkpr=spkpr)
    add_case("vbe_offsets_sync", "rec.kjt_from_offsets_sync",
             [("values", vbe_noinv.values()), ("offsets", vbe_noinv.offsets()), ("weights", None),
              ("stride_per_key_per_rank", torch.tensor(spkpr, dtype=torch.int64))],
             attr_keys(vkeys), kjt_outputs(KeyedJaggedTensor.from_offsets_sync(
                 keys=vkeys, values=vbe_noinv.values(), offsets=vbe_noinv.offsets(), stride_per_key_per_rank=spkpr)))
    add_case("vbe_permute", "rec.kjt_permute", kjt_inputs(vbe), attr_keys(vkeys) + ";indices=2,0",
             kjt_outputs(vbe.permute([2, 0])))
    add_case("vbe_split", "rec.kjt_split", kjt_inputs(vbe), attr_keys(vkeys) + ";segments=1,2",
             split_outputs(vbe, vbe.split([1, 2])))
    add_case("vbe_split_whole", "rec.kjt_split", kjt_inputs(vbe), attr_keys(vkeys) + ";segments=0,3",
             split_outputs(vbe, vbe.split([0, 3])))
    add_case("vbe_to_dict", "rec.kjt_to_dict", kjt_inputs(vbe), attr_keys(vkeys), dict_outputs(vbe))
    vbe2 = random_kjt(["x"], None, weighted=True, spkpr=[[3, 1]], inverse_b=5)
    cat, ins = concat_inputs([vbe, vbe2])
    add_case("vbe_concat", "rec.kjt_concat", ins, attr_keys(cat.keys()) + ";key_segments=3,1", kjt_outputs(cat))

    # dedup: batches with repeated samples (ids drawn from a few, lengths 0..2)
    for name, weighted, dtype in (("dedup", False, torch.int64), ("dedup_weighted_i32", True, torch.int32)):
        K, B = 3, 8
        pool = [np.array(p, dtype=np.int64) for p in ([], [7], [7, 9], [3], [9, 7])]
        picks = RNG.integers(0, len(pool), K * B)
        ids = [pool[p] for p in picks]
        lengths = torch.tensor([len(x) for x in ids], dtype=dtype)
        values = torch.tensor(np.concatenate(ids).astype(np.int64), dtype=dtype)
        # weights repeat with the ids (a sample's weights are a function of its ids) except one row
        weights = None
        if weighted:
            weights = torch.tensor(np.concatenate([x.astype(np.float32) * 0.5 for x in ids]))
            if weights.numel():
                weights[0] += 1.0
        kjt = KeyedJaggedTensor.from_lengths_sync(keys=["a", "b", "c"], values=values, lengths=lengths,
                                                  weights=weights)
        dd = dedup_reference(kjt)
        check_dedup_with_ebc(kjt, dd)
        add_case(name, "rec.kjt_dedup", kjt_inputs(kjt), "keys=a,b,c", kjt_outputs(dd))

    with open(os.path.join(OUT, "cases.inc"), "w") as f:
        f.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        f.write("/* Written by tools/gen_rec_kjt_goldens.py: CASE(name, op, inputs, attrs, n_outputs) */\n")
        for case, op, ins, attrs, n in CASES:
            f.write(f'CASE("{case}", "{op}", "{ins}", "{attrs}", {n})\n')
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
