/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_sort.h - the two index orders the NMS ops need, reproduced exactly:
**  - bx_order_desc_stable: indices by decreasing key, ties by increasing
**    index (the order torchvision's nms kernel visits boxes in);
**  - bx_order_desc_introsort: the order torch's CPU Tensor.sort(descending=
**    True) gives, i.e. libstdc++'s std::sort (introsort + final insertion
**    sort) on (value, index) pairs with "NaN first, then greater first";
**    batched_nms's per-class path sorts its kept indices with it.
** Keys are doubles (f32 widens exactly); NaN counts as greater than any
** number and -0.0 equals 0.0, as torch's comparators have it.
*/
#ifndef LOOM_VISION_BOXES_SORT_H
#define LOOM_VISION_BOXES_SORT_H

#include <stdint.h>

/* A unsigned key whose increasing order is the decreasing order of v. */
uint64_t bx_desc_key(double v);

/* Stable LSD radix sort of (keys, vals) by increasing key. tmp_keys and
** tmp_vals hold n elements each. */
void bx_radix_sort(uint64_t *keys, int64_t *vals, int64_t n, uint64_t *tmp_keys, int64_t *tmp_vals);

/* libstdc++ std::sort replica on pairs (v[i], idx[i]), descending. */
typedef struct bx_pair { double v; int64_t idx; } bx_pair;
void bx_introsort_desc(bx_pair *a, int64_t n);

#endif /* LOOM_VISION_BOXES_SORT_H */
