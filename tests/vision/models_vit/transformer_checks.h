/* SPDX-License-Identifier: BSD-3-Clause */
/*
** transformer_checks.h - what the ViT and Swin tests share (included by
** tests/vision/models_vit and tests/vision/models_swin after cmocka.h and
** tu_ops.h): golden files, the relative comparison of the tolerances both
** state, an object's forward, the full models' files in build-models, and
** the check that a refusal's message names what it should.
*/
#ifndef LOOM_TESTS_VISION_TRANSFORMER_CHECKS_H
#define LOOM_TESTS_VISION_TRANSFORMER_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline loom_tensor *tc_npy_file(const char *path)
{
    loom_tensor *t = NULL;
    if (loom_npy_read(&t, path) != LOOM_OK)
        fail_msg("%s: %s", path, loom_last_error());
    return t;
}

/* tests/data/vision/models/<dir>/<file> into buf. */
static inline const char *tc_data_file(char *buf, size_t size, const char *dir, const char *file)
{
    snprintf(buf, size, "%s/%s", tu_data_path("vision/models"), dir);
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "/%s", file);
    return buf;
}

/* max |got - want| <= rel * max |want|, printed. */
static inline void tc_assert_rel_close(const loom_tensor *got, const loom_tensor *want, double rel, const char *what)
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
    loom_tensor *in = tc_npy_file(input), *want = tc_npy_file(want_path), *got = NULL, *again = NULL;
    if (tc_forward(obj, op, in, &got) != LOOM_OK)
        fail_msg("%s: %s", what, loom_last_error());
    tc_assert_rel_close(got, want, 1e-4, what);
    if (tc_forward(obj, op, in, &again) != LOOM_OK)
        fail_msg("%s again: %s", what, loom_last_error());
    tu_assert_identical(again, got, what);
    loom_tensor *all[] = { in, want, got, again };
    for (size_t i = 0; i < 4; i++)
        loom_tensor_free(all[i]);
}

/* <models dir>/<model>/<file> ($LOOM_VISION_MODELS or build-models/vision)
** into buf; 1 when it is readable. */
static inline int tc_full_file(char *buf, size_t size, const char *model, const char *file)
{
    const char *dir = getenv("LOOM_VISION_MODELS");
    if (dir != NULL && dir[0] != '\0')
        snprintf(buf, size, "%s/%s/%s", dir, model, file);
    else
        snprintf(buf, size, "%s/../build-models/vision/%s/%s", tu_data_path(".."), model, file);
    return access(buf, R_OK) == 0;
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
