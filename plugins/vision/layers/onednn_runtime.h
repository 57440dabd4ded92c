/* SPDX-License-Identifier: BSD-3-Clause */
/*
** onednn_runtime.h - what the pack's oneDNN code shares (built only when
** oneDNN is found): one CPU engine for the pack's lifetime and the thread
** budget of a call.
**
** Thread budget: as core.matmul's oneDNN kernel (plugins/core/matmul_onednn.c
** states the contract): this oneDNN runs on OpenMP, which reads the calling
** thread's nthreads ICV when a primitive is created and when it executes, so
** both run with it set to the call's budget (ctx->n_threads, capped by the
** caller's own OpenMP setting) and restored after. The OpenMP entry points
** are looked up in libdnnl's scope. With another runtime the kernels
** decline (onednn_runtime_ready says 0).
*/
#ifndef LOOM_VISION_ONEDNN_RUNTIME_H
#define LOOM_VISION_ONEDNN_RUNTIME_H

#include <oneapi/dnnl/dnnl.h>

#include "vision_pack.h"

/* 1 when the engine is up and the thread budget can be set (initialises
** both once, thread-safe). */
int onednn_runtime_ready(void);

/* The pack's CPU engine (onednn_runtime_ready first); destroyed by
** layers_onednn_fini after every primitive made on it. */
dnnl_engine_t onednn_engine(void);

/* The call's thread budget: ctx->n_threads in [1, 1024], capped by the
** calling thread's OpenMP setting. */
int onednn_call_threads(const loom_call *call);

/* Sets the calling thread's OpenMP thread count to t for the primitive
** creations and executions between the two; enter returns what leave
** restores. */
int onednn_budget_enter(int t);
void onednn_budget_leave(int t, int saved);

/* Releases the engine (the pack's fini, after the primitives). */
void onednn_runtime_fini(void);

#endif /* LOOM_VISION_ONEDNN_RUNTIME_H */
