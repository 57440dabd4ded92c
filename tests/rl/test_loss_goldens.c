/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_loss_goldens.c - rl.clip_ppo_loss, rl.kl_ppo_loss and rl.a2c_loss
** against torchrl 0.14.1's ClipPPOLoss, KLPENPPOLoss and A2CLoss modules
** (tools/gen_rl_value_goldens.py, tests/data/rl/loss): every loss term,
** the logging values (entropy, kl_approx, clip_fraction, ESS, the adapted
** beta) and the gradients torch autograd gives of loss_objective +
** loss_critic + loss_entropy with respect to log_prob, state_value, entropy
** and kl; f32 and f64, each critic distance (smooth_l1, l2, l1), with and
** without normalize_advantage, samples inside and outside the clip bounds,
** and beta raised, lowered and kept.
**
** Tolerance |got - want| <= 1e-6 * (1 + |want|): the element-wise terms
** follow torch's operations; the means are double sums rounded once,
** where torch's f32 means may differ in the last place (1e-7 relative).
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

static const char *const clip_in[] = { "log_prob", "sample_log_prob", "advantage", "state_value", "value_target",
                                       "entropy", NULL };
static const char *const clip_out[] = { "loss_objective", "loss_critic", "loss_entropy", "entropy", "clip_fraction",
                                        "kl_approx", "ESS", "grad_log_prob", "grad_state_value", "grad_entropy",
                                        NULL };
static const char *const kl_in[] = { "log_prob", "sample_log_prob", "advantage", "state_value", "value_target",
                                     "entropy", "kl", NULL };
static const char *const kl_out[] = { "loss_objective", "loss_critic", "loss_entropy", "entropy", "kl_approx",
                                      "beta", "grad_log_prob", "grad_state_value", "grad_entropy", "grad_kl", NULL };
static const char *const a2c_in[] = { "log_prob", "advantage", "state_value", "value_target", "entropy", NULL };
static const char *const a2c_out[] = { "loss_objective", "loss_critic", "loss_entropy", "entropy", "grad_log_prob",
                                       "grad_state_value", "grad_entropy", NULL };

/* the cases of tools/gen_rl_value_goldens.py (LOSS_CASES), their attributes */
static const struct {
    const char *name, *op, *attrs;
    const char *const *in, *const *out;
} cases[] = {
    { "clip_f32", "rl.clip_ppo_loss", "", clip_in, clip_out },
    { "clip_f64", "rl.clip_ppo_loss", "", clip_in, clip_out },
    { "clip_l2_norm", "rl.clip_ppo_loss",
      "clip_epsilon=0.1;entropy_coeff=0.05;critic_coeff=0.5;loss_critic_type=l2;normalize_advantage=true", clip_in,
      clip_out },
    { "clip_l1_f32", "rl.clip_ppo_loss", "loss_critic_type=l1;normalize_advantage=true", clip_in, clip_out },
    { "kl_f32", "rl.kl_ppo_loss", "", kl_in, kl_out },
    { "kl_f64_low", "rl.kl_ppo_loss", "beta=0.5;loss_critic_type=l2", kl_in, kl_out },
    { "kl_norm_mid", "rl.kl_ppo_loss", "beta=2.0;dtarg=0.02;normalize_advantage=true", kl_in, kl_out },
    { "a2c_f32", "rl.a2c_loss", "", a2c_in, a2c_out },
    { "a2c_f64_l2", "rl.a2c_loss", "loss_critic_type=l2;entropy_coeff=0.02;critic_coeff=0.7", a2c_in, a2c_out },
    { "a2c_l1", "rl.a2c_loss", "loss_critic_type=l1", a2c_in, a2c_out },
};

static loom_tensor *golden(const char *c, const char *what)
{
    char name[128];
    snprintf(name, sizeof name, "rl/loss/%s_%s", c, what);
    return tu_npy(name);
}

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

static void losses_match_torchrl(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        loom_tensor *in[8] = { 0 }, *got[12] = { 0 };
        int n_in = 0, n_out = 0;
        while (cases[c].in[n_in])
            in[n_in] = golden(cases[c].name, cases[c].in[n_in]), n_in++;
        while (cases[c].out[n_out])
            n_out++;
        loom_attrs *attrs = NULL;
        assert_int_equal(loom_attrs_new(&attrs), LOOM_OK);
        set_attrs(attrs, cases[c].op, cases[c].attrs);
        loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
        opt.backend = "cpu";
        if (loom_run(cases[c].op, (const loom_tensor *const *)in, n_in, attrs, got, n_out, &opt) != LOOM_OK)
            fail_msg("%s: %s", cases[c].name, loom_last_error());
        for (int k = 0; k < n_out; k++) {
            char what[128];
            snprintf(what, sizeof what, "%s: %s", cases[c].name, cases[c].out[k]);
            char file[64];
            snprintf(file, sizeof file, "out_%s", cases[c].out[k]);
            loom_tensor *want = golden(cases[c].name, file);
            tu_assert_close(got[k], want, 1e-6, 1e-6, what);
            loom_tensor_free(want);
            loom_tensor_free(got[k]);
        }
        for (int k = 0; k < n_in; k++)
            loom_tensor_free(in[k]);
        loom_attrs_free(attrs);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(losses_match_torchrl),
    };
    return cmocka_run_group_tests_name("rl_loss_goldens", tests, tu_setup, tu_teardown);
}
