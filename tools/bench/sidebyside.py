# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side benchmark driver: our op through `loom bench --json` and the
reference library's function on the very same inputs, in one run.

A benchmark script builds a list of Case objects and calls run(cases). For
each case the inputs (NumPy arrays) are written as .npy into a temporary
folder; `loom bench` times the op on those files (median of --repeat calls,
outputs allocated inside the timed region, as a caller pays them); the
reference is timed in this process on the same arrays (median of as many
calls, after the same warm-up). Both sides get the same thread budget.

Printed: one row per case with both medians, the throughput in the case's
unit (items per second, where items is Case.items), and the ratio
reference_time / loom_time (> 1 means loom is faster), then the target when
the case has one.

cpu=True times CPU seconds instead of wall seconds, for a machine shared with
other work, where wall time mostly measures the others: on both sides the
median process CPU time (every thread) of one call, the reference's taken
here, loom's by `loom bench` (its cpu_median_s, so that creating the object,
which can copy gigabytes of tables, and the warm-up stay out). A `loom` that
does not report it is timed as before: the mean over --repeat calls, taken as
the difference of the CPU time of two `loom bench` processes that differ only
in --repeat. CPU time equals latency only at one thread; at more it is the CPU
cost of a call.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Case:
    name: str                      # row label
    op: str                        # loom op, e.g. "vision.nms"
    inputs: Dict[str, np.ndarray]  # loom input name -> array
    reference: Callable[[], object]  # one call of the reference on the same data
    attrs: Dict[str, str] = field(default_factory=dict)  # loom attrs as CLI text
    weights: Optional[str] = None  # safetensors path for object ops
    items: float = 1.0             # items per call, for the throughput column
    unit: str = "calls/s"          # what items counts, e.g. "boxes/s"
    target: Optional[float] = None  # wanted ratio (reference time / loom time)
    repeat: int = 20
    warmup: int = 3
    backend: Optional[str] = None


def loom_cli():
    """The loom CLI of the release build (LOOM_CLI overrides)."""
    cli = os.environ.get("LOOM_CLI")
    if cli:
        return cli
    for d in ("build-release", "build"):
        p = os.path.join(ROOT, d, "tools", "loom")
        if os.access(p, os.X_OK) and not os.path.isdir(p):
            return p
    sys.exit("no loom CLI: run `tools/dev bench` (or build build-release/) first")


def fma_peak(threads):
    """This machine's f32 FMA peak in GFLOP/s on `threads` threads and the ISA
    that reaches it, as tools/bench/fma_peak measures it now (the CPUs differ
    between machines: AVX2-only ones, AVX-512 ones); (None, None) when it is
    not built."""
    import re
    for d in ("build-release", "build"):
        exe = os.path.join(ROOT, d, "tools", "bench", "fma_peak")
        if os.access(exe, os.X_OK):
            break
    else:
        return None, None
    out = subprocess.run([exe], capture_output=True, text=True).stdout
    best = (None, None)
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)\s+f32 FMA peak, (\d+) threads?\s*:\s*([0-9.]+) GFLOP/s", line)
        if m and int(m.group(2)) == threads and (best[0] is None or float(m.group(3)) > best[0]):
            best = (float(m.group(3)), m.group(1))
    return best


def time_reference(fn, repeat, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def cpu_reference(fn, repeat, warmup):
    """Median CPU seconds of one call of fn: this process's, plus those of
    the child processes it waited for (a reference that runs a CLI, such as
    `ffmpeg -f null`, spends its time there)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0, c0 = time.process_time(), _children_cpu()
        fn()
        times.append(time.process_time() - t0 + _children_cpu() - c0)
    return float(np.median(times))


def _children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def cpu_loom(case, tmp):
    """loom's CPU seconds per call: the median `loom bench` reports, else
    (an older loom) two runs, one with --repeat 1 and one with 1 + repeat,
    the difference over repeat."""
    res = time_loom(case, tmp)
    if "cpu_median_s" in res:
        res["median_s"] = res["cpu_median_s"]
        return res
    spent = []
    for repeat in (1, 1 + case.repeat):
        t0 = _children_cpu()
        res = time_loom(case, tmp, repeat)
        spent.append(_children_cpu() - t0)
    res["median_s"] = max(spent[1] - spent[0], 0.0) / case.repeat
    return res


def loom_command(command, case, tmp):
    """`loom COMMAND OP` with the case's inputs (saved as .npy into tmp),
    attributes, weights and backend."""
    args = [loom_cli(), command, case.op]
    for name, arr in case.inputs.items():
        path = os.path.join(tmp, f"{name}.npy")
        np.save(path, np.ascontiguousarray(arr))
        args += ["--in", f"{name}={path}"]
    for key, value in case.attrs.items():
        args += ["--attr", f"{key}={value}"]
    if case.weights:
        args += ["--weights", case.weights]
    if case.backend:
        args += ["--backend", case.backend]
    return args


def time_loom(case, tmp, repeat=None):
    args = loom_command("bench", case, tmp) + [
        "--json", "--repeat", str(case.repeat if repeat is None else repeat), "--warmup", str(case.warmup)]
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}\n{res.stderr.strip()}")
    return json.loads(res.stdout)


def run(cases, title, threads=None, cpu=False):
    """Time every case on both sides and print the table; returns the rows.
    cpu: CPU seconds per call instead of wall seconds (see the module's doc)."""
    import torch
    threads = threads or int(os.environ.get("LOOM_NUM_THREADS", os.cpu_count() or 1))
    torch.set_num_threads(threads)
    os.environ["LOOM_NUM_THREADS"] = str(threads)
    print(f"{title}: {threads} threads, torch {torch.__version__}" + (", CPU seconds per call" if cpu else ""))
    hdr = (f"{'case':<44} {'loom':>10} {'reference':>10} {'loom rate':>10} {'ref rate':>10} {'unit':<8} "
           f"{'ratio':>7} {'target':>7}")
    print(hdr)
    print("-" * len(hdr))
    rows = []
    tmp = tempfile.mkdtemp(prefix="loom-bench-")
    try:
        for case in cases:
            res = cpu_loom(case, tmp) if cpu else time_loom(case, tmp)
            ours = res["median_s"]
            ref = (cpu_reference if cpu else time_reference)(case.reference, case.repeat, case.warmup)
            ratio = ref / ours if ours > 0 else float("inf")
            target = f"{case.target:.1f}x" if case.target else ""
            print(f"{case.name:<44} {ours * 1e3:>8.3f}ms {ref * 1e3:>8.3f}ms "
                  f"{case.items / ours:>10.3g} {case.items / ref:>10.3g} {case.unit:<8} "
                  f"{ratio:>6.2f}x {target:>7}  [{res.get('impl', '?')}]")
            rows.append({"case": case.name, "loom_s": ours, "ref_s": ref, "ratio": ratio,
                         "target": case.target, "impl": res.get("impl")})
            for f in os.listdir(tmp):
                os.unlink(os.path.join(tmp, f))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
