#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the overlap measured on a prefetch pipeline's timeline.

    python3 tools/rec_timeline.py out.json

out.json is the Chrome trace JSON (chrome://tracing, ui.perfetto.dev) that
examples/rec/prefetch_pipeline writes with --timeline: complete events
("ph": "X", microseconds) named by stage (cat: input_dist, prefetch,
forward, backward), args.step the batch each works on, pid the rank, tid 0
the main thread and 1 the prefetch thread. Per rank it prints the time the
prefetch of batch i+1 (on the prefetch thread) ran while the forward of
batch i ran, and while its forward or backward ran: the overlap the
pipeline buys. Only the standard library is used.
"""
import json
import sys
from collections import defaultdict


def overlap(a, b):
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    by_rank = defaultdict(lambda: defaultdict(list))
    for e in events:
        if e.get("ph") != "X":
            continue
        span = (float(e["ts"]), float(e["ts"]) + float(e["dur"]))
        by_rank[e["pid"]][(e["cat"], e["tid"])].append((int(e["args"]["step"]), span))
    for rank in sorted(by_rank):
        st = by_rank[rank]
        fwd = {s: span for s, span in st[("forward", 0)]}
        bwd = {s: span for s, span in st[("backward", 0)]}
        pf = st[("prefetch", 1)]
        total_pf = sum(sp[1] - sp[0] for _, sp in pf)
        total_fwd = sum(sp[1] - sp[0] for sp in fwd.values())
        with_fwd = sum(overlap(sp, fwd[s - 1]) for s, sp in pf if s - 1 in fwd)
        with_fb = with_fwd + sum(overlap(sp, bwd[s - 1]) for s, sp in pf if s - 1 in bwd)
        pct = (lambda x: 100.0 * x / total_pf if total_pf > 0 else 0.0)
        print(f"rank {rank}: {len(pf)} prefetches on the prefetch thread, {total_pf / 1e3:.2f} ms; "
              f"forward {total_fwd / 1e3:.2f} ms; prefetch of i+1 during the forward of i "
              f"{with_fwd / 1e3:.2f} ms ({pct(with_fwd):.0f}%), during its forward or backward "
              f"{with_fb / 1e3:.2f} ms ({pct(with_fb):.0f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
