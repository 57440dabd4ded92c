/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_metrics.c - the one-shot metric ops against torchrec.metrics
** (tests/data/rec/metrics/cases.inc, tools/gen_rec_metrics_goldens.py):
** one and several tasks, with and without weights, f32 and f64 inputs.
**
** Tolerance 1e-6, relative and absolute: the goldens are torchrec's
** formulas evaluated in f64 on the same values, and loom accumulates every
** state in f64 too; the two differ only by the order of the additions
** (torch's pairwise sums against loom's chunked ones), a few 1e-15 of a
** value for these N, and log2 of the same doubles. 1e-6 is the bound the
** metrics are compared to torchrec with; it also covers torchrec run on f32
** inputs, which sums its label and weight states in f32 (a relative error
** near 1e-7 for these N).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

typedef struct golden {
    const char *name;
    int weighted;
} golden;

static const golden goldens[] = {
#define CASE(name, w) { name, w },
#include "../../data/rec/metrics/cases.inc"
#undef CASE
};

static const char *const metrics[] = { "ne", "auc", "calibration", "ctr", "mse" };

static void test_golden(void **state)
{
    const golden *g = *state;
    char path[256];
    loom_tensor *in[3] = { 0 };
    const char *fields[3] = { "predictions", "labels", "weights" };
    for (int i = 0; i < (g->weighted ? 3 : 2); i++) {
        snprintf(path, sizeof path, "rec/metrics/%s.%s", g->name, fields[i]);
        in[i] = tu_npy(path);
    }
    for (size_t m = 0; m < sizeof metrics / sizeof metrics[0]; m++) {
        char op[64], what[300];
        snprintf(op, sizeof op, "rec.%s", metrics[m]);
        loom_tensor *out = NULL;
        if (tu_call(op, (const loom_tensor *const *)in, 3, NULL, NULL, &out) != LOOM_OK)
            fail_msg("%s %s: %s", g->name, op, loom_last_error());
        snprintf(path, sizeof path, "rec/metrics/%s.%s", g->name, metrics[m]);
        loom_tensor *want = tu_npy(path);
        snprintf(what, sizeof what, "%s %s", g->name, op);
        tu_assert_close(out, want, 1e-6, 1e-6, what);
        loom_tensor_free(out);
        loom_tensor_free(want);
    }
    for (int i = 0; i < 3; i++)
        loom_tensor_free(in[i]);
}

/* no positives: AUC is torchrec's no-signal 0.5, calibration 0 (denominator 0) */
static void test_degenerate(void **state)
{
    (void)state;
    int64_t shape[1] = { 4 };
    loom_tensor *p = NULL, *y = NULL;
    assert_int_equal(loom_tensor_new(&p, LOOM_DTYPE_F32, 1, shape, NULL), LOOM_OK);
    assert_int_equal(loom_tensor_new(&y, LOOM_DTYPE_F32, 1, shape, NULL), LOOM_OK);
    const float pv[4] = { 0.1f, 0.7f, 0.3f, 0.9f };
    memcpy(loom_data(p), pv, sizeof pv);
    memset(loom_data(y), 0, sizeof pv);
    const loom_tensor *in[2] = { p, y };
    loom_tensor *out = NULL;
    assert_int_equal(tu_call("rec.auc", in, 2, NULL, NULL, &out), LOOM_OK);
    assert_true(((double *)loom_data(out))[0] == 0.5);
    loom_tensor_free(out);
    assert_int_equal(tu_call("rec.calibration", in, 2, NULL, NULL, &out), LOOM_OK);
    assert_true(((double *)loom_data(out))[0] == 0.0);
    loom_tensor_free(out);
    /* refusals name the argument */
    int64_t s3[1] = { 3 };
    loom_tensor *w = NULL;
    assert_int_equal(loom_tensor_new(&w, LOOM_DTYPE_F32, 1, s3, NULL), LOOM_OK);
    const loom_tensor *bad[3] = { p, y, w };
    assert_int_not_equal(tu_call("rec.ne", bad, 3, NULL, NULL, &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'weights' f32[3] must have the shape of 'predictions' f32[4]"));
    loom_tensor_free(w);
    loom_tensor_free(p);
    loom_tensor_free(y);
}

int main(void)
{
    enum { N = sizeof goldens / sizeof goldens[0] };
    struct CMUnitTest tests[N + 1];
    for (size_t i = 0; i < N; i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_golden, (void *)&goldens[i]);
        tests[i].name = goldens[i].name;
    }
    tests[N] = (struct CMUnitTest)cmocka_unit_test(test_degenerate);
    return _cmocka_run_group_tests("rec_metrics", tests, N + 1, tu_setup, tu_teardown);
}
