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
**            when cache_load_factor < 1; no ops of its own (cache/cache.h)
**   jagged/  jagged tensor ops and their backwards
**
** Invariant: fbgemm_host is set by the pack's init before any kernel runs
** and stays valid until the core shuts down.
*/
#ifndef LOOM_FBGEMM_PACK_H
#define LOOM_FBGEMM_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "describe.h"
#include "half.h"
#include "loom/plugin.h"

extern const loom_host_api *fbgemm_host;

/* Schemas of each module (compiled into both packs). */
extern const loom_op_schema *const fbgemm_tbe_ops[];
extern const size_t fbgemm_tbe_n_ops;
extern const loom_op_schema *const fbgemm_jagged_ops[];
extern const size_t fbgemm_jagged_n_ops;

/* Object classes (registered by fbgemm.so only). */
extern const loom_object_class *const fbgemm_tbe_classes[];
extern const size_t fbgemm_tbe_n_classes;

/* Kernel registration of each module, per backend. */
loom_status fbgemm_tbe_register_cpu(const loom_host_api *host, loom_registrar *reg);
loom_status fbgemm_jagged_register_cpu(const loom_host_api *host, loom_registrar *reg);
loom_status fbgemm_tbe_register_cuda(const loom_host_api *host, loom_registrar *reg);
loom_status fbgemm_jagged_register_cuda(const loom_host_api *host, loom_registrar *reg);

/* Define every op of every module (both packs call it). */
loom_status fbgemm_define_ops(const loom_host_api *host, loom_registrar *reg);

/* "f32[2,3]" into buf; returns buf. */
static inline char *fbgemm_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(fbgemm_host, t, buf, size);
}

#endif /* LOOM_FBGEMM_PACK_H */
