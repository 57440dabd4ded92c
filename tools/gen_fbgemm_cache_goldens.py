#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the expected set placements for tests/fbgemm/cache/test_cache.c.

fbgemm_gpu places linear cache index h in set cache_slot(h, C)
(fbgemm_gpu/src/split_embeddings_cache/common.cuh): MurmurHash3's 64-bit
finaliser, then h % C. The CPU build of fbgemm_gpu has no cache (its
populate ops are empty), so the placement is recomputed here from the
formula with Python integers, independently of the C code under test, and
pasted into the test's `set_golden` table.

Usage: python3 tools/gen_fbgemm_cache_goldens.py
"""

MASK = (1 << 64) - 1


def cache_slot(h: int, c: int) -> int:
    h &= MASK
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    h ^= h >> 33
    return h % c


CASES = [(0, 7), (1, 7), (2, 7), (12345, 7), (999999, 31250), (8388607, 31250),
         (1 << 33, 1000), ((1 << 40) + 17, 65536), (42, 1), (7000001, 262144)]

if __name__ == "__main__":
    for h, c in CASES:
        print(f"    {{ INT64_C({h}), {c}u, {cache_slot(h, c)}u }},")
