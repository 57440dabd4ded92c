#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Encoder benchmark: text.bert_encoder against ONNX Runtime and PyTorch on
all-MiniLM-L6-v2 sentence embeddings (mean pooling + L2 normalisation), on
the same token ids, in one run.

    .venv-text-enc/bin/python tools/bench/text/encoder.py [--threads 2] [--repeat 10]

Cases: batch 1 and 32 at sequence length 128 (no padding), and batch 32 of
mixed lengths 16..128 padded to 128 (where loom computes no padding and the
references do). The references: transformers' BertModel plus the pooling in
torch (inference_mode), and the same module exported with torch.onnx.export
and run by onnxruntime (all graph optimisations, intra_op_num_threads =
threads). loom: `loom bench --json` (median of --repeat calls), with
LOOM_NUM_THREADS = threads. Printed per case: the medians in ms, the ratios
reference / loom (> 1: loom is faster) and the GFLOP/s of each side over
the dense work of the real tokens (2 * (4 H^2 + 2 H I) + 4 L H per token and
layer), against the machine's f32 FMA peak (tools/bench/fma_peak, measured in the
same run).

--cpu times CPU seconds per call instead of wall seconds, for a machine
shared with other work (where wall time mostly measures the others): the
references' process CPU time per call (ONNX Runtime with spinning off and
OMP_WAIT_POLICY=PASSIVE, so that waiting costs nothing), loom's as the
difference of two `loom bench` processes that differ only in --repeat. At
more than one thread CPU time is the cost of a call, not its latency.

The model is build-models/minilm (tools/convert_minilm.py makes it).
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

if "--cpu" in sys.argv[1:]:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before torch starts its OpenMP pool
import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "tools", "bench"))
import sidebyside  # noqa: E402
MODEL = os.path.join(ROOT, "build-models", "minilm")


def loom_cli():
    cli = os.environ.get("LOOM_CLI")
    if cli:
        return cli
    for d in ("build-release", "build"):
        p = os.path.join(ROOT, d, "tools", "loom")
        if os.access(p, os.X_OK) and not os.path.isdir(p):
            return p
    sys.exit("no loom CLI: build build-release/ first (or set LOOM_CLI)")


class Embed(torch.nn.Module):
    """BertModel + sentence-transformers' mean pooling + F.normalize."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        h = self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / torch.clamp(m.sum(1), min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1)


CPU_MODE = False


def median_time(fn, repeat, warmup=2):
    clock = time.process_time if CPU_MODE else time.perf_counter
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        ts.append(clock() - t0)
    return float(np.median(ts))


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def loom_time(cmd, repeat):
    """loom's median wall seconds per call, or with --cpu its mean CPU seconds."""
    def bench(r):
        c = list(cmd)
        c[c.index("--repeat") + 1] = str(r)
        t0 = children_cpu()
        res = subprocess.run(c, capture_output=True, text=True)
        if res.returncode != 0:
            sys.exit(res.stderr)
        return json.loads(res.stdout)["median_s"], children_cpu() - t0
    if not CPU_MODE:
        return bench(repeat)[0]
    return max(bench(1 + repeat)[1] - bench(1)[1], 0.0) / repeat


def batch(rng, B, L, lengths=None):
    ids = rng.integers(1000, 30000, size=(B, L)).astype(np.int64)
    mask = np.ones((B, L), np.int64)
    ids[:, 0] = 101
    for b in range(B):
        n = L if lengths is None else lengths[b]
        ids[b, n - 1] = 102
        ids[b, n:] = 0
        mask[b, n:] = 0
    return ids, mask


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    args = ap.parse_args()
    global CPU_MODE
    CPU_MODE = args.cpu
    if not os.path.isfile(os.path.join(MODEL, "model.safetensors")):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "convert_minilm.py")], check=True)
    import onnxruntime as ort
    from transformers import BertModel

    torch.set_num_threads(args.threads)
    os.environ["LOOM_NUM_THREADS"] = str(args.threads)
    bert = BertModel.from_pretrained(MODEL, attn_implementation="sdpa").eval()
    model = Embed(bert).eval()
    cfg = json.load(open(os.path.join(MODEL, "config.json")))
    H, I, NL = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]

    tmp = tempfile.mkdtemp(prefix="loom-bench-text-")
    onnx_path = os.path.join(tmp, "minilm.onnx")
    ids0, mask0 = batch(np.random.default_rng(0), 2, 16)
    with torch.inference_mode():
        torch.onnx.export(model, (torch.from_numpy(ids0), torch.from_numpy(mask0)), onnx_path,
                          input_names=["input_ids", "attention_mask"], output_names=["embeddings"],
                          dynamic_axes={"input_ids": {0: "b", 1: "l"}, "attention_mask": {0: "b", 1: "l"},
                                        "embeddings": {0: "b"}}, opset_version=17, dynamo=False)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if args.cpu:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(onnx_path, so, providers=["CPUExecutionProvider"])

    rng = np.random.default_rng(1)
    cases = [("batch 1, L 128", *batch(rng, 1, 128)), ("batch 32, L 128", *batch(rng, 32, 128)),
             ("batch 32, lengths 16..128 padded to 128", *batch(rng, 32, 128, rng.integers(16, 129, size=32)))]
    print(f"all-MiniLM-L6-v2 sentence embeddings: {args.threads} threads, torch {torch.__version__}, "
          f"onnxruntime {ort.__version__}, LOOM_BACKENDS={os.environ.get('LOOM_BACKENDS') or '(default)'}"
          + (", CPU seconds per call" if args.cpu else ", wall seconds (median)"))
    hdr = (f"{'case':<42} {'loom':>9} {'ORT':>9} {'torch':>9} {'ORT/loom':>9} {'torch/loom':>10} "
           f"{'loom GF/s':>9} {'ORT GF/s':>9} {'torch GF/s':>10}")
    print(hdr)
    print("-" * len(hdr))
    for name, ids, mask in cases:
        tokens = int(mask.sum())
        L = ids.shape[1]
        lens = mask.sum(1)
        flops = float(sum(NL * n * (2.0 * (4 * H * H + 2 * H * I) + 4.0 * n * H) for n in lens))
        ti, tm = torch.from_numpy(ids), torch.from_numpy(mask)
        with torch.inference_mode():
            ref = model(ti, tm).numpy()

            def run_torch():
                model(ti, tm)

            t_torch = median_time(run_torch, args.repeat)
        feeds = {"input_ids": ids, "attention_mask": mask}
        t_ort = median_time(lambda: sess.run(None, feeds), args.repeat)
        np.save(os.path.join(tmp, "ids.npy"), ids)
        np.save(os.path.join(tmp, "mask.npy"), mask)
        cmd = [loom_cli(), "bench", "text.bert_encoder", "--json", "--repeat", str(args.repeat), "--warmup", "2",
               "--weights", os.path.join(MODEL, "model.safetensors"),
               "--attr", "config=" + os.path.join(MODEL, "config.json"), "--attr", "pooling=mean",
               "--attr", "normalize=true", "--in", "input_ids=" + os.path.join(tmp, "ids.npy"),
               "--in", "attention_mask=" + os.path.join(tmp, "mask.npy")]
        t_loom = loom_time(cmd, args.repeat)
        # the same embeddings as torch (checked here too, on the benchmark's own ids)
        out = os.path.join(tmp, "out.npy")
        subprocess.run([loom_cli(), "run"] + cmd[2:3] + cmd[8:] + ["--out", "output=" + out], check=True,
                       capture_output=True)
        got = np.load(out)
        cos = float((1.0 - (got * ref).sum(1)).max())
        print(f"{name:<42} {t_loom * 1e3:>7.2f}ms {t_ort * 1e3:>7.2f}ms {t_torch * 1e3:>7.2f}ms "
              f"{t_ort / t_loom:>8.2f}x {t_torch / t_loom:>9.2f}x {flops / t_loom / 1e9:>9.1f} "
              f"{flops / t_ort / 1e9:>9.1f} {flops / t_torch / 1e9:>10.1f}   (max cosine distance to torch "
              f"{cos:.1e}, {tokens} tokens of {ids.size})")
    peak, isa = sidebyside.fma_peak(args.threads)
    print("target: loom <= 1.0x the latency of ORT and of torch (ratios >= 1.00x); f32 FMA peak "
          + (f"{peak:.0f} GFLOP/s on {args.threads} threads ({isa}, tools/bench/fma_peak)" if peak
             else "not measured (tools/bench/fma_peak is not built)"))


if __name__ == "__main__":
    main()
