/* SPDX-License-Identifier: BSD-3-Clause */
/*
** roi_test_util.h - helpers shared by the tests of the vision RoI ops:
** the parameters of a golden case, attribute bags for the forward and
** backward ops, multi-output calls, and comparisons that also handle f16
** and i32 tensors.
*/
#ifndef ROI_TEST_UTIL_H
#define ROI_TEST_UTIL_H

#include "tu_ops.h"

/* tests/data/vision/roi/params_<case>.npy: [ph, pw, spatial_scale, sampling_ratio, aligned] */
typedef struct roi_params {
    int64_t ph, pw, sampling_ratio;
    double spatial_scale;
    int aligned;
} roi_params;

roi_params roi_load_params(const char *casename);

/* Attributes of the forward op `op` ("vision.roi_align", ...) for p; the
** output_size is [ph, pw], or [ph] when square_form and ph == pw. */
loom_attrs *roi_forward_attrs(const char *op, const roi_params *p, int square_form);
/* Attributes of the backward op for p and an input of shape nchw. */
loom_attrs *roi_backward_attrs(const char *op, const roi_params *p, const int64_t *nchw);

/* loom_run with n_out outputs (new tensors) on a forced backend (NULL = policy). */
loom_status roi_run(const char *op, const loom_tensor *const *in, int32_t n_in, const loom_attrs *attrs,
                    loom_tensor **out, int32_t n_out, const char *backend);

/* Same dtype and shape; f16/f32/f64 compared as doubles with
** |got - want| <= atol + rtol |want| (NaN matches NaN), i32 exactly. */
void roi_assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol,
                      const char *what);

/* Element i of an f16/f32/f64/i32 tensor as double. */
double roi_get(const loom_tensor *t, int64_t i);

/* golden "roi/<stem>" (fails the test when missing) */
loom_tensor *roi_npy(const char *fmt, ...);

/* assert that status is an error whose message contains needle */
void roi_assert_fails(loom_status st, loom_status want, const char *needle);

#endif
