/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_value_goldens.c - the rl value estimators against torchrl 0.14.1
** (tools/gen_rl_value_goldens.py, tests/data/rl/value): GAE (with and
** without terminated), TD(0), TD(lambda) and V-trace (torchrl's clip
** thresholds and others), f32 and f64, over batches of concatenated
** trajectories with mid-trajectory terminations and truncations, on three
** layouts: [11, 37, 1] (the AVX2 blocks plus rows and steps left over),
** [3, 20, 2] (features side by side) and [3, 2, 17] with time_dim -1.
** meson runs it twice: on the AVX2 body and, with LOOM_CPU_MAX_ISA=sse4,
** on the portable one.
**
** Tolerance: the kernels keep torch's operations in torch's order with
** one rounding each (value.h), so GAE, TD(0) and TD(lambda) must give
** torch's bits; V-trace goes through exp, where torch's vectorised expf
** and the C library's may differ in the last place, and those differences
** travel through the trace: |got - want| <= 1e-6 * (1 + |want|).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

/* those of tools/gen_rl_value_goldens.py */
#define GAMMA 0.99
#define LMBDA 0.95
#define RHO_THRESH 0.9
#define C_THRESH 1.1

static const char *const cases[] = { "a", "b", "c" };
static const int64_t time_dims[] = { -2, -2, -1 };
static const char *const dtypes[] = { "f32", "f64" };

static loom_tensor *golden(const char *c, const char *dt, const char *what)
{
    char name[128];
    snprintf(name, sizeof name, "rl/value/%s_%s_%s", c, dt, what);
    return tu_npy(name);
}

/* "name=value;name=value" into attrs, typed by op's schema. */
static void set_attrs(loom_attrs *attrs, const char *op, const char *text)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        assert_non_null(eq);
        *eq = 0;
        if (loom_attrs_parse(attrs, op, kv, eq + 1) != LOOM_OK)
            fail_msg("%s: %s", op, loom_last_error());
    }
}

/* Runs op on inputs named by `names` (NULL entry: an absent input) and
** compares its n_out outputs with the goldens `outs`. */
static void check_op(const char *op, const char *c, const char *dt, const char *const *names, int n_in,
                     const char *attrs_text, const char *const *outs, int n_out, int exact)
{
    loom_tensor *in[8] = { 0 }, *got[2] = { 0 };
    loom_attrs *attrs = NULL;
    assert_int_equal(loom_attrs_new(&attrs), LOOM_OK);
    set_attrs(attrs, op, attrs_text);
    for (int k = 0; k < n_in; k++)
        in[k] = names[k] ? golden(c, dt, names[k]) : NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "cpu";
    loom_status st = loom_run(op, (const loom_tensor *const *)in, n_in, attrs, got, n_out, &opt);
    if (st != LOOM_OK)
        fail_msg("%s case %s %s: %s", op, c, dt, loom_last_error());
    for (int k = 0; k < n_out; k++) {
        char what[128];
        snprintf(what, sizeof what, "%s case %s %s: %s", op, c, dt, outs[k]);
        loom_tensor *want = golden(c, dt, outs[k]);
        if (exact)
            tu_assert_identical(got[k], want, what);
        else
            tu_assert_close(got[k], want, 1e-6, 1e-6, what);
        loom_tensor_free(want);
        loom_tensor_free(got[k]);
    }
    for (int k = 0; k < n_in; k++)
        loom_tensor_free(in[k]);
    loom_attrs_free(attrs);
}

#define FOR_EACH_CASE                                                                   \
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)                      \
        for (size_t di = 0; di < sizeof dtypes / sizeof dtypes[0]; di++)

static void gae_matches_torchrl(void **state)
{
    (void)state;
    FOR_EACH_CASE {
        char attrs[128];
        snprintf(attrs, sizeof attrs, "gamma=%.17g;lmbda=%.17g;time_dim=%lld", GAMMA, LMBDA, (long long)time_dims[ci]);
        const char *in[] = { "state_value", "next_state_value", "reward", "done", "terminated" };
        const char *out[] = { "gae_advantage", "gae_value_target" };
        check_op("rl.generalized_advantage_estimate", cases[ci], dtypes[di], in, 5, attrs, out, 2, 1);
        const char *in_noterm[] = { "state_value", "next_state_value", "reward", "done", NULL };
        const char *out_noterm[] = { "gae_noterm_advantage" };
        check_op("rl.generalized_advantage_estimate", cases[ci], dtypes[di], in_noterm, 5, attrs, out_noterm, 1, 1);
    }
}

static void td0_matches_torchrl(void **state)
{
    (void)state;
    FOR_EACH_CASE {
        char attrs[64];
        snprintf(attrs, sizeof attrs, "gamma=%.17g", GAMMA);
        const char *in[] = { "next_state_value", "reward", "terminated" };
        const char *out[] = { "td0_returns" };
        check_op("rl.td0_return_estimate", cases[ci], dtypes[di], in, 3, attrs, out, 1, 1);
    }
}

static void td_lambda_matches_torchrl(void **state)
{
    (void)state;
    FOR_EACH_CASE {
        char attrs[128];
        snprintf(attrs, sizeof attrs, "gamma=%.17g;lmbda=%.17g;time_dim=%lld", GAMMA, LMBDA, (long long)time_dims[ci]);
        const char *in[] = { "next_state_value", "reward", "done", "terminated" };
        const char *out[] = { "tdl_returns" };
        check_op("rl.td_lambda_return_estimate", cases[ci], dtypes[di], in, 4, attrs, out, 1, 1);
    }
}

static void vtrace_matches_torchrl(void **state)
{
    (void)state;
    FOR_EACH_CASE {
        char attrs[160];
        const char *in[] = { "log_pi", "log_mu", "state_value", "next_state_value", "reward", "done", "terminated" };
        snprintf(attrs, sizeof attrs, "gamma=%.17g;time_dim=%lld", GAMMA, (long long)time_dims[ci]);
        const char *out[] = { "vtrace_advantage", "vtrace_value_target" };
        check_op("rl.vtrace_advantage_estimate", cases[ci], dtypes[di], in, 7, attrs, out, 2, 0);
        snprintf(attrs, sizeof attrs, "gamma=%.17g;rho_thresh=%.17g;c_thresh=%.17g;time_dim=%lld", GAMMA, RHO_THRESH,
                 C_THRESH, (long long)time_dims[ci]);
        const char *out_clip[] = { "vtrace_clip_advantage", "vtrace_clip_value_target" };
        check_op("rl.vtrace_advantage_estimate", cases[ci], dtypes[di], in, 7, attrs, out_clip, 2, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gae_matches_torchrl),
        cmocka_unit_test(td0_matches_torchrl),
        cmocka_unit_test(td_lambda_matches_torchrl),
        cmocka_unit_test(vtrace_matches_torchrl),
    };
    return cmocka_run_group_tests_name("rl_value_goldens", tests, tu_setup, tu_teardown);
}
