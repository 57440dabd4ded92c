/* SPDX-License-Identifier: BSD-3-Clause */
/*
** test_onednn.c - the onednn matmul kernel's thread budget, its plans and
** its re-entrancy, against the cpu kernel.
**
** Budget: oneDNN runs on the OpenMP runtime, whose workers are threads of
** this process. A call with budget T (capped by the calling thread's OpenMP
** setting, OMP_NUM_THREADS) may use the calling thread and at most T-1
** OpenMP workers; workers are made per calling thread on its first parallel
** region and then kept. So each budget check runs in a new thread, which has
** no workers yet, and counts the threads of the process that appear during
** the call (/proc/self/task, by id, so threads ending elsewhere meanwhile do
** not matter): budget 1 must add none, budget 2 exactly one (the check sees
** OpenMP's workers at all). Registered twice: plain, and with
** LOOM_NUM_THREADS=1, where the default budget is 1.
**
** Concurrency (also in the 'threads' suite, under ThreadSanitizer): several
** threads call the kernel at once on equal and different shapes, budgets,
** transposed views (which the core hands this compact-only kernel as compact
** copies, ABI 1.2) and broadcast batches, plainly and through plans shared
** by all of them; more distinct primitives than the kernel caches, so
** entries are evicted while others use them. Each result is checked against
** the cpu kernel's within 3*K*u*(|A||B|)_ij, computed beforehand; the
** threads only count mismatches (cmocka's asserts are not thread-safe).
*/
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tu_ops.h"

/* ------------------------------------------------------------ thread budget */

#define MAX_TIDS 4096

/* The ids of this process's threads; returns how many. */
static int list_tids(long *tids)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < MAX_TIDS;)
        if (e->d_name[0] != '.')
            tids[n++] = strtol(e->d_name, NULL, 10);
    closedir(d);
    return n;
}

typedef struct budget_run {
    int num_threads;           /* the call's num_threads option, 0 = the default budget */
    int set_omp;               /* > 0: the calling thread's OpenMP thread count beforehand */
    int omp_before;            /* out: the calling thread's OpenMP thread count before the call */
    int new_threads;           /* out: threads that appeared during the call */
    int omp_after;             /* out: the calling thread's OpenMP thread count afterwards */
    loom_status st;
    char error[256];
} budget_run;

static int (*omp_get_max)(void);
static void (*omp_set_num)(int);

/* The OpenMP runtime that libdnnl loaded (linked in at start-up, see meson.build). */
static void find_omp(void)
{
    void *get = dlsym(RTLD_DEFAULT, "omp_get_max_threads"), *set = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    memcpy(&omp_get_max, &get, sizeof get);
    memcpy(&omp_set_num, &set, sizeof set);
}

static void *budget_thread(void *arg)
{
    budget_run *r = arg;
    static long before[MAX_TIDS], after[MAX_TIDS];   /* one budget thread at a time */
    int64_t sa[2] = { 512, 512 }, sb[2] = { 512, 512 };
    loom_tensor *a, *b, *out = NULL;
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    if (loom_tensor_new(&a, LOOM_DTYPE_F32, 2, sa, NULL) != LOOM_OK
        || loom_tensor_new(&b, LOOM_DTYPE_F32, 2, sb, NULL) != LOOM_OK) {
        r->st = LOOM_ENOMEM;
        return NULL;
    }
    memset(loom_data(a), 0, 512 * 512 * sizeof(float));
    memset(loom_data(b), 0, 512 * 512 * sizeof(float));
    if (r->set_omp > 0 && omp_set_num != NULL)
        omp_set_num(r->set_omp);
    r->omp_before = omp_get_max != NULL ? omp_get_max() : -1;
    opt.backend = "onednn";
    opt.num_threads = r->num_threads;
    int nb = list_tids(before);
    r->st = loom_run("core.matmul", (const loom_tensor *[]){ a, b }, 2, NULL, &out, 1, &opt);
    int na = list_tids(after);
    snprintf(r->error, sizeof r->error, "%s", r->st == LOOM_OK ? "" : loom_last_error());
    r->new_threads = 0;
    for (int i = 0; i < na; i++) {
        int seen = 0;
        for (int j = 0; j < nb && !seen; j++)
            seen = after[i] == before[j];
        r->new_threads += !seen;
    }
    if (nb < 0 || na < 0)
        r->new_threads = -1;
    r->omp_after = omp_get_max != NULL ? omp_get_max() : -1;
    loom_tensor_free(a);
    loom_tensor_free(b);
    loom_tensor_free(out);
    return NULL;
}

/* One onednn matmul in a new thread. */
static budget_run run_budget(int num_threads, int set_omp)
{
    budget_run r = { .num_threads = num_threads, .set_omp = set_omp };
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, budget_thread, &r), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    if (r.st != LOOM_OK)
        fail_msg("onednn matmul: %s", r.error);
    if (r.new_threads < 0)
        fail_msg("cannot read /proc/self/task");
    return r;
}

static void budget_of_one_adds_no_thread(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    budget_run r = run_budget(1, 0);
    if (r.new_threads != 0)
        fail_msg("budget 1: %d threads appeared during the call", r.new_threads);
}

static void budget_of_two_adds_one_thread(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    if (loom_num_threads() < 2)
        skip();                         /* LOOM_NUM_THREADS=1 (or one core): no budget of 2 */
    budget_run r = run_budget(2, 0);
    if (r.omp_before < 2)
        skip();                         /* OMP_NUM_THREADS=1 caps every budget: see the next test */
    if (r.new_threads != 1)
        fail_msg("budget 2: %d threads appeared during the call, expected 1 OpenMP worker", r.new_threads);
}

/* The default budget is the pool's size (LOOM_NUM_THREADS): no more threads than that. */
static void default_budget_is_the_pool(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    budget_run r = run_budget(0, 0);
    if (r.new_threads > loom_num_threads() - 1)
        fail_msg("default budget (%d threads): %d threads appeared during the call", (int)loom_num_threads(),
                 r.new_threads);
}

/* A budget below the calling thread's OpenMP setting wins; the call leaves that setting as it was. */
static void budget_below_openmp_setting_wins(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    if (omp_set_num == NULL || omp_get_max == NULL)
        skip();
    budget_run r = run_budget(1, 3);
    if (r.new_threads != 0)
        fail_msg("budget 1 with OpenMP set to 3: %d threads appeared during the call", r.new_threads);
    assert_int_equal(r.omp_after, 3);
}

/* An OpenMP setting below the budget caps it (OMP_NUM_THREADS=1 keeps oneDNN on the calling thread). */
static void openmp_setting_caps_the_budget(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    if (omp_set_num == NULL || omp_get_max == NULL || loom_num_threads() < 2)
        skip();
    budget_run r = run_budget(2, 1);
    if (r.new_threads != 0)
        fail_msg("budget 2 with OpenMP set to 1: %d threads appeared during the call", r.new_threads);
    assert_int_equal(r.omp_after, 1);
}

/* ------------------------------------------------------------ cases */

/* One matmul: inputs (a may be a transposed view of at), the cpu result and
** the element-wise bound 3*K*u*(|A||B|). */
typedef struct mm_case {
    loom_tensor *a, *b, *at, *want, *bound;
    int64_t k;
} mm_case;

static loom_tensor *abs_like(const loom_tensor *t, const loom_tensor *storage, loom_tensor **storage_abs)
{
    /* same layout as t: a copy of its storage with |x|, wrapped with t's strides */
    loom_tensor *s;
    assert_int_equal(loom_tensor_new(&s, LOOM_DTYPE_F32, storage->ndim, storage->shape, NULL), LOOM_OK);
    for (int64_t i = 0; i < loom_numel(storage); i++)
        ((float *)loom_data(s))[i] = fabsf(((const float *)loom_data(storage))[i]);
    *storage_abs = s;
    if (t == storage)
        return s;
    loom_tensor *v;
    assert_int_equal(loom_tensor_wrap(&v, loom_data(s), LOOM_DTYPE_F32, t->ndim, t->shape, t->strides, NULL),
                     LOOM_OK);
    return v;
}

static void case_make(mm_case *c, int64_t batch, int64_t m, int64_t k, int64_t n, int transposed, unsigned seed)
{
    memset(c, 0, sizeof *c);
    c->k = k;
    if (transposed) {
        int64_t st[2] = { k, m }, sh[2] = { m, k }, strides[2] = { 1, m };
        c->at = tu_random_f32(2, st, seed);
        assert_int_equal(loom_tensor_wrap(&c->a, loom_data(c->at), LOOM_DTYPE_F32, 2, sh, strides, NULL), LOOM_OK);
    } else if (batch > 1) {
        int64_t sh[3] = { batch, m, k };
        c->a = tu_random_f32(3, sh, seed);
    } else {
        int64_t sh[2] = { m, k };
        c->a = tu_random_f32(2, sh, seed);
    }
    int64_t sb[2] = { k, n };
    c->b = tu_random_f32(2, sb, seed + 7919u);
    assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ c->a, c->b }, 2, NULL, "cpu", &c->want),
                     LOOM_OK);
    loom_tensor *sa, *sb_abs;
    loom_tensor *aa = abs_like(c->a, c->at != NULL ? c->at : c->a, &sa);
    loom_tensor *ab = abs_like(c->b, c->b, &sb_abs);
    assert_int_equal(tu_call("core.matmul", (const loom_tensor *[]){ aa, ab }, 2, NULL, "cpu", &c->bound), LOOM_OK);
    float *bd = loom_data(c->bound);
    for (int64_t i = 0; i < loom_numel(c->bound); i++)
        bd[i] = (float)(3.0 * (double)k * 0x1p-24 * (double)bd[i] + 1e-30);
    if (aa != sa)
        loom_tensor_free(aa);
    loom_tensor_free(sa);
    loom_tensor_free(sb_abs);
}

static void case_free(mm_case *c)
{
    loom_tensor_free(c->a);
    loom_tensor_free(c->at);
    loom_tensor_free(c->b);
    loom_tensor_free(c->want);
    loom_tensor_free(c->bound);
}

/* Elements of got outside the case's bound. */
static int64_t case_mismatches(const mm_case *c, const loom_tensor *got)
{
    if (got == NULL || got->ndim != c->want->ndim || loom_numel(got) != loom_numel(c->want))
        return 1;
    const float *g = loom_data(got), *w = loom_data(c->want), *bd = loom_data(c->bound);
    int64_t bad = 0;
    for (int64_t i = 0; i < loom_numel(got); i++)
        bad += !(fabsf(g[i] - w[i]) <= bd[i]);
    return bad;
}

/* A plan on onednn, made from descriptions only (no data), matches the cpu
** kernel on every run, also on a view with other strides than the compact
** input it was made for. */
static void plan_matches_cpu(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    mm_case c;
    case_make(&c, 1, 67, 129, 45, 0, 11u);
    loom_tensor da = { .dtype = c.a->dtype, .device = c.a->device, .ndim = c.a->ndim, .shape = c.a->shape };
    loom_tensor db = { .dtype = c.b->dtype, .device = c.b->device, .ndim = c.b->ndim, .shape = c.b->shape };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "onednn";
    loom_plan *plan;
    if (loom_plan_create(&plan, loom_op_find("core.matmul"), (const loom_tensor *[]){ &da, &db }, 2, NULL, &opt)
        != LOOM_OK)
        fail_msg("plan: %s", loom_last_error());
    for (int rep = 0; rep < 3; rep++) {
        loom_tensor *out = NULL;
        assert_int_equal(loom_plan_run(plan, (const loom_tensor *[]){ c.a, c.b }, 2, &out, 1), LOOM_OK);
        loom_dispatch_info di = LOOM_DISPATCH_INFO_INIT;
        assert_int_equal(loom_last_dispatch(&di), LOOM_OK);
        assert_string_equal(di.backend, "onednn");
        assert_int_equal(case_mismatches(&c, out), 0);
        loom_tensor_free(out);
    }
    /* a run on a transposed view of the same shape (a compact copy by the time the kernel sees it) */
    int64_t tshape[2] = { 129, 67 }, strides[2] = { 1, 67 };
    loom_tensor *at, *view, *out = NULL;
    assert_int_equal(loom_tensor_new(&at, LOOM_DTYPE_F32, 2, tshape, NULL), LOOM_OK);
    for (int64_t i = 0; i < 67; i++)
        for (int64_t p = 0; p < 129; p++)
            ((float *)loom_data(at))[p * 67 + i] = ((const float *)loom_data(c.a))[i * 129 + p];
    assert_int_equal(loom_tensor_wrap(&view, loom_data(at), LOOM_DTYPE_F32, 2, c.a->shape, strides, NULL), LOOM_OK);
    if (loom_plan_run(plan, (const loom_tensor *[]){ view, c.b }, 2, &out, 1) != LOOM_OK)
        fail_msg("plan on a transposed view: %s", loom_last_error());
    assert_int_equal(case_mismatches(&c, out), 0);
    loom_tensor_free(out);
    loom_plan_free(plan);
    loom_tensor_free(view);
    loom_tensor_free(at);
    case_free(&c);
}

/* ------------------------------------------------------------ concurrency */

#define N_CALLERS 4
#define N_ROUNDS 3
#define N_SMALL 40               /* x 2 budgets: more primitives than the kernel keeps (64) */
#define N_SHARED 4               /* cases every caller runs, also through shared plans */

typedef struct shared_state {
    mm_case small[N_SMALL];
    mm_case shared[N_SHARED];
    loom_plan *plans[N_SHARED];
    int max_budget;
    pthread_barrier_t start;               /* all callers begin together */
} shared_state;

typedef struct caller {
    shared_state *s;
    int id;
    int64_t mismatches;
    int failures;
    char error[256];
} caller;

static void check_call(caller *c, const mm_case *mc, loom_status st, loom_tensor *out)
{
    if (st != LOOM_OK) {
        if (c->failures++ == 0)
            snprintf(c->error, sizeof c->error, "%s", loom_last_error());
    } else {
        c->mismatches += case_mismatches(mc, out);
    }
    loom_tensor_free(out);
}

static void *caller_thread(void *arg)
{
    caller *c = arg;
    shared_state *s = c->s;
    pthread_barrier_wait(&s->start);
    for (int r = 0; r < N_ROUNDS; r++) {
        for (int i = 0; i < N_SMALL; i++) {
            /* every caller visits every case, starting at its own place */
            const mm_case *mc = &s->small[(i + c->id * (N_SMALL / N_CALLERS)) % N_SMALL];
            loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
            opt.backend = "onednn";
            opt.num_threads = 1 + (i + r + c->id) % s->max_budget;
            loom_tensor *out = NULL;
            loom_status st = loom_run("core.matmul", (const loom_tensor *[]){ mc->a, mc->b }, 2, NULL, &out, 1, &opt);
            check_call(c, mc, st, out);
        }
        for (int i = 0; i < N_SHARED; i++) {
            const mm_case *mc = &s->shared[i];
            loom_tensor *out = NULL;
            loom_status st = loom_plan_run(s->plans[i], (const loom_tensor *[]){ mc->a, mc->b }, 2, &out, 1);
            check_call(c, mc, st, out);
            loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
            opt.backend = "onednn";
            out = NULL;
            st = loom_run("core.matmul", (const loom_tensor *[]){ mc->a, mc->b }, 2, NULL, &out, 1, &opt);
            check_call(c, mc, st, out);
        }
    }
    return NULL;
}

static void concurrent_callers_match_cpu(void **state)
{
    (void)state;
    if (!tu_has_backend("core.matmul", "onednn"))
        skip();
    shared_state *s = calloc(1, sizeof *s);
    assert_non_null(s);
    s->max_budget = loom_num_threads() >= 2 ? 2 : 1;
    for (int i = 0; i < N_SMALL; i++)
        case_make(&s->small[i], i % 5 == 0 ? 3 : 1, 1 + (i * 7) % 29, 1 + (i * 11) % 37, 1 + (i * 13) % 31,
                  i % 4 == 1, 100u + (unsigned)i);
    static const int64_t shared_dims[N_SHARED][4] = {   /* batch, m, k, n, then transposed for the last */
        { 1, 96, 200, 80 }, { 4, 33, 64, 17 }, { 1, 128, 128, 128 }, { 1, 50, 70, 60 },
    };
    loom_call_options opt = LOOM_CALL_OPTIONS_INIT;
    opt.backend = "onednn";
    for (int i = 0; i < N_SHARED; i++) {
        mm_case *mc = &s->shared[i];
        case_make(mc, shared_dims[i][0], shared_dims[i][1], shared_dims[i][2], shared_dims[i][3], i == N_SHARED - 1,
                  500u + (unsigned)i);
        if (loom_plan_create(&s->plans[i], loom_op_find("core.matmul"), (const loom_tensor *[]){ mc->a, mc->b }, 2,
                             NULL, &opt) != LOOM_OK)
            fail_msg("plan %d: %s", i, loom_last_error());
    }
    caller callers[N_CALLERS];
    pthread_t th[N_CALLERS];
    assert_int_equal(pthread_barrier_init(&s->start, NULL, N_CALLERS), 0);
    for (int i = 0; i < N_CALLERS; i++) {
        callers[i] = (caller){ .s = s, .id = i };
        assert_int_equal(pthread_create(&th[i], NULL, caller_thread, &callers[i]), 0);
    }
    for (int i = 0; i < N_CALLERS; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    pthread_barrier_destroy(&s->start);
    for (int i = 0; i < N_CALLERS; i++) {
        if (callers[i].failures > 0)
            fail_msg("caller %d: %d calls failed, the first with: %s", i, callers[i].failures, callers[i].error);
        if (callers[i].mismatches > 0)
            fail_msg("caller %d: %lld elements differ from the cpu kernel's", i, (long long)callers[i].mismatches);
    }
    for (int i = 0; i < N_SHARED; i++) {
        loom_plan_free(s->plans[i]);
        case_free(&s->shared[i]);
    }
    for (int i = 0; i < N_SMALL; i++)
        case_free(&s->small[i]);
    free(s);
}

int main(void)
{
    find_omp();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(budget_of_one_adds_no_thread),
        cmocka_unit_test(budget_of_two_adds_one_thread),
        cmocka_unit_test(default_budget_is_the_pool),
        cmocka_unit_test(budget_below_openmp_setting_wins),
        cmocka_unit_test(openmp_setting_caps_the_budget),
        cmocka_unit_test(plan_matches_cpu),
        cmocka_unit_test(concurrent_callers_match_cpu),
    };
    return cmocka_run_group_tests_name("coreops_onednn", tests, tu_setup, tu_teardown);
}
