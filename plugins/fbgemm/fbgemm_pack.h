/* SPDX-License-Identifier: BSD-3-Clause */
/*
** fbgemm_pack.h - what the files of the `fbgemm` op packs (fbgemm.so for
** cpu, fbgemm-cuda.so for cuda) share. Everything has hidden visibility:
** a pack exports only loom_plugin_entry.
**
** Modules, each in its own folder with a meson.build that appends to
** fbgemm_cpu_src / fbgemm_cuda_src / fbgemm_cu_src:
**   tbe/     the fbgemm.tbe object and op (table-batched embedding bags,
**            FP32 ... INT2 and FP8 rows, VBE, bounds checks) and the
**            row-wise quantisers
**   cache/   the two-tier row cache (set-associative LRU/LFU) the TBE uses
**            when cache_load_factor < 1; no ops of its own (cache/cache.h),
**            so no pk_module
**   jagged/  jagged tensor ops and their backwards
** Each module with ops gives each pack one pk_module (pack.h): its ops,
** built from the module's one op list so both packs define identical
** schemas, and that backend's kernels (the cpu module of tbe also holds
** the fbgemm.tbe object class).
**
** Invariant: pk_host (pack.h) is set by the pack's init before any kernel
** runs and stays valid until the core shuts down.
*/
#ifndef LOOM_FBGEMM_PACK_H
#define LOOM_FBGEMM_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "describe.h"
#include "half.h"
#include "loom/plugin.h"
#include "pack.h"

/* The modules of each pack, in registration order (cpu_pack.c, cuda_pack.c). */
extern const pk_module fbgemm_tbe_cpu;
extern const pk_module fbgemm_jagged_cpu;
extern const pk_module fbgemm_tbe_cuda;
extern const pk_module fbgemm_jagged_cuda;

/* "f32[2,3]" into buf; returns buf. */
static inline char *fbgemm_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(pk_host, t, buf, size);
}

#endif /* LOOM_FBGEMM_PACK_H */
