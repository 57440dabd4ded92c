/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_formulas_cpu.h - boxes_formulas.inc instantiated for the cpu:
** bx_*_f32 compute in float (f32 and f16 boxes), bx_*_f64 in double.
*/
#ifndef LOOM_VISION_BOXES_FORMULAS_CPU_H
#define LOOM_VISION_BOXES_FORMULAS_CPU_H

#include <math.h>

#include "dtype_traits.h"

/* always inlined, as on the device: a kernel loop then hoists the format and
** f16 branches out of its inner loop; gcc otherwise calls bx_iou once it has
** callers of several box dtypes */
#define BX_HD static inline __attribute__((always_inline))

#include "boxes_formulas_all.inc"

#endif /* LOOM_VISION_BOXES_FORMULAS_CPU_H */
