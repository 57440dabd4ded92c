/* SPDX-License-Identifier: BSD-3-Clause */
/*
** dtype_traits.h - the one table of element types the packs' kernels are
** instantiated over, shared by every pack (C, C++ and CUDA alike).
**
** PK_FLOAT_DTYPES(X) calls X(sfx, DTYPE, S, C) once per float dtype:
**   sfx    the name suffix (f32, f64, f16, bf16)
**   DTYPE  its loom_dtype (LOOM_DTYPE_F32, ...)
**   S      the storage type of one element
**   C      the compute type: the type torch's CPU kernels do the arithmetic
**          in (at::Half and at::BFloat16 arithmetic goes through float)
** PK_INT_DTYPES(X) does the same for the integer dtypes kernels index
** with (C is int64_t for all of them).
**
** Per suffix the table gives (all token-pasted from sfx, so a template body
** names them through PK_S(PK_SFX) etc. and stays greppable):
**   pk_s_<sfx>, pk_c_<sfx>    the storage and compute types
**   pk_ld_<sfx>(p)            *p as the compute type (exact)
**   pk_st_<sfx>(p, v)         store a compute value, rounded to nearest even
**   pk_to_<sfx>(v)            a compute value as storage (rounded)
**   pk_rnd_<sfx>(v)           v rounded to the storage's precision and back
**                             (identity unless S is narrower than C): what
**                             every c10::Half operation does to its result
**   PK_NARROW_<sfx>           1 when S is narrower than C (usable in #if)
**   PK_DTYPE_<sfx>            the loom_dtype (PK_DTYPE(sfx): typed as one)
**
** Re-included templates: a file that holds a kernel body for one dtype is
** included once per dtype with PK_SFX defined; it reads its types through
** PK_S(PK_SFX), PK_C(PK_SFX), ..., names its functions PK_FN(name) (name_sfx)
** and #undefs PK_SFX (and its own macros) at its end, ready for the next:
**     #define PK_SFX f32
**     #include "roi_cpu_tmpl.h"
**     #define PK_SFX f64
**     #include "roi_cpu_tmpl.h"
**
** pk_ld_any(d, p, i) and pk_rnd_any(d, v) load and round one element of
** a float dtype known only at run time (as doubles).
**
** Rounding contract: pk_to_f16 / pk_to_bf16 round to nearest even as torch's
** Tensor.half() / Tensor.bfloat16() do on CPU (half.h gives the NaN rules).
*/
#ifndef LOOM_PACK_DTYPE_TRAITS_H
#define LOOM_PACK_DTYPE_TRAITS_H

#include <stdint.h>

#include "half.h"
#include "loom/plugin.h"

#ifdef __CUDACC__
#define PK_DT_FN __host__ __device__ static inline
#else
#define PK_DT_FN static inline
#endif

/* ------------------------------------------------------------ the table */

#define PK_FLOAT_DTYPES(X)                      \
    X(f32, LOOM_DTYPE_F32, float, float)        \
    X(f64, LOOM_DTYPE_F64, double, double)      \
    X(f16, LOOM_DTYPE_F16, uint16_t, float)     \
    X(bf16, LOOM_DTYPE_BF16, uint16_t, float)

#define PK_INT_DTYPES(X)                        \
    X(i8, LOOM_DTYPE_I8, int8_t, int64_t)       \
    X(u8, LOOM_DTYPE_U8, uint8_t, int64_t)      \
    X(i16, LOOM_DTYPE_I16, int16_t, int64_t)    \
    X(i32, LOOM_DTYPE_I32, int32_t, int64_t)    \
    X(i64, LOOM_DTYPE_I64, int64_t, int64_t)

#define PK_NARROW_f32 0
#define PK_NARROW_f64 0
#define PK_NARROW_f16 1
#define PK_NARROW_bf16 1

/* ------------------------------------------------------------ accessors */

#define PK_CAT_(a, b) a##b
#define PK_CAT(a, b) PK_CAT_(a, b)
#define PK_CAT3(a, b, c) PK_CAT(PK_CAT(a, b), c)

#define PK_S(sfx) PK_CAT(pk_s_, sfx)
#define PK_C(sfx) PK_CAT(pk_c_, sfx)
#define PK_LD(sfx) PK_CAT(pk_ld_, sfx)
#define PK_ST(sfx) PK_CAT(pk_st_, sfx)
#define PK_TO(sfx) PK_CAT(pk_to_, sfx)
#define PK_RND(sfx) PK_CAT(pk_rnd_, sfx)
#define PK_NARROW(sfx) PK_CAT(PK_NARROW_, sfx)
/* typed: PK_DTYPE_<sfx> is a constant of an anonymous enum */
#define PK_DTYPE(sfx) ((loom_dtype)PK_CAT(PK_DTYPE_, sfx))
/* name_sfx for the template being instantiated (PK_SFX) */
#define PK_FN(name) PK_CAT3(name, _, PK_SFX)

/* ------------------------------------------------ what the table defines */

#define PK_DT_TYPES_(sfx, DTYPE, S, C) \
    typedef S pk_s_##sfx;              \
    typedef C pk_c_##sfx;              \
    enum { PK_DTYPE_##sfx = DTYPE };
PK_FLOAT_DTYPES(PK_DT_TYPES_)
PK_INT_DTYPES(PK_DT_TYPES_)
#undef PK_DT_TYPES_

/* Types whose storage is their compute type: load and store are plain. */
#define PK_DT_PLAIN_(sfx)                                                    \
    PK_DT_FN pk_c_##sfx pk_ld_##sfx(const pk_s_##sfx *p) { return *p; }      \
    PK_DT_FN pk_s_##sfx pk_to_##sfx(pk_c_##sfx v) { return (pk_s_##sfx)v; }  \
    PK_DT_FN void pk_st_##sfx(pk_s_##sfx *p, pk_c_##sfx v) { *p = (pk_s_##sfx)v; } \
    PK_DT_FN pk_c_##sfx pk_rnd_##sfx(pk_c_##sfx v) { return v; }
PK_DT_PLAIN_(f32)
PK_DT_PLAIN_(f64)
PK_DT_PLAIN_(i8)
PK_DT_PLAIN_(u8)
PK_DT_PLAIN_(i16)
PK_DT_PLAIN_(i32)
PK_DT_PLAIN_(i64)
#undef PK_DT_PLAIN_

/* 16-bit floats: half.h's conversions (device code has its own, below). */
#ifndef __CUDACC__
PK_DT_FN float pk_ld_f16(const uint16_t *p) { return pk_f16_to_f32(*p); }
PK_DT_FN uint16_t pk_to_f16(float v) { return pk_f32_to_f16(v); }
PK_DT_FN float pk_ld_bf16(const uint16_t *p) { return pk_bf16_to_f32(*p); }
PK_DT_FN uint16_t pk_to_bf16(float v) { return pk_f32_to_bf16(v); }
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
PK_DT_FN float pk_ld_f16(const uint16_t *p) { return __half2float(__ushort_as_half(*p)); }
PK_DT_FN uint16_t pk_to_f16(float v) { return __half_as_ushort(__float2half_rn(v)); }
PK_DT_FN float pk_ld_bf16(const uint16_t *p) { return __bfloat162float(__ushort_as_bfloat16(*p)); }
PK_DT_FN uint16_t pk_to_bf16(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
#endif
PK_DT_FN void pk_st_f16(uint16_t *p, float v) { *p = pk_to_f16(v); }
PK_DT_FN void pk_st_bf16(uint16_t *p, float v) { *p = pk_to_bf16(v); }
PK_DT_FN float pk_rnd_f16(float v) { uint16_t h = pk_to_f16(v); return pk_ld_f16(&h); }
PK_DT_FN float pk_rnd_bf16(float v) { uint16_t h = pk_to_bf16(v); return pk_ld_bf16(&h); }

/* --------------------------------------- one element, dtype known at run time */

/* For code that meets the dtype only at run time, one element at a time
** (argument checks, host-side scalars, the odd value a kernel reads
** before its per-dtype loops); kernels instantiate templates instead.
**   pk_ld_any(d, p, i)   element i of float array p of dtype d, as a
**                        double (exact)
**   pk_rnd_any(d, v)     v rounded to d's precision (through its compute
**                        type, as pk_rnd_<sfx> does), as a double
** Both give 0 for a dtype outside PK_FLOAT_DTYPES. */
PK_DT_FN double pk_ld_any(loom_dtype d, const void *p, int64_t i)
{
    switch (d) {
#define PK_DT_LD_ANY_(sfx, DTYPE, S, C) \
    case DTYPE:                         \
        return (double)pk_ld_##sfx((const S *)p + i);
        PK_FLOAT_DTYPES(PK_DT_LD_ANY_)
#undef PK_DT_LD_ANY_
    default:
        return 0;
    }
}

PK_DT_FN double pk_rnd_any(loom_dtype d, double v)
{
    switch (d) {
#define PK_DT_RND_ANY_(sfx, DTYPE, S, C) \
    case DTYPE:                          \
        return (double)pk_rnd_##sfx((C)v);
        PK_FLOAT_DTYPES(PK_DT_RND_ANY_)
#undef PK_DT_RND_ANY_
    default:
        return 0;
    }
}

/* ------------------------------------------------------ dtype masks, index */

#define PK_DT_BIT_(sfx, DTYPE, S, C) | LOOM_DTYPE_BIT(DTYPE)
/* every float dtype of the table, as a kernel's or schema's dtype mask */
#define PK_FLOAT_MASK (0 PK_FLOAT_DTYPES(PK_DT_BIT_))
#define PK_F32_F64 (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))

/* Index of a float dtype in PK_FLOAT_DTYPES order (f32 0, f64 1, f16 2,
** bf16 3), -1 for any other: the index of per-dtype function tables built
** with the same X-macro. */
PK_DT_FN int pk_float_index(loom_dtype d)
{
    int i = 0;
#define PK_DT_INDEX_(sfx, DTYPE, S, C) \
    if (d == DTYPE)                    \
        return i;                      \
    i++;
    PK_FLOAT_DTYPES(PK_DT_INDEX_)
#undef PK_DT_INDEX_
    return -1;
}

#endif /* LOOM_PACK_DTYPE_TRAITS_H */
