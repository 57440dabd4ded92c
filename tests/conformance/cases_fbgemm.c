/* SPDX-License-Identifier: BSD-3-Clause */
/*
** cases_fbgemm.c - case generators of the fbgemm pack's ops (fbgemm_gpu).
**
** Jagged ops: batches of 1 to 64 rows whose lengths run from 0 past the
** max length (so rows are truncated too), inner dims 1 to 33, i64 and i32
** offsets, and two-level jagged values for the ops that take them.
** Tolerances: copies and element-wise ops compute exactly what the cpu
** kernels do (one f32 operation, f64 for f64, one rounding), so they are
** compared bit for bit. The bmm ops sum K <= 40 products of values in
** [-1, 1) in another order than the cpu: in f32 the difference stays
** within a few K * 2^-24 * sum|a*b|, covered by rtol = atol = 2e-5 (f64:
** 1e-12); 16-bit results are rounded once from f32 sums and may land one
** unit in the last place apart (rtol 2^-10, atol 2e-3 for f16; 2^-7, 2e-2
** for bf16).
**
** fbgemm.tbe: tables of every weight type (fp32 fp16 bf16 fp8 int8 int4
** int2) with random row bytes, pooling sum / mean (with per-sample weights)
** / none, outputs fp32 / fp16, i32 and i64 indices, empty bags, pruned (-1)
** indices, dims needing two chunks and partial groups, VBE, a cached
** object. Every backend computes the cpu kernel's numerics operation for
** operation, so outputs must be identical bytes. The other methods of the
** object: tbe_prefetch has no output (each backend must accept the calls;
** what it cached shows in tbe_cache_stats and tests/fbgemm/tbe/
** test_tbe_cache.c), tbe_cache_stats returns counters: identical.
**
** Quantisers: fbgemm defines them bit for bit (scale and bias rounded to
** f16, then q = round((x - bias) / scale); back: scale * q + bias in f32),
** which the cpu kernels meet against fbgemm_gpu's goldens
** (tests/fbgemm/tbe/test_tbe_quantize.c): identical bytes.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "conformance.h"

#define BIT(d) LOOM_DTYPE_BIT(LOOM_DTYPE_##d)
#define FLOATS (BIT(F32) | BIT(F64) | BIT(F16) | BIT(BF16))
#define COPYABLE (FLOATS | BIT(I32) | BIT(I64))
#define INDEX (BIT(I32) | BIT(I64))

static int is_int(loom_dtype dt) { return dt == LOOM_DTYPE_I32 || dt == LOOM_DTYPE_I64; }

/* ---------------------------------------------------------- jagged ops */

/* B rows, inner dim D, max length L, offsets dtype */
typedef struct jg_shape {
    int64_t B, D, L;
    loom_dtype off;
} jg_shape;

static const jg_shape jg_shapes[] = {
    { 5, 3, 4, LOOM_DTYPE_I64 },
    { 17, 16, 7, LOOM_DTYPE_I32 },
    { 1, 33, 5, LOOM_DTYPE_I64 },
    { 64, 1, 9, LOOM_DTYPE_I32 },
};
#define N_JG_SHAPES ((int)(sizeof jg_shapes / sizeof jg_shapes[0]))

/* Offsets [n + 1] of n rows of lengths 0 .. max_len + 2 (stream s); the
** total count in *total. */
static loom_tensor *jg_offsets(cf_case *c, loom_dtype dt, int64_t n, int64_t max_len, uint64_t s, int64_t *total)
{
    int64_t off[65] = { 0 };
    for (int64_t b = 0; b < n; b++)
        off[b + 1] = off[b] + (int64_t)(cf_draw(c, s, (uint64_t)b) * (double)(max_len + 3));
    *total = off[n];
    const int64_t len = n + 1;
    return cf_index(c, dt, 1, &len, off);
}

/* Values of the op's dtype: [-1, 1) for floats, [-100, 100) truncated for integers. */
static loom_tensor *jg_values(cf_case *c, int32_t ndim, const int64_t *shape, uint64_t s)
{
    return is_int(c->dtype) ? cf_uniform(c, c->dtype, ndim, shape, s, -100, 100)
                            : cf_uniform(c, c->dtype, ndim, shape, s, -1, 1);
}

static void jg_what(cf_case *c, const jg_shape *g, int64_t total)
{
    cf_what(c, "B %lld, D %lld, max_L %lld, total_L %lld, %s offsets", (long long)g->B, (long long)g->D,
            (long long)g->L, (long long)total, loom_dtype_name(g->off));
}

/* Case 4 of the copies: two levels, B 6 entries of up to 3 sub-rows of up
** to 4 rows of D 5: dense [6, 3, 4, 5]. */
static int jg_two_levels(cf_case *c, const char *dense_arg_first)
{
    int64_t n1, total;
    loom_tensor *o0 = jg_offsets(c, LOOM_DTYPE_I64, 6, 1, 1, &n1);     /* lengths 0..3 */
    loom_tensor *o1 = jg_offsets(c, LOOM_DTYPE_I64, n1, 2, 2, &total); /* lengths 0..4 */
    if (strcmp(dense_arg_first, "values") == 0) {
        c->in[0] = jg_values(c, 2, (const int64_t[]){ total, 5 }, 0);
        cf_attrs(c, "max_lengths=3,4;padding_value=%s", is_int(c->dtype) ? "-3" : "-1.5");
    } else {
        c->in[0] = jg_values(c, 4, (const int64_t[]){ 6, 3, 4, 5 }, 0);
        if (strcmp(dense_arg_first, "grad") == 0)
            cf_attrs(c, "total_L=%lld", (long long)total);
    }
    c->in[1] = o0;
    c->in[2] = o1;
    c->n_in = 3;
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "two levels: 6 entries, max lengths 3, 4, D 5, total_L %lld", (long long)total);
    return 1;
}

static int to_padded_make(cf_case *c)
{
    if (c->index == N_JG_SHAPES)
        return jg_two_levels(c, "values");
    const jg_shape *g = &jg_shapes[c->index];
    int64_t total;
    c->in[1] = jg_offsets(c, g->off, g->B, g->L, 1, &total);
    c->in[0] = jg_values(c, 2, (const int64_t[]){ total, g->D }, 0);
    c->n_in = 2;
    cf_attrs(c, "max_lengths=%lld;padding_value=%s", (long long)g->L, is_int(c->dtype) ? "-3" : "-1.5");
    cf_tol_all(c, CF_BYTES, 0, 0);
    jg_what(c, g, total);
    return 1;
}

/* jagged_to_padded_dense_backward (grad_output, offsets; total_L) and
** dense_to_jagged (dense, x_offsets): a dense [B, L, D] and the offsets */
static int to_jagged_make(cf_case *c)
{
    const int backward = strcmp(c->op, "fbgemm.jagged_to_padded_dense_backward") == 0;
    if (c->index == N_JG_SHAPES)
        return jg_two_levels(c, backward ? "grad" : "dense");
    const jg_shape *g = &jg_shapes[c->index];
    int64_t total;
    c->in[1] = jg_offsets(c, g->off, g->B, g->L, 1, &total);
    c->in[0] = jg_values(c, 3, (const int64_t[]){ g->B, g->L, g->D }, 0);
    c->n_in = 2;
    if (backward)
        cf_attrs(c, "total_L=%lld", (long long)total);
    cf_tol_all(c, CF_BYTES, 0, 0);
    jg_what(c, g, total);
    return 1;
}

/* the element-wise ops: x_values [total_L, D], x_offsets, y [B, L, D]
** (mul_backward: grad_output [total_L, D], x_offsets, y, x_values) */
static int elementwise_make(cf_case *c)
{
    const jg_shape *g = &jg_shapes[c->index];
    int64_t total;
    loom_tensor *off = jg_offsets(c, g->off, g->B, g->L, 1, &total);
    loom_tensor *x = jg_values(c, 2, (const int64_t[]){ total, g->D }, 0);
    loom_tensor *y = jg_values(c, 3, (const int64_t[]){ g->B, g->L, g->D }, 2);
    if (strcmp(c->op, "fbgemm.jagged_dense_elementwise_mul_backward") == 0) {
        const loom_tensor *args[4] = { jg_values(c, 2, (const int64_t[]){ total, g->D }, 3), off, y, x };
        memcpy(c->in, args, sizeof args);
        c->n_in = 4;
    } else {
        const loom_tensor *args[3] = { x, off, y };
        memcpy(c->in, args, sizeof args);
        c->n_in = 3;
    }
    cf_tol_all(c, CF_BYTES, 0, 0);
    jg_what(c, g, total);
    return 1;
}

static void bmm_tol(cf_case *c)
{
    switch (c->dtype) {
    case LOOM_DTYPE_F64: cf_tol_all(c, CF_CLOSE, 1e-12, 1e-12); break;
    case LOOM_DTYPE_F16: cf_tol_all(c, CF_CLOSE, 0x1p-10, 2e-3); break;
    case LOOM_DTYPE_BF16: cf_tol_all(c, CF_CLOSE, 0x1p-7, 2e-2); break;
    default: cf_tol_all(c, CF_CLOSE, 2e-5, 2e-5); break;
    }
}

/* K (jagged_dense_bmm) or M (jagged_jagged_bmm) and N of each shape; K <= 40 */
static const int64_t bmm_kn[N_JG_SHAPES][2] = { { 7, 16 }, { 40, 9 }, { 1, 33 }, { 17, 1 } };

static int dense_bmm_make(cf_case *c)
{
    const jg_shape *g = &jg_shapes[c->index];
    const int64_t k = bmm_kn[c->index][0], n = bmm_kn[c->index][1];
    int64_t total;
    c->in[1] = jg_offsets(c, g->off, g->B, g->L, 1, &total);
    c->in[0] = jg_values(c, 2, (const int64_t[]){ total, k }, 0);
    c->in[2] = jg_values(c, 3, (const int64_t[]){ g->B, k, n }, 2);
    c->n_in = 3;
    cf_attrs(c, "max_L=%lld", (long long)g->L);
    bmm_tol(c);
    cf_what(c, "B %lld, K %lld, N %lld, max_L %lld, total_L %lld", (long long)g->B, (long long)k, (long long)n,
            (long long)g->L, (long long)total);
    return 1;
}

/* x_values [total_L, M], y_values [total_L, N], x_offsets: a sum over at
** most max_L <= 9 rows, within the K <= 40 of the tolerance */
static int jagged_bmm_make(cf_case *c)
{
    const jg_shape *g = &jg_shapes[c->index];
    const int64_t m = bmm_kn[c->index][0], n = bmm_kn[c->index][1];
    int64_t total;
    c->in[2] = jg_offsets(c, g->off, g->B, g->L, 1, &total);
    c->in[0] = jg_values(c, 2, (const int64_t[]){ total, m }, 0);
    c->in[1] = jg_values(c, 2, (const int64_t[]){ total, n }, 2);
    c->n_in = 3;
    cf_attrs(c, "max_L=%lld", (long long)g->L);
    bmm_tol(c);
    cf_what(c, "B %lld, M %lld, N %lld, max_L %lld, total_L %lld", (long long)g->B, (long long)m, (long long)n,
            (long long)g->L, (long long)total);
    return 1;
}

/* bias [b, n], A [m, b, k], B [b, k, n] */
static int permute102_make(cf_case *c)
{
    static const int64_t s[][4] = { { 5, 3, 7, 16 }, { 17, 2, 40, 9 }, { 1, 1, 1, 33 }, { 64, 4, 17, 1 } };
    const int64_t m = s[c->index][0], b = s[c->index][1], k = s[c->index][2], n = s[c->index][3];
    c->in[0] = jg_values(c, 2, (const int64_t[]){ b, n }, 0);
    c->in[1] = jg_values(c, 3, (const int64_t[]){ m, b, k }, 1);
    c->in[2] = jg_values(c, 3, (const int64_t[]){ b, k, n }, 2);
    c->n_in = 3;
    bmm_tol(c);
    cf_what(c, "m %lld, b %lld, k %lld, n %lld", (long long)m, (long long)b, (long long)k, (long long)n);
    return 1;
}

/* input [N, D] rows at K indices (repeats, any order); i64 then i32 indices */
static int index_select_make(cf_case *c)
{
    static const int64_t s[][3] = { { 10, 3, 7 }, { 257, 16, 300 }, { 1, 33, 5 }, { 64, 1, 64 } };
    const int64_t n = s[c->index][0], d = s[c->index][1], k = s[c->index][2];
    int64_t idx[300];
    for (int64_t i = 0; i < k; i++)
        idx[i] = (int64_t)(cf_draw(c, 1, (uint64_t)i) * (double)n);
    c->in[0] = jg_values(c, 2, (const int64_t[]){ n, d }, 0);
    c->in[1] = cf_index(c, c->index % 2 ? LOOM_DTYPE_I32 : LOOM_DTYPE_I64, 1, &k, idx);
    c->n_in = 2;
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "[%lld,%lld] at %lld indices", (long long)n, (long long)d, (long long)k);
    return 1;
}

/* ---------------------------------------------------------- fbgemm.tbe */

enum { FP32, FP16, INT8, INT4, INT2, BF16, FP8 };
static const char *const wt_names[] = { "fp32", "fp16", "int8", "int4", "int2", "bf16", "fp8" };
static const int all_types[] = { FP32, FP16, BF16, FP8, INT8, INT4, INT2 };
#define NT 2                        /* tables = features */

static int64_t row_bytes(int wt, int64_t dim)
{
    switch (wt) {
    case FP32: return 4 * dim;
    case FP16:
    case BF16: return 2 * dim;
    case FP8: return dim;
    case INT8: return dim + 4;
    case INT4: return dim / 2 + 4;
    default: return dim / 4 + 4;
    }
}

/* One draw as an integer in [0, n). */
static uint64_t draw_below(const cf_case *c, uint64_t stream, uint64_t i, uint64_t n)
{
    return (uint64_t)(cf_draw(c, stream, i) * (double)n);
}

/* a small normal half of either sign (scales, biases, fp16 weights) */
static uint16_t small_half(const cf_case *c, uint64_t stream, uint64_t i)
{
    uint64_t sign = cf_draw(c, stream, 2 * i + 1) < 0.5 ? 0x8000u : 0;
    return (uint16_t)(0x2000u + draw_below(c, stream, 2 * i, 0x1800u) + sign);
}

/* NT tables of weight type wt and dims d[], rows 50 and 80, as u8 row
** bytes (random; float weights set to small values, int rows given a
** half scale and bias), over which the case's fbgemm.tbe object is made
** with the call attributes `extra` ("name=value;...", may be empty). */
static void tbe_object(cf_case *c, int wt, const int64_t *d, const char *extra)
{
    const char *names[NT] = { "table.0", "table.1" };
    const loom_tensor *t[NT];
    for (int i = 0; i < NT; i++) {
        const int64_t rows = 50 + 30 * i, rb = row_bytes(wt, d[i]);
        loom_tensor *tt = cf_zeros(c, LOOM_DTYPE_U8, 2, (const int64_t[]){ rows, rb });
        uint8_t *p = loom_data(tt);
        const uint64_t s = 10 + (uint64_t)i;
        for (int64_t r = 0; r < rows; r++) {
            uint8_t *row = p + r * rb;
            uint64_t base = (uint64_t)(r * (rb + 2 * d[i] + 4));
            for (int64_t j = 0; j < rb; j++)
                row[j] = (uint8_t)draw_below(c, s, base + (uint64_t)j, 256);
            base += (uint64_t)rb;
            for (int64_t j = 0; j < d[i] && (wt == FP32 || wt == FP16 || wt == BF16); j++) {
                float f = (float)((int64_t)draw_below(c, s, base + (uint64_t)j, 4001) - 2000) / 512.0f;
                uint32_t u;
                memcpy(&u, &f, 4);
                if (wt == FP32) {
                    memcpy(row + 4 * j, &f, 4);
                } else {
                    uint16_t h = wt == BF16 ? (uint16_t)(u >> 16) : small_half(c, s + 100, base + (uint64_t)j);
                    memcpy(row + 2 * j, &h, 2);
                }
            }
            if (wt == INT8 || wt == INT4 || wt == INT2) {
                uint16_t scale = small_half(c, s + 200, (uint64_t)(2 * r));
                uint16_t bias = small_half(c, s + 200, (uint64_t)(2 * r + 1));
                memcpy(row, &scale, 2);
                memcpy(row + 2, &bias, 2);
            }
        }
        t[i] = tt;
    }
    char attrs[256];
    snprintf(attrs, sizeof attrs, "weights_tys=%s,%s;embedding_dims=%lld,%lld%s%s", wt_names[wt], wt_names[wt],
             (long long)d[0], (long long)d[1], extra[0] ? ";" : "", extra);
    cf_object(c, "fbgemm.tbe", attrs, names, t, NT);
}

/* A batch over the NT tables (rows 50, 80): B bags per feature, or with
** R > 0 VBE batch sizes 0..5 per feature and rank; bags of 0..7 indices,
** about 1 in 11 of them -1 (pruned); per-sample weights when psw. Sets
** c->in[0..3] (indices and offsets of dtype dt, weights, VBE sizes). */
static void tbe_batch(cf_case *c, loom_dtype dt, int64_t B, int64_t R, int psw)
{
    int64_t idx[NT * 40 * 8], offs[NT * 40 + 1] = { 0 }, bsz[NT * 3];
    double w[NT * 40 * 8];
    int64_t n = 0, k = 0;
    uint64_t draw = 0;
    for (int f = 0; f < NT; f++) {
        int64_t bags = B;
        if (R > 0) {
            bags = 0;
            for (int64_t r = 0; r < R; r++)
                bags += (bsz[f * R + r] = (int64_t)draw_below(c, 3, draw++, 6));
        }
        for (int64_t b = 0; b < bags; b++, k++) {
            int64_t len = (int64_t)draw_below(c, 3, draw++, 8);
            for (int64_t l = 0; l < len; l++, n++) {
                int pruned = draw_below(c, 3, draw++, 11) == 0;
                idx[n] = pruned ? -1 : (int64_t)draw_below(c, 3, draw++, (uint64_t)(50 + 30 * f));
                w[n] = (double)((int64_t)draw_below(c, 3, draw++, 33) - 16) / 8.0;
            }
            offs[k + 1] = n;
        }
    }
    const int64_t n_off = k + 1;
    c->in[0] = cf_index(c, dt, 1, &n, idx);
    c->in[1] = cf_index(c, dt, 1, &n_off, offs);
    c->in[2] = psw ? cf_values(c, LOOM_DTYPE_F32, 1, &n, w) : NULL;
    c->in[3] = NULL;
    if (R > 0) {
        loom_tensor *v = cf_zeros(c, LOOM_DTYPE_I64, 2, (const int64_t[]){ NT, R });
        memcpy(loom_data(v), bsz, (size_t)(NT * R) * sizeof(int64_t));
        c->in[3] = v;
    }
    c->n_in = 4;
}

/* 0..6: every type pooled by sum into fp32; 7..13: mean into fp16, with
** per-sample weights; 14..20: pooling none; 21, 22: VBE; 23: a cached object. */
static int tbe_make(cf_case *c)
{
    int i = c->index, wt = all_types[i % 7];
    const char *pooling = "sum", *out = "fp32";
    int64_t d[NT] = { 136, wt == INT2 ? 24 : 22 };      /* 136: two chunks; 22: a partial group of 4 */
    int64_t B = 7, R = 0;
    int psw = 0;
    const char *extra = "";
    if (i >= 7 && i < 14) {
        pooling = "mean", out = "fp16", B = 5, psw = 1;
    } else if (i >= 14 && i < 21) {
        pooling = "none", d[0] = d[1] = 40, B = 5, psw = i % 2;
    } else if (i == 21 || i == 22) {
        wt = i == 21 ? FP32 : INT4, d[0] = 24, d[1] = 16, B = 0, R = i == 21 ? 3 : 2, psw = i == 22;
        pooling = i == 21 ? "sum" : "mean";
    } else if (i == 23) {
        wt = INT4, d[0] = 64, d[1] = 32, B = 5, pooling = "mean", out = "fp16", extra = "cache_load_factor=0.5";
    }
    tbe_object(c, wt, d, extra);
    tbe_batch(c, c->dtype, B, R, psw);
    cf_attrs(c, "pooling_mode=%s;output_dtype=%s;bounds_check_mode=warning", pooling, out);
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "%s dims %lld,%lld, %s -> %s%s%s%s", wt_names[wt], (long long)d[0], (long long)d[1], pooling, out,
            psw ? ", weighted" : "", R > 0 ? ", VBE" : "", extra[0] ? ", cached" : "");
    return 1;
}

/* One call of a method on the case's object on the cpu (priming its state). */
static void cpu_method(cf_case *c, const char *op, int32_t n_in, loom_tensor **out, int32_t n_out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    opt.object = c->object;
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    if (loom_run(op, c->in, n_in, NULL, out, n_out, &opt) != LOOM_OK)
        cf_die("%s: priming the object with %s on the cpu: %s", c->op, op, loom_last_error());
}

/* a cached fp32 object and batches of 6 bags per feature */
static int prefetch_make(cf_case *c)
{
    tbe_object(c, FP32, (const int64_t[]){ 16, 8 }, "cache_load_factor=0.5");
    tbe_batch(c, c->dtype, 6, 0, c->index == 2);
    c->n_out = 0;
    cf_what(c, "cached fp32 object, 6 bags%s", c->index == 2 ? ", weighted" : "");
    return 1;
}

/* the counters of a fresh cached object (0), then of one that ran a
** prefetch and two lookups on the cpu (1) */
static int cache_stats_make(cf_case *c)
{
    tbe_object(c, INT8, (const int64_t[]){ 16, 8 }, "cache_load_factor=0.25");
    if (c->index == 1) {
        loom_tensor *out;
        tbe_batch(c, LOOM_DTYPE_I64, 6, 0, 0);
        cpu_method(c, "fbgemm.tbe_prefetch", 4, NULL, 0);
        cpu_method(c, "fbgemm.tbe", 4, &out, 1);
        loom_tensor_free(out);
        cpu_method(c, "fbgemm.tbe", 4, &out, 1);
        loom_tensor_free(out);
        memset(c->in, 0, sizeof c->in);     /* the method itself has no inputs */
    }
    c->n_in = 0;
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, c->index == 1 ? "after a prefetch and two lookups" : "fresh cached object");
    return 1;
}

/* --------------------------------------------------------- quantisers */

static const struct { const char *type, *layout; int align; } q_formats[] = {
    { "int8", "tbe", 1 }, { "int4", "tbe", 1 }, { "int2", "tbe", 1 }, { "fp8", "tbe", 1 },
    { "int8", "fused", 1 }, { "int4", "fused", 1 }, { "int2", "fused", 1 }, { "int4", "tbe", 16 },
    { "fp16", "tbe", 1 }, { "bf16", "tbe", 1 }, { "fp32", "tbe", 1 },
};
#define N_Q_FORMATS ((int)(sizeof q_formats / sizeof q_formats[0]))

static void q_attrs_text(int f, char *buf, size_t size)
{
    snprintf(buf, size, "weight_type=%s;layout=%s;row_alignment=%d", q_formats[f].type, q_formats[f].layout,
             q_formats[f].align);
}

/* f32 rows [37, 24] in [-3, 3) to each format */
static int quantize_make(cf_case *c)
{
    char text[128];
    c->in[0] = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 37, 24 }, 0, -3, 3);
    c->n_in = 1;
    q_attrs_text(c->index, text, sizeof text);
    cf_attrs(c, "%s", text);
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "[37,24] to %s (%s, align %d)", q_formats[c->index].type, q_formats[c->index].layout,
            q_formats[c->index].align);
    return 1;
}

/* The rows quantize_rows makes (on the cpu) of each format whose row dtype
** is the case's: u8 for the int and fp8 formats, else the float type's. */
static int dequantize_make(cf_case *c)
{
    const char *t = q_formats[c->index].type;
    loom_dtype row = strcmp(t, "fp16") == 0 ? LOOM_DTYPE_F16 : strcmp(t, "bf16") == 0 ? LOOM_DTYPE_BF16
                   : strcmp(t, "fp32") == 0 ? LOOM_DTYPE_F32 : LOOM_DTYPE_U8;
    if (row != c->dtype)
        return 0;
    char text[128];
    loom_tensor *q;
    const loom_tensor *x = cf_uniform(c, LOOM_DTYPE_F32, 2, (const int64_t[]){ 37, 24 }, 0, -3, 3);
    q_attrs_text(c->index, text, sizeof text);
    cf_cpu_run(c, "fbgemm.quantize_rows", &x, 1, text, &q, 1);
    c->in[0] = q;
    c->n_in = 1;
    cf_attrs(c, "%s;dim=24", text);
    cf_tol_all(c, CF_BYTES, 0, 0);
    cf_what(c, "%s rows (%s, align %d) of [37,24]", t, q_formats[c->index].layout, q_formats[c->index].align);
    return 1;
}

const cf_gen cf_fbgemm_gens[] = {
    { "fbgemm.jagged_to_padded_dense", COPYABLE, N_JG_SHAPES + 1, to_padded_make, NULL },
    { "fbgemm.jagged_to_padded_dense_backward", COPYABLE, N_JG_SHAPES + 1, to_jagged_make, NULL },
    { "fbgemm.dense_to_jagged", COPYABLE, N_JG_SHAPES + 1, to_jagged_make, NULL },
    { "fbgemm.jagged_dense_elementwise_add", FLOATS, N_JG_SHAPES, elementwise_make, NULL },
    { "fbgemm.jagged_dense_elementwise_add_jagged_output", FLOATS, N_JG_SHAPES, elementwise_make, NULL },
    { "fbgemm.jagged_dense_elementwise_mul", FLOATS, N_JG_SHAPES, elementwise_make, NULL },
    { "fbgemm.jagged_dense_elementwise_mul_backward", FLOATS, N_JG_SHAPES, elementwise_make, NULL },
    { "fbgemm.jagged_dense_bmm", FLOATS, N_JG_SHAPES, dense_bmm_make, NULL },
    { "fbgemm.jagged_jagged_bmm", FLOATS, N_JG_SHAPES, jagged_bmm_make, NULL },
    { "fbgemm.permute102_baddbmm_permute102", FLOATS, N_JG_SHAPES, permute102_make, NULL },
    { "fbgemm.index_select_dim0", FLOATS | BIT(I32) | BIT(I64), N_JG_SHAPES, index_select_make, NULL },
    { "fbgemm.tbe", INDEX, 24, tbe_make, NULL },
    { "fbgemm.tbe_prefetch", INDEX, 3, prefetch_make, NULL },
    { "fbgemm.tbe_cache_stats", 0, 2, cache_stats_make, NULL },
    /* training: one cpu kernel each (no second backend to compare) */
    { "fbgemm.tbe_backward", 0, 0, NULL, "tests/fbgemm/tbe_backward: fused-optimizer training (cpu kernel only)" },
    { "fbgemm.tbe_save", 0, 0, NULL, "tests/fbgemm/tbe_backward: saves a trained object (cpu kernel only)" },
    { "fbgemm.tbe_state", 0, 0, NULL, "tests/fbgemm/tbe_backward: reads a trained object's state (cpu kernel only)" },
    { "fbgemm.quantize_rows", BIT(F32), N_Q_FORMATS, quantize_make, NULL },
    { "fbgemm.dequantize_rows", BIT(U8) | BIT(F16) | BIT(BF16) | BIT(F32), N_Q_FORMATS, dequantize_make, NULL },
};
const size_t cf_fbgemm_n_gens = sizeof cf_fbgemm_gens / sizeof cf_fbgemm_gens[0];
