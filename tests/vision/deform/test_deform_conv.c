/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_deform_conv.c - vision.deform_conv2d and vision.deform_conv2d_backward
** against torchvision (goldens of tools/gen_vision_deform_goldens.py): with
** and without mask and bias, weight groups and offset groups > 1, stride 2,
** dilation 2, a non-square kernel, samples outside the image and on its
** borders, N = 0, f64, f16; the gradients against torchvision's autograd;
** determinism of the backward across thread counts; and the refusals.
**
** Tolerances: the sampled columns follow torchvision's arithmetic, only the
** GEMM's summation order differs: K <= 72 products of magnitude <= ~10, so
** f32 agrees to ~K * 2^-24 * 10 < 5e-5 (atol 5e-5, rtol 1e-5); f64 to 1e-12.
** The gradients sum over every output position as well (up to 432 terms):
** atol 2e-4, rtol 1e-4 for f32. torchvision's f16 rounds every step to half
** while loom rounds once from f32: a few half ulps (atol 0.03, rtol 0.01).
*/
#include "deform_test.h"

static void tolerances(const loom_tensor *t, int grads, double *rtol, double *atol)
{
    switch (loom_tensor_dtype_of(t)) {
    case LOOM_DTYPE_F64: *rtol = 1e-12; *atol = 1e-12; break;
    case LOOM_DTYPE_F16: *rtol = grads ? 3e-2 : 1e-2; *atol = grads ? 1e-1 : 3e-2; break;
    default: *rtol = grads ? 1e-4 : 1e-5; *atol = grads ? 2e-4 : 5e-5; break;
    }
}

static void run_forward_case(const conv_case *c, const char *backend)
{
    loom_tensor *in = dt_golden(c->name, "input"), *off = dt_golden(c->name, "offset");
    loom_tensor *wt = dt_golden(c->name, "weight"), *want = dt_golden(c->name, "output");
    loom_tensor *bias = c->has_bias ? dt_golden(c->name, "bias") : NULL;
    loom_tensor *mask = c->has_mask ? dt_golden(c->name, "mask") : NULL, *got;
    loom_attrs *a = dt_conv_attrs(c->stride, c->padding, c->dilation);
    const loom_tensor *ins[5] = { in, off, wt, bias, mask };
    loom_status st = dt_run("vision.deform_conv2d", ins, 5, a, backend, &got, 1);
    if (st != LOOM_OK)
        fail_msg("%s: %s", c->name, loom_last_error());
    double rtol, atol;
    tolerances(want, 0, &rtol, &atol);
    char what[96];
    snprintf(what, sizeof what, "deform_conv2d %s", c->name);
    dt_assert_close(got, want, rtol, atol, what);
    loom_tensor *all[] = { in, off, wt, want, bias, mask, got };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

static void forward_matches_torchvision(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_CONV_CASES; i++)
        run_forward_case(&conv_cases[i], NULL);
}

static const char *const grad_names[5] = { "grad_input", "grad_weight", "grad_offset", "grad_mask", "grad_bias" };

/* The five gradients of case c (threads 0 = the pool's default). */
static void run_backward(const conv_case *c, int32_t threads, loom_tensor **outs)
{
    loom_tensor *grad = dt_golden(c->name, "grad"), *in = dt_golden(c->name, "input");
    loom_tensor *off = dt_golden(c->name, "offset"), *wt = dt_golden(c->name, "weight");
    loom_tensor *bias = c->has_bias ? dt_golden(c->name, "bias") : NULL;
    loom_tensor *mask = c->has_mask ? dt_golden(c->name, "mask") : NULL;
    loom_attrs *a = dt_conv_attrs(c->stride, c->padding, c->dilation);
    const loom_tensor *ins[6] = { grad, in, wt, off, mask, bias };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.num_threads = threads;
    for (int i = 0; i < 5; i++)
        outs[i] = NULL;
    if (loom_run("vision.deform_conv2d_backward", ins, 6, a, outs, 5, &opt) != LOOM_OK)
        fail_msg("%s backward: %s", c->name, loom_last_error());
    loom_tensor *all[] = { grad, in, off, wt, bias, mask };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

static void backward_matches_torchvision_autograd(void **state)
{
    static const char *const golden[5] = { "grad_input", "grad_weight", "grad_offset", "grad_mask", "grad_bias" };
    (void)state;
    for (size_t i = 0; i < N_CONV_CASES; i++) {
        const conv_case *c = &conv_cases[i];
        if (!c->has_backward)
            continue;
        loom_tensor *outs[5];
        run_backward(c, 0, outs);
        for (int k = 0; k < 5; k++) {
            char what[96];
            snprintf(what, sizeof what, "%s %s", c->name, grad_names[k]);
            if (k == 3 && !c->has_mask) {       /* no mask: grad_mask is [N, 0, Ho, Wo] */
                assert_int_equal(outs[3]->ndim, 4);
                assert_int_equal(outs[3]->shape[1], 0);
                continue;
            }
            loom_tensor *want = dt_golden(c->name, golden[k]);
            double rtol, atol;
            tolerances(want, 1, &rtol, &atol);
            dt_assert_close(outs[k], want, rtol, atol, what);
            loom_tensor_free(want);
        }
        for (int k = 0; k < 5; k++)
            loom_tensor_free(outs[k]);
    }
}

/* Every chunk of images runs on one thread and grad_weight is summed in
** chunk order: one thread and the whole pool give the same bits. */
static void backward_is_deterministic_across_thread_counts(void **state)
{
    (void)state;
    const conv_case *c = &conv_cases[7];     /* "wide": 3 images */
    assert_string_equal(c->name, "wide");
    loom_tensor *one[5], *many[5];
    run_backward(c, 1, one);
    run_backward(c, 0, many);
    for (int k = 0; k < 5; k++) {
        tu_assert_identical(many[k], one[k], grad_names[k]);
        loom_tensor_free(one[k]);
        loom_tensor_free(many[k]);
    }
}

/* N = 0: torchvision returns zero gradients of the inputs' shapes. */
static void backward_of_an_empty_batch_is_zero(void **state)
{
    (void)state;
    const conv_case *c = &conv_cases[8];
    assert_string_equal(c->name, "empty");
    loom_tensor *in = dt_golden(c->name, "input"), *outs[5];
    loom_tensor *grad;
    assert_int_equal(loom_tensor_new(&grad, LOOM_DTYPE_F32, 4, (const int64_t[]){ 0, 3, 7, 7 }, NULL), LOOM_OK);
    loom_tensor *off = dt_golden(c->name, "offset"), *wt = dt_golden(c->name, "weight");
    loom_tensor *mask = dt_golden(c->name, "mask");
    loom_attrs *a = dt_conv_attrs(c->stride, c->padding, c->dilation);
    const loom_tensor *ins[6] = { grad, in, wt, off, mask, NULL };
    if (dt_run("vision.deform_conv2d_backward", ins, 6, a, NULL, outs, 5) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    assert_int_equal(outs[0]->shape[0], 0);
    assert_int_equal(outs[2]->shape[1], 18);
    assert_int_equal(outs[3]->shape[1], 9);
    for (int k = 1; k < 5; k += 3)              /* grad_weight, grad_bias */
        for (int64_t i = 0; i < loom_numel(outs[k]); i++)
            assert_true(((const float *)loom_data(outs[k]))[i] == 0.0f);
    loom_tensor *all[] = { in, grad, off, wt, mask, outs[0], outs[1], outs[2], outs[3], outs[4] };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

/* A sample outside the image is 0 and a corner outside the image reads
** nothing: non-finite pixels elsewhere in the plane (here at its first
** element, and on the far edge) must not leak into such samples. */
static void pixels_outside_a_sample_never_leak_into_it(void **state)
{
    (void)state;
    enum { C = 2, H = 5, W = 5, K = 3 };
    loom_tensor *in, *off, *wt, *got;
    assert_int_equal(loom_tensor_new(&in, LOOM_DTYPE_F32, 4, (const int64_t[]){ 1, C, H, W }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&off, LOOM_DTYPE_F32, 4, (const int64_t[]){ 1, 2 * K * K, H, W }, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&wt, LOOM_DTYPE_F32, 4, (const int64_t[]){ 1, C, K, K }, NULL), LOOM_OK);
    float *x = loom_data(in), *o = loom_data(off), *w = loom_data(wt);
    for (int64_t i = 0; i < loom_numel(in); i++)
        x[i] = 1.0f;
    for (int c = 0; c < C; c++) {
        x[c * H * W] = NAN;                       /* (0, 0) of each plane */
        x[c * H * W + 2 * W + (W - 1)] = INFINITY; /* (2, W-1) */
    }
    for (int64_t i = 0; i < loom_numel(wt); i++)
        w[i] = 1.0f;
    /* every tap of output (2, 1) samples at y = 2 + 1.5 - 1 + a, x = -1.5 + b - 1 + ...:
    ** shift all of them 40 pixels up (wholly outside) except the centre tap,
    ** which goes to (2.5, -0.5): half outside on the left, corners (2|3, 0) */
    const int64_t oy = 2, ox = 1;
    for (int t = 0; t < K * K; t++) {
        o[((2 * t) * H + oy) * W + ox] = t == 4 ? 0.5f : -40.0f;
        o[((2 * t + 1) * H + oy) * W + ox] = t == 4 ? -1.5f : 0.0f;
    }
    loom_attrs *a = dt_conv_attrs((const int64_t[]){ 1, 1 }, (const int64_t[]){ 1, 1 }, (const int64_t[]){ 1, 1 });
    const loom_tensor *ins[3] = { in, off, wt };
    if (dt_run("vision.deform_conv2d", ins, 3, a, NULL, &got, 1) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    /* the centre tap: weights 0.25 on (2,0) and (3,0) (both 1), 0 on x = -1 */
    const float v = ((const float *)loom_data(got))[oy * W + ox];
    assert_true(isfinite(v));
    assert_float_equal(v, C * 0.5f, 1e-6f);
    loom_tensor *all[] = { in, off, wt, got };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

/* A single stride / padding value applies to both dims (torchvision's _pair). */
static void single_value_attributes_apply_to_both_dims(void **state)
{
    (void)state;
    const conv_case *c = &conv_cases[2];     /* groups_stride: stride 2, padding 1 */
    loom_tensor *in = dt_golden(c->name, "input"), *off = dt_golden(c->name, "offset");
    loom_tensor *wt = dt_golden(c->name, "weight"), *bias = dt_golden(c->name, "bias");
    loom_tensor *mask = dt_golden(c->name, "mask"), *want = dt_golden(c->name, "output"), *got;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "stride", (const int64_t[]){ 2 }, 1), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "padding", (const int64_t[]){ 1 }, 1), LOOM_OK);
    const loom_tensor *ins[5] = { in, off, wt, bias, mask };
    if (dt_run("vision.deform_conv2d", ins, 5, a, NULL, &got, 1) != LOOM_OK)
        fail_msg("%s", loom_last_error());
    dt_assert_close(got, want, 1e-5, 5e-5, "single-value stride/padding");
    loom_tensor *all[] = { in, off, wt, bias, mask, want, got };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(a);
}

/* ------------------------------------------------------------- refusals */

typedef struct bad_setup {
    loom_tensor *in, *off, *wt, *bias, *mask;
    loom_attrs *a;
} bad_setup;

static void bad_open(bad_setup *b)
{
    const conv_case *c = &conv_cases[0];     /* basic_mask: [2,4,7,7], 3x3, Cout 3, padding 1 */
    b->in = dt_golden(c->name, "input");
    b->off = dt_golden(c->name, "offset");
    b->wt = dt_golden(c->name, "weight");
    b->bias = dt_golden(c->name, "bias");
    b->mask = dt_golden(c->name, "mask");
    b->a = dt_conv_attrs(c->stride, c->padding, c->dilation);
}

static void bad_close(bad_setup *b)
{
    loom_tensor *all[] = { b->in, b->off, b->wt, b->bias, b->mask };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_attrs_free(b->a);
}

static loom_status fwd(const loom_tensor *in, const loom_tensor *off, const loom_tensor *wt, const loom_tensor *bias,
                     const loom_tensor *mask, const loom_attrs *a)
{
    loom_tensor *out = NULL;
    const loom_tensor *ins[5] = { in, off, wt, bias, mask };
    loom_status st = dt_run("vision.deform_conv2d", ins, 5, a, NULL, &out, 1);
    loom_tensor_free(out);
    return st;
}

/* A view of t's data with another shape (same element count or fewer). */
static loom_tensor *reshaped(const loom_tensor *t, int32_t ndim, const int64_t *shape)
{
    loom_tensor *v;
    assert_int_equal(loom_tensor_wrap(&v, loom_data(t), loom_tensor_dtype_of(t), ndim, shape, NULL, NULL), LOOM_OK);
    return v;
}

static void refuses_offsets_that_disagree_with_the_kernel(void **state)
{
    bad_setup b;
    (void)state;
    bad_open(&b);
    /* 17 channels: not a multiple of 2*3*3 */
    loom_tensor *off17 = reshaped(b.off, 4, (const int64_t[]){ 2, 17, 7, 7 });
    dt_expect_error(fwd(b.in, off17, b.wt, b.bias, b.mask, b.a), LOOM_EINVAL, "expected [2, 2*offset_groups*9, 7, 7]");
    /* right channels, wrong output size */
    loom_tensor *off_hw = reshaped(b.off, 4, (const int64_t[]){ 2, 18, 6, 7 });
    dt_expect_error(fwd(b.in, off_hw, b.wt, b.bias, b.mask, b.a), LOOM_EINVAL, "expected [2, 18, 7, 7]");
    assert_non_null(strstr(loom_last_error(), "'offset'"));
    assert_non_null(strstr(loom_last_error(), "vision.deform_conv2d"));
    /* wrong batch */
    loom_tensor *off_n = reshaped(b.off, 4, (const int64_t[]){ 1, 18, 7, 7 });
    dt_expect_error(fwd(b.in, off_n, b.wt, b.bias, b.mask, b.a), LOOM_EINVAL, "expected [2, 18, 7, 7]");
    loom_tensor_free(off17);
    loom_tensor_free(off_hw);
    loom_tensor_free(off_n);
    bad_close(&b);
}

static void refuses_bad_mask_bias_and_weight(void **state)
{
    bad_setup b;
    (void)state;
    bad_open(&b);
    loom_tensor *mask = reshaped(b.mask, 4, (const int64_t[]){ 2, 8, 7, 7 });
    dt_expect_error(fwd(b.in, b.off, b.wt, b.bias, mask, b.a), LOOM_EINVAL, "'mask' f32[2,8,7,7]: expected [2, 9, 7, 7]");
    loom_tensor *bias = reshaped(b.bias, 1, (const int64_t[]){ 2 });
    dt_expect_error(fwd(b.in, b.off, b.wt, bias, b.mask, b.a), LOOM_EINVAL, "'bias' f32[2]: expected [3]");
    /* weight.shape[1] = 3 does not divide Cin = 4 */
    loom_tensor *wt = reshaped(b.wt, 4, (const int64_t[]){ 4, 3, 3, 3 });
    dt_expect_error(fwd(b.in, b.off, wt, b.bias, b.mask, b.a), LOOM_EINVAL, "must divide the 4 channels of 'input'");
    /* groups = 2 but Cout = 3 */
    loom_tensor *wt2 = reshaped(b.wt, 4, (const int64_t[]){ 3, 2, 3, 3 });
    dt_expect_error(fwd(b.in, b.off, wt2, b.bias, b.mask, b.a), LOOM_EINVAL, "not a multiple of groups = 2");
    loom_tensor *all[] = { mask, bias, wt, wt2 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    bad_close(&b);
}

static void refuses_mixed_dtypes_strides_and_attributes(void **state)
{
    bad_setup b;
    (void)state;
    bad_open(&b);
    loom_tensor *off64 = dt_f64(b.off);
    dt_expect_error(fwd(b.in, off64, b.wt, b.bias, b.mask, b.a), LOOM_EINVAL, "'offset' is f64[2,18,7,7]");
    /* a transposed view of the input (H and W swapped) */
    loom_tensor *view;
    const int64_t shape[4] = { 2, 4, 7, 7 }, strides[4] = { 196, 49, 1, 7 };
    assert_int_equal(loom_tensor_wrap(&view, loom_data(b.in), LOOM_DTYPE_F32, 4, shape, strides, NULL), LOOM_OK);
    /* it runs: the core hands the kernel a compact copy */
    assert_int_equal(fwd(view, b.off, b.wt, b.bias, b.mask, b.a), LOOM_OK);
    loom_attrs *a = dt_conv_attrs((const int64_t[]){ 0, 1 }, (const int64_t[]){ 1, 1 }, (const int64_t[]){ 1, 1 });
    dt_expect_error(fwd(b.in, b.off, b.wt, b.bias, b.mask, a), LOOM_EINVAL, "attribute 'stride'");
    loom_attrs_free(a);
    a = dt_conv_attrs((const int64_t[]){ 1, 1 }, (const int64_t[]){ -1, 1 }, (const int64_t[]){ 1, 1 });
    dt_expect_error(fwd(b.in, b.off, b.wt, b.bias, b.mask, a), LOOM_EINVAL, "attribute 'padding'");
    loom_attrs_free(a);
    /* dilation 5: a 3x3 kernel spans 11 > 7 + 2*1 */
    a = dt_conv_attrs((const int64_t[]){ 1, 1 }, (const int64_t[]){ 1, 1 }, (const int64_t[]){ 5, 5 });
    dt_expect_error(fwd(b.in, b.off, b.wt, b.bias, b.mask, a), LOOM_EINVAL, "too small");
    loom_attrs_free(a);
    loom_tensor_free(off64);
    loom_tensor_free(view);
    bad_close(&b);
}

static void backward_refuses_a_bad_grad(void **state)
{
    bad_setup b;
    (void)state;
    bad_open(&b);
    loom_tensor *grad = reshaped(b.off, 4, (const int64_t[]){ 2, 3, 7, 6 }), *outs[5];
    const loom_tensor *ins[6] = { grad, b.in, b.wt, b.off, b.mask, b.bias };
    dt_expect_error(dt_run("vision.deform_conv2d_backward", ins, 6, b.a, NULL, outs, 5), LOOM_EINVAL,
                    "'grad' f32[2,3,7,6]: expected [2, 3, 7, 7]");
    loom_tensor_free(grad);
    bad_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_matches_torchvision),
        cmocka_unit_test(backward_matches_torchvision_autograd),
        cmocka_unit_test(backward_is_deterministic_across_thread_counts),
        cmocka_unit_test(backward_of_an_empty_batch_is_zero),
        cmocka_unit_test(single_value_attributes_apply_to_both_dims),
        cmocka_unit_test(pixels_outside_a_sample_never_leak_into_it),
        cmocka_unit_test(refuses_offsets_that_disagree_with_the_kernel),
        cmocka_unit_test(refuses_bad_mask_bias_and_weight),
        cmocka_unit_test(refuses_mixed_dtypes_strides_and_attributes),
        cmocka_unit_test(backward_refuses_a_bad_grad),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
