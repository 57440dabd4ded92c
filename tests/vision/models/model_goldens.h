/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_goldens.h - what the model tests share (header-only): where the
** weights made at goldens time live (build-models/vision/<name>/, or
** $LOOM_VISION_MODELS/<name>/), the bound of the logits (max |got - want|
** <= 1e-4 * max |logit|, the issue's), and one class checked against its
** golden logits, twice (the plan of a shape reused gives the same bits).
*/
#ifndef LOOM_TESTS_MODEL_GOLDENS_H
#define LOOM_TESTS_MODEL_GOLDENS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tu_ops.h"

/* <models dir>/<name>/<file> into buf; 1 when it is readable. */
static inline int model_file(char *buf, size_t size, const char *name, const char *file)
{
    const char *dir = getenv("LOOM_VISION_MODELS");
    if (dir != NULL && dir[0] != '\0')
        snprintf(buf, size, "%s/%s/%s", dir, name, file);
    else
        snprintf(buf, size, "%s/../build-models/vision/%s/%s", tu_data_path(".."), name, file);
    return access(buf, R_OK) == 0;
}

static inline loom_tensor *npy_file(const char *path)
{
    loom_tensor *t = NULL;
    if (loom_npy_read(&t, path) != LOOM_OK)
        fail_msg("%s: %s", path, loom_last_error());
    return t;
}

static inline void assert_logits_close(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    tu_assert_same_shape(got, want, what);
    double m = 0.0, e = 0.0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        m = fmax(m, fabs(tu_get(want, i)));
        e = fmax(e, fabs(tu_get(got, i) - tu_get(want, i)));
    }
    if (!(e <= 1e-4 * m))
        fail_msg("%s: max |got - want| = %g > 1e-4 * max |logit| = %g", what, e, 1e-4 * m);
    printf("# %s: max |got - want| / max |logit| = %.2e\n", what, e / m);
}

static inline loom_tensor *forward(loom_object *obj, const char *op, const loom_tensor *x)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    loom_tensor *out = NULL;
    const loom_tensor *in[1] = { x };
    if (loom_run(op, in, 1, NULL, &out, 1, &opt) != LOOM_OK)
        fail_msg("%s: %s", op, loom_last_error());
    return out;
}

static inline int check_class(const char *name, const char *weights_file, const char *input, const char *logits)
{
    char w[512], x[512], y[512], op[64];
    if (!model_file(w, sizeof w, name, weights_file) || !model_file(x, sizeof x, name, input)
        || !model_file(y, sizeof y, name, logits)) {
        printf("# SKIP %s: %s is absent (tools/gen_vision_models_goldens.py, which `tools/dev goldens` runs, "
               "makes it)\n", name, w);
        return 0;
    }
    snprintf(op, sizeof op, "vision.%s", name);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, op, NULL, w) != LOOM_OK)
        fail_msg("%s: %s", op, loom_last_error());
    loom_tensor *in = npy_file(x), *want = npy_file(y);
    loom_tensor *got = forward(obj, op, in);
    char what[128];
    snprintf(what, sizeof what, "%s %s", op, logits);
    assert_logits_close(got, want, what);
    /* the plan of this shape, reused: the same logits bit for bit */
    loom_tensor *again = forward(obj, op, in);
    tu_assert_identical(again, got, what);
    loom_tensor_free(again);
    loom_tensor_free(got);
    loom_tensor_free(in);
    loom_tensor_free(want);
    loom_object_free(obj);
    return 1;
}

/* Creates class cls from the golden file of `name` with --attr
** weights=entry: accepted when needle is NULL, else refused with a message
** holding needle. 0 when the file is absent. */
static inline int check_weight_entry(const char *name, const char *cls, const char *entry, const char *needle)
{
    char w[512];
    if (!model_file(w, sizeof w, name, "model.safetensors"))
        return 0;
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "weights", entry), LOOM_OK);
    loom_object *obj = NULL;
    loom_status st = loom_object_create(&obj, cls, a, w);
    if (needle == NULL && st != LOOM_OK)
        fail_msg("%s weights=%s: %s", cls, entry, loom_last_error());
    if (needle != NULL && st == LOOM_OK)
        fail_msg("%s weights=%s was accepted", cls, entry);
    if (needle != NULL && strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s weights=%s: \"%s\" does not say %s", cls, entry, loom_last_error(), needle);
    loom_object_free(obj);
    loom_attrs_free(a);
    return 1;
}

#endif /* LOOM_TESTS_MODEL_GOLDENS_H */
