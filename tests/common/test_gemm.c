/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_gemm.c - plugins/common/gemm (gemm.h) against a naive reference in
** double precision, on every ISA path the CPU has: scalar always, AVX2+FMA
** and AVX-512F when present (else that test skips, saying so).
**
** Cases: every (M, N) in {1,2,3,5,7,8,15,16,17,63,64,65} with K cycling
** through the same set and through 0, each with a random mix of transposes,
** strides, alpha/beta, epilogue and input dtypes; big shapes that cross the
** KC slices, the MC blocks, the small-M path and the batch-per-task path;
** pre-packed A and B; the serial form with its workspace; beta == 0 over a
** C full of NaN.
**
** Tolerance, per element (Higham, Accuracy and Stability, 3.5): a sum of K
** products in any order is within gamma_K * sum_p |a_ip||b_pj| of the exact
** one, gamma_K ~ K*u (u = 2^-24 f32, 2^-53 f64); alpha, beta and the bias
** add a few roundings more: bound = (K + 4) * u * (|alpha| mag + |beta c| +
** |bias|). The activations are 1.13-Lipschitz at most (GELU; ReLU and SiLU
** less), so the bound is scaled by 1.2, and libm's tanh/erf/exp adds a few
** ulps of the result: + 8 u |result|; the residual add one more u |result|.
** bf16 / f16 inputs are compared with the reference on the same rounded
** values (they are exact in f32), so the f32 bound holds for them too.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cpu.h"
#include "gemm.h"
#include "gemm_internal.h"
#include "half.h"

/* ------------------------------------------------------------ mock host */

#define MAX_BLOCKS 64
static void *blocks[MAX_BLOCKS];
static int n_blocks;

static void *mock_scratch(loom_exec_ctx *ctx, size_t n)
{
    (void)ctx;
    if (n_blocks == MAX_BLOCKS)
        return NULL;
    void *p = NULL;
    if (posix_memalign(&p, 64, n > 0 ? n : 64) != 0)
        return NULL;
    blocks[n_blocks++] = p;
    return p;
}

static void scratch_release(void)
{
    for (int i = 0; i < n_blocks; i++)
        free(blocks[i]);
    n_blocks = 0;
}

typedef struct half_job { loom_range_fn fn; void *user; int64_t b, e; } half_job;

static void *run_half(void *p)
{
    half_job *h = p;
    h->fn(h->user, h->b, h->e, 1);
    return NULL;
}

/* Two real threads: the second half of the range on a new thread. */
static loom_status mock_parallel_for(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user)
{
    (void)ctx;
    if (n <= 0)
        return LOOM_OK;
    if (n < 2 || n < 2 * grain) {
        fn(user, 0, n, 0);
        return LOOM_OK;
    }
    pthread_t th;
    half_job h = { fn, user, n / 2, n };
    if (pthread_create(&th, NULL, run_half, &h) != 0) {
        fn(user, 0, n, 0);
        return LOOM_OK;
    }
    fn(user, 0, n / 2, 0);
    pthread_join(th, NULL);
    return LOOM_OK;
}

static loom_status mock_fail(loom_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return st;
}

static const char *mock_dtype_name(loom_dtype d) { return d == LOOM_DTYPE_F64 ? "f64" : "other"; }

static loom_host_api host;
static loom_exec_ctx ctx;

static void mock_init(void)
{
    host.struct_size = sizeof host;
    host.scratch = mock_scratch;
    host.parallel_for = mock_parallel_for;
    host.fail = mock_fail;
    host.dtype_name = mock_dtype_name;
    ctx.struct_size = sizeof ctx;
    ctx.n_threads = 2;
    ctx.host = &host;
}

/* ------------------------------------------------------------ reference */

static uint64_t rng = 88172645463325252ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53 * 2.0 - 1.0; }
static int64_t pick(int64_t n) { return (int64_t)(next_u64() % (uint64_t)n); }

/* A random matrix stored in dtype dt, and its values (as the GEMM sees them) in double. */
typedef struct mat {
    void *data;
    double *val;
    loom_dtype dt;
    int64_t rows, cols, rs, cs, bs, batch;
} mat;

static size_t dsize(loom_dtype d) { return d == LOOM_DTYPE_F64 ? 8 : d == LOOM_DTYPE_F32 ? 4 : 2; }

/* rows x cols per entry, batch entries; transposed storage when trans,
** with a padding of `pad` elements per line. */
static mat mat_new(loom_dtype dt, int64_t batch, int64_t rows, int64_t cols, int trans, int64_t pad)
{
    mat x = { .dt = dt, .rows = rows, .cols = cols, .batch = batch };
    int64_t lines = trans ? cols : rows, len = (trans ? rows : cols) + pad;
    x.rs = trans ? 1 : len;
    x.cs = trans ? len : 1;
    x.bs = lines * len + 3;
    int64_t total = batch * x.bs + 1;
    x.data = calloc((size_t)total, dsize(dt));
    x.val = calloc((size_t)total, sizeof(double));
    for (int64_t i = 0; i < total; i++) {
        double v = uniform();
        if (dt == LOOM_DTYPE_F64) {
            ((double *)x.data)[i] = v;
        } else if (dt == LOOM_DTYPE_F32) {
            ((float *)x.data)[i] = (float)v;
            v = (float)v;
        } else if (dt == LOOM_DTYPE_BF16) {
            uint16_t h = pk_f32_to_bf16((float)v);
            ((uint16_t *)x.data)[i] = h;
            v = pk_bf16_to_f32(h);
        } else {
            uint16_t h = pk_f32_to_f16((float)v);
            ((uint16_t *)x.data)[i] = h;
            v = pk_f16_to_f32(h);
        }
        x.val[i] = v;
    }
    return x;
}

static void mat_free(mat *x)
{
    free(x->data);
    free(x->val);
}

static double at(const mat *x, int64_t b, int64_t i, int64_t j) { return x->val[b * x->bs + i * x->rs + j * x->cs]; }

static pk_gemm_operand operand(const mat *x)
{
    pk_gemm_operand o = { .data = x->data, .dtype = x->dt, .rs = x->rs, .cs = x->cs, .bs = x->bs };
    return o;
}

static double act_ref(pk_gemm_act a, double v)
{
    switch (a) {
    case PK_GEMM_ACT_RELU: return v < 0 ? 0 : v;
    case PK_GEMM_ACT_GELU_TANH: return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case PK_GEMM_ACT_GELU_ERF: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case PK_GEMM_ACT_SILU: return v / (1 + exp(-v));
    default: return v;
    }
}

typedef struct gcase {
    int64_t m, n, k, batch;
    loom_dtype at, bt;              /* c is f64 when at is, else f32 */
    int ta, tb;
    int64_t pad;                    /* extra elements per line of A, B, C */
    double alpha, beta;
    pk_gemm_bias bias;
    pk_gemm_act act;
    int residual;
    int pack_a, pack_b;             /* pre-packed operands */
    int serial;                     /* pk_gemm_serial instead of pk_gemm */
    int nan_c;                      /* C starts as NaN (beta must be 0) */
} gcase;

static void describe(const gcase *c, char *buf, size_t n)
{
    snprintf(buf, n, "[%s] m=%lld n=%lld k=%lld batch=%lld dtypes=%d,%d trans=%d,%d pad=%lld alpha=%g beta=%g "
             "bias=%d act=%d res=%d packed=%d,%d serial=%d", pk_gemm_isa_name(), (long long)c->m, (long long)c->n,
             (long long)c->k, (long long)c->batch, (int)c->at, (int)c->bt, c->ta, c->tb, (long long)c->pad, c->alpha,
             c->beta, (int)c->bias, (int)c->act, c->residual, c->pack_a, c->pack_b, c->serial);
}

static void run_case(const gcase *c)
{
    int f64 = c->at == LOOM_DTYPE_F64;
    loom_dtype ct = f64 ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32;
    double u = f64 ? 0x1p-53 : 0x1p-24;
    char what[320];
    describe(c, what, sizeof what);
    mat a = mat_new(c->at, c->batch, c->m, c->k, c->ta, c->pad), b = mat_new(c->bt, c->batch, c->k, c->n, c->tb, c->pad);
    mat cm = mat_new(ct, c->batch, c->m, c->n, 0, c->pad), res = mat_new(ct, c->batch, c->m, c->n, 0, 1);
    mat bias = mat_new(ct, c->batch, 1, c->bias == PK_GEMM_BIAS_ROW ? c->m : c->n, 0, 0);
    /* a packed operand is one matrix for every batch entry (weights) */
    if (c->pack_a)
        a.bs = 0;
    if (c->pack_b)
        b.bs = 0;
    if (c->nan_c)
        for (int64_t i = 0; i < c->batch * cm.bs; i++) {
            if (f64)
                ((double *)cm.data)[i] = NAN;
            else
                ((float *)cm.data)[i] = NAN;
        }
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = c->m;
    g.n = c->n;
    g.k = c->k;
    g.batch = c->batch;
    g.a = operand(&a);
    g.b = operand(&b);
    g.c = cm.data;
    g.ldc = cm.rs;
    g.c_bs = cm.bs;
    g.alpha = c->alpha;
    g.beta = c->beta;
    g.bias_kind = c->bias;
    g.bias = bias.data;
    g.bias_bs = bias.bs;
    g.act = c->act;
    if (c->residual) {
        g.residual = res.data;
        g.ldr = res.rs;
        g.r_bs = res.bs;
    }
    pk_gemm_packed pa, pb;
    void *pa_buf = NULL, *pb_buf = NULL;
    if (c->pack_a) {
        assert_int_equal(posix_memalign(&pa_buf, 64, pk_gemm_pack_bytes(0, ct, c->m, c->k)), 0);
        pk_gemm_pack(&pa, pa_buf, 0, &g.a, c->m, c->k);
        g.a.packed = &pa;
    }
    if (c->pack_b) {
        assert_int_equal(posix_memalign(&pb_buf, 64, pk_gemm_pack_bytes(1, ct, c->n, c->k)), 0);
        pk_gemm_pack(&pb, pb_buf, 1, &g.b, c->n, c->k);
        g.b.packed = &pb;
    }
    /* the expected values before C is overwritten */
    double *want = calloc((size_t)(c->batch * c->m * c->n + 1), sizeof(double));
    double *bound = calloc((size_t)(c->batch * c->m * c->n + 1), sizeof(double));
    for (int64_t z = 0; z < c->batch; z++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double s = 0, mag = 0;
                for (int64_t p = 0; p < c->k; p++) {
                    s += at(&a, z, i, p) * at(&b, z, p, j);
                    mag += fabs(at(&a, z, i, p) * at(&b, z, p, j));
                }
                double c0 = c->beta != 0 ? at(&cm, z, i, j) : 0;
                double v = c->alpha * s + c->beta * c0, bv = 0;
                if (c->bias != PK_GEMM_BIAS_NONE)
                    bv = at(&bias, z, 0, c->bias == PK_GEMM_BIAS_ROW ? i : j);
                v = act_ref(c->act, v + bv);
                if (c->residual)
                    v += at(&res, z, i, j);
                int64_t e = (z * c->m + i) * c->n + j;
                want[e] = v;
                bound[e] = 1.2 * (double)(c->k + 4) * u * (fabs(c->alpha) * mag + fabs(c->beta * c0) + fabs(bv))
                         + 9 * u * fabs(v) + 1e-300;
            }
    loom_status st;
    if (c->serial) {
        size_t ws = pk_gemm_serial_workspace(&g);
        void *work = NULL;
        assert_int_equal(posix_memalign(&work, 64, ws > 0 ? ws : 64), 0);
        st = pk_gemm_serial(&g, work, ws);
        free(work);
    } else {
        st = pk_gemm(&ctx, &g);
        scratch_release();
    }
    if (st != LOOM_OK)
        fail_msg("%s: status %d", what, (int)st);
    for (int64_t z = 0; z < c->batch; z++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                int64_t e = (z * c->m + i) * c->n + j, o = z * cm.bs + i * cm.rs + j;
                double got = f64 ? ((double *)cm.data)[o] : ((float *)cm.data)[o];
                if (!(fabs(got - want[e]) <= bound[e]))
                    fail_msg("%s: C[%lld][%lld][%lld] = %.17g, expected %.17g (bound %.3g)", what, (long long)z,
                             (long long)i, (long long)j, got, want[e], bound[e]);
            }
    /* the padding of C past n is not written */
    if (c->pad > 0 && !c->nan_c)
        for (int64_t z = 0; z < c->batch; z++)
            for (int64_t i = 0; i < c->m; i++)
                for (int64_t j = c->n; j < c->n + c->pad; j++) {
                    int64_t o = z * cm.bs + i * cm.rs + j;
                    double got = f64 ? ((double *)cm.data)[o] : ((float *)cm.data)[o];
                    if (got != cm.val[o])
                        fail_msg("%s: C padding [%lld][%lld] written", what, (long long)i, (long long)j);
                }
    free(want);
    free(bound);
    free(pa_buf);
    free(pb_buf);
    mat_free(&a);
    mat_free(&b);
    mat_free(&cm);
    mat_free(&res);
    mat_free(&bias);
}

/* ------------------------------------------------------------ the cases */

static const int64_t dims[] = { 1, 2, 3, 5, 7, 8, 15, 16, 17, 63, 64, 65 };
#define N_DIMS (int64_t)(sizeof dims / sizeof dims[0])

static gcase random_case(int64_t m, int64_t n, int64_t k)
{
    static const loom_dtype f32s[] = { LOOM_DTYPE_F32, LOOM_DTYPE_F32, LOOM_DTYPE_BF16, LOOM_DTYPE_F16 };
    gcase c = { .m = m, .n = n, .k = k, .batch = 1, .alpha = 1 };
    if (pick(4) == 0) {
        c.at = c.bt = LOOM_DTYPE_F64;
    } else {
        c.at = f32s[pick(4)];
        c.bt = f32s[pick(4)];
    }
    c.ta = (int)pick(2);
    c.tb = (int)pick(2);
    c.pad = pick(3) == 0 ? 3 : 0;
    if (pick(3) == 0)
        c.alpha = -0.75;
    if (pick(3) == 0)
        c.beta = pick(2) ? 1.0 : 0.5;
    c.bias = (pk_gemm_bias)pick(3);
    c.act = (pk_gemm_act)pick(5);
    c.residual = pick(4) == 0;
    c.batch = pick(5) == 0 ? 3 : 1;
    c.pack_a = pick(6) == 0;
    c.pack_b = pick(4) == 0;
    c.serial = pick(3) == 0;
    return c;
}

static void all_shapes(void)
{
    for (int64_t i = 0; i < N_DIMS; i++)
        for (int64_t j = 0; j < N_DIMS; j++) {
            gcase c = random_case(dims[i], dims[j], dims[(i * 5 + j * 7) % N_DIMS]);
            run_case(&c);
        }
    /* K = 0: C = epilogue(beta * C) */
    gcase z = random_case(7, 9, 0);
    run_case(&z);
    z = random_case(1, 40, 0);
    run_case(&z);
}

static void plain_and_epilogues(void)
{
    /* each epilogue and bias kind on a tile-crossing shape, f32 and f64 */
    for (int dt = 0; dt < 2; dt++)
        for (int act = 0; act < 5; act++)
            for (int bias = 0; bias < 3; bias++) {
                gcase c = { .m = 29, .n = 37, .k = 41, .batch = 1, .alpha = 1, .beta = 0.5,
                            .at = dt ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32, .bt = dt ? LOOM_DTYPE_F64 : LOOM_DTYPE_F32,
                            .bias = (pk_gemm_bias)bias, .act = (pk_gemm_act)act, .residual = act == 2 };
                run_case(&c);
                c.m = 1;   /* the small-M path */
                run_case(&c);
            }
    /* beta 0 never reads C */
    gcase n = { .m = 13, .n = 21, .k = 9, .batch = 2, .alpha = 1, .at = LOOM_DTYPE_F32, .bt = LOOM_DTYPE_F32,
                .nan_c = 1 };
    run_case(&n);
    n.m = 2;
    run_case(&n);
    n.at = n.bt = LOOM_DTYPE_F64;
    run_case(&n);
    n.alpha = 0;
    run_case(&n);
}

static void big_shapes(void)
{
    static const struct { int64_t m, n, k, batch; int ta, tb, pack_b, serial; loom_dtype dt; } big[] = {
        { 300, 257, 513, 1, 0, 0, 0, 0, LOOM_DTYPE_F32 },   /* KC slices, MC blocks, edges */
        { 300, 257, 513, 1, 1, 1, 0, 0, LOOM_DTYPE_F32 },
        { 1, 1000, 1024, 1, 0, 0, 0, 0, LOOM_DTYPE_F32 },   /* GEMV */
        { 1, 1000, 1024, 1, 0, 0, 1, 0, LOOM_DTYPE_F32 },   /* GEMV on packed weights */
        { 5, 300, 700, 1, 1, 0, 0, 0, LOOM_DTYPE_F32 },
        { 5, 300, 700, 1, 0, 1, 0, 0, LOOM_DTYPE_F32 },     /* small M, B transposed: packed path */
        { 64, 520, 1100, 1, 0, 0, 0, 0, LOOM_DTYPE_F32 },
        { 150, 130, 300, 1, 0, 1, 1, 1, LOOM_DTYPE_F32 },   /* serial, packed B */
        { 70, 3000, 700, 1, 0, 0, 0, 1, LOOM_DTYPE_F32 },   /* serial: B cut in column chunks */
        { 20, 20, 20, 16, 0, 0, 0, 0, LOOM_DTYPE_F32 },     /* batch per task */
        { 150, 70, 270, 1, 0, 0, 0, 0, LOOM_DTYPE_F64 },
        { 130, 90, 300, 1, 1, 0, 0, 0, LOOM_DTYPE_BF16 },
        { 3, 300, 200, 1, 0, 0, 0, 0, LOOM_DTYPE_F16 },
    };
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        gcase c = { .m = big[i].m, .n = big[i].n, .k = big[i].k, .batch = big[i].batch, .alpha = 1, .beta = 0,
                    .at = big[i].dt, .bt = big[i].dt, .ta = big[i].ta, .tb = big[i].tb, .pack_b = big[i].pack_b,
                    .serial = big[i].serial, .bias = PK_GEMM_BIAS_COL, .act = PK_GEMM_ACT_GELU_ERF };
        run_case(&c);
    }
}

static void on_isa(pk_gemm_isa isa, const char *name)
{
    if (!pk_gemm_force_isa(isa)) {
        print_message("%s is not available on this CPU (or capped by LOOM_CPU_MAX_ISA): skipped\n", name);
        skip();
    }
    all_shapes();
    plain_and_epilogues();
    big_shapes();
    pk_gemm_force_isa(PK_GEMM_ISA_AUTO);
}

static void gemm_scalar(void **state) { (void)state; on_isa(PK_GEMM_ISA_SCALAR, "scalar"); }
static void gemm_avx2(void **state) { (void)state; on_isa(PK_GEMM_ISA_AVX2, "AVX2+FMA"); }
static void gemm_avx512(void **state) { (void)state; on_isa(PK_GEMM_ISA_AVX512, "AVX-512F"); }

/* The AVX-512 f32 epilogue gives the AVX2 one's bits (gemm_internal.h): every
** activation it takes, each bias kind, with and without a residual, on widths
** 1..40 (full vectors and masked tails), values in [-8, 8] with some exact
** zeros, a NaN and infinities. */
static void epilogue_avx512_is_the_avx2_one(void **state)
{
    (void)state;
#ifdef PK_GEMM_X86
    if (!(pk_cpu_features() & LOOM_CPU_AVX512F) || !pk_cpu_avx2(PK_CPU_FMA)) {
        print_message("AVX-512F is not available on this CPU (or capped by LOOM_CPU_MAX_ISA): skipped\n");
        skip();
    }
    enum { ROWS = 3, COLS = 40, LD = 43 };
    static const pk_gemm_act acts[] = { PK_GEMM_ACT_NONE, PK_GEMM_ACT_RELU, PK_GEMM_ACT_SILU, PK_GEMM_ACT_GELU_ERF };
    float c0[ROWS * LD], c1[ROWS * LD], c2[ROWS * LD], bias[LD + ROWS], res[ROWS * LD];
    int64_t differ = 0;
    for (int a = 0; a < 4; a++)
        for (int bk = 0; bk < 3; bk++)
            for (int with_res = 0; with_res < 2; with_res++)
                for (int64_t cols = 1; cols <= COLS; cols++) {
                    for (int i = 0; i < ROWS * LD; i++) {
                        c0[i] = (float)(8 * uniform());
                        res[i] = (float)uniform();
                    }
                    for (int i = 0; i < LD + ROWS; i++)
                        bias[i] = (float)uniform();
                    c0[0] = 0.0f;
                    c0[1 % cols] = -0.0f;
                    c0[LD + cols / 2] = NAN;
                    c0[2 * LD + cols - 1] = cols % 2 ? INFINITY : -INFINITY;
                    memcpy(c1, c0, sizeof c0);
                    memcpy(c2, c0, sizeof c0);
                    pk_gemm_args g = PK_GEMM_ARGS_INIT;
                    g.act = acts[a];
                    g.bias_kind = (pk_gemm_bias)bk;
                    g.ldr = LD;
                    /* a block at (i0, j0) = (1, 2) of a larger C: bias and residual are indexed from there */
                    pk_gemm_epilogue_f32_avx2(&g, c1, LD, bias, with_res ? res : NULL, 1, 2, ROWS - 1, cols);
                    pk_gemm_epilogue_f32_avx512(&g, c2, LD, bias, with_res ? res : NULL, 1, 2, ROWS - 1, cols);
                    if (memcmp(c1, c2, sizeof c1) != 0 && differ++ < 5)
                        print_message("act %d bias %d residual %d cols %lld: the two epilogues differ\n", a, bk,
                                      with_res, (long long)cols);
                }
    assert_int_equal(differ, 0);
#else
    print_message("not an x86 build: skipped\n");
    skip();
#endif
}

/* Unsupported mixes are refused, not computed. */
static void gemm_refuses_bad_mixes(void **state)
{
    (void)state;
    float f = 0;
    double d = 0;
    pk_gemm_args g = PK_GEMM_ARGS_INIT;
    g.m = g.n = g.k = 1;
    g.a = pk_gemm_matrix(&d, LOOM_DTYPE_F64, 1, 0);
    g.b = pk_gemm_matrix(&f, LOOM_DTYPE_F32, 1, 0);
    g.c = &d;
    g.ldc = 1;
    assert_int_equal(pk_gemm(&ctx, &g), LOOM_EINVAL);
    g.b = pk_gemm_matrix(&f, LOOM_DTYPE_I32, 1, 0);
    g.a = pk_gemm_matrix(&f, LOOM_DTYPE_F32, 1, 0);
    assert_int_equal(pk_gemm_serial(&g, NULL, 0), LOOM_EINVAL);
    scratch_release();
}

int main(void)
{
    mock_init();
    pk_cpu_init(NULL);
    print_message("GEMM micro-kernels: best on this CPU %s\n", pk_gemm_isa_name());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gemm_scalar),
        cmocka_unit_test(gemm_avx2),
        cmocka_unit_test(gemm_avx512),
        cmocka_unit_test(epilogue_avx512_is_the_avx2_one),
        cmocka_unit_test(gemm_refuses_bad_mixes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
