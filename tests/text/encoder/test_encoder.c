/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_encoder.c - text.bert_encoder against transformers' BertModel and
** sentence-transformers (tools/gen_text_enc_goldens.py).
**
** The tiny random BERT (2 layers, hidden 32, 4 heads, intermediate 37) is
** shipped; its references were computed in float64, so a difference is
** loom's float32 rounding alone. Tolerance 2e-5 absolute + 1e-5 relative:
** values reach |4|, each output is two layers of sums of at most 37 float
** products followed by LayerNorm (rstd up to ~5), so the float32 error is a
** few 1e-6 (measured 1.4e-6); 2e-5 still catches any wrong term, which
** moves outputs by 1e-2 or more.
**
** meson runs this file four times: LOOM_BACKENDS=cpu with dense=linear
** (core.linear objects, weights packed once), cpu with dense=matmul
** (core.matmul on loom's GEMM), onednn,cpu with dense=matmul (core.matmul
** on oneDNN where built) and with LOOM_CPU_MAX_ISA=sse4 (the portable row
** kernels and GEMM).
**
** all-MiniLM-L6-v2 (build-models/minilm, converted by tools/convert_minilm.py
** at `tools/dev goldens` time) must give sentence-transformers' embeddings
** within 1e-4 cosine distance; the test skips, saying how to make the
** model, when the file is absent.
*/
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "encoder_test_util.h"

#define ATOL 2e-5
#define RTOL 1e-5

static const char *tiny(void) { return tu_data_path("text/encoder/tiny_bert.safetensors"); }
static const char *tiny_config(void) { return tu_data_path("text/encoder/tiny_config.json"); }

/* An encoder object; attrs "k=v;k=v" of the class (NULL: none). Returns
** the status; *obj is NULL on failure. */
static loom_status make(loom_object **obj, const char *weights, const char *config, const char *attrs)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (config != NULL)
        assert_int_equal(loom_attrs_set_string(a, "config", config), LOOM_OK);
    /* TEST_ENCODER_DENSE: the dense attribute of the meson variant */
    const char *dense = getenv("TEST_ENCODER_DENSE");
    if (dense != NULL && dense[0] != '\0')
        assert_int_equal(loom_attrs_set_string(a, "dense", dense), LOOM_OK);
    char buf[256];
    if (attrs != NULL) {
        snprintf(buf, sizeof buf, "%s", attrs);
        for (char *kv = strtok(buf, ";"); kv != NULL; kv = strtok(NULL, ";")) {
            char *eq = strchr(kv, '=');
            assert_non_null(eq);
            *eq = '\0';
            assert_int_equal(loom_attrs_parse(a, "text.bert_encoder", kv, eq + 1), LOOM_OK);
        }
    }
    *obj = NULL;
    loom_status s = loom_object_create(obj, "text.bert_encoder", a, weights);
    loom_attrs_free(a);
    return s;
}

static void check_batch(loom_object *obj, const char *batch, const char *prefix)
{
    loom_tensor *ids = te_golden(batch, "input_ids"), *mask = te_golden(batch, "attention_mask");
    loom_tensor *types = te_golden(batch, "token_type_ids");
    static const char *const pools[][2] = { { "mean", "mean" }, { "cls", "cls" }, { "max", "max" },
                                            { "none", "last_hidden_state" } };
    for (int p = 0; p < 4; p++) {
        if (prefix[0] != '\0' && p > 0)
            break;
        loom_tensor *out;
        if (te_encode(obj, ids, mask, types, pools[p][0], 0, &out) != LOOM_OK)
            fail_msg("%s pooling %s: %s", batch, pools[p][0], loom_last_error());
        char what[128], gname[64];
        snprintf(gname, sizeof gname, "%s%s", prefix, batch);
        loom_tensor *want = te_golden(gname, pools[p][1]);
        snprintf(what, sizeof what, "%s %s", gname, pools[p][0]);
        tu_assert_close(out, want, RTOL, ATOL, what);
        loom_tensor_free(out);
        loom_tensor_free(want);
    }
    if (prefix[0] == '\0') {
        loom_tensor *out, *want = te_golden(batch, "mean_norm");
        assert_int_equal(te_encode(obj, ids, mask, types, "mean", 1, &out), LOOM_OK);
        tu_assert_close(out, want, RTOL, ATOL / 4, "mean + normalize");    /* unit vectors */
        loom_tensor_free(out);
        loom_tensor_free(want);
    }
    loom_tensor_free(ids);
    loom_tensor_free(mask);
    loom_tensor_free(types);
}

static void tiny_bert_matches_transformers(void **state)
{
    (void)state;
    loom_object *obj;
    if (make(&obj, tiny(), tiny_config(), NULL) != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    check_batch(obj, "mixed", "");
    check_batch(obj, "holes", "");
    loom_object_free(obj);
}

/* hidden_act given as an attribute wins over config.json */
static void attribute_beats_config(void **state)
{
    (void)state;
    loom_object *obj;
    if (make(&obj, tiny(), tiny_config(), "hidden_act=gelu_new") != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    check_batch(obj, "mixed", "gelu_new_");
    check_batch(obj, "holes", "gelu_new_");
    loom_object_free(obj);
    /* the hyperparameters as attributes alone, without a config */
    if (make(&obj, tiny(), NULL, "num_attention_heads=4;layer_norm_eps=1e-12;hidden_act=gelu") != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    check_batch(obj, "mixed", "");
    loom_object_free(obj);
}

/* Each sequence alone, unpadded, gives what it gives inside the padded
** batch: the same rows and the same keys, so only the products' blocking
** (which depends on the row count: one row is a GEMV) may round
** differently; 4e-6 relative is 16 float ulps. */
static void padding_changes_nothing(void **state)
{
    (void)state;
    loom_object *obj;
    assert_int_equal(make(&obj, tiny(), tiny_config(), NULL), LOOM_OK);
    loom_tensor *ids = te_golden("mixed", "input_ids"), *mask = te_golden("mixed", "attention_mask");
    loom_tensor *types = te_golden("mixed", "token_type_ids"), *all;
    assert_int_equal(te_encode(obj, ids, mask, types, "mean", 0, &all), LOOM_OK);
    const int64_t L = ids->shape[1], H = all->shape[1];
    const int64_t lens[3] = { 11, 7, 1 };
    for (int64_t b = 0; b < 3; b++) {
        const int64_t shape[2] = { 1, lens[b] };
        loom_tensor *i1, *t1, *o1;
        assert_int_equal(loom_tensor_wrap(&i1, (int64_t *)loom_data(ids) + b * L, LOOM_DTYPE_I64, 2, shape, NULL,
                                          NULL), LOOM_OK);
        assert_int_equal(loom_tensor_wrap(&t1, (int64_t *)loom_data(types) + b * L, LOOM_DTYPE_I64, 2, shape, NULL,
                                          NULL), LOOM_OK);
        assert_int_equal(te_encode(obj, i1, NULL, t1, "mean", 0, &o1), LOOM_OK);
        for (int64_t k = 0; k < H; k++) {
            float a = ((float *)loom_data(o1))[k], w = ((float *)loom_data(all))[b * H + k];
            if (fabsf(a - w) > 4e-6f * fmaxf(1.0f, fabsf(w)))
                fail_msg("sequence %lld alone: element %lld is %g, in the batch %g", (long long)b, (long long)k, a, w);
        }
        loom_tensor_free(o1);
        loom_tensor_free(i1);
        loom_tensor_free(t1);
    }
    loom_tensor_free(all);
    loom_tensor_free(ids);
    loom_tensor_free(mask);
    loom_tensor_free(types);
    loom_object_free(obj);
}

/* One object, four threads calling it at once: the model is immutable and
** each call has its own scratch, so every thread gets the golden result. */
typedef struct conc_job {
    loom_object *obj;
    const loom_tensor *ids, *mask, *types, *want;
    int ok;
} conc_job;

static void *conc_worker(void *arg)
{
    conc_job *j = arg;
    j->ok = 1;
    for (int r = 0; r < 4 && j->ok; r++) {
        loom_tensor *out = NULL;
        if (te_encode(j->obj, j->ids, j->mask, j->types, "mean", 0, &out) != LOOM_OK) {
            j->ok = 0;
            break;
        }
        const float *a = loom_data(out), *w = loom_data(j->want);
        for (int64_t k = 0; k < loom_numel(out); k++)
            if (fabsf(a[k] - w[k]) > ATOL + RTOL * fabsf(w[k]))
                j->ok = 0;
        loom_tensor_free(out);
    }
    return NULL;
}

static void concurrent_calls_agree(void **state)
{
    (void)state;
    loom_object *obj;
    assert_int_equal(make(&obj, tiny(), tiny_config(), NULL), LOOM_OK);
    loom_tensor *ids = te_golden("mixed", "input_ids"), *mask = te_golden("mixed", "attention_mask");
    loom_tensor *types = te_golden("mixed", "token_type_ids"), *want = te_golden("mixed", "mean");
    pthread_t th[4];
    conc_job jobs[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (conc_job){ obj, ids, mask, types, want, 0 };
        assert_int_equal(pthread_create(&th[i], NULL, conc_worker, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        if (!jobs[i].ok)
            fail_msg("thread %d: a concurrent call failed or differs (%s)", i, loom_last_error());
    }
    loom_tensor_free(ids);
    loom_tensor_free(mask);
    loom_tensor_free(types);
    loom_tensor_free(want);
    loom_object_free(obj);
}

static loom_tensor *ids_of(int64_t B, int64_t L, const int64_t *v)
{
    const int64_t shape[2] = { B, L };
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_I64, 2, shape, NULL), LOOM_OK);
    memcpy(loom_data(t), v, (size_t)(B * L) * sizeof(int64_t));
    return t;
}

static void expect_call_error(loom_object *obj, const loom_tensor *ids, const loom_tensor *mask,
                              const loom_tensor *types, const char *needle)
{
    loom_tensor *out = (loom_tensor *)1;
    loom_status s = te_encode(obj, ids, mask, types, "mean", 0, &out);
    if (s == LOOM_OK)
        fail_msg("expected an error naming '%s'", needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not name '%s'", loom_last_error(), needle);
}

static void bad_inputs_are_refused(void **state)
{
    (void)state;
    loom_object *obj;
    assert_int_equal(make(&obj, tiny(), tiny_config(), NULL), LOOM_OK);
    const int64_t ok[4] = { 1, 2, 3, 4 }, big[4] = { 1, 99, 3, 4 }, neg[4] = { 1, 2, -1, 4 };
    const int64_t mask2[4] = { 1, 1, 2, 0 }, type2[4] = { 0, 0, 2, 0 };
    loom_tensor *ids = ids_of(1, 4, ok), *b1 = ids_of(1, 4, big), *b2 = ids_of(1, 4, neg);
    loom_tensor *m2 = ids_of(1, 4, mask2), *t2 = ids_of(1, 4, type2), *short_mask = ids_of(2, 2, ok);
    expect_call_error(obj, b1, NULL, NULL, "'input_ids'[0][1] = 99");
    expect_call_error(obj, b2, NULL, NULL, "'input_ids'[0][2] = -1");
    expect_call_error(obj, ids, m2, NULL, "'attention_mask'[0][2] = 2");
    expect_call_error(obj, ids, NULL, t2, "'token_type_ids'[0][2] = 2");
    expect_call_error(obj, ids, short_mask, NULL, "'attention_mask' is i64[2,2]");
    int64_t longer[41] = { 0 };
    loom_tensor *too_long = ids_of(1, 41, longer);
    expect_call_error(obj, too_long, NULL, NULL, "max_position_embeddings 40");
    /* empty batches and empty sequences: shapes, no error */
    loom_tensor *e0 = ids_of(0, 4, ok), *e1 = ids_of(2, 0, ok), *out;
    assert_int_equal(te_encode(obj, e0, NULL, NULL, "mean", 0, &out), LOOM_OK);
    assert_int_equal(out->shape[0], 0);
    loom_tensor_free(out);
    assert_int_equal(te_encode(obj, e1, NULL, NULL, "mean", 1, &out), LOOM_OK);
    assert_int_equal(out->shape[0], 2);
    assert_true(((float *)loom_data(out))[0] == 0.0f);
    loom_tensor_free(out);
    assert_int_equal(te_encode(obj, e1, NULL, NULL, "none", 0, &out), LOOM_OK);
    assert_int_equal(out->ndim, 3);
    assert_int_equal(out->shape[1], 0);
    loom_tensor_free(out);
    /* normalize is for pooled vectors */
    out = (loom_tensor *)1;
    assert_int_not_equal(te_encode(obj, ids, NULL, NULL, "none", 1, &out), LOOM_OK);
    assert_non_null(strstr(loom_last_error(), "normalize=true needs a pooling"));
    /* a row all padding: mean 0, as sentence-transformers' clamp gives */
    const int64_t zeros[4] = { 0, 0, 0, 0 };
    loom_tensor *mz = ids_of(1, 4, zeros);
    assert_int_equal(te_encode(obj, ids, mz, NULL, "mean", 0, &out), LOOM_OK);
    for (int64_t k = 0; k < out->shape[1]; k++)
        assert_true(((float *)loom_data(out))[k] == 0.0f);
    loom_tensor_free(out);
    assert_int_equal(te_encode(obj, ids, mz, NULL, "cls", 0, &out), LOOM_OK);   /* uniform attention, finite */
    for (int64_t k = 0; k < out->shape[1]; k++)
        assert_true(isfinite(((float *)loom_data(out))[k]));
    loom_tensor_free(out);
    loom_tensor *all[] = { ids, b1, b2, m2, t2, short_mask, too_long, e0, e1, mz };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_object_free(obj);
}

static char tmpdir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][320];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* The tiny model rewritten without tensor `drop`, or with `reshape` made [3]. */
static const char *rewrite(const char *drop, const char *reshape)
{
    loom_safetensors *st;
    assert_int_equal(loom_safetensors_open(&st, tiny()), LOOM_OK);
    const int64_t n = loom_safetensors_count(st);
    const char **names = calloc((size_t)n, sizeof *names);
    const loom_tensor **ts = calloc((size_t)n, sizeof *ts);
    loom_tensor *small = NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *name = loom_safetensors_name(st, i);
        if (drop != NULL && strcmp(name, drop) == 0)
            continue;
        assert_int_equal(loom_safetensors_get(st, name, &ts[k]), LOOM_OK);
        if (reshape != NULL && strcmp(name, reshape) == 0) {
            const int64_t s3[1] = { 3 };
            assert_int_equal(loom_tensor_new(&small, LOOM_DTYPE_F32, 1, s3, NULL), LOOM_OK);
            memset(loom_data(small), 0, 12);
            ts[k] = small;
        }
        names[k++] = name;
    }
    const char *path = tmp_path("bad.safetensors");
    assert_int_equal(loom_safetensors_write(path, names, ts, k), LOOM_OK);
    loom_tensor_free(small);
    free(names);
    free(ts);
    loom_safetensors_close(st);
    return path;
}

static void expect_create_error(const char *weights, const char *config, const char *attrs, const char *needle)
{
    loom_object *obj;
    if (make(&obj, weights, config, attrs) == LOOM_OK)
        fail_msg("expected create to fail naming '%s'", needle);
    assert_null(obj);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not name '%s'", loom_last_error(), needle);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void bad_models_are_refused(void **state)
{
    (void)state;
    expect_create_error(rewrite("encoder.layer.1.output.dense.weight", NULL), tiny_config(), NULL,
                        "no tensor 'encoder.layer.1.output.dense.weight'");
    expect_create_error(rewrite(NULL, "encoder.layer.0.attention.self.key.bias"), tiny_config(), NULL,
                        "'encoder.layer.0.attention.self.key.bias' is f32[3], expected f32[32]");
    expect_create_error(rewrite("embeddings.word_embeddings.weight", NULL), tiny_config(), NULL,
                        "embeddings.word_embeddings.weight");
    /* the default 12 heads do not divide 32 */
    expect_create_error(tiny(), NULL, NULL, "num_attention_heads 12 does not divide the hidden size 32");
    expect_create_error(tiny(), tiny_config(), "hidden_act=swish", "hidden_act 'swish'");
    expect_create_error(tiny(), tiny_config(), "dense=blas", "dense 'blas' is not linear or matmul");
    const char *cfg = tmp_path("config.json");
    write_text(cfg, "{\"hidden_size\": 64, \"num_attention_heads\": 4}");
    expect_create_error(tiny(), cfg, NULL, "\"hidden_size\": 64 but the weights have 32");
    write_text(cfg, "{\"num_hidden_layers\": 3, \"num_attention_heads\": 4}");
    expect_create_error(tiny(), cfg, NULL, "\"num_hidden_layers\": 3 but the weights have 2");
    write_text(cfg, "{\"num_attention_heads\": 4, \"position_embedding_type\": \"relative_key\"}");
    expect_create_error(tiny(), cfg, NULL, "relative_key");
    write_text(cfg, "[1, 2");
    expect_create_error(tiny(), cfg, NULL, "is not a JSON object");
    expect_create_error(tiny(), tmp_path("absent.json"), NULL, "cannot open config");
    expect_create_error(NULL, tiny_config(), NULL, "needs a weights file");
}

static void minilm_matches_sentence_transformers(void **state)
{
    (void)state;
    char weights[512], config[512];
    const char *dir = getenv("LOOM_TEXT_MODELS");
    if (dir != NULL && dir[0] != '\0') {
        snprintf(weights, sizeof weights, "%s/minilm/model.safetensors", dir);
        snprintf(config, sizeof config, "%s/minilm/config.json", dir);
    } else {
        snprintf(weights, sizeof weights, "%s/../build-models/minilm/model.safetensors", tu_data_path(".."));
        snprintf(config, sizeof config, "%s/../build-models/minilm/config.json", tu_data_path(".."));
    }
    if (access(weights, R_OK) != 0) {
        printf("# SKIP all-MiniLM-L6-v2: %s is absent (made by tools/convert_minilm.py, which `tools/dev goldens` "
               "runs)\n", weights);
        skip();
    }
    loom_object *obj;
    if (make(&obj, weights, config, NULL) != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    loom_tensor *ids = tu_npy("text/encoder/minilm_input_ids"), *mask = tu_npy("text/encoder/minilm_attention_mask");
    loom_tensor *want = tu_npy("text/encoder/minilm_embeddings"), *out;
    if (te_encode(obj, ids, mask, NULL, "mean", 1, &out) != LOOM_OK)
        fail_msg("encode: %s", loom_last_error());
    tu_assert_same_shape(out, want, "embeddings");
    const int64_t B = out->shape[0], H = out->shape[1];
    for (int64_t b = 0; b < B; b++) {
        double dot = 0, na = 0, nb = 0;
        for (int64_t k = 0; k < H; k++) {
            double x = ((float *)loom_data(out))[b * H + k], y = ((float *)loom_data(want))[b * H + k];
            dot += x * y;
            na += x * x;
            nb += y * y;
        }
        const double dist = 1.0 - dot / sqrt(na * nb);
        printf("# sentence %lld: cosine distance %.3g\n", (long long)b, dist);
        if (!(dist <= 1e-4))
            fail_msg("sentence %lld: cosine distance %g to sentence-transformers > 1e-4", (long long)b, dist);
    }
    loom_tensor_free(out);
    loom_tensor_free(want);
    loom_tensor_free(ids);
    loom_tensor_free(mask);
    loom_object_free(obj);
}

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/loom-text-enc-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return tu_setup(state);
}

static int teardown(void **state)
{
    unlink(tmp_path("bad.safetensors"));
    unlink(tmp_path("config.json"));
    rmdir(tmpdir);
    return tu_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_bert_matches_transformers),
        cmocka_unit_test(attribute_beats_config),
        cmocka_unit_test(padding_changes_nothing),
        cmocka_unit_test(concurrent_calls_agree),
        cmocka_unit_test(bad_inputs_are_refused),
        cmocka_unit_test(bad_models_are_refused),
        cmocka_unit_test(minilm_matches_sentence_transformers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
