/* SPDX-License-Identifier: BSD-3-Clause */
/*
** gemm_kern.h - the vector micro-kernels of the GEMM, written once for every
** ISA and element type. The including file (gemm_avx2.c, gemm_avx512.c)
** defines, then includes this header once per element type:
**
**   T, VT, VL        element type, vector type, lanes
**   KMR              rows of the micro-tile (NR is always 2 * VL)
**   KREGS            vector registers (16 or 32): sizes the small-M tiles
**   GK_NAME(x)       x with the ISA and type appended (unique names)
**   VZERO() VLOAD(p) VSTORE(p, v) VBCAST(p) VSET1(x) VFMA(a, b, c) VMUL(a, b) VADD(a, b)
**
** It #undefs all of them but KREGS at its end, ready for the next type.
**
** The accumulators are named variables (c<row>_<vector>), not an array, so
** they live in registers; rows and vectors past the tile's size are under
** constant conditions that fold away once the always-inline bodies are
** specialised. See gemm_internal.h for the two kernel contracts.
*/

#define GK_NR (2 * VL)

/* X(r) for the 12 rows a micro-tile can have (KMR <= 12). */
#define GK_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
/* X(r, v) for the 8 vectors of columns a small-M tile can have. */
#define GK_VECS(X, r) X(r, 0) X(r, 1) X(r, 2) X(r, 3) X(r, 4) X(r, 5) X(r, 6) X(r, 7)

/* ------------------------------------------------------------ micro-kernel */

#define GK_U_DECL(r) VT c##r##_0 = VZERO(), c##r##_1 = VZERO();
#define GK_U_STEP(r)                                                                               \
    if (r < KMR) {                                                                                 \
        VT x = VBCAST(a + r);                                                                      \
        c##r##_0 = VFMA(x, b0, c##r##_0);                                                          \
        c##r##_1 = VFMA(x, b1, c##r##_1);                                                          \
    }
#define GK_U_STORE(r)                                                                              \
    if (r < KMR) {                                                                                 \
        T *row = c + r * ldc;                                                                      \
        VT o0 = VMUL(va, c##r##_0), o1 = VMUL(va, c##r##_1);                                       \
        if (beta != 0) {                                                                           \
            o0 = VFMA(vb, VLOAD(row), o0);                                                         \
            o1 = VFMA(vb, VLOAD(row + VL), o1);                                                    \
        }                                                                                          \
        VSTORE(row, o0);                                                                           \
        VSTORE(row + VL, o1);                                                                      \
    }

static void GK_NAME(ukr)(int64_t kc, const void *a_, const void *b_, void *c_, int64_t ldc, double alpha_,
                         double beta_, const void *pf_, int64_t pf_bytes)
{
    const T *a = a_, *b = b_;
    T *c = c_;
    const T beta = (T)beta_;
    /* C is written (and with beta read) at the end: start fetching it now */
    for (int r = 0; r < KMR; r++) {
        __builtin_prefetch(c + r * ldc, 1);
        __builtin_prefetch(c + r * ldc + GK_NR - 1, 1);
    }
    /* the prefetch range, into L2 at the rate B is read: one B row per step */
    const char *pf = pf_, *pf_end = pf_bytes > 0 ? pf + pf_bytes : pf;
    GK_ROWS(GK_U_DECL)
    _Pragma("GCC unroll 4")
    for (int64_t p = 0; p < kc; p++) {
        VT b0 = VLOAD(b), b1 = VLOAD(b + VL);
        if (pf < pf_end) {
            for (int l = 0; l < (int)(GK_NR * sizeof(T)) / 64; l++)
                __builtin_prefetch(pf + 64 * l, 0, 2);
            pf += GK_NR * sizeof(T);
        }
        GK_ROWS(GK_U_STEP)
        a += KMR;
        b += GK_NR;
    }
    VT va = VSET1((T)alpha_), vb = VSET1(beta);
    (void)vb;
    GK_ROWS(GK_U_STORE)
}

/* ---------------------------------------------------------- small-M tiles */

/* CV column vectors per block for R rows: R * CV accumulators, CV loaded
** B vectors and one broadcast within the registers, at most 8. One row
** needs no B registers (the loads fold into the FMAs): 8 vectors, a whole
** number of cache lines of a row of B. */
#define GK_CV(R) ((R) == 1 ? 8 : (KREGS - 1) / ((R) + 1) > 8 ? 8 : (KREGS - 1) / ((R) + 1))

#define GK_S_DECL(r, v) VT c##r##_##v = VZERO();
#define GK_S_DECLR(r) GK_VECS(GK_S_DECL, r)
#define GK_S_BPTR(r, v) const T *bp##v = v < CV ? b + ((j + v * VL) / GK_NR) * pstride + (j + v * VL) % GK_NR : b;
#define GK_S_BLOAD(r, v) VT bv##v = v < CV ? VLOAD(bp##v + p * ldb) : VZERO();
#define GK_S_FMA(r, v) if (v < CV) c##r##_##v = VFMA(x, bv##v, c##r##_##v);
#define GK_S_STEP(r)                                                                               \
    if (r < R) {                                                                                   \
        VT x = VBCAST(a + r * ars + p * acs);                                                      \
        GK_VECS(GK_S_FMA, r)                                                                       \
    }
#define GK_S_ST(r, v)                                                                              \
    if (v < CV) {                                                                                  \
        T *cp = c + r * ldc + j + v * VL;                                                          \
        VT o = VMUL(va, c##r##_##v);                                                               \
        if (beta != 0)                                                                             \
            o = VFMA(vb, VLOAD(cp), o);                                                            \
        VSTORE(cp, o);                                                                             \
    }
#define GK_S_STORE(r)                                                                              \
    if (r < R) {                                                                                   \
        GK_VECS(GK_S_ST, r)                                                                        \
    }

/* One block: rows [0, R) x columns [j, j + CV * VL), over the whole depth. */
__attribute__((always_inline))
static inline void GK_NAME(rows_block)(const int R, const int CV, int64_t k, const T *a, int64_t ars, int64_t acs,
                                       const T *b, int64_t ldb, int64_t pstride, int64_t j, T *c, int64_t ldc,
                                       T alpha, T beta)
{
    GK_ROWS(GK_S_DECLR)
    GK_VECS(GK_S_BPTR, 0)
    for (int64_t p = 0; p < k; p++) {
        GK_VECS(GK_S_BLOAD, 0)
        GK_ROWS(GK_S_STEP)
    }
    VT va = VSET1(alpha), vb = VSET1(beta);
    (void)vb;
    GK_ROWS(GK_S_STORE)
}

__attribute__((always_inline))
static inline void GK_NAME(rows_r)(const int R, int64_t k, const T *a, int64_t ars, int64_t acs, const T *b,
                                   int64_t ldb, int64_t pstride, int64_t ncols, T *c, int64_t ldc, T alpha, T beta)
{
    const int CVR = GK_CV(R);
    int64_t j = 0;
    for (; j + CVR * VL <= ncols; j += CVR * VL)
        GK_NAME(rows_block)(R, CVR, k, a, ars, acs, b, ldb, pstride, j, c, ldc, alpha, beta);
    for (; j + VL <= ncols; j += VL)
        GK_NAME(rows_block)(R, 1, k, a, ars, acs, b, ldb, pstride, j, c, ldc, alpha, beta);
}

#define GK_S_CASE(r)                                                                               \
    case r + 1:                                                                                    \
        if (r + 1 < KMR)                                                                           \
            GK_NAME(rows_r)(r + 1, k, a, ars, acs, b, ldb, pstride, ncols, c, ldc, alpha, beta);    \
        break;

static void GK_NAME(rows)(int rows, int64_t k, const void *a_, int64_t ars, int64_t acs, const void *b_,
                          int64_t ldb, int64_t pstride, int64_t ncols, void *c_, int64_t ldc, double alpha_,
                          double beta_)
{
    const T *a = a_, *b = b_;
    T *c = c_, alpha = (T)alpha_, beta = (T)beta_;
    switch (rows) {
        GK_ROWS(GK_S_CASE)
    default:
        break;
    }
}

/* ------------------------------------------------------------------ GEMV */

/* c[0, ncols) = alpha * sum_p a[p * acs] * b[p * ldb + j] + beta * c, ncols
** a multiple of VL, B row-major: eight rows of B at a time are streamed
** whole (eight sequential streams the prefetchers follow) into c, which
** stays in L1, instead of a column block walking every row of B. */
static void GK_NAME(gemv)(int64_t k, const void *a_, int64_t acs, const void *b_, int64_t ldb, int64_t ncols,
                          void *c_, double alpha_, double beta_)
{
    const T *a = a_, *b = b_;
    T *c = c_;
    const T alpha = (T)alpha_, beta = (T)beta_;
    if (beta == 0) {
        for (int64_t j = 0; j < ncols; j += VL)
            VSTORE(c + j, VZERO());
    } else if (beta != 1) {
        VT vb = VSET1(beta);
        for (int64_t j = 0; j < ncols; j += VL)
            VSTORE(c + j, VMUL(vb, VLOAD(c + j)));
    }
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
        const T *b0 = b + p * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        const T *b4 = b3 + ldb, *b5 = b4 + ldb, *b6 = b5 + ldb, *b7 = b6 + ldb;
        VT x0 = VSET1(alpha * a[p * acs]), x1 = VSET1(alpha * a[(p + 1) * acs]);
        VT x2 = VSET1(alpha * a[(p + 2) * acs]), x3 = VSET1(alpha * a[(p + 3) * acs]);
        VT x4 = VSET1(alpha * a[(p + 4) * acs]), x5 = VSET1(alpha * a[(p + 5) * acs]);
        VT x6 = VSET1(alpha * a[(p + 6) * acs]), x7 = VSET1(alpha * a[(p + 7) * acs]);
        for (int64_t j = 0; j < ncols; j += VL) {
            VT s0 = VFMA(x0, VLOAD(b0 + j), VLOAD(c + j));
            VT s1 = VMUL(x1, VLOAD(b1 + j));
            s0 = VFMA(x2, VLOAD(b2 + j), s0);
            s1 = VFMA(x3, VLOAD(b3 + j), s1);
            s0 = VFMA(x4, VLOAD(b4 + j), s0);
            s1 = VFMA(x5, VLOAD(b5 + j), s1);
            s0 = VFMA(x6, VLOAD(b6 + j), s0);
            s1 = VFMA(x7, VLOAD(b7 + j), s1);
            VSTORE(c + j, VADD(s0, s1));
        }
    }
    for (; p < k; p++) {
        const T *b0 = b + p * ldb;
        VT x0 = VSET1(alpha * a[p * acs]);
        for (int64_t j = 0; j < ncols; j += VL)
            VSTORE(c + j, VFMA(x0, VLOAD(b0 + j), VLOAD(c + j)));
    }
}

#undef GK_U_DECL
#undef GK_U_STEP
#undef GK_U_STORE
#undef GK_S_DECL
#undef GK_S_DECLR
#undef GK_S_BPTR
#undef GK_S_BLOAD
#undef GK_S_FMA
#undef GK_S_STEP
#undef GK_S_ST
#undef GK_S_STORE
#undef GK_S_CASE
#undef GK_CV
#undef GK_ROWS
#undef GK_VECS
#undef GK_NR
#undef T
#undef VT
#undef VL
#undef KMR
#undef GK_NAME
#undef VZERO
#undef VLOAD
#undef VSTORE
#undef VBCAST
#undef VSET1
#undef VFMA
#undef VMUL
#undef VADD
