/*
** vision_pack.h - what the files of the `vision` op packs (vision.so for
** cpu, vision-cuda.so for cuda) share. Everything has hidden visibility:
** a pack exports only loom_plugin_entry.
**
** The pack is split into modules, each in its own folder with its own
** meson.build that appends to vision_cpu_src / vision_cuda_src /
** vision_cu_src:
**   boxes/   nms, batched_nms, box IoU family, IoU losses, box utilities
**   roi/     roi_align, roi_pool, ps_roi_align, ps_roi_pool and backwards
**   deform/  deform_conv2d (+ backward), drop_block2d/3d, stochastic_depth
** Every module defines its schemas once (compiled into both packs, so both
** define identical schemas) and registers its kernels per backend.
**
** Invariant: vision_host is set by the pack's init before any kernel runs
** and stays valid until the core shuts down.
*/
#ifndef LOOM_VISION_PACK_H
#define LOOM_VISION_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "describe.h"
#include "half.h"
#include "loom/plugin.h"

extern const loom_host_api *vision_host;

#define VISION_F32_F64 (LOOM_DTYPE_BIT(LOOM_DTYPE_F32) | LOOM_DTYPE_BIT(LOOM_DTYPE_F64))
#define VISION_FLOATS (VISION_F32_F64 | LOOM_DTYPE_BIT(LOOM_DTYPE_F16))

/* Schemas of each module (<module>/<module>_schemas.c). */
extern const loom_op_schema *const vision_boxes_ops[];
extern const size_t vision_boxes_n_ops;
extern const loom_op_schema *const vision_roi_ops[];
extern const size_t vision_roi_n_ops;
extern const loom_op_schema *const vision_deform_ops[];
extern const size_t vision_deform_n_ops;

/* Kernel registration of each module, per backend. */
loom_status vision_boxes_register_cpu(const loom_host_api *host, loom_registrar *reg);
loom_status vision_roi_register_cpu(const loom_host_api *host, loom_registrar *reg);
loom_status vision_deform_register_cpu(const loom_host_api *host, loom_registrar *reg);
loom_status vision_boxes_register_cuda(const loom_host_api *host, loom_registrar *reg);
loom_status vision_roi_register_cuda(const loom_host_api *host, loom_registrar *reg);
loom_status vision_deform_register_cuda(const loom_host_api *host, loom_registrar *reg);

/* Define every op of every module (both packs call it). */
loom_status vision_define_ops(const loom_host_api *host, loom_registrar *reg);

/* "f32[2,3]" into buf; returns buf. */
static inline char *vision_describe(const loom_tensor *t, char *buf, size_t size)
{
    return pk_describe(vision_host, t, buf, size);
}

#endif /* LOOM_VISION_PACK_H */
