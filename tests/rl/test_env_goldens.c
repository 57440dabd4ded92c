/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_env_goldens.c - the rl pack's environments against gymnasium 1.4
** (tools/gen_rl_env_goldens.py, tests/data/rl/envs): the rl.env object
** reset with gymnasium's seeds and stepped with the same actions gives
** gymnasium's trajectories: reset states (numpy's PCG64 stream, continued
** by the unseeded resets after each episode), observations, rewards,
** terminations (CartPole's pole and cart limits) and truncations (the
** 500, 200 and 999 step limits), for CartPole-v1, Pendulum-v1,
** MountainCar-v0, MountainCarContinuous-v0 and Acrobot-v1. Then the refusals: an unknown id, a step before reset,
** an action outside the space or of the wrong dtype.
**
** Tolerance: the flags exactly; observations, float32 casts of the
** float64 state, within 1e-6 relative (libm's and numpy's sin and cos may
** differ in the last place of the state, which can move one float32
** rounding); rewards within 1e-9.
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

static loom_object *make_env(const char *id, loom_status *st)
{
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "id", id), LOOM_OK);
    *st = loom_object_create(&o, "rl.env", a, NULL);
    loom_attrs_free(a);
    return o;
}

static loom_status reset_env(loom_object *env, int64_t seed, loom_tensor **obs)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "seed", seed), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = env;
    *obs = NULL;
    loom_status st = loom_run("rl.env_reset", NULL, 0, a, obs, 1, &opt);
    loom_attrs_free(a);
    return st;
}

static loom_status step_env(loom_object *env, const loom_tensor *action, loom_tensor *out[5])
{
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = env;
    memset(out, 0, 5 * sizeof *out);
    return loom_run("rl.env_step", &action, 1, NULL, out, 5, &opt);
}

/* Row k of a [rows, cols] tensor as a new [cols] tensor. */
static loom_tensor *row(const loom_tensor *t, int64_t k)
{
    const int64_t cols = t->ndim > 1 ? t->shape[1] : 1;
    const int64_t shape[1] = { cols };
    loom_tensor *r;
    assert_int_equal(loom_tensor_new(&r, loom_tensor_dtype_of(t), 1, shape, NULL), LOOM_OK);
    const size_t es = loom_dtype_size(loom_tensor_dtype_of(t));
    memcpy(loom_data(r), (const char *)loom_data(t) + (size_t)(k * cols) * es, (size_t)cols * es);
    return r;
}

static void replay(const char *id, int seed)
{
    char p[128], name[160];
    snprintf(p, sizeof p, "rl/envs/%s_%d_", id, seed);
#define G(what) (snprintf(name, sizeof name, "%s%s", p, what), tu_npy(name))
    loom_tensor *actions = G("actions"), *obs = G("observation"), *reward = G("reward"), *term = G("terminated"),
                *trunc = G("truncated"), *resets = G("reset_observation");
#undef G
    loom_status st;
    loom_object *env = make_env(id, &st);
    if (st != LOOM_OK)
        fail_msg("%s: %s", id, loom_last_error());
    loom_tensor *got;
    if (reset_env(env, seed, &got) != LOOM_OK)
        fail_msg("%s reset: %s", id, loom_last_error());
    int64_t n_resets = 1;
    loom_tensor *want = row(resets, 0);
    tu_assert_close(got, want, 1e-6, 1e-7, "first reset");
    loom_tensor_free(want);
    loom_tensor_free(got);
    const uint8_t *te = loom_data(term), *tr = loom_data(trunc);
    const double *rw = loom_data(reward);
    for (int64_t k = 0; k < actions->shape[0]; k++) {
        char what[96];
        loom_tensor *a = row(actions, k), *out[5];
        if (step_env(env, a, out) != LOOM_OK)
            fail_msg("%s step %lld: %s", id, (long long)k, loom_last_error());
        snprintf(what, sizeof what, "%s seed %d step %lld observation", id, seed, (long long)k);
        want = row(obs, k);
        tu_assert_close(out[0], want, 1e-6, 1e-7, what);
        loom_tensor_free(want);
        const double r = *(const double *)loom_data(out[1]);
        if (!(r - rw[k] <= 1e-9 && rw[k] - r <= 1e-9))
            fail_msg("%s step %lld: reward %.17g, gymnasium %.17g", id, (long long)k, r, rw[k]);
        const uint8_t t1 = *(const uint8_t *)loom_data(out[2]), t2 = *(const uint8_t *)loom_data(out[3]);
        const uint8_t dn = *(const uint8_t *)loom_data(out[4]);
        if (t1 != te[k] || t2 != tr[k] || dn != (te[k] | tr[k]))
            fail_msg("%s seed %d step %lld: terminated %d truncated %d done %d, gymnasium %d %d", id, seed,
                     (long long)k, t1, t2, dn, te[k], tr[k]);
        for (int i = 0; i < 5; i++)
            loom_tensor_free(out[i]);
        loom_tensor_free(a);
        if (te[k] || tr[k]) {       /* gymnasium's reset() without a seed: the stream goes on */
            if (reset_env(env, -1, &got) != LOOM_OK)
                fail_msg("%s reset: %s", id, loom_last_error());
            snprintf(what, sizeof what, "%s seed %d reset %lld", id, seed, (long long)n_resets);
            want = row(resets, n_resets++);
            tu_assert_close(got, want, 1e-6, 1e-7, what);
            loom_tensor_free(want);
            loom_tensor_free(got);
        }
    }
    assert_int_equal(n_resets, resets->shape[0]);
    loom_object_free(env);
    loom_tensor *all[] = { actions, obs, reward, term, trunc, resets };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

static void cartpole_matches_gymnasium(void **state)
{
    (void)state;
    replay("CartPole-v1", 0);
    replay("CartPole-v1", 7);
    replay("CartPole-v1", 123456789);
    replay("CartPole-v1", 5);     /* balanced: truncated at 500 steps */
}

static void pendulum_matches_gymnasium(void **state)
{
    (void)state;
    replay("Pendulum-v1", 0);
    replay("Pendulum-v1", 42);
}

static void mountaincar_matches_gymnasium(void **state)
{
    (void)state;
    replay("MountainCar-v0", 3);
}

static void mountaincar_continuous_matches_gymnasium(void **state)
{
    (void)state;
    replay("MountainCarContinuous-v0", 11);
}

static void acrobot_matches_gymnasium(void **state)
{
    (void)state;
    replay("Acrobot-v1", 2);
}

static void bad_use_is_refused(void **state)
{
    loom_status st;
    loom_tensor *obs, *out[5];
    (void)state;
    assert_null(make_env("CartPole-v0", &st));
    assert_int_equal(st, LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "CartPole-v0"));

    loom_object *env = make_env("CartPole-v1", &st);
    assert_int_equal(st, LOOM_OK);
    const int64_t one[1] = { 1 };
    loom_tensor *a;
    assert_int_equal(loom_tensor_new(&a, LOOM_DTYPE_I64, 1, one, NULL), LOOM_OK);
    *(int64_t *)loom_data(a) = 1;
    assert_int_equal(step_env(env, a, out), LOOM_EINVAL);        /* gymnasium: ResetNeeded */
    assert_non_null(strstr(loom_last_error(), "reset"));
    assert_int_equal(reset_env(env, 3, &obs), LOOM_OK);
    loom_tensor_free(obs);
    *(int64_t *)loom_data(a) = 2;
    assert_int_equal(step_env(env, a, out), LOOM_EINVAL);        /* not in Discrete(2) */
    assert_non_null(strstr(loom_last_error(), "Discrete(2)"));
    loom_tensor *f;
    assert_int_equal(loom_tensor_new(&f, LOOM_DTYPE_F32, 1, one, NULL), LOOM_OK);
    *(float *)loom_data(f) = 1.0f;
    assert_int_equal(step_env(env, f, out), LOOM_EINVAL);        /* a box action for a discrete space */
    assert_non_null(strstr(loom_last_error(), "'action'"));
    assert_int_equal(reset_env(env, -7, &obs), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "seed"));
    loom_tensor_free(a);
    loom_tensor_free(f);
    loom_object_free(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cartpole_matches_gymnasium),
        cmocka_unit_test(pendulum_matches_gymnasium),
        cmocka_unit_test(mountaincar_matches_gymnasium),
        cmocka_unit_test(mountaincar_continuous_matches_gymnasium),
        cmocka_unit_test(acrobot_matches_gymnasium),
        cmocka_unit_test(bad_use_is_refused),
    };
    return cmocka_run_group_tests_name("rl_env_goldens", tests, tu_setup, tu_teardown);
}
