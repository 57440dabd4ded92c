/* SPDX-License-Identifier: BSD-3-Clause */
/*
** detection_test.h - helpers of the detection tests: golden files
** (tests/data/vision/detection/<case>_<name>.npy, written by
** tools/gen_vision_detection_goldens.py), calls with several outputs, and
** refusals with the message they must carry.
*/
#ifndef DETECTION_TEST_H
#define DETECTION_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static inline loom_tensor *dt_golden(const char *stem, const char *name)
{
    char path[192];
    snprintf(path, sizeof path, "vision/detection/%s_%s", stem, name);
    return tu_npy(path);
}

/* op on in[0..n_in) with attributes text into out[0..n_out) (new tensors). */
static inline loom_status dt_run(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                                 loom_tensor **out, int32_t n_out)
{
    loom_attrs *a = tu_attrs_text(op, attrs);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    for (int32_t i = 0; i < n_out; i++)
        out[i] = NULL;
    loom_status st = loom_run(op, in, n_in, a, out, n_out, &opt);
    loom_attrs_free(a);
    return st;
}

/* The call is refused with LOOM_EINVAL and a message containing needle. */
static inline void dt_refused(const char *op, const loom_tensor *const *in, int32_t n_in, const char *attrs,
                              int32_t n_out, const char *needle)
{
    loom_tensor *out[4];
    loom_status st = dt_run(op, in, n_in, attrs, out, n_out);
    if (st == LOOM_OK) {
        for (int32_t i = 0; i < n_out; i++)
            loom_tensor_free(out[i]);
        fail_msg("%s (%s) accepted input that should be refused with '%s'", op, attrs ? attrs : "-", needle);
    }
    assert_int_equal(st, LOOM_EINVAL);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: message '%s' lacks '%s'", op, loom_last_error(), needle);
}

/* The largest |got - want| of two f32 tensors of one shape. */
static inline double dt_max_diff(const loom_tensor *got, const loom_tensor *want, const char *what)
{
    tu_assert_same_shape(got, want, what);
    const float *g = loom_data(got), *w = loom_data(want);
    double worst = 0;
    for (int64_t i = 0; i < loom_numel(want); i++) {
        const double d = fabs((double)g[i] - (double)w[i]);
        if (isnan(d) && !(isnan(g[i]) && isnan(w[i])))
            fail_msg("%s: element %lld is %g, expected %g", what, (long long)i, g[i], w[i]);
        worst = d > worst ? d : worst;
    }
    return worst;
}

static inline void dt_free(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        loom_tensor_free(t[i]);
}

#endif /* DETECTION_TEST_H */
