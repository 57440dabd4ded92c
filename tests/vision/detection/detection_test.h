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
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static inline loom_tensor *dt_golden(const char *stem, const char *name)
{
    char path[192];
    snprintf(path, sizeof path, "vision/detection/%s_%s", stem, name);
    return tu_npy(path);
}

/* The golden vision/detection/<prefix><name>.npy: prefix a stem and "_" (as dt_golden's) or a case's directory
** and "/" ("frcnn_mnv3_tiny/"). */
static inline loom_tensor *dt_golden_at(const char *prefix, const char *name)
{
    char path[192];
    snprintf(path, sizeof path, "vision/detection/%s%s", prefix, name);
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

/* Rows [j0, j1) of got and want (torchvision's scores equal there, so
** their order is torchvision's sort's and not defined): each wanted box
** has its own got box within 1e-3 px. A single row is compared in place. */
static inline void dt_rows_match_as_set(const char *stem, const loom_tensor *got, const loom_tensor *want, int64_t j0,
                              int64_t j1)
{
    const float *g = loom_data(got), *w = loom_data(want);
    unsigned char used[4096] = { 0 };
    assert_true(j1 - j0 <= (int64_t)sizeof used);
    for (int64_t j = j0; j < j1; j++) {
        int64_t found = -1;
        for (int64_t k = j0; k < j1 && found < 0; k++) {
            int close = !used[k - j0];
            for (int c = 0; c < 4 && close; c++)
                close = fabsf(g[k * 4 + c] - w[j * 4 + c]) <= 1e-3f;
            if (close)
                found = k;
        }
        if (found < 0)
            fail_msg("%s: torchvision's box %lld (%g, %g, %g, %g) has no match within 1e-3 px among rows %lld..%lld",
                     stem, (long long)j, w[j * 4], w[j * 4 + 1], w[j * 4 + 2], w[j * 4 + 3], (long long)j0,
                     (long long)j1 - 1);
        used[found - j0] = 1;
    }
}

/* Ranked rows of images (proposals, detections): the same offsets, scores
** within 1e-4 and boxes within 1e-3 px row by row, except that within a
** run of equal wanted scores (whose order torchvision's unstable sort
** leaves open) the boxes are compared as sets. Returns the rows in such
** runs. */
static inline int64_t dt_check_ranked(const char *stem, const loom_tensor *got_boxes, const loom_tensor *got_scores,
                                      const loom_tensor *got_offsets, const loom_tensor *boxes,
                                      const loom_tensor *scores, const loom_tensor *offsets)
{
    char what[96];
    snprintf(what, sizeof what, "%s offsets", stem);
    tu_assert_identical(got_offsets, offsets, what);
    snprintf(what, sizeof what, "%s scores", stem);
    const double d = dt_max_diff(got_scores, scores, what);
    if (d > 1e-4)
        fail_msg("%s: scores differ by %g > 1e-4", stem, d);
    snprintf(what, sizeof what, "%s boxes", stem);
    tu_assert_same_shape(got_boxes, boxes, what);
    const float *s = loom_data(scores);
    const int64_t *off = loom_data(offsets);
    int64_t tied = 0;
    for (int64_t b = 0; b + 1 < offsets->shape[0]; b++)
        for (int64_t j0 = off[b], j1; j0 < off[b + 1]; j0 = j1) {
            for (j1 = j0 + 1; j1 < off[b + 1] && s[j1] == s[j0]; j1++)
                ;
            tied += j1 - j0 > 1 ? j1 - j0 : 0;
            dt_rows_match_as_set(stem, got_boxes, boxes, j0, j1);
        }
    print_message("%s: %lld rows in runs of equal scores, compared as sets\n", stem, (long long)tied);
    return tied;
}

static inline double dt_iou(const float *a, const float *b)
{
    const double iw = fmin(a[2], b[2]) - fmax(a[0], b[0]), ih = fmin(a[3], b[3]) - fmax(a[1], b[1]);
    const double inter = iw > 0 && ih > 0 ? iw * ih : 0.0;
    const double u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return u > 0 ? inter / u : 0.0;
}

/* det (boxes, scores, labels, offsets) against torchvision's rows of one
** image: the same offsets, scores within 1e-4 and boxes within 1e-3 px in
** place, except within runs of scores each within tie of the previous one
** (random heads score many boxes alike: below the float32 differences of
** two summation orders their order is not defined), compared as sets, their
** labels as multisets. Within such a run, a box of torchvision's with no
** match within 1e-3 px may have one overlapping it by IoU >= nms_iou (the
** per-class nms threshold; 0: none allowed): two candidates of one nms
** whose scores tie, either of which nms keeps; the test prints how many. */
static inline void dt_check_near_ties(const char *stem, loom_tensor *const *det, const loom_tensor *wb,
                                      const loom_tensor *ws, const loom_tensor *wl, const loom_tensor *wo, double tie,
                                      double nms_iou)
{
    tu_assert_identical(det[3], wo, "offsets");
    const double d = dt_max_diff(det[1], ws, "scores");
    if (d > 1e-4)
        fail_msg("%s: scores differ by %g > 1e-4", stem, d);
    tu_assert_same_shape(det[0], wb, "boxes");
    const float *s = loom_data(ws), *g = loom_data(det[0]), *w = loom_data(wb);
    const int64_t n = ws->shape[0], *gl = loom_data(det[2]), *want_l = loom_data(wl);
    int64_t tied = 0, nms_tied = 0;
    for (int64_t j0 = 0, j1; j0 < n; j0 = j1) {
        for (j1 = j0 + 1; j1 < n && fabs((double)s[j1 - 1] - (double)s[j1]) <= tie; j1++)
            ;
        tied += j1 - j0 > 1 ? j1 - j0 : 0;
        if (j1 - j0 > 64)
            fail_msg("%s: a run of %lld near-equal scores", stem, (long long)(j1 - j0));
        unsigned char used[64] = { 0 }, matched[64] = { 0 };
        for (int pass = 0; pass < 2; pass++)    /* within 1e-3 px first, then nms ties */
            for (int64_t j = j0; j < j1; j++) {
                if (matched[j - j0])
                    continue;
                for (int64_t k = j0; k < j1 && !matched[j - j0]; k++) {
                    int close = !used[k - j0] && gl[k] == want_l[j];
                    for (int c = 0; c < 4 && close && pass == 0; c++)
                        close = fabsf(g[k * 4 + c] - w[j * 4 + c]) <= 1e-3f;
                    if (close && pass == 1)
                        close = nms_iou > 0 && j1 - j0 > 1 && dt_iou(g + k * 4, w + j * 4) >= nms_iou;
                    if (close) {
                        used[k - j0] = matched[j - j0] = 1;
                        nms_tied += pass;
                    }
                }
                if (pass == 1 && !matched[j - j0])
                    fail_msg("%s: torchvision's box %lld (%g, %g, %g, %g), label %lld, has no match among rows "
                             "%lld..%lld", stem, (long long)j, w[j * 4], w[j * 4 + 1], w[j * 4 + 2], w[j * 4 + 3],
                             (long long)want_l[j], (long long)j0, (long long)j1 - 1);
            }
    }
    print_message("%s: %lld detections, boxes within 1e-3 px, scores within %g; %lld rows in runs of scores "
                  "within %g, compared as sets; %lld of them another candidate of a tied nms (IoU >= %g)\n",
                  stem, (long long)n, d, (long long)tied, tie, (long long)nms_tied, nms_iou);
}

static inline void dt_free(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        loom_tensor_free(t[i]);
}

/* Feature maps maps[0..n) against the goldens <prefix>x0 .. (dt_golden_at), each within tol (the callers say
** why theirs); prints each one's largest difference. */
static inline void dt_check_maps(const char *prefix, loom_tensor *const *maps, int n, double tol)
{
    for (int l = 0; l < n; l++) {
        char name[16], what[96];
        snprintf(name, sizeof name, "x%d", l);
        snprintf(what, sizeof what, "%s%s", prefix, name);
        loom_tensor *want = dt_golden_at(prefix, name);
        const double d = dt_max_diff(maps[l], want, what);
        if (d > tol)
            fail_msg("%s differs by %g > %g", what, d, tol);
        print_message("%s: largest difference %g\n", what, d);
        loom_tensor_free(want);
    }
}

#endif /* DETECTION_TEST_H */
