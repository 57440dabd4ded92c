/* SPDX-License-Identifier: BSD-3-Clause */
/*
** boxes_test.h - helpers of the box op tests: run an op on golden inputs
** (tests/data/vision/boxes/<case>_<arg>.npy), compare with the golden
** output, and check refusals. Comparisons go through f64 (core.cast), so
** f16 results compare too; NaN must sit where torchvision has NaN.
*/
#ifndef BOXES_TEST_H
#define BOXES_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static inline loom_tensor *bt_golden(const char *stem, const char *arg)
{
    char name[192];
    snprintf(name, sizeof name, "vision/boxes/%s_%s", stem, arg);
    return tu_npy(name);
}

/* Same dtype and shape; |got - want| <= atol + rtol |want| elementwise, NaN
** where want is NaN, equal infinities. */
static inline void bt_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                                   const char *what)
{
    tu_assert_same_shape(got, want, what);
    if (loom_numel(want) == 0)
        return;
    loom_tensor *g = tu_cast(got, LOOM_DTYPE_F64), *w = tu_cast(want, LOOM_DTYPE_F64);
    const double *pg = loom_data(g), *pw = loom_data(w);
    for (int64_t i = 0; i < loom_numel(want); i++) {
        int ok = isnan(pw[i]) ? isnan(pg[i])
               : isinf(pw[i]) ? pg[i] == pw[i]
               : fabs(pg[i] - pw[i]) <= atol + rtol * fabs(pw[i]);
        if (!ok)
            fail_msg("%s: element %lld is %.10g, expected %.10g (rtol %g, atol %g)", what, (long long)i, pg[i],
                     pw[i], rtol, atol);
    }
    loom_tensor_free(g);
    loom_tensor_free(w);
}

/* Run op on the golden inputs args[0..n) of case stem; compare with
** <stem>_output within rtol/atol (0, 0: bit-identical values). */
static inline void bt_check(const char *op, const char *stem, const char *const *args, int n,
                            const loom_attrs *attrs, double rtol, double atol)
{
    loom_tensor *in[4], *got;
    for (int i = 0; i < n; i++)
        in[i] = bt_golden(stem, args[i]);
    if (tu_call(op, (const loom_tensor *const *)in, n, attrs, NULL, &got) != LOOM_OK)
        fail_msg("%s on %s: %s", op, stem, loom_last_error());
    loom_tensor *want = bt_golden(stem, "output");
    char what[224];
    snprintf(what, sizeof what, "%s %s", op, stem);
    if (rtol == 0 && atol == 0 && loom_tensor_dtype_of(want) == LOOM_DTYPE_I64)
        tu_assert_identical(got, want, what);
    else
        bt_assert_close(got, want, rtol, atol, what);
    for (int i = 0; i < n; i++)
        loom_tensor_free(in[i]);
    loom_tensor_free(got);
    loom_tensor_free(want);
}

/* The call fails with LOOM_EINVAL and a message containing `needle`. */
static inline void bt_refused(const char *op, const loom_tensor *const *in, int n, const loom_attrs *attrs,
                              const char *needle)
{
    loom_tensor *out = NULL;
    loom_status st = tu_call(op, in, n, attrs, NULL, &out);
    if (st == LOOM_OK) {
        loom_tensor_free(out);
        fail_msg("%s accepted input that should be refused with '%s'", op, needle);
    }
    assert_int_equal(st, LOOM_EINVAL);
    if (strstr(loom_last_error(), needle) == NULL)
        fail_msg("%s: message '%s' lacks '%s'", op, loom_last_error(), needle);
}

static inline loom_attrs *bt_attrs(void)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    return a;
}

static inline loom_tensor *bt_zeros(loom_dtype dt, int32_t ndim, const int64_t *shape)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, dt, ndim, shape, NULL), LOOM_OK);
    memset(loom_data(t), 0, loom_tensor_nbytes(t));
    return t;
}

#endif /* BOXES_TEST_H */
