/* SPDX-License-Identifier: BSD-3-Clause */
/*
** kernels.h - the kernel entry points of the core packs, one per op and
** backend, and the checks they share. Registered by cpu_pack.c and
** cuda_pack.c.
*/
#ifndef LOOM_CORE_KERNELS_H
#define LOOM_CORE_KERNELS_H

#include "core_pack.h"

/* core.add: same dtype for both inputs; alpha integral for integer dtypes.
** Writes alpha as double and, for integer dtypes, as int64. */
loom_status core_add_check(const loom_call *call, double *alpha, int64_t *alpha_i);
/* core.add's plan (ABI 1.1): the checks, broadcast and iteration done once. */
loom_status core_add_prepare(const loom_call *call, void **state);
void core_add_release(void *state);
loom_status core_add_cpu(loom_call *call);

loom_status core_cast_cpu(loom_call *call);

/* core.matmul: geometry plus the dtype agreement every backend needs. */
loom_status core_matmul_check(const loom_call *call, core_mm_geom *g);
/* Check a matmul call and allocate its output with out_dtype. *out stays
** NULL when the output is empty: the kernel then has nothing to compute. */
loom_status core_matmul_prepare(loom_call *call, loom_dtype out_dtype, core_mm_geom *g, loom_tensor **out);
loom_status core_matmul_cpu(loom_call *call);

loom_status core_linear_create(const loom_object_args *args, void **state_out);
void core_linear_destroy(void *state);
loom_status core_linear_cpu(loom_call *call);

#ifdef LOOM_CORE_HAVE_ONEDNN
loom_status core_matmul_onednn_supports(const loom_call *call, char *why, size_t why_size);
loom_status core_matmul_onednn(loom_call *call);
/* core.matmul's plan on oneDNN (ABI 1.1): the primitive for the described
** inputs, a compact output and the plan's thread budget, made once. */
loom_status core_matmul_onednn_prepare(const loom_call *call, void **state);
void core_matmul_onednn_release(void *state);
/* At pack setup: pins libdnnl, finds the controls of its threading runtime. */
void core_onednn_init(void);
/* At pack fini: every cached primitive and the engine. */
void core_onednn_fini(void);
#endif

#endif /* LOOM_CORE_KERNELS_H */
