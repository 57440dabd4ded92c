/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_core.c - case generators of the core pack's ops. Sizes sit around
** the block edges of the kernels (1, 7, 16, 17, 255, 257).
**
** Tolerances:
**  - core.matmul (and the core.linear method, whose bias is one more term
**    of the same sum): |x - ref| <= 2*K*u*(|A||B|)_ij (two summation
**    orders, each within K*u of the exact sum; u = 2^-24 for f32).
**  - core.add: one rounding per element in every backend, so f32/f64 must
**    agree to 1 ulp of the result (rtol 2u) and f16/bf16 to 1 ulp of their
**    own precision.
**  - core.cast: each element is one conversion the op defines exactly
**    (round to nearest even; truncation toward zero into integers), so
**    every backend gives the same bytes.
*/
#include <math.h>
#include <stdio.h>

#include "conformance.h"

#define BIT(d) LOOM_DTYPE_BIT(LOOM_DTYPE_##d)

static const int64_t sizes[] = { 1, 7, 16, 17, 255, 257 };
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* |got - ref| <= 2*K*u*(sum_p |a_ip b_pj| + |bias_j|) for f32 outputs
** [M, N]: a is [M, K]; b is [K, N], or [N, K] when transposed (a linear
** weight); bias [N] or NULL. */
static int check_dot(const loom_tensor *got, const loom_tensor *ref, const loom_tensor *a, const loom_tensor *b,
                     int b_transposed, const loom_tensor *bias, char *err, size_t size)
{
    const int64_t m = a->shape[0], k = a->shape[1], n = ref->shape[1];
    const float *pa = loom_data(a), *pb = loom_data(b), *pg = loom_data(got), *pr = loom_data(ref);
    const float *pc = bias != NULL ? loom_data(bias) : NULL;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double mag = pc != NULL ? fabs((double)pc[j]) : 0;
            for (int64_t p = 0; p < k; p++)
                mag += fabs((double)pa[i * k + p] * (double)(b_transposed ? pb[j * k + p] : pb[p * n + j]));
            double bound = 2.0 * (double)(k + (pc != NULL)) * 0x1p-24 * mag;
            if (!(fabs((double)pg[i * n + j] - (double)pr[i * n + j]) <= bound)) {
                snprintf(err, size, "[%lld,%lld] = %.9g, cpu %.9g (bound %.3g)", (long long)i, (long long)j,
                         (double)pg[i * n + j], (double)pr[i * n + j], bound);
                return 0;
            }
        }
    return 1;
}

/* ---------------------------------------------------------- core.matmul */

static int matmul_check(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
                        size_t size)
{
    (void)out;
    return check_dot(got, ref, c->in[0], c->in[1], 0, NULL, err, size);
}

/* 6 sizes x 4 shapes: [x, x, x], [x, 7, 257], [255, x, 16], [17, 257, x] */
static int matmul_make(cf_case *c)
{
    const int64_t x = sizes[c->index / 4];
    const int64_t mkn[4][3] = { { x, x, x }, { x, 7, 257 }, { 255, x, 16 }, { 17, 257, x } };
    const int64_t *s = mkn[c->index % 4];
    c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ s[0], s[1] }, 0, -1, 1);
    c->in[1] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ s[1], s[2] }, 1, -1, 1);
    c->n_in = 2;
    c->tol[0] = (cf_tol){ CF_CUSTOM, 0, 0 };
    c->check = matmul_check;
    cf_what(c, "%lldx%lldx%lld", (long long)s[0], (long long)s[1], (long long)s[2]);
    return 1;
}

/* ------------------------------------------------------------- core.add */

/* input [x, 17] + other [17], broadcast along the rows */
static int add_make(cf_case *c)
{
    const int64_t x = sizes[c->index];
    double rtol = c->dtype == LOOM_DTYPE_F32 ? 0x1p-23 : c->dtype == LOOM_DTYPE_F64 ? 0x1p-52
                : c->dtype == LOOM_DTYPE_F16 ? 0x1p-10 : 0x1p-7;
    c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ x, 17 }, 0, -1, 1);
    c->in[1] = cf_uniform(c, c->dtype, 1, (const int64_t[]){ 17 }, 1, -1, 1);
    c->n_in = 2;
    cf_tol_all(c, CF_CLOSE, rtol, 0);
    cf_what(c, "[%lld,17] + [17]", (long long)x);
    return 1;
}

/* ------------------------------------------------------------ core.cast */

static const loom_dtype cast_targets[] = {
    LOOM_DTYPE_F32, LOOM_DTYPE_F64, LOOM_DTYPE_F16, LOOM_DTYPE_BF16, LOOM_DTYPE_F8E4M3, LOOM_DTYPE_I8,
    LOOM_DTYPE_I16, LOOM_DTYPE_I32, LOOM_DTYPE_I64, LOOM_DTYPE_BOOL, LOOM_DTYPE_C64,
};

/* [37, 19] of values in [-100, 100) (in range of every target but u8) to one target */
static int cast_make(cf_case *c)
{
    loom_dtype to = cast_targets[c->index];
    c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ 37, 19 }, 0, -100, 100);
    c->n_in = 1;
    cf_attrs(c, "dtype=%s", loom_dtype_name(to));
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "[37,19] to %s", loom_dtype_name(to));
    return 1;
}

/* ---------------------------------------------------------- core.linear */

static int linear_check(const cf_case *c, int32_t out, const loom_tensor *got, const loom_tensor *ref, char *err,
                        size_t size)
{
    (void)out;
    return check_dot(got, ref, c->in[0], c->aux[0], 1, c->aux[1], err, size);
}

/* x [n, in] through an object over weight [out, in] (and bias [out]) */
static int linear_make(cf_case *c)
{
    static const int64_t shapes[][4] = {    /* n, in, out, bias */
        { 1, 7, 16, 1 }, { 17, 255, 257, 1 }, { 257, 16, 7, 0 }, { 16, 17, 1, 1 },
    };
    const int64_t *s = shapes[c->index];
    loom_tensor *w = cf_uniform(c, c->dtype, 2, (const int64_t[]){ s[2], s[1] }, 1, -1, 1);
    loom_tensor *b = s[3] ? cf_uniform(c, c->dtype, 1, &s[2], 2, -1, 1) : NULL;
    cf_object(c, "core.linear", NULL, (const char *[]){ "weight", "bias" }, (const loom_tensor *[]){ w, b },
              s[3] ? 2 : 1);
    c->in[0] = cf_uniform(c, c->dtype, 2, (const int64_t[]){ s[0], s[1] }, 0, -1, 1);
    c->n_in = 1;
    c->aux[0] = w;
    c->aux[1] = b;
    c->tol[0] = (cf_tol){ CF_CUSTOM, 0, 0 };
    c->check = linear_check;
    cf_what(c, "[%lld,%lld] x [%lld,%lld]^T%s", (long long)s[0], (long long)s[1], (long long)s[2],
            (long long)s[1], s[3] ? " + bias" : "");
    return 1;
}

const cf_gen cf_core_gens[] = {
    { "core.matmul", BIT(F32), 4 * N_SIZES, matmul_make, NULL },
    { "core.add", BIT(F32) | BIT(F64) | BIT(F16) | BIT(BF16), N_SIZES, add_make, NULL },
    { "core.cast", BIT(F32) | BIT(F64) | BIT(F16) | BIT(BF16) | BIT(I32) | BIT(I64),
      (int)(sizeof cast_targets / sizeof cast_targets[0]), cast_make, NULL },
    { "core.linear", BIT(F32), 4, linear_make, NULL },
};
const size_t cf_core_n_gens = sizeof cf_core_gens / sizeof cf_core_gens[0];
