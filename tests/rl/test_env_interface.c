/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_env_interface.c - an environment another pack offers through the
** rl.env interface layout under its own name (envpack.c: "testenv.env",
** Counter-v0), stepped by the rl pack's objects: rl.env with
** interface=testenv.env (reset with and without a seed, the pack's own
** observations, rewards, termination and truncation, its refusal of a bad
** action passed on), rl.env_spec, rl.parallel_env with auto-reset; and the
** refusals of an interface nobody offers and an id the interface lacks.
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

static loom_object *make(const char *cls, const char *iface, const char *id, int64_t n, loom_status *st)
{
    loom_attrs *a = NULL;
    loom_object *o = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "id", id), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "interface", iface), LOOM_OK);
    if (n > 0)
        assert_int_equal(loom_attrs_set_int(a, "num_envs", n), LOOM_OK);
    *st = loom_object_create(&o, cls, a, NULL);
    loom_attrs_free(a);
    return o;
}

static loom_status call(loom_object *o, const char *op, const loom_tensor *in, int64_t seed, loom_tensor **out, int n)
{
    loom_attrs *a = NULL;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    if (in == NULL && strstr(op, "reset") != NULL)
        assert_int_equal(loom_attrs_set_int(a, "seed", seed), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = o;
    memset(out, 0, (size_t)n * sizeof *out);
    loom_status st = loom_run(op, in ? &in : NULL, in ? 1 : 0, a, out, n, &opt);
    loom_attrs_free(a);
    return st;
}

static void free_all(loom_tensor **t, int n)
{
    for (int i = 0; i < n; i++)
        loom_tensor_free(t[i]);
}

static void another_packs_environment_steps_through_rl_env(void **state)
{
    loom_status st;
    (void)state;
    loom_object *env = make("rl.env", "testenv.env", "Counter-v0", 0, &st);
    if (st != LOOM_OK)
        fail_msg("%s", loom_last_error());
    loom_tensor *o[6], *a;
    const int64_t one[1] = { 1 };
    assert_int_equal(call(env, "rl.env_spec", NULL, 0, o, 6), LOOM_OK);
    assert_int_equal(*(const int64_t *)loom_data(o[2]), 2);        /* Discrete(2) */
    assert_int_equal(*(const int64_t *)loom_data(o[5]), 5);        /* its time limit */
    free_all(o, 6);
    assert_int_equal(call(env, "rl.env_reset", NULL, 42, o, 1), LOOM_OK);
    assert_true(((const float *)loom_data(o[0]))[0] == 42.0f);
    free_all(o, 1);
    assert_int_equal(loom_tensor_new(&a, LOOM_DTYPE_I64, 1, one, NULL), LOOM_OK);
    *(int64_t *)loom_data(a) = 1;
    for (int k = 1; k <= 3; k++) {
        assert_int_equal(call(env, "rl.env_step", a, 0, o, 5), LOOM_OK);
        assert_true(((const float *)loom_data(o[0]))[0] == 42.0f + (float)k);
        assert_true(*(const double *)loom_data(o[1]) == 1.0);
        assert_int_equal(*(const uint8_t *)loom_data(o[2]), k == 3);     /* terminated after 3 ones */
        assert_int_equal(*(const uint8_t *)loom_data(o[4]), k == 3);
        free_all(o, 5);
    }
    *(int64_t *)loom_data(a) = 7;
    assert_int_equal(call(env, "rl.env_step", a, 0, o, 5), LOOM_EINVAL);  /* the pack's own refusal */
    assert_non_null(strstr(loom_last_error(), "Counter-v0"));
    loom_tensor_free(a);
    loom_object_free(env);
}

static void another_packs_environment_in_a_parallel_env(void **state)
{
    loom_status st;
    (void)state;
    loom_object *b = make("rl.parallel_env", "testenv.env", "Counter-v0", 3, &st);
    assert_int_equal(st, LOOM_OK);
    loom_tensor *o[6], *a;
    assert_int_equal(call(b, "rl.parallel_env_reset", NULL, 10, o, 1), LOOM_OK);
    for (int i = 0; i < 3; i++)     /* environment i: seed 10 + i */
        assert_true(((const float *)loom_data(o[0]))[2 * i] == (float)(10 + i));
    free_all(o, 1);
    const int64_t three[1] = { 3 };
    assert_int_equal(loom_tensor_new(&a, LOOM_DTYPE_I64, 1, three, NULL), LOOM_OK);
    memset(loom_data(a), 0, 3 * sizeof(int64_t));
    for (int k = 1; k <= 6; k++) {
        assert_int_equal(call(b, "rl.parallel_env_step", a, 0, o, 6), LOOM_OK);
        const uint8_t *trunc = loom_data(o[3]);
        const float *root = loom_data(o[5]), *next = loom_data(o[0]);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(trunc[i], k == 5);           /* the time limit of 5 */
            /* after the truncation the root is the unseeded reset's: count 0 */
            assert_true(root[2 * i] == (k == 5 ? 0.0f : next[2 * i]));
        }
        free_all(o, 6);
    }
    loom_tensor_free(a);
    loom_object_free(b);
}

static void unknown_interfaces_and_ids_are_refused(void **state)
{
    loom_status st;
    (void)state;
    assert_null(make("rl.env", "nobody.env", "Counter-v0", 0, &st));
    assert_int_equal(st, LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "nobody.env"));
    assert_null(make("rl.env", "testenv.env", "CartPole-v1", 0, &st));
    assert_int_equal(st, LOOM_ENOENT);
    assert_non_null(strstr(loom_last_error(), "CartPole-v1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(another_packs_environment_steps_through_rl_env),
        cmocka_unit_test(another_packs_environment_in_a_parallel_env),
        cmocka_unit_test(unknown_interfaces_and_ids_are_refused),
    };
    return cmocka_run_group_tests_name("rl_env_interface", tests, tu_setup, tu_teardown);
}
