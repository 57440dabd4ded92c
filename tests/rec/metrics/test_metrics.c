/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_metrics.c - the one-shot metric ops against torchrec.metrics
** (tests/data/rec/metrics/cases.inc, tools/gen_rec_metrics_goldens.py):
** one and several tasks, with and without weights, f32 and f64 inputs; and
** the rec.metrics object against torchrec's RecMetric modules, lifetime and
** windowed, through a checkpoint and its restore.
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
#include <math.h>
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

typedef struct object_golden {
    const char *name;
    int tasks, window, batches, checkpoints;    /* checkpoints: bit i = compared after update i */
} object_golden;

static const object_golden object_goldens[] = {
#define OCASE(name, tasks, window, batches, mask) { name, tasks, window, batches, mask },
#include "../../data/rec/metrics/object_cases.inc"
#undef OCASE
};

static loom_object *make_metrics(const char *list, int tasks, int window)
{
    loom_attrs *a = NULL;
    char buf[32];
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "metrics", list), LOOM_OK);
    snprintf(buf, sizeof buf, "%d", tasks);
    assert_int_equal(loom_attrs_parse(a, "rec.metrics", "n_tasks", buf), LOOM_OK);
    snprintf(buf, sizeof buf, "%d", window);
    assert_int_equal(loom_attrs_parse(a, "rec.metrics", "window_size", buf), LOOM_OK);
    loom_object *o = NULL;
    if (loom_object_create(&o, "rec.metrics", a, NULL) != LOOM_OK)
        fail_msg("rec.metrics: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

static void update(loom_object *o, const char *name, int batch)
{
    loom_tensor *in[3];
    const char *fields[3] = { "predictions", "labels", "weights" };
    for (int f = 0; f < 3; f++) {
        char path[256];
        snprintf(path, sizeof path, "rec/metrics/%s.batch%d.%s", name, batch, fields[f]);
        in[f] = tu_npy(path);
    }
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run("rec.metrics_update", (const loom_tensor *const *)in, 3, NULL, NULL, 0, &opt) != LOOM_OK)
        fail_msg("update %d: %s", batch, loom_last_error());
    for (int f = 0; f < 3; f++)
        loom_tensor_free(in[f]);
}

/* lifetime and window against torchrec's after update `batch`; NaN (lifetime AUC) must be NaN */
static void compare(loom_object *o, const char *name, int batch)
{
    loom_tensor *out[2] = { 0 };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run("rec.metrics_compute", NULL, 0, NULL, out, 2, &opt) != LOOM_OK)
        fail_msg("compute: %s", loom_last_error());
    const char *scopes[2] = { "lifetime", "window" };
    for (int k = 0; k < 2; k++) {
        char path[256];
        snprintf(path, sizeof path, "rec/metrics/%s.after%d.%s", name, batch, scopes[k]);
        loom_tensor *want = tu_npy(path);
        tu_assert_same_shape(out[k], want, path);
        for (int64_t i = 0; i < loom_numel(want); i++) {
            double g = ((double *)loom_data(out[k]))[i], w = ((double *)loom_data(want))[i];
            if (isnan(w) ? !isnan(g) : fabs(g - w) > 1e-6 + 1e-6 * fabs(w))
                fail_msg("%s: element %lld is %.12g, torchrec %.12g", path, (long long)i, g, w);
        }
        loom_tensor_free(want);
        loom_tensor_free(out[k]);
    }
}

#define OBJECT_METRICS "ne,calibration,ctr,mse,rmse,accuracy,auc"

static void test_object(void **state)
{
    const object_golden *g = *state;
    loom_object *o = make_metrics(OBJECT_METRICS, g->tasks, g->window);
    loom_object *restored = NULL;
    for (int b = 0; b < g->batches; b++) {
        update(o, g->name, b);
        if (restored)
            update(restored, g->name, b);
        if (g->checkpoints & (1 << b)) {
            compare(o, g->name, b);
            if (restored)
                compare(restored, g->name, b);
        }
        if (b == 1) {
            /* checkpoint after two updates, restore into a new object, carry on with both */
            loom_tensor *st = NULL;
            loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
            opt.object = o;
            if (loom_run("rec.metrics_state", NULL, 0, NULL, &st, 1, &opt) != LOOM_OK)
                fail_msg("state: %s", loom_last_error());
            restored = make_metrics(OBJECT_METRICS, g->tasks, g->window);
            opt.object = restored;
            const loom_tensor *in[1] = { st };
            if (loom_run("rec.metrics_load_state", in, 1, NULL, NULL, 0, &opt) != LOOM_OK)
                fail_msg("load_state: %s", loom_last_error());
            /* a truncated checkpoint, and one of another shape, are refused */
            int64_t shape[1] = { loom_numel(st) - 1 };
            loom_tensor *cut = NULL;
            assert_int_equal(loom_tensor_wrap(&cut, loom_data(st), LOOM_DTYPE_F64, 1, shape, NULL, NULL), LOOM_OK);
            in[0] = cut;
            assert_int_not_equal(loom_run("rec.metrics_load_state", in, 1, NULL, NULL, 0, &opt), LOOM_OK);
            assert_non_null(strstr(loom_last_error(), "truncated or corrupt"));
            loom_tensor_free(cut);
            loom_object *other = make_metrics(OBJECT_METRICS, g->tasks + 1, g->window);
            opt.object = other;
            in[0] = st;
            assert_int_not_equal(loom_run("rec.metrics_load_state", in, 1, NULL, NULL, 0, &opt), LOOM_OK);
            assert_non_null(strstr(loom_last_error(), "n_tasks"));
            loom_object_free(other);
            loom_tensor_free(st);
        }
    }
    loom_object_free(restored);
    loom_object_free(o);
}

/* throughput: examples per second, positive once updated */
static void test_throughput(void **state)
{
    const object_golden *g = &object_goldens[0];
    (void)state;
    loom_object *o = make_metrics("throughput,ctr", g->tasks, g->window);
    update(o, g->name, 0);
    loom_tensor *out[2] = { 0 };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    assert_int_equal(loom_run("rec.metrics_compute", NULL, 0, NULL, out, 2, &opt), LOOM_OK);
    assert_int_equal(out[0]->shape[0], 2);
    assert_true(((double *)loom_data(out[0]))[0] > 0);
    loom_tensor_free(out[0]);
    loom_tensor_free(out[1]);
    loom_object_free(o);
    loom_object *bad = NULL;
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "metrics", "ne,recall"), LOOM_OK);
    assert_int_not_equal(loom_object_create(&bad, "rec.metrics", a, NULL), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "\"recall\" is not one of"));
    loom_attrs_free(a);
}

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
    enum { N = sizeof goldens / sizeof goldens[0], NO = sizeof object_goldens / sizeof object_goldens[0] };
    struct CMUnitTest tests[N + NO + 2];
    for (size_t i = 0; i < N; i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_golden, (void *)&goldens[i]);
        tests[i].name = goldens[i].name;
    }
    for (size_t i = 0; i < NO; i++) {
        tests[N + i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_object, (void *)&object_goldens[i]);
        tests[N + i].name = object_goldens[i].name;
    }
    tests[N + NO] = (struct CMUnitTest)cmocka_unit_test(test_degenerate);
    tests[N + NO + 1] = (struct CMUnitTest)cmocka_unit_test(test_throughput);
    return _cmocka_run_group_tests("rec_metrics", tests, N + NO + 2, tu_setup, tu_teardown);
}
