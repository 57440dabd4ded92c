/*
** test_conformance.c - every non-cpu kernel of every core op against the
** cpu kernel of the same op, on generated inputs with sizes around the
** block edges (1, 7, 16, 17, 255, 257), as ggml's test-backend-ops does.
**
** Tolerances belong to the op and dtype:
**  - core.matmul: |x - ref| <= 2*K*u*(|A||B|)_ij (two summation orders,
**    each within K*u of the exact sum; u = 2^-24 for f32).
**  - core.add: one rounding per element in every backend, so f32/f64 must
**    agree to 1 ulp of the result (rtol 2u) and f16/bf16 to 1 ulp of their
**    own precision.
** CUDA kernels run only when loom_device_count() reports a CUDA device.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static const int64_t sizes[] = { 1, 7, 16, 17, 255, 257 };
#define N_SIZES (sizeof sizes / sizeof sizes[0])

/* uniform in [-1, 1) from a 32-bit LCG, made in f64 and cast on the cpu */
static loom_tensor *random_tensor(loom_dtype dt, int32_t ndim, const int64_t *shape, uint32_t seed)
{
    loom_tensor *t;
    assert_int_equal(loom_tensor_new(&t, LOOM_DTYPE_F64, ndim, shape, NULL), LOOM_OK);
    double *p = loom_data(t);
    for (int64_t i = 0; i < loom_numel(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (double)(seed >> 8) / 8388608.0 - 1.0;
    }
    loom_tensor *out = tu_cast(t, dt);
    loom_tensor_free(t);
    return out;
}

static loom_tensor *to_f64(const loom_tensor *t)
{
    return tu_cast(t, LOOM_DTYPE_F64);
}

typedef struct target {
    const char *backend;
    loom_dl_device device;
} target;

/* Run op on the target (copying inputs to its device and the output back)
** and on the cpu; return both outputs as f64 on the host. */
static void run_both(const char *op, const target *tg, loom_tensor *const *in, int32_t n_in,
                     loom_tensor **ref, loom_tensor **got)
{
    loom_tensor *dev_in[4] = { NULL }, *ref_raw, *got_raw, *host;
    int on_device = tg->device.device_type != LOOM_DEVICE_CPU;
    if (tu_call(op, (const loom_tensor *const *)in, n_in, NULL, "cpu", &ref_raw) != LOOM_OK)
        fail_msg("%s on cpu: %s", op, loom_last_error());
    for (int32_t i = 0; i < n_in; i++) {
        if (on_device)
            assert_int_equal(loom_tensor_copy_to(&dev_in[i], in[i], &tg->device), LOOM_OK);
        else
            dev_in[i] = in[i];
    }
    if (tu_call(op, (const loom_tensor *const *)dev_in, n_in, NULL, tg->backend, &got_raw) != LOOM_OK)
        fail_msg("%s on %s: %s", op, tg->backend, loom_last_error());
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
    assert_string_equal(di.backend, tg->backend);
    if (on_device) {
        assert_int_equal(loom_tensor_copy_to(&host, got_raw, NULL), LOOM_OK);
        loom_tensor_free(got_raw);
        got_raw = host;
        for (int32_t i = 0; i < n_in; i++)
            loom_tensor_free(dev_in[i]);
    }
    *ref = to_f64(ref_raw);
    *got = to_f64(got_raw);
    loom_tensor_free(ref_raw);
    loom_tensor_free(got_raw);
}

static int check_matmul(const target *tg, uint64_t dtypes)
{
    int cases = 0;
    if (!(dtypes & LOOM_DTYPE_BIT(LOOM_DTYPE_F32)) && dtypes != 0)
        return 0;
    for (size_t s = 0; s < N_SIZES; s++) {
        const int64_t x = sizes[s];
        const int64_t mkn[4][3] = { { x, x, x }, { x, 7, 257 }, { 255, x, 16 }, { 17, 257, x } };
        for (int c = 0; c < 4; c++) {
            int64_t m = mkn[c][0], k = mkn[c][1], n = mkn[c][2];
            int64_t sa[2] = { m, k }, sb[2] = { k, n };
            loom_tensor *in[2] = { random_tensor(LOOM_DTYPE_F32, 2, sa, (uint32_t)(s * 8 + (size_t)c)),
                                   random_tensor(LOOM_DTYPE_F32, 2, sb, (uint32_t)(s * 8 + (size_t)c + 100)) };
            loom_tensor *ref, *got;
            run_both("core.matmul", tg, in, 2, &ref, &got);
            loom_tensor *a = to_f64(in[0]), *b = to_f64(in[1]);
            const double *pa = loom_data(a), *pb = loom_data(b), *pr = loom_data(ref), *pg = loom_data(got);
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double mag = 0;
                    for (int64_t p = 0; p < k; p++)
                        mag += fabs(pa[i * k + p] * pb[p * n + j]);
                    double bound = 2.0 * (double)k * 0x1p-24 * mag;
                    if (!(fabs(pg[i * n + j] - pr[i * n + j]) <= bound))
                        fail_msg("core.matmul %s %lldx%lldx%lld: [%lld,%lld] = %.9g, cpu %.9g (bound %.3g)",
                                 tg->backend, (long long)m, (long long)k, (long long)n, (long long)i,
                                 (long long)j, pg[i * n + j], pr[i * n + j], bound);
                }
            loom_tensor *all[] = { in[0], in[1], ref, got, a, b };
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                loom_tensor_free(all[i]);
            cases++;
        }
    }
    return cases;
}

static int check_add(const target *tg, uint64_t dtypes)
{
    static const struct { loom_dtype dt; double rtol; } types[] = {
        { LOOM_DTYPE_F32, 0x1p-23 }, { LOOM_DTYPE_F64, 0x1p-52 },
        { LOOM_DTYPE_F16, 0x1p-10 }, { LOOM_DTYPE_BF16, 0x1p-7 },
    };
    int cases = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        if (dtypes != 0 && !(dtypes & LOOM_DTYPE_BIT(types[t].dt)))
            continue;
        for (size_t s = 0; s < N_SIZES; s++) {
            int64_t sa[2] = { sizes[s], 17 }, sb[1] = { 17 };   /* broadcast other along rows */
            loom_tensor *in[2] = { random_tensor(types[t].dt, 2, sa, (uint32_t)s),
                                   random_tensor(types[t].dt, 1, sb, (uint32_t)s + 50) };
            loom_tensor *ref, *got;
            run_both("core.add", tg, in, 2, &ref, &got);
            char what[96];
            snprintf(what, sizeof what, "core.add %s %s [%lld,17]", tg->backend,
                     loom_dtype_name(types[t].dt), (long long)sizes[s]);
            tu_assert_close(got, ref, types[t].rtol, 0, what);
            loom_tensor *all[] = { in[0], in[1], ref, got };
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                loom_tensor_free(all[i]);
            cases++;
        }
    }
    return cases;
}

/* Every (op, non-cpu kernel) on device_type; returns kernels checked. */
static int check_all(int32_t device_type, loom_dl_device device)
{
    int kernels = 0;
    for (int64_t o = 0; o < loom_op_count(); o++) {
        const loom_op_schema *s = loom_op_schema_at(o);
        const loom_op *op = loom_op_find(s->name);
        for (int64_t i = 0; i < loom_op_kernel_count(op); i++) {
            loom_kernel_info ki = LOOM_KERNEL_INFO_INIT;
            assert_int_equal(loom_op_kernel_at(op, i, &ki), LOOM_OK);
            if (strcmp(ki.backend, "cpu") == 0 || ki.device_type != device_type)
                continue;
            target tg = { ki.backend, device };
            int cases = 0;
            if (strcmp(s->name, "core.matmul") == 0)
                cases = check_matmul(&tg, ki.dtypes);
            else if (strcmp(s->name, "core.add") == 0)
                cases = check_add(&tg, ki.dtypes);
            else
                fail_msg("%s has a %s kernel but no conformance generator", s->name, ki.backend);
            print_message("%s [%s, %s]: %d cases agree with cpu\n", s->name, ki.backend, ki.impl, cases);
            kernels++;
        }
    }
    return kernels;
}

static void cpu_device_kernels_match_cpu(void **state)
{
    (void)state;
    loom_dl_device cpu = { LOOM_DEVICE_CPU, 0 };
    if (check_all(LOOM_DEVICE_CPU, cpu) == 0) {
        print_message("no non-cpu backend for the cpu device (oneDNN not built)\n");
        skip();
    }
}

static void cuda_kernels_match_cpu(void **state)
{
    (void)state;
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            print_message("CUDA device: %s\n", di.description);
            assert_true(check_all(LOOM_DEVICE_CUDA, di.device) > 0);
            return;
        }
    }
    print_message("no CUDA device: cuda kernels not run\n");
    skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_device_kernels_match_cpu),
        cmocka_unit_test(cuda_kernels_match_cpu),
    };
    return cmocka_run_group_tests_name("coreops_conformance", tests, tu_setup, tu_teardown);
}
