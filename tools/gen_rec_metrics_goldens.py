#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of the rec pack's one-shot metric ops to tests/data/rec/metrics/.

Expected values come from torchrec.metrics (torchrec 1.9): the states of one batch
(get_ne_states, get_calibration_states, get_ctr_states, get_mse_states) and the
compute functions (compute_ne, compute_calibration, compute_ctr, compute_mse,
compute_auc) that NEMetric, CalibrationMetric, CTRMetric, MSEMetric and AUCMetric
apply to them. They are evaluated in float64 on the inputs' values (f32 inputs are
upcast exactly): loom accumulates every state in f64, so the comparison measures
the formula and not torch's f32 summation of some states. Predictions are distinct
(torch's argsort leaves the order of ties unspecified, and AUC has no tie handling).
The rec.metrics object is checked against torchrec's RecMetric modules themselves
(NEMetric, CalibrationMetric, CTRMetric, MSEMetric, AccuracyMetric, AUCMetric; one
rank, FUSED_TASKS_COMPUTATION, f64 batches): lifetime and window values after
several updates (object_cases.inc).
Files: <case>.{predictions,labels,weights}.npy, <case>.<metric>.npy and cases.inc:

    CASE(name, has_weights)

    .venv-rec/bin/python tools/gen_rec_metrics_goldens.py [OUTDIR]
"""
import os
import sys

import numpy as np
import torch
from torchrec.metrics.auc import compute_auc
from torchrec.metrics.calibration import compute_calibration, get_calibration_states
from torchrec.metrics.ctr import compute_ctr, get_ctr_states
from torchrec.metrics.mse import compute_mse, get_mse_states
from torchrec.metrics.ne import compute_ne, get_ne_states

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "metrics")
RNG = np.random.default_rng(20261203)
ETA = 1e-12
CASES = []
OBJECT_CASES = []


def metrics(p, y, w):
    """torchrec's value of each metric, float64, [tasks]."""
    p, y, w = (torch.tensor(a, dtype=torch.float64) for a in (p, y, w))
    ne = get_ne_states(y, p, w, ETA)
    cal = get_calibration_states(y, p, w)
    ctr = get_ctr_states(y, p, w)
    mse = get_mse_states(y, p, w)
    return {
        "ne": compute_ne(ne["cross_entropy_sum"], ne["weighted_num_samples"], ne["pos_labels"], ne["neg_labels"],
                         ETA),
        "calibration": compute_calibration(cal["calibration_num"], cal["calibration_denom"]),
        "ctr": compute_ctr(ctr["ctr_num"], ctr["ctr_denom"]),
        "mse": compute_mse(mse["error_sum"], mse["weighted_num_samples"]),
        "auc": compute_auc(p.shape[0], [p], [y], [w]),
    }


def add_case(name, tasks, n, dtype, weighted, labels="binary"):
    shape = (tasks, n) if tasks else (n,)
    p = RNG.permutation(np.linspace(0.001, 0.999, int(np.prod(shape)))).reshape(shape).astype(dtype)
    if labels == "binary":
        y = (RNG.uniform(size=shape) < p.astype(np.float64) * 0.8 + 0.1).astype(dtype)
    else:   # regression targets for MSE, and a calibration > 1
        y = RNG.uniform(0, 1, size=shape).astype(dtype)
    w = RNG.uniform(0.1, 2.0, size=shape).astype(dtype) if weighted else np.ones(shape, dtype)
    m = metrics(p.reshape(tasks or 1, n), y.reshape(tasks or 1, n), w.reshape(tasks or 1, n))
    np.save(os.path.join(OUT, f"{name}.predictions.npy"), p)
    np.save(os.path.join(OUT, f"{name}.labels.npy"), y)
    if weighted:
        np.save(os.path.join(OUT, f"{name}.weights.npy"), w)
    for k, v in m.items():
        np.save(os.path.join(OUT, f"{name}.{k}.npy"), v.numpy().astype(np.float64).reshape(-1))
    CASES.append((name, int(weighted)))


OBJECT_METRICS = ["ne", "calibration", "ctr", "mse", "rmse", "accuracy", "auc"]


def add_object_case(name, tasks, batch, window, n_batches, checkpoints):
    """torchrec's RecMetric modules fed the same batches ([tasks, batch], f64): lifetime_* and window_*
    after each update listed in checkpoints. Files <name>.batch<i>.{predictions,labels,weights}.npy and
    <name>.after<i>.{lifetime,window}.npy ([metrics, tasks], NaN for lifetime auc)."""
    from torchrec.metrics.accuracy import AccuracyMetric
    from torchrec.metrics.auc import AUCMetric
    from torchrec.metrics.calibration import CalibrationMetric
    from torchrec.metrics.ctr import CTRMetric
    from torchrec.metrics.metrics_config import RecComputeMode, RecTaskInfo
    from torchrec.metrics.mse import MSEMetric
    from torchrec.metrics.ne import NEMetric
    infos = [RecTaskInfo(name=f"t{t}", label_name=f"l{t}", prediction_name=f"p{t}", weight_name=f"w{t}")
             for t in range(tasks)]
    mods = {cls: cls(world_size=1, my_rank=0, batch_size=batch, tasks=infos,
                     compute_mode=RecComputeMode.FUSED_TASKS_COMPUTATION, window_size=window)
            for cls in (NEMetric, CalibrationMetric, CTRMetric, MSEMetric, AccuracyMetric, AUCMetric)}
    key_of = {"ne": (NEMetric, "ne", "ne"), "calibration": (CalibrationMetric, "calibration", "calibration"),
              "ctr": (CTRMetric, "ctr", "ctr"), "mse": (MSEMetric, "mse", "mse"), "rmse": (MSEMetric, "mse", "rmse"),
              "accuracy": (AccuracyMetric, "accuracy", "accuracy"), "auc": (AUCMetric, "auc", "auc")}
    for i in range(n_batches):
        p = RNG.uniform(0.01, 0.99, (tasks, batch))
        y = (RNG.uniform(size=(tasks, batch)) < p).astype(np.float64)
        w = RNG.uniform(0.2, 2.0, (tasks, batch))
        for f, a in (("predictions", p), ("labels", y), ("weights", w)):
            np.save(os.path.join(OUT, f"{name}.batch{i}.{f}.npy"), a)
        for mod in mods.values():
            mod.update(predictions=torch.tensor(p), labels=torch.tensor(y), weights=torch.tensor(w))
        if i in checkpoints:
            results = {cls: mod.compute() for cls, mod in mods.items()}
            for scope in ("lifetime", "window"):
                out = np.full((len(OBJECT_METRICS), tasks), np.nan)
                for j, met in enumerate(OBJECT_METRICS):
                    cls, prefix, field = key_of[met]
                    for t in range(tasks):
                        k = f"{prefix}-t{t}|{scope}_{field}"
                        if k in results[cls]:
                            out[j, t] = float(results[cls][k])
                np.save(os.path.join(OUT, f"{name}.after{i}.{scope}.npy"), out)
    OBJECT_CASES.append((name, tasks, window, n_batches, checkpoints))


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy") or f in ("cases.inc", "object_cases.inc"):
            os.remove(os.path.join(OUT, f))
    add_case("one_task_weighted_f32", 0, 700, np.float32, True)
    add_case("three_tasks_f32", 3, 400, np.float32, False)
    add_case("two_tasks_weighted_f64", 2, 300, np.float64, True)
    add_case("soft_labels_f32", 0, 500, np.float32, True, labels="soft")
    add_object_case("object", 2, 64, 150, 6, [1, 3, 5])
    with open(os.path.join(OUT, "object_cases.inc"), "w") as f:
        f.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        f.write("/* Written by tools/gen_rec_metrics_goldens.py: OCASE(name, tasks, window, batches, checkpoint mask) */\n")
        for name, tasks, window, n, cps in OBJECT_CASES:
            f.write(f'OCASE("{name}", {tasks}, {window}, {n}, {sum(1 << c for c in cps)})\n')
    with open(os.path.join(OUT, "cases.inc"), "w") as f:
        f.write("/* SPDX-License-Identifier: BSD-3-Clause */\n")
        f.write("/* Written by tools/gen_rec_metrics_goldens.py: CASE(name, has_weights) */\n")
        for name, w in CASES:
            f.write(f'CASE("{name}", {w})\n')
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
