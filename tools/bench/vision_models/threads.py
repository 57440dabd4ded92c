#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Thread scaling at batch 1: each model at 1 and at 2 threads, loom against PyTorch eager and ONNX Runtime.

    .venv/bin/python tools/bench/vision_models/threads.py [--models resnet50,vit_b_16] [--threads 1,2]
        [--repeat 10]

The sides, the weights (torchvision's architecture with seeded random
values), the ONNX export and the processes are those of
tools/bench/vision_models/run, whose functions this script imports: each
side runs in a process of its own with that thread count (loom:
LOOM_NUM_THREADS and OMP_NUM_THREADS; torch: torch.set_num_threads; ORT:
intra_op_num_threads), and the latency is the median of --repeat calls
after warm-up. Printed per model: for each thread count the three
latencies, the ratios ort / loom and torch / loom (> 1: loom is faster),
loom's CPU seconds per call, and then each side's speed-up from the first
thread count to the last. At batch 1 the layers are small, so how fast
idle workers wake (GOMP_SPINCOUNT, README "Configuration") shows here more
than at batch 8. On a shared machine the wall times carry the other
processes' load.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load_run():
    """tools/bench/vision_models/run as a module (its file has no .py suffix)."""
    loader = importlib.machinery.SourceFileLoader("vision_models_run", os.path.join(HERE, "run"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


run = load_run()


def side_times(name, weights, state, inp, tmp, threads, repeat, have_ort):
    """{side: (median seconds, CPU seconds per call or nan)} at this thread count."""
    import torch
    env = dict(os.environ, LOOM_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    bench = [run.loom_cli(), "bench", "vision." + name, "--json", "--warmup", "2", "--weights", weights,
             "--in", "input=" + inp]
    t_loom, _, c_loom = run.loom_cpu_per_call(bench, env, repeat)
    out = {"loom": (t_loom, c_loom)}
    tr, _, _ = run.run_child([sys.executable, "-c", run.SIDE_TORCH, weights, inp, str(threads), str(repeat), name],
                             env)
    tr = json.loads(tr)
    out["torch"] = (tr["median"], tr["cpu"])
    if have_ort:
        onnx_path = os.path.join(tmp, f"{name}_1.onnx")
        if not os.path.exists(onnx_path):
            site = os.path.dirname(os.path.dirname(torch.__file__))
            run.run_child([run.ort_python(), "-c", run.SIDE_EXPORT, state, onnx_path, name, "1", site])
        orr, _, _ = run.run_child([run.ort_python(), "-c", run.SIDE_ORT, onnx_path, inp, str(threads), str(repeat)],
                                  env)
        orr = json.loads(orr)
        out["ort"] = (orr["median"], orr["cpu"])
    else:
        out["ort"] = (float("nan"), float("nan"))
    return out


def bench_model(name, thread_counts, repeat, tmp, have_ort):
    import torch
    from safetensors.torch import save_file
    model = run.make_model(name)
    weights = os.path.join(tmp, name + ".safetensors")
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, weights)
    state = os.path.join(tmp, name + ".pt")
    torch.save(model.state_dict(), state)
    inp = os.path.join(tmp, "x1.npy")
    np.save(inp, torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)).numpy())
    print(f"{name}, batch 1, median of {repeat}")
    print(f"{'threads':<8} {'loom':>9} {'ort':>9} {'torch':>9} {'ort/loom':>9} {'torch/loom':>10} {'CPU s loom':>10}")
    rows = {}
    for t in thread_counts:
        r = rows[t] = side_times(name, weights, state, inp, tmp, t, repeat, have_ort)
        lo, ort_t, tor = r["loom"][0], r["ort"][0], r["torch"][0]
        print(f"{t:<8} {lo * 1e3:>7.1f}ms {ort_t * 1e3:>7.1f}ms {tor * 1e3:>7.1f}ms {ort_t / lo:>8.2f}x "
              f"{tor / lo:>9.2f}x {r['loom'][1]:>10.3f}")
    first, last = thread_counts[0], thread_counts[-1]
    if first != last:
        speedup = {s: rows[first][s][0] / rows[last][s][0] for s in ("loom", "ort", "torch")}
        print(f"speed-up {first} -> {last} threads: loom {speedup['loom']:.2f}x, ort {speedup['ort']:.2f}x, "
              f"torch {speedup['torch']:.2f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,vit_b_16")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    thread_counts = [int(v) for v in args.threads.split(",")]
    if not thread_counts or min(thread_counts) < 1:
        sys.exit(f"--threads {args.threads}: give thread counts of 1 or more")
    have_ort = run.ort_python() is not None
    if not have_ort:
        print("(ONNX Runtime side skipped: neither .venv nor .venv-text-enc has onnx and onnxruntime)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            bench_model(name, thread_counts, args.repeat, tmp, have_ort)


if __name__ == "__main__":
    main()
