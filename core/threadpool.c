/* SPDX-License-Identifier: BSD-3-Clause */
/*
** threadpool.c - the core's fork-join pool and the CPU topology.
**
** A pool of size N is N-1 worker threads plus the threads that call
** loom__parallel_for. Worker i (1..N-1) is pinned to physical core i (mod
** cores) when hwloc is built in; callers are never pinned: their affinity
** belongs to the application.
**
** Concurrent callers (ABI 1.1). Several host threads may each have a job in
** flight; they share the workers instead of queueing behind one another.
** Design: a fixed table of MAX_JOBS job slots (static: no allocation on any
** path) and a bitmap `used` of the slots owned by a caller.
**  - A caller claims a free slot with one CAS on `used`, writes its job
**    there and publishes it with one release store of the slot's `word`
**    (generation, budget, threads joined so far, CLOSED). The caller joins
**    its own job as thread index 0 and runs chunks like any worker, so
**    every caller makes progress even when all workers are busy elsewhere.
**  - An idle worker scans the slots in `used` and joins the open job with
**    the fewest live participants by a CAS on its `word` that increments
**    `joined`: the old count is its thread index, and the CAS fails once
**    the job's budget (ctx->n_threads, capped by the pool size and the
**    number of chunks) is reached or the job is closed. So a budget caps
**    the threads on one job, indices stay in [0, budget) and distinct.
**  - Chunks are claimed with one fetch_add on the job's `next`. After each
**    chunk a worker looks at the other jobs in flight (one load of `used`
**    when there is only one) and moves to a job that has at least two
**    fewer live participants: N callers and W workers settle near (N+W)/N
**    threads per job (job-level work sharing with rebalancing at chunk
**    boundaries), and a job posted while others run gets helpers at the
**    next chunk boundary instead of after they finish.
**  - The thread that finds the chunks exhausted sets CLOSED (no more
**    joins); the caller then waits until every worker that joined has left
**    (`left` == joined - 1), spinning briefly before sleeping on its slot's
**    condition variable, and frees the slot.
** Why this over per-worker deques with stealing: a parallel_for is a flat
** range split into a known number of equal chunks, so one shared counter
** per job already balances the load with one atomic per chunk; what was
** missing is several counters at once and a fair choice among them. The
** single-caller path stays lock-free when the workers are spinning (claim
** slot, publish, bump `epoch`, run, close, wait) and takes `lock` only to
** wake sleeping workers or to sleep, as before.
**
** Sleeping: workers spin on `epoch` (bumped by every post) before sleeping
** on `work`; a poster that sees `sleeping` workers signals as many as its
** job can use. epoch/sleeping and left/word/waiting are each a
** store-then-load pair in sequentially consistent order on both sides, so
** no wake-up is lost.
**
** Invariants:
**  - a call from inside a job (any worker, which only ever runs chunks,
**    or a caller running its own chunks) runs inline and serially with
**    thread index 0: so a kernel that calls another op through the core
**    from a chunk never waits on the pool, and never deadlocks; a caller
**    waiting for its helpers never runs other jobs' chunks, so its
**    latency is its own job's.
**  - a budget of 1, a range of one chunk, a stopped pool or MAX_JOBS jobs
**    already in flight: the call runs inline on the caller.
**  - thread_index passed to fn is in [0, budget) and no two threads run
**    the same index of one job at the same time.
**  - loom__pool_stop waits for the jobs in flight (new calls run inline
**    once it has begun); loom__pool_start/stop themselves are serialised
**    by `admin` (they are made by loom_init/loom_shutdown).
**  - in a child of fork() the pool is empty (size 0) and calls run inline
**    until loom__pool_start runs there again.
*/
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#if LOOM_HAVE_HWLOC
#include <hwloc.h>
#endif

#define MAX_POOL 1024
#define MAX_JOBS 64             /* jobs in flight at once: one bit each in pool.used */
#define SPIN_ROUNDS 2000        /* about 10-100 us of pause before sleeping */
#define CHUNKS_PER_THREAD 4     /* load balance without per-element atomics */

/* A job slot's `word`: generation << 33 | CLOSED | budget << 16 | joined. */
#define W_JOINED(w) ((int32_t)((w) & 0xffffu))
#define W_BUDGET(w) ((int32_t)(((w) >> 16) & 0xffffu))
#define W_CLOSED (UINT64_C(1) << 32)
#define W_GEN(w) ((w) >> 33)
_Static_assert(MAX_POOL < 0xffff, "joined and budget are 16-bit fields of a job word");

typedef struct worker {
    pthread_t thread;
    int32_t index;              /* 1..size-1 */
#if LOOM_HAVE_HWLOC
    hwloc_bitmap_t cpuset;      /* the core it binds to, or NULL */
#endif
} worker;

/* One job in flight. The plain fields are written by the owning caller
** before it publishes `word` and read by the threads that joined this
** generation; the caller rewrites them only after all of those have left. */
typedef struct job {
    _Alignas(64) _Atomic uint64_t word;
    loom_range_fn fn;
    void *user;
    int64_t n, chunk, n_chunks;
    _Alignas(64) _Atomic int64_t next;      /* the next chunk to claim */
    _Alignas(64) _Atomic int32_t left;      /* workers that joined and left */
    atomic_bool waiting;                    /* the caller sleeps on `done` */
    pthread_cond_t done;                    /* last worker to leave -> caller */
} job;

static struct {
    pthread_mutex_t admin;      /* start/stop */
    pthread_mutex_t lock;       /* pairs with the condition variables */
    pthread_cond_t work;        /* a job was posted, or stop */
    worker *workers;
    int32_t n_workers;
    _Atomic int32_t size;       /* 0 when stopped */
    atomic_bool stopping;

    _Alignas(64) _Atomic uint64_t used;     /* slots owned by a caller */
    _Alignas(64) _Atomic uint64_t epoch;    /* bumped by every post */
    _Atomic int32_t sleeping;               /* workers waiting on `work` */
    job jobs[MAX_JOBS];
} pool = {
    .admin = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .work = PTHREAD_COND_INITIALIZER,
};

/* Inside a job: a worker, or a caller running its chunks. */
static _Thread_local bool in_job;

static struct {
    pthread_mutex_t lock;
    bool loaded;
#if LOOM_HAVE_HWLOC
    hwloc_topology_t topology;  /* NULL if hwloc failed to load it */
#endif
    int32_t cores;
    char *text;
} topo = { .lock = PTHREAD_MUTEX_INITIALIZER };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* ------------------------------------------------------------- topology */

static int32_t online_cpus(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)(n > MAX_POOL ? MAX_POOL : n) : 1;
}

#if LOOM_HAVE_HWLOC
static int count_of(hwloc_obj_type_t type)
{
    int n = hwloc_get_nbobjs_by_type(topo.topology, type);
    return n > 0 ? n : 0;
}

static void append(char *buf, size_t size, size_t *used, const char *fmt, ...) LOOM_PRINTF(4, 5);
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    va_list ap;
    int len;

    if (*used >= size)
        return;
    va_start(ap, fmt);
    len = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (len > 0)
        *used = *used + (size_t)len < size ? *used + (size_t)len : size;
}

static void append_size(char *buf, size_t size, size_t *used, uint64_t nbytes)
{
    if (nbytes >= (UINT64_C(1) << 20) && nbytes % (UINT64_C(1) << 20) == 0)
        append(buf, size, used, "%llu MiB", (unsigned long long)(nbytes >> 20));
    else if (nbytes >= (UINT64_C(1) << 20))
        append(buf, size, used, "%.1f MiB", (double)nbytes / (1 << 20));
    else
        append(buf, size, used, "%llu KiB", (unsigned long long)(nbytes >> 10));
}

static char *describe_hwloc(void)
{
    static const struct { hwloc_obj_type_t type; const char *name; } caches[] = {
        { HWLOC_OBJ_L1CACHE, "L1d" }, { HWLOC_OBJ_L2CACHE, "L2" }, { HWLOC_OBJ_L3CACHE, "L3" },
    };
    char buf[1024];
    size_t used = 0;
    int packages = count_of(HWLOC_OBJ_PACKAGE), numa = count_of(HWLOC_OBJ_NUMANODE);
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo.topology, HWLOC_OBJ_PACKAGE, 0);
    const char *model = pkg != NULL ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
    bool any = false;

    append(buf, sizeof buf, &used, "hwloc: %d package%s, %d core%s, %d PU%s, %d NUMA node%s\n",
           packages, packages == 1 ? "" : "s", count_of(HWLOC_OBJ_CORE),
           count_of(HWLOC_OBJ_CORE) == 1 ? "" : "s", count_of(HWLOC_OBJ_PU),
           count_of(HWLOC_OBJ_PU) == 1 ? "" : "s", numa, numa == 1 ? "" : "s");
    append(buf, sizeof buf, &used, "caches:");
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        hwloc_obj_t c = hwloc_get_obj_by_type(topo.topology, caches[i].type, 0);
        if (c == NULL || c->attr == NULL)
            continue;
        append(buf, sizeof buf, &used, "%s %s ", any ? "," : "", caches[i].name);
        append_size(buf, sizeof buf, &used, c->attr->cache.size);
        append(buf, sizeof buf, &used, " x%d", count_of(caches[i].type));
        any = true;
    }
    append(buf, sizeof buf, &used, "%s\n", any ? "" : " unknown");
    if (model != NULL)
        append(buf, sizeof buf, &used, "model: %s\n", model);
    if (used > 0 && buf[used - 1] == '\n')
        buf[--used] = '\0';
    return loom__strdup(buf);
}
#endif

/* Load the topology once; callers hold topo.lock. */
static void topology_load_locked(void)
{
    char buf[128];

    if (topo.loaded)
        return;
    topo.loaded = true;
    topo.cores = 0;
#if LOOM_HAVE_HWLOC
    if (hwloc_topology_init(&topo.topology) != 0) {
        topo.topology = NULL;
    } else if (hwloc_topology_load(topo.topology) != 0) {
        hwloc_topology_destroy(topo.topology);
        topo.topology = NULL;
    }
    if (topo.topology != NULL) {
        topo.cores = count_of(HWLOC_OBJ_CORE);
        topo.text = describe_hwloc();
    }
    if (topo.topology == NULL) {
        snprintf(buf, sizeof buf, "hwloc could not read the topology: %d CPUs online", online_cpus());
        topo.text = loom__strdup(buf);
    }
#else
    snprintf(buf, sizeof buf, "hwloc not built in: %d CPUs online", online_cpus());
    topo.text = loom__strdup(buf);
#endif
    if (topo.cores <= 0)
        topo.cores = online_cpus();
    if (topo.cores > MAX_POOL)
        topo.cores = MAX_POOL;
}

static void topology_free(void)
{
    pthread_mutex_lock(&topo.lock);
#if LOOM_HAVE_HWLOC
    if (topo.topology != NULL)
        hwloc_topology_destroy(topo.topology);
    topo.topology = NULL;
#endif
    free(topo.text);
    topo.text = NULL;
    topo.loaded = false;
    pthread_mutex_unlock(&topo.lock);
}

const char *loom__topology_text(void)
{
    const char *text;

    pthread_mutex_lock(&topo.lock);
    topology_load_locked();
    text = topo.text != NULL ? topo.text : "topology unavailable (out of memory)";
    pthread_mutex_unlock(&topo.lock);
    return text;
}

int32_t loom__physical_cores(void)
{
    int32_t n;

    pthread_mutex_lock(&topo.lock);
    topology_load_locked();
    n = topo.cores;
    pthread_mutex_unlock(&topo.lock);
    return n;
}

/* ---------------------------------------------------------------- jobs */

/* Participants of a job now: the caller plus the workers still on it. */
static int32_t live_of(job *j, uint64_t word)
{
    return W_JOINED(word) - atomic_load_explicit(&j->left, memory_order_relaxed);
}

/* Join the open job with the fewest live participants among `candidates`
** (a mask of slots), if that is fewer than `below`. On success *slot, the
** job's word and *index (the thread index) are set. */
static bool join_some(uint64_t candidates, int32_t below, int32_t *slot, uint64_t *word, int32_t *index)
{
    for (;;) {
        uint64_t m = candidates & atomic_load_explicit(&pool.used, memory_order_acquire);
        int32_t best = -1, best_live = below;
        uint64_t best_word = 0;

        while (m != 0) {
            int32_t s = __builtin_ctzll(m);
            uint64_t w = atomic_load_explicit(&pool.jobs[s].word, memory_order_relaxed);
            m &= m - 1;
            if ((w & W_CLOSED) == 0 && W_JOINED(w) < W_BUDGET(w)) {
                int32_t live = live_of(&pool.jobs[s], w);
                if (live < best_live) {
                    best = s;
                    best_live = live;
                    best_word = w;
                }
            }
        }
        if (best < 0)
            return false;
        if (atomic_compare_exchange_strong_explicit(&pool.jobs[best].word, &best_word, best_word + 1,
                                                    memory_order_acq_rel, memory_order_relaxed)) {
            *slot = best;
            *word = best_word + 1;
            *index = W_JOINED(best_word);
            return true;
        }
        /* Lost a race (another joiner, a close, a new generation): look again. */
    }
}

/* Claim and run one chunk of j as thread `index`; false once there are
** none left (the job is then closed). */
static bool run_one_chunk(job *j, int32_t index)
{
    const int64_t c = atomic_fetch_add_explicit(&j->next, 1, memory_order_relaxed);
    int64_t begin;

    if (c >= j->n_chunks) {
        if ((atomic_load_explicit(&j->word, memory_order_relaxed) & W_CLOSED) == 0)
            atomic_fetch_or_explicit(&j->word, W_CLOSED, memory_order_acq_rel);
        return false;
    }
    begin = c * j->chunk;
    j->fn(j->user, begin, j->n - begin <= j->chunk ? j->n : begin + j->chunk, index);
    return true;
}

/* A worker leaves generation `gen` of j; the last one wakes a sleeping caller. */
static void leave(job *j, uint64_t gen)
{
    int32_t gone = atomic_fetch_add_explicit(&j->left, 1, memory_order_seq_cst) + 1;
    uint64_t w = atomic_load_explicit(&j->word, memory_order_seq_cst);

    if (W_GEN(w) == gen && (w & W_CLOSED) != 0 && gone == W_JOINED(w) - 1
        && atomic_load_explicit(&j->waiting, memory_order_seq_cst)) {
        pthread_mutex_lock(&pool.lock);
        pthread_cond_signal(&j->done);
        pthread_mutex_unlock(&pool.lock);
    }
}

/* Help the jobs in flight until none can use this worker. */
static bool help(void)
{
    int32_t s, index;
    uint64_t w;

    if (!join_some(~UINT64_C(0), INT32_MAX, &s, &w, &index))
        return false;
    for (;;) {
        job *j = &pool.jobs[s];
        uint64_t used;
        if (!run_one_chunk(j, index)) {
            leave(j, W_GEN(w));
            return true;
        }
        /* Rebalance: move to a job with at least two fewer participants. */
        used = atomic_load_explicit(&pool.used, memory_order_relaxed);
        if ((used & (used - 1)) != 0) {
            int32_t s2, index2;
            uint64_t w2;
            int32_t live = live_of(j, atomic_load_explicit(&j->word, memory_order_relaxed));
            if (join_some(used & ~(UINT64_C(1) << s), live - 1, &s2, &w2, &index2)) {
                leave(j, W_GEN(w));
                s = s2, w = w2, index = index2;
            }
        }
    }
}

/* Wait until `epoch` moves on from `seen` or the pool stops. */
static void wait_work(uint64_t seen)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (atomic_load_explicit(&pool.epoch, memory_order_acquire) != seen)
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add_explicit(&pool.sleeping, 1, memory_order_seq_cst);
    while (atomic_load_explicit(&pool.epoch, memory_order_seq_cst) == seen
           && !atomic_load_explicit(&pool.stopping, memory_order_acquire))
        pthread_cond_wait(&pool.work, &pool.lock);
    atomic_fetch_sub_explicit(&pool.sleeping, 1, memory_order_relaxed);
    pthread_mutex_unlock(&pool.lock);
}

static void *worker_main(void *arg)
{
    worker *w = arg;

    in_job = true;
#if LOOM_HAVE_HWLOC
    if (w->cpuset != NULL && hwloc_set_cpubind(topo.topology, w->cpuset, HWLOC_CPUBIND_THREAD) != 0)
        loom__log(LOOM_LOG_DEBUG, "thread pool: worker %d not pinned: %s", (int)w->index, strerror(errno));
#else
    (void)w;
#endif
    for (;;) {
        /* Read the epoch before looking for work: a job posted after the
        ** look changes it, so wait_work returns at once. */
        uint64_t seen = atomic_load_explicit(&pool.epoch, memory_order_seq_cst);
        if (atomic_load_explicit(&pool.stopping, memory_order_acquire))
            break;
        if (!help())
            wait_work(seen);
    }
    return NULL;
}

/* Tell the workers about a new job that can use `helpers` of them. */
static void announce(int32_t helpers)
{
    int32_t asleep;

    atomic_fetch_add_explicit(&pool.epoch, 1, memory_order_seq_cst);
    asleep = atomic_load_explicit(&pool.sleeping, memory_order_seq_cst);
    if (asleep > 0) {
        pthread_mutex_lock(&pool.lock);
        for (int32_t i = 0; i < helpers && i < asleep; i++)
            pthread_cond_signal(&pool.work);
        pthread_mutex_unlock(&pool.lock);
    }
}

/* Wait until the `helpers` workers that joined j have left. */
static void wait_helpers(job *j, int32_t helpers)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (atomic_load_explicit(&j->left, memory_order_acquire) == helpers)
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.lock);
    atomic_store_explicit(&j->waiting, true, memory_order_seq_cst);
    while (atomic_load_explicit(&j->left, memory_order_seq_cst) != helpers)
        pthread_cond_wait(&j->done, &pool.lock);
    atomic_store_explicit(&j->waiting, false, memory_order_relaxed);
    pthread_mutex_unlock(&pool.lock);
}

/* Claim a free job slot; -1 when all MAX_JOBS are taken. */
static int32_t claim_slot(void)
{
    uint64_t u = atomic_load_explicit(&pool.used, memory_order_relaxed);

    while (~u != 0) {
        int32_t s = __builtin_ctzll(~u);
        if (atomic_compare_exchange_weak_explicit(&pool.used, &u, u | (UINT64_C(1) << s),
                                                  memory_order_seq_cst, memory_order_relaxed))
            return s;
    }
    return -1;
}

static void release_slot(int32_t s)
{
    atomic_fetch_and_explicit(&pool.used, ~(UINT64_C(1) << s), memory_order_release);
}

loom_status loom__parallel_for(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user)
{
    int32_t want = ctx != NULL && ctx->n_threads > 0 ? ctx->n_threads : INT32_MAX;
    int64_t max_chunks, per_thread;
    int32_t budget, s;
    uint64_t w;
    job *j;

    if (fn == NULL)
        return loom__fail(LOOM_EINVAL, "parallel_for: NULL range function");
    if (n < 0)
        return loom__fail(LOOM_EINVAL, "parallel_for: negative range size %lld", (long long)n);
    if (n == 0)
        return LOOM_OK;
    if (grain < 1)
        grain = 1;
    max_chunks = (n - 1) / grain + 1;
    budget = atomic_load_explicit(&pool.size, memory_order_relaxed);
    if (budget > want)
        budget = want;
    if ((int64_t)budget > max_chunks)
        budget = (int32_t)max_chunks;
    if (budget <= 1 || in_job || (s = claim_slot()) < 0) {
        fn(user, 0, n, 0);
        return LOOM_OK;
    }
    /* loom__pool_stop sets size to 0 and then waits for pool.used to empty. */
    if (atomic_load_explicit(&pool.size, memory_order_seq_cst) == 0) {
        release_slot(s);
        fn(user, 0, n, 0);
        return LOOM_OK;
    }

    j = &pool.jobs[s];
    per_thread = (n - 1) / ((int64_t)budget * CHUNKS_PER_THREAD) + 1;
    j->fn = fn;
    j->user = user;
    j->n = n;
    j->chunk = per_thread > grain ? per_thread : grain;
    j->n_chunks = (n - 1) / j->chunk + 1;
    atomic_store_explicit(&j->next, 0, memory_order_relaxed);
    atomic_store_explicit(&j->left, 0, memory_order_relaxed);
    w = atomic_load_explicit(&j->word, memory_order_relaxed);
    w = ((W_GEN(w) + 1) << 33) | ((uint64_t)budget << 16) | 1u;   /* the caller is index 0 */
    atomic_store_explicit(&j->word, w, memory_order_release);
    announce(budget - 1);

    in_job = true;
    while (run_one_chunk(j, 0))
        ;
    in_job = false;
    /* Closed now: `joined` is final. */
    w = atomic_fetch_or_explicit(&j->word, W_CLOSED, memory_order_seq_cst);
    wait_helpers(j, W_JOINED(w) - 1);
    release_slot(s);
    return LOOM_OK;
}

/* ------------------------------------------------------------ lifecycle */

static void init_slots(void)
{
    for (int32_t s = 0; s < MAX_JOBS; s++) {
        pthread_cond_init(&pool.jobs[s].done, NULL);
        atomic_store(&pool.jobs[s].word, W_CLOSED);
        atomic_store(&pool.jobs[s].left, 0);
        atomic_store(&pool.jobs[s].waiting, false);
    }
    atomic_store(&pool.used, 0);
}

/* A child of fork() has none of the workers: forget them, so that its
** calls run inline, and reset the locks and condition variables that
** another thread may have held at the time of the fork. */
static void forget_pool_in_child(void)
{
    pthread_mutex_init(&pool.admin, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.work, NULL);
    pthread_mutex_init(&topo.lock, NULL);
    pool.workers = NULL;            /* the parent's copy; not ours to free */
    pool.n_workers = 0;
    atomic_store(&pool.size, 0);
    atomic_store(&pool.epoch, 0);
    atomic_store(&pool.sleeping, 0);
    atomic_store(&pool.stopping, false);
    init_slots();
    in_job = false;
}

static void init_once(void)
{
    init_slots();
    pthread_atfork(NULL, NULL, forget_pool_in_child);
}

/* Join every worker; callers hold pool.admin. */
static void stop_locked(void)
{
    if (pool.workers == NULL && atomic_load(&pool.size) == 0)
        return;
    atomic_store(&pool.size, 0);            /* new calls run inline ... */
    while (atomic_load(&pool.used) != 0)    /* ... and the jobs in flight finish */
        sched_yield();
    pthread_mutex_lock(&pool.lock);
    atomic_store(&pool.stopping, true);
    atomic_fetch_add(&pool.epoch, 1);
    pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.lock);
    for (int32_t i = 0; i < pool.n_workers; i++)
        pthread_join(pool.workers[i].thread, NULL);
    for (int32_t i = 0; i < pool.n_workers; i++) {
#if LOOM_HAVE_HWLOC
        if (pool.workers[i].cpuset != NULL)
            hwloc_bitmap_free(pool.workers[i].cpuset);
#endif
    }
    free(pool.workers);
    pool.workers = NULL;
    pool.n_workers = 0;
    atomic_store(&pool.stopping, false);
}

#if LOOM_HAVE_HWLOC
/* The cpuset of physical core `index` (mod the number of cores). */
static hwloc_bitmap_t core_cpuset(int32_t index)
{
    hwloc_obj_t core;
    int cores;

    if (topo.topology == NULL || (cores = count_of(HWLOC_OBJ_CORE)) == 0)
        return NULL;
    core = hwloc_get_obj_by_type(topo.topology, HWLOC_OBJ_CORE, (unsigned)(index % cores));
    return core != NULL && core->cpuset != NULL ? hwloc_bitmap_dup(core->cpuset) : NULL;
}
#endif

loom_status loom__pool_start(int32_t n_threads)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    sigset_t all, old;
    int32_t created = 0;

    pthread_once(&once, init_once);
    pthread_mutex_lock(&pool.admin);
    if (n_threads <= 0)
        n_threads = loom__physical_cores();
    if (n_threads > MAX_POOL)
        n_threads = MAX_POOL;
    if (atomic_load(&pool.size) == n_threads) {
        pthread_mutex_unlock(&pool.admin);
        return LOOM_OK;
    }
    stop_locked();

    /* size is 0 until the workers are up: calls meanwhile run inline. */
    if (n_threads > 1) {
        pool.workers = calloc((size_t)(n_threads - 1), sizeof *pool.workers);
        if (pool.workers == NULL) {
            pthread_mutex_unlock(&pool.admin);
            return loom__fail(LOOM_ENOMEM, "thread pool: out of memory for %d threads", (int)n_threads);
        }
    }
    atomic_store(&pool.stopping, false);
    pthread_mutex_lock(&topo.lock);
    topology_load_locked();
    pthread_mutex_unlock(&topo.lock);

    /* Workers never take the application's signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int32_t i = 1; i < n_threads; i++) {
        worker *w = &pool.workers[i - 1];
        int err;
        w->index = i;
#if LOOM_HAVE_HWLOC
        w->cpuset = core_cpuset(i);
#endif
        err = pthread_create(&w->thread, NULL, worker_main, w);
        if (err != 0) {
            loom__log(LOOM_LOG_ERROR, "thread pool: could not start thread %d of %d (%s); using %d",
                      (int)i + 1, (int)n_threads, strerror(err), (int)i);
#if LOOM_HAVE_HWLOC
            if (w->cpuset != NULL)
                hwloc_bitmap_free(w->cpuset);
#endif
            break;
        }
        created++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pool.n_workers = created;
    atomic_store(&pool.size, created + 1);
    pthread_mutex_unlock(&pool.admin);
    loom__log(LOOM_LOG_INFO, "thread pool: %d threads", (int)(created + 1));
    return LOOM_OK;
}

void loom__pool_stop(void)
{
    pthread_mutex_lock(&pool.admin);
    stop_locked();
    pthread_mutex_unlock(&pool.admin);
    topology_free();
}

int32_t loom__pool_size(void)
{
    return atomic_load_explicit(&pool.size, memory_order_relaxed);
}
