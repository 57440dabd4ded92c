/*
** threadpool.c - the core's fork-join pool and the CPU topology.
**
** A pool of size N is N-1 worker threads plus whichever thread calls
** loom__parallel_for, which always takes part as thread index 0. Worker i
** (1..N-1) is pinned to physical core i (mod cores) when hwloc is built in;
** the caller is never pinned: its affinity belongs to the application.
**
** A job is published by one atomic store of `ticket` (generation << 32 |
** threads used) made under `lock`; the job fields written before it are
** read by the participating workers only (index < threads used), and the
** caller rewrites them only after every participant has decremented
** `pending`. Chunks are claimed with one fetch_add on `next`. Workers spin
** briefly on the ticket before sleeping on their own condition variable,
** so back-to-back small jobs do not pay for a wake-up.
**
** Invariants:
**  - at most one job is in flight: its caller holds `submit`. A call that
**    finds `submit` taken (another host thread's job) or that comes from
**    inside a job (a worker, or the caller's own fn) runs inline, serially.
**  - thread_index passed to fn is in [0, threads used).
**  - loom__pool_start/stop must not race with calls in flight (they are
**    made by loom_init/loom_shutdown).
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
#define SPIN_ROUNDS 2000        /* about 10-100 us of pause before sleeping */
#define CHUNKS_PER_THREAD 4     /* load balance without per-element atomics */

typedef struct worker {
    pthread_t thread;
    pthread_cond_t wake;        /* signalled under pool.lock when a job names it */
    int32_t index;              /* 1..size-1 */
#if LOOM_HAVE_HWLOC
    hwloc_bitmap_t cpuset;      /* the core it binds to, or NULL */
#endif
} worker;

static struct {
    pthread_mutex_t admin;      /* start/stop */
    pthread_mutex_t submit;     /* held by the caller of the job in flight */
    pthread_mutex_t lock;       /* pairs with the condition variables */
    pthread_cond_t done;        /* last participant -> caller */
    worker *workers;
    int32_t n_workers;
    _Atomic int32_t size;       /* 0 when stopped */

    /* the job in flight: plain fields published by `ticket` */
    loom_range_fn fn;
    void *user;
    int64_t n, chunk, n_chunks;

    _Alignas(64) _Atomic uint64_t ticket;
    atomic_bool stopping;
    _Alignas(64) _Atomic int64_t next;
    _Alignas(64) _Atomic int32_t pending;
} pool = {
    .admin = PTHREAD_MUTEX_INITIALIZER,
    .submit = PTHREAD_MUTEX_INITIALIZER,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .done = PTHREAD_COND_INITIALIZER,
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

static void run_chunks(int32_t index)
{
    const int64_t n = pool.n, chunk = pool.chunk, n_chunks = pool.n_chunks;
    const loom_range_fn fn = pool.fn;
    void *const user = pool.user;

    for (;;) {
        int64_t c = atomic_fetch_add_explicit(&pool.next, 1, memory_order_relaxed);
        int64_t begin;
        if (c >= n_chunks)
            break;
        begin = c * chunk;
        fn(user, begin, n - begin <= chunk ? n : begin + chunk, index);
    }
}

static uint64_t wait_ticket(worker *w, uint64_t seen)
{
    uint64_t t;

    for (int i = 0; i < SPIN_ROUNDS; i++) {
        t = atomic_load_explicit(&pool.ticket, memory_order_acquire);
        if (t != seen)
            return t;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.lock);
    while ((t = atomic_load_explicit(&pool.ticket, memory_order_acquire)) == seen)
        pthread_cond_wait(&w->wake, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    return t;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    uint64_t seen = 0;          /* the ticket value when the pool was started */

    in_job = true;
#if LOOM_HAVE_HWLOC
    if (w->cpuset != NULL && hwloc_set_cpubind(topo.topology, w->cpuset, HWLOC_CPUBIND_THREAD) != 0)
        loom__log(LOOM_LOG_DEBUG, "thread pool: worker %d not pinned: %s", (int)w->index, strerror(errno));
#endif
    for (;;) {
        seen = wait_ticket(w, seen);
        if (atomic_load_explicit(&pool.stopping, memory_order_acquire))
            break;
        if (w->index >= (int32_t)(seen & 0xffffffffu))
            continue;           /* not needed for this job */
        run_chunks(w->index);
        if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.lock);
            pthread_cond_signal(&pool.done);
            pthread_mutex_unlock(&pool.lock);
        }
    }
    return NULL;
}

/* Publish a new ticket and wake workers 1..wake_upto-1. */
static void post(int32_t used, int32_t wake_upto)
{
    uint64_t gen;

    pthread_mutex_lock(&pool.lock);
    gen = (atomic_load_explicit(&pool.ticket, memory_order_relaxed) >> 32) + 1;
    atomic_store_explicit(&pool.ticket, (gen << 32) | (uint32_t)used, memory_order_release);
    for (int32_t i = 1; i < wake_upto; i++)
        pthread_cond_signal(&pool.workers[i - 1].wake);
    pthread_mutex_unlock(&pool.lock);
}

static void wait_done(void)
{
    for (int i = 0; i < SPIN_ROUNDS; i++) {
        if (atomic_load_explicit(&pool.pending, memory_order_acquire) == 0)
            return;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.lock);
    while (atomic_load_explicit(&pool.pending, memory_order_acquire) != 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
}

loom_status loom__parallel_for(loom_exec_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *user)
{
    int32_t want = ctx != NULL && ctx->n_threads > 0 ? ctx->n_threads : INT32_MAX;
    int64_t max_chunks, per_thread;
    int32_t used;

    if (fn == NULL)
        return loom__fail(LOOM_EINVAL, "parallel_for: NULL range function");
    if (n < 0)
        return loom__fail(LOOM_EINVAL, "parallel_for: negative range size %lld", (long long)n);
    if (n == 0)
        return LOOM_OK;
    if (grain < 1)
        grain = 1;
    max_chunks = (n - 1) / grain + 1;
    if (max_chunks == 1 || want == 1 || in_job || pthread_mutex_trylock(&pool.submit) != 0) {
        fn(user, 0, n, 0);
        return LOOM_OK;
    }
    used = atomic_load_explicit(&pool.size, memory_order_relaxed);
    if (used > want)
        used = want;
    if ((int64_t)used > max_chunks)
        used = (int32_t)max_chunks;
    if (used <= 1) {
        pthread_mutex_unlock(&pool.submit);
        fn(user, 0, n, 0);
        return LOOM_OK;
    }

    per_thread = (n - 1) / ((int64_t)used * CHUNKS_PER_THREAD) + 1;
    pool.fn = fn;
    pool.user = user;
    pool.n = n;
    pool.chunk = per_thread > grain ? per_thread : grain;
    pool.n_chunks = (n - 1) / pool.chunk + 1;
    atomic_store_explicit(&pool.next, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.pending, used - 1, memory_order_relaxed);
    post(used, used);

    in_job = true;
    run_chunks(0);
    in_job = false;
    wait_done();
    pthread_mutex_unlock(&pool.submit);
    return LOOM_OK;
}

/* ------------------------------------------------------------ lifecycle */

/* A child of fork() has none of the workers: forget them, so that its
** calls run inline, and reset the locks that another thread may have held
** at the time of the fork. */
static void forget_pool_in_child(void)
{
    pthread_mutex_init(&pool.admin, NULL);
    pthread_mutex_init(&pool.submit, NULL);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.done, NULL);
    pthread_mutex_init(&topo.lock, NULL);
    pool.workers = NULL;            /* the parent's copy; not ours to free */
    pool.n_workers = 0;
    atomic_store(&pool.size, 0);
    atomic_store(&pool.ticket, 0);
    atomic_store(&pool.stopping, false);
    in_job = false;
}

static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, forget_pool_in_child);
}

/* Join every worker; callers hold pool.admin. */
static void stop_locked(void)
{
    if (pool.workers == NULL && atomic_load(&pool.size) == 0)
        return;
    pthread_mutex_lock(&pool.submit);       /* lets a job in flight finish */
    atomic_store_explicit(&pool.stopping, true, memory_order_release);
    post(0, pool.n_workers + 1);
    for (int32_t i = 0; i < pool.n_workers; i++)
        pthread_join(pool.workers[i].thread, NULL);
    for (int32_t i = 0; i < pool.n_workers; i++) {
        pthread_cond_destroy(&pool.workers[i].wake);
#if LOOM_HAVE_HWLOC
        if (pool.workers[i].cpuset != NULL)
            hwloc_bitmap_free(pool.workers[i].cpuset);
#endif
    }
    free(pool.workers);
    pool.workers = NULL;
    pool.n_workers = 0;
    atomic_store(&pool.size, 0);
    atomic_store(&pool.stopping, false);
    pthread_mutex_unlock(&pool.submit);
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
    static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
    sigset_t all, old;
    int32_t created = 0;

    pthread_once(&fork_once, register_fork_handler);
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

    pthread_mutex_lock(&pool.submit);
    if (n_threads > 1) {
        pool.workers = calloc((size_t)(n_threads - 1), sizeof *pool.workers);
        if (pool.workers == NULL) {
            pthread_mutex_unlock(&pool.submit);
            pthread_mutex_unlock(&pool.admin);
            return loom__fail(LOOM_ENOMEM, "thread pool: out of memory for %d threads", (int)n_threads);
        }
    }
    atomic_store(&pool.ticket, 0);
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
        pthread_cond_init(&w->wake, NULL);
        err = pthread_create(&w->thread, NULL, worker_main, w);
        if (err != 0) {
            loom__log(LOOM_LOG_ERROR, "thread pool: could not start thread %d of %d (%s); using %d",
                      (int)i + 1, (int)n_threads, strerror(err), (int)i);
            pthread_cond_destroy(&w->wake);
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
    pthread_mutex_unlock(&pool.submit);
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
