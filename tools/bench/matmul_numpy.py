#!/usr/bin/env python3
"""NumPy's matmul (its BLAS) on the sizes of bench_matmul, f32, as a
reference: best time of repeated runs for at least 0.5 s per size.

    .venv/bin/python tools/bench/matmul_numpy.py
"""
import time

import numpy as np


def main():
    print(f"numpy {np.__version__}")
    print(f"{'size':>6} {'numpy GFLOP/s':>14}")
    for n in (256, 512, 1024, 2048):
        a = (np.arange(n * n, dtype=np.float32).reshape(n, n) % 13) / 13 - 0.5
        b = (np.arange(n * n, dtype=np.float32).reshape(n, n) % 11) / 11 - 0.5
        c = np.empty((n, n), dtype=np.float32)
        np.matmul(a, b, out=c)
        best, start, reps = 1e30, time.perf_counter(), 0
        while reps < 3 or time.perf_counter() - start < 0.5:
            t0 = time.perf_counter()
            np.matmul(a, b, out=c)
            best = min(best, time.perf_counter() - t0)
            reps += 1
        print(f"{n:>6} {2 * n ** 3 / best * 1e-9:>14.1f}")


if __name__ == "__main__":
    main()
