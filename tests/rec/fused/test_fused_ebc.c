/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_fused_ebc.c - rec.fused_embedding_bag_collection against the goldens
** of tools/gen_rec_fused_goldens.py (tests/data/rec/fused): 20 training
** steps (forward, then backward of a given KeyedTensor gradient) with sgd
** and rowwise_adagrad against torchrec's FusedEmbeddingBagCollection, adam
** and partial_rowwise_adam against fbgemm's update formulas on torchrec's
** EmbeddingBagCollection gradients; a shared table, mean and sum groups,
** keys in another order than the tables'. The state is read back through
** rec.fused_embedding_bag_collection_save (torchrec's key names), and a
** collection made from a file saved after 10 steps resumes to the same
** result. The direct path (one in-order group) and a VBE KJT train bit for
** bit as the gathered path and the full batch. Then the refusals.
**
** Tolerances: tables and optimizer state rtol = atol = 1e-5, the forward
** 1e-6 (tests/fbgemm/tbe_backward/test_tbe_backward.c gives the reasons: the
** same sums in other orders, ~1e-7 per step).
*/
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "tu_env.h"

#define STEPS 20
#define CLASS "rec.fused_embedding_bag_collection"
static const char *const KEYS = "keys=f2,f0,f3,f1";

static const char *const optimizers[] = { "sgd", "rowwise_adagrad", "adam", "partial_rowwise_adam" };

static const char *tmp_dir(void)
{
    const char *t = getenv("TMPDIR");
    return t != NULL && *t ? t : "/tmp";
}

static loom_safetensors *open_st(const char *path)
{
    loom_safetensors *st = NULL;
    if (loom_safetensors_open(&st, path) != LOOM_OK)
        fail_msg("opening %s: %s", path, loom_last_error());
    return st;
}

static const loom_tensor *get(const loom_safetensors *st, const char *fmt, int i)
{
    char name[96];
    snprintf(name, sizeof name, fmt, i);
    const loom_tensor *t = NULL;
    if (loom_safetensors_get(st, name, &t) != LOOM_OK)
        fail_msg("tensor %s: %s", name, loom_last_error());
    return t;
}

static void parse(loom_attrs *a, const char *target, const char *text)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    char *eq = strchr(buf, '=');
    assert_non_null(eq);
    *eq = '\0';
    if (loom_attrs_parse(a, target, buf, eq + 1) != LOOM_OK)
        fail_msg("attr %s: %s", text, loom_last_error());
}

/* The generator's configs and hyper-parameters, with optimizer opt. */
static loom_attrs *class_attrs(const char *opt)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    parse(a, CLASS, "tables=t0,t1,t2");
    parse(a, CLASS, "num_embeddings=120,80,60");
    parse(a, CLASS, "embedding_dim=8,12,4");
    parse(a, CLASS, "feature_names=f0|f1,f2,f3");
    parse(a, CLASS, "pooling=sum,sum,mean");
    assert_int_equal(loom_attrs_set_string(a, "optimizer", opt), LOOM_OK);
    parse(a, CLASS, "lr=0.05");
    parse(a, CLASS, "eps=0.001");
    parse(a, CLASS, "beta1=0.9");
    parse(a, CLASS, "beta2=0.99");
    if (strstr(opt, "adam") != NULL)
        parse(a, CLASS, "weight_decay=0.01");
    return a;
}

static loom_object *create(const char *opt, const char *path)
{
    loom_attrs *a = class_attrs(opt);
    loom_object *o = NULL;
    if (loom_object_create(&o, CLASS, a, path) != LOOM_OK)
        fail_msg("%s over %s: %s", CLASS, path, loom_last_error());
    loom_attrs_free(a);
    return o;
}

static const char *keys_text = NULL;  /* the calls' keys: KEYS unless a test sets others */

static loom_attrs *call_attrs(void)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    parse(a, CLASS, keys_text != NULL ? keys_text : KEYS);
    return a;
}

static loom_status forward(loom_object *o, const loom_tensor *values, const loom_tensor *lengths, loom_tensor **out)
{
    const loom_tensor *in[2] = { values, lengths };
    loom_tensor *outs[5] = { NULL };
    loom_attrs *a = call_attrs();
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_status st = loom_run(CLASS, in, 2, a, outs, 5, &opt);
    loom_attrs_free(a);
    *out = outs[0];
    for (int i = 1; i < 5; i++)
        loom_tensor_free(outs[i]);
    return st;
}

static loom_status backward(loom_object *o, const loom_tensor *values, const loom_tensor *lengths,
                          const loom_tensor *grad)
{
    const loom_tensor *in[7] = { values, lengths, NULL, NULL, NULL, NULL, grad };
    loom_attrs *a = call_attrs();
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_status st = loom_run(CLASS "_backward", in, 7, a, NULL, 0, &opt);
    loom_attrs_free(a);
    return st;
}

static void save(loom_object *o, const char *path)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", path), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run(CLASS "_save", NULL, 0, a, NULL, 0, &opt) != LOOM_OK)
        fail_msg("save to %s: %s", path, loom_last_error());
    loom_attrs_free(a);
}

/* Steps [s0, s1): forward (step 0 checked against torchrec) and backward. */
static void train(const char *opt, loom_object *o, const loom_safetensors *b, int s0, int s1)
{
    for (int s = s0; s < s1; s++) {
        const loom_tensor *v = get(b, "step.%d.values", s), *l = get(b, "step.%d.lengths", s);
        loom_tensor *y = NULL;
        if (forward(o, v, l, &y) != LOOM_OK)
            fail_msg("%s step %d forward: %s", opt, s, loom_last_error());
        if (s == 0) {
            char rel[128];
            snprintf(rel, sizeof rel, "rec/fused/%s.out0", opt);
            loom_tensor *want = tu_npy(rel);
            tu_assert_close(y, want, 1e-6, 1e-6, "forward at step 0");
            loom_tensor_free(want);
        }
        loom_tensor_free(y);
        if (backward(o, v, l, get(b, "step.%d.grad", s)) != LOOM_OK)
            fail_msg("%s step %d backward: %s", opt, s, loom_last_error());
    }
}

/* Every tensor of the golden file within tolerance in the saved file. */
static void check_saved(const char *opt, const char *saved)
{
    char rel[128];
    snprintf(rel, sizeof rel, "rec/fused/%s.safetensors", opt);
    loom_safetensors *want = open_st(tu_data_path(rel)), *got = open_st(saved);
    assert_int_equal(loom_safetensors_count(got), loom_safetensors_count(want));
    for (int64_t i = 0; i < loom_safetensors_count(want); i++) {
        const char *name = loom_safetensors_name(want, i);
        const loom_tensor *w = NULL, *g = NULL;
        assert_int_equal(loom_safetensors_get(want, name, &w), LOOM_OK);
        if (loom_safetensors_get(got, name, &g) != LOOM_OK)
            fail_msg("%s: the saved state has no '%s'", opt, name);
        char what[160];
        snprintf(what, sizeof what, "%s %s", opt, name);
        if (strcmp(name, "iter") == 0) {
            assert_int_equal(((const int64_t *)loom_data(g))[0], ((const int64_t *)loom_data(w))[0]);
            continue;
        }
        tu_assert_close(g, w, 1e-5, 1e-5, what);
    }
    loom_safetensors_close(got);
    loom_safetensors_close(want);
}

static void test_goldens(void **state)
{
    (void)state;
    loom_safetensors *b = open_st(tu_data_path("rec/fused/batches.safetensors"));
    for (size_t k = 0; k < sizeof optimizers / sizeof optimizers[0]; k++) {
        char path[256];
        snprintf(path, sizeof path, "%s/loom-fused-ebc-%d-%zu.safetensors", tmp_dir(), (int)getpid(), k);
        loom_object *o = create(optimizers[k], tu_data_path("rec/fused/init.safetensors"));
        train(optimizers[k], o, b, 0, STEPS);
        save(o, path);
        loom_object_free(o);
        check_saved(optimizers[k], path);
        unlink(path);
    }
    loom_safetensors_close(b);
}

/* 10 steps, save, a new collection over the saved file, 10 more steps. */
static void test_resume(void **state)
{
    (void)state;
    loom_safetensors *b = open_st(tu_data_path("rec/fused/batches.safetensors"));
    static const char *const which[] = { "rowwise_adagrad", "adam" };
    for (int k = 0; k < 2; k++) {
        char mid[256], end[256];
        snprintf(mid, sizeof mid, "%s/loom-fused-ebc-mid-%d-%d.safetensors", tmp_dir(), (int)getpid(), k);
        snprintf(end, sizeof end, "%s/loom-fused-ebc-end-%d-%d.safetensors", tmp_dir(), (int)getpid(), k);
        loom_object *o = create(which[k], tu_data_path("rec/fused/init.safetensors"));
        train(which[k], o, b, 0, STEPS / 2);
        save(o, mid);
        loom_object_free(o);
        o = create(which[k], mid);
        train(which[k], o, b, STEPS / 2, STEPS);
        save(o, end);
        loom_object_free(o);
        check_saved(which[k], end);
        unlink(mid);
        unlink(end);
    }
    loom_safetensors_close(b);
}

/* One group whose features are the KJT's keys in order takes the direct
** path (the KJT's ids and the gradient handed to fbgemm.tbe_backward as
** they are): the same tables, bit for bit, as the gathered path on the same
** batch with its keys in another order (rec.kjt_permute). */
static void test_direct_path(void **state)
{
    (void)state;
    loom_safetensors *b = open_st(tu_data_path("rec/fused/batches.safetensors"));
    const char *init = tu_data_path("rec/fused/init.safetensors");
    char init_path[512];
    snprintf(init_path, sizeof init_path, "%s", init);
    loom_attrs *ca = class_attrs("rowwise_adagrad");
    parse(ca, CLASS, "pooling=sum,sum,sum");
    loom_object *gathered = NULL, *direct = NULL;
    assert_int_equal(loom_object_create(&gathered, CLASS, ca, init_path), LOOM_OK);
    assert_int_equal(loom_object_create(&direct, CLASS, ca, init_path), LOOM_OK);
    loom_attrs_free(ca);
    for (int s = 0; s < 3; s++) {
        const loom_tensor *v = get(b, "step.%d.values", s), *l = get(b, "step.%d.lengths", s);
        const loom_tensor *g = get(b, "step.%d.grad", s);
        keys_text = NULL;
        assert_int_equal(backward(gathered, v, l, g), LOOM_OK);
        /* f2,f0,f3,f1 -> f0,f1,f2,f3 */
        loom_attrs *pa;
        assert_int_equal(loom_attrs_new(&pa), LOOM_OK);
        parse(pa, "rec.kjt_permute", KEYS);
        parse(pa, "rec.kjt_permute", "indices=1,3,0,2");
        const loom_tensor *in[2] = { v, l };
        loom_tensor *out[12] = { NULL };
        if (loom_run("rec.kjt_permute", in, 2, pa, out, 12, NULL) != LOOM_OK)
            fail_msg("rec.kjt_permute: %s", loom_last_error());
        loom_attrs_free(pa);
        keys_text = "keys=f0,f1,f2,f3";
        if (backward(direct, out[2], out[3], g) != LOOM_OK)
            fail_msg("direct backward: %s", loom_last_error());
        keys_text = NULL;
        for (int i = 0; i < 12; i++)
            loom_tensor_free(out[i]);
    }
    char p1[256], p2[256];
    snprintf(p1, sizeof p1, "%s/loom-fused-ebc-g-%d.safetensors", tmp_dir(), (int)getpid());
    snprintf(p2, sizeof p2, "%s/loom-fused-ebc-d-%d.safetensors", tmp_dir(), (int)getpid());
    save(gathered, p1);
    save(direct, p2);
    loom_safetensors *s1 = open_st(p1), *s2 = open_st(p2);
    for (int t = 0; t < 3; t++)
        tu_assert_identical(get(s2, "embedding_bags.t%d.weight", t), get(s1, "embedding_bags.t%d.weight", t),
                            "direct vs gathered tables");
    loom_safetensors_close(s1);
    loom_safetensors_close(s2);
    unlink(p1);
    unlink(p2);
    loom_object_free(gathered);
    loom_object_free(direct);
    loom_safetensors_close(b);
}

/* A VBE KJT (rec.kjt_dedup: repeated samples, empty bags included, kept
** once, with inverse_indices) trains exactly as the full batch it stands
** for: its rows are expanded through inverse_indices, as in the forward. */
static void test_vbe(void **state)
{
    (void)state;
    loom_safetensors *b = open_st(tu_data_path("rec/fused/batches.safetensors"));
    char init[512];
    snprintf(init, sizeof init, "%s", tu_data_path("rec/fused/init.safetensors"));
    loom_object *full = create("adam", init), *vbe = create("adam", init);
    int64_t deduped = 0;
    for (int s = 0; s < 3; s++) {
        const loom_tensor *v = get(b, "step.%d.values", s), *l = get(b, "step.%d.lengths", s);
        const loom_tensor *g = get(b, "step.%d.grad", s);
        assert_int_equal(backward(full, v, l, g), LOOM_OK);
        loom_attrs *da = call_attrs();
        const loom_tensor *in[2] = { v, l };
        loom_tensor *out[12] = { NULL };
        if (loom_run("rec.kjt_dedup", in, 2, da, out, 12, NULL) != LOOM_OK)
            fail_msg("rec.kjt_dedup: %s", loom_last_error());
        loom_attrs_free(da);
        deduped += loom_numel(l) - loom_numel(out[3]);
        const loom_tensor *vin[7] = { out[2], out[3], NULL, NULL, out[6], out[7], g };
        loom_attrs *a = call_attrs();
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.object = vbe;
        if (loom_run(CLASS "_backward", vin, 7, a, NULL, 0, &opt) != LOOM_OK)
            fail_msg("VBE backward: %s", loom_last_error());
        loom_attrs_free(a);
        for (int i = 0; i < 12; i++)
            loom_tensor_free(out[i]);
    }
    assert_true(deduped > 0);   /* the batches do repeat samples */
    char p1[256], p2[256];
    snprintf(p1, sizeof p1, "%s/loom-fused-ebc-full-%d.safetensors", tmp_dir(), (int)getpid());
    snprintf(p2, sizeof p2, "%s/loom-fused-ebc-vbe-%d.safetensors", tmp_dir(), (int)getpid());
    save(full, p1);
    save(vbe, p2);
    loom_safetensors *s1 = open_st(p1), *s2 = open_st(p2);
    for (int t = 0; t < 3; t++) {
        tu_assert_identical(get(s2, "embedding_bags.t%d.weight", t), get(s1, "embedding_bags.t%d.weight", t),
                            "VBE vs full batch tables");
        tu_assert_identical(get(s2, "t%d.weight.momentum_2", t), get(s1, "t%d.weight.momentum_2", t),
                            "VBE vs full batch momentum_2");
    }
    loom_safetensors_close(s1);
    loom_safetensors_close(s2);
    unlink(p1);
    unlink(p2);
    loom_object_free(full);
    loom_object_free(vbe);
    loom_safetensors_close(b);
}

static void expect_fail(loom_status st, const char *needle)
{
    assert_int_equal(st, LOOM_EINVAL);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not name '%s'", loom_last_error(), needle);
}

static void test_errors(void **state)
{
    (void)state;
    loom_safetensors *b = open_st(tu_data_path("rec/fused/batches.safetensors"));
    loom_object *o = create("rowwise_adagrad", tu_data_path("rec/fused/init.safetensors"));
    const loom_tensor *v = get(b, "step.%d.values", 0), *l = get(b, "step.%d.lengths", 0);
    /* a gradient of the wrong shape */
    int64_t shape[2] = { 6, 31 };
    loom_tensor *bad = NULL;
    assert_int_equal(loom_tensor_new(&bad, LOOM_DTYPE_F32, 2, shape, NULL), LOOM_OK);
    expect_fail(backward(o, v, l, bad), "'grad'");
    loom_tensor_free(bad);
    loom_object_free(o);

    /* an unknown optimizer; INT8 tables; an optimizer state of the wrong size */
    loom_attrs *a = class_attrs("lamb");
    loom_object *x = NULL;
    expect_fail(loom_object_create(&x, CLASS, a, tu_data_path("rec/fused/init.safetensors")), "lamb");
    loom_attrs_free(a);
    a = class_attrs("sgd");
    parse(a, CLASS, "data_type=fp32,int8,fp32");
    expect_fail(loom_object_create(&x, CLASS, a, tu_data_path("rec/fused/init.safetensors")), "table 't1' is int8");
    loom_attrs_free(a);
    {
        char path[256];
        snprintf(path, sizeof path, "%s/loom-fused-ebc-bad-%d.safetensors", tmp_dir(), (int)getpid());
        loom_safetensors *init = open_st(tu_data_path("rec/fused/init.safetensors"));
        float m[7] = { 0 };
        int64_t n = 7;
        loom_tensor *mt = NULL;
        assert_int_equal(loom_tensor_wrap(&mt, m, LOOM_DTYPE_F32, 1, &n, NULL, NULL), LOOM_OK);
        const char *names[4] = { "embedding_bags.t0.weight", "embedding_bags.t1.weight", "embedding_bags.t2.weight",
                                 "t1.weight.momentum_1" };
        const loom_tensor *ts[4] = { get(init, "embedding_bags.t%d.weight", 0), get(init, "embedding_bags.t%d.weight", 1),
                                     get(init, "embedding_bags.t%d.weight", 2), mt };
        assert_int_equal(loom_safetensors_write(path, names, ts, 4), LOOM_OK);
        a = class_attrs("rowwise_adagrad");
        expect_fail(loom_object_create(&x, CLASS, a, path), "momentum1");
        loom_attrs_free(a);
        loom_tensor_free(mt);
        loom_safetensors_close(init);
        unlink(path);
    }
    loom_safetensors_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_goldens),
        cmocka_unit_test(test_resume),
        cmocka_unit_test(test_direct_path),
        cmocka_unit_test(test_vbe),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
