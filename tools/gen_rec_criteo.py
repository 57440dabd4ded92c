#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write a small Criteo Kaggle-layout TSV and the rec.criteo_reader goldens to tests/data/rec/criteo/.

day_0.tsv: ROWS lines of label, 13 integer features and 26 categorical features
(8-digit hex, some upper case), tab-separated, with empty fields in every column and
negative integers, as the real logs have.

Goldens from torchrec 1.9 itself: torchrec.datasets.criteo.BinaryCriteoUtils.tsv_to_npys
parses day_0.tsv (CriteoIterDataPipe over the file: it runs offline) into
  tsv_dense.npy   f32 [ROWS,13]  log(x - min + 2): the reader's dense_transform=shift_min
  tsv_sparse.npy  i64 [ROWS,26]  the ids, an empty field read as 0: missing=zero
  tsv_labels.npy  i32 [ROWS,1]
and the ids mod HASHES as InMemoryBinaryCriteoIterDataPipe hashes them
(sparse_arr %= hashes) in hashed_sparse.npy. torchrec has no log1p transform
nor empty-field lengths, so these two come from the documented formulas in numpy:
  log1p_dense.npy  f32 [ROWS,13]  log(max(x,0) + 1) in float64, rounded once
  present.npy      u8 [ROWS,26]   1 where the categorical field is not empty
hashes.txt holds HASHES for the test (one line, comma-separated).

    .venv-rec/bin/python tools/gen_rec_criteo.py [OUTDIR]
"""
import os
import sys

import numpy as np
from torchrec.datasets.criteo import BinaryCriteoUtils

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "rec", "criteo")
ROWS = 200
RNG = np.random.default_rng(20261201)
HASHES = [int(h) for h in RNG.integers(2, 100000, size=26)]


def field_int(v, empty):
    return "" if empty else str(v)


def main():
    os.makedirs(OUT, exist_ok=True)
    lines = []
    present = np.ones((ROWS, 26), dtype=np.uint8)
    dense_raw = np.zeros((ROWS, 13), dtype=np.int64)
    for r in range(ROWS):
        label = int(RNG.integers(0, 2))
        fields = [str(label)]
        for j in range(13):
            empty = RNG.random() < 0.15
            v = int(RNG.integers(-3, 5000)) if RNG.random() < 0.9 else int(RNG.integers(0, 2**20))
            dense_raw[r, j] = 0 if empty else v
            fields.append(field_int(v, empty))
        for k in range(26):
            empty = RNG.random() < 0.1
            present[r, k] = 0 if empty else 1
            h = "%08x" % int(RNG.integers(0, 2**32))
            if RNG.random() < 0.2:
                h = h.upper()
            fields.append("" if empty else h)
        lines.append("\t".join(fields))
    tsv = os.path.join(OUT, "day_0.tsv")
    with open(tsv, "w") as f:
        f.write("\n".join(lines) + "\n")

    tmp = os.path.join(OUT, "tsv")
    BinaryCriteoUtils.tsv_to_npys(tsv, tmp + "_dense.npy", tmp + "_sparse.npy", tmp + "_labels.npy",
                                  dataset_name="criteo_1tb")  # "test" in the path would fake the labels
    sparse = np.load(tmp + "_sparse.npy")
    np.save(os.path.join(OUT, "hashed_sparse.npy"), (sparse % np.array(HASHES).reshape(1, 26)).astype(np.int64))
    log1p = np.log(np.maximum(dense_raw, 0).astype(np.float64) + 1.0).astype(np.float32)
    np.save(os.path.join(OUT, "log1p_dense.npy"), log1p)
    np.save(os.path.join(OUT, "present.npy"), present)
    with open(os.path.join(OUT, "hashes.txt"), "w") as f:
        f.write(",".join(str(h) for h in HASHES) + "\n")


if __name__ == "__main__":
    main()
