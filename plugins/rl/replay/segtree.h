/* SPDX-License-Identifier: BSD-3-Clause */
/*
** segtree.h - the sum and min segment trees of the prioritized sampler,
** laid out and evaluated as torchrl's (torchrl/csrc/segment_tree.h): an
** array of 2 * capacity values, capacity the smallest power of two larger
** than the size, leaf i at capacity | i, each parent op(left, right) in the
** tree's own precision, so sums and lower-bound scans round as torchrl's do.
** f32 (torchrl's default, PrioritizedSampler(dtype=torch.float)) or f64.
*/
#ifndef LOOM_RL_SEGTREE_H
#define LOOM_RL_SEGTREE_H

#include <stddef.h>
#include <stdint.h>

typedef struct rl_segtree {
    int64_t size, capacity;
    int f64;                    /* 1: double values, else float */
    int is_min;                 /* identity +inf and op min, else 0 and + */
    void *values;               /* 2 * capacity */
} rl_segtree;

/* 0, or -1 when out of memory. */
int rl_segtree_init(rl_segtree *t, int64_t size, int f64, int is_min);
void rl_segtree_free(rl_segtree *t);
/* Every leaf back to the identity. */
void rl_segtree_clear(rl_segtree *t);

double rl_segtree_at(const rl_segtree *t, int64_t index);
/* Set leaf index to value (rounded to the tree's precision) and its parents. */
void rl_segtree_update(rl_segtree *t, int64_t index, double value);
/* op over leaves [l, r), l < r; the root when the range covers the size. */
double rl_segtree_query(const rl_segtree *t, int64_t l, int64_t r);
/* Sum trees: the first index whose prefix sum reaches value (torchrl's
** ScanLowerBound; value is first rounded to the tree's precision); size when
** value exceeds the total. */
int64_t rl_segtree_scan_lower_bound(const rl_segtree *t, double value);
/* The same for n values at once (the scans of a group interleaved level by
** level, so their cache misses overlap); results equal n single scans. */
void rl_segtree_scan_lower_bound_batch(const rl_segtree *t, const double *value, int64_t n, int64_t *out);
/* n leaf updates (value[n], or one value for all when n_value is 1), then
** their ancestors level by level; the tree equals n single updates'. */
void rl_segtree_update_batch(rl_segtree *t, const int64_t *index, int64_t n, const double *value, int64_t n_value);
/* Rebuild every parent from the leaves (after writing leaves directly). */
void rl_segtree_rebuild(rl_segtree *t);

#endif /* LOOM_RL_SEGTREE_H */
