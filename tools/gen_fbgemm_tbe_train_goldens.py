#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of fbgemm.tbe training (fbgemm.tbe_backward with
fused optimizers) to tests/data/fbgemm/tbe_train/.

    .venv-fbgemm/bin/python tools/gen_fbgemm_tbe_train_goldens.py [OUTDIR]

Needs torch + fbgemm-gpu-cpu (the .venv-fbgemm venv). Seeded and small.

Tables: 3 tables of [150, 8], [200, 12] and [100, 4] rows x dims (fbgemm trains dims that are multiples of 4; 12 and 4
exercise the vector tails), 4 features with
feature_table_map [0, 0, 1, 2] (table 0 shared by two adjacent features), B = 8, bags of 0..5
indices drawn from a skewed distribution (rows repeat within and across
bags, so updates deduplicate), 20 steps, each with its own batch and a
random grad_output [B, total_D = 32].

Files:
  batches_shared.safetensors feature_table_map (i64 [0, 0, 1, 2]) and
                             step.<s>.indices (i32) / .offsets (i32) / .psw
                             (f32) / .grad (f32 [8, 32]) for s in 0..19
  batches_3f.safetensors     the same for feature_table_map [0, 1, 2] (the
                             fp16 cases: fbgemm-gpu-cpu 1.9.0 fails FP16
                             training with a shared table)
  init_<wt>.safetensors      the initial tables table.<t> (f32 or f16)
  <case>.safetensors         after 20 steps: table.<t>, momentum1.<t>,
                             momentum2.<t> (as the optimizer has them), iter
Cases (<optimizer>_<wt>_<pooling>[_w][_<wd mode>]), reference:
  exact_sgd, exact_rowwise_adagrad (fp32 and fp16, sum and mean, weighted,
  weight_decay_mode l2 and decouple on fp16)
      fbgemm_gpu's SplitTableBatchedEmbeddingBagsCodegen on CPU itself
      (forward, then backward of grad_output: its fused CPU kernels).
  adam, partial_rowwise_adam
      fbgemm-gpu-cpu refuses these on CPU ("not supported in CPU mode"; its
      kernels are CUDA-only). The per-row gradients come from fbgemm's own
      CPU backward (DenseTableBatchedEmbeddingBagsCodegen: the dense
      gradient of the same forward), then the update of
      fbgemm_gpu/codegen/genscript/optimizers.py (adam / partial_rowwise_adam
      split_weight_update) is applied in f32, step by step, to the rows the
      batch touched, with iter = step + 1.
Note: for exact_rowwise_adagrad with weight decay only fp16 tables are
compared with fbgemm-gpu-cpu: its FP32 fast path (fbgemm's SparseAdaGrad,
unshared FP32 tables) is called with weight_decay 0 and drops the decay,
which loom (as fbgemm's generic CPU kernel and its GPU kernels) applies.
"""
import os
import sys

import numpy as np
import torch
from safetensors.numpy import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fbgemm_adam_ref import adam_step  # noqa: E402

from fbgemm_gpu.split_embedding_configs import EmbOptimType as OptimType
from fbgemm_gpu.split_embedding_configs import SparseType
from fbgemm_gpu.split_table_batched_embeddings_ops_common import PoolingMode
from fbgemm_gpu.split_table_batched_embeddings_ops_training import (
    ComputeDevice,
    DenseTableBatchedEmbeddingBagsCodegen,
    EmbeddingLocation,
    SplitTableBatchedEmbeddingBagsCodegen,
    WeightDecayMode,
)

ROWS = [150, 200, 100]
DIMS = [8, 12, 4]
# a shared table's features are adjacent, as torchrec groups them: fbgemm's
# CPU backward (table_to_feature_offset, D_begin + segment * D) assumes it
FTM = [0, 0, 1, 2]
# fbgemm-gpu-cpu 1.9.0 fails FP16 training with a shared table ("Index .. is
# out of bounds .. range 0 to -<rows>"), so the fp16 cases have a feature per table
FTM_FP16 = [0, 1, 2]
B = 8
STEPS = 20
LR, EPS, BETA1, BETA2 = 0.05, 1e-3, 0.9, 0.99


def make_batches(rng, ftm):
    batches = []
    total_d = sum(DIMS[t] for t in ftm)
    for _ in range(STEPS):
        lengths = rng.integers(0, 6, size=len(ftm) * B)
        idx = []
        for k, n in enumerate(lengths):
            rows = ROWS[ftm[k // B]]
            # skewed: a third of the draws from 8 hot rows
            hot = rng.integers(0, 8, size=n)
            cold = rng.integers(0, rows, size=n)
            idx.append(np.where(rng.random(n) < 0.35, hot, cold))
        ind = np.concatenate(idx).astype(np.int32)
        off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
        psw = rng.uniform(0.25, 1.5, size=ind.shape[0]).astype(np.float32)
        grad = rng.standard_normal((B, total_d)).astype(np.float32)
        batches.append((ind, off, psw, grad))
    return batches


def init_tables(rng, wt):
    tabs = [rng.uniform(-0.5, 0.5, size=(r, d)).astype(np.float32) for r, d in zip(ROWS, DIMS)]
    if wt == "fp16":
        tabs = [t.astype(np.float16) for t in tabs]
    return tabs


def specs():
    return [(r, d, EmbeddingLocation.HOST, ComputeDevice.CPU) for r, d in zip(ROWS, DIMS)]


POOL = {"sum": PoolingMode.SUM, "mean": PoolingMode.MEAN}
WDM = {"none": WeightDecayMode.NONE, "l2": WeightDecayMode.L2, "decouple": WeightDecayMode.DECOUPLE}


def run_fbgemm(opt, wt, pooling, weighted, wd, wdm, tabs, batches, ftm):
    """Steps on fbgemm's own CPU training module."""
    m = SplitTableBatchedEmbeddingBagsCodegen(
        specs(), feature_table_map=ftm, optimizer=opt,
        weights_precision=SparseType.FP32 if wt == "fp32" else SparseType.FP16,
        learning_rate=LR, eps=EPS, weight_decay=wd, weight_decay_mode=WDM[wdm],
        pooling_mode=POOL[pooling], output_dtype=SparseType.FP32)
    with torch.no_grad():
        for w, t in zip(m.split_embedding_weights(), tabs):
            w.copy_(torch.from_numpy(t))
    for ind, off, psw, grad in batches:
        out = m(torch.from_numpy(ind).long(), torch.from_numpy(off).long(),
                per_sample_weights=torch.from_numpy(psw) if weighted else None)
        out.backward(torch.from_numpy(grad))
    res = {}
    for t, w in enumerate(m.split_embedding_weights()):
        res[f"table.{t}"] = w.detach().numpy().copy()
    for t, states in enumerate(m.split_optimizer_states()):
        for k, s in enumerate(states):
            res[f"momentum{k + 1}.{t}"] = s.detach().float().numpy().copy()
    res["iter"] = np.array([STEPS], dtype=np.int64)
    return res


def row_grads(pooling, weighted, tabs, ind, off, psw, grad):
    """Per-table dense gradients from fbgemm's CPU backward, and the rows touched."""
    m = DenseTableBatchedEmbeddingBagsCodegen(
        [(r, d) for r, d in zip(ROWS, DIMS)], feature_table_map=FTM, pooling_mode=POOL[pooling],
        use_cpu=True)
    with torch.no_grad():
        for w, t in zip(m.split_embedding_weights(), tabs):
            w.copy_(torch.from_numpy(t.astype(np.float32)))
    out = m(torch.from_numpy(ind).long(), torch.from_numpy(off).long(),
            per_sample_weights=torch.from_numpy(psw) if weighted else None)
    out.backward(torch.from_numpy(grad))
    g = m.weights.grad.detach().numpy()
    grads, base = [], 0
    for r, d in zip(ROWS, DIMS):
        grads.append(g[base:base + r * d].reshape(r, d).copy())
        base += r * d
    touched = [set() for _ in ROWS]
    for k in range(len(FTM) * B):
        for i in range(off[k], off[k + 1]):
            touched[FTM[k // B]].add(int(ind[i]))
    return grads, touched


def run_adam(partial, pooling, weighted, wd, tabs, batches):
    """fbgemm's adam / partial_rowwise_adam update (tools/fbgemm_adam_ref.py) in f32."""
    w = [t.astype(np.float32).copy() for t in tabs]
    m1 = [np.zeros((r, d), np.float32) for r, d in zip(ROWS, DIMS)]
    m2 = [np.zeros((r,) if partial else (r, d), np.float32) for r, d in zip(ROWS, DIMS)]
    for step, (ind, off, psw, grad) in enumerate(batches):
        grads, touched = row_grads(pooling, weighted, w, ind, off, psw, grad)
        adam_step(w, m1, m2, grads, touched, step + 1, LR, EPS, BETA1, BETA2, wd, partial)
    res = {f"table.{t}": w[t] for t in range(len(ROWS))}
    for t in range(len(ROWS)):
        res[f"momentum1.{t}"] = m1[t]
        res[f"momentum2.{t}"] = m2[t]
    res["iter"] = np.array([STEPS], dtype=np.int64)
    return res


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "data", "fbgemm", "tbe_train")
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(19)
    batches = {}
    for name, ftm in [("shared", FTM), ("3f", FTM_FP16)]:
        batches[name] = make_batches(rng, ftm)
        bt = {"feature_table_map": np.array(ftm, dtype=np.int64)}
        for s, (ind, off, psw, grad) in enumerate(batches[name]):
            bt[f"step.{s}.indices"], bt[f"step.{s}.offsets"] = ind, off
            bt[f"step.{s}.psw"], bt[f"step.{s}.grad"] = psw, grad
        save_file(bt, os.path.join(out, f"batches_{name}.safetensors"))
    tabs = {"fp32": init_tables(rng, "fp32")}
    tabs["fp16"] = init_tables(rng, "fp16")
    for wt, ts in tabs.items():
        save_file({f"table.{t}": x for t, x in enumerate(ts)}, os.path.join(out, f"init_{wt}.safetensors"))

    cases = [
        # name, optimizer, wt, pooling, weighted, weight_decay, mode
        ("exact_sgd_fp32_sum", OptimType.EXACT_SGD, "fp32", "sum", False, 0.0, "none"),
        ("exact_sgd_fp16_mean_w", OptimType.EXACT_SGD, "fp16", "mean", True, 0.0, "none"),
        ("exact_rowwise_adagrad_fp32_sum_w", OptimType.EXACT_ROWWISE_ADAGRAD, "fp32", "sum", True, 0.0, "none"),
        ("exact_rowwise_adagrad_fp32_mean", OptimType.EXACT_ROWWISE_ADAGRAD, "fp32", "mean", False, 0.0, "none"),
        ("exact_rowwise_adagrad_fp16_sum_l2", OptimType.EXACT_ROWWISE_ADAGRAD, "fp16", "sum", False, 0.01, "l2"),
        ("exact_rowwise_adagrad_fp16_mean_decouple", OptimType.EXACT_ROWWISE_ADAGRAD, "fp16", "mean", False, 0.01,
         "decouple"),
    ]
    for name, opt, wt, pooling, weighted, wd, wdm in cases:
        sets = "3f" if wt == "fp16" else "shared"
        res = run_fbgemm(opt, wt, pooling, weighted, wd, wdm, tabs[wt], batches[sets],
                         FTM_FP16 if wt == "fp16" else FTM)
        save_file(res, os.path.join(out, name + ".safetensors"))
    for name, partial, pooling, weighted, wd in [
        ("adam_fp32_sum_w", False, "sum", True, 0.01),
        ("adam_fp32_mean", False, "mean", False, 0.0),
        ("partial_rowwise_adam_fp32_sum", True, "sum", False, 0.01),
        ("partial_rowwise_adam_fp32_mean_w", True, "mean", True, 0.0),
    ]:
        res = run_adam(partial, pooling, weighted, wd, tabs["fp32"], batches["shared"])
        save_file(res, os.path.join(out, name + ".safetensors"))


if __name__ == "__main__":
    main()
