/* SPDX-License-Identifier: BSD-3-Clause */
/*
** td_test_util.c - see td_test_util.h.
*/
#include "td_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void parse_into(loom_attrs *a, const char *op_or_class, va_list ap)
{
    for (const char *kv = va_arg(ap, const char *); kv != NULL; kv = va_arg(ap, const char *)) {
        const char *eq = strchr(kv, '=');
        assert_non_null(eq);
        char name[128];
        size_t n = (size_t)(eq - kv);
        assert_true(n < sizeof name);
        memcpy(name, kv, n);
        name[n] = '\0';
        loom_status st = loom_attrs_parse(a, op_or_class, name, eq + 1);
        if (st != LOOM_OK)
            fail_msg("attribute %s of %s: %s", kv, op_or_class, loom_last_error());
    }
}

loom_object *tdt_create(loom_status *st, ...)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    va_list ap;
    va_start(ap, st);
    parse_into(a, "rl.tensordict", ap);
    va_end(ap);
    loom_object *o = NULL;
    loom_status s = loom_object_create(&o, "rl.tensordict", a, NULL);
    loom_attrs_free(a);
    if (st != NULL)
        *st = s;
    else if (s != LOOM_OK)
        fail_msg("rl.tensordict: %s", loom_last_error());
    return o;
}

loom_object *tdt_new(int32_t ndim, const int64_t *batch)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (ndim > 0)
        assert_int_equal(loom_attrs_set_ints(a, "batch_size", batch, ndim), LOOM_OK);
    loom_object *o = NULL;
    if (loom_object_create(&o, "rl.tensordict", a, NULL) != LOOM_OK)
        fail_msg("rl.tensordict: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

loom_status tdt_call(loom_object *o, const char *op, const loom_tensor *in, loom_tensor **out, ...)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    va_list ap;
    va_start(ap, out);
    parse_into(a, op, ap);
    va_end(ap);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    const loom_tensor *ins[1] = { in };
    const loom_op *h = loom_op_find(op);
    assert_non_null(h);
    const int32_t n_in = (int32_t)loom_op_schema_of(h)->n_inputs;
    loom_tensor *outs[1] = { NULL };
    loom_status st = loom_run(op, ins, n_in, a, outs, out != NULL ? 1 : 0, &opt);
    loom_attrs_free(a);
    if (out != NULL)
        *out = outs[0];
    return st;
}

int64_t tdt_id(loom_object *o)
{
    loom_tensor *t = NULL;
    if (tdt_call(o, "rl.td_id", NULL, &t, NULL) != LOOM_OK)
        fail_msg("rl.td_id: %s", loom_last_error());
    int64_t id = *(const int64_t *)t->data;
    loom_tensor_free(t);
    return id;
}

void tdt_set(loom_object *o, const char *key, const loom_tensor *v)
{
    char kv[512];
    snprintf(kv, sizeof kv, "key=%s", key);
    if (tdt_call(o, "rl.td_set", v, NULL, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_set %s: %s", key, loom_last_error());
}

loom_tensor *tdt_get(loom_object *o, const char *key)
{
    char kv[512];
    snprintf(kv, sizeof kv, "key=%s", key);
    loom_tensor *t = NULL;
    if (tdt_call(o, "rl.td_get", NULL, &t, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_get %s: %s", key, loom_last_error());
    return t;
}

char *tdt_get_json(loom_object *o, const char *key)
{
    char kv[512];
    snprintf(kv, sizeof kv, "key=%s", key);
    loom_tensor *t = NULL;
    if (tdt_call(o, "rl.td_get_non_tensor", NULL, &t, kv, NULL) != LOOM_OK)
        fail_msg("rl.td_get_non_tensor %s: %s", key, loom_last_error());
    size_t n = (size_t)t->shape[0];
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, t->data, n);
    s[n] = '\0';
    loom_tensor_free(t);
    return s;
}

char *tdt_keys(loom_object *o)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    loom_tensor *outs[3] = { NULL, NULL, NULL };
    if (loom_run("rl.td_keys", NULL, 0, NULL, outs, 3, &opt) != LOOM_OK)
        fail_msg("rl.td_keys: %s", loom_last_error());
    const char *text = outs[0]->data;
    const int64_t *off = outs[1]->data;
    const int64_t k = outs[1]->shape[0] - 1;
    char *s = malloc((size_t)outs[0]->shape[0] + (size_t)k + 1);
    assert_non_null(s);
    size_t at = 0;
    for (int64_t i = 0; i < k; i++) {
        if (i > 0)
            s[at++] = '|';
        memcpy(s + at, text + off[i], (size_t)(off[i + 1] - off[i]));
        at += (size_t)(off[i + 1] - off[i]);
    }
    s[at] = '\0';
    for (int i = 0; i < 3; i++)
        loom_tensor_free(outs[i]);
    return s;
}

int32_t tdt_batch(loom_object *o, int64_t *out)
{
    loom_tensor *t = NULL;
    if (tdt_call(o, "rl.td_batch_size", NULL, &t, NULL) != LOOM_OK)
        fail_msg("rl.td_batch_size: %s", loom_last_error());
    int32_t n = (int32_t)t->shape[0];
    memcpy(out, t->data, (size_t)n * sizeof(int64_t));
    loom_tensor_free(t);
    return n;
}

loom_tensor *tdt_tensor(loom_dtype dtype, int32_t ndim, const int64_t *shape, const double *values)
{
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, dtype, ndim, shape, NULL), LOOM_OK);
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++)
        n *= shape[d];
    for (int64_t i = 0; i < n; i++) {
        switch (dtype) {
        case LOOM_DTYPE_F32: ((float *)t->data)[i] = (float)values[i]; break;
        case LOOM_DTYPE_F64: ((double *)t->data)[i] = values[i]; break;
        case LOOM_DTYPE_I64: ((int64_t *)t->data)[i] = (int64_t)values[i]; break;
        case LOOM_DTYPE_I32: ((int32_t *)t->data)[i] = (int32_t)values[i]; break;
        case LOOM_DTYPE_BOOL:
        case LOOM_DTYPE_U8: ((uint8_t *)t->data)[i] = (uint8_t)values[i]; break;
        default: fail_msg("tdt_tensor: dtype %d", (int)dtype);
        }
    }
    return t;
}

loom_tensor *tdt_ramp(int32_t ndim, const int64_t *shape, double scale, double offset)
{
    loom_tensor *t = NULL;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F32, ndim, shape, NULL), LOOM_OK);
    int64_t n = 1;
    for (int32_t d = 0; d < ndim; d++)
        n *= shape[d];
    for (int64_t i = 0; i < n; i++)
        ((float *)t->data)[i] = (float)((double)i * scale + offset);
    return t;
}

void tdt_assert_bytes(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    if (got->ndim != want->ndim)
        fail_msg("%s: %d dims, want %d", what, (int)got->ndim, (int)want->ndim);
    for (int32_t d = 0; d < got->ndim; d++)
        if (got->shape[d] != want->shape[d])
            fail_msg("%s: dim %d is %lld, want %lld", what, (int)d, (long long)got->shape[d],
                     (long long)want->shape[d]);
    if (got->dtype.bits != want->dtype.bits)
        fail_msg("%s: %d-bit elements, want %d-bit", what, (int)got->dtype.bits, (int)want->dtype.bits);
    size_t n = loom_tensor_nbytes(got);
    if (n > 0 && memcmp((const char *)got->data + got->byte_offset, (const char *)want->data + want->byte_offset, n))
        fail_msg("%s: the bytes differ", what);
}

void tdt_assert_fails(loom_status got, loom_status want, const char *needle)
{
    if (got != want)
        fail_msg("status %s, want %s (%s)", loom_status_name(got), loom_status_name(want), loom_last_error());
    if (needle != NULL && strstr(loom_last_error(), needle) == NULL)
        fail_msg("message '%s' lacks '%s'", loom_last_error(), needle);
}

loom_object *tdt_rb_create(loom_status *st, const char *const *attrs)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    for (const char *const *kv = attrs; *kv != NULL; kv++) {
        const char *eq = strchr(*kv, '=');
        char name[64];
        assert_non_null(eq);
        snprintf(name, sizeof name, "%.*s", (int)(eq - *kv), *kv);
        if (loom_attrs_parse(a, "rl.replay_buffer", name, eq + 1) != LOOM_OK)
            fail_msg("%s: %s", *kv, loom_last_error());
    }
    loom_object *o = NULL;
    loom_status s = loom_object_create(&o, "rl.replay_buffer", a, NULL);
    loom_attrs_free(a);
    if (st != NULL)
        *st = s;
    else if (s != LOOM_OK)
        fail_msg("rl.replay_buffer: %s", loom_last_error());
    return o;
}

char tdt_scratch[64];

int tdt_scratch_setup(void **state)
{
    strcpy(tdt_scratch, "/tmp/loom-rl-XXXXXX");
    assert_non_null(mkdtemp(tdt_scratch));
    return tu_setup(state);
}

int tdt_scratch_teardown(void **state)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tdt_scratch);
    assert_int_equal(system(cmd), 0);
    return tu_teardown(state);
}

char *tdt_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)size + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    b[size] = '\0';
    if (n != NULL)
        *n = (size_t)size;
    return b;
}
