/*
** matmul_onednn.c - core.matmul through oneDNN's matmul primitive (C API,
** oneDNN 2.x), f32 on the CPU. Built into core.so when oneDNN is found.
**
** Both inputs are described to oneDNN with their real strides (padded with
** leading size-1 batch dims to the output rank), so transposed views and
** broadcast batches need no copy. Primitives are kept in a small cache
** keyed by the full geometry: creating one costs far more than a small
** matmul. One mutex guards the engine, the stream and the cache, and is
** held while a primitive executes, so the shared stream is never used by
** two threads at once; oneDNN parallelises each call internally.
** core_onednn_pin (at init) keeps libdnnl loaded for good: its OpenMP
** worker threads stay parked in libgomp after the pack is unloaded.
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "kernels.h"

#define CACHE_SIZE 16

typedef struct mm_key {
    int32_t ndims;
    int64_t dims[3][DNNL_MAX_NDIMS];
    int64_t strides[3][DNNL_MAX_NDIMS];
} mm_key;

typedef struct mm_entry {
    mm_key key;
    dnnl_primitive_t prim;
    dnnl_memory_desc_t md[3];
    uint64_t last_use;
} mm_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static dnnl_engine_t engine;
static dnnl_stream_t stream;
static mm_entry cache[CACHE_SIZE];
static uint64_t use_clock;

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

void core_onednn_pin(void)
{
    /* oneDNN's OpenMP workers outlive every call; if the core unloads this
    ** pack, libdnnl and libgomp must stay mapped under those parked threads */
    Dl_info info;
    void *addr;
    dnnl_status_t (*fn)(dnnl_engine_t *, dnnl_engine_kind_t, size_t) = dnnl_engine_create;
    memcpy(&addr, &fn, sizeof addr);        /* ISO C has no function-to-object pointer cast */
    if (dladdr(addr, &info) != 0 && info.dli_fname != NULL)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

loom_status core_matmul_onednn_supports(const loom_call *call, char *why, size_t why_size)
{
    const loom_tensor *a = call->inputs[0], *b = call->inputs[1];
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

/* Find or create the primitive for key; called with lock held. */
static loom_status get_primitive(const mm_key *key, mm_entry **out)
{
    mm_entry *victim = &cache[0];
    for (int i = 0; i < CACHE_SIZE; i++) {
        if (cache[i].prim != NULL && memcmp(&cache[i].key, key, sizeof *key) == 0) {
            cache[i].last_use = ++use_clock;
            *out = &cache[i];
            return LOOM_OK;
        }
        if (cache[i].prim == NULL || cache[i].last_use < victim->last_use)
            victim = &cache[i];
    }
    if (victim->prim != NULL) {
        dnnl_primitive_destroy(victim->prim);
        victim->prim = NULL;
    }
    dnnl_status_t s = dnnl_success;
    for (int i = 0; i < 3 && s == dnnl_success; i++)
        s = dnnl_memory_desc_init_by_strides(&victim->md[i], key->ndims, key->dims[i], dnnl_f32,
                                             key->strides[i]);
    if (s != dnnl_success)
        return dnnl_fail(s, "memory descriptor");
    dnnl_matmul_desc_t desc;
    dnnl_primitive_desc_t pd;
    s = dnnl_matmul_desc_init(&desc, &victim->md[0], &victim->md[1], NULL, &victim->md[2]);
    if (s != dnnl_success)
        return dnnl_fail(s, "matmul descriptor");
    s = dnnl_primitive_desc_create(&pd, &desc, NULL, engine, NULL);
    if (s != dnnl_success)
        return dnnl_fail(s, "matmul primitive descriptor");
    s = dnnl_primitive_create(&victim->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) {
        victim->prim = NULL;
        return dnnl_fail(s, "matmul primitive");
    }
    victim->key = *key;
    victim->last_use = ++use_clock;
    *out = victim;
    return LOOM_OK;
}

static loom_status execute(const mm_key *key, void *a, void *b, void *c)
{
    dnnl_status_t s;
    if (engine == NULL) {
        s = dnnl_engine_create(&engine, dnnl_cpu, 0);
        if (s != dnnl_success)
            return dnnl_fail(s, "engine creation");
    }
    if (stream == NULL) {
        s = dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
        if (s != dnnl_success)
            return dnnl_fail(s, "stream creation");
    }
    mm_entry *e = NULL;
    loom_status st = get_primitive(key, &e);
    if (st != LOOM_OK)
        return st;
    dnnl_memory_t mem[3] = { NULL, NULL, NULL };
    void *ptr[3] = { a, b, c };
    s = dnnl_success;
    for (int i = 0; i < 3 && s == dnnl_success; i++)
        s = dnnl_memory_create(&mem[i], &e->md[i], engine, ptr[i]);
    if (s == dnnl_success) {
        dnnl_exec_arg_t args[3] = {
            { DNNL_ARG_SRC, mem[0] }, { DNNL_ARG_WEIGHTS, mem[1] }, { DNNL_ARG_DST, mem[2] },
        };
        s = dnnl_primitive_execute(e->prim, stream, 3, args);
        if (s == dnnl_success)
            s = dnnl_stream_wait(stream);
    }
    for (int i = 0; i < 3; i++)
        if (mem[i] != NULL)
            dnnl_memory_destroy(mem[i]);
    return s == dnnl_success ? LOOM_OK : dnnl_fail(s, "matmul execution");
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
    memset(&key, 0, sizeof key);    /* the key is compared bytewise */
    key.ndims = g.out_ndim;
    describe(a, key.ndims, key.dims[0], key.strides[0]);
    describe(b, key.ndims, key.dims[1], key.strides[1]);
    describe(out, key.ndims, key.dims[2], key.strides[2]);
    pthread_mutex_lock(&lock);
    st = execute(&key, loom_data(a), loom_data(b), loom_data(out));
    pthread_mutex_unlock(&lock);
    return st;
}

void core_onednn_fini(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < CACHE_SIZE; i++)
        if (cache[i].prim != NULL)
            dnnl_primitive_destroy(cache[i].prim);
    memset(cache, 0, sizeof cache);
    if (stream != NULL)
        dnnl_stream_destroy(stream);
    if (engine != NULL)
        dnnl_engine_destroy(engine);
    stream = NULL;
    engine = NULL;
    pthread_mutex_unlock(&lock);
}
