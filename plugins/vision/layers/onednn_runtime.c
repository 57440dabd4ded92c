/* SPDX-License-Identifier: BSD-3-Clause */
/*
** onednn_runtime.c - the engine and thread budget the pack's oneDNN
** kernels share (onednn_runtime.h states the contract).
*/
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "layers/onednn_runtime.h"

#define MAX_BUDGET 1024

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t engine;        /* created once, then read-only */
static int budget_ok;
static int (*omp_get_max)(void);
static void (*omp_set_num)(int);

/* Once: the OpenMP controls of libdnnl's runtime, kept loaded for good
** (its parked OpenMP workers outlive the pack), and the engine. */
static void onednn_init(void)
{
    Dl_info info;
    void *addr, *lib = NULL;
    dnnl_status_t (*fn)(dnnl_engine_t *, dnnl_engine_kind_t, size_t) = dnnl_engine_create;
    memcpy(&addr, &fn, sizeof addr);
    if (dladdr(addr, &info) != 0 && info.dli_fname != NULL)
        lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    const dnnl_version_t *v = dnnl_version();
    if (v != NULL && v->cpu_runtime == DNNL_RUNTIME_SEQ) {
        budget_ok = 1;
    } else if (v != NULL && v->cpu_runtime == DNNL_RUNTIME_OMP && lib != NULL) {
        void *get = dlsym(lib, "omp_get_max_threads"), *set = dlsym(lib, "omp_set_num_threads");
        if (get != NULL && set != NULL) {
            memcpy(&omp_get_max, &get, sizeof get);
            memcpy(&omp_set_num, &set, sizeof set);
            budget_ok = 1;
        }
    }
    if (budget_ok && dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success) {
        engine = NULL;
        budget_ok = 0;
    }
}

int onednn_runtime_ready(void)
{
    pthread_once(&init_once, onednn_init);
    return budget_ok;
}

dnnl_engine_t onednn_engine(void)
{
    return engine;
}

void onednn_runtime_fini(void)
{
    if (engine != NULL)
        dnnl_engine_destroy(engine);
    engine = NULL;
}

int onednn_call_threads(const loom_call *call)
{
    int32_t t = call->ctx != NULL ? call->ctx->n_threads : 0;
    t = t < 1 ? 1 : t > MAX_BUDGET ? MAX_BUDGET : t;
    if (omp_get_max == NULL)
        return 1;
    int omp = omp_get_max();
    return omp >= 1 && omp < t ? omp : (int)t;
}

int onednn_budget_enter(int t)
{
    if (omp_set_num == NULL)
        return t;
    int saved = omp_get_max();
    if (saved != t)
        omp_set_num(t);
    return saved;
}

void onednn_budget_leave(int t, int saved)
{
    if (omp_set_num != NULL && saved != t)
        omp_set_num(saved);
}
