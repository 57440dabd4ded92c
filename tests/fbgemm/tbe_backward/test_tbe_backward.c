/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_tbe_backward.c - fbgemm.tbe training: 20 steps of fbgemm.tbe_backward
** with each fused optimizer against the goldens of
** tools/gen_fbgemm_tbe_train_goldens.py (tests/data/fbgemm/tbe_train):
** exact_sgd and exact_rowwise_adagrad against fbgemm-gpu-cpu's own CPU
** training kernels, adam and partial_rowwise_adam against fbgemm's update
** formulas on fbgemm's CPU gradients; FP32 and FP16 tables, sum and mean,
** per-sample weights, weight_decay_mode l2 and decouple, a shared table.
** Then: the state saved with fbgemm.tbe_save and loaded by a new object
** resumes to the same result, the result is the same bit for bit for 1 and
** 2 threads, and bad calls fail naming what is wrong.
**
** Tolerances: FP32 tables and every optimizer state rtol = atol = 1e-5. The
** two sides sum the same terms in other orders (fbgemm's csr2csc order and
** its AVX2 SparseAdaGrad lanes against loom's fma per element), ~1e-7
** relative per step; over 20 steps that stays below 1e-6 here, and 1e-5
** leaves room for other machines. FP16 tables are rounded to f16 after
** every step, so a difference of ~1e-7 can move a value by one f16 step
** (2.4e-4 for 0.25 <= |w| < 0.5), and two such flips over 20 steps are seen
** (fbgemm forms w - lr * g without fma): FP16 tables are compared within
** atol 5e-4 (two f16 steps for |w| < 0.5, one below 1), their f32 state
** (below 1e-6 apart here) within 1e-5.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tbe_test_util.h"
#include "tu_env.h"

#define STEPS 20

static const char *tmp_dir(void)
{
    const char *t = getenv("TMPDIR");
    return t != NULL && *t ? t : "/tmp";
}

typedef struct train_case {
    const char *name;           /* golden file and optimizer prefix */
    const char *optimizer;
    const char *wt;             /* fp32 | fp16 */
    const char *pooling;
    int weighted;
    double weight_decay;
    const char *wd_mode;
} train_case;

static const train_case cases[] = {
    { "exact_sgd_fp32_sum", "exact_sgd", "fp32", "sum", 0, 0.0, "none" },
    { "exact_sgd_fp16_mean_w", "exact_sgd", "fp16", "mean", 1, 0.0, "none" },
    { "exact_rowwise_adagrad_fp32_sum_w", "exact_rowwise_adagrad", "fp32", "sum", 1, 0.0, "none" },
    { "exact_rowwise_adagrad_fp32_mean", "exact_rowwise_adagrad", "fp32", "mean", 0, 0.0, "none" },
    { "exact_rowwise_adagrad_fp16_sum_l2", "exact_rowwise_adagrad", "fp16", "sum", 0, 0.01, "l2" },
    { "exact_rowwise_adagrad_fp16_mean_decouple", "exact_rowwise_adagrad", "fp16", "mean", 0, 0.01, "decouple" },
    { "adam_fp32_sum_w", "adam", "fp32", "sum", 1, 0.01, "none" },
    { "adam_fp32_mean", "adam", "fp32", "mean", 0, 0.0, "none" },
    { "partial_rowwise_adam_fp32_sum", "partial_rowwise_adam", "fp32", "sum", 0, 0.01, "none" },
    { "partial_rowwise_adam_fp32_mean_w", "partial_rowwise_adam", "fp32", "mean", 1, 0.0, "none" },
};

static const char *data_path(const char *name, char *buf, size_t size)
{
    char rel[256];
    snprintf(rel, sizeof rel, "fbgemm/tbe_train/%s", name);
    snprintf(buf, size, "%s", tu_data_path(rel));
    return buf;
}

static loom_safetensors *open_st(const char *name)
{
    char path[512];
    loom_safetensors *st = NULL;
    if (loom_safetensors_open(&st, data_path(name, path, sizeof path)) != LOOM_OK)
        fail_msg("opening %s: %s", path, loom_last_error());
    return st;
}

static const loom_tensor *get(const loom_safetensors *st, const char *fmt, int i)
{
    char name[64];
    snprintf(name, sizeof name, fmt, i);
    const loom_tensor *t = NULL;
    if (loom_safetensors_get(st, name, &t) != LOOM_OK)
        fail_msg("golden tensor %s: %s", name, loom_last_error());
    return t;
}

static const char *batches_of(const train_case *c)
{
    return strcmp(c->wt, "fp16") == 0 ? "batches_3f.safetensors" : "batches_shared.safetensors";
}

/* The object's attributes for case c (the generator's hyper-parameters). */
static loom_attrs *case_attrs(const train_case *c, const loom_safetensors *batches)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    const loom_tensor *ftm = get(batches, "feature_table_map", 0);
    tt_set_ints(a, "feature_table_map", loom_data(ftm), loom_numel(ftm));
    tt_set_str(a, "pooling_mode", c->pooling);
    tt_set_str(a, "optimizer", c->optimizer);
    tt_set_float(a, "learning_rate", 0.05);
    tt_set_float(a, "eps", 1e-3);
    tt_set_float(a, "beta1", 0.9);
    tt_set_float(a, "beta2", 0.99);
    tt_set_float(a, "weight_decay", c->weight_decay);
    tt_set_str(a, "weight_decay_mode", c->wd_mode);
    return a;
}

static loom_object *create_from(const char *path, const loom_attrs *a)
{
    loom_object *o = tt_create(path, a);
    if (o == NULL)
        fail_msg("creating a training fbgemm.tbe over %s: %s", path, loom_last_error());
    return o;
}

static loom_object *create_case(const train_case *c, const loom_attrs *a)
{
    char name[64], path[512];
    snprintf(name, sizeof name, "init_%s.safetensors", c->wt);
    return create_from(data_path(name, path, sizeof path), a);
}

static loom_status backward(loom_object *o, const loom_tensor *grad, const loom_tensor *ind, const loom_tensor *off,
                          const loom_tensor *psw, const loom_attrs *a, int threads)
{
    const loom_tensor *in[4] = { grad, ind, off, psw };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    opt.num_threads = threads;
    return loom_run("fbgemm.tbe_backward", in, 4, a, NULL, 0, &opt);
}

/* Steps [s0, s1) of the case's batches. */
static void train(const train_case *c, loom_object *o, const loom_safetensors *b, int s0, int s1, int threads)
{
    for (int s = s0; s < s1; s++) {
        loom_status st = backward(o, get(b, "step.%d.grad", s), get(b, "step.%d.indices", s),
                                get(b, "step.%d.offsets", s), c->weighted ? get(b, "step.%d.psw", s) : NULL, NULL,
                                threads);
        if (st != LOOM_OK)
            fail_msg("%s step %d: %s", c->name, s, loom_last_error());
    }
}

/* fbgemm.tbe_state(name, table); NULL when the call fails. */
static loom_tensor *state_of(loom_object *o, const char *name, int64_t t)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    tt_set_str(a, "name", name);
    tt_set_int(a, "table", t);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_tensor *out = NULL;
    loom_status st = loom_run("fbgemm.tbe_state", NULL, 0, a, &out, 1, &opt);
    loom_attrs_free(a);
    return st == LOOM_OK ? out : NULL;
}

/* Every table and state tensor of o against the golden case file. */
static void check_against(const train_case *c, loom_object *o)
{
    char file[96];
    snprintf(file, sizeof file, "%s.safetensors", c->name);
    loom_safetensors *want = open_st(file);
    const int fp16 = strcmp(c->wt, "fp16") == 0;
    for (int t = 0; t < 3; t++) {
        char what[128];
        loom_tensor *w = state_of(o, "weight", t);
        if (w == NULL)
            fail_msg("%s: fbgemm.tbe_state weight %d: %s", c->name, t, loom_last_error());
        snprintf(what, sizeof what, "%s table %d", c->name, t);
        tt_assert_close(w, get(want, "table.%d", t), fp16 ? 0.0 : 1e-5, fp16 ? 5e-4 : 1e-5, what);
        loom_tensor_free(w);
        for (int k = 1; k <= 2; k++) {
            char key[32];
            snprintf(key, sizeof key, "momentum%d.%d", k, t);
            const loom_tensor *g = NULL;
            int has = 0;
            for (int64_t i = 0; i < loom_safetensors_count(want); i++)
                has |= strcmp(loom_safetensors_name(want, i), key) == 0;
            snprintf(key, sizeof key, "momentum%d", k);
            loom_tensor *m = state_of(o, key, t);
            if (!has) {
                assert_null(m);
                continue;
            }
            if (m == NULL)
                fail_msg("%s: %s of table %d: %s", c->name, key, t, loom_last_error());
            snprintf(key, sizeof key, "momentum%d.%d", k, t);
            assert_int_equal(loom_safetensors_get(want, key, &g), LOOM_OK);
            snprintf(what, sizeof what, "%s %s", c->name, key);
            /* fbgemm's row-wise state is [rows], its element-wise state [rows * D]
            ** flat or [rows, D]: compare as flat values */
            assert_int_equal(loom_numel(m), loom_numel(g));
            loom_tensor *flat = NULL;
            int64_t n = loom_numel(g);
            assert_int_equal(loom_tensor_wrap(&flat, loom_data(g), LOOM_DTYPE_F32, 1, &n, NULL, NULL), LOOM_OK);
            loom_tensor *mflat = NULL;
            assert_int_equal(loom_tensor_wrap(&mflat, loom_data(m), LOOM_DTYPE_F32, 1, &n, NULL, NULL), LOOM_OK);
            tt_assert_close(mflat, flat, 1e-5, 1e-5, what);
            loom_tensor_free(flat);
            loom_tensor_free(mflat);
            loom_tensor_free(m);
        }
    }
    loom_tensor *it = state_of(o, "iter", 0);
    assert_non_null(it);
    assert_int_equal(((const int64_t *)loom_data(it))[0], STEPS);
    loom_tensor_free(it);
    loom_safetensors_close(want);
}

static void test_goldens(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const train_case *c = &cases[i];
        loom_safetensors *b = open_st(batches_of(c));
        loom_attrs *a = case_attrs(c, b);
        loom_object *o = create_case(c, a);
        train(c, o, b, 0, STEPS, 0);
        check_against(c, o);
        loom_object_free(o);
        loom_attrs_free(a);
        loom_safetensors_close(b);
    }
}

/* 10 steps, fbgemm.tbe_save, a new object over the saved file, 10 more
** steps: the golden of 20 steps (the state and iter were carried over). */
static void test_save_resume(void **state)
{
    (void)state;
    static const int which[] = { 3, 5, 6, 9 };    /* adagrad fp32, adagrad fp16, adam, row-wise adam */
    for (size_t i = 0; i < sizeof which / sizeof which[0]; i++) {
        const train_case *c = &cases[which[i]];
        loom_safetensors *b = open_st(batches_of(c));
        loom_attrs *a = case_attrs(c, b);
        loom_object *o = create_case(c, a);
        train(c, o, b, 0, STEPS / 2, 0);
        char path[256];
        snprintf(path, sizeof path, "%s/loom-tbe-train-%d-%zu.safetensors", tmp_dir(), (int)getpid(), i);
        loom_attrs *sa;
        assert_int_equal(loom_attrs_new(&sa), LOOM_OK);
        tt_set_str(sa, "path", path);
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = o;
        if (loom_run("fbgemm.tbe_save", NULL, 0, sa, NULL, 0, &opt) != LOOM_OK)
            fail_msg("%s: fbgemm.tbe_save: %s", c->name, loom_last_error());
        loom_attrs_free(sa);
        loom_object_free(o);
        o = create_from(path, a);
        train(c, o, b, STEPS / 2, STEPS, 0);
        check_against(c, o);
        loom_object_free(o);
        unlink(path);
        loom_attrs_free(a);
        loom_safetensors_close(b);
    }
}

/* The same tables bit for bit with 1 and 2 threads (the update is sorted
** and deduplicated by row, never raced). */
static void test_threads_deterministic(void **state)
{
    (void)state;
    const train_case *c = &cases[6];
    loom_safetensors *b = open_st(batches_of(c));
    loom_attrs *a = case_attrs(c, b);
    loom_object *o1 = create_case(c, a), *o2 = create_case(c, a);
    train(c, o1, b, 0, STEPS, 1);
    train(c, o2, b, 0, STEPS, 2);
    for (int t = 0; t < 3; t++) {
        loom_tensor *w1 = state_of(o1, "weight", t), *w2 = state_of(o2, "weight", t);
        loom_tensor *m1 = state_of(o1, "momentum2", t), *m2 = state_of(o2, "momentum2", t);
        tt_assert_same_bytes(w1, w2, "tables, 1 vs 2 threads");
        tt_assert_same_bytes(m1, m2, "momentum2, 1 vs 2 threads");
        loom_tensor_free(w1);
        loom_tensor_free(w2);
        loom_tensor_free(m1);
        loom_tensor_free(m2);
    }
    loom_object_free(o1);
    loom_object_free(o2);
    loom_attrs_free(a);
    loom_safetensors_close(b);
}

static void test_errors(void **state)
{
    (void)state;
    const train_case *c = &cases[2];
    loom_safetensors *b = open_st(batches_of(c));
    loom_attrs *a = case_attrs(c, b);
    loom_object *o = create_case(c, a);
    const loom_tensor *ind = get(b, "step.%d.indices", 0), *off = get(b, "step.%d.offsets", 0);
    const loom_tensor *grad = get(b, "step.%d.grad", 0);

    /* grad_output of the wrong shape and dtype */
    int64_t shape[2] = { 8, 31 };
    loom_tensor *bad = NULL;
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    tt_assert_fails(backward(o, bad, ind, off, NULL, NULL, 0), LOOM_EINVAL, "total_D = 32");
    loom_tensor_free(bad);
    shape[0] = 7;
    shape[1] = 32;
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    tt_assert_fails(backward(o, bad, ind, off, NULL, NULL, 0), LOOM_EINVAL, "grad_output");
    loom_tensor_free(bad);
    /* pooling none has no fused backward */
    loom_attrs *none;
    assert_int_equal(loom_attrs_new(&none), LOOM_OK);
    tt_set_str(none, "pooling_mode", "none");
    tt_assert_fails(backward(o, grad, ind, off, NULL, none, 0), LOOM_EINVAL, "pooling none");
    loom_attrs_free(none);
    /* an index out of its table, with bounds checks fatal */
    loom_tensor *ind2 = NULL;
    assert_int_equal(loom_tensor_copy_to(&ind2, ind, NULL), LOOM_OK);
    ((int32_t *)loom_data(ind2))[0] = 100000;
    loom_attrs *fatal;
    assert_int_equal(loom_attrs_new(&fatal), LOOM_OK);
    tt_set_str(fatal, "bounds_check_mode", "fatal");
    assert_int_equal(backward(o, grad, ind2, off, NULL, fatal, 0), LOOM_EINVAL);
    loom_attrs_free(fatal);
    loom_tensor_free(ind2);
    /* the refused calls took no step */
    loom_tensor *it = state_of(o, "iter", 0);
    assert_int_equal(((const int64_t *)loom_data(it))[0], 0);
    loom_tensor_free(it);
    /* row-wise Adagrad keeps no momentum2 */
    assert_null(state_of(o, "momentum2", 0));
    assert_non_null(strstr(loom_last_error(), "keeps no momentum2"));
    loom_object_free(o);

    /* optimizer state of the wrong size in the weights file: names it */
    {
        char path[256], init[512];
        snprintf(path, sizeof path, "%s/loom-tbe-train-bad-%d.safetensors", tmp_dir(), (int)getpid());
        loom_safetensors *st = NULL;
        assert_int_equal(loom_safetensors_open(&st, data_path("init_fp32.safetensors", init, sizeof init)), LOOM_OK);
        float m[10] = { 0 };
        int64_t n = 10;
        loom_tensor *mt = NULL;
        assert_int_equal(loom_tensor_wrap(&mt, m, LOOM_DTYPE_F32, 1, &n, NULL, NULL), LOOM_OK);
        const char *names[4] = { "table.0", "table.1", "table.2", "momentum1.1" };
        const loom_tensor *ts[4] = { get(st, "table.%d", 0), get(st, "table.%d", 1), get(st, "table.%d", 2), mt };
        assert_int_equal(loom_safetensors_write(path, names, ts, 4), LOOM_OK);
        loom_object *x = NULL;
        tt_assert_fails(loom_object_create(&x, "fbgemm.tbe", a, path), LOOM_EINVAL, "momentum1.1");
        loom_tensor_free(mt);
        loom_safetensors_close(st);
        unlink(path);
    }
    loom_attrs_free(a);

    /* training INT8 / INT4 tables is refused, naming the table and type */
    static const char *const qts[] = { "int8", "int4" };
    for (int q = 0; q < 2; q++) {
        loom_attrs *qa = tt_golden_attrs(qts[q]);
        tt_set_str(qa, "optimizer", "exact_rowwise_adagrad");
        char set[32], name[64], path[512];
        snprintf(set, sizeof set, "%s_pooled", qts[q]);
        snprintf(name, sizeof name, "tables_%s.safetensors", set);
        tt_data_path(path, sizeof path, name);
        loom_object *x = NULL;
        tt_assert_fails(loom_object_create(&x, "fbgemm.tbe", qa, path), LOOM_EINVAL, qts[q]);
        assert_non_null(strstr(loom_last_error(), "table.0"));
        loom_attrs_free(qa);
    }

    /* an inference object has no backward; hyper-parameters fbgemm would drop */
    {
        char path[512];
        loom_attrs *ia;
        assert_int_equal(loom_attrs_new(&ia), LOOM_OK);
        loom_object *x = create_from(data_path("init_fp32.safetensors", path, sizeof path), ia);
        tt_assert_fails(backward(x, grad, ind, off, NULL, NULL, 0), LOOM_EINVAL, "optimizer none");
        loom_object_free(x);
        tt_set_str(ia, "optimizer", "exact_sgd");
        tt_set_float(ia, "weight_decay", 0.1);
        tt_assert_fails(loom_object_create(&x, "fbgemm.tbe", ia, path), LOOM_EINVAL, "weight_decay");
        tt_set_str(ia, "optimizer", "lamb");
        tt_assert_fails(loom_object_create(&x, "fbgemm.tbe", ia, path), LOOM_EINVAL, "optimizer 'lamb'");
        loom_attrs_free(ia);
    }
    loom_safetensors_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_save_resume),
        cmocka_unit_test(test_threads_deterministic),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
