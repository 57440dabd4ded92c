/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_dlrm.c - rec.dlrm against torchrec's DLRM and DLRMTrain with random
** weights (tests/data/rec/dlrm, tools/gen_rec_dlrm_goldens.py), on the
** batches rec.criteo_reader reads from tests/data/rec/criteo/day_0.tsv
** (shift_min, missing=zero, hashed to the tables' sizes, as torchrec's
** Criteo pipeline):
**   - the forward's logits within rtol 1e-5, atol 1e-6: f32 sums of at
**     most 355 products through four layers, in the toolkit GEMM's order
**     rather than torch's (a few ulps);
**   - 10 training steps with SGD (dense and tables, lr 0.1) and with
**     Adagrad (torch.optim.Adagrad dense, row-wise Adagrad tables, lr
**     0.01): every loss within rtol 1e-5, every tensor of the saved
**     state_dict within rtol 1e-5 and atol 1e-6 for SGD (the same few ulps
**     carried through ten updates), atol 1e-5 for Adagrad (its step
**     lr g / sqrt(sum g^2) turns the few ulps of a gradient that nearly
**     cancels into up to a few 1e-6 of the weight, as the generator says);
**   - the saved file creates a model that gives the same logits;
** then the refusals: a missing key, a tensor of the wrong shape, a dense
** width that is not dense_in_features, KJT keys not in the config, an
** embedding_dim unlike the dense arch's last layer, labels of another batch.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"

#define CLS "rec.dlrm"
#define STEPS 10
#define BATCH 20
enum { OUT_DENSE, OUT_LABELS, OUT_KEYS, OUT_KEYS_OFF, OUT_VALUES, OUT_LENGTHS, N_READER_OUT = 14 };

static char num_embeddings[256];   /* config.txt's, the tables' sizes */
static int64_t hashes[26];
static char keys[256];             /* cat_0,...,cat_25 */

static const char *tmp_dir(void)
{
    const char *t = getenv("TMPDIR");
    return t != NULL && *t ? t : "/tmp";
}

static int read_config(void **state)
{
    (void)state;
    FILE *f = fopen(tu_data_path("rec/dlrm/config.txt"), "r");
    if (!f || fscanf(f, "num_embeddings=%255s", num_embeddings) != 1)
        return -1;
    fclose(f);
    const char *p = num_embeddings;
    for (int k = 0; k < 26; k++) {
        hashes[k] = strtoll(p, (char **)&p, 10);
        p += *p == ',';
    }
    size_t n = 0;
    for (int k = 0; k < 26; k++)
        n += (size_t)snprintf(keys + n, sizeof keys - n, k ? ",cat_%d" : "cat_%d", k);
    return tu_setup(state);
}

/* the generator's model: 26 tables of D = 4, dense 16,4, over 16,8,1; `edit` overrides one attribute */
static const char *lr = "0.1";     /* the training test's */

static loom_status create(const char *dense_opt, const char *emb_opt, const char *path, const char *edit_name,
                          const char *edit_value, loom_object **o)
{
    static const char *const names[] = { "tables", "num_embeddings", "embedding_dim", "feature_names",
                                         "dense_arch_layer_sizes", "over_arch_layer_sizes", "lr", "eps",
                                         "dense_in_features" };
    char tables[256], dims[128], features[256];
    size_t nt = 0, nd = 0;
    for (int k = 0; k < 26; k++) {
        nt += (size_t)snprintf(tables + nt, sizeof tables - nt, k ? ",t%d" : "t%d", k);
        nd += (size_t)snprintf(dims + nd, sizeof dims - nd, k ? ",4" : "4");
    }
    snprintf(features, sizeof features, "%s", keys);
    const char *values[] = { tables, num_embeddings, dims, features, "16,4", "16,8,1", lr, "1e-8", "13" };
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = edit_name && !strcmp(edit_name, names[i]) ? edit_value : values[i];
        if (loom_attrs_parse(a, CLS, names[i], v) != LOOM_OK)
            fail_msg("%s=%s: %s", names[i], v, loom_last_error());
    }
    assert_int_equal(loom_attrs_set_string(a, "dense_optimizer", dense_opt), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "embedding_optimizer", emb_opt), LOOM_OK);
    loom_status st = loom_object_create(o, CLS, a, path);
    loom_attrs_free(a);
    return st;
}

static loom_object *model(const char *dense_opt, const char *emb_opt, const char *path)
{
    loom_object *o = NULL;
    if (create(dense_opt, emb_opt, path, NULL, NULL, &o) != LOOM_OK)
        fail_msg("%s: %s", CLS, loom_last_error());
    return o;
}

static loom_object *reader(void)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", tu_data_path("rec/criteo/day_0.tsv")), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "batch_size", BATCH), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "dense_transform", "shift_min"), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "missing", "zero"), LOOM_OK);
    assert_int_equal(loom_attrs_set_ints(a, "hashes", hashes, 26), LOOM_OK);
    loom_object *o = NULL;
    if (loom_object_create(&o, "rec.criteo_reader", a, NULL) != LOOM_OK)
        fail_msg("rec.criteo_reader: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

static void next_batch(loom_object *r, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = r;
    for (int i = 0; i < N_READER_OUT; i++)
        out[i] = NULL;
    if (loom_run("rec.criteo_reader", NULL, 0, NULL, out, N_READER_OUT, &opt) != LOOM_OK)
        fail_msg("rec.criteo_reader: %s", loom_last_error());
    assert_int_equal(out[OUT_DENSE]->shape[0], BATCH);
}

static void free_batch(loom_tensor **out)
{
    for (int i = 0; i < N_READER_OUT; i++)
        loom_tensor_free(out[i]);
}

/* a method of the model on a batch: rec.dlrm (logits) or rec.dlrm_train_step (loss) */
static loom_status method(loom_object *o, const char *op, loom_tensor *const *batch, const char *call_keys,
                          const loom_tensor *dense, loom_tensor **out)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "keys", call_keys ? call_keys : keys), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    const loom_tensor *in[8] = { dense ? dense : batch[OUT_DENSE], batch[OUT_VALUES], batch[OUT_LENGTHS], NULL, NULL,
                                 NULL, NULL, batch[OUT_LABELS] };
    *out = NULL;
    loom_status st = loom_run(op, in, strcmp(op, CLS) ? 8 : 7, a, out, 1, &opt);
    loom_attrs_free(a);
    return st;
}

static void save(loom_object *o, const char *path)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "path", path), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    if (loom_run("rec.dlrm_save", NULL, 0, a, NULL, 0, &opt) != LOOM_OK)
        fail_msg("rec.dlrm_save: %s", loom_last_error());
    loom_attrs_free(a);
}

static void test_forward(void **state)
{
    (void)state;
    loom_object *o = model("sgd", "sgd", tu_data_path("rec/dlrm/model.safetensors")), *r = reader();
    loom_tensor *batch[N_READER_OUT], *logits;
    next_batch(r, batch);
    if (method(o, CLS, batch, NULL, NULL, &logits) != LOOM_OK)
        fail_msg("%s: %s", CLS, loom_last_error());
    loom_tensor *want = tu_npy("rec/dlrm/forward.logits");
    tu_assert_close(logits, want, 1e-5, 1e-6, "logits");
    loom_tensor_free(want);
    loom_tensor_free(logits);
    free_batch(batch);
    loom_object_free(r);
    loom_object_free(o);
}

/* Every tensor of the golden state_dict within tolerance in the saved file, and no other. */
static void check_saved(const char *name, const char *saved, double atol)
{
    char rel[128];
    snprintf(rel, sizeof rel, "rec/dlrm/%s.safetensors", name);
    loom_safetensors *want = NULL, *got = NULL;
    assert_int_equal(loom_safetensors_open(&want, tu_data_path(rel)), LOOM_OK);
    if (loom_safetensors_open(&got, saved) != LOOM_OK)
        fail_msg("%s: %s", saved, loom_last_error());
    assert_int_equal(loom_safetensors_count(got), loom_safetensors_count(want));
    for (int64_t i = 0; i < loom_safetensors_count(want); i++) {
        const char *key = loom_safetensors_name(want, i);
        const loom_tensor *w = NULL, *g = NULL;
        assert_int_equal(loom_safetensors_get(want, key, &w), LOOM_OK);
        if (loom_safetensors_get(got, key, &g) != LOOM_OK)
            fail_msg("%s: the saved state has no '%s'", name, key);
        char what[200];
        snprintf(what, sizeof what, "%s %s", name, key);
        tu_assert_close(g, w, 1e-5, atol, what);
    }
    loom_safetensors_close(got);
    loom_safetensors_close(want);
}

static void train(const char *name, const char *dense_opt, const char *emb_opt, const char *rate, double atol)
{
    lr = rate;
    loom_object *o = model(dense_opt, emb_opt, tu_data_path("rec/dlrm/model.safetensors")), *r = reader();
    char rel[128];
    snprintf(rel, sizeof rel, "rec/dlrm/%s.losses", name);
    loom_tensor *losses = tu_npy(rel);
    loom_tensor *batch[N_READER_OUT];
    for (int s = 0; s < STEPS; s++) {
        next_batch(r, batch);
        loom_tensor *loss;
        if (method(o, "rec.dlrm_train_step", batch, NULL, NULL, &loss) != LOOM_OK)
            fail_msg("%s step %d: %s", name, s, loom_last_error());
        const double got = tu_get(loss, 0), want = tu_get(losses, s);
        if (!(got - want <= 1e-5 * want && want - got <= 1e-5 * want))
            fail_msg("%s step %d: loss %.9g, torchrec %.9g", name, s, got, want);
        loom_tensor_free(loss);
        if (s < STEPS - 1)
            free_batch(batch);
    }
    char path[300];
    snprintf(path, sizeof path, "%s/loom-dlrm-%s-%d.safetensors", tmp_dir(), name, (int)getpid());
    save(o, path);
    check_saved(name, path, atol);
    /* the saved file is a model: the same logits as the one that wrote it */
    loom_object *back = model(dense_opt, emb_opt, path);
    loom_tensor *a, *b;
    assert_int_equal(method(o, CLS, batch, NULL, NULL, &a), LOOM_OK);
    assert_int_equal(method(back, CLS, batch, NULL, NULL, &b), LOOM_OK);
    tu_assert_identical(b, a, "logits of the saved model");
    loom_tensor_free(a);
    loom_tensor_free(b);
    free_batch(batch);
    remove(path);
    loom_tensor_free(losses);
    loom_object_free(back);
    loom_object_free(r);
    loom_object_free(o);
    lr = "0.1";
}

static void test_train_sgd(void **state)
{
    (void)state;
    train("sgd", "sgd", "sgd", "0.1", 1e-6);
}

static void test_train_adagrad(void **state)
{
    (void)state;
    train("adagrad", "adagrad", "rowwise_adagrad", "0.01", 1e-5);
}

static void expect_refused(const char *edit_name, const char *edit_value, const char *needle)
{
    loom_object *o = NULL;
    assert_int_not_equal(create("sgd", "sgd", tu_data_path("rec/dlrm/model.safetensors"), edit_name, edit_value, &o),
                         LOOM_OK);
    if (!strstr(loom_last_error(), needle))
        fail_msg("%s=%s: \"%s\" does not name %s", edit_name, edit_value, loom_last_error(), needle);
}

static void test_refusals(void **state)
{
    (void)state;
    /* a layer the file does not have; one whose shape differs from the file's */
    expect_refused("over_arch_layer_sizes", "16,8,4,1", "'over_arch.model.0._mlp.2._linear.weight'");
    expect_refused("over_arch_layer_sizes", "16,6,1", "'over_arch.model.0._mlp.1._linear.weight' is f32[8,16]");
    expect_refused("dense_in_features", "12", "'dense_arch.model._mlp.0._linear.weight' is f32[16,13]");
    char sizes[256];
    snprintf(sizes, sizeof sizes, "%s", num_embeddings);
    sizes[0] = '9';   /* table t0 of another size */
    expect_refused("num_embeddings", sizes, "'sparse_arch.embedding_bag_collection.embedding_bags.t0.weight' is");
    expect_refused("dense_arch_layer_sizes", "16,8", "must match");
    expect_refused("over_arch_layer_sizes", "1", "OverArch must have multiple layers");

    loom_object *o = model("sgd", "sgd", tu_data_path("rec/dlrm/model.safetensors")), *r = reader();
    loom_tensor *batch[N_READER_OUT], *out = NULL;
    next_batch(r, batch);
    /* the dense features of another width */
    loom_tensor *narrow = tu_random_f32(2, (int64_t[]){ BATCH, 12 }, 3);
    assert_int_not_equal(method(o, CLS, batch, NULL, narrow, &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'dense'"));
    assert_non_null(strstr(loom_last_error(), "dense_in_features = 13"));
    /* a KJT key the config does not have */
    char other[256];
    snprintf(other, sizeof other, "%s", keys);
    memcpy(strstr(other, "cat_25"), "cat_99", 6);
    assert_int_not_equal(method(o, CLS, batch, other, NULL, &out), LOOM_OK);
    if (!strstr(loom_last_error(), "cat_99") && !strstr(loom_last_error(), "cat_25"))
        fail_msg("keys not in the config: \"%s\" names neither cat_99 nor cat_25", loom_last_error());
    /* labels of another batch */
    loom_tensor *fewer = tu_random_f32(2, (int64_t[]){ BATCH - 1, 13 }, 4);
    assert_int_not_equal(method(o, "rec.dlrm_train_step", batch, NULL, fewer, &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "'labels'"));
    loom_tensor_free(narrow);
    loom_tensor_free(fewer);
    free_batch(batch);
    loom_object_free(r);
    loom_object_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forward),
        cmocka_unit_test(test_train_sgd),
        cmocka_unit_test(test_train_adagrad),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, read_config, tu_teardown);
}
