/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_models_onednn.c - the onednn kernel of the ResNet classes (the
** forward as one oneDNN plan, resnet_onednn.c) against their cpu kernel
** (the dispatched layer ops), with no weight files: a vision.resnet18 made
** from seeded in-memory tensors (resnet_memory.h) with batchnorm far from
** the identity, on input shapes whose sizes are odd (the right padding of
** the strided convs and the pool) and of several batches: every shape on
** onednn first (the first plan frees the model's plain weights, later
** plans reorder from its copies), then the cpu kernel (which makes the
** plain weights again) and each plan once more, bit for bit as before;
** the same with conv_algorithm=winograd.
** Skipped, with a message, where the pack has no onednn kernel (built
** without oneDNN).
**
** Tolerance: max |onednn - cpu| <= 1e-4 * max |logit| (the bound
** against torchvision): both sides compute in f32 with the same folded
** weights; the convolution kernels' summation orders differ, which ~20
** layers compound to ~1e-6 relative here.
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "resnet_memory.h"

static loom_tensor *forward_on(loom_object *obj, const loom_tensor *x, const char *backend)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    opt.backend = backend;
    const loom_tensor *in[1] = { x };
    loom_tensor *out = NULL;
    if (loom_run("vision.resnet18", in, 1, NULL, &out, 1, &opt) != LOOM_OK)
        fail_msg("vision.resnet18 on %s: %s", backend, loom_last_error());
    return out;
}

/* max |a - b| / max |b| */
static double rel_err(const loom_tensor *a, const loom_tensor *b)
{
    double m = 0, e = 0;
    for (int64_t i = 0; i < loom_numel(b); i++) {
        m = fmax(m, fabs(tu_get(b, i)));
        e = fmax(e, fabs(tu_get(a, i) - tu_get(b, i)));
    }
    return m > 0 ? e / m : e;
}

static void plans_match_cpu_kernel(const loom_attrs *attrs)
{
    if (!tu_has_backend("vision.resnet18", "onednn")) {
        print_message("# vision.resnet18 has no onednn kernel (built without oneDNN)\n");
        skip();
    }
    rm_keys *k = NULL;
    loom_object *obj = resnet18_make(&k, 10, attrs, 7);
    if (obj == NULL)
        fail_msg("vision.resnet18 from memory: %s", loom_last_error());
    static const int64_t shapes[][4] = { { 1, 3, 64, 64 }, { 2, 3, 57, 61 }, { 3, 3, 33, 40 } };
    enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };
    loom_tensor *x[N_SHAPES], *dnn[N_SHAPES];
    /* every shape on onednn first: the first plan frees the plain weights,
    ** the later ones reorder from its copies */
    for (int s = 0; s < N_SHAPES; s++) {
        x[s] = tu_random_f32(4, shapes[s], 20 + (unsigned)s);
        dnn[s] = forward_on(obj, x[s], "onednn");
    }
    /* then the cpu kernel (the plain weights made again from the reordered
    ** ones) and the plans once more */
    for (int s = 0; s < N_SHAPES; s++) {
        loom_tensor *cpu = forward_on(obj, x[s], "cpu"), *again = forward_on(obj, x[s], "onednn");
        double e = rel_err(dnn[s], cpu);
        print_message("# [%lld, 3, %lld, %lld]: max |onednn - cpu| / max |logit| = %.2e\n", (long long)shapes[s][0],
                      (long long)shapes[s][2], (long long)shapes[s][3], e);
        if (!(e <= 1e-4))
            fail_msg("shape %d: onednn differs from cpu by %.3g x max |logit|", s, e);
        tu_assert_identical(again, dnn[s], "the onednn plan run again");
        loom_tensor_free(cpu);
        loom_tensor_free(again);
        loom_tensor_free(dnn[s]);
        loom_tensor_free(x[s]);
    }
    loom_object_free(obj);
    resnet18_zeros_free(k);
}

static void onednn_plan_matches_cpu_kernel(void **state)
{
    (void)state;
    plans_match_cpu_kernel(NULL);
}

/* conv_algorithm=winograd: the 3x3 stride-1 convs on oneDNN's Winograd
** kernel keep their plain weights (a Winograd layout cannot be reordered
** back), so the later shapes' plans and the cpu kernel read those; the
** same bound (the transforms' roundings are of the same order). */
static void winograd_plan_matches_cpu_kernel(void **state)
{
    (void)state;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "conv_algorithm", "winograd"), LOOM_OK);
    plans_match_cpu_kernel(a);
    loom_attrs_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(onednn_plan_matches_cpu_kernel),
        cmocka_unit_test(winograd_plan_matches_cpu_kernel),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
