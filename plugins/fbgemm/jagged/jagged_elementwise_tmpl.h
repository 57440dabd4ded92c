/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_elementwise_tmpl.h - the row kernels of the jagged element-wise
** ops for one dtype, included once per dtype by jagged_elementwise_cpu.c
** with PK_SFX set (dtype_traits.h): row_add_<sfx> (o = a + b) and
** row_mul_<sfx> (o = a * b) over n elements, a NULL operand row standing
** for zeros. Each result is computed in the compute type and rounded once
** to the storage type, as fbgemm's CPU kernels do (at::Half /
** at::BFloat16 arithmetic goes through float; f64 computes in double).
*/
#define JG_EW_ROW_(NAME, OP)                                                                       \
    static void PK_FN(NAME)(void *vo, const void *va, const void *vb, int64_t n)                   \
    {                                                                                              \
        PK_S(PK_SFX) *o = vo;                                                                      \
        const PK_S(PK_SFX) *a = va, *b = vb;                                                       \
        const PK_C(PK_SFX) zero = 0;                                                               \
        if (a != NULL && b != NULL)                                                                \
            for (int64_t i = 0; i < n; i++)                                                        \
                PK_ST(PK_SFX)(o + i, OP(PK_LD(PK_SFX)(a + i), PK_LD(PK_SFX)(b + i)));              \
        else if (a != NULL)                                                                        \
            for (int64_t i = 0; i < n; i++)                                                        \
                PK_ST(PK_SFX)(o + i, OP(PK_LD(PK_SFX)(a + i), zero));                              \
        else if (b != NULL)                                                                        \
            for (int64_t i = 0; i < n; i++)                                                        \
                PK_ST(PK_SFX)(o + i, OP(zero, PK_LD(PK_SFX)(b + i)));                              \
        else                                                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                PK_ST(PK_SFX)(o + i, OP(zero, zero));                                              \
    }
#define JG_EW_ADD_(x, y) ((x) + (y))
#define JG_EW_MUL_(x, y) ((x) * (y))

JG_EW_ROW_(row_add, JG_EW_ADD_)
JG_EW_ROW_(row_mul, JG_EW_MUL_)

#undef JG_EW_ROW_
#undef JG_EW_ADD_
#undef JG_EW_MUL_
#undef PK_SFX
