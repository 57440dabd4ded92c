/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transformer_checks.h - what the ViT and Swin tests share (included by
** tests/vision/models_vit and tests/vision/models_swin after cmocka.h), on
** top of model_goldens.h (golden files, the full models' files in
** build-models, the relative comparison): the committed small cases'
** files, an object's forward as a status, the logits of a class checked
** twice, a full model with its weight entry, and the check that a
** refusal's message names what it should.
*/
#ifndef LOOM_TESTS_VISION_TRANSFORMER_CHECKS_H
#define LOOM_TESTS_VISION_TRANSFORMER_CHECKS_H

#include <stdio.h>
#include <string.h>

#include "model_goldens.h"

/* tests/data/vision/models/<dir>/<file> into buf. */
static inline const char *tc_data_file(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s", tu_data_path("vision/models"), dir);
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "/%s", file);
    return buf;
}

/* The method op of obj on x; *out receives a new tensor. */
static inline loom_status tc_forward(loom_object *obj, const char *op, const loom_tensor *x, loom_tensor **out)
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = obj;
    const loom_tensor *in[1] = { x };
    *out = NULL;
    return loom_run(op, in, 1, NULL, out, 1, &opt);
}

/* The logits of input vs want_path within 1e-4 of the largest, then the
** same bits again (the plan of this shape reused). */
static inline void tc_check_logits(loom_object *obj, const char *op, const char *input, const char *want_path,
                                   const char *what)
{
    loom_tensor *in = npy_file(input), *want = npy_file(want_path), *got = NULL, *again = NULL;
    if (tc_forward(obj, op, in, &got) != LOOM_OK)
        fail_msg("%s: %s", what, loom_last_error());
    assert_rel_close(got, want, 1e-4, what);
    if (tc_forward(obj, op, in, &again) != LOOM_OK)
        fail_msg("%s again: %s", what, loom_last_error());
    tu_assert_identical(again, got, what);
    loom_tensor *all[] = { in, want, got, again };
    for (size_t i = 0; i < 4; i++)
        loom_tensor_free(all[i]);
}

/* Class vision.<model> in full from its file made at goldens time
** (model_file; skipped with a message when absent), created with --attr
** weights=entry, its logits on input224.npy against logits224.npy
** (tc_check_logits); w receives the weights file's path. */
static inline void tc_check_full_model(const char *model, const char *entry, char *w, size_t size)
{
    char x[512], y[512], cls[64], what[128];
    if (!model_file(w, size, model, "model.safetensors") || !model_file(x, sizeof x, model, "input224.npy")
        || !model_file(y, sizeof y, model, "logits224.npy")) {
        printf("# SKIP %s: %s is absent (tools/gen_vision_models_goldens.py, which `tools/dev goldens` "
               "runs, makes it)\n", model, w);
        skip();
    }
    snprintf(cls, sizeof cls, "vision.%s", model);
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "weights", entry), LOOM_OK);
    loom_object *obj = NULL;
    if (loom_object_create(&obj, cls, a, w) != LOOM_OK)
        fail_msg("%s with %s: %s", cls, entry, loom_last_error());
    loom_attrs_free(a);
    snprintf(what, sizeof what, "%s [2, 3, 224, 224]", cls);
    tc_check_logits(obj, cls, x, y, what);
    loom_object_free(obj);
}

/* st is a refusal whose message holds n1 and (when not NULL) n2. */
static inline void tc_expect_error(loom_status st, const char *n1, const char *n2)
{
    if (st == LOOM_OK)
        fail_msg("accepted (expected a message with %s)", n1);
    if (strstr(loom_last_error(), n1) == NULL || (n2 != NULL && strstr(loom_last_error(), n2) == NULL))
        fail_msg("message \"%s\" does not say %s / %s", loom_last_error(), n1, n2 ? n2 : "");
}

#endif
