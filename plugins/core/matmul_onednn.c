/* SPDX-License-Identifier: BSD-3-Clause */
/*
** matmul_onednn.c - core.matmul through oneDNN's matmul primitive (C API,
** oneDNN 2.x), f32 on the CPU. Built into core.so when oneDNN is found.
**
** Both inputs are described to oneDNN with their real strides (padded with
** leading size-1 batch dims to the output rank), so transposed views and
** broadcast batches need no copy.
**
** Thread budget. The oneDNN of this tree (Debian libdnnl 2.6) is built with
** the OpenMP runtime (DNNL_CPU_RUNTIME = DNNL_RUNTIME_OMP, libgomp), which
** dnnl_version()->cpu_runtime confirms at init. oneDNN reads the calling
** thread's OpenMP nthreads ICV (omp_get_max_threads) twice: when a primitive
** descriptor is made (the gemm matmul fixes its thread count, nthr_, there)
** and when it executes (the sgemm driver), and opens parallel regions of at
** most that many threads. So every creation and execution below runs with
** that ICV set to the call's thread count and restored afterwards. The count
** is the call's budget, ctx->n_threads (LOOM_NUM_THREADS, capped by the
** call's num_threads), capped in turn by the calling thread's own OpenMP
** setting (OMP_NUM_THREADS or its omp_set_num_threads; the number of CPUs
** when neither is set), the knob every OpenMP library obeys, which callers
** that parallelise above loom set to 1. A call with count T uses the calling
** thread plus at most T-1 OpenMP workers, T <= the budget, and the caller's
** OpenMP setting is left as it was. The ICV belongs to the calling thread in
** OpenMP, so concurrent calls with different budgets do not disturb each
** other. A primitive is cached per thread count as well, since its thread
** count is part of it. The OpenMP entry points are looked up in libdnnl's own
** dependency scope, so they are those of the runtime oneDNN uses, whatever
** runtime the pack's compiler would link. oneDNN's threadpool runtime, which
** would let loom's pool serve oneDNN, is not what this build has; with the
** sequential runtime the budget holds trivially; with any other runtime the
** kernel declines every call (supports), as it could not bound its threads.
** OpenMP's workers are threads of their own, not loom's pool: each calling
** thread gets its own (made on its first parallel region, then parked).
**
** Re-entrancy. No lock is held while oneDNN creates or executes anything.
** - Primitives live in a cache keyed by the whole geometry (rank, dims and
**   strides of the three tensors, which also encode transposes and broadcast
**   batches), the dtype and the thread count: a hash table of at most
**   CACHE_CAP entries, least recently used evicted first. cache_lock guards
**   only the table, the reference counts and the slot lists, never oneDNN
**   work. An entry is reference-counted (the table, each call in flight, each
**   plan), so an entry evicted while in use is destroyed by its last user.
** - A primitive created with scratchpad_mode_user is safe to execute from
**   several threads at once when each execution has its own scratchpad (the
**   library-managed scratchpad of oneDNN 2.x is either per thread of creation
**   or per primitive, and neither allows that). Each call takes its
**   scratchpad from the call's scratch arena (host->scratch: per thread,
**   released when the call returns).
** - A oneDNN stream and a memory object are not safe to use from two threads
**   at once, and setting the data handle of a memory object that another
**   execution is reading would hand it the wrong tensor. So the stream and
**   the four memory objects (src, weights, dst, scratchpad) of one execution
**   form a slot, which a call takes from the entry's list of idle slots,
**   points at its tensors with dnnl_memory_set_data_handle, executes and puts
**   back: a slot serves one execution at a time, and slots are created only
**   when more calls of one primitive run at once than ever before (at most
**   MAX_IDLE_SLOTS idle ones are kept per entry).
** - A plan (ABI 1.1 prepare/release) holds a reference to the entry built
**   for its described inputs, a compact output and the plan's thread count;
**   a planned run whose tensors and thread count match uses it without a
**   lookup, any other run takes the cached path.
** core_onednn_init (at pack setup) keeps libdnnl loaded for good: its OpenMP
** worker threads stay parked in the OpenMP runtime after the pack unloads.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernels.h"

#define CACHE_CAP 64            /* primitives kept; a model's matmul shapes fit */
#define N_BUCKETS 128           /* power of two, > CACHE_CAP */
#define MAX_IDLE_SLOTS 8        /* idle execution slots kept per primitive */
#define MAX_BUDGET 1024         /* threads one call may ask of OpenMP */

enum { ARG_SRC, ARG_WEIGHTS, ARG_DST, ARG_SCRATCH, N_ARGS };

/* Compared and hashed bytewise: built from a zeroed struct. */
typedef struct mm_key {
    int32_t ndims;
    int32_t n_threads;                      /* the thread count the primitive is made for */
    int32_t dtype;                          /* dnnl_data_type_t of a, b and out */
    int32_t pad;
    int64_t dims[3][DNNL_MAX_NDIMS];
    int64_t strides[3][DNNL_MAX_NDIMS];
} mm_key;

/* What one execution owns alone. */
typedef struct mm_slot {
    struct mm_slot *next;
    dnnl_stream_t stream;
    dnnl_memory_t mem[N_ARGS];              /* mem[ARG_SCRATCH] NULL when none is needed */
} mm_slot;

typedef struct mm_prim {
    /* set before the entry is published under cache_lock, read-only after: */
    mm_key key;
    uint64_t hash;
    dnnl_primitive_t prim;
    dnnl_memory_desc_t md[N_ARGS];
    size_t scratch_bytes;
    /* under cache_lock: */
    int refs;                               /* the table's (while linked), calls', plans' */
    struct mm_prim *bucket_next;
    struct mm_prim *lru_prev, *lru_next;    /* lru_prev toward the most recently used */
    mm_slot *idle;
    int n_idle;
} mm_prim;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* under cache_lock: */
static dnnl_engine_t engine;
static mm_prim *buckets[N_BUCKETS];
static mm_prim *lru_head, *lru_tail;        /* most and least recently used */
static int n_linked;
static int n_alive;                         /* entries not yet destroyed */

/* The runtime's thread-count control; set once by core_onednn_init. */
static int budget_ok;                       /* the budget can be held */
static int (*omp_get_max)(void);
static void (*omp_set_num)(int);

static int64_t padded_dim(const loom_tensor *t, int32_t nd, int32_t d)
{
    int32_t lead = nd - t->ndim;
    return d < lead ? 1 : t->shape[d - lead];
}

/* Dims and strides of t padded to nd dims; size-1 dims get the dense
** stride oneDNN expects, whatever the caller's stride there. */
static void describe(const loom_tensor *t, int32_t nd, int64_t *dims, int64_t *strides)
{
    int32_t lead = nd - t->ndim;
    for (int32_t d = nd - 1; d >= 0; d--) {
        dims[d] = padded_dim(t, nd, d);
        if (d >= lead && dims[d] != 1)
            strides[d] = core_stride(t, d - lead);
        else
            strides[d] = d == nd - 1 ? 1 : strides[d + 1] * dims[d + 1];
    }
}

void core_onednn_init(void)
{
    /* oneDNN's OpenMP workers outlive every call; if the core unloads this
    ** pack, libdnnl and its OpenMP runtime must stay mapped under those
    ** parked threads. The handle is kept for good (RTLD_NODELETE). */
    Dl_info info;
    void *addr, *lib = NULL;
    dnnl_status_t (*fn)(dnnl_engine_t *, dnnl_engine_kind_t, size_t) = dnnl_engine_create;
    memcpy(&addr, &fn, sizeof addr);        /* ISO C has no function-to-object pointer cast */
    if (dladdr(addr, &info) != 0 && info.dli_fname != NULL)
        lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);

    const dnnl_version_t *v = dnnl_version();
    budget_ok = 0;
    if (v != NULL && v->cpu_runtime == DNNL_RUNTIME_SEQ) {
        budget_ok = 1;                      /* one thread, whatever the budget */
    } else if (v != NULL && v->cpu_runtime == DNNL_RUNTIME_OMP && lib != NULL) {
        /* lookup in libdnnl's scope: the OpenMP runtime it was linked with */
        void *get = dlsym(lib, "omp_get_max_threads"), *set = dlsym(lib, "omp_set_num_threads");
        if (get != NULL && set != NULL) {
            memcpy(&omp_get_max, &get, sizeof get);
            memcpy(&omp_set_num, &set, sizeof set);
            budget_ok = 1;
        }
    }
}

loom_status core_matmul_onednn_supports(const loom_call *call, char *why, size_t why_size)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    if (!budget_ok) {
        snprintf(why, why_size, "oneDNN's CPU runtime (%u) offers no thread-count control this kernel "
                 "can use (OpenMP's omp_set_num_threads, or the sequential runtime)", dnnl_version()->cpu_runtime);
        return LOOM_ENOTSUP;
    }
    if (loom_tensor_dtype_of(a) != LOOM_DTYPE_F32 || loom_tensor_dtype_of(b) != LOOM_DTYPE_F32) {
        snprintf(why, why_size, "onednn matmul takes f32 only");
        return LOOM_ENOTSUP;
    }
    if (a->ndim < 2 || b->ndim < 2 || a->ndim > DNNL_MAX_NDIMS || b->ndim > DNNL_MAX_NDIMS) {
        snprintf(why, why_size, "ranks %d and %d outside 2..%d", (int)a->ndim, (int)b->ndim, DNNL_MAX_NDIMS);
        return LOOM_ENOTSUP;
    }
    for (int i = 0; i < 2; i++) {
        const loom_tensor *t = call->inputs[i];
        if (loom_numel(t) == 0) {
            snprintf(why, why_size, "empty tensors are left to the cpu kernel");
            return LOOM_ENOTSUP;
        }
        for (int32_t d = 0; d < t->ndim; d++)
            if (t->shape[d] != 1 && core_stride(t, d) <= 0) {
                snprintf(why, why_size, "zero or negative strides");
                return LOOM_ENOTSUP;
            }
    }
    return LOOM_OK;
}

static loom_status dnnl_fail(dnnl_status_t s, const char *what)
{
    return pk_host->fail(LOOM_EDEVICE, "oneDNN %s failed with status %d", what, (int)s);
}

/* ------------------------------------------------------------ thread budget */

/* The thread count of a call: its budget, ctx->n_threads (which the core
** always sets; a context without one gets the calling thread only), capped
** by the calling thread's OpenMP setting. 1 with the sequential runtime. */
static int call_threads(const loom_call *call)
{
    int32_t t = call->ctx != NULL ? call->ctx->n_threads : 0;
    t = t < 1 ? 1 : t > MAX_BUDGET ? MAX_BUDGET : t;
    if (omp_get_max == NULL)
        return 1;
    int omp = omp_get_max();
    return omp >= 1 && omp < t ? omp : (int)t;
}

/* Set the calling thread's OpenMP thread count to t; returns the value to
** give budget_leave. A no-op with the sequential runtime. */
static int budget_enter(int t)
{
    if (omp_set_num == NULL)
        return t;
    int saved = omp_get_max();
    if (saved != t)
        omp_set_num(t);
    return saved;
}

static void budget_leave(int t, int saved)
{
    if (omp_set_num != NULL && saved != t)
        omp_set_num(saved);
}

/* ------------------------------------------------------------ the cache */

static uint64_t key_hash(const mm_key *key)
{
    uint64_t w[sizeof *key / 8], h = 0x9E3779B97F4A7C15u;
    _Static_assert(sizeof *key % 8 == 0, "mm_key is hashed as 64-bit words");
    memcpy(w, key, sizeof w);
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        h ^= w[i];
        h *= 0xFF51AFD7ED558CCDu;
        h ^= h >> 32;
    }
    return h;
}

static void slot_destroy(mm_slot *s)
{
    for (int i = 0; i < N_ARGS; i++)
        if (s->mem[i] != NULL)
            dnnl_memory_destroy(s->mem[i]);
    if (s->stream != NULL)
        dnnl_stream_destroy(s->stream);
    free(s);
}

/* Outside cache_lock: the entry is no longer reachable. */
static void prim_destroy(mm_prim *e)
{
    while (e->idle != NULL) {
        mm_slot *s = e->idle;
        e->idle = s->next;
        slot_destroy(s);
    }
    if (e->prim != NULL)
        dnnl_primitive_destroy(e->prim);
    free(e);
}

/* Under cache_lock. */
static void lru_unlink(mm_prim *e)
{
    if (e->lru_prev != NULL)
        e->lru_prev->lru_next = e->lru_next;
    else
        lru_head = e->lru_next;
    if (e->lru_next != NULL)
        e->lru_next->lru_prev = e->lru_prev;
    else
        lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(mm_prim *e)
{
    e->lru_prev = NULL;
    e->lru_next = lru_head;
    if (lru_head != NULL)
        lru_head->lru_prev = e;
    lru_head = e;
    if (lru_tail == NULL)
        lru_tail = e;
}

static mm_prim *table_find(const mm_key *key, uint64_t hash)
{
    for (mm_prim *e = buckets[hash & (N_BUCKETS - 1)]; e != NULL; e = e->bucket_next)
        if (e->hash == hash && memcmp(&e->key, key, sizeof *key) == 0)
            return e;
    return NULL;
}

/* Take e out of the table, dropping the table's reference; returns 1 when
** that was the last one (the caller then destroys e, outside the lock). */
static int table_unlink(mm_prim *e)
{
    mm_prim **p = &buckets[e->hash & (N_BUCKETS - 1)];
    while (*p != e)
        p = &(*p)->bucket_next;
    *p = e->bucket_next;
    e->bucket_next = NULL;
    lru_unlink(e);
    n_linked--;
    return --e->refs == 0;
}

/* Drop one reference (a call's or a plan's). */
static void prim_unref(mm_prim *e)
{
    pthread_mutex_lock(&cache_lock);
    int last = --e->refs == 0;
    if (last)
        n_alive--;
    pthread_mutex_unlock(&cache_lock);
    if (last)
        prim_destroy(e);
}

static loom_status get_engine(dnnl_engine_t *out)
{
    dnnl_status_t s = dnnl_success;
    pthread_mutex_lock(&cache_lock);
    if (engine == NULL)
        s = dnnl_engine_create(&engine, dnnl_cpu, 0);
    *out = engine;
    pthread_mutex_unlock(&cache_lock);
    return s == dnnl_success ? LOOM_OK : dnnl_fail(s, "engine creation");
}

/* A new entry for key, not yet in the table; oneDNN works under the key's
** thread count, which the descriptor's implementation fixes. */
static loom_status prim_create(const mm_key *key, dnnl_engine_t eng, mm_prim **out)
{
    mm_prim *e = calloc(1, sizeof *e);
    if (e == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    e->key = *key;
    e->hash = key_hash(key);
    dnnl_status_t s = dnnl_success;
    const char *what = "memory descriptor";
    for (int i = 0; i < 3 && s == dnnl_success; i++)
        s = dnnl_memory_desc_init_by_strides(&e->md[i], key->ndims, key->dims[i], (dnnl_data_type_t)key->dtype,
                                             key->strides[i]);
    dnnl_matmul_desc_t desc;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (s == dnnl_success) {
        what = "matmul descriptor";
        s = dnnl_matmul_desc_init(&desc, &e->md[ARG_SRC], &e->md[ARG_WEIGHTS], NULL, &e->md[ARG_DST]);
    }
    if (s == dnnl_success) {
        what = "primitive attributes";
        s = dnnl_primitive_attr_create(&attr);
        if (s == dnnl_success)
            s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    }
    int saved = budget_enter(key->n_threads);
    if (s == dnnl_success) {
        what = "matmul primitive descriptor";
        s = dnnl_primitive_desc_create(&pd, &desc, attr, eng, NULL);
    }
    if (s == dnnl_success) {
        const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
        e->scratch_bytes = smd != NULL ? dnnl_memory_desc_get_size(smd) : 0;
        /* the scratchpad is a plain 1-D u8 buffer of that size (oneDNN makes
        ** its md so); described here rather than copied out of the pd, whose
        ** memory oneDNN may share between primitive descriptors of equal
        ** shape made on other threads */
        if (e->scratch_bytes > 0) {
            const dnnl_dims_t dims = { (dnnl_dim_t)e->scratch_bytes };
            what = "scratchpad memory descriptor";
            s = dnnl_memory_desc_init_by_tag(&e->md[ARG_SCRATCH], 1, dims, dnnl_u8, dnnl_x);
        }
    }
    if (s == dnnl_success) {
        what = "matmul primitive";
        s = dnnl_primitive_create(&e->prim, pd);
        if (s != dnnl_success)
            e->prim = NULL;
    }
    budget_leave(key->n_threads, saved);
    if (pd != NULL)
        dnnl_primitive_desc_destroy(pd);
    if (attr != NULL)
        dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) {
        prim_destroy(e);
        return dnnl_fail(s, what);
    }
    *out = e;
    return LOOM_OK;
}

/* The entry for key with one reference taken for the caller: from the
** table, else created (outside the lock) and inserted. */
static loom_status prim_acquire(const mm_key *key, mm_prim **out)
{
    uint64_t hash = key_hash(key);
    pthread_mutex_lock(&cache_lock);
    mm_prim *e = table_find(key, hash);
    if (e != NULL) {
        e->refs++;
        lru_unlink(e);
        lru_push_front(e);
    }
    pthread_mutex_unlock(&cache_lock);
    if (e != NULL) {
        *out = e;
        return LOOM_OK;
    }

    dnnl_engine_t eng;
    mm_prim *made = NULL;
    loom_status st = get_engine(&eng);
    if (st == LOOM_OK)
        st = prim_create(key, eng, &made);
    if (st != LOOM_OK)
        return st;

    mm_prim *victims = NULL;               /* evicted entries whose last reference was the table's */
    pthread_mutex_lock(&cache_lock);
    e = table_find(key, hash);             /* another thread may have made the same one meanwhile */
    if (e != NULL) {
        e->refs++;
        lru_unlink(e);
        lru_push_front(e);
    } else {
        e = made;
        made = NULL;
        e->refs = 2;                       /* the table's and the caller's */
        e->bucket_next = buckets[hash & (N_BUCKETS - 1)];
        buckets[hash & (N_BUCKETS - 1)] = e;
        lru_push_front(e);
        n_linked++;
        n_alive++;
        while (n_linked > CACHE_CAP) {
            mm_prim *old = lru_tail;
            if (table_unlink(old)) {
                n_alive--;
                old->bucket_next = victims;
                victims = old;
            }
        }
    }
    pthread_mutex_unlock(&cache_lock);
    if (made != NULL)
        prim_destroy(made);
    while (victims != NULL) {
        mm_prim *v = victims;
        victims = v->bucket_next;
        prim_destroy(v);
    }
    *out = e;
    return LOOM_OK;
}

/* ------------------------------------------------------------ execution */

static loom_status slot_take(mm_prim *e, mm_slot **out)
{
    pthread_mutex_lock(&cache_lock);
    mm_slot *s = e->idle;
    if (s != NULL) {
        e->idle = s->next;
        e->n_idle--;
    }
    pthread_mutex_unlock(&cache_lock);
    if (s != NULL) {
        *out = s;
        return LOOM_OK;
    }
    dnnl_engine_t eng;
    loom_status st = get_engine(&eng);
    if (st != LOOM_OK)
        return st;
    if ((s = calloc(1, sizeof *s)) == NULL)
        return pk_host->fail(LOOM_ENOMEM, "out of memory");
    dnnl_status_t ds = dnnl_stream_create(&s->stream, eng, dnnl_stream_default_flags);
    for (int i = 0; i < N_ARGS && ds == dnnl_success; i++)
        if (i != ARG_SCRATCH || e->scratch_bytes > 0)
            ds = dnnl_memory_create(&s->mem[i], &e->md[i], eng, DNNL_MEMORY_NONE);
    if (ds != dnnl_success) {
        slot_destroy(s);
        return dnnl_fail(ds, "stream or memory creation");
    }
    *out = s;
    return LOOM_OK;
}

static void slot_give(mm_prim *e, mm_slot *s)
{
    pthread_mutex_lock(&cache_lock);
    int keep = e->n_idle < MAX_IDLE_SLOTS;
    if (keep) {
        s->next = e->idle;
        e->idle = s;
        e->n_idle++;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!keep)
        slot_destroy(s);
}

static loom_status execute(loom_call *call, mm_prim *e, void *a, void *b, void *c)
{
    void *scratch = NULL;
    if (e->scratch_bytes > 0 && (scratch = pk_host->scratch(call->ctx, e->scratch_bytes)) == NULL)
        return LOOM_ENOMEM;                 /* scratch set the error */
    mm_slot *s = NULL;
    loom_status st = slot_take(e, &s);
    if (st != LOOM_OK)
        return st;
    void *ptr[N_ARGS] = { a, b, c, scratch };
    static const int arg_name[N_ARGS] = { DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_SCRATCHPAD };
    dnnl_exec_arg_t args[N_ARGS];
    int n_args = 0;
    dnnl_status_t ds = dnnl_success;
    for (int i = 0; i < N_ARGS && ds == dnnl_success; i++)
        if (s->mem[i] != NULL) {
            ds = dnnl_memory_set_data_handle(s->mem[i], ptr[i]);
            args[n_args].arg = arg_name[i];
            args[n_args].memory = s->mem[i];
            n_args++;
        }
    if (ds == dnnl_success) {
        int saved = budget_enter(e->key.n_threads);
        ds = dnnl_primitive_execute(e->prim, s->stream, n_args, args);
        if (ds == dnnl_success)
            ds = dnnl_stream_wait(s->stream);
        budget_leave(e->key.n_threads, saved);
    }
    slot_give(e, s);
    return ds == dnnl_success ? LOOM_OK : dnnl_fail(ds, "matmul execution");
}

/* The key of a, b and out (out compact when NULL: what a plan assumes) on t threads. */
static void make_key(mm_key *key, const core_mm_geom *g, const loom_tensor *a, const loom_tensor *b,
                     const loom_tensor *out, int t)
{
    int64_t shape[LOOM_MAX_NDIM];
    memcpy(shape, g->out_shape, (size_t)g->out_ndim * sizeof *shape);
    loom_tensor compact = { .ndim = g->out_ndim, .shape = shape };
    memset(key, 0, sizeof *key);           /* the key is compared and hashed bytewise */
    key->ndims = g->out_ndim;
    key->n_threads = t;
    key->dtype = dnnl_f32;
    describe(a, key->ndims, key->dims[0], key->strides[0]);
    describe(b, key->ndims, key->dims[1], key->strides[1]);
    describe(out != NULL ? out : &compact, key->ndims, key->dims[2], key->strides[2]);
}

loom_status core_matmul_onednn_prepare(const loom_call *call, void **state)
{
    core_mm_geom g;
    loom_status st = core_matmul_check(call, &g);
    if (st != LOOM_OK)
        return st;
    *state = NULL;
    for (int32_t d = 0; d < g.out_ndim; d++)
        if (g.out_shape[d] == 0)
            return LOOM_OK;                 /* an empty output: nothing to prepare */
    mm_key key;
    make_key(&key, &g, call->inputs[0], call->inputs[1], NULL, call_threads(call));
    mm_prim *e;
    st = prim_acquire(&key, &e);
    if (st == LOOM_OK)
        *state = e;
    return st;
}

void core_matmul_onednn_release(void *state)
{
    if (state != NULL)
        prim_unref(state);
}

loom_status core_matmul_onednn(loom_call *call)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
    core_mm_geom g;
    loom_tensor *out;
    loom_status st = core_matmul_prepare(call, LOOM_DTYPE_F32, &g, &out);
    if (st != LOOM_OK || out == NULL)
        return st;
    mm_key key;
    make_key(&key, &g, a, b, out, call_threads(call));
    mm_prim *plan = call->struct_size >= offsetof(loom_call, plan_state) + sizeof(void *)
                  ? call->plan_state : NULL;
    if (plan != NULL && memcmp(&plan->key, &key, sizeof key) == 0)
        return execute(call, plan, loom_data(a), loom_data(b), loom_data(out));   /* the plan's reference */
    mm_prim *e;
    if ((st = prim_acquire(&key, &e)) != LOOM_OK)
        return st;
    st = execute(call, e, loom_data(a), loom_data(b), loom_data(out));
    prim_unref(e);
    return st;
}

void core_onednn_fini(void)
{
    mm_prim *dead = NULL;
    pthread_mutex_lock(&cache_lock);
    while (lru_head != NULL) {
        mm_prim *e = lru_head;
        if (table_unlink(e)) {
            n_alive--;
            e->bucket_next = dead;
            dead = e;
        }
    }
    pthread_mutex_unlock(&cache_lock);
    while (dead != NULL) {
        mm_prim *e = dead;
        dead = e->bucket_next;
        prim_destroy(e);
    }
    pthread_mutex_lock(&cache_lock);
    /* The core releases every plan before fini, so nothing is left; were an
    ** entry still referenced, its primitive would need the engine: keep it. */
    if (n_alive == 0 && engine != NULL) {
        dnnl_engine_destroy(engine);
        engine = NULL;
    }
    pthread_mutex_unlock(&cache_lock);
}
