/*
** jagged_cpu.h - the cpu kernels of the jagged ops (run functions of the
** loom_kernel_desc entries in jagged_register_cpu.c).
*/
#ifndef LOOM_FBGEMM_JAGGED_CPU_H
#define LOOM_FBGEMM_JAGGED_CPU_H

#include "jagged.h"

/* Zeroes the jagged rows [0, off[0]) that no batch row owns. */
void jg_cpu_zero_head(const jg_plan *p, void *out, size_t row_bytes);

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
