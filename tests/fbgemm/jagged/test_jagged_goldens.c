/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_jagged_goldens.c - every fbgemm jagged op against fbgemm_gpu's own
** results (tests/data/fbgemm/jagged, tools/gen_fbgemm_jagged_goldens.py).
** The case table (cases.inc) is written by the generator: op, inputs,
** attributes, outputs and the tolerance (0/0: bit-identical; the reasons
** for the others are in the generator).
**
** Built twice: JG_BACKEND "cpu" runs the cases on the cpu kernels; "cuda"
** copies the inputs to the first CUDA device, runs the cuda kernels and
** compares their results with the same goldens (tests/conformance compares
** them with the cpu kernels). Without a CUDA device that build skips (exit 77).
*/
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

#ifndef JG_BACKEND
#define JG_BACKEND "cpu"
#endif

typedef struct jg_case {
    const char *name, *op, *inputs, *attrs;
    int n_out;
    double rtol, atol;
} jg_case;

static const jg_case cases[] = {
#define CASE(name, op, inputs, attrs, n_out, rtol, atol) { name, op, inputs, attrs, n_out, rtol, atol },
#include "cases.inc"
#undef CASE
};
#define N_CASES (sizeof cases / sizeof cases[0])

static loom_dl_device device = { LOOM_DEVICE_CPU, 0 };

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double value_at(const loom_tensor *t, int64_t i)
{
    const void *p = loom_data(t);
    switch (loom_tensor_dtype_of(t)) {
    case LOOM_DTYPE_F32: return ((const float *)p)[i];
    case LOOM_DTYPE_F64: return ((const double *)p)[i];
    case LOOM_DTYPE_F16: return half_to_double(((const uint16_t *)p)[i]);
    case LOOM_DTYPE_BF16: {
        uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    default: fail_msg("value_at: not a float tensor"); return 0;
    }
}

static void assert_close(const loom_tensor *got, const loom_tensor *want, double rtol, double atol, const char *what)
{
    assert_int_equal(loom_tensor_dtype_of(got), loom_tensor_dtype_of(want));
    assert_int_equal(got->ndim, want->ndim);
    for (int32_t d = 0; d < got->ndim; d++)
        assert_int_equal(got->shape[d], want->shape[d]);
    for (int64_t i = 0; i < loom_numel(want); i++) {
        double g = value_at(got, i), w = value_at(want, i);
        if (!(fabs(g - w) <= atol + rtol * fabs(w)))
            fail_msg("%s: element %lld is %.9g, expected %.9g", what, (long long)i, g, w);
    }
}

static void run_case(void **state)
{
    const jg_case *c = *state;
    char path[256], list[256];
    loom_tensor *in[8] = { NULL }, *dev_in[8] = { NULL }, *out[4] = { NULL };
    int n_in = 0;
    snprintf(list, sizeof list, "%s", c->inputs);
    for (char *save = NULL, *arg = strtok_r(list, ",", &save); arg != NULL; arg = strtok_r(NULL, ",", &save)) {
        snprintf(path, sizeof path, "fbgemm/jagged/%s.%s", c->name, arg);
        in[n_in] = tu_npy(path);
        if (device.device_type == LOOM_DEVICE_CPU)
            dev_in[n_in] = in[n_in];
        else
            assert_int_equal(loom_tensor_copy_to(&dev_in[n_in], in[n_in], &device), LOOM_OK);
        n_in++;
    }
    loom_attrs *attrs;
    assert_int_equal(loom_attrs_new(&attrs), LOOM_OK);
    snprintf(list, sizeof list, "%s", c->attrs);
    for (char *save = NULL, *kv = strtok_r(list, ";", &save); kv != NULL; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = '\0';
        if (loom_attrs_parse(attrs, c->op, kv, eq + 1) != LOOM_OK)
            fail_msg("%s: attribute %s: %s", c->name, kv, loom_last_error());
    }
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = JG_BACKEND;
    if (loom_run(c->op, (const loom_tensor *const *)dev_in, n_in, attrs, out, c->n_out, &opt) != LOOM_OK)
        fail_msg("%s on %s: %s", c->name, JG_BACKEND, loom_last_error());
    loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
    assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
    assert_string_equal(di.backend, JG_BACKEND);
    for (int o = 0; o < c->n_out; o++) {
        loom_tensor *host = out[o];
        if (device.device_type != LOOM_DEVICE_CPU)
            assert_int_equal(loom_tensor_copy_to(&host, out[o], NULL), LOOM_OK);
        snprintf(path, sizeof path, "fbgemm/jagged/%s.out%d", c->name, o);
        loom_tensor *want = tu_npy(path);
        char what[128];
        snprintf(what, sizeof what, "%s output %d", c->name, o);
        if (c->rtol == 0 && c->atol == 0)
            tu_assert_identical(host, want, what);
        else
            assert_close(host, want, c->rtol, c->atol, what);
        loom_tensor_free(want);
        if (host != out[o])
            loom_tensor_free(host);
        loom_tensor_free(out[o]);
    }
    loom_attrs_free(attrs);
    for (int i = 0; i < n_in; i++) {
        if (dev_in[i] != in[i])
            loom_tensor_free(dev_in[i]);
        loom_tensor_free(in[i]);
    }
}

/* The cuda build: pick the first CUDA device, or skip the whole run. */
static int find_device(void)
{
    if (strcmp(JG_BACKEND, "cpu") == 0)
        return 1;
    for (int64_t i = 0; i < loom_device_count(); i++) {
        loom_device_info di = LOOM_DEVICE_INFO_INIT;
        if (loom_device_at(i, &di) == LOOM_OK && di.device.device_type == LOOM_DEVICE_CUDA) {
            device = di.device;
            printf("CUDA device: %s\n", di.description);
            return 1;
        }
    }
    return 0;
}

int main(void)
{
    static struct CMUnitTest tests[N_CASES];
    if (strcmp(JG_BACKEND, "cpu") != 0) {
        if (tu_setup(NULL) != 0)
            return 1;
        int found = find_device();
        tu_teardown(NULL);
        if (!found) {
            printf("no CUDA device: the cuda kernels of the jagged ops are not run\n");
            return 77;
        }
    }
    for (size_t i = 0; i < N_CASES; i++)
        tests[i] = (struct CMUnitTest){ .name = cases[i].name, .test_func = run_case,
                                        .initial_state = (void *)&cases[i] };
    return _cmocka_run_group_tests("fbgemm_jagged_goldens_" JG_BACKEND, tests, N_CASES, tu_setup, tu_teardown);
}
