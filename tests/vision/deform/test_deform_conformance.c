/*
** test_deform_conformance.c - every cuda kernel of the deform module against
** the cpu kernel, on generated inputs. Runs only when loom_device_count()
** reports a CUDA device; skips otherwise.
**
** Tolerances:
**  - deform_conv2d / backward: the same sampling arithmetic (nvcc may fuse a
**    multiply-add), GEMMs in another summation order and grad_input summed
**    with atomics: |x - ref| <= tol * (1 + |ref|) with tol 1e-4 (f32),
**    1e-10 (f64), 2e-2 (f16, whose inputs round alike and whose outputs
**    are rounded once from f32 on both backends).
**  - drop_block / stochastic_depth: the same counter-based draws and the
**    same per-step rounding: identical bits, with and without `noise`.
*/
#include "deform_test.h"

typedef struct target {
    const char *backend;
    loom_dl_device device;
} target;

/* Run op on the cpu and on the target; compare every output. */
static void compare(const char *op, const target *tg, loom_tensor *const *in, int n_in, const loom_attrs *a,
                    int n_out, double tol, const char *what)
{
    loom_tensor *ref[5], *got[5], *dev_in[6] = { NULL };
    if (dt_run(op, (const loom_tensor *const *)in, n_in, a, "cpu", ref, n_out) != LOOM_OK)
        fail_msg("%s on cpu: %s", what, loom_last_error());
    for (int i = 0; i < n_in; i++)
        if (in[i] != NULL)
            assert_int_equal(loom_tensor_copy_to(&dev_in[i], in[i], &tg->device), LOOM_OK);
    if (dt_run(op, (const loom_tensor *const *)dev_in, n_in, a, tg->backend, got, n_out) != LOOM_OK)
        fail_msg("%s on %s: %s", what, tg->backend, loom_last_error());
    for (int k = 0; k < n_out; k++) {
        loom_tensor *host;
        char w[200];
        assert_int_equal(loom_tensor_copy_to(&host, got[k], NULL), LOOM_OK);
        snprintf(w, sizeof w, "%s %s output %d", what, tg->backend, k);
        if (tol == 0)
            tu_assert_identical(host, ref[k], w);
        else
            dt_assert_close(host, ref[k], tol, tol, w);
        loom_tensor_free(host);
        loom_tensor_free(got[k]);
        loom_tensor_free(ref[k]);
    }
    for (int i = 0; i < n_in; i++)
        loom_tensor_free(dev_in[i]);
}

static int check_deform(const target *tg)
{
    /* N, Cin, H, W, Cout, groups, offset_groups, k, stride, pad, dil, mask, bias */
    static const int64_t cfgs[][13] = {
        { 2, 4, 9, 9, 8, 1, 1, 3, 1, 1, 1, 1, 1 },
        { 1, 6, 17, 13, 9, 3, 2, 3, 2, 1, 1, 1, 0 },
        { 3, 8, 16, 16, 16, 2, 4, 3, 1, 2, 2, 0, 1 },
        { 1, 16, 33, 31, 7, 1, 1, 1, 1, 0, 1, 1, 1 },
    };
    static const struct { loom_dtype dt; double tol; } types[] = {
        { LOOM_DTYPE_F32, 1e-4 }, { LOOM_DTYPE_F64, 1e-10 }, { LOOM_DTYPE_F16, 2e-2 },
    };
    int cases = 0;
    for (size_t t = 0; t < 3; t++)
        for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
            const int64_t *f = cfgs[c];
            int64_t n = f[0], cin = f[1], h = f[2], w = f[3], cout = f[4], grp = f[5], og = f[6], k = f[7];
            int64_t s = f[8], p = f[9], d = f[10];
            int64_t ho = (h + 2 * p - (d * (k - 1) + 1)) / s + 1, wo = (w + 2 * p - (d * (k - 1) + 1)) / s + 1;
            loom_dtype dt = types[t].dt;
            uint32_t seed = (uint32_t)(c * 10 + t);
            loom_tensor *in = dt_random(dt, 4, (const int64_t[]){ n, cin, h, w }, seed, -1, 1);
            loom_tensor *off = dt_random(dt, 4, (const int64_t[]){ n, 2 * og * k * k, ho, wo }, seed + 1, -3, 3);
            loom_tensor *wt = dt_random(dt, 4, (const int64_t[]){ cout, cin / grp, k, k }, seed + 2, -0.5, 0.5);
            loom_tensor *bias = f[12] ? dt_random(dt, 1, &cout, seed + 3, -1, 1) : NULL;
            loom_tensor *mask = f[11] ? dt_random(dt, 4, (const int64_t[]){ n, og * k * k, ho, wo }, seed + 4, 0, 1)
                                      : NULL;
            loom_tensor *grad = dt_random(dt, 4, (const int64_t[]){ n, cout, ho, wo }, seed + 5, -1, 1);
            loom_attrs *a = dt_conv_attrs((const int64_t[]){ s, s }, (const int64_t[]){ p, p },
                                          (const int64_t[]){ d, d });
            char what[96];
            snprintf(what, sizeof what, "deform_conv2d %s case %zu", loom_dtype_name(dt), c);
            compare("vision.deform_conv2d", tg, (loom_tensor *[]){ in, off, wt, bias, mask }, 5, a, 1,
                    types[t].tol, what);
            snprintf(what, sizeof what, "deform_conv2d_backward %s case %zu", loom_dtype_name(dt), c);
            compare("vision.deform_conv2d_backward", tg, (loom_tensor *[]){ grad, in, wt, off, mask, bias }, 6, a,
                    5, types[t].tol * 10, what);
            loom_tensor *all[] = { in, off, wt, bias, mask, grad };
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                loom_tensor_free(all[i]);
            loom_attrs_free(a);
            cases += 2;
        }
    return cases;
}

/* A Bernoulli-like draw: 1 where a 32-bit LCG falls in its lowest fifth,
** else 0 (binary, so both backends sum the mask exactly). */
static loom_tensor *binary_noise(loom_dtype dt, int32_t ndim, const int64_t *shape, uint32_t seed)
{
    loom_tensor *u = dt_random(LOOM_DTYPE_F64, ndim, shape, seed, 0, 1), *out;
    double *p = loom_data(u);
    for (int64_t i = 0; i < loom_numel(u); i++)
        p[i] = p[i] < 0.2 ? 1.0 : 0.0;
    if (dt == LOOM_DTYPE_F64)
        return u;
    out = tu_cast(u, dt);
    loom_tensor_free(u);
    return out;
}

static int check_dropout(const target *tg)
{
    static const loom_dtype dts[] = { LOOM_DTYPE_F32, LOOM_DTYPE_F64, LOOM_DTYPE_F16 };
    int cases = 0;
    for (size_t t = 0; t < 3; t++) {
        loom_tensor *x4 = dt_random(dts[t], 4, (const int64_t[]){ 3, 5, 17, 19 }, 1, -2, 2);
        loom_tensor *x5 = dt_random(dts[t], 5, (const int64_t[]){ 2, 3, 7, 9, 11 }, 2, -2, 2);
        loom_tensor *n4 = binary_noise(dts[t], 4, (const int64_t[]){ 3, 5, 13, 15 }, 3);
        for (int64_t seed = 0; seed < 3; seed++) {
            loom_attrs *a;
            assert_int_equal(loom_attrs_new(&a), LOOM_OK);
            assert_int_equal(loom_attrs_set_float(a, "p", 0.35), LOOM_OK);
            assert_int_equal(loom_attrs_set_int(a, "block_size", 5), LOOM_OK);
            assert_int_equal(loom_attrs_set_int(a, "seed", seed), LOOM_OK);
            compare("vision.drop_block2d", tg, (loom_tensor *[]){ x4, NULL }, 2, a, 1, 0, "drop_block2d seed");
            compare("vision.drop_block3d", tg, (loom_tensor *[]){ x5, NULL }, 2, a, 1, 0, "drop_block3d seed");
            compare("vision.drop_block2d", tg, (loom_tensor *[]){ x4, n4 }, 2, a, 1, 0, "drop_block2d noise");
            loom_attrs_free(a);
            assert_int_equal(loom_attrs_new(&a), LOOM_OK);
            assert_int_equal(loom_attrs_set_float(a, "p", 0.35), LOOM_OK);
            assert_int_equal(loom_attrs_set_string(a, "mode", seed == 2 ? "batch" : "row"), LOOM_OK);
            assert_int_equal(loom_attrs_set_int(a, "seed", seed), LOOM_OK);
            compare("vision.stochastic_depth", tg, (loom_tensor *[]){ x4, NULL }, 2, a, 1, 0, "stochastic_depth");
            loom_attrs_free(a);
            cases += 4;
        }
        loom_tensor_free(x4);
        loom_tensor_free(x5);
        loom_tensor_free(n4);
    }
    return cases;
}

static void cuda_deform_kernels_match_cpu(void **state)
{
    (void)state;
    int devices = 0;
    for (int64_t d = 0; d < loom_device_count(); d++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(d, &di) != LOOM_OK || di.device.device_type != LOOM_DEVICE_CUDA)
            continue;
        print_message("CUDA device: %s\n", di.description);
        target tg = { "cuda", di.device };
        int cases = check_deform(&tg) + check_dropout(&tg);
        print_message("%d deform cases agree with the cpu\n", cases);
        devices++;
    }
    if (devices == 0) {
        print_message("no CUDA device: the cuda kernels of the deform module were not run\n");
        skip();
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cuda_deform_kernels_match_cpu),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
