/*
** boxes_formulas_cpu.h - boxes_formulas.inc instantiated for the cpu:
** bx_*_f32 compute in float (f32 and f16 boxes), bx_*_f64 in double.
*/
#ifndef LOOM_VISION_BOXES_FORMULAS_CPU_H
#define LOOM_VISION_BOXES_FORMULAS_CPU_H

#include <math.h>

#include "dtype_traits.h"

#define BX_HD static inline

#include "boxes_formulas_all.inc"

#endif /* LOOM_VISION_BOXES_FORMULAS_CPU_H */
