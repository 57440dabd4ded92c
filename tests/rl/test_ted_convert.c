/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ted_convert.c - Minari and D4RL datasets converted by
** tools/convert_rl_dataset.py (tests/data/rl/h5, tools/gen_h5_rl_datasets.py)
** read as TED datasets: no Python here, only the converted directories.
**  - D4RL: every leaf bit for bit equal to what torchrl 0.14's own
**    D4RLExperienceReplay processing gave for the same arrays
**    (d4rl_expect/, tools/gen_rl_d4rl_goldens.py);
**  - Minari: torchrl's MinariExperienceReplay needs the minari package and
**    its dataset cache, so the layout is checked against the episodes' own
**    arrays (minari/E_KEY.npy) as minari_data.py lays them out: episodes in
**    the order of their numbers, observation = observations[:-1],
**    next.observation = observations[1:], next.reward | terminated |
**    truncated [N, 1], next.done = terminated | truncated, episode ids, and
**    infos as info / next.info the same way;
**  - both stream into a replay buffer through rl.rb_extend_ted.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_test_util.h"

static loom_object *load(const char *rel)
{
    char p[1200];
    snprintf(p, sizeof p, "path=%s", tu_data_path(rel));
    return tdt_create(NULL, "from=load", p, NULL);
}

static void extend_ted(const char *rel, int64_t want)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "max_size", 64), LOOM_OK);
    loom_object *rb = NULL;
    assert_int_equal(loom_object_create(&rb, "rl.replay_buffer", a, NULL), LOOM_OK);
    loom_attrs_free(a);
    char p[1200];
    snprintf(p, sizeof p, "path=%s", tu_data_path(rel));
    loom_tensor *count = NULL;
    if (tdt_call(rb, "rl.rb_extend_ted", NULL, &count, p, NULL) != LOOM_OK)
        fail_msg("rl.rb_extend_ted %s: %s", rel, loom_last_error());
    assert_int_equal(((const int64_t *)count->data)[0], want);
    loom_tensor_free(count);
    loom_object_free(rb);
}

static void test_d4rl_as_torchrl(void **state)
{
    (void)state;
    static const char *const keys[] = { "action", "done", "info.qpos", "next.done", "next.info.qpos",
                                        "next.observation", "next.reward", "next.terminated", "next.truncated",
                                        "observation", "reward", "terminated", "truncated" };
    loom_object *td = load("rl/h5/d4rl_td");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "rl/h5/d4rl_expect/%s", keys[i]);
        loom_tensor *want = tu_npy(rel), *got = tdt_get(td, keys[i]);
        tdt_assert_bytes(got, want, keys[i]);
        assert_int_equal(got->dtype.code, want->dtype.code);
        assert_int_equal(got->dtype.bits, want->dtype.bits);
        loom_tensor_free(got);
        loom_tensor_free(want);
    }
    char *k = tdt_keys(td);
    assert_non_null(strstr(k, "info.qpos"));
    assert_null(strstr(k, "metadata"));   /* D4RL's metadata group is left out, as torchrl does */
    free(k);
    loom_object_free(td);
    extend_ted("rl/h5/d4rl_td", 8);
}

/* rows [at, at + n) of a converted leaf against want's bytes from row `from` */
static void assert_rows(const loom_tensor *got, int64_t at, const loom_tensor *want, int64_t from, int64_t n,
                        const char *what, int ep)
{
    const size_t row = (size_t)(loom_tensor_nbytes(got) / (size_t)got->shape[0]);
    const size_t wrow = (size_t)(loom_tensor_nbytes(want) / (size_t)(want->shape[0] > 0 ? want->shape[0] : 1));
    if (row != wrow)
        fail_msg("%s: rows of %zu bytes, the episode's of %zu", what, row, wrow);
    if (memcmp((const uint8_t *)got->data + (size_t)at * row, (const uint8_t *)want->data + (size_t)from * row,
               (size_t)n * row) != 0)
        fail_msg("%s of episode %d differs from the HDF5 file's", what, ep);
}

static void test_minari_layout(void **state)
{
    (void)state;
    static const int episodes[] = { 0, 1, 2, 10 };   /* by number: episode_10 after episode_2 */
    static const int64_t steps[] = { 3, 4, 2, 3 };
    loom_object *td = load("rl/h5/minari_td");
    loom_tensor *obs = tdt_get(td, "observation"), *nobs = tdt_get(td, "next.observation");
    loom_tensor *act = tdt_get(td, "action"), *rew = tdt_get(td, "next.reward"), *ep = tdt_get(td, "episode");
    loom_tensor *term = tdt_get(td, "next.terminated"), *trunc = tdt_get(td, "next.truncated");
    loom_tensor *done = tdt_get(td, "next.done"), *info = tdt_get(td, "info.success");
    loom_tensor *ninfo = tdt_get(td, "next.info.success");
    assert_int_equal(obs->shape[0], 12);
    assert_int_equal(rew->ndim, 2);
    assert_int_equal(rew->shape[1], 1);
    int64_t at = 0;
    for (int e = 0; e < 4; e++) {
        char rel[96];
        const int n = episodes[e];
#define EP(name) (snprintf(rel, sizeof rel, "rl/h5/minari/%d_%s", n, name), tu_npy(rel))
        loom_tensor *o = EP("observations"), *a = EP("actions"), *r = EP("rewards"), *te = EP("terminations");
        loom_tensor *tr = EP("truncations"), *s = EP("infos_success");
#undef EP
        assert_rows(obs, at, o, 0, steps[e], "observation", n);
        assert_rows(nobs, at, o, 1, steps[e], "next.observation", n);
        assert_rows(act, at, a, 0, steps[e], "action", n);
        assert_rows(rew, at, r, 0, steps[e], "next.reward", n);
        assert_rows(term, at, te, 0, steps[e], "next.terminated", n);
        assert_rows(trunc, at, tr, 0, steps[e], "next.truncated", n);
        assert_rows(info, at, s, 0, steps[e], "info.success", n);
        assert_rows(ninfo, at, s, 1, steps[e], "next.info.success", n);
        for (int64_t i = 0; i < steps[e]; i++) {
            const uint8_t *d = done->data, *t1 = te->data, *t2 = tr->data;
            assert_int_equal(d[at + i], t1[i] | t2[i]);
            assert_int_equal(((const int64_t *)ep->data)[at + i], n);
        }
        loom_tensor *all[] = { o, a, r, te, tr, s };
        for (size_t k = 0; k < 6; k++)
            loom_tensor_free(all[k]);
        at += steps[e];
    }
    loom_tensor *all[] = { obs, nobs, act, rew, ep, term, trunc, done, info, ninfo };
    for (size_t k = 0; k < 10; k++)
        loom_tensor_free(all[k]);
    loom_object_free(td);
    extend_ted("rl/h5/minari_td", 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_d4rl_as_torchrl),
        cmocka_unit_test(test_minari_layout),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
