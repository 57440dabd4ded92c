/*
** jagged_dtypes.h - the dtype table the arithmetic jagged kernels are
** instantiated from: JG_FLOAT_TYPES(X) calls X(suffix, storage type,
** compute type, load, store) once per float dtype. 16-bit dtypes compute
** in float and round to nearest even once per result, as fbgemm's CPU
** kernels do (at::Half / at::BFloat16 arithmetic goes through float);
** f64 computes in double.
*/
#ifndef LOOM_FBGEMM_JAGGED_DTYPES_H
#define LOOM_FBGEMM_JAGGED_DTYPES_H

#include <string.h>

#include "half.h"

static inline float jg_ld_f32(const float *p) { return *p; }
static inline void jg_st_f32(float *p, float v) { *p = v; }
static inline double jg_ld_f64(const double *p) { return *p; }
static inline void jg_st_f64(double *p, double v) { *p = v; }
static inline float jg_ld_f16(const uint16_t *p) { return pk_f16_to_f32(*p); }
static inline void jg_st_f16(uint16_t *p, float v) { *p = pk_f32_to_f16(v); }
static inline float jg_ld_bf16(const uint16_t *p) { return pk_bf16_to_f32(*p); }
static inline void jg_st_bf16(uint16_t *p, float v) { *p = pk_f32_to_bf16(v); }

#define JG_FLOAT_TYPES(X)                               \
    X(f32, float, float, jg_ld_f32, jg_st_f32)          \
    X(f64, double, double, jg_ld_f64, jg_st_f64)        \
    X(f16, uint16_t, float, jg_ld_f16, jg_st_f16)       \
    X(bf16, uint16_t, float, jg_ld_bf16, jg_st_bf16)

/* Index of a float dtype in JG_FLOAT_TYPES order, -1 for others. */
static inline int jg_float_index(loom_dtype d)
{
    switch (d) {
    case LOOM_DTYPE_F32: return 0;
    case LOOM_DTYPE_F64: return 1;
    case LOOM_DTYPE_F16: return 2;
    case LOOM_DTYPE_BF16: return 3;
    default: return -1;
    }
}

#endif
