#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rec pack knn benchmark: loom's FAISS retrieval against faiss-cpu's Python, one run.

    .venv-faiss/bin/python tools/bench/rec/knn.py [--items N] [--queries Q] [--threads T] [--cpu]

The items are N = 1M embeddings of D = 64 (f32, clustered around 1000
centres, as two-tower item embeddings are), the queries Q = 1000 more of the
same distribution. faiss-cpu trains and fills one IndexIVFPQ over an
IndexFlatIP coarse quantizer (inner product, the two-tower score; nlist 256,
m 16, nbits 8, nprobe 8), and the very same index (faiss.serialize_index,
handed to rec.knn_index as its tensor 'index') is searched by both sides for
the top 100 of every query:

  ivfpq top-100  rec.knn_index_search (loom's Debian libfaiss 1.7.3 build)
                 against index.search (faiss-cpu's wheel) on the same index
                 and queries; rate in queries/s; recall@100 of each side
                 against the exact top 100
  exact top-100  rec.knn_retrieve over the [N, D] matrix against
                 faiss.IndexFlatIP.search, on the first 100 queries

The exact top 100 is faiss's IndexFlatIP. Both sides run on the same thread
count (--threads, default 2: faiss.omp_set_num_threads and LOOM_NUM_THREADS).
Needs a release build (tools/dev bench; LOOM_CLI names another loom) and
.venv-faiss (tools/requirements-faiss.txt).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]

import sidebyside  # noqa: E402

D, K = 64, 100
NLIST, M, NBITS, NPROBE = 256, 16, 8, 8


def clustered(rng, n, centres):
    which = rng.integers(0, len(centres), n)
    out = centres[which]
    out += 0.3 * rng.standard_normal((n, D), dtype=np.float32)
    return out


def recall(got, exact):
    hits = sum(len(np.intersect1d(g[g >= 0], e)) for g, e in zip(got, exact))
    return hits / exact.size


def loom_ids(case, tmp):
    """loom's results of one call, for the recall column."""
    out = os.path.join(tmp, "ids.npy")
    args = sidebyside.loom_command("run", case, tmp) + ["--out", f"ids={out}"]
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}\n{res.stderr.strip()}")
    return np.load(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000, help="items N (default 1M)")
    ap.add_argument("--queries", type=int, default=1000, help="queries Q of the IVFPQ case (default 1000)")
    ap.add_argument("--threads", type=int, default=2, help="threads for both sides (default 2)")
    ap.add_argument("--cpu", action="store_true", help="CPU seconds per call instead of wall seconds")
    args = ap.parse_args()
    import faiss
    from safetensors.numpy import save_file

    faiss.omp_set_num_threads(args.threads)
    os.environ["LOOM_NUM_THREADS"] = str(args.threads)
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((1000, D), dtype=np.float32)
    items = clustered(rng, args.items, centres)
    queries = clustered(rng, args.queries, centres)

    index = faiss.IndexIVFPQ(faiss.IndexFlatIP(D), D, NLIST, M, NBITS, faiss.METRIC_INNER_PRODUCT)
    index.train(items)
    index.add(items)
    index.nprobe = NPROBE
    flat = faiss.IndexFlatIP(D)
    flat.add(items)
    _, exact = flat.search(queries, K)

    with tempfile.TemporaryDirectory(prefix="loom-bench-knn-") as tmp:
        weights = os.path.join(tmp, "index.safetensors")
        save_file({"index": faiss.serialize_index(index)}, weights)
        q_exact = queries[:100]
        cases = [
            (sidebyside.Case(name=f"ivfpq top-{K} {args.items} x {D} nprobe {NPROBE}", op="rec.knn_index_search",
                             inputs={"queries": queries}, attrs={"k": str(K)}, weights=weights,
                             reference=lambda: index.search(queries, K), items=len(queries), unit="queries/s",
                             repeat=10, warmup=2), lambda: index.search(queries, K)[1], exact),
            (sidebyside.Case(name=f"exact top-{K} {args.items} x {D}", op="rec.knn_retrieve",
                             inputs={"queries": q_exact, "items": items}, attrs={"k": str(K)},
                             reference=lambda: flat.search(q_exact, K), items=len(q_exact), unit="queries/s",
                             repeat=3, warmup=1), lambda: flat.search(q_exact, K)[1], exact[:100]),
        ]
        print(f"rec knn vs faiss-cpu {faiss.__version__}: {args.threads} threads"
              + (", CPU seconds per call" if args.cpu else "")
              + f"; index IndexIVFPQ(IndexFlatIP) nlist {NLIST}, m {M}, nbits {NBITS}")
        hdr = (f"{'case':<40} {'loom':>10} {'faiss':>10} {'loom rate':>10} {'faiss rate':>10} {'unit':<10} "
               f"{'ratio':>7} {'loom R@100':>10} {'faiss R@100':>11}")
        print(hdr)
        print("-" * len(hdr))
        for case, reference_ids, truth in cases:
            work = tempfile.mkdtemp(prefix="case-", dir=tmp)
            res = sidebyside.cpu_loom(case, work) if args.cpu else sidebyside.time_loom(case, work)
            ours = res["median_s"]
            ref = (sidebyside.cpu_reference if args.cpu else sidebyside.time_reference)(
                case.reference, case.repeat, case.warmup)
            r_loom = recall(loom_ids(case, work), truth)
            r_ref = recall(reference_ids(), truth)
            ratio = ref / ours if ours > 0 else float("inf")
            print(f"{case.name:<40} {ours * 1e3:>8.2f}ms {ref * 1e3:>8.2f}ms {case.items / ours:>10.4g} "
                  f"{case.items / ref:>10.4g} {case.unit:<10} {ratio:>6.2f}x {r_loom:>10.4f} {r_ref:>11.4f}  "
                  f"[{res.get('impl', '?')}]")


if __name__ == "__main__":
    main()
