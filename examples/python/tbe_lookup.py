#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A table-batched embedding lookup (fbgemm_gpu's TBE) on NumPy arrays:
three embedding tables written to a safetensors file, a loom.Object over it,
pooled (sum) lookups of a batch of bags, checked against NumPy.

    LOOM_LIBRARY=build/core/libloom.so.0 PYTHONPATH=python python3 examples/python/tbe_lookup.py
"""
import json
import os
import struct
import tempfile

import numpy as np

import loom


def write_safetensors(path, tensors):
    """The safetensors format: a little-endian u64 header size, a JSON header, the data."""
    header, offset, blobs = {}, 0, []
    for name, a in tensors.items():
        blob = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


rng = np.random.default_rng(0)
rows, dims = [100, 50, 200], [8, 4, 16]
tables = {f"table.{t}": rng.standard_normal((rows[t], dims[t])).astype(np.float32) for t in range(3)}
batch = 4
# every feature's bags, feature-major: offsets [T*B+1] into indices
lengths = rng.integers(0, 5, size=3 * batch)
offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
indices = np.concatenate([rng.integers(0, rows[t], size=lengths[t * batch:(t + 1) * batch].sum())
                          for t in range(3)]).astype(np.int64)

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "tables.safetensors")
    write_safetensors(path, tables)
    with loom.Object("fbgemm.tbe", weights=path, pooling_mode="sum") as tbe:
        pooled = tbe(indices, offsets)                  # [B, sum(D)], a NumPy array
        stats = tbe.tbe_cache_stats()

want = np.zeros((batch, sum(dims)), np.float32)
for t in range(3):
    for b in range(batch):
        bag = indices[offsets[t * batch + b]:offsets[t * batch + b + 1]]
        want[b, sum(dims[:t]):sum(dims[:t + 1])] = tables[f"table.{t}"][bag].sum(axis=0)
print(f"pooled {pooled.shape} {type(pooled).__name__}, max |loom - numpy| = {np.abs(pooled - want).max():.2e}")
print(f"cache counters: {np.from_dlpack(stats).tolist()}")
