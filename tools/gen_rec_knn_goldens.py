#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the golden data of rec.knn_index to tests/data/rec/knn/.

faiss-cpu (the Python package index) makes three small indexes, writes each
with faiss.write_index, and searches it; loom must read those files and find
the same neighbours:

  flat_ip    an IndexIDMap over an IndexFlatIP, 200 vectors of D = 16 with
             ids 1000 + 3 i, k = 10 (exact)
  ivfpq_l2   an IndexIVFPQ over an IndexFlatL2 (nlist 8, m 4, nbits 6) of
             1000 clustered vectors numbered by faiss, nprobe 3, k = 10
  ivfpq_ip   the same with METRIC_INNER_PRODUCT and ids 5 i + 7, nprobe 2

Files: <name>.faissindex, <name>.queries.npy (f32 [8, 16]),
<name>.ids.npy (i64 [8, 10]) and <name>.scores.npy (f32 [8, 10]), and
cases.inc: CASE(name, nprobe, k) (nprobe 0: not an IVF index).

    .venv-faiss/bin/python tools/gen_rec_knn_goldens.py [OUTDIR]
"""
import os
import sys

import faiss
import numpy as np

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "knn")
D, Q, K = 16, 8, 10


def clustered(rng, n, centers):
    """n vectors around len(centers) centres: what an IVF index is for."""
    which = rng.integers(0, len(centers), n)
    return (centers[which] + 0.1 * rng.standard_normal((n, D))).astype(np.float32)


def write(name, index, queries, nprobe, cases):
    if nprobe:
        index.nprobe = nprobe
    faiss.write_index(index, os.path.join(OUT, f"{name}.faissindex"))
    scores, ids = index.search(queries, K)
    np.save(os.path.join(OUT, f"{name}.queries.npy"), queries)
    np.save(os.path.join(OUT, f"{name}.ids.npy"), ids.astype(np.int64))
    np.save(os.path.join(OUT, f"{name}.scores.npy"), scores.astype(np.float32))
    cases.append(f"CASE({name}, {nprobe}, {K})")


def main():
    os.makedirs(OUT, exist_ok=True)
    faiss.omp_set_num_threads(1)
    rng = np.random.default_rng(19)
    cases = []

    items = rng.standard_normal((200, D)).astype(np.float32)
    flat = faiss.IndexIDMap(faiss.IndexFlatIP(D))
    flat.add_with_ids(items, 1000 + 3 * np.arange(200, dtype=np.int64))
    write("flat_ip", flat, rng.standard_normal((Q, D)).astype(np.float32), 0, cases)

    centers = rng.standard_normal((12, D)).astype(np.float32)
    items = clustered(rng, 1000, centers)
    ivf = faiss.IndexIVFPQ(faiss.IndexFlatL2(D), D, 8, 4, 6)
    ivf.pq.cp.min_points_per_centroid = 10   # 1000 points for 64 centroids: enough here, without the warning
    ivf.train(items)
    ivf.add(items)
    write("ivfpq_l2", ivf, clustered(rng, Q, centers), 3, cases)

    items = clustered(rng, 1000, centers)
    ivf = faiss.IndexIVFPQ(faiss.IndexFlatIP(D), D, 8, 4, 6, faiss.METRIC_INNER_PRODUCT)
    ivf.pq.cp.min_points_per_centroid = 10
    ivf.train(items)
    ivf.add_with_ids(items, 5 * np.arange(1000, dtype=np.int64) + 7)
    write("ivfpq_ip", ivf, clustered(rng, Q, centers), 2, cases)

    with open(os.path.join(OUT, "cases.inc"), "w") as f:
        f.write(f"/* written by tools/gen_rec_knn_goldens.py (faiss {faiss.__version__}) */\n")
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main()
