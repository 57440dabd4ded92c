/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_layers_cuda.c - what of the layers' cuda kernels (vision-cuda.so)
** the conformance harness cannot reach, each call against the cpu kernel
** on the same inputs: conv2d's padding copies (reflect, replicate,
** circular: onednn declines them, so the generic cases keep to zeros), a
** residual after the activation, gelu and silu in the separate epilogue, an
** empty map padded to a non-empty output, a conv2d plan reused from the
** cache for a second call and a new batch size; channel_shuffle of another
** dtype; and the refusals, which must name the argument as the cpu's do.
** Tolerances as tests/conformance/cases_vision.c argues them: f32 sums in
** another order (cuDNN's algorithms, FMA math, no TF32) and the device's
** expf / erff within 2 ulps: 1e-5 relative and absolute. Every test skips
** with a message without a CUDA device (suite gpu).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_dl_device dev;
static const loom_dl_device host = { LOOM_DEVICE_CPU, 0 };

#define NEED_CUDA(op)                                                                              \
    do {                                                                                           \
        if (!tu_cuda_device(&dev) || !tu_has_backend((op), "cuda")) {                              \
            print_message("no CUDA device (or no cuda kernel of %s): the layers' cuda kernels are not run\n", \
                          (op));                                                                   \
            skip();                                                                                \
        }                                                                                          \
    } while (0)

/* op on the cuda device (inputs copied there, NULL kept), its output back
** on the host; the status of the call. */
static loom_status run_cuda(const char *op, const loom_tensor *const *in, int32_t n, const loom_attrs *a,
                            loom_tensor **out_host)
{
    loom_tensor *d[8] = { NULL }, *out = NULL;
    for (int32_t i = 0; i < n; i++)
        if (in[i] != NULL)
            assert_int_equal(loom_tensor_copy_to(&d[i], in[i], &dev), LOOM_OK);
    loom_status st = tu_call(op, (const loom_tensor *const *)d, n, a, "cuda", &out);
    for (int32_t i = 0; i < n; i++)
        loom_tensor_free(d[i]);
    *out_host = NULL;
    if (st == LOOM_OK) {
        assert_int_equal(loom_tensor_copy_to(out_host, out, &host), LOOM_OK);
        loom_tensor_free(out);
    }
    return st;
}

/* op with attributes `attrs` on cpu and cuda, the outputs compared. */
static void against_cpu(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs, double tol)
{
    loom_attrs *a = tu_attrs_text(op, attrs);
    loom_tensor *want = NULL, *got = NULL;
    if (tu_call(op, in, n, a, "cpu", &want) != LOOM_OK)
        fail_msg("%s (%s) on cpu: %s", op, attrs, loom_last_error());
    if (run_cuda(op, in, n, a, &got) != LOOM_OK)
        fail_msg("%s (%s) on cuda: %s", op, attrs, loom_last_error());
    char what[256];
    snprintf(what, sizeof what, "%s (%s) on cuda", op, attrs);
    if (tol == 0)
        tu_assert_identical(got, want, what);
    else
        tu_assert_close(got, want, tol, tol, what);
    loom_tensor_free(want);
    loom_tensor_free(got);
    loom_attrs_free(a);
}

static loom_tensor *rnd(int32_t ndim, const int64_t *shape, unsigned seed) { return tu_random_f32(ndim, shape, seed); }

static void test_conv_padding_modes(void **state)
{
    (void)state;
    NEED_CUDA("vision.conv2d");
    loom_tensor *x = rnd(4, (const int64_t[]){ 2, 6, 9, 11 }, 1), *w = rnd(4, (const int64_t[]){ 8, 3, 3, 3 }, 2);
    loom_tensor *b = rnd(1, (const int64_t[]){ 8 }, 3);
    const char *modes[3] = { "reflect", "replicate", "circular" };
    for (int m = 0; m < 3; m++) {
        char attrs[160];
        snprintf(attrs, sizeof attrs, "padding=2,1;groups=2;stride=2,1;padding_mode=%s;activation=relu", modes[m]);
        against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, b }, 3, attrs, 1e-5);
    }
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_tensor_free(b);
}

static void test_conv_epilogues(void **state)
{
    (void)state;
    NEED_CUDA("vision.conv2d");
    loom_tensor *x = rnd(4, (const int64_t[]){ 2, 8, 10, 10 }, 4), *w = rnd(4, (const int64_t[]){ 8, 8, 3, 3 }, 5);
    loom_tensor *b = rnd(1, (const int64_t[]){ 8 }, 6), *r = rnd(4, (const int64_t[]){ 2, 8, 10, 10 }, 7);
    /* FusedMBConv without expansion: silu(conv + bias) + residual */
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, b, r }, 4,
                "padding=1;activation=silu;residual_after_activation=true", 1e-5);
    /* relu after the residual, through the epilogue (residual after) and the fusion (before) */
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, NULL, r }, 4,
                "padding=1;activation=relu;residual_after_activation=true", 1e-5);
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, b, r }, 4, "padding=1;activation=relu", 1e-5);
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, b }, 3, "padding=2;dilation=2;activation=gelu", 1e-5);
    /* the same geometry again (the cached plan), then another batch size (a new plan) */
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, b }, 3, "padding=1;activation=relu", 1e-5);
    loom_tensor *x1 = rnd(4, (const int64_t[]){ 1, 8, 10, 10 }, 8);
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x1, w, b }, 3, "padding=1;activation=relu", 1e-5);
    loom_tensor_free(x1);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_tensor_free(b);
    loom_tensor_free(r);
}

static void test_conv_empty_map(void **state)
{
    (void)state;
    NEED_CUDA("vision.conv2d");
    /* an input without rows, padded to a 2-row output: act(bias) everywhere */
    loom_tensor *x = NULL, *w = rnd(4, (const int64_t[]){ 4, 3, 1, 1 }, 9), *b = rnd(1, (const int64_t[]){ 4 }, 10);
    assert_int_equal(loom_tensor_new(&x, LOOM_DTYPE_F32, 4, (const int64_t[]){ 1, 3, 0, 5 }, NULL), LOOM_OK);
    /* silu of the bias: the device's expf against the cpu's vector exp, a few ulps */
    against_cpu("vision.conv2d", (const loom_tensor *[]){ x, w, b }, 3, "padding=1;activation=silu", 1e-6);
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_tensor_free(b);
}

static void test_shuffle_dtypes(void **state)
{
    (void)state;
    NEED_CUDA("vision.channel_shuffle");
    loom_tensor *f = rnd(4, (const int64_t[]){ 2, 12, 3, 5 }, 11);
    loom_tensor *h = tu_cast(f, LOOM_DTYPE_F16), *d = tu_cast(f, LOOM_DTYPE_F64);
    against_cpu("vision.channel_shuffle", (const loom_tensor *[]){ h }, 1, "groups=4", 0);
    against_cpu("vision.channel_shuffle", (const loom_tensor *[]){ d, d }, 2, "groups=3", 0);
    loom_tensor_free(f);
    loom_tensor_free(h);
    loom_tensor_free(d);
}

/* The cuda kernel refuses as the cpu's does, in the same words. */
static void same_refusal(const char *op, const loom_tensor *const *in, int32_t n, const char *attrs)
{
    loom_attrs *a = tu_attrs_text(op, attrs);
    loom_tensor *out = NULL;
    assert_int_not_equal(tu_call(op, in, n, a, "cpu", &out), LOOM_OK);
    char cpu_msg[512];
    snprintf(cpu_msg, sizeof cpu_msg, "%s", loom_last_error());
    assert_int_not_equal(run_cuda(op, in, n, a, &out), LOOM_OK);
    if (strcmp(cpu_msg, loom_last_error()) != 0)
        fail_msg("%s: cpu says '%s', cuda '%s'", op, cpu_msg, loom_last_error());
    loom_attrs_free(a);
}

static void test_refusals(void **state)
{
    (void)state;
    NEED_CUDA("vision.linear");
    loom_tensor *x = rnd(4, (const int64_t[]){ 2, 6, 5, 5 }, 12), *w = rnd(4, (const int64_t[]){ 4, 4, 3, 3 }, 13);
    loom_tensor *m = rnd(2, (const int64_t[]){ 3, 7 }, 14), *lw = rnd(2, (const int64_t[]){ 5, 6 }, 15);
    loom_tensor *c5 = rnd(1, (const int64_t[]){ 5 }, 16);
    same_refusal("vision.linear", (const loom_tensor *[]){ m, lw, NULL }, 3, "-");
    same_refusal("vision.batch_norm", (const loom_tensor *[]){ x, c5, c5, NULL, NULL }, 5, "-");
    same_refusal("vision.softmax", (const loom_tensor *[]){ m }, 1, "dim=2");
    same_refusal("vision.layer_norm", (const loom_tensor *[]){ m, c5, NULL }, 3, "-");
    same_refusal("vision.channel_shuffle", (const loom_tensor *[]){ x }, 1, "groups=4");
    if (tu_has_backend("vision.conv2d", "cuda"))
        same_refusal("vision.conv2d", (const loom_tensor *[]){ x, w, NULL }, 3, "-");
    loom_tensor_free(x);
    loom_tensor_free(w);
    loom_tensor_free(m);
    loom_tensor_free(lw);
    loom_tensor_free(c5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_padding_modes), cmocka_unit_test(test_conv_epilogues),
        cmocka_unit_test(test_conv_empty_map), cmocka_unit_test(test_shuffle_dtypes),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
