/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_replay_slice.c - SliceSampler's options and PrioritizedSampler's
** max_priority_within_buffer against torchrl 0.14 (tests/data/rl/slice,
** tools/gen_rl_slice_goldens.py).
**  - Exact, as torchrl is deterministic given the stored items: the
**    trajectories (start, stop, length) it recovers from traj_key or
**    end_key on a partial storage, a full one whose trajectory wraps past
**    the end, and one whose ends were overwritten (the last slot written
**    ends a trajectory); the sum tree's leaves after each step of a script
**    of extends and update_priority calls, with the max priority kept
**    within the buffer or ever seen, within 1 f32 ulp (powf, see
**    test_replay_buffer.c).
**  - By support, as torchrl samples with torch's generator: every distinct
**    slice drawn in 2000 seeded batches equals the set torchrl drew in 3000
**    (strict_length, short slices, pad_output with its mask, span True, an
**    integer span, span True with short slices and cached boundaries); each slice also carries the
**    truncated mark at its last real item. With these sizes (at most 40
**    distinct slices, each of probability above 1/200 per draw) a slice is
**    missed with probability below 1e-8: the check is seeded, so stable.
**  - The refusals: pad_output with strict_length, a span not below the
**    slice length, span values below -1, options of another sampler.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_test_util.h"

#define CAP 10

#define buffer tdt_rb_create

static void extend_td(loom_object *rb, loom_object *td)
{
    char src[48];
    snprintf(src, sizeof src, "source=%lld", (long long)tdt_id(td));
    loom_tensor *index = NULL;
    if (tdt_call(rb, "rl.rb_extend", NULL, &index, src, NULL) != LOOM_OK)
        fail_msg("rl.rb_extend: %s", loom_last_error());
    loom_tensor_free(index);
}

/* The extends of scenario scn (items.npy: episode, done, extend number). */
static void fill(loom_object *rb, const char *scn, int with_episode)
{
    char rel[96];
    snprintf(rel, sizeof rel, "rl/slice/%s_items", scn);
    loom_tensor *items = tu_npy(rel);
    const int64_t *v = items->data, n_all = items->shape[0];
    for (int64_t at = 0; at < n_all;) {
        int64_t n = 0;
        while (at + n < n_all && v[3 * (at + n) + 2] == v[3 * at + 2])
            n++;
        double ep[16], done[16], obs[16];
        for (int64_t k = 0; k < n; k++) {
            ep[k] = (double)v[3 * (at + k)];
            done[k] = (double)v[3 * (at + k) + 1];
            obs[k] = (double)k;
        }
        const int64_t s2[2] = { n, 1 };
        loom_object *td = tdt_new(1, &n);
        loom_tensor *d = tdt_tensor(LOOM_DTYPE_BOOL, 2, s2, done), *o = tdt_tensor(LOOM_DTYPE_F32, 2, s2, obs);
        tdt_set(td, "next.done", d);
        tdt_set(td, "obs", o);
        if (with_episode) {
            loom_tensor *e = tdt_tensor(LOOM_DTYPE_I64, 1, &n, ep);
            tdt_set(td, "episode", e);
            loom_tensor_free(e);
        }
        extend_td(rb, td);
        loom_object_free(td);
        loom_tensor_free(d);
        loom_tensor_free(o);
        at += n;
    }
    loom_tensor_free(items);
}

static void test_trajectory_bounds(void **state)
{
    (void)state;
    static const char *const scns[] = { "partial", "wrapped", "ends_lost" };
    for (int s = 0; s < 3; s++)
        for (int by_traj = 0; by_traj < 2; by_traj++) {
            const char *attrs[] = { "max_size=10", "sampler=slice", "slice_len=2",
                                    by_traj ? "traj_key=episode" : "end_key=next.done", NULL };
            loom_object *rb = buffer(NULL, attrs);
            fill(rb, scns[s], by_traj);
            char rel[96];
            snprintf(rel, sizeof rel, "rl/slice/%s_%s_bounds", scns[s], by_traj ? "traj" : "end");
            loom_tensor *want = tu_npy(rel);
            const int64_t n = want->shape[1], *w = want->data;
            loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
            opt.object = rb;
            loom_tensor *out[3] = { NULL, NULL, NULL };
            if (loom_run("rl.rb_trajectories", NULL, 0, NULL, out, 3, &opt) != LOOM_OK)
                fail_msg("rl.rb_trajectories: %s", loom_last_error());
            for (int k = 0; k < 3; k++) {
                if (out[k]->shape[0] != n)
                    fail_msg("%s: %lld trajectories, torchrl %lld", rel, (long long)out[k]->shape[0], (long long)n);
                for (int64_t i = 0; i < n; i++)
                    if (((const int64_t *)out[k]->data)[i] != w[k * n + i])
                        fail_msg("%s: %s[%lld] = %lld, torchrl %lld", rel, k == 0 ? "start" : k == 1 ? "stop" : "length",
                                 (long long)i, (long long)((const int64_t *)out[k]->data)[i], (long long)w[k * n + i]);
                loom_tensor_free(out[k]);
            }
            loom_tensor_free(want);
            loom_object_free(rb);
        }
}

/* A set of slices: rows of up to 8 values, -1 after the end. */
typedef struct slice_set {
    int64_t row[256][8];
    int n;
} slice_set;

static int row_cmp(const void *a, const void *b) { return memcmp(a, b, 8 * sizeof(int64_t)); }

static void set_add(slice_set *s, const int64_t *v, int64_t len)
{
    int64_t r[8];
    for (int k = 0; k < 8; k++)
        r[k] = k < len ? v[k] : -1;
    for (int i = 0; i < s->n; i++)
        if (memcmp(s->row[i], r, sizeof r) == 0)
            return;
    assert_true(s->n < 256);
    memcpy(s->row[s->n++], r, sizeof r);
}

static void check_support(const char *name, const char *const *extra, int padded)
{
    const char *attrs[12] = { "max_size=10", "sampler=slice", "slice_len=4", "traj_key=episode", "seed=11" };
    int na = 5;
    for (const char *const *e = extra; *e != NULL; e++)
        attrs[na++] = *e;
    attrs[na] = NULL;
    loom_object *rb = buffer(NULL, attrs);
    fill(rb, "wrapped", 1);
    loom_object *dest = tdt_new(0, NULL);
    char d[48];
    snprintf(d, sizeof d, "dest=%lld", (long long)tdt_id(dest));
    slice_set got = { .n = 0 };
    for (int r = 0; r < 2000; r++) {
        loom_tensor *ix = NULL;
        if (tdt_call(rb, "rl.rb_sample", NULL, &ix, "batch_size=8", d, NULL) != LOOM_OK)
            fail_msg("%s: rl.rb_sample: %s", name, loom_last_error());
        loom_tensor *trunc = tdt_get(dest, "next.truncated");
        loom_tensor *mask = padded ? tdt_get(dest, "collector.mask") : NULL;
        const int64_t n = ix->shape[0], *x = ix->data;
        const uint8_t *t = trunc->data, *m = mask != NULL ? mask->data : NULL;
        assert_int_equal(trunc->shape[0], n);
        int64_t cur[8], len = 0;
        for (int64_t i = 0; i < n; i++) {
            assert_true(len < 8);
            cur[len++] = m != NULL ? 2 * x[i] + m[i] : x[i];
            /* padded: slices of 4, truncated at the last real item */
            if (m != NULL && i % 4 == 3) {
                int64_t real = 0;
                while (real < 4 && m[i - 3 + real])
                    real++;
                if (real == 0 || !t[i - 4 + real])
                    fail_msg("%s: a padded slice is not truncated at its last real item", name);
                set_add(&got, cur, len);
                len = 0;
            } else if (m == NULL && t[i]) {
                set_add(&got, cur, len);
                len = 0;
            }
        }
        if (len != 0)
            fail_msg("%s: the sample does not end with a truncated item", name);
        loom_tensor_free(ix);
        loom_tensor_free(trunc);
        loom_tensor_free(mask);
    }
    char rel[96];
    snprintf(rel, sizeof rel, "rl/slice/support_%s", name);
    loom_tensor *want = tu_npy(rel);
    slice_set ref = { .n = (int)want->shape[0] };
    assert_true(ref.n <= 256 && want->shape[1] <= 8);
    for (int i = 0; i < ref.n; i++)
        for (int k = 0; k < 8; k++)
            ref.row[i][k] = k < want->shape[1] ? ((const int64_t *)want->data)[i * want->shape[1] + k] : -1;
    qsort(got.row, (size_t)got.n, sizeof got.row[0], row_cmp);
    qsort(ref.row, (size_t)ref.n, sizeof ref.row[0], row_cmp);
    for (int i = 0, j = 0; i < got.n || j < ref.n;) {
        int c = i == got.n ? 1 : j == ref.n ? -1 : row_cmp(got.row[i], ref.row[j]);
        if (c != 0) {
            const int64_t *r = c < 0 ? got.row[i] : ref.row[j];
            fail_msg("%s: the slice [%lld %lld %lld %lld ...] is drawn by %s only", name, (long long)r[0],
                     (long long)r[1], (long long)r[2], (long long)r[3], c < 0 ? "loom" : "torchrl");
        }
        i++;
        j++;
    }
    loom_tensor_free(want);
    loom_object_free(dest);
    loom_object_free(rb);
}

static void test_slice_support(void **state)
{
    (void)state;
    check_support("strict", (const char *[]){ NULL }, 0);
    check_support("loose", (const char *[]){ "strict_length=false", NULL }, 0);
    check_support("padded", (const char *[]){ "strict_length=false", "pad_output=true", NULL }, 1);
    check_support("span_all", (const char *[]){ "span=-1", NULL }, 0);
    check_support("span_2_all", (const char *[]){ "span=2,-1", NULL }, 0);
    check_support("span_int", (const char *[]){ "span=1,2", NULL }, 0);
    check_support("span_loose", (const char *[]){ "span=-1", "strict_length=false", "cache_values=true", NULL }, 0);
}

static void prio_script(const char *mode)
{
    const char *attrs[] = { "max_size=10", "sampler=prioritized", "alpha=0.7", "beta=0.5",
                            strcmp(mode, "within") == 0 ? "max_priority_within_buffer=true"
                                                        : "max_priority_within_buffer=false", NULL };
    loom_object *rb = buffer(NULL, attrs);
    /* the generator's PRIO_STEPS: extend n, or update_priority(index, priority) */
    static const struct {
        int64_t n, index[3];
        double prio[3];
        int m;
    } steps[] = {
        { 5, { 0 }, { 0 }, 0 },  { 0, { 0, 2, 4 }, { 5.0, 0.5, 2.0 }, 3 }, { 2, { 0 }, { 0 }, 0 },
        { 0, { 0 }, { 0.25 }, 1 }, { 4, { 0 }, { 0 }, 0 },  { 0, { 3, 6 }, { 7.5, 1.0 }, 2 },
        { 3, { 0 }, { 0 }, 0 },  { 0, { 3 }, { 0.125 }, 1 }, { 1, { 0 }, { 0 }, 0 },
    };
    char rel[64];
    snprintf(rel, sizeof rel, "rl/slice/prio_%s", mode);
    loom_tensor *want = tu_npy(rel);
    assert_int_equal(want->shape[0], (int64_t)(sizeof steps / sizeof steps[0]));
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = rb;
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        if (steps[s].n > 0) {
            int64_t n = steps[s].n;
            const int64_t s2[2] = { n, 1 };
            loom_object *td = tdt_new(1, &n);
            loom_tensor *o = tdt_tensor(LOOM_DTYPE_F32, 2, s2, (const double[8]){ 0 });
            tdt_set(td, "obs", o);
            extend_td(rb, td);
            loom_tensor_free(o);
            loom_object_free(td);
        } else {
            int64_t m = steps[s].m;
            double ix[3] = { (double)steps[s].index[0], (double)steps[s].index[1], (double)steps[s].index[2] };
            loom_tensor *i = tdt_tensor(LOOM_DTYPE_I64, 1, &m, ix), *p = tdt_tensor(LOOM_DTYPE_F32, 1, &m, steps[s].prio);
            const loom_tensor *in[2] = { i, p };
            if (loom_run("rl.rb_update_priority", in, 2, NULL, NULL, 0, &opt) != LOOM_OK)
                fail_msg("rl.rb_update_priority: %s", loom_last_error());
            loom_tensor_free(i);
            loom_tensor_free(p);
        }
        loom_tensor *got = NULL;
        if (tdt_call(rb, "rl.rb_priorities", NULL, &got, NULL) != LOOM_OK)
            fail_msg("rl.rb_priorities: %s", loom_last_error());
        const double *w = (const double *)want->data + s * (CAP + 1);
        for (int64_t k = 0; k < CAP; k++) {
            const double g = k < got->shape[0] ? ((const double *)got->data)[k] : 0.0;
            const float wf = (float)w[k];
            const double up = (double)(nextafterf(wf, INFINITY) - wf);
            if (fabs(g - (double)wf) > up)
                fail_msg("%s step %zu: leaf %lld = %.9g, torchrl %.9g", mode, s, (long long)k, g, (double)wf);
        }
        loom_tensor_free(got);
    }
    loom_tensor_free(want);
    loom_object_free(rb);
}

static void test_max_priority_within_buffer(void **state)
{
    (void)state;
    prio_script("within");
    prio_script("ever");
}

static void test_refusals(void **state)
{
    (void)state;
    loom_status st;
    assert_null(buffer(&st, (const char *[]){ "max_size=10", "sampler=slice", "slice_len=4", "pad_output=true", NULL }));
    tdt_assert_fails(st, LOOM_EINVAL, "pad_output=true is incompatible with strict_length=true");
    assert_null(buffer(&st, (const char *[]){ "max_size=10", "sampler=slice", "slice_len=4", "span=-2", NULL }));
    tdt_assert_fails(st, LOOM_EINVAL, "span[0] = -2");
    assert_null(buffer(&st, (const char *[]){ "max_size=10", "sampler=slice", "slice_len=4", "span=1,2,3", NULL }));
    tdt_assert_fails(st, LOOM_EINVAL, "span: one value or [left, right]");
    assert_null(buffer(&st, (const char *[]){ "max_size=10", "sampler=random", "span=1", NULL }));
    tdt_assert_fails(st, LOOM_EINVAL, "options of sampler=slice");
    assert_null(buffer(&st, (const char *[]){ "max_size=10", "max_priority_within_buffer=true", NULL }));
    tdt_assert_fails(st, LOOM_EINVAL, "an option of sampler=prioritized");
    loom_object *rb = buffer(NULL, (const char *[]){ "max_size=10", "sampler=slice", "slice_len=4", "span=4", NULL });
    fill(rb, "wrapped", 1);
    loom_tensor *ix = NULL;
    tdt_assert_fails(tdt_call(rb, "rl.rb_sample", NULL, &ix, "batch_size=8", NULL), LOOM_EINVAL,
                     "strictly lower than the slice length 4");
    loom_object_free(rb);
    rb = buffer(NULL, (const char *[]){ "max_size=10", NULL });
    loom_tensor *out[3] = { NULL, NULL, NULL };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.object = rb;
    tdt_assert_fails(loom_run("rl.rb_trajectories", NULL, 0, NULL, out, 3, &opt), LOOM_EINVAL, "not slice");
    loom_object_free(rb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trajectory_bounds),
        cmocka_unit_test(test_slice_support),
        cmocka_unit_test(test_max_priority_within_buffer),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, tu_setup, tu_teardown);
}
