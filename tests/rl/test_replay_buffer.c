/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_replay_buffer.c - rl.replay_buffer against torchrl 0.14
** (tests/data/rl/replay, tools/gen_rl_td_replay_goldens.py):
**  - PrioritizedSampler: the trees' leaves (p + eps) ^ alpha after
**    update_priority and after new items took the largest priority seen,
**    and the importance weights torchrl's sample() gave, each within 1 ulp
**    of f32 (torch's vectorised powf is within 1 ulp, glibc's powf correctly
**    rounded almost always: the two may differ by one unit, never more);
**  - sampling frequencies: 200000 seeded draws against the expected
**    distribution tree[i] / sum and against torchrl's own 200000 draws, by
**    chi-square with 9 degrees of freedom at p = 0.001 (27.88): seeded, so
**    the outcome is the same on every run;
**  - TensorDictMaxValueWriter's indices and stored items, exactly;
**  - round-robin indices, without-replacement epochs (every item once,
**    drop_last), SliceSampler slices (consecutive items of one trajectory,
**    by traj_key or end_key, strict_length or shorter slices), the memmap
**    storage readable as a TensorDict directory, ReplayBufferEnsemble
**    (members by weight, chi-square, items from the member named), and the
**    refusals (a refused extend changes nothing).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_test_util.h"

static loom_object *buffer(loom_status *st, ...)
{
    const char *attrs[32];
    int n = 0;
    va_list ap;
    va_start(ap, st);
    for (const char *kv = va_arg(ap, const char *); kv != NULL; kv = va_arg(ap, const char *)) {
        assert_true(n < 31);
        attrs[n++] = kv;
    }
    va_end(ap);
    attrs[n] = NULL;
    return tdt_rb_create(st, attrs);
}

/* A TensorDict of n items: obs f32 [n, 1] = start, start + 1, ... (and reward when given). */
static loom_object *items(int64_t n, double start, const float *reward)
{
    loom_object *td = tdt_new(1, &n);
    const int64_t s[2] = { n, 1 };
    loom_tensor *obs = tdt_ramp(2, s, 1.0, start);
    tdt_set(td, "obs", obs);
    loom_tensor_free(obs);
    if (reward != NULL) {
        loom_tensor *r = NULL;
        assert_int_equal(loom_tensor_wrap(&r, (void *)reward, LOOM_DTYPE_F32, 1, &n, NULL, NULL), LOOM_OK);
        tdt_set(td, "reward", r);
        loom_tensor_free(r);
    }
    return td;
}

static loom_tensor *extend(loom_object *rb, loom_object *td)
{
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(td));
    loom_tensor *index = NULL;
    if (tdt_call(rb, "rl.rb_extend", NULL, &index, src, NULL) != LOOM_OK)
        fail_msg("rl.rb_extend: %s", loom_last_error());
    return index;
}

/* rl.rb_sample: index and weights; items into dest when dest != NULL. */
static void sample(loom_object *rb, int64_t batch, loom_object *dest, loom_tensor **index, loom_tensor **weight)
{
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "batch_size", batch), LOOM_OK);
    if (dest != NULL)
        assert_int_equal(loom_attrs_set_int(a, "dest", tdt_id(dest)), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = rb;
    loom_tensor *outs[2] = { NULL, NULL };
    if (loom_run("rl.rb_sample", NULL, 0, a, outs, 2, &opt) != LOOM_OK)
        fail_msg("rl.rb_sample: %s", loom_last_error());
    loom_attrs_free(a);
    *index = outs[0];
    if (weight != NULL)
        *weight = outs[1];
    else
        loom_tensor_free(outs[1]);
}

static void rb_len(loom_object *rb, int64_t *len, int64_t *writes)
{
    loom_tensor *t = NULL;
    if (tdt_call(rb, "rl.rb_len", NULL, &t, NULL) != LOOM_OK)
        fail_msg("rl.rb_len: %s", loom_last_error());
    *len = ((const int64_t *)t->data)[0];
    *writes = ((const int64_t *)t->data)[1];
    loom_tensor_free(t);
}

static void assert_i64(const loom_tensor *t, const int64_t *want, int64_t n, const char *what)
{
    assert_int_equal(t->shape[0], n);
    for (int64_t i = 0; i < n; i++)
        if (((const int64_t *)t->data)[i] != want[i])
            fail_msg("%s[%lld] = %lld, want %lld", what, (long long)i, (long long)((const int64_t *)t->data)[i],
                     (long long)want[i]);
}

/* |got - want| within `ulps` units in the last place of f32 at want. */
static void assert_ulps(double got, float want, int ulps, const char *what, int64_t i)
{
    float up = nextafterf(want, INFINITY) - want;
    if (fabs(got - (double)want) > ulps * (double)up)
        fail_msg("%s[%lld] = %.9g, torchrl %.9g (%.2f ulp)", what, (long long)i, got, (double)want,
                 fabs(got - (double)want) / (double)up);
}

static loom_object *prio_buffer(void)
{
    return buffer(NULL, "max_size=16", "sampler=prioritized", "alpha=0.7", "beta=0.5", "eps=1e-8", "seed=7", NULL);
}

static void check_tree(loom_object *rb, const char *golden)
{
    loom_tensor *want = tu_npy(golden), *got = NULL;
    if (tdt_call(rb, "rl.rb_priorities", NULL, &got, NULL) != LOOM_OK)
        fail_msg("rl.rb_priorities: %s", loom_last_error());
    assert_int_equal(got->shape[0], want->shape[0]);
    for (int64_t i = 0; i < want->shape[0]; i++)
        assert_ulps(((const double *)got->data)[i], ((const float *)want->data)[i], 1, golden, i);
    loom_tensor_free(want);
    loom_tensor_free(got);
}

static void test_prioritized_against_torchrl(void **state)
{
    (void)state;
    loom_object *rb = prio_buffer();
    loom_object *td = items(10, 0, NULL);
    loom_tensor *ix = extend(rb, td);
    const int64_t first[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    assert_i64(ix, first, 10, "index");
    loom_tensor *prio = tu_npy("rl/replay/prio_priority");
    const loom_tensor *in[2] = { ix, prio };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = rb;
    if (loom_run("rl.rb_update_priority", in, 2, NULL, NULL, 0, &opt) != LOOM_OK)
        fail_msg("rl.rb_update_priority: %s", loom_last_error());
    check_tree(rb, "rl/replay/prio_tree1");

    /* importance weights of given items */
    loom_tensor *wi = tu_npy("rl/replay/prio_weight_index"), *ww = tu_npy("rl/replay/prio_weight"), *w = NULL;
    const loom_tensor *win[1] = { wi };
    loom_tensor *wout[1] = { NULL };
    if (loom_run("rl.rb_priority_weight", win, 1, NULL, wout, 1, &opt) != LOOM_OK)
        fail_msg("rl.rb_priority_weight: %s", loom_last_error());
    w = wout[0];
    for (int64_t i = 0; i < ww->shape[0]; i++)
        assert_ulps(((const float *)w->data)[i], ((const float *)ww->data)[i], 1, "priority_weight", i);

    /* 200000 draws: the expected distribution, and torchrl's draws */
    int64_t counts[10] = { 0 };
    loom_tensor *sx = NULL, *sw = NULL;
    for (int r = 0; r < 20; r++) {
        sample(rb, 10000, NULL, &sx, &sw);
        for (int64_t i = 0; i < 10000; i++) {
            int64_t k = ((const int64_t *)sx->data)[i];
            assert_true(k >= 0 && k < 10);
            counts[k]++;
            if (r == 0) /* each draw carries its item's weight */
                assert_true(((const float *)sw->data)[i] == ((const float *)w->data)[k]);
        }
        loom_tensor_free(sx);
        loom_tensor_free(sw);
    }
    loom_tensor *tree = tu_npy("rl/replay/prio_tree1"), *theirs = tu_npy("rl/replay/prio_counts");
    double total = 0, chi_expected = 0, chi_torchrl = 0;
    for (int i = 0; i < 10; i++)
        total += ((const float *)tree->data)[i];
    for (int i = 0; i < 10; i++) {
        double e = 200000.0 * ((const float *)tree->data)[i] / total;
        double a = (double)counts[i], b = (double)((const int64_t *)theirs->data)[i];
        chi_expected += (a - e) * (a - e) / e;
        chi_torchrl += (a - b) * (a - b) / (a + b);
    }
    if (chi_expected > 27.88 || chi_torchrl > 27.88)
        fail_msg("chi-square %.2f against the distribution, %.2f against torchrl's draws (27.88 at p = 0.001)",
                 chi_expected, chi_torchrl);

    /* 10 more items wrap around and take the largest raw priority seen (3.5) */
    loom_object *more = items(10, 100, NULL);
    loom_tensor *ix2 = extend(rb, more);
    const int64_t second[10] = { 10, 11, 12, 13, 14, 15, 0, 1, 2, 3 };
    assert_i64(ix2, second, 10, "index of the second extend");
    check_tree(rb, "rl/replay/prio_tree2");
    int64_t len, writes;
    rb_len(rb, &len, &writes);
    assert_int_equal(len, 16);
    assert_int_equal(writes, 20);

    /* a sample into a TensorDict: the items, their index and weights */
    loom_object *dest = tdt_new(0, NULL);
    sample(rb, 64, dest, &sx, &sw);
    loom_tensor *obs = tdt_get(dest, "obs"), *dix = tdt_get(dest, "index"), *dw = tdt_get(dest, "priority_weight");
    tdt_assert_bytes(dix, sx, "index");
    tdt_assert_bytes(dw, sw, "priority_weight");
    for (int64_t i = 0; i < 64; i++) {
        int64_t k = ((const int64_t *)sx->data)[i];
        float want = k < 4 ? (float)(106 + k) : k < 10 ? (float)k : (float)(100 + k - 10);
        assert_true(((const float *)obs->data)[i] == want);
    }
    loom_tensor *all[] = { ix, prio, wi, ww, w, tree, theirs, ix2, sx, sw, obs, dix, dw };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        loom_tensor_free(all[i]);
    loom_object_free(dest);
    loom_object_free(more);
    loom_object_free(td);
    loom_object_free(rb);
}

static void test_max_value_writer(void **state)
{
    (void)state;
    loom_object *rb = buffer(NULL, "max_size=4", "writer=max_value", "rank_key=reward", NULL);
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "rl/replay/maxv_reward%d", k);
        loom_tensor *r = tu_npy(name);
        loom_object *td = items(r->shape[0], 10.0 * k, r->data);
        loom_tensor *ix = extend(rb, td);
        snprintf(name, sizeof name, "rl/replay/maxv_index%d", k);
        loom_tensor *want = tu_npy(name);
        tdt_assert_bytes(ix, want, name);
        loom_tensor_free(r);
        loom_tensor_free(ix);
        loom_tensor_free(want);
        loom_object_free(td);
    }
    /* every stored item once, in storage order: a without-replacement pass */
    loom_object *ordered = buffer(NULL, "max_size=4", "writer=max_value", "rank_key=reward",
                                  "sampler=without_replacement", "shuffle=false", NULL);
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "rl/replay/maxv_reward%d", k);
        loom_tensor *r = tu_npy(name);
        loom_object *td = items(r->shape[0], 10.0 * k, r->data);
        loom_tensor_free(extend(ordered, td));
        loom_tensor_free(r);
        loom_object_free(td);
    }
    loom_object *dest = tdt_new(0, NULL);
    loom_tensor *sx = NULL;
    sample(ordered, 4, dest, &sx, NULL);
    loom_tensor *got = tdt_get(dest, "reward"), *want = tu_npy("rl/replay/maxv_stored");
    tdt_assert_bytes(got, want, "stored rewards");
    loom_tensor_free(sx);
    loom_tensor_free(got);
    loom_tensor_free(want);
    loom_object_free(dest);
    loom_object_free(ordered);
    loom_object_free(rb);
}

static void test_round_robin_and_without_replacement(void **state)
{
    (void)state;
    loom_object *rb = buffer(NULL, "max_size=5", NULL);
    loom_object *a = items(3, 0, NULL), *b = items(4, 3, NULL);
    loom_tensor *i1 = extend(rb, a), *i2 = extend(rb, b);
    const int64_t w1[3] = { 0, 1, 2 }, w2[4] = { 3, 4, 0, 1 };
    assert_i64(i1, w1, 3, "first");
    assert_i64(i2, w2, 4, "second");
    int64_t len, writes;
    rb_len(rb, &len, &writes);
    assert_int_equal(len, 5);
    assert_int_equal(writes, 7);
    loom_tensor_free(i1);
    loom_tensor_free(i2);

    /* without replacement over 10 items in batches of 4: 4, 4, 2, each item once */
    for (int drop = 0; drop < 2; drop++) {
        loom_object *w = buffer(NULL, "max_size=16", "sampler=without_replacement", drop ? "drop_last=true" : "seed=3",
                                NULL);
        loom_object *td = items(10, 0, NULL);
        loom_tensor_free(extend(w, td));
        int seen[10] = { 0 };
        const int64_t sizes[3] = { 4, 4, 2 };
        for (int k = 0; k < 3 - drop; k++) {
            loom_tensor *sx = NULL;
            sample(w, 4, NULL, &sx, NULL);
            assert_int_equal(sx->shape[0], sizes[k]);
            for (int64_t i = 0; i < sx->shape[0]; i++)
                seen[((const int64_t *)sx->data)[i]]++;
            loom_tensor_free(sx);
        }
        for (int i = 0; i < 10; i++)
            assert_true(drop ? seen[i] <= 1 : seen[i] == 1);
        /* the next epoch starts afresh */
        loom_tensor *sx = NULL;
        sample(w, 4, NULL, &sx, NULL);
        assert_int_equal(sx->shape[0], 4);
        loom_tensor_free(sx);
        loom_object_free(td);
        loom_object_free(w);
    }
    loom_object_free(a);
    loom_object_free(b);
    loom_object_free(rb);
}

/* Trajectories of lengths 5, 2, 7: episode ids 0.., next.done at each end. */
static loom_object *trajectories(void)
{
    static const int lengths[3] = { 5, 2, 7 };
    int64_t n = 14;
    loom_object *td = items(n, 0, NULL);
    double ep[14], done[14];
    int at = 0;
    for (int t = 0; t < 3; t++)
        for (int q = 0; q < lengths[t]; q++, at++) {
            ep[at] = t;
            done[at] = q == lengths[t] - 1;
        }
    loom_tensor *e = tdt_tensor(LOOM_DTYPE_I64, 1, &n, ep);
    const int64_t s[2] = { 14, 1 };
    loom_tensor *d = tdt_tensor(LOOM_DTYPE_BOOL, 2, s, done);
    tdt_set(td, "episode", e);
    tdt_set(td, "next.done", d);
    loom_tensor_free(e);
    loom_tensor_free(d);
    return td;
}

/* Each run of `seq` sampled items (or shorter, ending a short trajectory) is
** consecutive within one trajectory; returns how many items were sampled. */
static int64_t check_slices(loom_object *rb, int64_t batch, int64_t seq, int allow_short)
{
    static const int64_t first[3] = { 0, 5, 7 }, len[3] = { 5, 2, 7 };
    loom_tensor *ix = NULL;
    sample(rb, batch, NULL, &ix, NULL);
    const int64_t *x = ix->data;
    int64_t i = 0;
    while (i < ix->shape[0]) {
        int t = x[i] < 5 ? 0 : x[i] < 7 ? 1 : 2;
        int64_t l = len[t] < seq && allow_short ? len[t] : seq;
        if (len[t] < seq && !allow_short)
            fail_msg("a slice from trajectory %d of length %lld < %lld with strict_length", t, (long long)len[t],
                     (long long)seq);
        for (int64_t q = 1; q < l; q++)
            if (x[i + q] != x[i] + q || x[i + q] >= first[t] + len[t])
                fail_msg("slice at %lld is not %lld consecutive items of trajectory %d", (long long)i, (long long)l, t);
        i += l;
    }
    int64_t n = ix->shape[0];
    loom_tensor_free(ix);
    return n;
}

static void test_slice_sampler(void **state)
{
    (void)state;
    loom_object *td = trajectories();
    for (int by_traj = 0; by_traj < 2; by_traj++) {
        loom_object *rb = buffer(NULL, "max_size=32", "sampler=slice", "num_slices=4", "seed=5",
                                 by_traj ? "traj_key=episode" : "end_key=next.done", NULL);
        loom_tensor_free(extend(rb, td));
        for (int r = 0; r < 50; r++)
            assert_int_equal(check_slices(rb, 12, 3, 0), 12);
        loom_object_free(rb);
    }
    /* strict_length=false: slices of 3 from the trajectory of 2 have 2 items */
    loom_object *loose = buffer(NULL, "max_size=32", "sampler=slice", "slice_len=3", "strict_length=false", "seed=9",
                                NULL);
    loom_tensor_free(extend(loose, td));
    int64_t total = 0;
    for (int r = 0; r < 50; r++)
        total += check_slices(loose, 12, 3, 1);
    assert_true(total < 50 * 12);   /* some short slices were drawn */
    loom_status st;
    assert_null(buffer(&st, "max_size=8", "sampler=slice", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "num_slices");
    loom_object *strict = buffer(NULL, "max_size=32", "sampler=slice", "slice_len=8", NULL);
    loom_tensor_free(extend(strict, td));
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "batch_size", 16), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = strict;
    loom_tensor *outs[2] = { NULL, NULL };
    tdt_assert_fails(loom_run("rl.rb_sample", NULL, 0, a, outs, 2, &opt), LOOM_EINVAL, "at least 8 items");
    assert_int_equal(loom_attrs_set_int(a, "batch_size", 12), LOOM_OK);
    tdt_assert_fails(loom_run("rl.rb_sample", NULL, 0, a, outs, 2, &opt), LOOM_EINVAL, "not divisible");
    loom_attrs_free(a);
    loom_object_free(strict);
    loom_object_free(loose);
    loom_object_free(td);
}

/* ReplayBufferEnsemble: members by weight, sub-batches, items from the right member. */
static void test_ensemble(void **state)
{
    (void)state;
    loom_object *a = buffer(NULL, "max_size=16", NULL), *b = buffer(NULL, "max_size=16", "seed=2", NULL);
    loom_object *ta = items(10, 0, NULL), *tb = items(10, 100, NULL);
    loom_tensor_free(extend(a, ta));
    loom_tensor_free(extend(b, tb));
    loom_tensor *ida = NULL, *idb = NULL;
    assert_int_equal(tdt_call(a, "rl.rb_id", NULL, &ida, NULL), LOOM_OK);
    assert_int_equal(tdt_call(b, "rl.rb_id", NULL, &idb, NULL), LOOM_OK);
    const int64_t ids[2] = { ((const int64_t *)ida->data)[0], ((const int64_t *)idb->data)[0] };
    const double p[2] = { 0.25, 0.75 };
    for (int all = 0; all < 2; all++) {
        loom_attrs *at;
        assert_int_equal(loom_attrs_new(&at), LOOM_OK);
        assert_int_equal(loom_attrs_set_ints(at, "buffers", ids, 2), LOOM_OK);
        if (all)
            assert_int_equal(loom_attrs_set_bool(at, "sample_from_all", 1), LOOM_OK);
        else
            assert_int_equal(loom_attrs_set_floats(at, "p", p, 2), LOOM_OK);
        assert_int_equal(loom_attrs_set_int(at, "seed", 11), LOOM_OK);
        loom_object *ens = NULL;
        if (loom_object_create(&ens, "rl.replay_buffer_ensemble", at, NULL) != LOOM_OK)
            fail_msg("rl.replay_buffer_ensemble: %s", loom_last_error());
        loom_attrs_free(at);
        loom_object *dest = tdt_new(0, NULL);
        int64_t per_member[2] = { 0, 0 };
        const int rounds = all ? 5 : 2000;
        for (int r = 0; r < rounds; r++) {
            loom_attrs *s;
            assert_int_equal(loom_attrs_new(&s), LOOM_OK);
            assert_int_equal(loom_attrs_set_int(s, "batch_size", 8), LOOM_OK);
            assert_int_equal(loom_attrs_set_int(s, "dest", tdt_id(dest)), LOOM_OK);
            loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
            opt.object = ens;
            loom_tensor *outs[2] = { NULL, NULL };
            if (loom_run("rl.rb_ensemble_sample", NULL, 0, s, outs, 2, &opt) != LOOM_OK)
                fail_msg("rl.rb_ensemble_sample: %s", loom_last_error());
            loom_attrs_free(s);
            loom_tensor *obs = tdt_get(dest, "obs"), *bid = tdt_get(dest, "buffer_ids");
            tdt_assert_bytes(bid, outs[1], "buffer_ids");
            for (int64_t i = 0; i < 8; i++) {
                const int64_t m = ((const int64_t *)outs[1]->data)[i];
                const float o = ((const float *)obs->data)[i];
                assert_true(m == 0 ? o < 10 : o >= 100);
                assert_true(o == (float)(((const int64_t *)outs[0]->data)[i] + (m ? 100 : 0)));
                if (all)
                    assert_int_equal(m, i < 4 ? 0 : 1);
                per_member[m]++;
            }
            loom_tensor_free(obs);
            loom_tensor_free(bid);
            loom_tensor_free(outs[0]);
            loom_tensor_free(outs[1]);
        }
        if (!all) {
            /* 4000 member draws, p = 0.25: chi-square of 1 degree of freedom, 10.83 at p = 0.001 */
            const double draws = (double)(per_member[0] + per_member[1]) / 4.0, e0 = 0.25 * draws, e1 = 0.75 * draws;
            const double d0 = (double)per_member[0] / 4.0 - e0, d1 = (double)per_member[1] / 4.0 - e1;
            const double chi = d0 * d0 / e0 + d1 * d1 / e1;
            if (chi > 10.83)
                fail_msg("member draws %lld / %lld against p = 0.25 / 0.75: chi-square %.2f",
                         (long long)per_member[0] / 4, (long long)per_member[1] / 4, chi);
        }
        loom_object_free(dest);
        loom_object_free(ens);
    }
    loom_tensor_free(ida);
    loom_tensor_free(idb);
    loom_object_free(ta);
    loom_object_free(tb);
    loom_object_free(a);
    loom_object_free(b);
}

/* ListStorage: JSON items in, a JSON list of the sampled ones out; dumps and loads keep them. */
static void test_list_storage(void **state)
{
    (void)state;
    static const char *const want[5] = { "\"a\"", "{\"x\":1}", "3", "null", "[1,2]" };
    loom_object *rb = buffer(NULL, "max_size=8", "storage=list", "seed=4", NULL);
    loom_tensor *ix = NULL;
    if (tdt_call(rb, "rl.rb_extend_list", NULL, &ix, "json=[\"a\", {\"x\": 1}, 3, null, [1, 2]]", NULL) != LOOM_OK)
        fail_msg("rl.rb_extend_list: %s", loom_last_error());
    const int64_t w[5] = { 0, 1, 2, 3, 4 };
    assert_i64(ix, w, 5, "index");
    loom_tensor_free(ix);
    char tmp[] = "/tmp/loom-list-XXXXXX", path[100], cmd[140];
    assert_non_null(mkdtemp(tmp));
    snprintf(path, sizeof path, "path=%s/rb", tmp);
    assert_int_equal(tdt_call(rb, "rl.rb_dumps", NULL, NULL, path, "sync=false", NULL), LOOM_OK);
    loom_object *back = buffer(NULL, "max_size=8", "storage=list", NULL);
    if (tdt_call(back, "rl.rb_loads", NULL, NULL, path, NULL) != LOOM_OK)
        fail_msg("loads: %s", loom_last_error());
    for (int k = 0; k < 2; k++) {
        loom_object *src = k ? back : rb;
        loom_object *dest = tdt_new(0, NULL);
        loom_tensor *sx = NULL;
        sample(src, 16, dest, &sx, NULL);
        char *data = tdt_get_json(dest, "data");
        /* the JSON list, item by item, against the index drawn */
        const char *p = data + 1;
        for (int64_t i = 0; i < 16; i++) {
            const char *item = want[((const int64_t *)sx->data)[i]];
            if (strncmp(p, item, strlen(item)) != 0)
                fail_msg("item %lld of %s is not %s", (long long)i, data, item);
            p += strlen(item) + 1;
        }
        free(data);
        loom_tensor_free(sx);
        loom_object_free(dest);
    }
    loom_status st;
    assert_null(buffer(&st, "max_size=8", "storage=list", "writer=max_value", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "round_robin");
    loom_tensor *none = NULL;
    tdt_assert_fails(tdt_call(rb, "rl.rb_extend_list", NULL, &none, "json={}", NULL), LOOM_EINVAL, "JSON array");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
    loom_object_free(back);
    loom_object_free(rb);
}

static void test_memmap_storage_and_refusals(void **state)
{
    (void)state;
    char tmp[] = "/tmp/loom-rb-XXXXXX", dir[128], cmd[200];
    assert_non_null(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "scratch_dir=%s/storage", tmp);
    loom_object *rb = buffer(NULL, "max_size=8", "storage=memmap", dir, NULL);
    const float reward[3] = { 1, 2, 3 };
    loom_object *td = items(3, 40, reward);
    loom_tensor_free(extend(rb, td));
    /* the storage directory is a TensorDict of batch [8] in tensordict's layout */
    snprintf(dir, sizeof dir, "path=%s/storage", tmp);
    loom_object *view = tdt_create(NULL, "from=load", dir, NULL);
    int64_t bs[2];
    assert_int_equal(tdt_batch(view, bs), 1);
    assert_int_equal(bs[0], 8);
    loom_tensor *obs = tdt_get(view, "obs");
    assert_true(((const float *)obs->data)[2] == 42.0f && ((const float *)obs->data)[3] == 0.0f);
    loom_tensor_free(obs);
    loom_object_free(view);

    /* refusals leave the buffer as it was */
    loom_object *other = tdt_new(1, (const int64_t[]){ 2 });
    const int64_t s2[2] = { 2, 3 };
    loom_tensor *x = tdt_ramp(2, s2, 1.0, 0.0);
    tdt_set(other, "obs", x);
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(other));
    loom_tensor *none = NULL;
    tdt_assert_fails(tdt_call(rb, "rl.rb_extend", NULL, &none, src, NULL), LOOM_EINVAL, "keys");
    int64_t len, writes;
    rb_len(rb, &len, &writes);
    assert_int_equal(len, 3);
    assert_int_equal(writes, 3);
    loom_status st;
    assert_null(buffer(&st, "max_size=8", "storage=memmap", NULL));
    tdt_assert_fails(st, LOOM_EINVAL, "scratch_dir");
    loom_object *empty = buffer(NULL, "max_size=4", "sampler=prioritized", NULL);
    loom_attrs *a;
    assert_int_equal(loom_attrs_new(&a), LOOM_OK);
    assert_int_equal(loom_attrs_set_int(a, "batch_size", 2), LOOM_OK);
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = empty;
    loom_tensor *outs[2] = { NULL, NULL };
    tdt_assert_fails(loom_run("rl.rb_sample", NULL, 0, a, outs, 2, &opt), LOOM_EINVAL, "empty");
    loom_attrs_free(a);
    const double ix[2] = { 0, 9 };
    const int64_t two = 2, three = 3;
    loom_tensor *bad_ix = tdt_tensor(LOOM_DTYPE_I64, 1, &two, ix);
    loom_tensor *prio = tdt_ramp(1, &three, 1.0, 1.0);
    const loom_tensor *in[2] = { bad_ix, prio };
    tdt_assert_fails(loom_run("rl.rb_update_priority", in, 2, NULL, NULL, 0, &opt), LOOM_EINVAL, "3 values for 2");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    assert_int_equal(system(cmd), 0);
    loom_tensor_free(x);
    loom_tensor_free(bad_ix);
    loom_tensor_free(prio);
    loom_object_free(empty);
    loom_object_free(other);
    loom_object_free(td);
    loom_object_free(rb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prioritized_against_torchrl),
        cmocka_unit_test(test_max_value_writer),
        cmocka_unit_test(test_round_robin_and_without_replacement),
        cmocka_unit_test(test_slice_sampler),
        cmocka_unit_test(test_ensemble),
        cmocka_unit_test(test_list_storage),
        cmocka_unit_test(test_memmap_storage_and_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
