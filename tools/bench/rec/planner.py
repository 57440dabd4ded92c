#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rec.plan against torchrec's EmbeddingShardingPlanner.plan on the same
configs (those of tools/gen_rec_planner_goldens.py), in one run; CPU seconds
per plan on both sides (a loaded machine), the rate in plans/s.

    .venv-rec/bin/python tools/bench/rec/planner.py [--only SUBSTRING] [--wall]

Both sides run the whole planner: storage reservation, enumeration and
estimates, every proposer, the partitioner, the best plan (torchrec's
stats table is logged, not printed; loom's is made as an output). One
thread on both sides: neither planner is parallel. loom's plan takes
about a millisecond, below the resolution of a process's CPU clock over a
few calls, so loom runs 5000 calls (300 of the grid search) (`loom bench`, the difference of two
runs) and torchrec 2 to 5.
"""
import argparse
import logging
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.dirname(os.path.dirname(HERE))]

import sidebyside  # noqa: E402
import gen_rec_planner_goldens as goldens  # noqa: E402

CASES = ["ws2_loose", "ws4_tight", "ws8_two_hosts", "cpu_ws4_tight"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--wall", action="store_true", help="wall seconds instead of CPU seconds")
    args = ap.parse_args()
    logging.disable(logging.WARNING)
    import warnings
    warnings.simplefilter("ignore")
    cases = []
    for name in CASES:
        if args.only not in name:
            continue
        cfg = goldens.CASES[name]
        planner, ebc, sharders = goldens.torchrec_planner(cfg)
        text = np.frombuffer(__import__("json").dumps(cfg).encode(), dtype=np.uint8)
        grid = name == "ws2_loose"
        cases.append((sidebyside.Case(
            name=f"plan {name} ({len(cfg['tables'])} tables, W={cfg['topology']['world_size']})",
            op="rec.plan", inputs={"config": text}, reference=lambda p=planner, m=ebc, s=sharders: p.plan(m, s),
            unit="plans/s", repeat=300 if grid else 5000, warmup=2), 2 if grid else 5))
    os.environ["LOOM_NUM_THREADS"] = "1"
    import torch
    torch.set_num_threads(1)
    cpu = not args.wall
    print(f"rec.plan vs torchrec EmbeddingShardingPlanner: 1 thread, torch {torch.__version__}, "
          + ("CPU" if cpu else "wall") + " seconds per plan")
    print(f"{'case':<44} {'loom':>11} {'torchrec':>11} {'loom rate':>10} {'ref rate':>10} {'ratio':>8}")
    tmp = tempfile.mkdtemp(prefix="loom-bench-")
    try:
        for case, ref_repeat in cases:
            ours = max((sidebyside.cpu_loom(case, tmp) if cpu else sidebyside.time_loom(case, tmp))["median_s"], 1e-9)
            ref = (sidebyside.cpu_reference if cpu else sidebyside.time_reference)(case.reference, ref_repeat, 1)
            print(f"{case.name:<44} {ours * 1e3:>9.3f}ms {ref * 1e3:>9.1f}ms {1 / ours:>10.3g} {1 / ref:>10.3g} "
                  f"{ref / ours:>7.0f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
