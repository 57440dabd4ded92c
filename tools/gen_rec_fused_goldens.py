#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of rec.fused_embedding_bag_collection to tests/data/rec/fused/.

    .venv-rec/bin/python tools/gen_rec_fused_goldens.py [OUTDIR]

Tables: t0 [120, 8] (features f0 and f1, sum), t1 [80, 12] (f2, sum), t2
[60, 4] (f3, mean), all fp32, B = 6, 20
steps, each with its own KJT (keys in the order f2, f0, f3, f1, bags of 0..4
ids, hot rows repeated) and a random gradient of the KeyedTensor [6, 32].

Reference:
  sgd, rowwise_adagrad  torchrec.modules.fused_embedding_modules.
                        FusedEmbeddingBagCollection (torch.optim.SGD,
                        torchrec.optim.RowWiseAdagrad) on CPU: forward, then
                        backward of the gradient (its fused fbgemm update)
  adam, partial_rowwise_adam
                        torchrec's FusedEmbeddingBagCollection refuses Adam on
                        CPU (fbgemm-gpu-cpu: "not supported in CPU mode"), so:
                        torchrec's EmbeddingBagCollection (fp32 tables) gives
                        the tables' gradients of the same forward, and fbgemm's
                        update (fbgemm_gpu/codegen/genscript/optimizers.py) is
                        applied in f32 to the rows the batch touched, iter =
                        step + 1.
Files:
  batches.safetensors   step.<s>.values (i64) / .lengths (i64) / .grad (f32)
  init.safetensors      the module's state_dict before training
  <case>.safetensors    after 20 steps: embedding_bags.<t>.weight, the fused
                        optimizer's <t>.weight.momentum_1 / _2, iter
  <case>.out0.npy       the forward's KeyedTensor values at step 0
Note: torchrec's FusedEmbeddingBagCollection concatenates its groups'
columns (one group per pooling and data type) in group order while its
KeyedTensor keys stay in table order; the mean table is last here, so the
two orders agree (loom keeps table order, as the EmbeddingBagCollection).
Note: torchrec's FusedEmbeddingBagCollection trains every table in fp32
whatever its data_type (_BatchedFusedEmbeddingLookups does not pass a
weights_precision to fbgemm, so an FP16 config's state_dict holds f32
weights); FP16 training is fbgemm's and is checked in tests/fbgemm/tbe_backward.
"""
import os
import sys

import numpy as np
import torch
from safetensors.numpy import save_file
from torchrec.modules.embedding_configs import DataType, EmbeddingBagConfig, PoolingType
from torchrec.modules.embedding_modules import EmbeddingBagCollection
from torchrec.modules.fused_embedding_modules import FusedEmbeddingBagCollection
from torchrec.optim import RowWiseAdagrad
from torchrec.sparse.jagged_tensor import KeyedJaggedTensor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fbgemm_adam_ref import adam_step  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "fused")
STEPS = 20
B = 6
KEYS = ["f2", "f0", "f3", "f1"]
ROWS = {"t0": 120, "t1": 80, "t2": 60}
DIMS = {"t0": 8, "t1": 12, "t2": 4}
TABLE_OF = {"f0": "t0", "f1": "t0", "f2": "t1", "f3": "t2"}
LR, EPS, BETA1, BETA2 = 0.05, 1e-3, 0.9, 0.99


def configs(t2_fp16):
    return [
        EmbeddingBagConfig(name="t0", embedding_dim=8, num_embeddings=120, feature_names=["f0", "f1"]),
        EmbeddingBagConfig(name="t1", embedding_dim=12, num_embeddings=80, feature_names=["f2"],
                           data_type=DataType.FP16 if t2_fp16 else DataType.FP32),
        EmbeddingBagConfig(name="t2", embedding_dim=4, num_embeddings=60, feature_names=["f3"],
                           pooling=PoolingType.MEAN),
    ]


def make_batches(rng):
    out = []
    for _ in range(STEPS):
        lengths, values = [], []
        for k in KEYS:
            rows = ROWS[TABLE_OF[k]]
            for _ in range(B):
                n = int(rng.integers(0, 5))
                lengths.append(n)
                hot, cold = rng.integers(0, 6, size=n), rng.integers(0, rows, size=n)
                values.extend(np.where(rng.random(n) < 0.4, hot, cold).tolist())
        grad = rng.standard_normal((B, 32)).astype(np.float32)
        out.append((np.array(values, np.int64), np.array(lengths, np.int64), grad))
    return out


def kjt(values, lengths):
    return KeyedJaggedTensor(keys=KEYS, values=torch.from_numpy(values), lengths=torch.from_numpy(lengths))


def init_state(rng, t2_fp16):
    st = {}
    for t in ["t0", "t1", "t2"]:
        w = rng.uniform(-0.5, 0.5, size=(ROWS[t], DIMS[t])).astype(np.float32)
        st[f"embedding_bags.{t}.weight"] = w.astype(np.float16) if (t == "t2" and t2_fp16) else w
    return st


def load(module, st):
    with torch.no_grad():
        for k, v in module.state_dict().items():
            v.copy_(torch.from_numpy(st[k]))


def run_torchrec(opt, kwargs, st, batches):
    m = FusedEmbeddingBagCollection(tables=configs(False), optimizer_type=opt, optimizer_kwargs=kwargs)
    load(m, st)
    out0 = None
    for s, (values, lengths, grad) in enumerate(batches):
        y = m(kjt(values, lengths))
        if s == 0:
            out0 = y.values().detach().numpy().copy()
        y.values().backward(torch.from_numpy(grad))
    res = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
    for _, states in m.fused_optimizer().state_dict()["state"].items():
        for k, v in states.items():
            res[k] = v.detach().float().numpy().copy()
    res["iter"] = np.array([STEPS], np.int64)
    return res, out0


def run_adam(partial, st, batches):
    ebc = EmbeddingBagCollection(tables=configs(False))
    load(ebc, st)
    w = {t: st[f"embedding_bags.{t}.weight"].astype(np.float32).copy() for t in ROWS}
    m1 = {t: np.zeros((ROWS[t], DIMS[t]), np.float32) for t in ROWS}
    m2 = {t: np.zeros((ROWS[t],) if partial else (ROWS[t], DIMS[t]), np.float32) for t in ROWS}
    out0 = None
    for s, (values, lengths, grad) in enumerate(batches):
        load(ebc, {f"embedding_bags.{t}.weight": w[t] for t in ROWS})
        ebc.zero_grad()
        y = ebc(kjt(values, lengths))
        if s == 0:
            out0 = y.values().detach().numpy().copy()
        y.values().backward(torch.from_numpy(grad))
        touched = {t: set() for t in ROWS}
        pos = 0
        for k in KEYS:
            for b in range(B):
                n = int(lengths[KEYS.index(k) * B + b])
                touched[TABLE_OF[k]].update(int(v) for v in values[pos:pos + n])
                pos += n
        names = list(ROWS)
        ws, m1s, m2s = [w[t] for t in names], [m1[t] for t in names], [m2[t] for t in names]
        grads = [ebc.embedding_bags[t].weight.grad.detach().numpy() for t in names]
        adam_step(ws, m1s, m2s, grads, [touched[t] for t in names], s + 1, LR, EPS, BETA1, BETA2, 0.01, partial)
    res = {f"embedding_bags.{t}.weight": w[t] for t in ROWS}
    for t in ROWS:
        res[f"{t}.weight.momentum_1"] = m1[t]
        res[f"{t}.weight.momentum_2"] = m2[t]
    res["iter"] = np.array([STEPS], np.int64)
    return res, out0


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(20261219)
    batches = make_batches(rng)
    bt = {}
    for s, (values, lengths, grad) in enumerate(batches):
        bt[f"step.{s}.values"], bt[f"step.{s}.lengths"], bt[f"step.{s}.grad"] = values, lengths, grad
    save_file(bt, os.path.join(OUT, "batches.safetensors"))
    fp32 = init_state(rng, False)
    save_file(fp32, os.path.join(OUT, "init.safetensors"))
    cases = {
        "sgd": run_torchrec(torch.optim.SGD, {"lr": LR}, fp32, batches),
        "rowwise_adagrad": run_torchrec(RowWiseAdagrad, {"lr": LR, "eps": EPS}, fp32, batches),
        "adam": run_adam(False, fp32, batches),
        "partial_rowwise_adam": run_adam(True, fp32, batches),
    }
    for name, (res, out0) in cases.items():
        save_file(res, os.path.join(OUT, f"{name}.safetensors"))
        np.save(os.path.join(OUT, f"{name}.out0.npy"), out0)


if __name__ == "__main__":
    main()
