/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_layers.c - the vision layers (conv2d, batch_norm, the activations,
** the pools, linear, softmax, layer_norm) against torch.nn.functional
** (goldens of tools/gen_vision_layers_goldens.py; the attributes of each
** case are those of its tables), on every backend that has a kernel for the
** op (cpu; onednn where built), and the refusals of bad arguments.
**
** Tolerance: max |got - want| <= 1e-5 * max |want| over each output. The
** ops compute in f32 as torch does; only the order of the sums differs (the
** GEMM's blocking against ATen's, K <= 392 products per conv output here),
** which moves a result by a few f32 ulps of the largest partial sum, far
** below 1e-5 of the largest output (~80 ulps). The element-wise formulas
** differ from ATen's vectorised ones (Sleef) by at most ~2 ulps.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

#define REL_TOL 1e-5

static const char *const backends[] = { "cpu", "onednn" };

static loom_tensor *golden(const char *fmt, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "vision/layers/");
    size_t len = strlen(path);
    snprintf(path + len, sizeof path - len, fmt, name);
    return tu_npy(path);
}

/* "k=v;k=v" parsed for op; NULL for none. */
static loom_attrs *attrs_of(const char *op, const char *spec)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec != NULL ? spec : "");
    for (char *save = NULL, *kv = strtok_r(buf, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(a, op, kv, eq + 1) != LOOM_OK)
            fail_msg("%s: attribute %s=%s: %s", op, kv, eq + 1, loom_last_error());
    }
    return a;
}

static void assert_close_to_max(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    tu_assert_same_shape(got, want, what);
    double m = 0.0, e = 0.0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        double w = tu_get(want, i), g = tu_get(got, i);
        m = fabs(w) > m ? fabs(w) : m;
        if (isnan(w) != isnan(g))
            fail_msg("%s: element %lld is %g, want %g", what, (long long)i, g, w);
        e = fabs(g - w) > e ? fabs(g - w) : e;
    }
    if (e > REL_TOL * m)
        fail_msg("%s: max |got - want| = %g > %g * max |want| = %g", what, e, REL_TOL, REL_TOL * m);
}

/* Runs op on every backend it has (on cpu only when cpu_only: the others
** decline it) and compares with want. */
static void check_op_on(const char *op, const loom_tensor *const *in, int32_t n, const char *spec,
                        const loom_tensor *want, const char *what, int cpu_only)
{
    loom_attrs *a = attrs_of(op, spec);
    int ran = 0;
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        if (!tu_has_backend(op, backends[b]) || (cpu_only && b > 0))
            continue;
        loom_tensor *got = NULL;
        if (tu_call(op, in, n, a, backends[b], &got) != LOOM_OK)
            fail_msg("%s on %s: %s", what, backends[b], loom_last_error());
        char w[160];
        snprintf(w, sizeof w, "%s on %s", what, backends[b]);
        assert_close_to_max(got, want, w);
        loom_tensor_free(got);
        ran++;
    }
    if (ran == 0)
        fail_msg("%s: no backend has %s", what, op);
    loom_attrs_free(a);
}

static void check_op(const char *op, const loom_tensor *const *in, int32_t n, const char *spec,
                     const loom_tensor *want, const char *what)
{
    check_op_on(op, in, n, spec, want, what, 0);
}

/* ---------------------------------------------------------------- conv2d */

typedef struct conv_case {
    const char *name;
    int bias;
    const char *attrs;
    int cpu_only;                   /* onednn declines: a padding mode it does not have, a depthwise conv */
} conv_case;

static const conv_case conv_cases[] = {
    { "basic", 1, "padding=1,1", 0 },
    { "stride_nob", 0, "stride=2;padding=1", 0 },
    { "groups_dil", 1, "stride=1,2;padding=2,1;dilation=2;groups=2", 0 },
    { "depthwise", 1, "stride=2;padding=1;groups=8", 1 },
    { "pointwise", 1, NULL, 0 },
    { "down", 0, "stride=2", 0 },                  /* oneDNN's right padding is -1 here */
    { "stem", 0, "stride=2;padding=3", 0 },
    { "reflect", 1, "padding=2,1;padding_mode=reflect", 1 },
    { "replicate", 1, "stride=1,2;padding=2;padding_mode=replicate", 1 },
    { "circular", 1, "padding=1,3;padding_mode=circular", 1 },
    { "relu", 1, "padding=1;activation=relu", 0 },
    { "silu", 1, "padding=1;groups=2;activation=silu", 0 },
    { "gelu", 1, "activation=gelu", 0 },
    /* the direct depthwise kernel: both vector tap loops, the portable one
    ** (stride 3, dilation), maps narrower than a vector, reflect padding */
    { "dw_s1_silu", 1, "padding=1;groups=16;activation=silu", 1 },
    { "dw_s2_silu", 1, "stride=2;padding=1;groups=12;activation=silu", 1 },
    { "dw_5x5_dil", 1, "padding=4;dilation=2;groups=6;activation=relu", 1 },
    { "dw_narrow", 0, "padding=1;groups=20", 1 },
    { "dw_s2_5x5", 1, "stride=2;padding=2;groups=5;activation=gelu", 1 },
    { "dw_s3_rect", 1, "stride=3,2;padding=1,0;groups=4;activation=silu", 1 },
    { "dw_reflect", 1, "padding=1,2;groups=4;padding_mode=reflect", 1 },
};

static void conv2d_matches_torch(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
        const conv_case *c = &conv_cases[i];
        loom_tensor *x = golden("conv_%s_input", c->name), *w = golden("conv_%s_weight", c->name);
        loom_tensor *b = c->bias ? golden("conv_%s_bias", c->name) : NULL, *want = golden("conv_%s_output", c->name);
        const loom_tensor *in[3] = { x, w, b };
        char what[64];
        snprintf(what, sizeof what, "conv2d %s", c->name);
        check_op_on("vision.conv2d", in, 3, c->attrs, want, what, c->cpu_only);
        loom_tensor_free(x);
        loom_tensor_free(w);
        loom_tensor_free(b);
        loom_tensor_free(want);
    }
}

/* relu(conv + bias + residual): the residual input, fused */
static void conv2d_residual_matches_torch(void **state)
{
    (void)state;
    loom_tensor *x = golden("conv_%s_input", "residual"), *w = golden("conv_%s_weight", "residual");
    loom_tensor *b = golden("conv_%s_bias", "residual"), *r = golden("conv_%s_residual", "residual");
    loom_tensor *want = golden("conv_%s_output", "residual");
    const loom_tensor *in[4] = { x, w, b, r };
    check_op("vision.conv2d", in, 4, "padding=1;activation=relu", want, "conv2d residual");
    loom_tensor *all[] = { x, w, b, r, want };
    for (size_t i = 0; i < 5; i++)
        loom_tensor_free(all[i]);
}

/* a depthwise conv's residual on the direct kernel: relu(conv + bias + r)
** and, with residual_after_activation, silu(conv + bias) + r */
static void conv2d_depthwise_residual_matches_torch(void **state)
{
    (void)state;
    loom_tensor *x = golden("conv_%s_input", "dw_residual"), *w = golden("conv_%s_weight", "dw_residual");
    loom_tensor *b = golden("conv_%s_bias", "dw_residual"), *r = golden("conv_%s_residual", "dw_residual");
    loom_tensor *want = golden("conv_%s_output", "dw_residual");
    loom_tensor *want_after = golden("conv_%s_after_output", "dw_residual");
    const loom_tensor *in[4] = { x, w, b, r };
    check_op_on("vision.conv2d", in, 4, "padding=1;groups=8;activation=relu", want, "depthwise residual", 1);
    check_op_on("vision.conv2d", in, 4, "padding=1;groups=8;activation=silu;residual_after_activation=true",
                want_after, "depthwise residual after activation", 1);
    loom_tensor *all[] = { x, w, b, r, want, want_after };
    for (size_t i = 0; i < 6; i++)
        loom_tensor_free(all[i]);
}

/* ------------------------------------------------ batch_norm, activations */

static void batch_norm_matches_torch(void **state)
{
    (void)state;
    loom_tensor *x = golden("%s_input", "bn"), *m = golden("%s_mean", "bn"), *v = golden("%s_var", "bn");
    loom_tensor *w = golden("%s_weight", "bn"), *b = golden("%s_bias", "bn");
    loom_tensor *want = golden("%s_output", "bn"), *want_plain = golden("%s_plain_output", "bn");
    const loom_tensor *in[5] = { x, m, v, w, b };
    check_op("vision.batch_norm", in, 5, "eps=1e-3", want, "batch_norm affine");
    check_op("vision.batch_norm", in, 3, NULL, want_plain, "batch_norm plain");
    loom_tensor *all[] = { x, m, v, w, b, want, want_plain };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

static void activations_match_torch(void **state)
{
    (void)state;
    static const struct { const char *op, *golden, *attrs; } acts[] = {
        { "vision.relu", "relu", NULL }, { "vision.relu6", "relu6", NULL }, { "vision.silu", "silu", NULL },
        { "vision.gelu", "gelu", NULL }, { "vision.gelu", "gelu_tanh", "approximate=tanh" },
        { "vision.hardswish", "hardswish", NULL }, { "vision.sigmoid", "sigmoid", NULL },
    };
    loom_tensor *x = golden("act_%s", "input");
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        loom_tensor *want = golden("act_%s", acts[i].golden);
        const loom_tensor *in[1] = { x };
        check_op(acts[i].op, in, 1, acts[i].attrs, want, acts[i].golden);
        loom_tensor_free(want);
    }
    loom_tensor_free(x);
}

/* ----------------------------------------------------------------- pools */

static void pools_match_torch(void **state)
{
    (void)state;
    static const struct { const char *op, *golden, *attrs; } cases[] = {
        { "vision.max_pool2d", "maxpool_resnet", "kernel_size=3;stride=2;padding=1" },
        { "vision.max_pool2d", "maxpool_ceil", "kernel_size=3,2;stride=2;padding=0,1;ceil_mode=true" },
        { "vision.max_pool2d", "maxpool_dil", "kernel_size=2,3;stride=1,2;padding=1;dilation=2" },
        { "vision.max_pool2d", "maxpool_dflt", "kernel_size=2" },
        { "vision.avg_pool2d", "avgpool_pad_incl", "kernel_size=3;stride=2;padding=1" },
        { "vision.avg_pool2d", "avgpool_pad_excl", "kernel_size=3;stride=2;padding=1;count_include_pad=false" },
        { "vision.avg_pool2d", "avgpool_ceil", "kernel_size=2,3;stride=2;padding=1,0;ceil_mode=true" },
        { "vision.avg_pool2d", "avgpool_divisor", "kernel_size=2;divisor_override=3" },
        { "vision.adaptive_avg_pool2d", "adaptive_global", "output_size=1" },
        { "vision.adaptive_avg_pool2d", "adaptive_uneven", "output_size=3,2" },
        { "vision.adaptive_avg_pool2d", "adaptive_up", "output_size=9,11" },
    };
    loom_tensor *x = golden("pool_%s", "input");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loom_tensor *want = golden("%s", cases[i].golden);
        const loom_tensor *in[1] = { x };
        check_op(cases[i].op, in, 1, cases[i].attrs, want, cases[i].golden);
        loom_tensor_free(want);
    }
    loom_tensor_free(x);
}

/* ------------------------------------------- linear, softmax, layer_norm */

static void rowwise_match_torch(void **state)
{
    (void)state;
    loom_tensor *x = golden("linear_%s", "input"), *w = golden("linear_%s", "weight");
    loom_tensor *b = golden("linear_%s", "bias"), *want = golden("linear_%s", "output");
    const loom_tensor *lin[3] = { x, w, b };
    check_op("vision.linear", lin, 3, NULL, want, "linear");
    loom_tensor *all[] = { x, w, b, want };
    for (size_t i = 0; i < 4; i++)
        loom_tensor_free(all[i]);

    loom_tensor *s = golden("softmax_%s", "input"), *s1 = golden("softmax_%s", "dim1"), *sl = golden("softmax_%s", "last");
    const loom_tensor *sin[1] = { s };
    check_op("vision.softmax", sin, 1, "dim=1", s1, "softmax dim 1");
    check_op("vision.softmax", sin, 1, NULL, sl, "softmax dim -1");
    loom_tensor_free(s);
    loom_tensor_free(s1);
    loom_tensor_free(sl);

    loom_tensor *n = golden("ln_%s", "input"), *lw = golden("ln_%s", "weight"), *lb = golden("ln_%s", "bias");
    loom_tensor *lo = golden("ln_%s", "output");
    const loom_tensor *lin2[3] = { n, lw, lb };
    check_op("vision.layer_norm", lin2, 3, "eps=1e-6", lo, "layer_norm");
    loom_tensor_free(n);
    loom_tensor_free(lw);
    loom_tensor_free(lb);
    loom_tensor_free(lo);
}

/* vision.layer_norm's cpu kernel gives the bits of its portable algorithm
** on every path (the AVX2 row by default, the portable one under
** LOOM_CPU_MAX_ISA=sse4): mean and variance in double over 8 interleaved
** partial sums (element i into sum i % 8, the tail into a ninth) added in
** a fixed tree, then ((x - mean) * rstd) * w + b in f32. Row lengths with
** and without a tail, with and without a bias; compared bit for bit. */
static double ln_tree(const double p[8], double tail)
{
    return (((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]))) + tail;
}

static void layer_norm_bits_are_the_portable_ones(void **state)
{
    (void)state;
    static const int64_t lens[] = { 3, 8, 13, 96, 771 };
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
        const int64_t rows = 5, len = lens[li], xs[2] = { rows, len };
        loom_tensor *x = tu_random_f32(2, xs, 11 + (unsigned)li), *w = tu_random_f32(1, &len, 21 + (unsigned)li);
        loom_tensor *b = tu_random_f32(1, &len, 31 + (unsigned)li);
        float *xp = loom_data(x);
        for (int64_t i = 0; i < rows * len; i++)
            xp[i] = 3.0f + 2.0f * xp[i];   /* an offset mean: the two-pass variance matters */
        for (int with_bias = 0; with_bias < 2; with_bias++) {
            const loom_tensor *in[3] = { x, w, with_bias ? b : NULL };
            loom_attrs *a = attrs_of("vision.layer_norm", "eps=1e-5");
            loom_tensor *got = NULL;
            if (tu_call("vision.layer_norm", in, 3, a, "cpu", &got) != LOOM_OK)
                fail_msg("layer_norm len %lld: %s", (long long)len, loom_last_error());
            const float *g = loom_data(got), *wp = loom_data(w), *bp = loom_data(b);
            for (int64_t r = 0; r < rows; r++) {
                const float *xr = xp + r * len;
                double p[8] = { 0 }, tail = 0.0;
                int64_t i = 0;
                for (; i + 8 <= len; i += 8)
                    for (int k = 0; k < 8; k++)
                        p[k] += (double)xr[i + k];
                for (; i < len; i++)
                    tail += (double)xr[i];
                const double mean = ln_tree(p, tail) / (double)len;
                memset(p, 0, sizeof p);
                tail = 0.0;
                for (i = 0; i + 8 <= len; i += 8)
                    for (int k = 0; k < 8; k++) {
                        volatile double d = (double)xr[i + k] - mean, sq = d * d;   /* no fused multiply-add */
                        p[k] += sq;
                    }
                for (; i < len; i++) {
                    volatile double d = (double)xr[i] - mean, sq = d * d;
                    tail += sq;
                }
                const double var = ln_tree(p, tail) / (double)len;
                const float fm = (float)mean, rstd = (float)(1.0 / sqrt(var + 1e-5));
                for (i = 0; i < len; i++) {
                    volatile float t = (xr[i] - fm) * rstd, u = t * wp[i];
                    float want = u + (with_bias ? bp[i] : 0.0f);
                    if (memcmp(&want, &g[r * len + i], sizeof want) != 0)
                        fail_msg("layer_norm len %lld%s: row %lld element %lld is %a, want %a", (long long)len,
                                 with_bias ? "" : " (no bias)", (long long)r, (long long)i, (double)g[r * len + i],
                                 (double)want);
                }
            }
            loom_tensor_free(got);
            loom_attrs_free(a);
        }
        loom_tensor_free(x);
        loom_tensor_free(w);
        loom_tensor_free(b);
    }
}

/* The non-zero padding modes and the depthwise convs are the cpu kernel's:
** onednn declines them with a reason, and the dispatcher then runs the cpu
** kernel. */
static void onednn_declines_padding_modes(void **state)
{
    (void)state;
    if (!tu_has_backend("vision.conv2d", "onednn"))
        skip();
    loom_tensor *x = golden("conv_%s_input", "reflect"), *w = golden("conv_%s_weight", "reflect"), *got = NULL;
    const loom_tensor *in[3] = { x, w, NULL };
    loom_attrs *a = attrs_of("vision.conv2d", "padding=1;padding_mode=reflect");
    assert_int_not_equal(tu_call("vision.conv2d", in, 3, a, "onednn", &got), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "padding_mode reflect"));
    assert_int_equal(tu_call("vision.conv2d", in, 3, a, NULL, &got), LOOM_OK);
    loom_tensor_free(got);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_attrs_free(a);
    x = golden("conv_%s_input", "dw_s1_silu");
    w = golden("conv_%s_weight", "dw_s1_silu");
    const loom_tensor *dw[3] = { x, w, NULL };
    a = attrs_of("vision.conv2d", "padding=1;groups=16");
    assert_int_not_equal(tu_call("vision.conv2d", dw, 3, a, "onednn", &got), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "depthwise"));
    assert_int_equal(tu_call("vision.conv2d", dw, 3, a, NULL, &got), LOOM_OK);
    loom_tensor_free(got);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_attrs_free(a);
}

/* -------------------------------------------------------------- refusals */

static void expect_refusal(const char *op, const loom_tensor *const *in, int32_t n, const char *spec,
                           const char *needle)
{
    loom_attrs *a = attrs_of(op, spec);
    loom_tensor *got = NULL;
    loom_status st = tu_call(op, in, n, a, NULL, &got);
    if (st == LOOM_OK)
        fail_msg("%s (%s) was accepted; want an error naming %s", op, spec ? spec : "", needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: message \"%s\" does not name %s", op, loom_last_error(), needle);
    loom_attrs_free(a);
}

static void bad_arguments_are_refused(void **state)
{
    (void)state;
    int64_t xs[4] = { 1, 4, 5, 5 }, ws[4] = { 6, 2, 3, 3 }, wbad[4] = { 6, 3, 3, 3 }, bs[1] = { 5 };
    loom_tensor *x = tu_random_f32(4, xs, 1), *w = tu_random_f32(4, ws, 2), *w3 = tu_random_f32(4, wbad, 3);
    loom_tensor *b = tu_random_f32(1, bs, 4), *x64 = tu_cast(x, LOOM_DTYPE_F64);
    const loom_tensor *c1[3] = { x, w3, NULL }, *c2[3] = { x, w, NULL }, *c3[3] = { x, w, b }, *c4[3] = { x64, w, NULL };
    expect_refusal("vision.conv2d", c1, 3, NULL, "'weight'");                      /* Cin != groups * 3 */
    expect_refusal("vision.conv2d", c2, 3, "groups=2;padding=5;padding_mode=reflect", "reflect");
    expect_refusal("vision.conv2d", c3, 3, "groups=2", "'bias'");
    expect_refusal("vision.conv2d", c2, 3, "groups=4", "groups");                  /* 6 % 4 */
    expect_refusal("vision.conv2d", c2, 3, "groups=2;dilation=3", "kernel");      /* too small */
    expect_refusal("vision.conv2d", c2, 3, "groups=2;padding_mode=mirror", "padding_mode");
    expect_refusal("vision.conv2d", c4, 3, "groups=2", "'input'");
    const loom_tensor *p[1] = { x };
    expect_refusal("vision.max_pool2d", p, 1, "kernel_size=2;padding=2", "padding");
    expect_refusal("vision.avg_pool2d", p, 1, "kernel_size=7", "too small");
    expect_refusal("vision.softmax", p, 1, "dim=4", "dim");
    const loom_tensor *bn[3] = { x, b, b };
    expect_refusal("vision.batch_norm", bn, 3, NULL, "'running_mean'");
    int64_t fs[1] = { 4 };
    loom_tensor *four = tu_random_f32(1, fs, 12);
    const loom_tensor *ln[2] = { x, four };      /* normalized_shape [4] is not x's trailing [5] */
    expect_refusal("vision.layer_norm", ln, 2, NULL, "'weight'");
    int64_t ls[2] = { 3, 4 };
    loom_tensor *lw = tu_random_f32(2, ls, 13);
    const loom_tensor *li[2] = { x, lw };          /* in_features 4, x ends in 5 */
    expect_refusal("vision.linear", li, 2, NULL, "in_features");
    loom_tensor *all[] = { x, w, w3, b, x64, four, lw };
    for (size_t i = 0; i < 7; i++)
        loom_tensor_free(all[i]);
}

/* The folding helper's contract, through the ops: conv then batch_norm
** equals one conv with the folded weight and bias. */
static void batch_norm_folds_into_conv(void **state)
{
    (void)state;
    int64_t xs[4] = { 1, 3, 6, 6 }, ws[4] = { 4, 3, 3, 3 }, cs[1] = { 4 };
    loom_tensor *x = tu_random_f32(4, xs, 5), *w = tu_random_f32(4, ws, 6), *m = tu_random_f32(1, cs, 7);
    loom_tensor *v = tu_random_f32(1, cs, 8), *g = tu_random_f32(1, cs, 9), *be = tu_random_f32(1, cs, 10);
    float *vp = loom_data(v);
    for (int i = 0; i < 4; i++)
        vp[i] = vp[i] * vp[i] + 0.25f;
    loom_attrs *pad = attrs_of("vision.conv2d", "padding=1");
    loom_tensor *conv = NULL, *ref = NULL;
    const loom_tensor *ci[3] = { x, w, NULL };
    assert_int_equal(tu_call("vision.conv2d", ci, 3, pad, "cpu", &conv), LOOM_OK);
    const loom_tensor *bi[5] = { conv, m, v, g, be };
    assert_int_equal(tu_call("vision.batch_norm", bi, 5, NULL, "cpu", &ref), LOOM_OK);
    /* fold as the loaders do (layers_fold_batch_norm's formula, in double) */
    float *wp = loom_data(w), *mp = loom_data(m), *gp = loom_data(g), *bp = loom_data(be);
    int64_t bshape[1] = { 4 };
    loom_tensor *fb = tu_random_f32(1, bshape, 11);
    float *fbp = loom_data(fb);
    for (int o = 0; o < 4; o++) {
        double s = gp[o] / sqrt((double)vp[o] + 1e-5);
        for (int i = 0; i < 27; i++)
            wp[o * 27 + i] = (float)(wp[o * 27 + i] * s);
        fbp[o] = (float)((0.0 - mp[o]) * s + bp[o]);
    }
    const loom_tensor *fi[3] = { x, w, fb };
    check_op("vision.conv2d", fi, 3, "padding=1", ref, "folded conv");
    loom_tensor *all[] = { x, w, m, v, g, be, conv, ref, fb };
    for (size_t i = 0; i < 9; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(pad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(conv2d_matches_torch),
        cmocka_unit_test(conv2d_residual_matches_torch),
        cmocka_unit_test(conv2d_depthwise_residual_matches_torch),
        cmocka_unit_test(batch_norm_matches_torch),
        cmocka_unit_test(activations_match_torch),
        cmocka_unit_test(pools_match_torch),
        cmocka_unit_test(rowwise_match_torch),
        cmocka_unit_test(layer_norm_bits_are_the_portable_ones),
        cmocka_unit_test(bad_arguments_are_refused),
        cmocka_unit_test(onednn_declines_padding_modes),
        cmocka_unit_test(batch_norm_folds_into_conv),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
