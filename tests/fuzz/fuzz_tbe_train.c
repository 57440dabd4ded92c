/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fuzz_tbe_train.c - feeds: the weights file of a training fbgemm.tbe
** object, tables with their optimizer state (table.<t>, momentum1.<t>,
** momentum2.<t>, iter). The first 2 bytes of an input choose the optimizer
** (exact_sgd, exact_rowwise_adagrad, adam, partial_rowwise_adam), pooling
** sum or mean, and the batch; the rest is the safetensors file that
** loom_object_create(&obj, "fbgemm.tbe", {optimizer=...}, path) reads. When
** the object is created: one fbgemm.tbe_backward on valid indices and a
** gradient of ones, every table and state read back through
** fbgemm.tbe_state, and fbgemm.tbe_save to a file from which a new object
** must be created (the saved state is always loadable).
** Asserts: no sanitizer report; a failed create leaves no object and sets a
** message; the backward on valid input succeeds; the round trip succeeds.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_util.h"

#define PARAM_BYTES 2
#define MAX_TABLES 16

static const char *const optimizers[] = { "exact_sgd", "exact_rowwise_adagrad", "adam", "partial_rowwise_adam" };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_init("core,fbgemm");
    FZ_CHECK(loom_op_find("fbgemm.tbe_backward") != NULL, "the fbgemm pack did not load");
    return 0;
}

static loom_attrs *attrs_of(const uint8_t *p)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    FZ_CHECK(loom_attrs_set_string(a, "optimizer", optimizers[p[0] & 3]) == LOOM_OK, "optimizer");
    FZ_CHECK(loom_attrs_set_string(a, "pooling_mode", (p[0] >> 2) & 1 ? "mean" : "sum") == LOOM_OK, "pooling");
    if ((p[0] >> 3) & 1 && (p[0] & 3) == 1) {
        FZ_CHECK(loom_attrs_set_string(a, "weight_decay_mode", "l2") == LOOM_OK, "wd mode");
        FZ_CHECK(loom_attrs_set_float(a, "weight_decay", 0.01) == LOOM_OK, "wd");
    }
    return a;
}

/* One state read through fbgemm.tbe_state; every byte touched. */
static void read_state(loom_object *obj, const char *name, int64_t t)
{
    loom_attrs *a = NULL;
    FZ_CHECK(loom_attrs_new(&a) == LOOM_OK, "attrs");
    FZ_CHECK(loom_attrs_set_string(a, "name", name) == LOOM_OK, "name");
    FZ_CHECK(loom_attrs_set_int(a, "table", t) == LOOM_OK, "table");
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    loom_tensor *out = NULL;
    if (loom_run("fbgemm.tbe_state", NULL, 0, a, &out, 1, &opt) == LOOM_OK)
        fz_touch_tensor(out);
    loom_tensor_free(out);
    loom_attrs_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < PARAM_BYTES)
        return 0;
    const uint8_t *p = data;
    const char *path = fz_file(data + PARAM_BYTES, size - PARAM_BYTES);

    /* the tables' rows, as loom's reader lists them (the harness's batch) */
    int64_t rows[MAX_TABLES], dims[MAX_TABLES];
    int n = 0;
    loom_safetensors *st = NULL;
    if (loom_safetensors_open(&st, path) == LOOM_OK) {
        for (; n < MAX_TABLES; n++) {
            char name[32];
            const loom_tensor *t;
            snprintf(name, sizeof name, "table.%d", n);
            if (loom_safetensors_get(st, name, &t) != LOOM_OK)
                break;
            rows[n] = t->ndim == 2 ? t->shape[0] : 0;
            dims[n] = t->ndim == 2 ? t->shape[1] : 0;
        }
        loom_safetensors_close(st);
    }

    loom_attrs *a = attrs_of(p);
    loom_object *obj = (loom_object *)1;
    loom_status s = loom_object_create(&obj, "fbgemm.tbe", a, path);
    fz_debug("%d tables; create: %s %s", n, loom_status_name(s), s == LOOM_OK ? "" : loom_last_error());
    if (s != LOOM_OK) {
        FZ_CHECK(obj == NULL, "failed create left an object");
        FZ_CHECK(loom_last_error()[0] != '\0', "failure %s without a message", loom_status_name(s));
        loom_attrs_free(a);
        return 0;
    }
    FZ_CHECK(n > 0, "an object over a file whose tables the reader did not list");

    /* one step: B bags per table of up to 3 in-range rows, a gradient of ones */
    const int B = 1 + (p[1] & 3);
    int64_t idx[MAX_TABLES * 4 * 3], off[MAX_TABLES * 4 + 1], total_D = 0;
    uint32_t rng = 0x9e3779b9u ^ p[1];
    int64_t k = 0;
    off[0] = 0;
    for (int t = 0; t < n; t++) {
        total_D += dims[t];
        for (int b = 0; b < B; b++) {
            rng = rng * 1664525u + 1013904223u;
            const int len = rows[t] > 0 ? (int)(rng >> 24) % 4 : 0;
            for (int i = 0; i < len; i++) {
                rng = rng * 1664525u + 1013904223u;
                idx[k++] = (int64_t)((rng >> 8) % (uint64_t)rows[t]);
            }
            off[t * B + b + 1] = k;
        }
    }
    const int64_t ishape[1] = { k }, oshape[1] = { (int64_t)n * B + 1 }, gshape[2] = { B, total_D };
    loom_tensor *ind = NULL, *offs = NULL, *grad = NULL;
    FZ_CHECK(loom_tensor_new(&ind, LOOM_DTYPE_I64, 1, ishape, NULL) == LOOM_OK, "indices");
    FZ_CHECK(loom_tensor_new(&offs, LOOM_DTYPE_I64, 1, oshape, NULL) == LOOM_OK, "offsets");
    FZ_CHECK(loom_tensor_new(&grad, LOOM_DTYPE_F32, 2, gshape, NULL) == LOOM_OK, "grad");
    if (k > 0)
        memcpy(loom_data(ind), idx, (size_t)k * sizeof *idx);
    memcpy(loom_data(offs), off, (size_t)oshape[0] * sizeof *off);
    for (int64_t i = 0; i < B * total_D; i++)
        ((float *)loom_data(grad))[i] = 1.0f;
    const loom_tensor *in[4] = { grad, ind, offs, NULL };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    s = loom_run("fbgemm.tbe_backward", in, 4, NULL, NULL, 0, &opt);
    FZ_CHECK(s == LOOM_OK, "backward on valid input: %s %s", loom_status_name(s), loom_last_error());
    for (int t = 0; t < n; t++) {
        read_state(obj, "weight", t);
        read_state(obj, "momentum1", t);
        read_state(obj, "momentum2", t);
    }
    read_state(obj, "iter", 0);

    /* save, and a new object from the saved file */
    char saved[64];
    snprintf(saved, sizeof saved, "/tmp/loom-fuzz-tbe-train-%d.safetensors", (int)getpid());
    loom_attrs *sa = NULL;
    FZ_CHECK(loom_attrs_new(&sa) == LOOM_OK && loom_attrs_set_string(sa, "path", saved) == LOOM_OK, "save attrs");
    s = loom_run("fbgemm.tbe_save", NULL, 0, sa, NULL, 0, &opt);
    FZ_CHECK(s == LOOM_OK, "save: %s %s", loom_status_name(s), loom_last_error());
    loom_object *again = NULL;
    s = loom_object_create(&again, "fbgemm.tbe", a, saved);
    FZ_CHECK(s == LOOM_OK, "the saved state does not load: %s", loom_last_error());
    loom_object_free(again);
    unlink(saved);
    loom_attrs_free(sa);
    loom_attrs_free(a);
    loom_tensor_free(ind);
    loom_tensor_free(offs);
    loom_tensor_free(grad);
    loom_object_free(obj);
    return 0;
}
