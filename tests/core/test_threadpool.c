/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_threadpool.c - the fork-join pool: every index exactly once, thread
** indices in range, nested and concurrent calls (several host threads with
** jobs in flight at once, each getting helpers), budgets, no lost
** wake-ups, stop while idle or busy, restart, topology.
** Also run under ThreadSanitizer (suite 'threads').
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

typedef struct coverage {
    int64_t n, grain;
    unsigned char *hits;        /* one byte per index: chunks are disjoint */
    _Atomic int32_t max_index;
    _Atomic int32_t bad_chunks; /* empty, out of range or smaller than grain */
    _Atomic int64_t calls;
} coverage;

static void mark(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    coverage *c = user;
    int32_t seen = atomic_load(&c->max_index);

    atomic_fetch_add(&c->calls, 1);
    if (begin < 0 || end > c->n || begin >= end || (end - begin < c->grain && end != c->n))
        atomic_fetch_add(&c->bad_chunks, 1);
    for (int64_t i = begin; i < end && i < c->n && i >= 0; i++)
        c->hits[i]++;
    while (thread_index > seen && !atomic_compare_exchange_weak(&c->max_index, &seen, thread_index))
        ;
}

/* Runs one job and checks that it covered [0, n) exactly once. */
static void check_cover(loom_exec_ctx *ctx, int64_t n, int64_t grain, int32_t max_threads)
{
    coverage c = { .n = n, .grain = grain < 1 ? 1 : grain };

    c.hits = calloc((size_t)(n > 0 ? n : 1), 1);
    assert_non_null(c.hits);
    assert_int_equal(loom__parallel_for(ctx, n, grain, mark, &c), LOOM_OK);
    for (int64_t i = 0; i < n; i++) {
        if (c.hits[i] != 1)
            fail_msg("n=%lld grain=%lld: index %lld hit %d times",
                     (long long)n, (long long)grain, (long long)i, c.hits[i]);
    }
    assert_int_equal(atomic_load(&c.bad_chunks), 0);
    assert_true(atomic_load(&c.max_index) < max_threads);
    if (n == 0)
        assert_int_equal(atomic_load(&c.calls), 0);
    free(c.hits);
}

static int start4(void **state)
{
    (void)state;
    return loom__pool_start(4) == LOOM_OK ? 0 : -1;
}

static int stop(void **state)
{
    (void)state;
    loom__pool_stop();
    return 0;
}

static void every_index_exactly_once_for_many_shapes(void **state)
{
    const int64_t sizes[] = { 0, 1, 2, 3, 7, 63, 64, 65, 256, 257, 1000, 4099, 100003 };
    const int64_t grains[] = { 0, 1, 2, 7, 64, 1000, 5000, 1 << 20 };
    (void)state;
    assert_int_equal(loom__pool_size(), 4);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof grains / sizeof grains[0]; j++)
            check_cover(NULL, sizes[i], grains[j], 4);
}

static void thread_budget_of_the_context_bounds_thread_indices(void **state)
{
    loom_exec_ctx ctx = { .struct_size = sizeof ctx };
    (void)state;
    for (int32_t budget = 1; budget <= 6; budget++) {
        ctx.n_threads = budget;
        for (int rep = 0; rep < 20; rep++)
            check_cover(&ctx, 10000, 1, budget < 4 ? budget : 4);
    }
}

typedef struct who { pthread_t caller; _Atomic int32_t foreign; } who;

static void note_thread(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    who *w = user;
    (void)begin; (void)end;
    if (!pthread_equal(pthread_self(), w->caller) || thread_index != 0)
        atomic_fetch_add(&w->foreign, 1);
}

static void one_chunk_runs_inline_on_the_caller(void **state)
{
    who w = { .caller = pthread_self() };
    (void)state;
    assert_int_equal(loom__parallel_for(NULL, 10, 10, note_thread, &w), LOOM_OK);
    assert_int_equal(loom__parallel_for(NULL, 5, 100, note_thread, &w), LOOM_OK);
    assert_int_equal(loom__parallel_for(NULL, 1, 1, note_thread, &w), LOOM_OK);
    assert_int_equal(atomic_load(&w.foreign), 0);
}

/* Each chunk waits until `parties` chunks have started: only true
** parallelism gets past the wait (bounded, so a broken pool fails instead
** of hanging). */
typedef struct meet { int32_t parties; _Atomic int32_t arrived; _Atomic int32_t met; } meet;

static void rendezvous(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    meet *m = user;
    const int32_t parties = m->parties > 0 ? m->parties : 2;
    struct timespec t0, now;
    (void)begin; (void)end; (void)thread_index;

    atomic_fetch_add(&m->arrived, 1);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        if (atomic_load(&m->arrived) >= parties) {
            atomic_fetch_add(&m->met, 1);
            return;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - t0.tv_sec < 20);
}

static void two_chunks_run_at_the_same_time(void **state)
{
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .n_threads = 2 };
    meet m = { 0 };
    (void)state;
    assert_int_equal(loom__parallel_for(&ctx, 2, 1, rendezvous, &m), LOOM_OK);
    assert_int_equal(atomic_load(&m.met), 2);
}

typedef struct nested { int64_t inner_n; _Atomic int64_t total; _Atomic int32_t bad; } nested;

static void inner(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    nested *s = user;
    if (thread_index != 0)
        atomic_fetch_add(&s->bad, 1);       /* nested calls run inline */
    atomic_fetch_add(&s->total, end - begin);
}

static void outer(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    nested *s = user;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        if (loom__parallel_for(NULL, s->inner_n, 1, inner, s) != LOOM_OK)
            atomic_fetch_add(&s->bad, 1);
}

static void nested_calls_run_inline_and_cover_everything(void **state)
{
    nested s = { .inner_n = 97 };
    (void)state;
    assert_int_equal(loom__parallel_for(NULL, 64, 1, outer, &s), LOOM_OK);
    assert_int_equal(atomic_load(&s.bad), 0);
    assert_int_equal(atomic_load(&s.total), 64 * 97);
}

typedef struct sum_job { const int32_t *v; _Atomic int64_t sum; } sum_job;

static void add_up(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    sum_job *j = user;
    int64_t s = 0;
    (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        s += j->v[i];
    atomic_fetch_add(&j->sum, s);
}

#define HOST_THREADS 8
#define N_VALUES 20000

static int32_t values[N_VALUES];

static void *host_thread(void *arg)
{
    intptr_t failures = 0;
    (void)arg;
    for (int rep = 0; rep < 200; rep++) {
        sum_job j = { .v = values };
        int64_t n = 1 + (rep * 997) % N_VALUES;
        if (loom__parallel_for(NULL, n, 1 + rep % 50, add_up, &j) != LOOM_OK
            || atomic_load(&j.sum) != n * (n - 1) / 2)
            failures++;
    }
    return (void *)failures;
}

static void eight_host_threads_at_once_get_correct_results(void **state)
{
    pthread_t t[HOST_THREADS];
    (void)state;
    for (int32_t i = 0; i < N_VALUES; i++)
        values[i] = i;
    for (int i = 0; i < HOST_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, host_thread, NULL), 0);
    for (int i = 0; i < HOST_THREADS; i++) {
        void *failures;
        assert_int_equal(pthread_join(t[i], &failures), 0);
        assert_int_equal((intptr_t)failures, 0);
    }
}

static void many_small_jobs_back_to_back(void **state)
{
    (void)state;
    for (int rep = 0; rep < 5000; rep++) {
        sum_job j = { .v = values };
        for (int32_t i = 0; i < 64; i++)
            values[i] = i;
        assert_int_equal(loom__parallel_for(NULL, 64, 1, add_up, &j), LOOM_OK);
        assert_int_equal(atomic_load(&j.sum), 64 * 63 / 2);
    }
}

/* ------------------------------------------------ concurrent host threads */

/* Per call: one hit counter per index, the budget, the worst index seen. */
typedef struct cover_call {
    int64_t n, grain;
    int32_t budget;
    _Atomic uint8_t *hits;
    _Atomic int32_t bad;            /* index out of [0, budget), bad chunk */
    _Atomic int64_t sum;
} cover_call;

static void cover_mark(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    cover_call *c = user;
    int64_t s = 0;

    if (thread_index < 0 || thread_index >= c->budget || begin < 0 || end > c->n || begin >= end
        || (end - begin < c->grain && end != c->n))
        atomic_fetch_add(&c->bad, 1);
    for (int64_t i = begin; i < end && i < c->n && i >= 0; i++) {
        atomic_fetch_add_explicit(&c->hits[i], 1, memory_order_relaxed);
        s += i;
    }
    atomic_fetch_add(&c->sum, s);
}

typedef struct hammer {
    int32_t id, reps, pool;
    int64_t max_n;
    intptr_t failures;
    char why[160];
} hammer;

/* Many calls of assorted sizes, grains and budgets, each checked. */
static void *hammer_main(void *arg)
{
    hammer *h = arg;
    _Atomic uint8_t *hits = calloc((size_t)h->max_n, 1);
    uint64_t r = 0x9e3779b97f4a7c15u * (uint64_t)(h->id + 1);

    if (hits == NULL) {
        h->failures++;
        return NULL;
    }
    for (int rep = 0; rep < h->reps && h->failures == 0; rep++) {
        loom_exec_ctx ctx = { .struct_size = sizeof ctx };
        cover_call c = { .hits = hits };
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        c.n = 1 + (int64_t)(r % (uint64_t)h->max_n);
        c.grain = 1 + (int64_t)((r >> 20) % 64);
        ctx.n_threads = (int32_t)((r >> 40) % 6);       /* 0: the whole pool */
        c.budget = ctx.n_threads > 0 && ctx.n_threads < h->pool ? ctx.n_threads : h->pool;
        memset((void *)hits, 0, (size_t)c.n);
        if (loom__parallel_for(&ctx, c.n, c.grain, cover_mark, &c) != LOOM_OK) {
            snprintf(h->why, sizeof h->why, "call %d failed: %s", rep, loom_last_error());
            h->failures++;
        } else if (atomic_load(&c.bad) != 0) {
            snprintf(h->why, sizeof h->why, "call %d: %d bad chunks or indices (budget %d)",
                     rep, (int)atomic_load(&c.bad), (int)c.budget);
            h->failures++;
        } else if (atomic_load(&c.sum) != c.n * (c.n - 1) / 2) {
            snprintf(h->why, sizeof h->why, "call %d: wrong sum", rep);
            h->failures++;
        }
        for (int64_t i = 0; i < c.n && h->failures == 0; i++) {
            if (atomic_load_explicit(&hits[i], memory_order_relaxed) != 1) {
                snprintf(h->why, sizeof h->why, "call %d n=%lld: index %lld hit %d times", rep,
                         (long long)c.n, (long long)i, (int)atomic_load(&hits[i]));
                h->failures++;
            }
        }
    }
    free((void *)hits);
    return NULL;
}

static void run_hammers(int32_t n_hosts, int32_t reps, int64_t max_n)
{
    pthread_t t[16];
    hammer h[16];

    assert_true(n_hosts <= 16);
    for (int32_t i = 0; i < n_hosts; i++) {
        h[i] = (hammer){ .id = i, .reps = reps, .pool = loom__pool_size(), .max_n = max_n };
        assert_int_equal(pthread_create(&t[i], NULL, hammer_main, &h[i]), 0);
    }
    for (int32_t i = 0; i < n_hosts; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    for (int32_t i = 0; i < n_hosts; i++)
        if (h[i].failures != 0)
            fail_msg("host thread %d: %s", (int)i, h[i].why);
}

static void four_host_threads_cover_every_index_exactly_once(void **state)
{
    (void)state;
    run_hammers(4, 400, 20000);
}

static void eight_host_threads_cover_every_index_exactly_once(void **state)
{
    (void)state;
    run_hammers(8, 250, 5000);
}

/* Three host threads each run a two-chunk job with a budget of 2, and all
** six chunks must be running at once to get past their meeting: each
** caller gets a helper of its own (the pool has 3 workers) instead of
** being run inline behind the first. */
typedef struct pair_caller { meet *m; loom_status st; } pair_caller;

static void *pair_main(void *arg)
{
    pair_caller *p = arg;
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .n_threads = 2 };
    p->st = loom__parallel_for(&ctx, 2, 1, rendezvous, p->m);
    return NULL;
}

static void concurrent_callers_each_get_helpers(void **state)
{
    pthread_t t[3];
    pair_caller p[3];
    (void)state;
    assert_int_equal(loom__pool_size(), 4);
    for (int round = 0; round < 20; round++) {
        meet m = { .parties = 6 };
        for (int i = 0; i < 3; i++) {
            p[i] = (pair_caller){ .m = &m };
            assert_int_equal(pthread_create(&t[i], NULL, pair_main, &p[i]), 0);
        }
        for (int i = 0; i < 3; i++) {
            assert_int_equal(pthread_join(t[i], NULL), 0);
            assert_int_equal(p[i].st, LOOM_OK);
        }
        if (atomic_load(&m.met) != 6)
            fail_msg("round %d: only %d of 6 chunks ran at once", round, (int)atomic_load(&m.met));
    }
}

/* A budget of 1 runs on the caller only, with index 0, even while the
** workers are busy with other callers' jobs. */
typedef struct busy { atomic_bool stop; _Atomic int64_t jobs; } busy;

static void spin_a_little(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    volatile int64_t x = 0;
    (void)user; (void)thread_index;
    for (int64_t i = begin; i < end; i++)
        for (int k = 0; k < 50; k++)
            x += i;
}

static void *keep_busy(void *arg)
{
    busy *b = arg;
    while (!atomic_load(&b->stop)) {
        loom__parallel_for(NULL, 4096, 16, spin_a_little, NULL);
        atomic_fetch_add(&b->jobs, 1);
    }
    return NULL;
}

static void a_budget_of_one_runs_only_on_the_caller(void **state)
{
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .n_threads = 1 };
    busy b = { 0 };
    pthread_t t[2];
    (void)state;
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, keep_busy, &b), 0);
    while (atomic_load(&b.jobs) < 4)
        sched_yield();
    for (int rep = 0; rep < 200; rep++) {
        who w = { .caller = pthread_self() };
        assert_int_equal(loom__parallel_for(&ctx, 1000, 1, note_thread, &w), LOOM_OK);
        assert_int_equal(atomic_load(&w.foreign), 0);
        check_cover(&ctx, 1000, 1, 1);
    }
    atomic_store(&b.stop, true);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
}

/* A chunk that calls parallel_for again (as a kernel calling another op
** through the core would): the inner call runs inline, on a worker as well
** as on the caller, and does not deadlock. The outer chunks meet in pairs,
** so one of them surely runs on a worker. */
typedef struct nest2 {
    meet m;
    _Atomic int32_t on_worker, bad;
    _Atomic int64_t total;
    pthread_t caller;
} nest2;

static void nest2_inner(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    nest2 *s = user;
    if (thread_index != 0)
        atomic_fetch_add(&s->bad, 1);
    atomic_fetch_add(&s->total, end - begin);
}

static void nest2_outer(void *user, int64_t begin, int64_t end, int32_t thread_index)
{
    nest2 *s = user;
    rendezvous(&s->m, begin, end, thread_index);
    if (!pthread_equal(pthread_self(), s->caller))
        atomic_fetch_add(&s->on_worker, 1);
    for (int64_t i = begin; i < end; i++) {
        who w = { .caller = pthread_self() };
        if (loom__parallel_for(NULL, 1000, 1, nest2_inner, s) != LOOM_OK
            || loom__parallel_for(NULL, 1000, 1, note_thread, &w) != LOOM_OK
            || atomic_load(&w.foreign) != 0)
            atomic_fetch_add(&s->bad, 1);       /* not inline on this thread */
    }
}

static void *nest2_main(void *arg)
{
    nest2 *s = arg;
    loom_exec_ctx ctx = { .struct_size = sizeof ctx, .n_threads = 2 };
    s->caller = pthread_self();
    s->m.parties = 2;
    if (loom__parallel_for(&ctx, 2, 1, nest2_outer, s) != LOOM_OK)
        atomic_fetch_add(&s->bad, 1);
    return NULL;
}

static void nested_calls_from_a_worker_run_inline(void **state)
{
    nest2 s[3];
    pthread_t t[3];
    (void)state;
    for (int round = 0; round < 10; round++) {
        memset(s, 0, sizeof s);
        nest2_main(&s[0]);                      /* alone */
        assert_int_equal(atomic_load(&s[0].bad), 0);
        assert_int_equal(atomic_load(&s[0].on_worker), 1);
        assert_int_equal(atomic_load(&s[0].total), 2 * 1000);
        memset(s, 0, sizeof s);
        for (int i = 0; i < 3; i++)             /* three host threads at once */
            assert_int_equal(pthread_create(&t[i], NULL, nest2_main, &s[i]), 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(pthread_join(t[i], NULL), 0);
            assert_int_equal(atomic_load(&s[i].bad), 0);
            assert_int_equal(atomic_load(&s[i].on_worker), 1);
            assert_int_equal(atomic_load(&s[i].total), 2 * 1000);
        }
    }
}

/* No lost wake-ups: tiny jobs that each need a helper (the two chunks meet),
** after pauses shorter than, about as long as, and longer than the workers'
** spin, from one and from several host threads at once. A lost wake-up of a
** worker fails the meeting; one of a caller hangs (the test's timeout). */
static void pause_us(long us)
{
    struct timespec ts = { 0, us * 1000 };
    if (us > 0)
        nanosleep(&ts, NULL);
}

static void *tiny_pairs(void *arg)
{
    intptr_t failures = 0;
    int id = (int)(intptr_t)arg;
    for (int rep = 0; rep < 300; rep++) {
        loom_exec_ctx ctx = { .struct_size = sizeof ctx, .n_threads = 2 };
        meet m = { .parties = 2 };
        sum_job j = { .v = values };
        static const long pauses[] = { 0, 0, 5, 50, 200, 1000 };
        pause_us(pauses[(rep + id) % 6]);
        if (loom__parallel_for(&ctx, 2, 1, rendezvous, &m) != LOOM_OK || atomic_load(&m.met) != 2)
            failures++;
        if (loom__parallel_for(NULL, 64, 1, add_up, &j) != LOOM_OK || atomic_load(&j.sum) != 64 * 63 / 2)
            failures++;
    }
    return (void *)failures;
}

static void no_lost_wakeups_with_tiny_jobs(void **state)
{
    pthread_t t[3];
    void *failures;
    (void)state;
    for (int32_t i = 0; i < 64; i++)
        values[i] = i;
    assert_null(tiny_pairs((void *)(intptr_t)0));
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, tiny_pairs, (void *)(intptr_t)i), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pthread_join(t[i], &failures), 0);
        assert_int_equal((intptr_t)failures, 0);
    }
}

/* Stopping an idle pool: right after a job (workers spinning), after a
** pause (workers asleep), and many start/stop cycles. */
static void stop_while_idle(void **state)
{
    (void)state;
    for (int cycle = 0; cycle < 30; cycle++) {
        assert_int_equal(loom__pool_start(cycle % 3 + 2), LOOM_OK);
        if (cycle % 2 == 0)
            check_cover(NULL, 1000, 1, cycle % 3 + 2);
        if (cycle % 3 == 0)
            pause_us(2000);
        loom__pool_stop();
        assert_int_equal(loom__pool_size(), 0);
    }
    assert_int_equal(loom__pool_start(4), LOOM_OK);
    pause_us(5000);
    loom__pool_stop();
    check_cover(NULL, 1000, 1, 1);               /* stopped: runs inline */
}

/* loom__pool_stop while host threads are calling: their calls finish (on
** the pool or inline) with correct results. */
static void stop_while_callers_are_running(void **state)
{
    pthread_t t[3];
    (void)state;
    for (int32_t i = 0; i < N_VALUES; i++)
        values[i] = i;
    assert_int_equal(loom__pool_start(4), LOOM_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&t[i], NULL, host_thread, NULL), 0);
    pause_us(2000);
    loom__pool_stop();
    assert_int_equal(loom__pool_start(3), LOOM_OK);
    for (int i = 0; i < 3; i++) {
        void *failures;
        assert_int_equal(pthread_join(t[i], &failures), 0);
        assert_int_equal((intptr_t)failures, 0);
    }
    loom__pool_stop();
}

/* The child of a fork has no workers: its calls must run inline, not wait. */
static void a_forked_child_runs_jobs_inline(void **state)
{
    int status = 0;
    pid_t pid;
    (void)state;
    for (int32_t i = 0; i < N_VALUES; i++)
        values[i] = i;
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        sum_job j = { .v = values };
        int ok = loom__pool_size() == 0
              && loom__parallel_for(NULL, N_VALUES, 1, add_up, &j) == LOOM_OK
              && atomic_load(&j.sum) == (int64_t)N_VALUES * (N_VALUES - 1) / 2;
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    check_cover(NULL, 10000, 1, 4);             /* the parent's pool still works */
}

static void bad_arguments_fail_with_a_message(void **state)
{
    coverage c = { 0 };
    (void)state;
    assert_int_equal(loom__parallel_for(NULL, -1, 1, mark, &c), LOOM_EINVAL);
    assert_non_null(strstr(loom_last_error(), "negative"));
    assert_int_equal(loom__parallel_for(NULL, 10, 1, NULL, &c), LOOM_EINVAL);
    assert_int_equal(atomic_load(&c.calls), 0);
}

static void restart_with_another_size(void **state)
{
    (void)state;
    loom__pool_stop();
    assert_int_equal(loom__pool_size(), 0);
    check_cover(NULL, 1000, 1, 1);              /* stopped: runs inline */
    assert_int_equal(loom__pool_start(3), LOOM_OK);
    assert_int_equal(loom__pool_size(), 3);
    check_cover(NULL, 1000, 1, 3);
    assert_int_equal(loom__pool_start(3), LOOM_OK);   /* same size: kept */
    assert_int_equal(loom__pool_start(2), LOOM_OK);   /* other size: rebuilt */
    assert_int_equal(loom__pool_size(), 2);
    check_cover(NULL, 1000, 1, 2);
    loom__pool_stop();
    loom__pool_stop();                           /* twice is harmless */
    assert_int_equal(loom__pool_start(0), LOOM_OK);   /* 0: physical cores */
    assert_int_equal(loom__pool_size(), loom__physical_cores());
    check_cover(NULL, 1000, 1, loom__physical_cores());
    loom__pool_stop();
}

static void topology_is_described(void **state)
{
    const char *text = loom__topology_text();
    (void)state;
    assert_non_null(text);
    assert_true(strlen(text) > 10);
    if (strncmp(text, "hwloc:", 6) == 0) {      /* built with hwloc */
        assert_non_null(strstr(text, " core"));
        assert_non_null(strstr(text, "NUMA node"));
        assert_non_null(strstr(text, "caches:"));
    } else {
        assert_non_null(strstr(text, "hwloc"));   /* says why there is no topology */
    }
    assert_true(loom__physical_cores() >= 1);
    loom__pool_stop();                           /* releases the topology */
    assert_true(loom__physical_cores() >= 1);
    loom__pool_stop();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_arguments_fail_with_a_message),
        cmocka_unit_test_setup_teardown(every_index_exactly_once_for_many_shapes, start4, stop),
        cmocka_unit_test_setup_teardown(thread_budget_of_the_context_bounds_thread_indices, start4, stop),
        cmocka_unit_test_setup_teardown(one_chunk_runs_inline_on_the_caller, start4, stop),
        cmocka_unit_test_setup_teardown(two_chunks_run_at_the_same_time, start4, stop),
        cmocka_unit_test_setup_teardown(nested_calls_run_inline_and_cover_everything, start4, stop),
        cmocka_unit_test_setup_teardown(eight_host_threads_at_once_get_correct_results, start4, stop),
        cmocka_unit_test_setup_teardown(many_small_jobs_back_to_back, start4, stop),
        cmocka_unit_test_setup_teardown(four_host_threads_cover_every_index_exactly_once, start4, stop),
        cmocka_unit_test_setup_teardown(eight_host_threads_cover_every_index_exactly_once, start4, stop),
        cmocka_unit_test_setup_teardown(concurrent_callers_each_get_helpers, start4, stop),
        cmocka_unit_test_setup_teardown(a_budget_of_one_runs_only_on_the_caller, start4, stop),
        cmocka_unit_test_setup_teardown(nested_calls_from_a_worker_run_inline, start4, stop),
        cmocka_unit_test_setup_teardown(no_lost_wakeups_with_tiny_jobs, start4, stop),
        cmocka_unit_test(stop_while_idle),
        cmocka_unit_test(stop_while_callers_are_running),
        cmocka_unit_test_setup_teardown(a_forked_child_runs_jobs_inline, start4, stop),
        cmocka_unit_test(restart_with_another_size),
        cmocka_unit_test(topology_is_described),
    };
    return cmocka_run_group_tests_name("threadpool", tests, NULL, NULL);
}
