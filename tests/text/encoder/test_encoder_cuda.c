/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_encoder_cuda.c - the cuda kernel of text.bert_encoder (text-cuda.so)
** on the tiny random BERT: every pooling (mean, cls, max, none, mean +
** normalize), GELU erf and gelu_new, the "mixed" and "holes" batches, each
** against transformers' goldens and against the cpu kernel on the same
** inputs, with the cpu test's tolerance (2e-5 absolute + 1e-5 relative);
** the input errors the cpu reports (ids out of range, a bad mask or token
** type), with the same messages; a second call reusing the uploaded
** weights; empty batches. Every test skips with a message without a CUDA
** device or text-cuda.so (suite gpu).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"
#include "encoder_test_util.h"

#define ATOL 2e-5
#define RTOL 1e-5

static loom_dl_device dev;

static int cuda_device(loom_dl_device *out)
{
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            *out = di.device;
            return 1;
        }
    }
    return 0;
}

#define SKIP_WITHOUT_DEVICE()                                                                            \
    do {                                                                                                 \
        if (!cuda_device(&dev) || !tu_has_backend("text.bert_encoder", "cuda")) {                        \
            print_message("no CUDA device (or no text-cuda.so): the cuda encoder is not run\n");         \
            skip();                                                                                      \
        }                                                                                                \
    } while (0)

static loom_tensor *to_device(const loom_tensor *t)
{
    loom_tensor *d;
    if (t == NULL)
        return NULL;
    if (loom_tensor_copy_to(&d, t, &dev) != LOOM_OK)
        fail_msg("copy to cuda: %s", loom_last_error());
    return d;
}

static loom_tensor *to_host(const loom_tensor *t)
{
    loom_tensor *h;
    const loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
    if (loom_tensor_copy_to(&h, t, &cpu) != LOOM_OK)
        fail_msg("copy to the host: %s", loom_last_error());
    return h;
}

static loom_object *make(const char *attrs)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "config", tu_data_path("text/encoder/tiny_config.json")), LOOM_OK);
    if (attrs != NULL) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", attrs);
        char *eq = strchr(buf, '=');
        assert_non_null(eq);
        *eq = '\0';
        assert_int_equal(loom_attrs_parse(a, "text.bert_encoder", buf, eq + 1), LOOM_OK);
    }
    loom_object *obj = NULL;
    if (loom_object_create(&obj, "text.bert_encoder", a, tu_data_path("text/encoder/tiny_bert.safetensors"))
        != LOOM_OK)
        fail_msg("create: %s", loom_last_error());
    loom_attrs_free(a);
    return obj;
}

/* One pooling of one batch on cuda, against the golden and the cpu. */
static void compare(loom_object *obj, const char *batch, const char *prefix, const char *pooling, int normalize,
                    const char *what)
{
    loom_tensor *ids = te_golden(batch, "input_ids"), *mask = te_golden(batch, "attention_mask");
    loom_tensor *types = te_golden(batch, "token_type_ids");
    loom_tensor *ids_d = to_device(ids), *mask_d = to_device(mask), *types_d = to_device(types);
    loom_tensor *want_cpu, *got_d;
    if (te_encode(obj, ids, mask, types, pooling, normalize, &want_cpu) != LOOM_OK)
        fail_msg("%s %s cpu: %s", batch, pooling, loom_last_error());
    if (te_encode(obj, ids_d, mask_d, types_d, pooling, normalize, &got_d) != LOOM_OK)
        fail_msg("%s %s cuda: %s", batch, pooling, loom_last_error());
    assert_int_equal(got_d->device.device_type, LOOM_DEVICE_CUDA);
    loom_tensor *got = to_host(got_d);
    char gname[96], label[160];
    snprintf(gname, sizeof gname, "%s%s", prefix, batch);
    loom_tensor *want = te_golden(gname, what);
    snprintf(label, sizeof label, "%s %s%s cuda vs transformers", gname, pooling, normalize ? " normalize" : "");
    tu_assert_close(got, want, RTOL, normalize ? ATOL / 4 : ATOL, label);
    snprintf(label, sizeof label, "%s %s%s cuda vs cpu", gname, pooling, normalize ? " normalize" : "");
    tu_assert_close(got, want_cpu, RTOL, normalize ? ATOL / 4 : ATOL, label);
    loom_tensor *all[] = { ids, mask, types, ids_d, mask_d, types_d, want_cpu, got_d, got, want };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

static void tiny_bert_on_cuda(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    loom_object *obj = make(NULL);
    static const char *const pools[][2] = { { "mean", "mean" }, { "cls", "cls" }, { "max", "max" },
                                            { "none", "last_hidden_state" } };
    static const char *const batches[] = { "mixed", "holes" };
    for (int b = 0; b < 2; b++) {
        for (int p = 0; p < 4; p++)
            compare(obj, batches[b], "", pools[p][0], 0, pools[p][1]);
        compare(obj, batches[b], "", "mean", 1, "mean_norm");
    }
    loom_object_free(obj);
}

static void gelu_new_on_cuda(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    loom_object *obj = make("hidden_act=gelu_new");
    compare(obj, "mixed", "gelu_new_", "mean", 0, "mean");
    compare(obj, "holes", "gelu_new_", "mean", 0, "mean");
    loom_object_free(obj);
}

static loom_tensor *ids_on_device(int64_t B, int64_t L, const int64_t *v)
{
    const int64_t shape[2] = { B, L };
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_I64, 2, shape, NULL), LOOM_OK);
    if (B * L > 0)
        memcpy(loom_data(t), v, (size_t)(B * L) * sizeof(int64_t));
    loom_tensor *d = to_device(t);
    loom_tensor_free(t);
    return d;
}

static void expect_error(loom_object *obj, const loom_tensor *ids, const loom_tensor *mask, const loom_tensor *types,
                         const char *needle)
{
    loom_tensor *out;
    if (te_encode(obj, ids, mask, types, "mean", 0, &out) == LOOM_OK)
        fail_msg("expected an error naming '%s'", needle);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("error '%s' does not name '%s'", loom_last_error(), needle);
}

static void bad_inputs_on_cuda(void **state)
{
    (void)state;
    SKIP_WITHOUT_DEVICE();
    loom_object *obj = make(NULL);
    const int64_t ok[4] = { 1, 2, 3, 4 }, big[4] = { 1, 99, 3, 4 }, neg[4] = { 1, 2, -1, 4 };
    const int64_t mask2[4] = { 1, 1, 2, 0 }, type2[4] = { 0, 0, 2, 0 };
    loom_tensor *ids = ids_on_device(1, 4, ok), *b1 = ids_on_device(1, 4, big), *b2 = ids_on_device(1, 4, neg);
    loom_tensor *m2 = ids_on_device(1, 4, mask2), *t2 = ids_on_device(1, 4, type2);
    expect_error(obj, b1, NULL, NULL, "'input_ids'[0][1] = 99");
    expect_error(obj, b2, NULL, NULL, "'input_ids'[0][2] = -1");
    expect_error(obj, ids, m2, NULL, "'attention_mask'[0][2] = 2");
    expect_error(obj, ids, NULL, t2, "'token_type_ids'[0][2] = 2");
    /* no mask, no types: all tokens, type 0 (cuda vs cpu) */
    loom_tensor *out_d, *want, *ids_h = to_host(ids);
    assert_int_equal(te_encode(obj, ids, NULL, NULL, "mean", 0, &out_d), LOOM_OK);
    assert_int_equal(te_encode(obj, ids_h, NULL, NULL, "mean", 0, &want), LOOM_OK);
    loom_tensor *out = to_host(out_d);
    tu_assert_close(out, want, RTOL, ATOL, "no mask, no types: cuda vs cpu");
    loom_tensor_free(out);
    loom_tensor_free(out_d);
    loom_tensor_free(want);
    loom_tensor_free(ids_h);
    /* empty batches and sequences: shapes, no error */
    loom_tensor *e0 = ids_on_device(0, 4, ok), *e1 = ids_on_device(2, 0, ok);
    assert_int_equal(te_encode(obj, e0, NULL, NULL, "mean", 0, &out_d), LOOM_OK);
    assert_int_equal(out_d->shape[0], 0);
    loom_tensor_free(out_d);
    assert_int_equal(te_encode(obj, e1, NULL, NULL, "max", 0, &out_d), LOOM_OK);
    out = to_host(out_d);
    assert_int_equal(out->shape[0], 2);
    assert_true(((float *)loom_data(out))[0] == -1e9f);
    loom_tensor_free(out);
    loom_tensor_free(out_d);
    loom_tensor *all[] = { ids, b1, b2, m2, t2, e0, e1 };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_object_free(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tiny_bert_on_cuda),
        cmocka_unit_test(gelu_new_on_cuda),
        cmocka_unit_test(bad_inputs_on_cuda),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
