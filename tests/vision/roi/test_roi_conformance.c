/*
** test_roi_conformance.c - every non-cpu kernel of the RoI ops against the
** cpu kernel on generated inputs: a [2, 18, 13, 17] map (18 channels split
** into 2 x 3 x 3 for the position-sensitive ops), 24 rois inside, across
** and outside the map, zero-area and reversed, at spatial scales 1 and
** 0.5, with fixed and adaptive sampling, aligned or not; every dtype each
** op takes. Runs only where loom reports a CUDA device; skips otherwise.
**
** Tolerances: the cuda forward kernels compute every value with the cpu
** kernels' operations in the same order (no FMA; f16 rounded after each
** operation), so outputs and maps must be identical. The backward kernels
** scatter with atomicAdd in an unspecified order: each gradient element is
** a sum of at most a few hundred terms of size <= max|grad|, so f32 agrees
** within 1e-5 relative / 1e-5 absolute, f64 within 1e-12, f16 (whose
** atomics round every partial sum to half) within 2^-7 relative and 2^-6
** absolute.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "roi_test_util.h"

static uint32_t rng = 2024;

static double uniform(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (double)(rng >> 8) / 16777216.0;
}

/* values from f64 v, converted on the cpu */
static loom_tensor *make(loom_dtype dt, int32_t ndim, const int64_t *shape, const double *v)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F64, ndim, shape, NULL), LOOM_OK);
    memcpy(loom_data(t), v, (size_t)loom_numel(t) * sizeof(double));
    loom_tensor *out = tu_cast(t, dt);
    loom_tensor_free(t);
    return out;
}

static loom_tensor *random_map(loom_dtype dt, const int64_t *shape)
{
    static double v[2 * 18 * 13 * 17];
    for (int64_t i = 0; i < shape[0] * shape[1] * shape[2] * shape[3]; i++)
        v[i] = uniform() * 2.0 - 1.0;
    return make(dt, 4, shape, v);
}

static loom_tensor *random_rois(loom_dtype dt, int64_t k)
{
    static double v[24 * 5];
    const int64_t shape[2] = { k, 5 };
    for (int64_t r = 0; r < k; r++) {
        double x = uniform() * 40.0 - 8.0, y = uniform() * 30.0 - 6.0;
        double w = uniform() * 25.0, h = uniform() * 20.0;
        if (r % 8 == 6)
            w = h = 0;                  /* zero area */
        if (r % 8 == 7)
            w = -w;                     /* reversed */
        v[r * 5] = (double)(r % 2);
        v[r * 5 + 1] = x;
        v[r * 5 + 2] = y;
        v[r * 5 + 3] = x + w;
        v[r * 5 + 4] = y + h;
    }
    return make(dt, 2, shape, v);
}

typedef struct target {
    loom_dl_device device;
} target;

/* run op on cpu and cuda; outputs copied back to the host */
static void run_both(const char *op, const target *tg, loom_tensor *const *in, int32_t n_in, const loom_attrs *a,
                     int32_t n_out, loom_tensor **ref, loom_tensor **got)
{
    loom_tensor *dev_in[3], *dev_out[2];
    if (roi_run(op, (const loom_tensor *const *)in, n_in, a, ref, n_out, "cpu") != LOOM_OK)
        fail_msg("%s on cpu: %s", op, loom_last_error());
    for (int32_t i = 0; i < n_in; i++)
        assert_int_equal(loom_tensor_copy_to(&dev_in[i], in[i], &tg->device), LOOM_OK);
    if (roi_run(op, (const loom_tensor *const *)dev_in, n_in, a, dev_out, n_out, "cuda") != LOOM_OK)
        fail_msg("%s on cuda: %s", op, loom_last_error());
    for (int32_t i = 0; i < n_out; i++) {
        assert_int_equal(loom_tensor_copy_to(&got[i], dev_out[i], NULL), LOOM_OK);
        loom_tensor_free(dev_out[i]);
    }
    for (int32_t i = 0; i < n_in; i++)
        loom_tensor_free(dev_in[i]);
}

static void tolerance(loom_dtype dt, double *rtol, double *atol)
{
    *rtol = dt == LOOM_DTYPE_F64 ? 1e-12 : dt == LOOM_DTYPE_F32 ? 1e-5 : 0x1p-7;
    *atol = dt == LOOM_DTYPE_F64 ? 1e-12 : dt == LOOM_DTYPE_F32 ? 1e-5 : 0x1p-6;
}

static int check_op(const target *tg, const char *op, const char *bwd, int n_out, int f16)
{
    static const loom_dtype dts[] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64, LOOM_DTYPE_F16 };
    const int64_t shape[4] = { 2, 18, 13, 17 };
    int cases = 0;
    for (size_t d = 0; d < (f16 ? 3u : 2u); d++)
        for (int cfg = 0; cfg < 4; cfg++) {
            roi_params p = { .ph = 3, .pw = 3, .spatial_scale = cfg & 1 ? 0.5 : 1.0,
                             .sampling_ratio = cfg & 2 ? 2 : -1, .aligned = cfg == 1 || cfg == 2 };
            if (strstr(op, "ps_") == NULL) {
                p.ph = 2;
                p.pw = 4;
            }
            loom_tensor *x = random_map(dts[d], shape), *b = random_rois(dts[d], 24);
            loom_tensor *ref[2], *got[2], *gref, *ggot;
            loom_attrs *a = roi_forward_attrs(op, &p, 0);
            char what[160];
            run_both(op, tg, (loom_tensor *[]){ x, b }, 2, a, n_out, ref, got);
            snprintf(what, sizeof what, "%s %s cfg %d", op, loom_dtype_name(dts[d]), cfg);
            for (int i = 0; i < n_out; i++)
                roi_assert_close(got[i], ref[i], 0, 0, what);
            /* backward with a random gradient of the output's shape */
            static double gv[24 * 18 * 8];
            for (int64_t i = 0; i < loom_numel(ref[0]); i++)
                gv[i] = uniform() * 2.0 - 1.0;
            loom_tensor *go = make(dts[d], 4, ref[0]->shape, gv);
            loom_attrs *ab = roi_backward_attrs(bwd, &p, shape);
            loom_tensor *bin[3] = { go, b, n_out > 1 ? ref[1] : NULL };
            run_both(bwd, tg, bin, n_out > 1 ? 3 : 2, ab, 1, &gref, &ggot);
            double rtol, atol;
            tolerance(dts[d], &rtol, &atol);
            snprintf(what, sizeof what, "%s %s cfg %d", bwd, loom_dtype_name(dts[d]), cfg);
            roi_assert_close(ggot, gref, rtol, atol, what);
            loom_tensor *all[] = { x, b, ref[0], got[0], go, gref, ggot };
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                loom_tensor_free(all[i]);
            if (n_out > 1) {
                loom_tensor_free(ref[1]);
                loom_tensor_free(got[1]);
            }
            loom_attrs_free(a);
            loom_attrs_free(ab);
            cases++;
        }
    return cases;
}

static void cuda_kernels_match_cpu(void **state)
{
    (void)state;
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            target tg = { di.device };
            print_message("CUDA device: %s\n", di.description);
            int n = check_op(&tg, "vision.roi_align", "vision.roi_align_backward", 1, 1);
            n += check_op(&tg, "vision.roi_pool", "vision.roi_pool_backward", 2, 0);
            n += check_op(&tg, "vision.ps_roi_align", "vision.ps_roi_align_backward", 2, 1);
            n += check_op(&tg, "vision.ps_roi_pool", "vision.ps_roi_pool_backward", 2, 0);
            print_message("%d forward + backward cases agree with cpu\n", n);
            return;
        }
    }
    print_message("no CUDA device: cuda kernels not run\n");
    skip();
}

/* The cuda kernels refuse what the cpu kernels refuse (a bad batch index). */
static void cuda_refuses_bad_batch_index(void **state)
{
    (void)state;
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            const int64_t shape[4] = { 2, 18, 13, 17 };
            loom_tensor *x = random_map(LOOM_DTYPE_F32, shape), *b = random_rois(LOOM_DTYPE_F32, 4), *dx, *db, *out;
            ((float *)loom_data(b))[3 * 5] = 2.0f;
            assert_int_equal(loom_tensor_copy_to(&dx, x, &di.device), LOOM_OK);
            assert_int_equal(loom_tensor_copy_to(&db, b, &di.device), LOOM_OK);
            roi_params p = { .ph = 2, .pw = 2, .spatial_scale = 1.0, .sampling_ratio = -1 };
            loom_attrs *a = roi_forward_attrs("vision.roi_align", &p, 0);
            roi_assert_fails(roi_run("vision.roi_align", (const loom_tensor *[]){ dx, db }, 2, a, &out, 1, "cuda"),
                             LOOM_EINVAL, "roi 3 of 'boxes' has batch index 2");
            loom_attrs_free(a);
            loom_tensor *all[] = { x, b, dx, db };
            for (size_t j = 0; j < 4; j++)
                loom_tensor_free(all[j]);
            return;
        }
    }
    print_message("no CUDA device: cuda kernels not run\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_kernels_match_cpu),
        cmocka_unit_test(cuda_refuses_bad_batch_index),
    };
    return cmocka_run_group_tests_name("vision_roi_conformance", tests, tu_setup, tu_teardown);
}
