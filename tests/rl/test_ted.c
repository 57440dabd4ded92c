/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_ted.c - rl.rb_extend_ted: a TED dataset written by torchrl
** (tests/data/rl/ted/cartpole, tools/gen_rl_td_ted_goldens.py: two
** CartPole-v1 rollouts, batch [2, 20]) streamed into a replay buffer in
** chunks; the stored items are the dataset's, bit for bit, in storage
** order; datasets that are not TED (a required key missing, done not
** terminated | truncated) are refused naming the key or the element.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "td_test_util.h"

static loom_object *ordered_buffer(void)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "max_size", 64), LOOM_OK);
    assert_int_equal(loom_attrs_set_string(a, "sampler", "without_replacement"), LOOM_OK);
    assert_int_equal(loom_attrs_set_bool(a, "shuffle", 0), LOOM_OK);
    loom_object *o = NULL;
    if (loom_object_create(&o, "rl.replay_buffer", a, NULL) != LOOM_OK)
        fail_msg("rl.replay_buffer: %s", loom_last_error());
    loom_attrs_free(a);
    return o;
}

static loom_status extend_ted(loom_object *rb, const char *dir, const char *chunk, int64_t *count)
{
    char kv[1200];
    snprintf(kv, sizeof kv, "path=%s", dir);
    loom_tensor *c = NULL;
    loom_status st = tdt_call(rb, "rl.rb_extend_ted", NULL, &c, kv, chunk, NULL);
    if (st == LOOM_OK && count != NULL)
        *count = ((const int64_t *)c->data)[0];
    loom_tensor_free(c);
    return st;
}

static void test_stream_cartpole(void **state)
{
    (void)state;
    const char *dir = tu_data_path("rl/ted/cartpole");
    char kv[1200];
    snprintf(kv, sizeof kv, "path=%s", dir);
    loom_object *file = tdt_create(NULL, "from=load", kv, NULL);
    static const char *const keys[] = { "observation", "action", "done", "next.observation", "next.reward",
                                        "next.done", "next.terminated", "next.truncated" };
    for (int chunked = 0; chunked < 2; chunked++) {
        loom_object *rb = ordered_buffer();
        int64_t count = 0;
        if (extend_ted(rb, dir, chunked ? "chunk=7" : "chunk=65536", &count) != LOOM_OK)
            fail_msg("rl.rb_extend_ted: %s", loom_last_error());
        assert_int_equal(count, 40);
        loom_object *dest = tdt_new(0, NULL);
        char d[48];
        snprintf(d, sizeof d, "dest=%lld", (long long)tdt_id(dest));
        loom_tensor *ix = NULL;
        assert_int_equal(tdt_call(rb, "rl.rb_sample", NULL, &ix, "batch_size=40", d, NULL), LOOM_OK);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            loom_tensor *got = tdt_get(dest, keys[k]), *want = tdt_get(file, keys[k]);
            /* [2, 20, ...] flattened to [40, ...]: the same bytes */
            assert_int_equal(got->shape[0], 40);
            assert_int_equal(want->shape[0] * want->shape[1], 40);
            assert_int_equal(loom_tensor_nbytes(got), loom_tensor_nbytes(want));
            if (memcmp(got->data, want->data, loom_tensor_nbytes(got)) != 0)
                fail_msg("%s: the stored items are not the dataset's", keys[k]);
            loom_tensor_free(got);
            loom_tensor_free(want);
        }
        loom_tensor *rew = tdt_get(dest, "next.reward");
        for (int i = 0; i < 40; i++)
            assert_true(((const float *)rew->data)[i] == 1.0f);   /* CartPole: 1 per step */
        loom_tensor_free(rew);
        loom_tensor_free(ix);
        loom_object_free(dest);
        loom_object_free(rb);
    }
    loom_object_free(file);
}

static void test_not_ted(void **state)
{
    (void)state;
    char tmp[] = "/tmp/loom-ted-XXXXXX", dir[128], cmd[1400], kv[200];
    assert_non_null(mkdtemp(tmp));
    /* a dict without action */
    const int64_t b = 3;
    loom_object *td = tdt_new(1, &b);
    const int64_t s[2] = { 3, 1 };
    loom_tensor *x = tdt_ramp(2, s, 1.0, 0.0);
    tdt_set(td, "next.reward", x);
    snprintf(dir, sizeof dir, "%s/plain", tmp);
    snprintf(kv, sizeof kv, "path=%s", dir);
    assert_int_equal(tdt_call(td, "rl.td_save", NULL, NULL, kv, NULL), LOOM_OK);
    loom_object *rb = ordered_buffer();
    tdt_assert_fails(extend_ted(rb, dir, "chunk=8", NULL), LOOM_EINVAL, "no tensor action");
    /* next.done set where neither terminated nor truncated is */
    snprintf(dir, sizeof dir, "%s/cartpole", tmp);
    snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", tu_data_path("rl/ted/cartpole"), dir);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/next/done.memmap", dir);
    FILE *f = fopen(cmd, "r+b");
    assert_non_null(f);
    unsigned char byte = 0;
    assert_int_equal(fread(&byte, 1, 1, f), 1);
    rewind(f);
    byte ^= 1;
    assert_int_equal(fwrite(&byte, 1, 1, f), 1);
    fclose(f);
    tdt_assert_fails(extend_ted(rb, dir, "chunk=8", NULL), LOOM_EINVAL, "done = terminated | truncated");
    loom_tensor *len = NULL;
    assert_int_equal(tdt_call(rb, "rl.rb_len", NULL, &len, NULL), LOOM_OK);
    assert_int_equal(((const int64_t *)len->data)[0], 0);
    loom_tensor_free(len);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
    loom_tensor_free(x);
    loom_object_free(td);
    loom_object_free(rb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream_cartpole),
        cmocka_unit_test(test_not_ted),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
