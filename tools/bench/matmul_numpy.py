#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""NumPy's matmul (its BLAS) on the shapes of bench_matmul (M x K x N: 256,
512, 1024, 2048 square, 1x1024x1024, 64x4096x1024), f32, as a reference:
best time of repeated runs for at least 0.4 s per shape. The BLAS's thread
count is its own (set OPENBLAS_NUM_THREADS / OMP_NUM_THREADS=1 or 2 to
match a row of bench_matmul).

    .venv/bin/python tools/bench/matmul_numpy.py
"""
import time

import numpy as np

SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
          (1, 1024, 1024), (64, 4096, 1024)]


def main():
    print(f"numpy {np.__version__}")
    print(f"{'MxKxN':>16} {'numpy GFLOP/s':>14}")
    for m, k, n in SHAPES:
        a = (np.arange(m * k, dtype=np.float32).reshape(m, k) * 7 % 13) / 13 - 0.5
        b = (np.arange(k * n, dtype=np.float32).reshape(k, n) * 5 % 11) / 11 - 0.5
        a, b = a.astype(np.float32), b.astype(np.float32)
        c = np.empty((m, n), dtype=np.float32)
        np.matmul(a, b, out=c)
        best, start, reps = 1e30, time.perf_counter(), 0
        while reps < 3 or time.perf_counter() - start < 0.4:
            t0 = time.perf_counter()
            np.matmul(a, b, out=c)
            best = min(best, time.perf_counter() - t0)
            reps += 1
        print(f"{f'{m}x{k}x{n}':>16} {2 * m * n * k / best * 1e-9:>14.1f}")


if __name__ == "__main__":
    main()
