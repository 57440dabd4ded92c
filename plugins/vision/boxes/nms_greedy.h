/* SPDX-License-Identifier: BSD-3-Clause */
/*
** nms_greedy.h - the greedy suppression pass shared by vision.nms and
** vision.batched_nms on the CPU.
**
** Boxes arrive in visiting order (decreasing score) as structure-of-arrays
** of the box dtype, with area = (x2 - x1) * (y2 - y1) rounded in that
** dtype. The pass keeps box i unless an earlier kept box suppressed it, and
** a kept box suppresses every later box j whose IoU, computed exactly as
** torchvision's CPU kernel does (std::max / std::min, w = max(0, xx2 - xx1),
** ovr = inter / (area_i + area_j - inter) in the box dtype), is greater
** than iou_threshold. Suppressing an already suppressed box again changes
** nothing, so the vector loops test whole blocks of 8 without skipping.
**
** Arrays must be readable 8 elements past n (padding is ignored).
*/
#ifndef LOOM_VISION_NMS_GREEDY_H
#define LOOM_VISION_NMS_GREEDY_H

#include "boxes.h"

typedef struct bx_soa {
    loom_dtype dtype;               /* f32 or f64 */
    void *x1, *y1, *x2, *y2, *area; /* n (+ 8 padding) elements each */
} bx_soa;

/* Element size of a soa's dtype. */
static inline size_t bx_soa_esize(const bx_soa *s) { return s->dtype == LOOM_DTYPE_F64 ? 8 : 4; }

/* Point s at `count` (+ 8) elements of each array in `buf` (64-byte aligned
** chunks); returns the bytes used. With buf NULL only the size is returned. */
size_t bx_soa_layout(bx_soa *s, loom_dtype dtype, int64_t count, void *buf);

/* Store box `b` (x1, y1, x2, y2 as double, exact in the dtype) at position p. */
void bx_soa_set(const bx_soa *s, int64_t p, const double b[4]);
/* The same from a box row of the soa's dtype. */
void bx_soa_set_raw(const bx_soa *s, int64_t p, const void *row);

/* Greedy pass over positions [0, n) of s (offset by `base`): writes kept
** positions (relative to base) in increasing order to keep[], returns their
** count. bits: (n + 7) / 8 bytes of scratch. With ctx non-NULL the
** suppression of later blocks is spread over the core's threads. */
int64_t bx_nms_greedy(const bx_soa *s, int64_t base, int64_t n, double iou_threshold, uint8_t *bits,
                      int64_t *keep, loom_exec_ctx *ctx);

#endif /* LOOM_VISION_NMS_GREEDY_H */
