/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_env_parallel.c - rl.parallel_env against single rl.env objects
** (which test_env_goldens.c holds to gymnasium): N environments reset with
** seed s are the single environments reset with s + i, and every step of
** the batch, over the core's threads, equals stepping each one with
** TorchRL's auto-reset: next_observation, reward and flags are the step's,
** and `observation` is the reset observation of the environments that are
** done (an unseeded reset: the stream goes on), the step's elsewhere. For
** CartPole-v1 (episodes end by termination) and Pendulum-v1 (a box action,
** episodes end by truncation); and a TorchRL SerialEnv rollout of
** GymEnv("CartPole-v1") (tests/data/rl/envs/torchrl_serial_*), step by step:
** ("next", ...) entries and the next root after its auto-reset. Then the
** refusals: actions of the wrong shape or dtype, num_envs out of range.
**
** Equality is exact: the same code runs for one environment or many, and
** TorchRL's float32 observations are gymnasium's.
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

static loom_object *make(const char *cls, const char *id, int64_t n, loom_status *st)
{
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "id", id), LOOM_OK);
    if (n != 0)     /* 0: rl.env, no num_envs */
        assert_int_equal(loom_attrs_set_int(a, "num_envs", n), LOOM_OK);
    *st = loom_object_create(&o, cls, a, NULL);
    loom_attrs_free(a);
    return o;
}

static loom_status run(const char *op, loom_object *o, const loom_tensor *in, int64_t seed, loom_tensor **out, int n_out)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (in == NULL)
        assert_int_equal(loom_attrs_set_int(a, "seed", seed), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    memset(out, 0, (size_t)n_out * sizeof *out);
    loom_status st = loom_run(op, in ? &in : NULL, in ? 1 : 0, a, out, n_out, &opt);
    loom_attrs_free(a);
    return st;
}

static void assert_bytes(const loom_tensor *t, int64_t row, const void *want, size_t n, const char *what, int64_t k)
{
    if (memcmp((const char *)loom_data(t) + (size_t)row * n, want, n) != 0)
        fail_msg("step %lld, environment %lld: %s differs", (long long)k, (long long)row, what);
}

static void batch_equals_singles(const char *id, int64_t n, int64_t seed, int64_t steps)
{
    enum { MAXN = 16 };
    loom_status st;
    loom_object *batch = make("rl.parallel_env", id, n, &st), *one[MAXN];
    assert_int_equal(st, LOOM_OK);
    loom_tensor *bobs, *sobs[MAXN];
    assert_int_equal(run("rl.parallel_env_reset", batch, NULL, seed, &bobs, 1), LOOM_OK);
    const int64_t osz = bobs->shape[1];
    for (int64_t i = 0; i < n; i++) {
        one[i] = make("rl.env", id, 0, &st);
        assert_int_equal(st, LOOM_OK);
        assert_int_equal(run("rl.env_reset", one[i], NULL, seed + i, &sobs[i], 1), LOOM_OK);
        assert_bytes(bobs, i, loom_data(sobs[i]), (size_t)osz * 4, "reset observation", -1);
        loom_tensor_free(sobs[i]);
    }
    loom_tensor_free(bobs);
    const int discrete = strcmp(id, "Pendulum-v1") != 0;
    const int64_t ashape[2] = { n, 1 }, one1[1] = { 1 };
    uint32_t lcg = 12345;
    int64_t dones = 0;
    for (int64_t k = 0; k < steps; k++) {
        loom_tensor *act, *out[6];
        assert_int_equal(loom_tensor_new(&act, discrete ? LOOM_DTYPE_I64 : LOOM_DTYPE_F32, discrete ? 1 : 2, ashape,
                                         NULL), LOOM_OK);
        for (int64_t i = 0; i < n; i++) {
            lcg = lcg * 1664525u + 1013904223u;
            if (discrete)
                ((int64_t *)loom_data(act))[i] = (lcg >> 16) & 1;
            else
                ((float *)loom_data(act))[i] = (float)((double)(lcg >> 8) / 16777216.0 * 5.0 - 2.5);
        }
        if (run("rl.parallel_env_step", batch, act, 0, out, 6) != LOOM_OK)
            fail_msg("%s step %lld: %s", id, (long long)k, loom_last_error());
        for (int64_t i = 0; i < n; i++) {
            loom_tensor *a1, *s[5], *r;
            const size_t es = discrete ? 8 : 4;
            assert_int_equal(loom_tensor_new(&a1, loom_tensor_dtype_of(act), 1, one1, NULL), LOOM_OK);
            memcpy(loom_data(a1), (const char *)loom_data(act) + (size_t)i * es, es);
            assert_int_equal(run("rl.env_step", one[i], a1, 0, s, 5), LOOM_OK);
            assert_bytes(out[0], i, loom_data(s[0]), (size_t)osz * 4, "next_observation", k);
            assert_bytes(out[1], i, loom_data(s[1]), 8, "reward", k);
            for (int f = 2; f < 5; f++)
                assert_bytes(out[f], i, loom_data(s[f]), 1, "a flag", k);
            if (*(const uint8_t *)loom_data(s[4])) {
                dones++;
                assert_int_equal(run("rl.env_reset", one[i], NULL, -1, &r, 1), LOOM_OK);
                assert_bytes(out[5], i, loom_data(r), (size_t)osz * 4, "the reset observation", k);
                loom_tensor_free(r);
            } else {
                assert_bytes(out[5], i, loom_data(s[0]), (size_t)osz * 4, "observation", k);
            }
            for (int f = 0; f < 5; f++)
                loom_tensor_free(s[f]);
            loom_tensor_free(a1);
        }
        for (int f = 0; f < 6; f++)
            loom_tensor_free(out[f]);
        loom_tensor_free(act);
    }
    assert_true(dones > 0);     /* the auto-reset ran */
    for (int64_t i = 0; i < n; i++)
        loom_object_free(one[i]);
    loom_object_free(batch);
}

static void cartpole_batch_equals_single_envs(void **state)
{
    (void)state;
    batch_equals_singles("CartPole-v1", 13, 100, 300);
}

static void pendulum_batch_equals_single_envs(void **state)
{
    (void)state;
    batch_equals_singles("Pendulum-v1", 3, 7, 410);
}

/* TorchRL's own auto-reset (tools/gen_rl_env_goldens.py): a SerialEnv of
** GymEnv("CartPole-v1") after set_seed(5), rolled out with
** break_when_any_done=False. set_seed resets with the seed and the rollout
** resets again, so the first root is the seeded stream's second reset. */
static void torchrl_serial_env_rollout_matches(void **state)
{
    const char *p = "rl/envs/torchrl_serial_CartPole-v1_5_";
    char name[128];
    (void)state;
#define G(what) (snprintf(name, sizeof name, "%s%s", p, what), tu_npy(name))
    loom_tensor *actions = G("actions"), *root = G("observation"), *next = G("next_observation"), *rew = G("reward"),
                *term = G("terminated"), *trunc = G("truncated"), *done = G("done");
#undef G
    loom_status st;
    loom_object *b = make("rl.parallel_env", "CartPole-v1", 1, &st);
    assert_int_equal(st, LOOM_OK);
    loom_tensor *obs, *out[6];
    assert_int_equal(run("rl.parallel_env_reset", b, NULL, 5, &obs, 1), LOOM_OK);
    loom_tensor_free(obs);
    assert_int_equal(run("rl.parallel_env_reset", b, NULL, -1, &obs, 1), LOOM_OK);
    assert_bytes(obs, 0, loom_data(root), 16, "the first root observation", -1);
    loom_tensor_free(obs);
    const int64_t T = actions->shape[0], one[1] = { 1 };
    for (int64_t k = 0; k < T; k++) {
        loom_tensor *a;
        assert_int_equal(loom_tensor_new(&a, LOOM_DTYPE_I64, 1, one, NULL), LOOM_OK);
        *(int64_t *)loom_data(a) = ((const int64_t *)loom_data(actions))[k];
        assert_int_equal(run("rl.parallel_env_step", b, a, 0, out, 6), LOOM_OK);
        assert_bytes(out[0], 0, (const float *)loom_data(next) + 4 * k, 16, "(\"next\", \"observation\")", k);
        if ((float)*(const double *)loom_data(out[1]) != ((const float *)loom_data(rew))[k])
            fail_msg("step %lld: reward differs from torchrl's", (long long)k);
        assert_bytes(out[2], 0, (const uint8_t *)loom_data(term) + k, 1, "terminated", k);
        assert_bytes(out[3], 0, (const uint8_t *)loom_data(trunc) + k, 1, "truncated", k);
        assert_bytes(out[4], 0, (const uint8_t *)loom_data(done) + k, 1, "done", k);
        if (k + 1 < T)      /* the next root: reset where done */
            assert_bytes(out[5], 0, (const float *)loom_data(root) + 4 * (k + 1), 16, "the next root observation", k);
        for (int f = 0; f < 6; f++)
            loom_tensor_free(out[f]);
        loom_tensor_free(a);
    }
    loom_object_free(b);
    loom_tensor *all[] = { actions, root, next, rew, term, trunc, done };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
}

static void bad_batches_are_refused(void **state)
{
    loom_status st;
    (void)state;
    assert_null(make("rl.parallel_env", "CartPole-v1", (int64_t)1 << 30, &st));
    assert_int_equal(st, LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "num_envs"));
    assert_null(make("rl.parallel_env", "CartPole-v1", -2, &st));
    assert_int_equal(st, LOOM_EINVAL);
    loom_object *b = make("rl.parallel_env", "CartPole-v1", 4, &st);
    assert_int_equal(st, LOOM_OK);
    loom_tensor *obs, *out[6], *act;
    assert_int_equal(run("rl.parallel_env_reset", b, NULL, 1, &obs, 1), LOOM_OK);
    loom_tensor_free(obs);
    const int64_t three[1] = { 3 };
    assert_int_equal(loom_tensor_new(&act, LOOM_DTYPE_I64, 1, three, NULL), LOOM_OK);
    assert_int_equal(run("rl.parallel_env_step", b, act, 0, out, 6), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "'action'"));
    loom_tensor_free(act);
    const int64_t four[1] = { 4 };
    assert_int_equal(loom_tensor_new(&act, LOOM_DTYPE_I64, 1, four, NULL), LOOM_OK);
    ((int64_t *)loom_data(act))[2] = 5;       /* not in Discrete(2) */
    assert_int_equal(run("rl.parallel_env_step", b, act, 0, out, 6), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "environment 2"));
    loom_tensor_free(act);
    loom_object_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cartpole_batch_equals_single_envs),
        cmocka_unit_test(pendulum_batch_equals_single_envs),
        cmocka_unit_test(torchrl_serial_env_rollout_matches),
        cmocka_unit_test(bad_batches_are_refused),
    };
    return cmocka_run_group_tests_name("rl_env_parallel", tests, tu_setup, tu_teardown);
}
