/*
** boxes_formulas_cpu.h - boxes_formulas.inc instantiated for the cpu:
** bx_*_f32 compute in float (f32 and f16 boxes), bx_*_f64 in double.
** f16 rounding goes through the pack's round-to-nearest-even converters.
*/
#ifndef LOOM_VISION_BOXES_FORMULAS_CPU_H
#define LOOM_VISION_BOXES_FORMULAS_CPU_H

#include <math.h>

#include "half.h"

#define BX_HD static inline
#define BX_HALF(x) pk_f16_to_f32(pk_f32_to_f16((float)(x)))

#include "boxes_formulas_all.inc"

#endif /* LOOM_VISION_BOXES_FORMULAS_CPU_H */
