/* SPDX-License-Identifier: BSD-3-Clause */
/*
** jagged_cpu.h - the cpu kernels of the jagged ops (run functions of the
** kernel table in jagged_cpu_module.c).
*/
#ifndef LOOM_FBGEMM_JAGGED_CPU_H
#define LOOM_FBGEMM_JAGGED_CPU_H

#include "jagged.h"

/* Zeroes the jagged rows [0, off[0]) that no batch row owns. */
void jg_cpu_zero_head(const jg_plan *p, void *out, size_t row_bytes);

/* parallel_for grain of the memory-bound kernels: items of
** `elems_per_item` elements, about 32K elements per task. */
static inline int64_t jg_cpu_grain(int64_t elems_per_item)
{
    int64_t g = 32768 / (elems_per_item > 0 ? elems_per_item : 1);
    return g > 0 ? g : 1;
}

loom_status jg_to_padded_cpu(loom_call *call);
loom_status jg_to_padded_backward_cpu(loom_call *call);
loom_status jg_to_jagged_cpu(loom_call *call);
loom_status jg_index_select_cpu(loom_call *call);
loom_status jg_add_cpu(loom_call *call);
loom_status jg_add_jagged_output_cpu(loom_call *call);
loom_status jg_mul_cpu(loom_call *call);
loom_status jg_mul_backward_cpu(loom_call *call);
loom_status jg_dense_bmm_cpu(loom_call *call);
loom_status jg_jagged_bmm_cpu(loom_call *call);
loom_status jg_permute102_cpu(loom_call *call);

#endif
