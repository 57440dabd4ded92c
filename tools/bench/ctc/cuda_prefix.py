#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""audio.cuda_ctc_decoder against torchaudio's cuda_ctc_decoder on the same
log-probs and parameters, in one run.

    .venv-audio/bin/python tools/bench/ctc/cuda_prefix.py [--batch 16] [--frames 500] [--tokens 30] [--beam 10]

The log-probs are a log-softmax of peaky random logits (a token or a blank
run every few frames, as an acoustic model's), B x T x V, lengths T; beam
10, nbest 1, blank_skip_threshold 0.95 (torchaudio's defaults). Rows: loom's
cpu kernel on 1 and on 2 threads (the batch spread over the pool: the
efficiency is the 2-thread wall-clock speed-up over 1 thread, divided by 2),
loom's cuda kernel and torchaudio's (both only with a CUDA device: theirs
has no cpu kernel), each the fastest of --repeat runs, in utterances/s and
audio seconds per second (20 ms frames); the ratio torchaudio / loom on the
device (> 1: loom is faster), and how many best hypotheses are the same.

Needs .venv-audio (torchaudio 2.11, tools/requirements-audio.txt) and a
build with the audio pack (build-release by tools/dev bench; LOOM_BUILD_ROOT
chooses another).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ctc_bench_env import ROOT, build_root, loom_env  # noqa: E402

FRAME_S = 0.02
PARAMS = dict(beam_size=10, nbest=1, blank_skip_threshold=0.95)


def make_log_probs(B, T, V, seed=7):
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 1.0, size=(B, T, V))
    for b in range(B):
        t = 0
        while t < T:
            n = int(rng.integers(1, 4))
            if rng.random() < 0.5:
                logits[b, t:t + n, 0] += 6.0
            else:
                logits[b, t:t + n, int(rng.integers(1, V))] += 5.0
            t += n
    m = logits.max(axis=2, keepdims=True)
    return (logits - (m + np.log(np.exp(logits - m).sum(axis=2, keepdims=True)))).astype(np.float32)


def loom_child(args):
    """Times loom on args.backend at args.threads threads: 'time wall cpu', then the best hypotheses."""
    import loom
    loom.init(num_threads=args.threads)
    lp = np.load(os.path.join(args.child, "lp.npy"))
    if args.backend == "cuda":
        import torch
        x = loom.from_dlpack(torch.from_numpy(lp).cuda())
        sync = torch.cuda.synchronize
    else:
        x, sync = lp, (lambda: None)
    call = lambda: loom.ops.audio.cuda_ctc_decoder(x, **PARAMS)  # noqa: E731
    out = call()
    sync()
    walls, cpus = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        out = call()
        sync()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    print("time", min(walls), min(cpus))
    tok, off = np.asarray(out[0]), np.asarray(out[1])
    for h in range(len(off) - 1):
        print("hyp", " ".join(str(int(v)) for v in tok[off[h]:off[h + 1]]))


def torchaudio_run(lp, repeat):
    import torch
    from torchaudio.models.decoder import cuda_ctc_decoder
    x = torch.from_numpy(lp).cuda()
    lengths = torch.full((lp.shape[0],), lp.shape[1], dtype=torch.int32, device="cuda")
    dec = cuda_ctc_decoder([str(i) for i in range(lp.shape[2])], **PARAMS)
    out = dec(x, lengths)
    torch.cuda.synchronize()
    walls = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = dec(x, lengths)
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - t0)
    return min(walls), [" ".join(str(int(v)) for v in hyps[0].tokens) for hyps in out]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--frames", type=int, default=500)
    ap.add_argument("--tokens", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--backend", default="cpu", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return loom_child(args)
    env = loom_env(build_root())
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    try:
        import torch
        have_cuda = torch.cuda.is_available()
    except ImportError:
        have_cuda = False
    B, T, V = args.batch, args.frames, args.tokens
    audio_s = B * T * FRAME_S
    with tempfile.TemporaryDirectory(prefix="loom-bench-ctc-prefix-") as d:
        lp = make_log_probs(B, T, V)
        np.save(os.path.join(d, "lp.npy"), lp)
        runs = [("loom cpu, 1 thread", "cpu", 1), ("loom cpu, 2 threads", "cpu", 2)]
        if have_cuda:
            runs.append(("loom cuda", "cuda", 1))
        res = {}
        for name, backend, threads in runs:
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", d, "--threads", str(threads),
                                "--backend", backend, "--repeat", str(args.repeat)], env=env, capture_output=True,
                               text=True)
            if r.returncode != 0:
                sys.exit(r.stderr)
            lines = r.stdout.splitlines()
            res[name] = (float(lines[0].split()[1]), float(lines[0].split()[2]),
                         [l[4:] for l in lines[1:] if l.startswith("hyp")])
        print(f"audio.cuda_ctc_decoder, log-probs [{B}, {T}, {V}], beam 10, nbest 1, blank_skip_threshold 0.95 "
              f"({audio_s:.0f} s of audio at 20 ms/frame)")
        print(f"{'':28}{'wall s':>9}{'CPU s':>9}{'utt/s':>9}{'x real time':>12}{'ratio':>7}")
        for name, (w, c, _) in res.items():
            print(f"{name:28}{w:9.4f}{c:9.4f}{B / w:9.1f}{audio_s / w:12.0f}")
        w1, w2 = res["loom cpu, 1 thread"][0], res["loom cpu, 2 threads"][0]
        print(f"2 threads: {w1 / w2:.2f}x the 1-thread wall-clock throughput (efficiency {w1 / w2 / 2 * 100:.0f}%; "
              f"load average {os.getloadavg()[0]:.1f})")
        if not have_cuda:
            print("torchaudio's cuda_ctc_decoder runs only on a CUDA device, and there is none here: no reference "
                  "row (unit: utterances/s and audio seconds per second)")
            return
        tw, thyps = torchaudio_run(lp, args.repeat)
        lw = res["loom cuda"][0]
        same = sum(a == b for a, b in zip(res["loom cuda"][2], thyps))
        print(f"{'torchaudio cuda_ctc_decoder':28}{tw:9.4f}{'':9}{B / tw:9.1f}{audio_s / tw:12.0f}{tw / lw:7.2f}")
        print(f"best hypotheses equal to torchaudio's: {same}/{B}; unit: utterances/s and audio seconds per second")


if __name__ == "__main__":
    main()
