/* SPDX-License-Identifier: BSD-3-Clause */
/*
** model_goldens.h - what the model tests share (header-only): where the
** weights made at goldens time live (build-models/vision/<name>/, or
** $LOOM_VISION_MODELS/<name>/), the bound of the logits (max |got - want|
** <= 1e-4 * max |logit|, the issue's), and one class checked against its
** golden logits, twice (the plan of a shape reused gives the same bits).
** The transformer tests add transformer_checks.h on top.
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

/* max |got - want| <= rel * max |want|, printed. */
static inline void assert_rel_close(const loom_tensor *got, const loom_tensor *want, double rel, const char *what)
{
    tu_assert_same_shape(got, want, what);
    double m = 0.0, e = 0.0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        m = fmax(m, fabs(tu_get(want, i)));
        e = fmax(e, fabs(tu_get(got, i) - tu_get(want, i)));
    }
    if (!(e <= rel * m))
        fail_msg("%s: max |got - want| = %g > %g * max |want| = %g", what, e, rel, rel * m);
    printf("# %s: max |got - want| / max |want| = %.2e\n", what, e / m);
}

/* the bound on logits: 1e-4 of the largest */
static inline void assert_logits_close(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    assert_rel_close(got, want, 1e-4, what);
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

static inline int check_class_with(const char *name, const char *weights_file, const char *input,
                                   const char *logits, const loom_attrs *attrs)
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
    if (loom_object_create(&obj, op, attrs, w) != LOOM_OK)
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

/* check_class with the class's default attributes. */
static inline int check_class(const char *name, const char *weights_file, const char *input, const char *logits)
{
    return check_class_with(name, weights_file, input, logits, NULL);
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

/* Creating cls from weights (NULL: none) fails with a message holding needle. */
static inline void expect_refused(const char *cls, const char *weights, const char *needle)
{
    loom_object *obj = NULL;
    if (loom_object_create(&obj, cls, NULL, weights) == LOOM_OK) {
        loom_object_free(obj);
        fail_msg("%s accepted %s", cls, weights != NULL ? weights : "no weights file");
    }
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: message \"%s\" does not say %s", cls, loom_last_error(), needle);
}

/* The plan re-made for new shapes and reused: class `name` on its golden
** batch of 2, on its first image alone (the same logits within 1e-5), on
** an odd [1, 3, odd_h, odd_w], then on the batch again (the same bits).
** 0 when the files are absent. */
static inline int check_replans(const char *name, int64_t odd_h, int64_t odd_w)
{
    char w[512], xp[512], op[64];
    if (!model_file(w, sizeof w, name, "model.safetensors") || !model_file(xp, sizeof xp, name, "input.npy"))
        return 0;
    snprintf(op, sizeof op, "vision.%s", name);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, op, NULL, w) != LOOM_OK)
        fail_msg("%s: %s", op, loom_last_error());
    loom_tensor *in = npy_file(xp);
    loom_tensor *two = forward(obj, op, in);
    int64_t shape[4] = { 1, in->shape[1], in->shape[2], in->shape[3] };
    loom_tensor *one = tu_random_f32(4, shape, 1);
    memcpy(loom_data(one), loom_data(in), (size_t)(shape[1] * shape[2] * shape[3]) * sizeof(float));
    loom_tensor *got1 = forward(obj, op, one);
    for (int64_t i = 0; i < got1->shape[1]; i++)
        if (fabs(tu_get(got1, i) - tu_get(two, i)) > 1e-5 * (1.0 + fabs(tu_get(two, i))))
            fail_msg("%s: logit %lld of the single image differs from the batch's: %g vs %g", op, (long long)i,
                     tu_get(got1, i), tu_get(two, i));
    int64_t odd_shape[4] = { 1, 3, odd_h, odd_w };
    loom_tensor *odd = tu_random_f32(4, odd_shape, 2);
    loom_tensor *got_odd = forward(obj, op, odd);
    assert_int_equal(got_odd->shape[1], two->shape[1]);
    loom_tensor *again = forward(obj, op, in);
    tu_assert_identical(again, two, "back to batch 2");
    loom_tensor *all[] = { in, two, one, got1, odd, got_odd, again };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_object_free(obj);
    return 1;
}

#endif /* LOOM_TESTS_MODEL_GOLDENS_H */
